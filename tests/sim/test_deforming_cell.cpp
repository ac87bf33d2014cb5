// Periodic cells that deform (docs/mechanics.md): the relative velocity of a
// pair through a sheared or moving face is that of the image, a grain that
// leaves through a face comes back with its image's velocity, contact memory
// survives the crossing, and a sheared packing keeps the mean flow. Against
// the impulse balance of one CD step and the kinematics of simple shear.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

// Two disks of mass 1 (radius 0.5, density 1/π... set by grains.mass) in a
// 10 x 10 cell periodic along x and y: a just below the top face, b just
// above the bottom one, so that b's image across +y touches a from above.
std::string pair(double shearRate, const std::string& extra = "") {
    return R"(
[simulation]
dimension = 2
dt = 0.01
gravity = 0 0 0
[contact]
mu = 0.5
margin = 0.2
[cd]
iterations = 50
criterion = local
epsilon = 1e-12
max_iterations = 1000
[md]
kn = 1e5
gamma_n = 20
kt = 3e4
gamma_t = 0
substeps = 10
[grains]
source = chain
mass = 1
inertia = disk
[chain]
count = 2
radius = 0.5
spacing = 1
origin = 3 9.5 0
[periodic]
axes = xy
box_min = 0 0 0
box_max = 10 10 0
affine_start = false
shear_rate = )" + std::to_string(shearRate) + "\n" + extra;
}

// `count` disks (radius 0.35 to 0.5) of a loose random packing seeded with
// `seed`, in a square cell of side `side` periodic along x and y, without
// gravity. The tests add friction and the MD dashpots, and what drives the
// cell: the text ends in [periodic], so keys appended first go there.
std::string randomCell(int seed, int count, int side) {
    const std::string box = std::to_string(side) + " " + std::to_string(side) + " 0";
    return R"(
[simulation]
dimension = 2
dt = 1
seed = )" + std::to_string(seed) + R"(
gravity = 0 0 0
[contact]
margin = 0.5
[cd]
iterations = 40
[md]
kn = 50
kt = 14
substeps = 40
[grains]
source = random
inertia = disk
[random]
count = )" + std::to_string(count) + R"(
r_min = 0.35
r_max = 0.5
box_min = 0 0 0
box_max = )" + box + R"(
[periodic]
axes = xy
box_min = 0 0 0
box_max = )" + box + "\n";
}

}  // namespace

TEST_CASE("CD: friction through a Lees-Edwards face drags with the image's velocity") {
    // b is moved below a: its image across +y, 10 up and δ = 0 along x,
    // touches a's top. Pushed together by F = 1 each (a up, b down), the pair slides at the
    // image's relative velocity γ̇ L_y = 1 along x: one implicit step gives
    // P_n = F Δt (m_eff = 1/2 closes 2 F Δt / m) and P_t = μ P_n, so a
    // gains μ F Δt / m along +x and b loses it.
    Scene scene = loadSceneText(pair(0.1, "[force.up]\ngrains = 0\nvalue = 0 1 0\n[force.down]\ngrains = 1\nvalue = 0 -1 0\n"),
                                "<test>", {"simulation.method=cd"});
    World& w = scene.world;
    w.x[1] = Vec3(3.0, 0.5, 0.0);  // its image at (3, 10.5): touching a at (3, 9.5)
    Simulation sim(std::move(scene));
    sim.advance();
    const World& s = sim.world();
    CHECK(s.v[0].x() == doctest::Approx(0.5 * 1.0 * 0.01).epsilon(1e-9));
    CHECK(s.v[1].x() == doctest::Approx(-0.5 * 1.0 * 0.01).epsilon(1e-9));
    CHECK(std::abs(s.v[0].y()) < 1e-12);  // F Δt in, P_n out
    // Without the shear the same push does not slide: no tangential impulse.
    Scene still = loadSceneText(pair(0.0, "[force.up]\ngrains = 0\nvalue = 0 1 0\n[force.down]\ngrains = 1\nvalue = 0 -1 0\n"),
                                "<test>", {"simulation.method=cd"});
    still.world.x[1] = Vec3(3.0, 0.5, 0.0);
    Simulation fixed(std::move(still));
    fixed.advance();
    CHECK(fixed.world().v[0].x() == 0.0);
}

TEST_CASE("CD: a head-on collision through a face the strain rate moves") {
    // No shear; the cell shrinks along y at ε̇ = -0.5, so b's image above a
    // approaches it at L̇_y = -5. A frictionless inelastic collision (CD eq.
    // 34) leaves a and the image with one velocity: a at L̇_y / 2, b at -L̇_y / 2.
    Scene scene = loadSceneText(pair(0.0), "<test>",
                                {"simulation.method=cd", "contact.mu=0", "periodic.strain_rate=0 -0.5 0"});
    scene.world.x[1] = Vec3(3.0, 0.5, 0.0);
    Simulation sim(std::move(scene));
    sim.advance();
    CHECK(sim.world().v[0].y() == doctest::Approx(-2.5).epsilon(1e-9));
    CHECK(sim.world().v[1].y() == doctest::Approx(2.5).epsilon(1e-9));
    CHECK(sim.world().boxMax.y() - sim.world().boxMin.y() == doctest::Approx(10.0 * (1 - 0.5 * 0.01)));
}

TEST_CASE("a grain through a sheared face takes its image's place and velocity") {
    // Free flight: a at rest crosses the top face at y = 10 and comes back
    // at the bottom, δ back along x and γ̇ L_y slower along x (docs/mechanics.md).
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Scene scene = loadSceneText(pair(0.2), "<test>", {std::string("simulation.method=") + method});
        scene.world.v[0] = Vec3(0.0, 1.0, 0.0);
        scene.world.x[1] = Vec3(8.0, 5.0, 0.0);  // out of the way
        Simulation sim(std::move(scene));
        for (int k = 0; k < 100; ++k) sim.advance();  // t = 1: crossed at t = 0.5
        const World& w = sim.world();
        const double delta = w.shift;  // γ̇ L_y t = 2 at t = 1
        CHECK(delta == doctest::Approx(2.0).epsilon(1e-12));
        CHECK(w.v[0].x() == doctest::Approx(-2.0).epsilon(1e-12));
        CHECK(w.v[0].y() == doctest::Approx(1.0).epsilon(1e-12));
        CHECK(w.x[0].y() == doctest::Approx(0.5).epsilon(1e-9));
        // It crossed at t = 0.5 with δ = 1 there, then drifted back by 2 × 0.5:
        // 3 − 1 − 1 = 1, up to γ̇ L_y Δt = 0.02 a step (y reaches 10 at step
        // 50 up to rounding: the crossing step decides δ there).
        CHECK(std::abs(w.x[0].x() - 1.0) < 0.04);
    }
}

TEST_CASE("MD: a contact keeps its memory while its grain crosses a sheared face") {
    // The same pressed pair twice: straddling the sheared face (b's image
    // above a, moving at γ̇ L_y = 0.05 along x), and inside the cell with b
    // given that velocity. a crosses the face after 33 steps. If the
    // crossing lost the contact's spring, the tangential forces would part;
    // the two runs differ only by the wrap's rounding.
    const std::string forces = "[force.up]\ngrains = 0\nvalue = 0 50 0\n[force.down]\ngrains = 1\nvalue = 0 -50 0\n";
    std::vector<Vec3> straddling, inside;
    for (const bool across : {true, false}) {
        Scene scene = loadSceneText(pair(0.005, forces), "<test>", {"simulation.method=md", "contact.mu=10"});
        World& w = scene.world;
        w.x[0] = across ? Vec3(3.0, 9.9, 0.0) : Vec3(3.0, 4.9, 0.0);
        w.x[1] = across ? Vec3(3.0, 0.9, 0.0) : Vec3(3.0, 5.9, 0.0);
        w.v[0] = Vec3(0.0, 0.3, 0.0);
        w.v[1] = Vec3(across ? 0.0 : 0.05, 0.3, 0.0);
        Simulation sim(std::move(scene));
        bool crossed = false;
        for (int k = 0; k < 60; ++k) {
            sim.advance();
            const std::vector<Contact>& c = sim.contacts();
            REQUIRE(c.size() == 1);
            (across ? straddling : inside).push_back(c[0].history.reaction);
            crossed = crossed || sim.world().x[0].y() < 1.0;
        }
        CHECK(crossed == across);
    }
    double largest = 0.0, difference = 0.0;
    for (std::size_t k = 0; k < straddling.size(); ++k) {
        largest = std::max(largest, std::abs(inside[k].x()));
        difference = std::max(difference, (straddling[k] - inside[k]).norm());
    }
    CHECK(largest > 1.0);  // the spring carries a tangential force
    CHECK(difference < 1e-6 * 50.0);
}

TEST_CASE("a sheared packing keeps the mean flow v_x = shear rate x y, CD and MD") {
    // 120 disks at packing fraction ~0.6 sheared at γ̇ = 0.01 from the
    // affine start: collisions through the sheared faces must see the
    // images' velocities, or the grains near the faces heat up and the
    // profile bends. The fitted slope of v_x(y) over all grains, after a
    // strain of 3, is γ̇ within 5%.
    const std::string text =
        randomCell(4, 120, 11) + "shear_rate = 0.01\n[contact]\nmu = 0.3\n[md]\ngamma_n = 1\ngamma_t = 0.5\n";
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Simulation sim(loadSceneText(text, "<test>", {std::string("simulation.method=") + method}));
        for (int k = 0; k < 300; ++k) sim.advance();
        std::vector<double> y, vx;
        const World& w = sim.world();
        const double cy = 0.5 * (w.boxMin.y() + w.boxMax.y());
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            y.push_back(w.x[i].y() - cy);
            vx.push_back(w.v[i].x());
        }
        const auto [intercept, slope] = linearFit(y, vx);
        double ss = 0.0, st = 0.0, mean = 0.0;
        for (double v : vx) mean += v / static_cast<double>(vx.size());
        for (std::size_t i = 0; i < vx.size(); ++i) {
            ss += std::pow(vx[i] - intercept - slope * y[i], 2);
            st += std::pow(vx[i] - mean, 2);
        }
        CHECK(slope == doctest::Approx(0.01).epsilon(0.05));
        CHECK(1.0 - ss / st > 0.9);  // R² of the line
    }
}

TEST_CASE("a stress-controlled cell: isotropic compression to p, then triaxial along x at constant lateral stress") {
    // 100 disks of a loose random packing (φ ≈ 0.45) in a periodic 2D cell:
    // the servo shrinks both axes until the grains carry p = 0.005; then x is
    // compressed at a fixed rate while the servo holds σ_yy (its integral
    // part removes the offset a proportional servo keeps while y must
    // widen). A frictional packing (μ = 0.4) then carries σ_xx well above σ_yy.
    const std::string servo =
        "stress_axes = xy\nstress = 0.005 0.005 0\nstress_gain = 0.05\nstress_time = 50\nmax_strain_rate = 0.001\n";
    const std::string text = randomCell(5, 100, 10) + servo + "[contact]\nmu = 0.4\n[md]\ngamma_n = 2\ngamma_t = 1\n";
    for (const char* method : {"cd", "md"}) {
        CAPTURE(std::string(method));
        Simulation sim(loadSceneText(text, "<test>", {std::string("simulation.method=") + method}));
        for (int k = 0; k < 3000; ++k) sim.advance();
        const Mat3 iso = sim.cellStress();
        CHECK(iso(0, 0) == doctest::Approx(0.005).epsilon(0.02));
        CHECK(iso(1, 1) == doctest::Approx(0.005).epsilon(0.02));
        CHECK(sim.measuredRecord().packingFraction > 0.75);
        CellServo lateral = sim.scene().cellServo;
        lateral.axes = {false, true, false};
        sim.setCellServo(lateral);
        sim.setCellRates(Vec3(-1e-4, 0.0, 0.0), 0.0);
        CHECK_THROWS_AS(sim.setCellRates(Vec3(0.0, 0.0, 1e-4), 0.0), InputError);  // z is not periodic
        const double lx = sim.world().boxMax.x() - sim.world().boxMin.x();
        double sxx = 0.0, syy = 0.0;
        const int steps = 1500, tail = 500;
        for (int k = 0; k < steps; ++k) {
            sim.advance();
            if (k < steps - tail) continue;
            const Mat3 s = sim.cellStress();
            sxx += s(0, 0) / tail;
            syy += s(1, 1) / tail;
        }
        CHECK(syy == doctest::Approx(0.005).epsilon(0.02));
        CHECK(sxx > 1.3 * syy);
        // x shrank at the rate set: by e^(−0.15) after 1500 steps.
        CHECK(sim.world().boxMax.x() - sim.world().boxMin.x() == doctest::Approx(lx * std::exp(-0.15)).epsilon(1e-3));
        // series.csv's stress over the cell agrees with the servo's reading.
        CHECK(sim.measuredRecord().stress(1, 1) == doctest::Approx(sim.cellStress()(1, 1)).epsilon(1e-9));
    }
}
