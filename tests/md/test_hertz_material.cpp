/// Hertz from material constants with Tsuji's damping (md.normal =
/// hertz-material, md/laws/hertz_material.hpp) against analytic Hertz: the
/// force 4/3 E* √R* ξ^{3/2} of a grain pair and of a grain on a wall of
/// another material, the largest overlap (5 m_eff v²/(4 k̃))^{2/5} and the
/// duration 3.21 (m_eff/k̃)^{2/5} v^{−1/5} of a nearly elastic collision
/// (force schemes eq. 7), and Tsuji's restitution e at every speed.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/md/laws/duration.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"
#include "support/md_collision.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

constexpr double kE = 1e5, kNu = 0.3;      // the grains' material
constexpr double kEw = 4e5, kNuW = 0.2;    // the wall's
constexpr double kRadius = 0.5, kMass = 1.0;

MdSettings material(double e) {
    MdSettings s;
    s.normal = NormalLaw::HertzMaterial;
    s.tangential = TangentialLaw::None;
    s.lawValues[lawKeyIndex("md.youngs_modulus")] = kE;
    s.lawValues[lawKeyIndex("md.poisson_ratio")] = kNu;
    s.lawValues[lawKeyIndex("md.tsuji_en")] = e;
    s.wallMaterials = {{kEw, kNuW}};
    // Tsuji's e is that of the law as written, whose damping pulls briefly
    // at the end of a collision (md.clip_attractive = true makes it more
    // elastic: 0.550 for e = 0.5).
    s.clipAttractive = false;
    return s;
}

/// k̃ = 4/3 E* √R* of a grain against a grain (wall = false) or the wall.
double kTilde(bool wall) {
    const double grain = (1.0 - kNu * kNu) / kE;
    const double eStar = 1.0 / (grain + (wall ? (1.0 - kNuW * kNuW) / kEw : grain));
    return 4.0 / 3.0 * eStar * std::sqrt(wall ? kRadius : 0.5 * kRadius);
}

/// A sphere dropped head-on onto the plane z = 0 at speed v (no gravity):
/// its restitution, contact duration and largest overlap.
test::Collision onWall(const MdSettings& s, double v, double dt) {
    World w;
    w.dimension = 3;
    w.addGrain(Vec3(0, 0, kRadius + 0.3 * v * dt), kRadius, kMass, 0.4 * kMass * kRadius * kRadius);
    w.v[0] = Vec3(0, 0, -v);
    test::addPlane(w, Vec3::Zero(), Vec3::UnitZ());
    Simulation sim = test::stagedMdSimulation(std::move(w), dt, s);
    const World& now = sim.world();
    double tStart = -1.0, prevGap = 0.3 * v * dt, prevT = 0.0, maxOverlap = 0.0;
    for (int k = 0; k < 10000000; ++k) {
        sim.advance();
        const double gap = now.x[0].z() - kRadius;
        maxOverlap = std::max(maxOverlap, -gap);
        if (tStart < 0.0 && gap < 0.0) tStart = prevT + dt * prevGap / (prevGap - gap);
        if (tStart >= 0.0 && gap >= 0.0 && prevGap < 0.0) {
            const double tEnd = prevT + dt * (-prevGap) / (gap - prevGap);
            return {now.v[0].z() / v, tEnd - tStart, 0.0, 0.0, maxOverlap};
        }
        prevGap = gap;
        prevT = now.time;
    }
    return {0, 0, 0, 0, 0};
}

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("hertz-material: F = 4/3 E* sqrt(R*) xi^1.5 with E* of the pair's materials, grain-grain and grain-wall") {
        World w;
        w.dimension = 3;
        w.addGrain(Vec3(0, 0, 2.0), kRadius, kMass, 0.1);
        w.addGrain(Vec3(1.0, 0, 2.0), kRadius, kMass, 0.1);
        test::addPlane(w, Vec3::Zero(), Vec3::UnitZ());
        for (int i = 0; i < 2; ++i) w.invMass[i] = w.invInertia[i] = Vec3::Zero();
        Simulation sim = test::stagedMdSimulation(std::move(w), 1e-4, material(0.5));
        for (double xi : {1e-4, 1e-3, 1e-2}) {
            CAPTURE(xi);
            // The pair overlapping by xi, grain 0 on the plane by xi/2; nothing moves, so no damping.
            sim.world().x[0] = Vec3(0, 0, kRadius - 0.5 * xi);
            sim.world().x[1] = Vec3(1.0 - xi, 0, kRadius - 0.5 * xi);
            sim.detect();
            sim.match();
            sim.solve();
            REQUIRE(sim.contacts().size() == 3);
            for (const Contact& c : sim.contacts()) {
                const bool wall = sim.world().isWall(c.b);
                const double overlap = wall ? 0.5 * xi : xi;
                CAPTURE(wall);
                CHECK(c.history.reaction.norm() == Approx(kTilde(wall) * std::pow(overlap, 1.5)).epsilon(1e-12));
            }
        }
        // An unlisted wall is of the grains' material.
        MdSettings s = material(0.5);
        s.wallMaterials.clear();
        CHECK(wallMaterial(s, 0).youngsModulus == kE);
        CHECK(wallMaterial(s, 0).poissonRatio == kNu);
    }

    TEST_CASE("hertz-material: nearly elastic, the Hertz overlap and duration, and damped, Tsuji's e at every speed") {
        const double meffPair = kMass * 2.0 / 3.0;  // masses 1 and 2
        for (double v : {0.1, 1.0, 10.0}) {
            CAPTURE(v);
            // e = 1: α(1) = 3e-4, a damping that changes the overlap and duration by ~1e-4.
            {
                const MdSettings s = material(1.0);
                const double k = kTilde(true);
                const double t = 3.21 * std::pow(kMass / k, 0.4) * std::pow(v, -0.2);
                const test::Collision c = onWall(s, v, t / 4000.0);
                CHECK(c.maxOverlap == Approx(std::pow(5.0 * kMass * v * v / (4.0 * k), 0.4)).epsilon(1e-3));
                CHECK(c.duration == Approx(t).epsilon(2e-3));
                CHECK(c.restitution == Approx(1.0).epsilon(2e-3));
            }
            for (double e : {0.5, 0.9}) {
                CAPTURE(e);
                const MdSettings s = material(e);
                const double tWall = 3.21 * std::pow(kMass / kTilde(true), 0.4) * std::pow(v, -0.2);
                CHECK(onWall(s, v, tWall / 4000.0).restitution == Approx(e).epsilon(2e-3));
                const double tPair = 3.21 * std::pow(meffPair / kTilde(false), 0.4) * std::pow(v, -0.2);
                CHECK(test::collide(s, 1.0, 2.0, tPair / 4000.0, v).restitution == Approx(e).epsilon(2e-3));
            }
        }
    }

    TEST_CASE("hertz-material: the guard's duration, the fused pipeline's refusal, and the wall keys of a scene") {
        const MdSettings s = material(0.5);
        const CollisionProbe wall{kMass, 1.0, kRadius, 0};
        CHECK(contactDuration(s, wall) == Approx(3.21 * std::pow(kMass / kTilde(true), 0.4)).epsilon(1e-12));
        CHECK_FALSE(MdSolver::pairListAdmits(s));
        const Scene scene =
            loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.normal=hertz-material", "md.youngs_modulus=2e6",
                                            "md.poisson_ratio=0.25", "wall.floor.youngs_modulus=7e6",
                                            "wall.x_min.poisson_ratio=0.1", "guard.contact_steps=0"});
        CHECK(scene.md.normal == NormalLaw::HertzMaterial);
        REQUIRE(scene.md.wallMaterials.size() == scene.world.numWalls());
        for (std::size_t k = 0; k < scene.world.numWalls(); ++k) {
            const std::string& name = scene.world.wallName[k];
            CAPTURE(name);
            CHECK(scene.md.wallMaterials[k].youngsModulus == (name == "floor" ? 7e6 : 2e6));
            CHECK(scene.md.wallMaterials[k].poissonRatio == (name == "x_min" ? 0.1 : 0.25));
        }
        CHECK_THROWS_AS(loadBuiltinScene("box_3d.ini", {"simulation.method=md", "wall.floor.poisson_ratio=0.6"}),
                        InputError);
    }
}
