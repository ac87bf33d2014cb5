/// Kuhn et al. Fig. 6: the small version of `moreau experiment rigid-rotation`.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "moreau/core/types.hpp"
#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

namespace {

Mat3 matrixOf(const nlohmann::json& rows) {
    Mat3 m;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)].get<double>();
    return m;
}

/// The rotation's claims, whatever the boundary: with projection and twirl
/// the stress turns with the packing (first order in the increment), without
/// them it departs.
void checkRotation(const nlohmann::json& doc) {
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
    // forces after 100 first-order increments; they carry 5-15 % of the stress.
    CHECK(r["error_projection_twirl"].get<double>() < r["error_bound_projection_twirl"].get<double>());
    CHECK(r["error_bound_projection_twirl"].get<double>() < 0.025 * 0.2);
    CHECK((twirl - original).cwiseAbs().maxCoeff() < 0.02 * original.cwiseAbs().maxCoeff());
    CHECK(r["error_none"].get<double>() > 20.0 * r["error_projection_twirl"].get<double>());
    CHECK((none - original).cwiseAbs().maxCoeff() > 0.01 * original.cwiseAbs().maxCoeff());
    CHECK(r["error_projection"].get<double>() > 5.0 * r["error_projection_twirl"].get<double>());
}

}  // namespace

TEST_SUITE("experiments") {
    TEST_CASE("rigid-rotation, walled box: projection + twirl turn the stress with the packing, without them it departs") {
        checkRotation(test::runQuiet(rigidRotation, {"experiment.boundary=walls", "experiment.particles=150",
                                                     "experiment.increments=100", "experiment.prep_steps=4000"}));
    }

    TEST_CASE("rigid-rotation, periodic cell of sphere clusters: the unrolled packing carries the cell's stress and turns with it") {
        // Kuhn's clusters (the default grains), unrolled with their shapes,
        // sizes and orientations; their contacts keep their component keys.
        const nlohmann::json doc = test::runQuiet(rigidRotation, {"experiment.particles=60", "experiment.increments=100"});
        const auto& r = doc["results"];
        CHECK(doc["params"]["boundary"] == "periodic");
        CHECK(r["grains"] == "clusters");
        CHECK(r["prepared_q_over_p"].get<double>() == doctest::Approx(0.8).epsilon(0.01));
        // Every contact across a face found its image and kept its memory:
        // before turning, the unrolled sum is the periodic cell's stress (a
        // lost contact would cost ~1e-3; what remains is the last
        // preparation step's tiny motion, which the cell's evaluation sees).
        CHECK(r["unrolled_error"].get<double>() < 1e-6);
        CHECK(r["images"].get<long>() > 0);
        checkRotation(doc);
    }
}
