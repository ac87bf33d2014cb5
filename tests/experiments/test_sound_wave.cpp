/// The artificial sound wave of CD §3.3.1 against eqs. 57–60: the small,
/// fast version of `moreau experiment sound-wave-1d`.
#include <doctest/doctest.h>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("sound-wave-1d: omega and tau of the chain match the diffusion theory") {
        for (int iterations : {10, 40, 160}) {
            CAPTURE(iterations);
            const nlohmann::json doc = test::runQuiet(soundWave1d, {"cd.iterations=" + std::to_string(iterations)});
            const auto& r = doc["results"];
            // The acceptance: 2% in ω, 5% in τ.
            CHECK(r["omega_fit"].get<double>() / r["omega_theory"].get<double>() == doctest::Approx(1.0).epsilon(0.02));
            CHECK(r["tau_fit"].get<double>() / r["tau_theory"].get<double>() == doctest::Approx(1.0).epsilon(0.05));
            CHECK(r["r2"].get<double>() > 0.99);
            test::checkAllPass(doc);
        }
    }

    TEST_CASE("sound-wave-1d: a shorter chain rings faster, as lambda = 4L says") {
        const nlohmann::json doc = test::runQuiet(soundWave1d, {"chain.count=25"});
        const auto& r = doc["results"];
        CHECK(r["omega_fit"].get<double>() / r["omega_theory"].get<double>() == doctest::Approx(1.0).epsilon(0.02));
        CHECK(doc["params"]["particles"].get<int>() == 25);
    }
}
