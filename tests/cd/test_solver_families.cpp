/// The local problem's solver families (cd.solver, src/cd/global_solvers.cpp):
/// the Alart–Curnier semi-smooth Newton method against the exact one-contact
/// solver and on a step with open, sticking and sliding contacts; APGD against
/// the analytic solution of the cone complementarity problem it solves.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/natural_map.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

/// One contact: W, q, μ.
LocalProblem oneContact(const Mat3& W, const Vec3& q, double mu) {
    LocalProblem p;
    p.mu = {mu};
    p.q = {q.x(), q.y(), q.z()};
    p.rowStart = {0, 1};
    p.col = {0};
    p.block = {W};
    return p;
}

/// A thrown 5×5×4 lattice's CD step posed as a local problem (contacts
/// open, stick and slide; test_natural_error.cpp's setup).
LocalProblem thrownLatticeStep() {
    const World w = test::cubicLatticeOnFloor({5, 5, 4}, 0.2);
    CdSettings cd;
    cd.iterations = 30;
    Simulation sim = test::cdSimulation(w, 0.01, cd);
    for (int s = 0; s < 5; ++s) sim.advance();
    LocalProblemCapture capture;
    sim.cd().setStepObserver(&capture);
    sim.advance();
    return capture.problem;
}

CdSettings natural(CdSolverFamily family, double epsilon, int maxIterations) {
    CdSettings s;
    s.solver = family;
    s.criterion = Criterion::Natural;
    s.epsilon = epsilon;
    s.maxIterations = maxIterations;
    s.order = SweepOrder::Fixed;
    return s;
}

/// Per contact: open (r = 0), sticking (r inside the cone) or sliding (on its surface).
std::array<int, 3> statuses(const LocalProblem& p, const std::vector<double>& r) {
    std::array<int, 3> n{};
    for (std::size_t i = 0; i < p.contacts(); ++i) {
        const double rn = r[3 * i], rt = std::hypot(r[3 * i + 1], r[3 * i + 2]);
        n[rn <= 1e-14 ? 0 : rt < p.mu[i] * rn * (1.0 - 1e-9) ? 1 : 2] += 1;
    }
    return n;
}

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("cd.solver = newton: one contact, as the exact one-contact solver, for random blocks") {
        std::mt19937_64 gen(7);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        int sliding = 0;
        for (int k = 0; k < 200; ++k) {
            Mat3 a;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) a(i, j) = u(gen);
            const Mat3 W = a * a.transpose() + 0.2 * Mat3::Identity();
            const Vec3 q(u(gen), u(gen), u(gen));
            const double mu = 0.1 + 0.9 * (u(gen) + 1.0) / 2.0;
            const LocalProblem p = oneContact(W, q, mu);
            std::vector<double> r;
            const LocalSolveResult res = solveNewtonAC(p, r, natural(CdSolverFamily::Newton, 1e-12, 200));
            const Vec3 exact = solveOneContact(W, q, mu);
            INFO(k);
            CHECK(res.converged);
            CHECK(naturalError(p, r) <= 1e-12);
            CHECK((Vec3(r[0], r[1], r[2]) - exact).norm() <= 1e-9 * (1.0 + exact.norm()));
            sliding += statuses(p, r)[2];
        }
        CHECK(sliding > 40);  // the sliding case, the one with the line search's work, is among them
    }

    TEST_CASE("cd.solver = newton: a step with open, sticking and sliding contacts, to 1e-10 in tens of iterations") {
        const LocalProblem p = thrownLatticeStep();
        REQUIRE(p.contacts() > 100);
        std::vector<double> r;
        const LocalSolveResult res = solveNewtonAC(p, r, natural(CdSolverFamily::Newton, 1e-10, 200));
        CHECK(res.converged);
        CHECK(res.sweeps < 60);
        CHECK(naturalError(p, r) == Approx(res.error).epsilon(1e-9));
        CHECK(naturalError(p, r) <= 1e-10);
        const auto s = statuses(p, r);
        INFO(s[0], " open, ", s[1], " sticking, ", s[2], " sliding");
        CHECK(s[0] > 0);
        CHECK(s[1] > 0);
        CHECK(s[2] > 0);
        // Gauss–Seidel converges to the same tolerance on it (same problem, other family).
        std::vector<double> rg;
        const LocalSolveResult gs = solveLocalProblem(p, rg, natural(CdSolverFamily::GaussSeidel, 1e-10, 100000), 1);
        CHECK(gs.converged);
        CHECK(gs.sweeps > res.sweeps);
    }

    TEST_CASE("cd.solver = apgd solves De Saxce's relaxation: analytic sliding and sticking contacts") {
        // W = w I: the relaxed problem's r is the projection of −q/w onto the
        // cone; sliding, r_n = (a + μ|b|)/(1 + μ²) with (a, b) = −q/w, and
        // the contact separates, u_n = w (r_n − a) > 0, where Coulomb's has
        // r_n = a and u_n = 0.
        const double w = 2.0, mu = 0.4;
        {
            const Vec3 q(-1.0, 3.0, 0.0);  // a = 0.5, b = −1.5: |b| > μ a, sliding
            const LocalProblem p = oneContact(w * Mat3::Identity(), q, mu);
            std::vector<double> r;
            const LocalSolveResult res = solveApgd(p, r, natural(CdSolverFamily::Apgd, 1e-12, 5000));
            const double a = 0.5, b = 1.5, rn = (a + mu * b) / (1.0 + mu * mu);
            CHECK(res.converged);
            CHECK(res.relaxedError <= 1e-12);
            CHECK(r[0] == Approx(rn).epsilon(1e-10));
            CHECK(r[1] == Approx(-mu * rn).epsilon(1e-10));
            CHECK(std::abs(r[2]) <= 1e-12);
            CHECK(w * r[0] + q.x() == Approx(w * (rn - a)).epsilon(1e-9));  // u_n > 0: it separates while sliding
            CHECK(res.error > 1e-3);  // so Coulomb's law (the Siconos error) does not hold
            CHECK(res.error == Approx(naturalError(p, r)).epsilon(1e-12));
        }
        {
            const Vec3 q(-1.0, 0.1, -0.05);  // inside the cone: sticking, the relaxation is Coulomb's law
            const LocalProblem p = oneContact(w * Mat3::Identity(), q, mu);
            std::vector<double> r;
            const LocalSolveResult res = solveApgd(p, r, natural(CdSolverFamily::Apgd, 1e-12, 5000));
            CHECK(res.converged);
            for (int k = 0; k < 3; ++k) CHECK(r[static_cast<std::size_t>(k)] == Approx(-q[k] / w).epsilon(1e-10));
            CHECK(res.error <= 1e-10);
        }
    }

    TEST_CASE("cd.solver = apgd on a step with sliding contacts: the relaxed problem's error falls, Coulomb's stays") {
        const LocalProblem p = thrownLatticeStep();
        std::vector<double> r;
        const LocalSolveResult res = solveApgd(p, r, natural(CdSolverFamily::Apgd, 1e-6, 20000));
        CHECK(res.converged);
        CHECK(res.relaxedError <= 1e-6);
        // r in the cones, and the relaxed natural map recomputed here.
        const std::vector<double> u = p.velocity(r);
        double sum = 0.0, outside = 0.0;
        for (std::size_t i = 0; i < p.contacts(); ++i) {
            const Vec3 ri(r[3 * i], r[3 * i + 1], r[3 * i + 2]), ui(u[3 * i], u[3 * i + 1], u[3 * i + 2]);
            outside = std::max(outside, std::hypot(ri.y(), ri.z()) - p.mu[i] * ri.x());
            sum += (ri - projectOnCone(ri - ui, Vec3::UnitX(), p.mu[i])).squaredNorm();
        }
        CHECK(outside <= 1e-12);
        double q2 = 0.0, r2 = 0.0, u2 = 0.0;
        for (std::size_t k = 0; k < r.size(); ++k) q2 += p.q[k] * p.q[k], r2 += r[k] * r[k], u2 += u[k] * u[k];
        CHECK(naturalError(sum, q2, r2, u2) == Approx(res.relaxedError).epsilon(1e-6));
        CHECK(res.error > 10.0 * res.relaxedError);  // sliding contacts: the relaxation is not Coulomb's law
    }

    TEST_CASE("cd.solver = newton and apgd step the engine: the impulses reach the bodies, as the error says") {
        // The engine's error from its bodies' velocities (matrix-free) equals
        // the error of the step's local problem at the reactions it stored.
        struct Watch final : CdStepObserver {
            LocalProblem problem;
            double bodiesError = 0.0;
            std::vector<double> reactions;
            void posed(const CdSolver& s) override { problem = s.localProblem(); }
            void solved(const CdSolver& s) override {
                reactions = s.frameReactions();
                bodiesError = s.naturalError();
            }
        };
        for (const CdSolverFamily family : {CdSolverFamily::Newton, CdSolverFamily::Apgd}) {
            INFO(lawName(kCdSolverNames, family));
            World w = test::cubicLatticeOnFloor({4, 4, 3}, 0.0);
            CdSettings cd = natural(family, family == CdSolverFamily::Newton ? 1e-10 : 1e-6, 20000);
            cd.measureError = true;
            Simulation sim = test::cdSimulation(w, 0.01, cd);
            Watch watch;
            sim.cd().setStepObserver(&watch);
            CdStepStats stats;
            for (int s = 0; s < 20; ++s) stats = sim.advance();
            REQUIRE(watch.problem.contacts() > 40);
            CHECK(stats.converged);
            CHECK(stats.iterations > 0);
            CHECK(watch.bodiesError == Approx(naturalError(watch.problem, watch.reactions)).epsilon(1e-6));
            CHECK(stats.error == Approx(watch.bodiesError).epsilon(1e-6));
            if (family == CdSolverFamily::Newton) CHECK(stats.error <= 1e-10);
            // A bed settling on the floor: the impulses hold it up (free fall
            // over these steps reaches 2 m/s). Coulomb's law (newton) leaves
            // it nearly at rest; the relaxation (apgd) lets sliding contacts
            // separate at mu |u_t|, so the jittered bed dilates a little.
            double vmax = 0.0;
            for (std::size_t i = 0; i < sim.world().numGrains; ++i) vmax = std::max(vmax, sim.world().v[i].norm());
            CHECK(vmax < (family == CdSolverFamily::Newton ? 0.05 : 0.3));
        }
    }

    TEST_CASE("the other families refuse the sweeps' own criteria, naming the key") {
        CdSettings s;
        s.solver = CdSolverFamily::Newton;
        s.criterion = Criterion::Local;
        CHECK_THROWS_WITH_AS(CdSolver{s}, doctest::Contains("cd.criterion"), InputError);
        s.criterion = Criterion::Natural;
        CHECK_NOTHROW(CdSolver{s});
    }
}
