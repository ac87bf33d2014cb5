// Boundary grains and walls under control (docs/mechanics.md): grain groups
// with a prescribed velocity and spin, grains glued to a wall, a mobile wall
// driven along the plane while a force pushes it along the normal, and a
// servo that holds a normal stress. Each against what the kinematics or the
// momentum balance says, for CD and MD.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

std::size_t wallBody(const World& w, const std::string& name) {
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallName[k] == name) return w.numGrains + k;
    FAIL("no wall " << name);
    return 0;
}

Scene scene(const std::string& text, std::vector<std::string> sets = {}) {
    return loadSceneText(text, "<test>", sets);
}

// A 2D bed of 12 x 4 disks in a cell periodic along x, on a floor, under a
// lid at y = 5 (no gravity): the common ground of the tests below.
const std::string kBed = R"(
[simulation]
dimension = 2
dt = 1
gravity = 0 0 0
seed = 3
[contact]
mu = 0.3
margin = 0.5
[cd]
iterations = 60
[md]
kn = 100
gamma_n = 4
kt = 28
gamma_t = 2
substeps = 50
[grains]
source = lattice
inertia = disk
[lattice]
type = square
counts = 12 4
radius = 0.5
spacing = 0.05
origin = 0.5 0.55 0
[periodic]
axes = x
box_min = 0 -1 0
box_max = 12.6 20 0
[wall.floor]
point = 0 0 0
normal = 0 1 0
)";

// The lid over the bed: a wall of normal -y through (0, y, 0) with the further
// keys `keys`, and the bed's top row glued to it.
std::string lid(const std::string& y, const std::string& keys) {
    return "[wall.lid]\npoint = 0 " + y + " 0\nnormal = 0 -1 0\n" + keys + "[group.top]\ngrains = 36..47\nwall = lid\n";
}

// The lid's servo: it holds the normal stress 0.004, at most 0.002 a step.
const std::string kServo = "servo_stress = 0.004\nservo_gain = 0.03\nservo_max_speed = 0.002\n";

// The bed's bottom row glued to the floor.
const std::string kBottomOnFloor = "[group.bottom]\ngrains = 0..11\nwall = floor\n";

}  // namespace

TEST_CASE("a grain group keeps its velocity and spin exactly, in every pipeline") {
    struct Case {
        const char* method;
        const char* pipeline;
        const char* integrator;
    };
    for (const Case c : {Case{"cd", "auto", "cd"}, Case{"md", "fused", "cd"}, Case{"md", "staged", "cd"},
                         Case{"md", "staged", "rk"}, Case{"md", "staged", "gear5"}}) {
        CAPTURE(std::string(c.method));
        CAPTURE(std::string(c.pipeline));
        CAPTURE(std::string(c.integrator));
        Simulation sim(scene(kBed + "[group.row]\ngrains = 0..11\nvelocity = 0.01 0.002 0\nspin = 0 0 0.05\n",
                             {std::string("simulation.method=") + c.method, std::string("md.pipeline=") + c.pipeline,
                              std::string("md.integrator=") + c.integrator, "simulation.gravity=0 -0.001 0"}));
        const World& w = sim.world();
        REQUIRE(w.driven.size() == 12);
        const Vec3 x0 = w.x[5];
        for (int k = 0; k < 100; ++k) sim.advance();
        for (std::size_t i = 0; i < 12; ++i) {
            CHECK(w.v[i] == Vec3(0.01, 0.002, 0));
            CHECK(w.w[i] == Vec3(0, 0, 0.05));
        }
        // x0 + 100 v Δt, up to the rounding of 100 additions.
        CHECK(std::abs(w.x[5].x() - x0.x() - 1.0) < 1e-10);
        CHECK(std::abs(w.x[5].y() - x0.y() - 0.2) < 1e-10);
    }
}

TEST_CASE("a mobile lid driven along x under a normal force: the plate of a shear cell") {
    // The lid is free along y only, pushed down by F = 0.06 over the width
    // 12.6, and driven along x at U = 0.004; its glued grains (the top row
    // of the bed) are its rough face. At rest in y the grains carry F.
    const std::string mobile = "mobile = true\nmass = 10\nfree = y\nforce = 0 -0.06 0\nvelocity = 0.004 0 0\n";
    const std::string text = kBed + lid("4.2", mobile) + kBottomOnFloor;
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Simulation sim(scene(text, {std::string("simulation.method=") + method}));
        const World& w = sim.world();
        const std::size_t lid = wallBody(w, "lid");
        const double lidX0 = w.x[lid].x();
        const Vec3 offset0 = w.x[40] - w.x[lid];
        const Vec3 bottom0 = w.x[3];
        double loadSum = 0.0;
        const int steps = 3000, tail = 1000;
        for (int k = 0; k < steps; ++k) {
            sim.advance();
            if (k >= steps - tail) loadSum += sim.wallLoads()[lid - w.numGrains].y();
            // The glued grains move with the lid (x wraps in the cell).
            const Vec3 d = w.minimumImage(w.x[40] - w.x[lid] - offset0);
            REQUIRE(d.norm() < 1e-9);
            REQUIRE(w.v[40] == w.v[lid]);
        }
        CHECK(w.v[lid].x() == 0.004);
        CHECK(std::abs(w.x[lid].x() - lidX0 - 0.004 * steps) < 1e-9);
        CHECK(w.x[3] == bottom0);  // glued to the fixed floor
        // The force the grains put on the lid and its grains balances F on average.
        CHECK(loadSum / tail == doctest::Approx(0.06).epsilon(0.02));
        // series.csv's wall columns count the glued grains' contacts too.
        const Vec3 series = sim.measuredRecord().wallForce[lid - w.numGrains];
        const Vec3 servoLoad = sim.wallLoads()[lid - w.numGrains];
        CHECK((series - servoLoad).norm() <= 1e-12 * servoLoad.norm());
        CHECK(servoLoad.y() > 0.0);
    }
}

TEST_CASE("a mobile wall carries its glued grains as one rigid body: momentum of a 1D impact") {
    // Plate (mass 3, v0 = 1) with a glued grain hits a grain of mass 1 at rest.
    const std::string text = R"(
[simulation]
dimension = 1
dt = 0.01
steps = 0
gravity = 0 0 0
[contact]
margin = 0.5
[md]
kn = 1e4
gamma_n = 10
substeps = 10
[grains]
source = chain
mass = 1
[chain]
count = 2
radius = 0.5
spacing = 0.5
origin = 0.5 0 0
[wall.plate]
point = 0 0 0
normal = 1 0 0
mobile = true
mass = 3
free = x
velocity = 1 0 0
[group.face]
grains = 0
wall = plate
)";
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Simulation sim(scene(text, {std::string("simulation.method=") + method}));
        const World& w = sim.world();
        const std::size_t plate = wallBody(w, "plate");
        for (int k = 0; k < 200; ++k) {
            sim.advance();
            const double p = 3.0 * w.v[plate].x() + 1.0 * w.v[1].x();
            REQUIRE(p == doctest::Approx(3.0).epsilon(1e-12));
        }
        CHECK(w.v[0] == w.v[plate]);
        if (std::string(method) == "cd") {
            // The shock law is inelastic (CD eq. 34): one common velocity 3/4.
            CHECK(w.v[plate].x() == doctest::Approx(0.75).epsilon(1e-9));
            CHECK(w.v[1].x() == doctest::Approx(0.75).epsilon(1e-9));
        } else {
            // The dashpot leaves them apart, the grain ahead.
            CHECK(w.v[1].x() > 1.0);
            CHECK(w.v[plate].x() < 0.75);
        }
    }
}

TEST_CASE("a servo lid holds its normal stress") {
    // The lid starts 0.05 above its glued grains' place in the bed's top
    // row; the servo brings them down onto the bed and holds the normal
    // stress on them and the lid at 0.004 over the width 12.6. The gain
    // keeps the MD loop stable: a lid step δ changes the stress by about
    // k_n (12 columns / 4 rows) δ / 12.6 ≈ 24 δ, so 0.03 × 24 < 1.
    const std::string text = kBed + lid("5", kServo);
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Simulation sim(scene(text, {std::string("simulation.method=") + method}));
        const World& w = sim.world();
        const std::size_t lid = wallBody(w, "lid");
        for (int k = 0; k < 4000; ++k) sim.advance();
        const double sigma = -sim.wallLoads()[lid - w.numGrains].dot(Vec3(0, -1, 0)) / 12.6;
        CHECK(sigma == doctest::Approx(0.004).epsilon(0.01));
        CHECK(std::abs(w.v[lid].y()) < 1e-5);
        CHECK(w.x[lid].y() < 4.85);  // it came down by the three gaps of 0.05 and more
    }
}

TEST_CASE("a servo lid with an integral time holds its stress while the bed moves it") {
    // The floor rises at u = 1e-4 a step, so the lid must too: a
    // proportional servo then holds σ with the offset u / gain = 0.0033;
    // the integral part (servo_time) removes it.
    const std::string text = kBed + "[wall.floor]\nvelocity = 0 0.0001 0\n" + lid("4.2", kServo) + kBottomOnFloor;
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        for (const bool integral : {false, true}) {
            CAPTURE(integral);
            Simulation sim(scene(text, {std::string("simulation.method=") + method,
                                        std::string("wall.lid.servo_time=") + (integral ? "100" : "inf")}));
            const World& w = sim.world();
            const std::size_t lid = wallBody(w, "lid");
            double sigma = 0.0;
            const int steps = 4000, tail = 1000;
            for (int k = 0; k < steps; ++k) {
                sim.advance();
                if (k >= steps - tail) sigma += sim.wallLoads()[lid - w.numGrains].y() / 12.6 / tail;
            }
            if (integral) {
                CHECK(sigma == doctest::Approx(0.004).epsilon(0.03));
                CHECK(w.v[lid].y() == doctest::Approx(1e-4).epsilon(0.05));
            } else {
                CHECK(sigma > 0.004 * 1.3);  // the proportional servo's offset, u / gain ≈ 0.0033
            }
        }
    }
}

TEST_CASE("group and servo keys refuse what they cannot do, naming the key") {
    auto refused = [](const std::string& extra, const std::string& message) {
        CAPTURE(extra);
        CHECK_THROWS_WITH_AS(loadSceneText(kBed + extra, "<t>", {}), doctest::Contains(message.c_str()), InputError);
    };
    refused("[group.g]\nvelocity = 1 0 0\n", "key 'group.g.grains': '' selects no grain");
    refused("[group.g]\nregion = 100 100 0 101 101 0\n", "key 'group.g.region'");
    refused("[group.g]\nregion = 0 0 0 -1 1 0\n", "is empty along x");
    refused("[group.g]\ngrains = 5..2\n", "with i after j");
    refused("[group.g]\ngrains = 0..100\n", "selects a grain out of range");
    refused("[group.g]\ngrains = 0\nwall = roof\n", "names no wall");
    refused("[group.g]\ngrains = 0\nwall = floor\nvelocity = 1 0 0\n", "is given to grains glued to a wall");
    refused("[group.g]\ngrains = 0\nvelocity = 0 0 1\n", "locked axis z");
    refused("[group.g]\ngrains = 0\nspin = 1 0 0\n", "turns the group about a locked axis");
    refused("[group.g]\ngrains = 0..3\n[group.h]\ngrains = 3\n", "already in [group.g]");
    refused("[force.f]\ngrains = 2\nvalue = 1 0 0\n[group.g]\ngrains = 2\n", "which [force.f] pushes");
    refused("[wall.lid]\npoint = 0 5 0\nnormal = 0 -1 0\nmobile = true\nmass = 1\nfree = y\nservo_stress = 1\nservo_gain = 1\n",
            "is set on a mobile wall");
    refused("[wall.lid]\npoint = 0 5 0\nnormal = 0 -1 0\nservo_stress = 1\n", "key 'wall.lid.servo_gain'");
    refused("[wall.side]\npoint = 0 0 0\nnormal = 1 0 0\nservo_stress = 1\nservo_gain = 1\n",
            "is not across a periodic box");
    refused("[group.g]\ngrains = 0\nregion = 1 2 3\n", "is not six numbers");
}
