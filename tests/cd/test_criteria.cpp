/// Convergence criteria (CD §2.5.1), warm start and the g_pos switch (eq. 33)
/// on a statically loaded column whose exact reactions are known.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/cd/solver.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

/// A 1D column of n unit grains resting on a wall at x = 0 under gravity −x:
/// contact i (counted from the wall) carries (n − i) m g exactly. Its CD run
/// (Δt = 1) has the given settings; sim.cd() is its solver.
struct Column {
    static constexpr double g = 1.0, dt = 1.0;
    int n;
    Simulation sim;
    Column(int count, const CdSettings& settings)
        : n(count), sim(moreau::test::cdSimulation(makeWorld(count), dt, settings)) {}
    static World makeWorld(int count) {
        World w;
        w.dimension = 1;
        w.gravity = Vec3(-g, 0, 0);
        for (int i = 0; i < count; ++i) w.addGrain(Vec3(0.5 + i, 0, 0), 0.5, 1.0, 0.125);
        moreau::test::addPlane(w, Vec3::Zero(), Vec3::UnitX());
        return w;
    }
    const World& world() const { return sim.world(); }
    CdStepStats step() { return sim.advance(); }
    /// Largest |R − exact| over the contacts, relative to the largest load n m g.
    double maxError() const {
        const World& w = sim.world();
        double err = 0.0;
        for (const Contact& c : sim.contacts()) {
            // The wall contact is (grain 0, wall); grain contacts are (i, i+1).
            const int below = w.isWall(c.b) ? 0 : c.b;
            const double exact = (n - below) * g;
            err = std::max(err, std::abs(c.history.reaction.norm() - exact));
        }
        return err / (n * g);
    }
};

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("fixed criterion: exactly N_I sweeps (eq. 37)") {
        CdSettings s;
        s.iterations = 7;
        Column col(20, s);
        const CdStepStats st = col.step();
        CHECK(st.iterations == 7);
        CHECK(st.residual > 0.0);
    }

    TEST_CASE("local criterion: every reaction converged to epsilon (eq. 35)") {
        CdSettings s;
        s.criterion = Criterion::Local;
        s.epsilon = 1e-10;
        s.delta = 1e-12;
        s.warmStart = false;
        Column col(20, s);
        const CdStepStats st = col.step();
        CHECK(st.converged);
        CHECK(st.iterations < s.maxIterations);
        // Diffusive relaxation (eq. 48): hundreds of sweeps for 20 grains.
        CHECK(st.iterations > 20 * 20 / 4);
        CHECK(col.maxError() < 1e-7);
        for (const Vec3& v : col.world().v) CHECK(v.norm() < 1e-7);
        SUBCASE("warm start: the next step needs a fraction of the sweeps") {
            // Eq. 35 bounds the last change, not the error: the cold step
            // stops with residual velocities that the next step relaxes.
            col.sim.cd().settings().warmStart = true;
            const CdStepStats next = col.step();
            CHECK(next.iterations < st.iterations / 4);
            CHECK(col.maxError() < 1e-7);
        }
    }

    TEST_CASE("global criterion: the mean force settles (eq. 36)") {
        CdSettings s;
        s.criterion = Criterion::Global;
        s.epsilon = 1e-9;
        s.warmStart = false;
        Column col(20, s);
        const CdStepStats st = col.step();
        CHECK(st.converged);
        CHECK(st.iterations > 10);
        CHECK(col.maxError() < 1e-3);
    }

    TEST_CASE("criteria stop at their cap and say so") {
        CdSettings s;
        s.criterion = Criterion::Local;
        s.epsilon = 1e-14;
        s.delta = 0.0;
        s.maxIterations = 5;
        s.warmStart = false;
        Column col(40, s);
        const CdStepStats st = col.step();
        CHECK(st.iterations == 5);
        CHECK_FALSE(st.converged);
    }

    TEST_CASE("residual history falls as the sweeps converge") {
        CdSettings s;
        s.iterations = 1000;
        s.warmStart = false;
        Column col(10, s);
        col.sim.cd().recordResidualHistory(true);
        col.step();
        const auto& h = col.sim.cd().residualHistory();
        REQUIRE(h.size() == 1000);
        // The slowest mode of a 10-grain column decays like exp(−q π² k/400)
        // per sweep k (eq. 42): ~1e-8 after 1000 sweeps.
        CHECK(h[500] < h[100]);
        CHECK(h.back() < 1e-6 * h.front());
    }

    TEST_CASE("g_pos keeps overlaps, plain g pushes them out (eq. 33)") {
        for (bool positive : {true, false}) {
            CAPTURE(positive);
            World w;
            w.dimension = 1;
            w.addGrain(Vec3(0.49, 0, 0), 0.5, 1.0, 0.125);  // overlaps the wall by 0.01
            WallShape shape;
            shape.kind = ShapeKind::Plane;
            shape.direction = Vec3::UnitX();
            w.addWall("floor", shape, Vec3::Zero(), false, 0.0, {false, false, false});
            w.v[0] = Vec3(-0.2, 0, 0);
            CdSettings s;
            s.gapPositive = positive;
            Simulation sim = moreau::test::cdSimulation(std::move(w), 0.5, s, 0.05, 1);
            sim.advance();
            // g_pos: the approach stops, the overlap stays. Plain g: the
            // overlap is closed within the step, v = −g/dt = 0.02.
            CHECK(sim.world().v[0].x() == Approx(positive ? 0.0 : 0.01 / 0.5).epsilon(1e-12));
        }
    }

    TEST_CASE("plain g pumps kinetic energy into a packing at rest, g_pos does not (eq. 33)") {
        // examples/piston_2d.ini compressed under its constant piston force:
        // by t = 700 it is at rest with g_pos; plain g keeps pushing the
        // overlaps of its compression apart (docs/contact-dynamics.md).
        double energy[2] = {0.0, 0.0};
        for (int plain = 0; plain < 2; ++plain) {
            Simulation sim(loadBuiltinScene("piston_2d.ini", {plain ? "cd.gap=plain" : "cd.gap=pos",
                                                              "output.vtk_every=0"}));
            for (int k = 0; k < 900; ++k) {
                sim.step();
                if (k >= 700) {
                    const World& w = sim.world();
                    for (std::size_t i = 0; i < w.numGrains; ++i) energy[plain] += 0.5 * w.mass[i] * w.v[i].squaredNorm();
                }
            }
        }
        CAPTURE(energy[0]);
        CAPTURE(energy[1]);
        CHECK(energy[1] > 100.0 * energy[0]);
    }
}
