// Clumps (rigid clusters of spheres) in MD: their contacts, one per pair of
// touching components, and their motion on a floor against closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "moreau/analysis/observables.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "support/clump_worlds.hpp"
#include "support/input_error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/guards.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

using test::dimer;
using test::emptyWorld;

/// box_3d.ini's MD settings (linear spring–dashpot, Cundall's spring) on
/// `world` in place of its packing: `world` gets the scene's walls.
Scene sceneWith(World world, std::vector<std::string> sets = {}) {
    sets.emplace(sets.begin(), "simulation.method=md");
    return test::sceneAround(std::move(world), std::move(sets), "box_3d.ini");
}

/// The walls' push on the grains along +z.
double floorLoad(const Simulation& sim) {
    double f = 0.0;
    for (const Contact& c : sim.contacts())
        if (sim.world().isWall(c.b)) f -= c.history.reaction.z();  // the reaction is the force on b
    return f;
}

}  // namespace

TEST_SUITE("clumps") {
    TEST_CASE("a clump pair's contacts: one per touching pair of components, keyed by them, none inside a clump") {
        World w = emptyWorld(dimer(), Vec3::Zero());
        // Two dimers crossing like an X, one above the other, and a third far away.
        w.addClump(Vec3(0, 0, 0), 1, 1.0, Quat::Identity(), 1.0);
        w.addClump(Vec3(0.5, 0.0, 0.95), 1, 1.0, Quat(Eigen::AngleAxisd(0.5 * std::numbers::pi, Vec3::UnitZ())), 1.0);
        w.addClump(Vec3(10, 0, 0), 1, 1.0, Quat::Identity(), 1.0);
        std::vector<Contact> brute, listed;
        detectBruteForce(w, 0.1, brute);
        VerletListDetector detector(0.2);
        detector.detect(w, 0.1, listed);
        REQUIRE(brute.size() == listed.size());
        for (std::size_t k = 0; k < brute.size(); ++k) {
            CHECK(brute[k].key == listed[k].key);
            CHECK(brute[k].gap == listed[k].gap);
            if (k > 0) CHECK(brute[k - 1].key < brute[k].key);
        }
        // Body 1's components lie at (0.5, ∓0.5, 0.95), each at a gap of
        // |(0, 0.5, 0.95)| − 1 = 0.0735 from body 0's second component (at
        // (0.5, 0, 0)), within the margin; its first (at (−0.5, 0, 0)) is
        // 0.47 away from both.
        REQUIRE(brute.size() == 2);
        for (const Contact& c : brute) {
            CHECK(c.a == 0);
            CHECK(c.b == 1);
            CHECK((keyFeature(c.key) >> 4) == 1u);  // body 0's second sphere
        }
        CHECK(brute[0].gap == doctest::Approx(std::hypot(0.5, 0.95) - 1.0).epsilon(1e-12));
        CHECK(brute[1].gap == doctest::Approx(std::hypot(0.5, 0.95) - 1.0).epsilon(1e-12));
        // The lever arms end on the contact point, from either side.
        for (const Contact& c : brute) {
            const Vec3 pa = w.x[0] + leverArm(w, c, c.a);
            const Vec3 pb = w.x[1] + leverArm(w, c, c.b);
            CHECK((pb - pa - c.gap * c.n).norm() < 1e-14);
        }
        // Geometry refreshed by key after a move: the same component pair.
        w.x[1].z() += 0.02;
        std::vector<Contact> moved = brute;
        refreshContactGeometry(w, moved);
        CHECK(moved[0].gap == doctest::Approx(std::hypot(0.5, 0.97) - 1.0).epsilon(1e-12));
    }

    TEST_CASE("a dimer at rest on the floor: its floor load is its weight, it does not turn") {
        World w = emptyWorld(dimer(), Vec3(0, 0, -9.81));
        const double volume = 2.0 * 4.0 / 3.0 * std::numbers::pi * 0.125;
        w.addClump(Vec3(5.5, 5.5, 0.5), 1, 1.0, Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ())), volume);
        Simulation sim(sceneWith(std::move(w)));
        for (int s = 0; s < 300; ++s) sim.step();
        const World& now = sim.world();
        // The linear dashpot damps the drop in ~0.1 s; after 0.9 s the
        // dimer sits on both spheres.
        CHECK(floorLoad(sim) == doctest::Approx(volume * 9.81).epsilon(1e-4));
        CHECK(now.v[0].norm() < 1e-5);
        CHECK(now.w[0].norm() < 1e-5);
        CHECK(now.q[0].angularDistance(Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ()))) < 1e-6);
        int touching = 0;
        for (const Contact& c : sim.contacts()) touching += c.gap < 0.0 ? 1 : 0;
        CHECK(touching == 2);
    }

    TEST_CASE("on a slope a sphere rolls at 5/7 g sin θ, and a dimer along the fall line cannot roll and stays") {
        // The slope is the floor with gravity tilted by θ about y: tan θ =
        // 0.27 < μ = 0.3 (box_3d's), so a block would stick; a sphere rolls
        // without slipping (it needs μ ≥ 2/7 tan θ).
        const double theta = 0.2635, g = 9.81, T = 0.6;
        const Vec3 gravity(g * std::sin(theta), 0.0, -g * std::cos(theta));
        const ClumpShape sphereShape = makeClumpShape({{Vec3::Zero(), 0.5}}, 3);
        auto speedAfter = [&](const ClumpShape& shape, const Quat& q) {
            World w = emptyWorld(shape, gravity);
            w.addClump(Vec3(3.0, 5.5, 0.5), 1, 1.0, q, shape.volume);
            Simulation sim(sceneWith(std::move(w)));
            // Settle on the floor first (0.15 s), then time the roll.
            for (int s = 0; s < 50; ++s) sim.step();
            const double v0 = sim.world().v[0].x(), t0 = sim.world().time;
            for (int s = 0; s < static_cast<int>(std::lround(T / 0.003)); ++s) sim.step();
            return std::pair{(sim.world().v[0].x() - v0) / (sim.world().time - t0), sim.world().w[0]};
        };
        const auto [sphereAccel, sphereSpin] = speedAfter(sphereShape, Quat::Identity());
        CHECK(sphereAccel == doctest::Approx(5.0 / 7.0 * g * std::sin(theta)).epsilon(0.01));
        CHECK(sphereSpin.y() > 0.0);
        // The dimer lies along x, the fall line: to roll about y it would
        // lift a sphere; it sticks.
        const auto [dimerAccel, dimerSpin] = speedAfter(dimer(), Quat::Identity());
        CHECK(std::abs(dimerAccel) < 1e-3 * g * std::sin(theta));
        CHECK(dimerSpin.norm() < 1e-3);
        // Turned across the fall line, it rolls on both spheres like a
        // sphere: its moment of inertia about its axis is 2/5 m r² too.
        const auto [acrossAccel, acrossSpin] =
            speedAfter(dimer(), Quat(Eigen::AngleAxisd(0.5 * std::numbers::pi, Vec3::UnitZ())));
        CHECK(acrossAccel == doctest::Approx(5.0 / 7.0 * g * std::sin(theta)).epsilon(0.01));
        CHECK(std::abs(acrossSpin.x()) < 1e-6);
        CHECK(std::abs(acrossSpin.z()) < 1e-6);
    }

    TEST_CASE("MD schemes, pipelines and laws that cannot step clumps are refused with the key") {
        World w = emptyWorld(dimer(), Vec3(0, 0, -9.81));
        w.addClump(Vec3(5.5, 5.5, 0.5), 1, 1.0, Quat::Identity(), 1.0);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"md.integrator=rk"})),
                             doctest::Contains("key 'md.integrator': 'rk' cannot run clumps (allowed: cd)"), InputError);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"md.pipeline=fused"})),
                             doctest::Contains("clumps take the staged pipeline"), InputError);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"md.rolling=ai-c", "md.mu_roll=0.1"})),
                             doctest::Contains("key 'md.rolling'"), InputError);
    }

    TEST_CASE("the MD step guard sizes a clump's contact by the lightest mass a contact off its centre moves") {
        // A dimer of mass 1 (spheres of radius 1/2 at ±1/2 on x): I = 0.1 about
        // its axis, 0.35 about the others; a contact on a sphere, off the axis,
        // turns it about y or z: 1/(1 + 0.5² / 0.35) = 0.5833.
        World w = emptyWorld(dimer(), Vec3(0, 0, -9.81));
        w.addClump(Vec3(5.5, 5.5, 0.5), 1, 1.0, Quat::Identity(), 1.0);
        const std::string message = moreau::test::errorOf([&] { checkMdStep(sceneWith(w, {"md.substeps=1"})); });
        CHECK(message.find("smallest m_eff 0.583") != std::string::npos);
    }

    TEST_CASE("a clump's solid volume is its union's, and a pair of clumps touching twice is one neighbour") {
        // Two parallel dimers side by side (both spheres touch), in a cell
        // periodic along x and y whose volume is known.
        World w = emptyWorld(dimer(), Vec3::Zero());
        w.periodic = {true, true, true};
        w.boxMin = Vec3::Zero();
        w.boxMax = Vec3(10, 10, 10);
        w.addClump(Vec3(5, 5, 5), 1, 1.0, Quat::Identity(), 1.0);
        w.addClump(Vec3(5, 5.99, 5), 1, 1.0, Quat::Identity(), 1.0);
        std::vector<Contact> contacts;
        detectBruteForce(w, 0.0, contacts);
        REQUIRE(contacts.size() == 2);
        for (Contact& c : contacts) c.history.reaction = c.n;  // the force on b: pushed away from a
        const Measurements m = measure(w, contacts);
        CHECK(m.packingFraction == doctest::Approx(2.0 * w.clumpShapes[0].volume / 1000.0).epsilon(1e-14));
        CHECK(m.coordination == doctest::Approx(1.0).epsilon(1e-15));
        CHECK(m.fabric(1, 1) == doctest::Approx(1.0).epsilon(1e-12));
        // Per-grain stress: Σ f ⊗ l over the union's volume (two contacts, each
        // force 1 along y at an arm 0.5 along y: σ_yy = 2 · 0.5 / V, compression positive).
        const std::vector<Mat3> sigma = grainStress(w, contacts);
        CHECK(sigma[0](1, 1) == doctest::Approx(2.0 * 0.5 / w.clumpShapes[0].volume).epsilon(1e-12));
    }
}
