/// Force schemes §3, Figs. 3–5: the small, fast version of `moreau
/// experiment oblique-impact`.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;
using doctest::Approx;

TEST_SUITE("experiments") {
    TEST_CASE("oblique-impact (small): Coulomb branches, viscous decay, spring reversal end near 1.6") {
        const nlohmann::json doc = test::runQuiet(
            obliqueImpact, {"experiment.psi_step=0.25", "experiment.psi_max=3", "experiment.steps_per_tn=200"});
        const auto& r = doc["results"];
        for (const auto& check : doc["checks"]) {
            CAPTURE(check.dump());
            // The paper's saw-tooth overestimate is a documented departure (docs/departures.md).
            if (check["name"].get<std::string>().find("overestimated") != std::string::npos) continue;
            CHECK(check["pass"].get<bool>());
        }
        // Why it departs: the saw-tooth sampled over many teeth pulls with μF_n/2 on
        // average, and gives the e of Coulomb friction with μ/2 (below the springs').
        const auto& at = r["e_at_sin_0_7"];
        CHECK(at["saw_tooth"].get<double>() == Approx(at["coulomb_half_mu"].get<double>()).epsilon(5e-3));
        CHECK(at["saw_tooth"].get<double>() < at["springs_min"].get<double>());
        CHECK(r["reversal_end_cundall_2_7"].get<double>() == Approx(1.6).epsilon(0.1));
        // Rolling branch of Coulomb μ = 0.25 below ψ_i = 3.5 μ (1 + e_n) ≈ 1.64, sliding above.
        const auto psiIn = r["psi_in"].get<std::vector<double>>();
        const auto psiOut = r["psi_out_coulomb"].get<std::vector<double>>();
        for (std::size_t i = 0; i < psiIn.size(); ++i) {
            CAPTURE(psiIn[i]);
            const double theory = std::max(0.0, psiIn[i] - 3.5 * 0.25 * 1.87);
            CHECK(std::abs(psiOut[i] - theory) < 0.02);
        }
        test::checkRefused(obliqueImpact, "md.kn=5");
    }

    TEST_CASE("oblique-impact: with the saw-tooth's mu at 0.1 its e near sin theta = 0.7 lies above the springs'") {
        // The setting the paper leaves open decides its claim: the tooth's mu/2
        // Coulomb friction dissipates less than the springs for mu <= 0.1.
        const nlohmann::json doc =
            test::runQuiet(obliqueImpact, {"experiment.psi_step=0.25", "experiment.psi_max=2",
                                           "experiment.steps_per_tn=200", "experiment.saw_tooth_mu=0.1"});
        const auto& at = doc["results"]["e_at_sin_0_7"];
        CHECK(at["saw_tooth"].get<double>() > at["springs_max"].get<double>());
        CHECK(at["coulomb_half_mu"].get<double>() == Approx(at["saw_tooth"].get<double>()).epsilon(5e-3));
        for (const auto& check : doc["checks"])
            if (check["name"].get<std::string>().find("overestimated") != std::string::npos) CHECK(check["pass"].get<bool>());
    }
}
