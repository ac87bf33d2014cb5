/// CD paper eqs. 58–60 beyond the lowest mode (small version of `moreau
/// experiment chain-modes`): a chain of 50 grains at rest against a wall with
/// N_I = 40, its modes j = 0, 1, 2 excited one at a time. Each rings at the ω
/// of eq. 58 and decays with the τ of eq. 60; a mode above the cut-off k_c
/// (eq. 59) does not ring.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("chain-modes: higher modes follow eqs. 58 and 60, a mode above k_c does not ring") {
        const nlohmann::json doc =
            test::runQuiet(chainModes, {"experiment.iterations=40", "experiment.modes=0 1 2 10"});
        const auto& modes = doc["results"]["modes"];
        REQUIRE(modes.size() == 4);
        for (int j = 0; j < 3; ++j) {
            CAPTURE(j);
            const auto& m = modes[j];
            CHECK(m["oscillating_theory"].get<bool>());
            // ω: within 2 % where the mode lives ≥ 5 steps, 5 % at τ ≈ 2.5 steps.
            const double tolerance = m["tau_theory"].get<double>() >= 5.0 ? 0.02 : 0.05;
            CHECK(m["omega_fit"].get<double>() == doctest::Approx(m["omega_theory"].get<double>()).epsilon(tolerance));
            CHECK(m["tau_fit"].get<double>() == doctest::Approx(m["tau_theory"].get<double>()).epsilon(0.05));
        }
        // Eq. 58 rises and then falls towards k_c; the fitted ω rises with k.
        CHECK(modes[1]["omega_fit"].get<double>() > 2.5 * modes[0]["omega_fit"].get<double>());
        // Mode 10 lies above k_c (eq. 59): overdamped in theory.
        CHECK_FALSE(modes[3]["oscillating_theory"].get<bool>());
        CHECK(modes[3]["k"].get<double>() > modes[3]["k_c"].get<double>());
        test::checkAllPass(doc);
    }

    TEST_CASE("chain-modes: bad mode lists exit with one clear line") {
        test::checkRefused(chainModes, "experiment.modes=0 x", "experiment.modes");
    }
}
