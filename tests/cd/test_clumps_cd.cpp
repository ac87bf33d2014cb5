// Clumps (rigid clusters of spheres) in contact dynamics: the rows with
// arms off the normal, against closed forms (a dimer's weight on the floor,
// rolling blocked by shape, the free symmetric top) and the step posed as a
// local problem.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include <Eigen/Eigenvalues>

#include "moreau/analysis/observables.hpp"
#include "moreau/cd/local_problem.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/clump_worlds.hpp"

using namespace moreau;

namespace {

using test::dimer;
using test::emptyWorld;

/// box_3d.ini's (or `builtin`'s) CD settings and walls on `world` in place
/// of its packing, solved to a natural-map error of 1e-12 (so that sums of
/// reactions are exact to about that).
Scene cdSceneWith(World world, std::vector<std::string> sets = {}, const std::string& builtin = "box_3d.ini") {
    sets.insert(sets.begin(), {"simulation.method=cd", "cd.criterion=natural", "cd.epsilon=1e-12",
                               "cd.max_iterations=5000"});
    return test::sceneAround(std::move(world), std::move(sets), builtin);
}

/// The walls' push on the grains (the reaction is the force on b, the wall).
Vec3 wallLoad(const Simulation& sim) {
    Vec3 f = Vec3::Zero();
    for (const Contact& c : sim.contacts())
        if (sim.world().isWall(c.b)) f -= c.history.reaction;
    return f;
}

/// Body i's world angular momentum R diag(I) Rᵀ ω.
Vec3 angularMomentum(const World& w, std::size_t i) {
    return w.q[i] * Vec3(w.principalInertia(i).cwiseProduct(w.q[i].conjugate() * w.w[i]));
}

}  // namespace

TEST_SUITE("clumps") {
    TEST_CASE("CD: a dimer at rest on the floor carries its weight on its two spheres and does not turn") {
        World w = emptyWorld(dimer(), Vec3(0, 0, -9.81));
        const double mass = 2.0;
        const Quat q0(Eigen::AngleAxisd(0.3, Vec3::UnitZ()));
        w.addClump(Vec3(5.5, 5.5, 0.5), 1, 1.0, q0, mass);
        Simulation sim(cdSceneWith(std::move(w)));
        for (int s = 0; s < 20; ++s) sim.step();
        CHECK(wallLoad(sim).z() == doctest::Approx(mass * 9.81).epsilon(1e-10));
        CHECK(std::abs(wallLoad(sim).x()) < 1e-9);
        CHECK(sim.world().v[0].norm() < 1e-10);
        CHECK(sim.world().w[0].norm() < 1e-10);
        CHECK(sim.world().q[0].angularDistance(q0) < 1e-10);
        // Each sphere carries half: the two rows are ClumpRows (arms off n).
        int touching = 0;
        for (const Contact& c : sim.contacts())
            if (c.history.reaction.norm() > 0.0) {
                ++touching;
                CHECK(-c.history.reaction.z() == doctest::Approx(0.5 * mass * 9.81).epsilon(1e-9));
            }
        CHECK(touching == 2);
    }

    TEST_CASE("CD: on a slope a sphere rolls at 5/7 g sin θ and a dimer along the fall line cannot roll") {
        // The floor with gravity tilted by θ about y: tan θ = 0.27 < μ = 0.3,
        // so a block sticks, and a sphere rolls without slipping (μ ≥ 2/7 tan θ).
        const double theta = 0.2635, g = 9.81, dt = 0.003;
        const Vec3 gravity(g * std::sin(theta), 0.0, -g * std::cos(theta));
        auto motion = [&](const ClumpShape& shape, const Quat& q) {
            World w = emptyWorld(shape, gravity);
            w.addClump(Vec3(3.0, 5.5, 0.5), 1, 1.0, q, shape.volume);
            Simulation sim(cdSceneWith(std::move(w)));
            for (int s = 0; s < 200; ++s) sim.step();
            const World& now = sim.world();
            return std::pair{now.v[0].x() / now.time, now.w[0]};
        };
        const auto [sphereAccel, sphereSpin] = motion(makeClumpShape({{Vec3::Zero(), 0.5}}, 3), Quat::Identity());
        CHECK(sphereAccel == doctest::Approx(5.0 / 7.0 * g * std::sin(theta)).epsilon(1e-9));
        CHECK(sphereSpin.y() == doctest::Approx(2.0 * sphereAccel * 200 * dt).epsilon(1e-9));  // v = ω r, r = 1/2
        const auto [dimerAccel, dimerSpin] = motion(dimer(), Quat::Identity());
        CHECK(std::abs(dimerAccel) < 1e-9);
        CHECK(dimerSpin.norm() < 1e-9);
        // Across the fall line it rolls on both spheres like one sphere
        // (its moment about its axis is 2/5 m r² too).
        const auto [acrossAccel, acrossSpin] =
            motion(dimer(), Quat(Eigen::AngleAxisd(0.5 * std::numbers::pi, Vec3::UnitZ())));
        CHECK(acrossAccel == doctest::Approx(5.0 / 7.0 * g * std::sin(theta)).epsilon(1e-9));
        CHECK(std::abs(acrossSpin.x()) < 1e-9);
    }

    TEST_CASE("CD: on a slope steeper than the friction angle a dimer slides at g (sin θ − μ cos θ)") {
        // tan θ = 0.5 > μ = 0.3: both spheres slide; the block law's sliding
        // branch on the coupled blocks, exact under constant acceleration.
        const double theta = std::atan(0.5), g = 9.81;
        World w = emptyWorld(dimer(), Vec3(g * std::sin(theta), 0.0, -g * std::cos(theta)));
        w.addClump(Vec3(3.0, 5.5, 0.5), 1, 1.0, Quat::Identity(), 2.0);
        Simulation sim(cdSceneWith(std::move(w)));
        for (int s = 0; s < 100; ++s) sim.step();
        const World& now = sim.world();
        CHECK(now.v[0].x() / now.time == doctest::Approx(g * (std::sin(theta) - 0.3 * std::cos(theta))).epsilon(1e-9));
        CHECK(now.w[0].norm() < 1e-9);
        CHECK(std::abs(now.v[0].z()) < 1e-12);
    }

    TEST_CASE("CD in 2D: a dimer of disks rests on the floor, sticks on a slope, slides on a steep one, and a disk rolls") {
        // clumps_2d.ini's walls (floor y = 0, μ = 0.4); gravity tilted by θ in
        // the plane. A disk rolls at 2/3 g sin θ (I = m r²/2).
        const ClumpShape disks = makeClumpShape({{Vec3(-0.5, 0, 0), 0.5}, {Vec3(0.5, 0, 0), 0.5}}, 2);
        const ClumpShape disk = makeClumpShape({{Vec3::Zero(), 0.5}}, 2);
        const double g = 9.81, mu = 0.4;
        auto run = [&](const ClumpShape& shape, double theta) {
            World w = emptyWorld(shape, Vec3(g * std::sin(theta), -g * std::cos(theta), 0.0), 2);
            w.addClump(Vec3(10.0, 0.5, 0.0), 1, 1.0, Quat::Identity(), shape.volume);
            Simulation sim(cdSceneWith(std::move(w), {}, "clumps_2d.ini"));
            for (int s = 0; s < 100; ++s) sim.step();
            Vec3 load = wallLoad(sim);
            return std::tuple{sim.world().v[0].x() / sim.world().time, sim.world().w[0].z(), load};
        };
        const auto [restA, restW, restLoad] = run(disks, 0.0);
        CHECK(restLoad.y() == doctest::Approx(disks.volume * g).epsilon(1e-10));
        CHECK(std::abs(restA) < 1e-12);
        CHECK(std::abs(restW) < 1e-12);
        const double gentle = std::atan(0.3), steep = std::atan(0.6);
        const auto [stickA, stickW, stickLoad] = run(disks, gentle);
        CHECK(std::abs(stickA) < 1e-9);
        CHECK(std::abs(stickW) < 1e-9);
        const auto [slideA, slideW, slideLoad] = run(disks, steep);
        CHECK(slideA == doctest::Approx(g * (std::sin(steep) - mu * std::cos(steep))).epsilon(1e-9));
        CHECK(std::abs(slideW) < 1e-9);
        const auto [rollA, rollW, rollLoad] = run(disk, gentle);
        CHECK(rollA == doctest::Approx(2.0 / 3.0 * g * std::sin(gentle)).epsilon(1e-9));
        CHECK(rollW < 0.0);  // rolling towards +x on a floor below: clockwise
    }

    TEST_CASE("CD: the clump and polygon rows' AVX2 kernel (cd.simd) gives the scalar rows' bits") {
        // Pours whose rows open, stick and slide; 2D bodies take the masked
        // kicks, the sheared and shrinking periodic cell adds image velocities.
        struct Case {
            const char* scene;
            std::vector<std::string> sets;
            int steps;
        };
        const std::vector<Case> cases = {
            {"clumps_3d.ini", {"simulation.method=cd", "random.count=150", "random.box_max=10 10 5"}, 250},
            {"clumps_2d.ini", {"simulation.method=cd"}, 400},
            {"polygons_2d.ini", {}, 600},
            {"triaxial_3d.ini",
             {"grains.shape=clump", "clump.spheres=0.2 0 0 0.35; -0.2 0 0 0.35", "random.count=150",
              "periodic.stress_axes=", "periodic.strain_rate=-0.004 -0.004 -0.004", "periodic.shear_rate=0.002"},
             300},
        };
        const bool avx2 = __builtin_cpu_supports("avx2");
        for (const Case& c : cases) {
            CAPTURE(c.scene);
            std::uint64_t hash[2] = {};
            std::size_t contacts = 0;
            for (int v = 0; v < 2; ++v) {
                std::vector<std::string> sets = c.sets;
                sets.push_back(v == 0 ? "cd.simd=off" : "cd.simd=auto");
                Simulation sim(loadBuiltinScene(c.scene, sets));
                for (int s = 0; s < c.steps; ++s) sim.step();
                CHECK(std::string(sim.cd().rowIsa()) == (v == 1 && avx2 ? "avx2" : "none"));
                hash[v] = stateHash(sim.world());
                contacts = sim.contacts().size();
            }
            CHECK(contacts > 10);
            CHECK(hash[1] == hash[0]);
        }
    }

    TEST_CASE("CD: a step of a clump pour posed as a local problem has the solver's blocks and error") {
        // The ClumpRows' blocks against the local problem assembled body by
        // body (CdSolver::localProblem, what FCLIB dumps write), and the
        // solver's natural error against the problem's own.
        Scene scene = loadBuiltinScene("clumps_3d.ini", {"simulation.method=cd", "random.count=60", "output.vtk_every=0",
                                                         "cd.criterion=natural", "cd.epsilon=1e-9"});
        Simulation sim(std::move(scene));
        for (int s = 0; s < 400; ++s) sim.step();
        LocalProblemCapture capture;
        sim.cd().setStepObserver(&capture);
        sim.step();
        sim.cd().setStepObserver(nullptr);
        const LocalProblem& p = capture.problem;
        REQUIRE(p.contacts() > 40);
        // W symmetric positive semi-definite (dense: a few hundred rows).
        const std::size_t n = 3 * p.contacts();
        Eigen::MatrixXd W = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
        for (std::size_t i = 0; i < p.contacts(); ++i)
            for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k)
                W.block<3, 3>(static_cast<Eigen::Index>(3 * i), 3 * p.col[k]) = p.block[k];
        CHECK((W - W.transpose()).norm() < 1e-12 * W.norm());
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(W);
        CHECK(es.eigenvalues().minCoeff() > -1e-12 * es.eigenvalues().maxCoeff());
        CHECK(naturalError(p, capture.reactions) <= 1e-9);
        CHECK(naturalError(p, capture.reactions) == doctest::Approx(sim.solveStats().error).epsilon(1e-6));
    }

    TEST_CASE("CD: a free symmetric top keeps its angular momentum and its axis precesses about it at |L|/A") {
        World w = emptyWorld(dimer(), Vec3::Zero());
        w.addClump(Vec3(5.5, 5.5, 5.5), 1, 1.0, Quat::Identity(), 1.0);
        w.w[0] = Vec3(0.4, 1.5, 0.8);
        const Vec3 L = angularMomentum(w, 0);
        const Vec3 axis0 = w.q[0] * Vec3::UnitX();  // the dimer's axis: its smallest moment, C
        const double A = w.principalInertia(0)[1];
        Simulation sim(cdSceneWith(std::move(w)));
        const int steps = 1000;
        for (int s = 0; s < steps; ++s) sim.step();
        const World& now = sim.world();
        CHECK((angularMomentum(now, 0) - L).norm() < 1e-13 * L.norm());
        const double angle = L.norm() / A * now.time;
        const Vec3 expected = Eigen::AngleAxisd(angle, L.normalized()) * axis0;
        CHECK((now.q[0] * Vec3::UnitX() - expected).norm() < 1e-12);  // the drift is the closed form
        CHECK(now.x[0].isApprox(Vec3(5.5, 5.5, 5.5), 1e-15));
    }

    TEST_CASE("CD: two clumps knocking together keep their momentum, and their angular momentum up to the gaps' moments") {
        // No walls within reach, no gravity: a tetrahedral cluster flies into
        // a dimer off its centre. Each impulse acts on a at its contact point
        // and on b at a's point + gap n, so the step changes the total angular
        // momentum by exactly Σ Δt gap n × R (zero for touching contacts).
        const ClumpShape tetra = makeClumpShape({{Vec3(0.3, 0.3, 0.3), 0.4}, {Vec3(-0.3, -0.3, 0.3), 0.4},
                                                 {Vec3(-0.3, 0.3, -0.3), 0.4}, {Vec3(0.3, -0.3, -0.3), 0.4}},
                                                3);
        World w = emptyWorld(dimer(), Vec3::Zero());
        w.clumpShapes.push_back(tetra);
        w.addClump(Vec3(5.0, 5.5, 5.5), 1, 1.0, Quat(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized())), 1.0);
        w.addClump(Vec3(7.2, 5.8, 5.3), 2, 1.0, Quat(Eigen::AngleAxisd(1.1, Vec3(3, -1, 2).normalized())), 1.7);
        w.v[1] = Vec3(-2.0, 0.1, 0.0);
        w.w[1] = Vec3(0.0, 0.0, 3.0);
        auto momenta = [](const World& wd) {
            Vec3 p = Vec3::Zero(), l = Vec3::Zero();
            for (std::size_t i = 0; i < 2; ++i) {
                const double m = 1.0 / wd.invMass[i].x();
                p += m * wd.v[i];
                l += m * wd.x[i].cross(wd.v[i]) + angularMomentum(wd, i);
            }
            return std::pair{p, l};
        };
        const auto [p0, l0] = momenta(w);
        Simulation sim(cdSceneWith(std::move(w)));
        double touched = 0.0;
        Vec3 moments = Vec3::Zero();
        for (int s = 0; s < 200; ++s) {
            sim.step();
            for (const Contact& c : sim.contacts()) {
                REQUIRE(!sim.world().isWall(c.b));
                touched = std::max(touched, c.history.reaction.norm());
                moments += sim.scene().simulation.dt * c.gap * c.n.cross(c.history.reaction);
            }
        }
        REQUIRE(touched > 1.0);  // they met
        const auto [p1, l1] = momenta(sim.world());
        CHECK((p1 - p0).norm() < 1e-12 * p0.norm());
        CHECK((l1 - l0 - moments).norm() < 1e-12 * l0.norm());
        CHECK(moments.norm() < 1e-2 * l0.norm());
    }
}
