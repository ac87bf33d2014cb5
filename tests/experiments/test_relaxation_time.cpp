/// Peña et al. Figs. 5, 6, 7a, 9 (small version of `moreau experiment
/// relaxation-time`, at the paper's ε_n = 0.9875): with Gear 5, Cundall's
/// spring makes the relaxation time of the two-disc test depend on dt/t_c and
/// converge to the linear system's t_R from below; the geometric update gives
/// that t_R at every step in all three cases; without friction nothing depends
/// on dt; the curves of different k_n collapse in dt/t_c.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("relaxation-time: Cundall's t_R drifts with dt to the linear system's, the geometric update's does not") {
        const nlohmann::json doc =
            test::runQuiet(relaxationTime, {"experiment.dt_over_tc=3e-2,1e-2,1e-3", "experiment.kn=1e6,1e8",
                                            "experiment.collapse_kn_max_dt=1e-2", "experiment.sweeps=false"});
        const auto& r = doc["results"];
        auto v = [&](const std::string& key, std::size_t i) { return r["tr_" + key][i].get<double>(); };
        auto linear = [&](const std::string& key) { return r["tr_linear"][key].get<double>(); };
        // eq. 8 with k_t/k_n = nu_t/nu_n = 1/3 at eps_n = 0.9875 (the paper's 1.0053).
        CHECK(r["eps_t_over_eps_n"].get<double>() == doctest::Approx(1.0053).epsilon(1e-4));
        // The linear system: rotation doubles t_R (slow mode omega^2 = k_n/(3m) against (k_n + k_t)/(2m)).
        CHECK(linear("cundall") / linear("cundall_norot") == doctest::Approx(2.0).epsilon(1e-9));
        for (const char* c : {"cundall", "cundall_norot", "cundall_rotonly"}) {
            CAPTURE(c);
            // From below, first order: the error falls fourfold (rotation only) to tenfold from 1e-2 to 1e-3.
            CHECK(v(c, 0) < v(c, 1));
            CHECK(v(c, 1) < v(c, 2));
            CHECK(v(c, 2) < linear(c));
            CHECK((linear(c) - v(c, 2)) < (linear(c) - v(c, 1)) / 3.0);
        }
        for (const char* g : {"geometric", "geometric_norot", "geometric_rotonly"}) {
            CAPTURE(g);
            CHECK(std::abs(v(g, 0) / v(g, 2) - 1.0) < 1e-3);         // flat (Fig. 9)
            CHECK(std::abs(v(g, 2) / linear(g) - 1.0) < 5e-3);       // the linear system's t_R
        }
        // mu = 0 (Fig. 5's inset): no tangential force, no dt dependence.
        CHECK(r["spread_cundall_mu0"].get<double>() < 1e-4);
        CHECK(r["collapse_max_rel_dev"].get<double>() < 1e-6);
        CHECK(r["fits_below_min_r2"].get<int>() == 0);
        for (const auto& check : doc["checks"]) {
            const std::string name = check["name"];
            if (name.rfind("geometric", 0) == 0 || name.find("collapse") != std::string::npos ||
                name.find("R^2") != std::string::npos)
                CHECK(check["pass"].get<bool>());
        }
    }

    TEST_CASE("relaxation-time: Fig. 8's sweeps follow the linear system while the contact sticks") {
        // Coarse for speed: Cundall's spring is about 5 % low at dt/t_c = 1e-3, so
        // the trends and a 10 % agreement are checked here.
        const nlohmann::json doc = test::runQuiet(
            relaxationTime, {"experiment.dt_over_tc=1e-2", "experiment.kn=1e6", "experiment.mu_list=0.05,500",
                             "experiment.kt_list=0.2,1", "experiment.et_list=1,1.008", "experiment.sweep_dt=1e-3",
                             "experiment.extra_min_dt=1e-2", "experiment.rotation_sweep_dt=1e-2",
                             "experiment.kt_dts=1e-2"});
        const auto& r = doc["results"];
        const auto& b = r["fig8b"];
        const auto& c = r["fig8c"];
        REQUIRE(b.size() == 2);
        REQUIRE(c.size() == 2);
        // A stiffer tangential spring relaxes faster; so does a smaller eps_t (more damping).
        CHECK(b[1]["t_r"].get<double>() < b[0]["t_r"].get<double>());
        CHECK(b[1]["t_r_linear"].get<double>() < b[0]["t_r_linear"].get<double>());
        CHECK(c[0]["t_r"].get<double>() < c[1]["t_r"].get<double>());
        for (const auto* rows : {&b, &c})
            for (const auto& row : *rows) CHECK(row["t_r"].get<double>() / row["t_r_linear"].get<double>() ==
                                                doctest::Approx(1.0).epsilon(0.1));
        REQUIRE(r["fig8a"].size() == 2);
        CHECK(r["fig7b_tr_by_mu"].contains("500"));
        // With rotation too, t_R does not change with mu while the contact sticks.
        REQUIRE(r["fig8a_rotation"].size() == 2);
        CHECK(r["fig8a_rotation_tr_max_over_min"].get<double>() < 1.01);
        // Cundall's first-order error grows with the tangential stiffness: at a
        // coarse step k_t/k_n = 1 is further from the linear system than 0.2
        // (the paper: convergence in dt faster as k_t/k_n -> 1).
        REQUIRE(r["fig8b_by_dt"].size() == 2);
        CHECK(r["fig8b_error_ratio_high_over_low_kt"]["0.01"].get<double>() > 2.0);
    }

    TEST_CASE("relaxation-time: bad keys are refused naming the key") {
        test::checkRefused(relaxationTime, "experiment.dt_over_tc=1e-2,abc");
        test::checkRefused(relaxationTime, "md.kn=5");
        test::checkRefused(relaxationTime, "experiment.et_over_en=1.02");  // eps_t = 1.007 > 1
    }

    TEST_CASE("relaxation-time with polygons (Fig. 10): the geometric update's t_R is flat in dt, Cundall's rises to it") {
        const nlohmann::json doc = test::runQuiet(
            relaxationTime, {"experiment.grains=polygons", "experiment.dt_over_tc=1e-1,1e-2,1e-3"});
        const auto& r = doc["results"];
        auto v = [&](const std::string& key, std::size_t i) { return r["tr_polygon_" + key][i].get<double>(); };
        const double linear = r["tr_polygon_linear"].get<double>();
        for (std::size_t i = 0; i < 3; ++i) {
            CAPTURE(i);
            CHECK(v("geometric_norot", i) == doctest::Approx(linear).epsilon(5e-3));
            CHECK(v("cundall_norot", i) < v("geometric_norot", i));
        }
        // Flat against first order: 10.08, 40.01, 56.93 against 59.73 (t_c).
        CHECK(r["spread_polygon_geometric_norot"].get<double>() < 1e-3);
        CHECK(v("cundall_norot", 0) < 0.2 * v("geometric_norot", 0));
        CHECK(v("cundall_norot", 1) < v("cundall_norot", 2));
        CHECK(v("cundall_norot", 2) == doctest::Approx(v("geometric_norot", 2)).epsilon(0.06));
        for (const auto& c : doc["checks"])
            if (c["name"].get<std::string>().find("finest") == std::string::npos) {
                CAPTURE(c["name"].get<std::string>());
                CHECK(c["pass"].get<bool>());
            }
    }
}
