/// The field's error (natural map with De Saxcé's velocity), the natural
/// criterion, the proximal term, the one-contact solver and the local
/// problems (docs/convergence.md), against cases whose solution is known.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/natural_map.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/io/fclib.hpp"
#include "support/cd_steps.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

/// A jittered 5×5×4 lattice of unit spheres on a frictional floor, thrown
/// with random velocities so that its contacts open, stick and slide.
World thrownLattice() { return test::cubicLatticeOnFloor({5, 5, 4}, 0.2); }

/// A random symmetric positive definite 3×3 matrix.
Mat3 randomSpd(std::mt19937_64& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Mat3 a;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a(i, j) = u(gen);
    return a * a.transpose() + 0.2 * Mat3::Identity();
}

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("the natural map vanishes on Coulomb's law and measures its violation") {
        const Vec3 n = Vec3::UnitZ();
        // Separation, sticking inside the cone, sliding on its surface.
        CHECK(naturalMapResidual2(Vec3::Zero(), Vec3(0.3, 0.1, 0.5), n, 0.5) == 0.0);
        CHECK(naturalMapResidual2(Vec3(0.1, -0.2, 1.0), Vec3::Zero(), n, 0.5) == 0.0);
        // Sliding: |r_t| = μ r_n, u_n = 0, u_t opposite r_t.
        CHECK(naturalMapResidual2(Vec3(-0.3, -0.4, 1.0), Vec3(0.6, 0.8, 0.0), n, 0.5) == Approx(0.0).epsilon(1e-15));
        // A pushing contact that separates: r = (0, 0, 1), u_n = 0.5: r − ũ lies
        // in the cone, so e = ũ and ‖e‖² = 0.25.
        CHECK(naturalMapResidual2(Vec3(0, 0, 1.0), Vec3(0, 0, 0.5), n, 0.5) == Approx(0.25));
        // Sticking impulse with a slipping velocity: ũ = (0.1, 0, μ 0.1).
        CHECK(naturalMapResidual2(Vec3(0, 0, 1.0), Vec3(0.1, 0, 0), n, 0.5) > 1e-4);
        // The scale: max(‖q‖, ‖r‖, ‖u‖), the absolute error where all vanish.
        CHECK(naturalError(4.0, 1.0, 4.0, 0.25) == Approx(1.0));
        CHECK(naturalError(4.0, 0.0, 0.0, 0.0) == Approx(2.0));
    }

    TEST_CASE("the one-contact solver gives analytic sliding, and the law holds for random blocks") {
        // Decoupled W = diag(a, b, b): r_n = −q_n/a, sticking r_t = −q_t/b unless
        // that leaves the cone, then r_t = −μ r_n q_t/|q_t|.
        const Mat3 W = Vec3(2.0, 5.0, 5.0).asDiagonal();
        const Vec3 stick = solveOneContact(W, Vec3(-1.0, 0.5, 0.0), 0.5);
        CHECK(stick.x() == Approx(0.5));
        CHECK(stick.y() == Approx(-0.1));
        const Vec3 slide = solveOneContact(W, Vec3(-1.0, 3.0, 4.0), 0.5);
        CHECK(slide.x() == Approx(0.5));
        CHECK(slide.y() == Approx(-0.25 * 0.6));
        CHECK(slide.z() == Approx(-0.25 * 0.8));
        CHECK(solveOneContact(W, Vec3(0.2, 3.0, 4.0), 0.5) == Vec3::Zero());
        // Coupled blocks: the returned r satisfies Coulomb's law for u = W r + q.
        std::mt19937_64 gen(5);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        double worst = 0.0;
        for (int k = 0; k < 300; ++k) {
            const Mat3 A = randomSpd(gen);
            const Vec3 q(u(gen), u(gen), u(gen));
            const double mu = 0.1 + 0.9 * (u(gen) + 1.0) / 2.0;
            const Vec3 r = solveOneContact(A, q, mu);
            worst = std::max(worst, std::sqrt(naturalMapResidual2(r, A * r + q, Vec3::UnitX(), mu)) / q.norm());
        }
        CHECK(worst < 1e-9);
    }

    TEST_CASE("the engine's error equals the error of its step posed as a local problem") {
        CdSettings cd;
        cd.criterion = Criterion::Fixed;
        cd.iterations = 30;
        cd.measureError = true;
        Simulation sim = test::cdSimulation(thrownLattice(), 0.01, cd);
        for (int s = 0; s < 5; ++s) sim.advance();
        LocalProblemCapture capture;
        sim.cd().setStepObserver(&capture);
        const CdStepStats stats = sim.advance();
        const LocalProblem& p = capture.problem;
        REQUIRE(p.contacts() > 100);
        REQUIRE(std::isfinite(stats.error));
        CHECK(stats.error > 1e-8);  // 30 sweeps do not converge: the check is not of zeros
        // Matrix-free (the sweeps' velocities) and assembled (W = H^T M⁻¹ H) agree.
        CHECK(naturalError(p, capture.reactions) == Approx(stats.error).epsilon(1e-9));
        // W is symmetric, its diagonal blocks positive definite.
        double asym = 0.0;
        for (std::size_t i = 0; i < p.contacts(); ++i)
            for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k) {
                const auto j = static_cast<std::size_t>(p.col[k]);
                for (std::size_t l = p.rowStart[j]; l < p.rowStart[j + 1]; ++l)
                    if (static_cast<std::size_t>(p.col[l]) == i)
                        asym = std::max(asym, (p.block[k] - p.block[l].transpose()).cwiseAbs().maxCoeff());
                if (j == i) CHECK(p.block[k].determinant() > 0.0);
            }
        CHECK(asym < 1e-12);
        // The general solver reaches the same kind of answer from zero.
        CdSettings tight;
        tight.criterion = Criterion::Natural;
        tight.epsilon = 1e-8;
        tight.order = SweepOrder::Fixed;
        std::vector<double> r;
        const LocalSolveResult res = solveLocal(p, r, tight, 1);
        CHECK(res.converged);
        CHECK(res.error <= 1e-8);
        CHECK(naturalError(p, r) == Approx(res.error));
    }

    TEST_CASE("the natural criterion stops each step at its epsilon, with and without the proximal term") {
        for (Proximal prox : {Proximal::Off, Proximal::On}) {
            CAPTURE(static_cast<int>(prox));
            CdSettings cd;
            cd.criterion = Criterion::Natural;
            cd.epsilon = 1e-7;
            cd.checkEvery = 5;
            cd.proximal = prox;
            Simulation sim = test::cdSimulation(thrownLattice(), 0.01, cd);
            for (int s = 0; s < 10; ++s) {
                const CdStepStats st = sim.advance();
                CHECK(st.converged);
                CHECK(st.error <= 1e-7);
                CHECK(st.iterations % 5 == 0);
                if (prox == Proximal::On) CHECK(st.proximalFrom == 0);
            }
        }
    }

    TEST_CASE("a parallel (jacobi) update diverges where the Gauss-Seidel sweeps converge (CD section 2.5)") {
        // A face-centred pyramid of 30 unit-mass spheres (4 x 4 base) on a floor,
        // each sphere touching up to 12 others: one step from rest under gravity.
        auto pyramid = [] {
            World w;
            w.dimension = 3;
            w.muGrain = 0.3;
            w.gravity = Vec3(0, 0, -9.81);
            const double R = 0.5;
            std::vector<GrainSpec> grains;
            for (int j = 0; j < 4; ++j)
                for (int i = 0; i < 4 - j; ++i)
                    for (int k = 0; k < 4 - j; ++k)
                        grains.push_back({Vec3(j * R + 2 * R * i, j * R + 2 * R * k, R + j * std::sqrt(2.0) * R), R});
            addGrains(w, grains, GrainShape::Sphere, 1.0, 1.0);
            test::addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 0.5);
            return w;
        };
        auto largestImpulse = [&](SweepOrder order) {
            CdSettings cd;
            cd.order = order;
            cd.iterations = 300;
            Simulation sim = test::cdSimulation(pyramid(), 0.005, cd);
            try {
                sim.advance();
            } catch (const DivergenceError&) {
                return std::numeric_limits<double>::infinity();
            }
            double most = 0.0;
            for (const Contact& c : sim.contacts()) most = std::max(most, c.history.reaction.norm());
            return most;
        };
        const double weight = 30 * 9.81;  // the floor carries it all
        CHECK(largestImpulse(SweepOrder::Fixed) < weight);
        CHECK(largestImpulse(SweepOrder::RandomSweep) < weight);
        CHECK(largestImpulse(SweepOrder::Jacobi) > 1e6 * weight);
    }

    TEST_CASE("FC3D text problems are read, and bad ones refused naming the file") {
        test::TempDir tmp;
        const std::string path = (tmp.path / "two.fc3d").string();
        {
            std::ofstream out(path);
            out << "FC3D 1 # two contacts\n2\n0.5 0.3\n-1 0 0  -1 0.5 0\nW triplet 7\n"
                << "0 0 2\n1 1 5\n2 2 5\n3 3 2\n4 4 5\n5 5 5\n0 3 0.5\n";
        }
        const std::string asym = (tmp.path / "asym.fc3d").string();
        {
            std::ofstream out(asym);
            out << "FC3D 1\n2\n0.5 0.3\n-1 0 0 -1 0.5 0\nW triplet 3\n0 0 2\n1 1 5\n2 2 5\n";
        }
        const LocalProblem p = readLocalProblem(path);
        CHECK(p.contacts() == 2);
        CHECK(p.block.size() == 3);  // (0,0), (0,1), (1,1)
        CHECK(p.block[1](0, 0) == 0.5);
        CHECK_THROWS_WITH_AS(readLocalProblem(asym), doctest::Contains("asym.fc3d: W has no diagonal block for contact 1"),
                             InputError);
        CHECK_THROWS_AS(readLocalProblem((tmp.path / "missing").string()), InputError);
    }

    TEST_CASE("FCLIB problems and solutions read back as written") {
        if (!haveFclib()) return;
        CdSettings cd;
        cd.criterion = Criterion::Fixed;
        cd.iterations = 20;
        Simulation sim = test::cdSimulation(thrownLattice(), 0.01, cd);
        LocalProblemCapture capture;
        sim.cd().setStepObserver(&capture);
        sim.advance();
        const LocalProblem& p = capture.problem;
        const std::vector<double>& r = capture.reactions;
        test::TempDir tmp;
        const std::string file = (tmp.path / "step.hdf5").string();
        writeFclib(p, file, &r);
        const LocalProblem back = readLocalProblem(file);
        CHECK(back.mu == p.mu);
        CHECK(back.q == p.q);
        CHECK(back.rowStart == p.rowStart);
        CHECK(back.col == p.col);
        bool same = back.block.size() == p.block.size();
        for (std::size_t k = 0; same && k < p.block.size(); ++k) same = back.block[k] == p.block[k];
        CHECK(same);
        CHECK(back.solution == r);
        CHECK(back.title == "Moreau contact dynamics step");
    }
}
