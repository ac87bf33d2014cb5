// Polygons (2D convex grains) in contact dynamics and molecular dynamics:
// the scene keys, the body, and closed forms (a square's weight on the
// floor, sticking and sliding on a slope where a disk rolls, a stack that
// does not rock); docs/polygons.md.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/clump_worlds.hpp"

using namespace moreau;

namespace {

constexpr double kG = 9.81;

/// A world of unit squares (regularPolygon(4) at circumradius 1/√2: side 1,
/// lowest edge flat at angle 0) under `gravity`, no grains yet.
World squareWorld(const Vec3& gravity) {
    World w;
    w.dimension = 2;
    w.gravity = gravity;
    w.polygonShapes.push_back(regularPolygon(4));
    return w;
}
constexpr double kSquareSize = 0.70710678118654752440;  // circumradius of the unit square

/// polygons_2d.ini's settings and walls (floor y = 0, μ = 0.4) around `world`.
Scene sceneWith(World world, std::vector<std::string> sets) {
    sets.insert(sets.begin(), {"cd.criterion=natural", "cd.epsilon=1e-12", "cd.max_iterations=5000"});
    return test::sceneAround(std::move(world), std::move(sets), "polygons_2d.ini");
}

/// The walls' push on the grains (the reaction is the force on b, the wall).
Vec3 wallLoad(const Simulation& sim) {
    Vec3 f = Vec3::Zero();
    for (const Contact& c : sim.contacts())
        if (sim.world().isWall(c.b)) f -= c.history.reaction;
    return f;
}

}  // namespace

TEST_SUITE("polygons") {
    TEST_CASE("polygon scenes: the keys give the body, exact mass and inertia, and bad lists exit 2") {
        Scene s = loadBuiltinScene("polygons_2d.ini", {"polygon.irregularity=0", "random.count=20"});
        const World& w = s.world;
        REQUIRE(w.hasPolygons());
        REQUIRE(w.numGrains == 20);
        REQUIRE(w.polygonShapes.size() == 1);
        const PolygonShape& hex = w.polygonShapes[0];
        const double area = 3.0 * std::sqrt(3.0) / 2.0;  // regular hexagon of circumradius 1
        CHECK(hex.area == doctest::Approx(area).epsilon(1e-14));
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            const double s2 = w.size[i] * w.size[i];
            CHECK(w.mass[i] == doctest::Approx(area * s2).epsilon(1e-14));
            // A regular hexagon of circumradius R: I = 5/12 m R² about its centre.
            CHECK(w.inertia[i] == doctest::Approx(5.0 / 12.0 * w.mass[i] * s2).epsilon(1e-13));
            CHECK(w.radius[i] == doctest::Approx(w.size[i]).epsilon(1e-14));
        }
        // Irregular: one shape per grain, each inside its circle, seeded.
        Scene a = loadBuiltinScene("polygons_2d.ini", {"random.count=20"});
        Scene b = loadBuiltinScene("polygons_2d.ini", {"random.count=20"});
        REQUIRE(a.world.polygonShapes.size() == 20);
        for (std::size_t i = 0; i < 20; ++i) {
            CHECK(a.world.polygonShapes[i].vx == b.world.polygonShapes[i].vx);
            CHECK(a.world.mass[i] == b.world.mass[i]);
        }
        CHECK(a.world.polygonShapes[0].vx != a.world.polygonShapes[1].vx);
        // A given list: the square's centroid moved to the origin.
        Scene g = loadBuiltinScene("polygons_2d.ini", {"polygon.irregularity=0", "random.count=4",
                                                       "polygon.shape=0 0; 1 0; 1 1; 0 1"});
        CHECK(g.world.polygonShapes[0].centroid.isApprox(Vec3(0.5, 0.5, 0.0), 1e-15));
        CHECK(g.world.polygonShapes[0].momentPerMass == doctest::Approx(1.0 / 6.0).epsilon(1e-14));
        for (const char* bad : {"polygon.shape=0 0; 1 0; 0.2 0.2; 0 1", "polygon.shape=0 0; 1 1; 1 0; 0 1",
                                "polygon.shape=0 0; 1 0", "polygon.shape=0 0; 1 0; 2 0", "polygon.shape=0 0; 1 nan; 0 1"}) {
            CAPTURE(bad);
            try {
                loadBuiltinScene("polygons_2d.ini", {"polygon.irregularity=0", "random.count=4", bad});
                FAIL("accepted");
            } catch (const InputError& e) {
                CHECK(std::string(e.what()).find("polygon.shape") != std::string::npos);
            }
        }
        CHECK_THROWS_AS(loadBuiltinScene("polygons_2d.ini", {"simulation.dimension=3"}), InputError);
    }

    TEST_CASE("polygon scenes: what cannot run polygons is refused with the key") {
        World w = squareWorld(Vec3(0.0, -kG, 0.0));
        w.addPolygon(Vec3(6.0, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"simulation.method=md", "md.integrator=rk"})),
                             doctest::Contains("key 'md.integrator': 'rk' cannot run polygons"), InputError);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"simulation.method=md", "md.integrator=ab3"})),
                             doctest::Contains("key 'md.integrator': 'ab3' cannot run polygons"), InputError);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(w, {"simulation.method=md", "md.pipeline=fused"})),
                             doctest::Contains("polygons take the staged pipeline"), InputError);
        World disk = w;
        disk.addGrain(Vec3(8.0, 0.5, 0.0), 0.5, 1.0, 0.125);
        CHECK_THROWS_WITH_AS(Simulation(sceneWith(disk, {})), doctest::Contains("is not a polygon"), InputError);
    }

    TEST_CASE("CD: a square rests on the floor with its weight on two points, sticks on a slope and slides on a steep one") {
        auto run = [&](double theta) {
            World w = squareWorld(Vec3(kG * std::sin(theta), -kG * std::cos(theta), 0.0));
            w.addPolygon(Vec3(6.0, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
            Simulation sim(sceneWith(std::move(w), {}));
            for (int s = 0; s < 100; ++s) sim.step();
            return std::tuple{sim.world().v[0].x() / sim.world().time, sim.world().w[0].z(), wallLoad(sim),
                              sim.contacts().size()};
        };
        const auto [restA, restW, restLoad, restContacts] = run(0.0);
        CHECK(restContacts == 2);
        CHECK(restLoad.y() == doctest::Approx(kG).epsilon(1e-10));
        CHECK(std::abs(restA) < 1e-12);
        CHECK(std::abs(restW) < 1e-12);
        const double gentle = std::atan(0.3), steep = std::atan(0.6), mu = 0.4;
        const auto [stickA, stickW, stickLoad, stickContacts] = run(gentle);
        CHECK(std::abs(stickA) < 1e-9);
        CHECK(std::abs(stickW) < 1e-9);
        const auto [slideA, slideW, slideLoad, slideContacts] = run(steep);
        CHECK(slideA == doctest::Approx(kG * (std::sin(steep) - mu * std::cos(steep))).epsilon(1e-9));
        CHECK(std::abs(slideW) < 1e-9);
    }

    TEST_CASE("CD: two squares stacked face to face on the floor carry the top one's weight without rocking") {
        World w = squareWorld(Vec3(0.0, -kG, 0.0));
        w.addPolygon(Vec3(6.0, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
        w.addPolygon(Vec3(6.25, 1.5, 0.0), 1, kSquareSize, 0.0, 1.0);  // offset by a quarter side
        Simulation sim(sceneWith(std::move(w), {}));
        for (int s = 0; s < 200; ++s) sim.step();
        const World& now = sim.world();
        CHECK(wallLoad(sim).y() == doctest::Approx(2.0 * kG).epsilon(1e-9));
        for (std::size_t i = 0; i < 2; ++i) {
            CHECK(now.v[i].norm() < 1e-9);
            CHECK(std::abs(now.w[i].z()) < 1e-9);
        }
        // The pair's two points (a vertex of each on the other's face) carry the top's weight.
        Vec3 onTop = Vec3::Zero();
        int between = 0;
        for (const Contact& c : sim.contacts())
            if (c.a == 0 && c.b == 1) {
                onTop += c.history.reaction;
                ++between;
            }
        CHECK(between == 2);
        CHECK(onTop.y() == doctest::Approx(kG).epsilon(1e-9));
    }

    TEST_CASE("MD: a square's weight on the floor, sticking on a slope, sliding at g (sin θ − μ cos θ) on a steep one") {
        // The leapfrog with Cundall's spring; Gear's fifth order with it and
        // with Peña's geometric spring (the overlap's centroid, eqs. 14–15).
        const std::vector<std::string> schemes[] = {
            {}, {"md.integrator=gear5"}, {"md.integrator=gear5", "md.tangential=pena"}};
        for (const std::vector<std::string>& scheme : schemes) {
        CAPTURE(scheme.empty() ? std::string("cd") : scheme.back());
        auto run = [&](double theta, int steps) {
            World w = squareWorld(Vec3(kG * std::sin(theta), -kG * std::cos(theta), 0.0));
            w.addPolygon(Vec3(6.0, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
            std::vector<std::string> sets{"simulation.method=md", "md.gamma_n=200", "md.gamma_t=100"};
            sets.insert(sets.end(), scheme.begin(), scheme.end());
            Simulation sim(sceneWith(std::move(w), sets));
            std::vector<Vec3> v;
            for (int s = 0; s < steps; ++s) {
                sim.step();
                v.push_back(sim.world().v[0]);
            }
            return std::tuple{v, sim.world().w[0].z(), wallLoad(sim)};
        };
        // 1 s at rest: the overlap's spring and dashpot settle; the floor
        // carries the weight (F_n = k_n A / l_c).
        const auto [rest, restW, restLoad] = run(0.0, 500);
        CHECK(restLoad.y() == doctest::Approx(kG).epsilon(1e-6));
        CHECK(rest.back().norm() < 1e-6);
        CHECK(std::abs(restW) < 1e-6);
        const double gentle = std::atan(0.3), steep = std::atan(0.6), mu = 0.4;
        const auto [stick, stickW, stickLoad] = run(gentle, 500);
        CHECK(stick.back().norm() < 1e-6);
        CHECK(std::abs(stickW) < 1e-6);
        // Sliding: the acceleration between 0.5 s and 1 s (the transient gone).
        const auto [slide, slideW, slideLoad] = run(steep, 500);
        const double a = (slide[499].x() - slide[249].x()) / (250 * 0.002);
        CHECK(a == doctest::Approx(kG * (std::sin(steep) - mu * std::cos(steep))).epsilon(1e-3));
        CHECK(std::abs(slideW) < 1e-3);
        }
    }

    TEST_CASE("CD and MD: two squares pressed together across a periodic boundary balance the push") {
        // Periodic along x on [0, 10): square 0 spans [0, 1], square 1 [9, 10]:
        // face to face through the boundary. Opposite forces F push them
        // together; no gravity, no walls. CD: at rest, the two points carry
        // F; MD: at rest with F_n = k_n A / l_c = F.
        const double F = 5.0;
        for (const std::string method : {"cd", "md"}) {
            CAPTURE(method);
            World w = squareWorld(Vec3::Zero());
            w.addPolygon(Vec3(0.5, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
            w.addPolygon(Vec3(9.5, 0.5, 0.0), 1, kSquareSize, 0.0, 1.0);
            w.periodic[0] = true;
            w.boxMin = Vec3(0.0, -50.0, 0.0);
            w.boxMax = Vec3(10.0, 50.0, 0.0);
            w.forceSchedule(0).before = w.forceSchedule(0).after = Vec3(-F, 0.0, 0.0);
            w.forceSchedule(1).before = w.forceSchedule(1).after = Vec3(F, 0.0, 0.0);
            Scene scene = loadBuiltinScene("polygons_2d.ini",
                                           {"simulation.method=" + method, "cd.criterion=natural",
                                            "cd.epsilon=1e-12", "cd.max_iterations=5000", "md.gamma_n=200",
                                            "md.gamma_t=100", "random.count=1", "output.vtk_every=0"});
            w.muGrain = scene.world.muGrain;
            scene.world = std::move(w);
            Simulation sim(std::move(scene));
            for (int k = 0; k < 500; ++k) sim.step();
            const World& now = sim.world();
            Vec3 push = Vec3::Zero();
            int points = 0;
            for (const Contact& c : sim.contacts())
                if (c.a == 0 && c.b == 1 && c.history.reaction.squaredNorm() > 0.0) {
                    push += c.history.reaction;
                    ++points;
                }
            CHECK(points == (method == "cd" ? 2 : 1));
            // b (square 1, left of square 0 through the boundary) is pushed to −x by a.
            CHECK(push.x() == doctest::Approx(-F).epsilon(1e-6));
            // Flush faces put the overlap's boundary crossings on collinear
            // edges, where rounding picks the chord's ends: in MD its normal
            // leans by a few 1e-7 (measured 2.7e-7 F across, 1.1e-6 rad/s of
            // spin after 1 s); CD's points have the face's normal.
            CHECK(std::abs(push.y()) < 1e-6 * F);
            for (std::size_t i = 0; i < 2; ++i) {
                CHECK(now.v[i].norm() < 1e-6);
                CHECK(std::abs(now.w[i].z()) < 1e-5);
            }
        }
    }

    TEST_CASE("CD and MD: irregular polygons settled in a box put their weight on the walls") {
        // polygons_2d.ini's 40 irregular hexagons fall into the box (the piston
        // held fixed at the top, far above): at rest the walls' vertical push
        // is the grains' weight (the floor's, and the side walls' friction).
        for (const std::string method : {"cd", "md"}) {
            CAPTURE(method);
            Scene scene = loadBuiltinScene(
                "polygons_2d.ini", {"simulation.method=" + method, "random.count=40", "wall.piston.mobile=false",
                                    "wall.piston.force=0 0 0", "cd.criterion=natural", "cd.epsilon=1e-9",
                                    "cd.max_iterations=20000", "md.gamma_n=400", "md.gamma_t=200", "output.vtk_every=0"});
            double weight = 0.0;
            for (std::size_t i = 0; i < scene.world.numGrains; ++i) weight += scene.world.mass[i] * kG;
            Simulation sim(std::move(scene));
            for (int k = 0; k < 2500; ++k) sim.step();
            CHECK(kineticEnergy(sim.world()) < 1e-6 * weight);
            CHECK(wallLoad(sim).y() == doctest::Approx(weight).epsilon(method == "cd" ? 1e-8 : 1e-4));
        }
    }

    TEST_CASE("MD: a servo lid holds its stress on a bed of irregular polygons") {
        // The piston of polygons_2d.ini as a servo wall (docs/mechanics.md):
        // v = g (S − σ), σ = F_y / 20. Face contacts make the lid's contacts
        // stiff (about k_n per touching face, some 20 of them): the loop is
        // stable for g < A / (k Δt) ≈ 0.02, and g = 0.005 settles without
        // overshoot. At rest the lid carries S · 20 and the walls together
        // the grains' weight (the lid pushes down what the floor pushes up).
        Scene scene = loadBuiltinScene(
            "polygons_2d.ini",
            {"simulation.method=md", "random.count=40", "random.box_max=20 4 0", "wall.piston.point=0 4.5 0",
             "wall.piston.mobile=false", "wall.piston.force=0 0 0", "wall.piston.servo_stress=100",
             "wall.piston.servo_gain=0.005", "wall.piston.servo_max_speed=1", "wall.piston.servo_area=20",
             "md.gamma_n=400", "md.gamma_t=200", "output.vtk_every=0"});
        double weight = 0.0;
        for (std::size_t i = 0; i < scene.world.numGrains; ++i) weight += scene.world.mass[i] * kG;
        BodyId lid = -1;
        for (std::size_t k = 0; k < scene.world.wallName.size(); ++k)
            if (scene.world.wallName[k] == "piston") lid = static_cast<BodyId>(scene.world.numGrains + k);
        REQUIRE(lid >= 0);
        Simulation sim(std::move(scene));
        for (int k = 0; k < 5000; ++k) sim.step();
        Vec3 onLid = Vec3::Zero();  // the lid's push on the grains
        for (const Contact& c : sim.contacts())
            if (c.b == lid) onLid -= c.history.reaction;
        CHECK(kineticEnergy(sim.world()) < 1e-6 * weight);
        CHECK(-onLid.y() / 20.0 == doctest::Approx(100.0).epsilon(1e-3));
        CHECK(wallLoad(sim).y() == doctest::Approx(weight).epsilon(1e-3));
    }
}
