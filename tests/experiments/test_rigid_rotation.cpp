/// Kuhn et al. Fig. 6: the small version of `moreau experiment rigid-rotation`.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "moreau/core/types.hpp"
#include "moreau/experiments/experiment.hpp"

using namespace moreau;

namespace {

Mat3 matrixOf(const nlohmann::json& rows) {
    Mat3 m;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)].get<double>();
    return m;
}

}  // namespace

TEST_SUITE("experiments") {
    TEST_CASE("rigid-rotation: projection + twirl turn the stress with the packing and without them it departs") {
        ExperimentOptions options;
        options.sets = {"experiment.particles=150", "experiment.increments=100", "experiment.prep_steps=4000"};
        options.writeFiles = false;
        options.quiet = true;
        const nlohmann::json doc = rigidRotation(options);
        const auto& r = doc["results"];
        CAPTURE(r.dump());
        // The rotation checks (the packing needs not be fully at rest for them).
        for (const auto& check : doc["checks"]) {
            const std::string name = check["name"].get<std::string>();
            if (name.find("projection") == std::string::npos && name.find("none") == std::string::npos) continue;
            CAPTURE(check.dump());
            CHECK(check["pass"].get<bool>());
        }
        const Mat3 original = matrixOf(r["stress_original"]);
        const Mat3 twirl = matrixOf(r["stress_projection_twirl"]);
        const Mat3 none = matrixOf(r["stress_none"]);
        // A compressed packing: compression (negative, Kuhn's sign) on the diagonal, largest along x1.
        CHECK(original(0, 0) < original(1, 1));
        CHECK(original(1, 1) < 0.0);
        CHECK(original(2, 2) < 0.0);
        // θ Δθ = (π/2)²/100 ≈ 0.025 bounds the relative error of the tangential
        // forces after 100 first-order increments; they carry a few % of the stress.
        CHECK(r["error_projection_twirl"].get<double>() < r["error_bound_projection_twirl"].get<double>());
        CHECK(r["error_bound_projection_twirl"].get<double>() < 0.025 * 0.1);
        CHECK((twirl - original).cwiseAbs().maxCoeff() < 0.02 * original.cwiseAbs().maxCoeff());
        CHECK(r["error_none"].get<double>() > 20.0 * r["error_projection_twirl"].get<double>());
        CHECK((none - original).cwiseAbs().maxCoeff() > 0.01 * original.cwiseAbs().maxCoeff());
        CHECK(r["error_projection"].get<double>() > 5.0 * r["error_projection_twirl"].get<double>());
    }
}
