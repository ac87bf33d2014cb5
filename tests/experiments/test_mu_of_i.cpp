/// μ(I) with both methods (small version of `moreau experiment mu-of-i`):
/// 150 disks sheared at fixed pressure at two inertial numbers, with
/// converged CD, CD at N_I = 40 and soft MD (κ = 10³). What must hold
/// whatever the reference values: every run reaches a steady state the data
/// detect, the servo holds the pressure, friction rises and solid fraction
/// falls with I (the dense-flow laws), the values lie in the dense-flow range
/// of frictional disks, converged CD and MD agree on φ, and the results are
/// the same bits for one and two threads.
#include <doctest/doctest.h>

#include <cmath>

#include <omp.h>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

namespace {

nlohmann::json runSmall(int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    nlohmann::json doc = test::runQuiet(muOfI, {"experiment.particles=150", "experiment.inertial_numbers=0.2 0.02",
                                                "experiment.methods=cd_converged cd_ni40 md_kappa1e3",
                                                "experiment.min_strain=2", "experiment.max_strain=4"});
    omp_set_num_threads(before);
    return doc;
}

}  // namespace

TEST_SUITE("experiments") {
    TEST_CASE("mu-of-i: steady flows at fixed pressure, mu rises and phi falls with I, CD and MD agree") {
        const nlohmann::json doc = runSmall(2);
        const auto& r = doc["results"];
        REQUIRE(r["inertial_number"].size() == 2);
        CHECK(r["inertial_number"][0].get<double>() == doctest::Approx(0.2));  // largest first
        for (const std::string m : {"cd_converged", "cd_ni40", "md_kappa1e3"}) {
            CAPTURE(m);
            // The keys INTERFACE.md lists.
            REQUIRE(r["mu_" + m].size() == 2);
            REQUIRE(r["phi_" + m].size() == 2);
            for (const std::string k : {"mu_min_", "b_", "phi_max_", "a_"}) CHECK(r.contains(k + m));
            const double muHigh = r["mu_" + m][0], muLow = r["mu_" + m][1];
            const double phiHigh = r["phi_" + m][0], phiLow = r["phi_" + m][1];
            const auto& pts = r["methods"][m]["points"];
            for (const auto& p : pts) {
                CHECK(p["ran"].get<bool>());
                CHECK(p["steady"].get<bool>());
                // The servo: ⟨σ_yy⟩ = P (statistical scatter of a short run).
                CHECK(std::abs(p["pressure_ratio"].get<double>() - 1.0) < 0.06);
            }
            // Dense-flow laws of frictional disks (μ_p = 0.4): μ between
            // 0.2 and 0.5, φ between 0.74 and 0.84; μ up and φ down with I
            // by more than the error bars.
            for (double mu : {muHigh, muLow}) {
                CHECK(mu > 0.2);
                CHECK(mu < 0.5);
            }
            for (double phi : {phiHigh, phiLow}) {
                CHECK(phi > 0.74);
                CHECK(phi < 0.84);
            }
            const auto& muErr = r["methods"][m]["mu_error"];
            const auto& phiErr = r["methods"][m]["phi_error"];
            CHECK(muHigh - muLow > 2.0 * std::hypot(muErr[0].get<double>(), muErr[1].get<double>()));
            CHECK(phiLow - phiHigh > 2.0 * std::hypot(phiErr[0].get<double>(), phiErr[1].get<double>()));
        }
        // Rigid grains and soft ones at κ = 10³ (overlaps ~ 1/κ): φ within 2 %.
        for (int i = 0; i < 2; ++i)
            CHECK(r["phi_cd_converged"][i].get<double>() ==
                  doctest::Approx(r["phi_md_kappa1e3"][i].get<double>()).epsilon(0.02));
        // Converged CD does work: many sweeps per step; N_I = 40 exactly 40.
        CHECK(r["methods"]["cd_converged"]["points"][1]["sweeps_per_step"].get<double>() > 40.0);
        CHECK(r["methods"]["cd_ni40"]["points"][0]["sweeps_per_step"].get<double>() == 40.0);

        // Determinism: the same bits on one thread.
        const nlohmann::json one = runSmall(1);
        CHECK(one["results"]["mu_cd_ni40"] == r["mu_cd_ni40"]);
        CHECK(one["results"]["phi_cd_converged"] == r["phi_cd_converged"]);
        CHECK(one["results"]["mu_md_kappa1e3"] == r["mu_md_kappa1e3"]);
    }

    TEST_CASE("mu-of-i: bad method names and inertial numbers exit with one clear line") {
        test::checkRefused(muOfI, "experiment.methods=cd_ni40 md_kapa1e4", "md_kapa1e4");
        test::checkRefused(muOfI, "experiment.inertial_numbers=0.1 abc", "experiment.inertial_numbers");
        test::checkRefused(muOfI, "cd.iterations=10");
    }
}
