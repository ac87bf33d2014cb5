/// Luding's linear hysteretic adhesive normal law (md.normal = luding,
/// md/laws/luding.hpp) against its analytic results: the three branches and
/// the pull-off force k_c (k₂ − k₁) ξ_max/(k₂ + k_c) along a prescribed
/// overlap path, and the restitution of head-on collisions,
/// e² = k₁/k₂ − k_c (k₂ − k₁)²/(k₁ k₂ (k₂ + k_c)), at several speeds — with
/// md.clip_attractive left at its default (true), which a cohesive law
/// must not feel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"
#include "support/md_collision.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

MdSettings luding(double k1, double k2Ratio, double kcRatio) {
    MdSettings s = test::normalLawOnly(NormalLaw::Luding, k1);
    s.gammaN = 0.0;
    s.lawValues[lawKeyIndex("md.k2_ratio")] = k2Ratio;
    s.lawValues[lawKeyIndex("md.kc_ratio")] = kcRatio;
    return s;  // clipAttractive stays true (the default)
}

/// e of the undamped law from the energy of its three branches.
double analyticRestitution(double k1, double k2, double kc) {
    return std::sqrt(k1 / k2 - kc * (k2 - k1) * (k2 - k1) / (k1 * k2 * (k2 + kc)));
}

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("luding: the three branches and the pull-off force k_c (k2 - k1) xi_max / (k2 + k_c)") {
        const double k1 = 1e4, k2 = 3e4, kc = 1e4, xiMax = 2e-3;
        // Two grains held in place (no inverse mass), the overlap set by hand.
        World w;
        w.dimension = 3;
        w.addGrain(Vec3::Zero(), 0.5, 1.0, 0.1);
        w.addGrain(Vec3(1.0, 0, 0), 0.5, 1.0, 0.1);
        for (int i = 0; i < 2; ++i) w.invMass[i] = w.invInertia[i] = Vec3::Zero();
        Simulation sim = test::stagedMdSimulation(std::move(w), 1e-4, luding(k1, k2 / k1, kc / k1));
        auto forceAt = [&](double xi) {  // the normal force on b along +n (repulsion > 0)
            sim.world().x[1] = Vec3(1.0 - xi, 0, 0);
            sim.detect();
            sim.match();
            sim.solve();
            REQUIRE(sim.contacts().size() == 1);
            return sim.contacts()[0].history.reaction.x();
        };
        const double xi0 = (1.0 - k1 / k2) * xiMax, xiStar = k2 * xi0 / (k2 + kc);
        // Loading along k1 xi to xi_max.
        for (int k = 1; k <= 20; ++k) {
            const double xi = xiMax * k / 20.0;
            CHECK(forceAt(xi) == Approx(k1 * xi).epsilon(1e-12));
        }
        // Unloading along k2 (xi - xi0) down to xi*, then the adhesive branch -kc xi;
        // the largest pull is at xi*.
        std::vector<double> path;
        for (int k = 19; k >= 1; --k) path.push_back(xiMax * k / 20.0);
        path.push_back(xiStar);
        std::sort(path.begin(), path.end(), [](double a, double b) { return a > b; });
        double pull = 0.0;
        for (double xi : path) {
            const double f = forceAt(xi);
            const double expected = xi > xiStar ? k2 * (xi - xi0) : -kc * xi;
            CAPTURE(xi);
            CHECK(f == Approx(expected).epsilon(1e-9));
            pull = std::min(pull, f);
        }
        CHECK(-pull == Approx(kc * (k2 - k1) * xiMax / (k2 + kc)).epsilon(1e-12));
        // Reloading from the adhesive branch runs along the k2 line through
        // the point where it left it, up to the loading line.
        const double xiLow = xiMax / 20.0, xi0New = (1.0 + kc / k2) * xiLow;
        CHECK(forceAt(xiLow + 5e-5) == Approx(k2 * (xiLow + 5e-5 - xi0New)).epsilon(1e-9));
    }

    TEST_CASE("luding: restitution e^2 = k1/k2 - kc (k2 - k1)^2 / (k1 k2 (k2 + kc)) at every speed, clip ignored") {
        const double k1 = 1e4;
        struct Case {
            double k2Ratio, kcRatio;
        };
        for (const Case c : {Case{2.0, 0.5}, Case{5.0, 0.1}, Case{3.0, 0.0}}) {
            const MdSettings s = luding(k1, c.k2Ratio, c.kcRatio);
            const double e = analyticRestitution(k1, c.k2Ratio * k1, c.kcRatio * k1);
            for (double v : {0.1, 1.0, 10.0}) {
                CAPTURE(c.k2Ratio);
                CAPTURE(c.kcRatio);
                CAPTURE(v);
                // Masses 1 and 2 (m_eff = 2/3); 4000 steps per loading half period.
                const double dt = M_PI * std::sqrt((2.0 / 3.0) / (c.k2Ratio * k1)) / 4000.0;
                const test::Collision col = test::collide(s, 1.0, 2.0, dt, v);
                CHECK(col.restitution == Approx(e).epsilon(2e-3));
                // ξ_max of the loading branch: v √(m_eff/k1).
                CHECK(col.maxOverlap == Approx(v * std::sqrt((2.0 / 3.0) / k1)).epsilon(1e-3));
            }
        }
        // The adhesive branch takes energy: below Walton-Braun's sqrt(k1/k2).
        CHECK(analyticRestitution(k1, 2.0 * k1, 0.5 * k1) < std::sqrt(0.5) - 0.07);
    }

    TEST_CASE("luding: a cohesive row, refused by the fused pipeline, and named with its keys in a scene") {
        CHECK(lawRow(NormalLaw::Luding).cohesive);
        CHECK_FALSE(lawRow(NormalLaw::Luding).fused);
        for (const auto& law : kNormalLaws) CHECK_FALSE(law.row.beyondContact);
        MdSettings s = luding(1e4, 2.0, 0.5);
        CHECK_FALSE(s.clipsAttraction());
        s.normal = NormalLaw::Linear;
        CHECK(s.clipsAttraction());
        CHECK_FALSE(MdSolver::pairListAdmits(luding(1e4, 2.0, 0.5)));
        const Scene scene = loadBuiltinScene(
            "box_3d.ini", {"simulation.method=md", "md.normal=luding", "md.k2_ratio=4", "md.kc_ratio=0.25"});
        CHECK(scene.md.normal == NormalLaw::Luding);
        CHECK(scene.md.lawValues[lawKeyIndex("md.k2_ratio")] == 4.0);
        CHECK(scene.md.lawValues[lawKeyIndex("md.kc_ratio")] == 0.25);
        CHECK_THROWS_AS(loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.k2_ratio=0.5"}), InputError);
    }
}
