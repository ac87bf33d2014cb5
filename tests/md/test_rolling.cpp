/// Rolling resistance, Ai et al. (2011) model C (md.rolling = ai-c,
/// md/laws/rolling_ai.hpp): a sphere rolling on a plane stops after
/// 7 v0²/(10 μ_r g), the distance of its plastic limit, and a sphere on a
/// slope holds below the rolling-friction angle (tan α ≤ μ_r) and rolls
/// down above it with a = 5/7 g (sin α − μ_r cos α).
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

constexpr double kRadius = 0.01, kMass = 0.01, kG = 9.81, kMuRoll = 0.1;
// Stiff enough that the rolling spring reaches its limit within the first
// step of a launched sphere (k_r ω Δt > μ_r R m g): no elastic start-up
// transient, whose dashpot would take a percent of the distance at 1e5.
constexpr double kKn = 1e6;

MdSettings rollingSettings() {
    MdSettings md;
    md.kn = kKn;
    md.gammaN = 2.0;
    md.kt = kKn * 2.0 / 7.0;
    md.gammaT = 1.0;
    md.rolling = RollingLaw::AiTypeC;
    md.lawValues[lawKeyIndex("md.mu_roll")] = kMuRoll;
    md.lawValues[lawKeyIndex("md.eta_roll")] = 0.3;
    return md;
}

/// A solid sphere resting on the plane z = 0 (overlap m g/k_n) under
/// gravity g (sin α, 0, −cos α), friction μ = 0.8.
Simulation sphereOnPlane(double slope, double dt) {
    World w;
    w.dimension = 3;
    w.gravity = kG * Vec3(std::sin(slope), 0, -std::cos(slope));
    const double rest = kMass * kG * std::cos(slope) / kKn;
    w.addGrain(Vec3(0, 0, kRadius - rest), kRadius, kMass, 0.4 * kMass * kRadius * kRadius);
    test::addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 0.8);
    w.muGrain = 0.8;
    return test::stagedMdSimulation(std::move(w), dt, rollingSettings());
}

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("ai-c rolling: a sphere rolling on a plane stops after 7 v0^2/(10 mu_r g)") {
        for (double v0 : {0.2, 0.5}) {
            CAPTURE(v0);
            const double dt = 1e-5;
            Simulation sim = sphereOnPlane(0.0, dt);
            sim.world().v[0] = Vec3(v0, 0, 0);
            sim.world().w[0] = Vec3(0, v0 / kRadius, 0);  // rolling without slip
            const double expected = 7.0 * v0 * v0 / (10.0 * kMuRoll * kG);
            const double stopTime = v0 / (5.0 / 7.0 * kMuRoll * kG);
            const auto steps = static_cast<long>(1.3 * stopTime / dt);
            for (long k = 0; k < steps; ++k) sim.advance();
            CHECK(sim.world().x[0].x() == Approx(expected).epsilon(1e-3));
            CHECK(std::abs(sim.world().v[0].x()) < 1e-3 * v0);
            // At rest it stays: the spring holds what is left.
            const double there = sim.world().x[0].x();
            for (long k = 0; k < steps / 4; ++k) sim.advance();
            CHECK(std::abs(sim.world().x[0].x() - there) < 1e-4 * expected);
        }
    }

    TEST_CASE("ai-c rolling: a sphere on a slope holds below the rolling-friction angle and rolls above it") {
        const double dt = 1e-5, T = 0.3;
        const auto steps = static_cast<long>(T / dt);
        // Below: tan α = 0.8 μ_r. The sphere creeps by the spring's elastic
        // turn (R M/k_r, micrometres) and stops.
        {
            const double slope = std::atan(0.8 * kMuRoll);
            Simulation sim = sphereOnPlane(slope, dt);
            for (long k = 0; k < steps; ++k) sim.advance();
            CHECK(std::abs(sim.world().x[0].x()) < 1e-5);
            CHECK(std::abs(sim.world().v[0].x()) < 1e-5);
        }
        // Above: tan α = 2 μ_r. It rolls with a = 5/7 g (sin α − μ_r cos α).
        {
            const double slope = std::atan(2.0 * kMuRoll);
            Simulation sim = sphereOnPlane(slope, dt);
            for (long k = 0; k < steps; ++k) sim.advance();
            const double a = 5.0 / 7.0 * kG * (std::sin(slope) - kMuRoll * std::cos(slope));
            CHECK(sim.world().x[0].x() == Approx(0.5 * a * T * T).epsilon(5e-3));
            // Rolling, not sliding: the contact point is at rest.
            CHECK(sim.world().v[0].x() == Approx(sim.world().w[0].y() * kRadius).epsilon(1e-3));
        }
    }

    TEST_CASE("ai-c rolling: a scene names it with its keys, and other integrators and the fused pipeline refuse it") {
        const Scene scene = loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.rolling=ai-c",
                                                            "md.mu_roll=0.2", "md.eta_roll=0.5"});
        CHECK(scene.md.rolling == RollingLaw::AiTypeC);
        CHECK(scene.md.lawValues[lawKeyIndex("md.mu_roll")] == 0.2);
        CHECK(scene.md.lawValues[lawKeyIndex("md.eta_roll")] == 0.5);
        CHECK_THROWS_WITH_AS(loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.rolling=ai-c", "md.integrator=rk"}),
                             doctest::Contains("md.rolling 'ai-c' runs with md.integrator = cd only"), InputError);
        CHECK_THROWS_WITH_AS(loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.mu_roll=-1"}),
                             doctest::Contains("md.mu_roll"), InputError);
        CHECK_THROWS_AS(Simulation(loadBuiltinScene("box_3d.ini", {"simulation.method=md", "md.rolling=ai-c",
                                                                   "md.pipeline=fused"})),
                        InputError);
    }
}
