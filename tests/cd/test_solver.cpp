/// Contact dynamics: the shock law (eq. 34) case by case, and small analytic
/// scenes that exercise the whole step (implicit Euler, eqs. 1–2).
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "moreau/analysis/observables.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;
using moreau::test::addPlane;
using moreau::test::cdSimulation;

namespace {

/// A row between two free spheres of unit mass along x, a at the origin.
struct TwoSpheres {
    std::vector<SolverBody> bodies;
    std::vector<BodyMasks> masks;
    RowTables tables;
    SolverRow row{};
    TwoSpheres(double r, double m, double I, double mu, double gap, double dt) {
        bodies.resize(2);
        masks.resize(2);
        for (auto& b : bodies) {
            b.v = b.w = Vec3::Zero();
            b.invMass = 1.0 / m;
            b.invInertia = 1.0 / I;
        }
        row.a = 0;
        row.b = 1;
        row.n = Vec3::UnitX();
        row.ra = row.rb = r;
        row.mn = m / 2.0;                            // eq. 17
        row.mt = 1.0 / (2.0 / m + 2.0 * r * r / I);  // eq. 18
        row.bias = std::max(gap, 0.0) / dt;
        tables.mu = {mu};
        row.friction = 0;
        row.P = Vec3::Zero();
    }
    void update() { CdSolver::updateRow(row, bodies, masks, tables); }
    Vec3 contactVelocity() const {
        return bodies[1].v - bodies[0].v - (row.ra * bodies[0].w + row.rb * bodies[1].w).cross(row.n);
    }
};

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("shock law: separating contact gets no force") {
        TwoSpheres s(0.5, 1.0, 0.1, 0.5, 0.0, 1.0);
        s.bodies[1].v = Vec3(0.3, 0.2, 0.0);  // b moves away from a
        s.update();
        CHECK(s.row.P.norm() == 0.0);
        CHECK(s.bodies[1].v.x() == Approx(0.3));
    }

    TEST_CASE("shock law: small positive gap may close within the step, no more") {
        const double dt = 0.5, gap = 0.1;
        TwoSpheres s(0.5, 1.0, 0.1, 0.5, gap, dt);
        s.bodies[1].v = Vec3(-1.0, 0, 0);  // approaching: U_n = -1
        s.update();
        // Eq. 24 with g_new = 0: V_n new = -g/dt.
        CHECK(s.contactVelocity().x() == Approx(-gap / dt).epsilon(1e-14));
        SUBCASE("too slow to close: no force") {
            TwoSpheres slow(0.5, 1.0, 0.1, 0.5, gap, dt);
            slow.bodies[1].v = Vec3(-0.1, 0, 0);  // U_n dt + g = 0.05 > 0
            slow.update();
            CHECK(slow.row.P.norm() == 0.0);
        }
    }

    TEST_CASE("shock law: sticking contact stops the tangential motion") {
        TwoSpheres s(0.5, 1.0, 0.1, 1.0, 0.0, 1.0);
        s.bodies[1].v = Vec3(-1.0, 0.2, -0.1);  // approach with a little slip
        s.update();
        const Vec3 V = s.contactVelocity();
        CHECK(V.norm() == Approx(0.0).epsilon(1e-14));
        CHECK(s.row.P.x() == Approx(0.5));  // m_n |U_n|
        const Vec3 Pt(0, s.row.P.y(), s.row.P.z());
        CHECK(Pt.norm() < 1.0 * s.row.P.x());
    }

    TEST_CASE("shock law: sliding force is exactly mu R_n opposite the slip") {
        const double mu = 0.3;
        TwoSpheres s(0.5, 1.0, 0.1, mu, 0.0, 1.0);
        s.bodies[1].v = Vec3(-1.0, 2.0, 1.0);  // strong slip
        const Vec3 Ut = Vec3(0, 2.0, 1.0);
        s.update();
        const double Pn = s.row.P.x();
        const Vec3 Pt(0, s.row.P.y(), s.row.P.z());
        CHECK(Pn == Approx(0.5));
        CHECK(Pt.norm() == Approx(mu * Pn).epsilon(1e-14));
        CHECK(Pt.normalized().dot(-Ut.normalized()) == Approx(1.0).epsilon(1e-14));
        // The contact still slides in the same direction, more slowly.
        const Vec3 V = s.contactVelocity();
        CHECK(V.x() == Approx(0.0).epsilon(1e-14));
        CHECK(V.tail<2>().normalized().dot(Ut.tail<2>().normalized()) == Approx(1.0).epsilon(1e-12));
        CHECK(V.tail<2>().norm() < Ut.norm());
    }

    TEST_CASE("shock law: wall contact uses the grain's mass alone (eq. 18, infinite wall inertia)") {
        World w;
        w.dimension = 3;
        const double m = 2.0, r = 0.5, I = 0.4 * m * r * r;
        w.addGrain(Vec3(0, 0, r), r, m, I);
        addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 10.0);
        w.v[0] = Vec3(0.4, 0.0, -1.0);
        Simulation sim = cdSimulation(std::move(w), 0.1);
        sim.advance();
        const std::vector<Contact>& contacts = sim.contacts();
        const World& after = sim.world();
        REQUIRE(contacts.size() == 1);
        // Normal: the full momentum m |v_n| in one step; tangential: the
        // contact point stops, the grain rolls (v = r ω) with v_t reduced by
        // m_t/m = 1/(1 + m r²/I) = 2/7.
        const double R_n = contacts[0].history.reaction.dot(contacts[0].n);
        CHECK(R_n * 0.1 == Approx(m * 1.0));
        CHECK(after.v[0].z() == Approx(0.0).epsilon(1e-14));
        CHECK(after.v[0].x() == Approx(0.4 * 5.0 / 7.0).epsilon(1e-12));
        CHECK(after.v[0].x() - after.w[0].y() * r == Approx(0.0).epsilon(1e-12));
    }

    TEST_CASE("two-grain head-on collision: zero relative normal velocity after two steps (§2.4.2)") {
        World w;
        w.dimension = 3;
        const double r = 0.5, gap = 0.04, dt = 0.1;
        w.addGrain(Vec3(0, 0, 0), r, 1.0, 0.1);
        w.addGrain(Vec3(2 * r + gap, 0, 0), r, 1.0, 0.1);
        w.v[0] = Vec3(1, 0, 0);
        w.v[1] = Vec3(-1, 0, 0);
        Simulation sim = cdSimulation(std::move(w), dt);
        const World& now = sim.world();
        sim.advance();
        // First step: the gap closes exactly, relative velocity -g/dt remains.
        CHECK(now.v[1].x() - now.v[0].x() == Approx(-gap / dt).epsilon(1e-12));
        CHECK((now.x[1] - now.x[0]).norm() - 2 * r == Approx(0.0).epsilon(1e-12));
        sim.advance();
        CHECK(now.v[1].x() - now.v[0].x() == Approx(0.0).epsilon(1e-12));
        CHECK(now.v[0].x() + now.v[1].x() == Approx(0.0).epsilon(1e-14));  // momentum
    }

    TEST_CASE("grain at rest on a plane under gravity stays at rest with R_n = m g") {
        World w;
        w.dimension = 3;
        const double m = 1.5, r = 0.5, g = 9.81, dt = 0.01;
        w.gravity = Vec3(0, 0, -g);
        w.addGrain(Vec3(0.3, -0.2, r), r, m, 0.4 * m * r * r);
        addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 0.5);
        Simulation sim = cdSimulation(std::move(w), dt);
        for (int s = 0; s < 50; ++s) sim.advance();
        const std::vector<Contact>& contacts = sim.contacts();
        REQUIRE(contacts.size() == 1);
        CHECK(contacts[0].history.reaction.dot(contacts[0].n) == Approx(m * g).epsilon(1e-12));
        CHECK(sim.world().v[0].norm() < 1e-12);
        CHECK(sim.world().x[0].z() == Approx(r).epsilon(1e-12));
    }

    TEST_CASE("slope: static friction holds below atan(mu), Coulomb sliding above") {
        const double mu = 0.4, g = 9.81, dt = 0.01, r = 0.5, m = 1.0;
        const int steps = 100;
        auto slide = [&](double theta, bool rotation) {
            World w;
            w.dimension = 3;
            w.gravity = Vec3(0, 0, -g);
            const Vec3 nrm(-std::sin(theta), 0.0, std::cos(theta));
            w.addGrain(r * nrm, r, m, 0.4 * m * r * r);
            if (!rotation) w.invInertia[0] = Vec3::Zero();  // a sliding block
            addPlane(w, Vec3::Zero(), nrm, mu);
            Simulation sim = cdSimulation(std::move(w), dt);
            for (int s = 0; s < steps; ++s) sim.advance();
            const Vec3 down(-std::cos(theta), 0.0, -std::sin(theta));  // down-slope unit vector
            return sim.world().v[0].dot(down);
        };
        const double thetaC = std::atan(mu);
        SUBCASE("non-rotating grain") {
            CHECK(std::abs(slide(0.9 * thetaC, false)) < 1e-12);
            const double th = 1.2 * thetaC;
            // Implicit Euler is exact for a constant acceleration: v = a N dt.
            CHECK(slide(th, false) == Approx(g * (std::sin(th) - mu * std::cos(th)) * steps * dt).epsilon(1e-10));
        }
        SUBCASE("rotating sphere rolls without slip below atan(7 mu / 2)") {
            const double th = 1.2 * thetaC;  // above atan(mu), below atan(3.5 mu)
            CHECK(slide(th, true) == Approx(5.0 / 7.0 * g * std::sin(th) * steps * dt).epsilon(1e-10));
            const double steep = 1.1 * std::atan(3.5 * mu);
            CHECK(slide(steep, true) == Approx(g * (std::sin(steep) - mu * std::cos(steep)) * steps * dt).epsilon(1e-10));
        }
    }

    TEST_CASE("momentum is conserved without walls") {
        World w = moreau::test::randomSpheres(300, 8.0);
        w.muGrain = 0.3;
        Rng rng(3);
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            w.v[i] = Vec3(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
            w.w[i] = Vec3(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
        }
        const Vec3 p0 = totalMomentum(w);
        Simulation sim = cdSimulation(std::move(w), 0.02);
        std::size_t maxContacts = 0;
        for (int s = 0; s < 100; ++s) {
            sim.advance();
            maxContacts = std::max(maxContacts, sim.contacts().size());
        }
        CHECK(maxContacts > 20);  // collisions happened
        CHECK((totalMomentum(sim.world()) - p0).norm() <
              1e-11 * (1.0 + p0.norm()) * static_cast<double>(sim.world().numGrains));
    }

    TEST_CASE("parallel sweeps are bit-identical to the serial random sweep") {
        auto run = [](int threads, SweepOrder order, double& levels) {
            omp_set_num_threads(threads);
            World w = moreau::test::latticeOnFloor(5);  // ~17,000 contacts: above the parallel threshold
            CdSettings cs;
            cs.iterations = 15;
            cs.order = order;
            Simulation sim = cdSimulation(std::move(w), 0.01, cs);
            for (int s = 0; s < 3; ++s) sim.advance();
            levels = sim.cd().levelsPerSweep();
            return stateHash(sim.world());
        };
        for (SweepOrder order :
             {SweepOrder::RandomSweep, SweepOrder::ShuffleOnce, SweepOrder::RandomSequential, SweepOrder::RandomKeys}) {
            double levels1 = 0.0, levels2 = 0.0, levels1b = 0.0;
            const auto h1 = run(1, order, levels1);
            const auto h2 = run(2, order, levels2);
            const auto h1b = run(1, order, levels1b);
            CHECK(h1 == h1b);
            CHECK(h1 == h2);
            CHECK(levels1 == 0.0);  // one thread: the serial sweep
            CHECK(levels2 > 1.0);   // two: by dependency levels
        }
        omp_set_num_threads(omp_get_num_procs());
    }

    TEST_CASE("random-keys: a fresh, uniform permutation every sweep, from each contact's key alone") {
        // Ranks order their own contacts by these priorities: the order of any
        // subset is the whole order restricted to it, by construction. What
        // must hold is that the priorities make a fresh uniform permutation:
        // a key's rank among 1000 is uniform over the sweeps, and two sweeps'
        // orders are uncorrelated (Kendall's tau near 0).
        constexpr int n = 1000, sweeps = 400;
        std::vector<double> meanRank(n, 0.0);
        std::vector<std::uint64_t> previous;
        double tauSum = 0.0;
        for (int s = 0; s < sweeps; ++s) {
            std::vector<std::pair<std::uint64_t, int>> p(n);
            for (int k = 0; k < n; ++k) p[static_cast<std::size_t>(k)] = {sweepPriority(7, 3, s, makeContactKey(k, k + 1)), k};
            std::sort(p.begin(), p.end());
            for (int r = 0; r < n; ++r) meanRank[static_cast<std::size_t>(p[static_cast<std::size_t>(r)].second)] += r;
            std::vector<std::uint64_t> now(n);
            for (int k = 0; k < n; ++k) now[static_cast<std::size_t>(k)] = sweepPriority(7, 3, s, makeContactKey(k, k + 1));
            if (!previous.empty()) {
                long concordant = 0, pairs = 0;
                for (int a = 0; a < 200; ++a)
                    for (int b = a + 1; b < 200; ++b, ++pairs)
                        concordant += ((now[a] < now[b]) == (previous[a] < previous[b])) ? 1 : -1;
                tauSum += static_cast<double>(concordant) / static_cast<double>(pairs);
            }
            previous = now;
        }
        // Mean rank (n-1)/2 = 499.5 with a standard error of 289/sqrt(400) = 14.4 per key.
        double worst = 0.0;
        for (double r : meanRank) worst = std::max(worst, std::abs(r / sweeps - 499.5));
        CHECK(worst < 6.0 * 14.4);
        CHECK(std::abs(tauSum / (sweeps - 1)) < 0.01);  // standard error of the mean tau: about 0.003
    }

    TEST_CASE("anisotropic tangential mass: one update sticks a sphere to a plate that moves along x only") {
        // The plate (mass 2) is free along x and locked along y and z, so the
        // contact's tangential mass differs between x and y (a row with a
        // matrix M_t). With friction far above the need, one shock-law
        // update (eq. 34, P_t = −M_t U_t) must leave no tangential slip in
        // either direction; a wrong M_t leaves some.
        World w;
        w.dimension = 3;
        w.gravity = Vec3(0, 0, -9.81);
        w.muGrain = 100.0;
        addGrains(w, {{Vec3(0, 0, 0.5), 0.5}}, GrainShape::Sphere, 1.0);
        const BodyId plate = w.addWall("plate", moreau::test::planeShape(Vec3::UnitZ(), 100.0), Vec3::Zero(), true, 2.0,
                                       {true, false, false});
        w.v[0] = Vec3(1.0, 0.5, 0.0);
        w.w[0] = Vec3(0.3, -0.2, 0.1);
        CdSettings cs;
        cs.iterations = 1;
        Simulation sim = cdSimulation(std::move(w), 0.01, cs);
        sim.advance();
        const std::vector<Contact>& contacts = sim.contacts();
        const World& after = sim.world();
        REQUIRE(contacts.size() == 1);
        const Vec3 n = contacts[0].n;  // from the sphere to the plate
        const Vec3 vPoint = after.v[0] + after.w[0].cross(0.5 * n);
        const Vec3 slip = after.v[static_cast<std::size_t>(plate)] - vPoint;
        const Vec3 slipT = slip - n.dot(slip) * n;
        CHECK(contacts[0].history.reaction.norm() > 0.0);
        CHECK(std::abs(after.v[static_cast<std::size_t>(plate)].x()) > 0.05);  // the plate was dragged along
        CHECK(slipT.norm() < 1e-12);
    }
}
