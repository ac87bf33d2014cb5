/// Mobile walls with locked axes, periodic boundaries and orientation
/// integration in whole CD steps.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/cd/solver.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;

using moreau::test::cdSimulation;

namespace {

WallShape plane(const Vec3& normal, double mu = 0.0) { return moreau::test::planeShape(normal, mu); }

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("a mobile piston, free along y only, comes to rest on a column with R = F") {
        World w;
        w.dimension = 2;
        const double F = 3.0, M = 5.0, dt = 0.05;
        for (int i = 0; i < 3; ++i) w.addGrain(Vec3(0.5, 0.5 + i, 0), 0.5, 1.0, 0.125);
        w.addWall("base", plane(Vec3::UnitY(), 0.5), Vec3::Zero(), false, 0.0, {false, false, false});
        w.addWall("left", plane(Vec3::UnitX(), 0.5), Vec3::Zero(), false, 0.0, {false, false, false});
        w.addWall("right", plane(-Vec3::UnitX(), 0.5), Vec3(1, 0, 0), false, 0.0, {false, false, false});
        const BodyId piston = w.addWall("piston", plane(-Vec3::UnitY(), 0.5), Vec3(0, 3.2, 0), true, M, {false, true, false});
        w.forceSchedule(piston).before = Vec3(0.4, -F, 0);  // a sideways push the lock must absorb
        w.forceSchedule(piston).after = w.forceSchedule(piston).before;
        w.v[2] = Vec3(0.0, 0.3, 0);  // the top grain flies up to meet the piston
        CdSettings s;
        s.criterion = Criterion::Local;
        s.epsilon = 1e-12;
        s.delta = 1e-14;
        Simulation sim = cdSimulation(std::move(w), dt, s);
        for (int k = 0; k < 400; ++k) sim.advance();
        const World& end = sim.world();
        CHECK(end.x[static_cast<std::size_t>(piston)].x() == 0.0);  // locked axis never moves
        CHECK(end.v[static_cast<std::size_t>(piston)].norm() < 1e-9);
        CHECK(end.x[static_cast<std::size_t>(piston)].y() == Approx(3.0).epsilon(1e-9));
        for (const Contact& c : sim.contacts()) {
            if (c.b != piston) continue;
            CHECK(c.history.reaction.dot(c.n) == Approx(F).epsilon(1e-8));
        }
    }

    TEST_CASE("periodic boundary: a head-on collision across the seam as in open space") {
        auto collide = [](bool periodic) {
            World w;
            w.dimension = 1;
            const double shift = periodic ? 9.6 : 0.0;  // pair straddles x = 10 when periodic
            w.addGrain(Vec3(std::fmod(shift + 0.0, 10.0), 0, 0), 0.5, 1.0, 0.1);
            w.addGrain(Vec3(std::fmod(shift + 1.02, 10.0), 0, 0), 0.5, 2.0, 0.1);
            if (periodic) {
                w.periodic = {true, false, false};
                w.boxMin = Vec3(0, -5, -5);
                w.boxMax = Vec3(10, 5, 5);
            }
            w.v[0] = Vec3(1.0, 0, 0);
            w.v[1] = Vec3(-0.5, 0, 0);
            Simulation sim = cdSimulation(std::move(w), 0.01);
            for (int k = 0; k < 5; ++k) sim.advance();
            return std::pair<double, double>(sim.world().v[0].x(), sim.world().v[1].x());
        };
        const auto open = collide(false), seam = collide(true);
        CHECK(open.first == Approx(0.0).epsilon(1e-12));  // inelastic: common velocity (1·1 − 2·0.5)/3 = 0
        CHECK(seam.first == Approx(open.first).epsilon(1e-12));
        CHECK(seam.second == Approx(open.second).epsilon(1e-12));
    }

    TEST_CASE("orientation: a spinning free sphere turns by |w| t about w (quaternions)") {
        World w;
        w.dimension = 3;
        w.addGrain(Vec3::Zero(), 0.5, 1.0, 0.1);
        const Vec3 omega(0.3, -0.2, 0.5);
        w.w[0] = omega;
        const int steps = 200;
        const double dt = 0.01;
        Simulation sim = cdSimulation(std::move(w), dt);
        for (int k = 0; k < steps; ++k) sim.advance();
        const Quat expected(Eigen::AngleAxisd(omega.norm() * steps * dt, omega.normalized()));
        CHECK(sim.world().q[0].angularDistance(expected) < 1e-12);
        CHECK(sim.world().q[0].norm() == Approx(1.0).epsilon(1e-14));
    }
}
