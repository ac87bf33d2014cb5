/// Kuhn et al. Fig. 5 (small version of `moreau experiment stress-probes`):
/// 500 spheres in a periodic cell brought to the constant-p triaxial state
/// q/p = 0.8 and probed in 36 directions per algorithm. What must hold
/// whatever the paper's numbers: the state is the asked one and at rest; the
/// reversible response (no sliding) is one linear, positive-definite and
/// symmetric stiffness (hyperelastic springs); the irreversible increments
/// of the loading directions lie on a circle through the origin (conventional
/// elasto-plasticity, Fig. 5b) whose normal points to more shear and less
/// compression (a frictional yield surface); the unloading directions give
/// small irreversible increments.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("stress-probes: circle through the origin, elastic stiffness symmetric, yield normal dilatant") {
        const nlohmann::json doc = test::runQuiet(stressProbes, {"experiment.particles=500", "experiment.probes=36", "experiment.grains=spheres", "experiment.peak_strain=0"});
        const auto& r = doc["results"];
        CHECK(r["q_over_p"].get<double>() == doctest::Approx(0.8).epsilon(0.01));
        CHECK(r["kinetic_over_elastic"].get<double>() < 1e-6);
        CHECK(r["porosity"].get<double>() > 0.33);
        CHECK(r["porosity"].get<double>() < 0.40);
        // Reversible stiffness (MPa): linear, positive definite, symmetric.
        const auto& d = r["elastic_stiffness_mpa"];
        const double d11 = d[0][0], d12 = d[0][1], d21 = d[1][0], d22 = d[1][1];
        CHECK(r["elastic_linearity_residual"].get<double>() < 0.03);
        CHECK(d11 > 0.0);
        CHECK(d11 * d22 - d12 * d21 > 0.0);
        CHECK(std::abs(d12 - d21) < 0.05 * std::sqrt(d11 * d11 + d22 * d22));
        for (const std::string name : {"conventional", "refined"}) {
            CAPTURE(name);
            const auto& s = r[name];
            CHECK(s["circle_r2"].get<double>() > 0.95);
            CHECK(s["circle_points"].get<long>() >= 3);
            // Plastic modulus well below the reversible one.
            CHECK(s["hardening_modulus_mpa"].get<double>() > 0.0);
            CHECK(s["hardening_modulus_mpa"].get<double>() < 0.5 * std::min(d11, d22));
            // Yield normal: more deviatoric, less volumetric stress.
            const double dir = s["yield_direction_deg"];
            CHECK(dir > 90.0);
            CHECK(dir < 180.0);
            CHECK(s["unloading_side_max_over_diameter"].get<double>() < 0.2);
            // A small packing creeps more than the full one (2.6 %).
            CHECK(s["drift"].get<double>() < 0.15);
        }
        // At 30 steps the per-step movements are tiny against the slip
        // distance mu f_n / k_t: the two algorithms agree closely.
        CHECK(r["hardening_modulus_ratio"].get<double>() == doctest::Approx(1.0).epsilon(0.02));
    }

    TEST_CASE("stress-probes on Kuhn's sphere clusters: a frictional state near Kuhn's porosity, loaded on to its peak") {
        // A small cell (64 clusters): the state and the continued
        // loading, not the probes' statistics.
        const nlohmann::json doc = test::runQuiet(
            stressProbes, {"experiment.particles=64", "experiment.probes=4", "experiment.hold_steps=50",
                           "experiment.peak_strain=0.012"});
        const auto& r = doc["results"];
        CAPTURE(r.dump());
        CHECK(r["grains"] == "clusters");
        CHECK(r["q_over_p"].get<double>() == doctest::Approx(0.8).epsilon(0.01));
        // 0.363 in Kuhn's 10,648; a small cell scatters (0.373 measured at 60).
        CHECK(r["porosity"].get<double>() == doctest::Approx(0.363).epsilon(0.1));
        CHECK(r["sliding_share"].get<double>() > 0.02);
        // The continued compression climbs well past the probed state.
        CHECK(r["peak_q_over_p"].get<double>() > 1.2);
        CHECK(r["peak_axial_strain"].get<double>() > r["axial_strain_triaxial"].get<double>());
    }

    TEST_CASE("stress-probes: each of Kuhn's refinements alone, against the conventional algorithm") {
        const nlohmann::json doc = test::runQuiet(
            stressProbes, {"experiment.particles=200", "experiment.grains=spheres", "experiment.probes=16",
                           "experiment.hold_steps=100", "experiment.peak_strain=0",
                           "experiment.single_refinements=true"});
        const auto& r = doc["results"];
        CHECK(r["conventional"]["difference_from_conventional"].get<double>() == 0.0);
        CHECK(r["refined"]["difference_from_conventional"].get<double>() ==
              doctest::Approx(r["modulus_difference"].get<double>()).epsilon(1e-9));
        for (const char* one : {"only_onset", "only_slip_onset", "only_slip_rotation", "only_projection", "only_twirl"}) {
            CAPTURE(one);
            REQUIRE(r.contains(one));
            CHECK(r[one]["circle_points"].get<int>() > 0);
        }
    }

    TEST_CASE("stress-probes: keys of other sections are refused") {
        test::checkRefused(stressProbes, "md.kn=5");
        test::checkRefused(stressProbes, "experiment.probes=2");
        test::checkRefused(stressProbes, "experiment.prep_mu=-1");
        test::checkRefused(stressProbes, "experiment.grains=cubes");
    }
}
