// The granular measurements of series.csv against statics: the stress under
// a piston at rest is the piston's force over the width, the floor under a
// settled bed carries its weight (frictionless walls: no Janssen effect).
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

std::size_t wallIndex(const World& w, const std::string& name) {
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallName[k] == name) return k;
    FAIL("no wall " << name);
    return 0;
}

}  // namespace

TEST_CASE("stress under a piston at rest equals the piston's force over the width (CD and MD)") {
    for (const char* method : {"cd", "md"}) {
        CAPTURE(method);
        // Frictionless: the side walls carry no share of the load. The force
        // steps at t = 1000; the piston has come to rest well before.
        Simulation sim(loadBuiltinScene("piston_2d.ini", {std::string("simulation.method=") + method, "contact.mu=0"}));
        while (sim.world().step < 990) sim.advance();
        const StepRecord r = sim.measuredRecord();
        const World& w = sim.world();
        const double width = 15.0;  // walls at x = 0 and 15
        const double pistonForce = r.wallForce[wallIndex(w, "piston")].y();
        CHECK(std::abs(pistonForce - 0.05) < 0.002);  // the applied 0.05, up to the ring that is left
        CHECK(r.stress(1, 1) == doctest::Approx(pistonForce / width).epsilon(0.01));
        // The base carries the same, the side walls push x only.
        CHECK(-r.wallForce[wallIndex(w, "base")].y() == doctest::Approx(pistonForce).epsilon(0.01));
        CHECK(r.pressure > 0.0);
        CHECK(r.deviator >= 0.0);
        CHECK(r.packingFraction > 0.75);
        CHECK(r.packingFraction < 0.9);
        CHECK(r.coordination > 2.5);
        CHECK(r.coordinationNonRattlers >= r.coordination);
    }
}

TEST_CASE("the floor under a settled column carries its weight") {
    for (const char* method : {"cd", "md"}) {
        CAPTURE(method);
        // A column of 4 x 4 x 3 spheres standing on the floor, 0.1 apart (they drop onto it).
        Simulation sim(loadBuiltinScene("box_3d.ini",
                                        {std::string("simulation.method=") + method, "contact.mu=0", "grains.source=lattice",
                                         "lattice.counts=4 4 3", "lattice.radius=0.5", "lattice.spacing=0.1",
                                         "lattice.origin=1 1 0.6"}));
        while (sim.world().step < 1000) sim.advance();
        const World& w = sim.world();
        const double weight = std::accumulate(w.mass.begin(), w.mass.begin() + static_cast<long>(w.numGrains), 0.0) * 9.81;
        const StepRecord r = sim.measuredRecord();
        CHECK(r.kineticEnergy < 1e-3 * weight);
        CHECK(-r.wallForce[wallIndex(w, "floor")].z() == doctest::Approx(weight).epsilon(0.01));
        // Compression positive; frictionless columns push nothing sideways.
        CHECK(r.stress(2, 2) > 0.0);
        CHECK(std::abs(r.stress(0, 0)) < 1e-9 * r.stress(2, 2));
        CHECK(r.coordination == doctest::Approx(2.0 * 32 / 48));  // 16 columns of 3: two contacts each
    }
}

TEST_CASE("measurements of a loose gas: kinetic stress only, no contacts") {
    World w;
    w.dimension = 2;
    for (int i = 0; i < 4; ++i) w.addGrain(Vec3(2.0 * i, 0, 0), 0.5, 1.0, 0.125);
    w.v[0] = Vec3(1, 0, 0);
    w.v[1] = Vec3(-1, 0, 0);
    const Measurements m = measure(w, {});
    CHECK(m.volume == doctest::Approx(7.0 * 1.0));  // x: -0.5..6.5, y: -0.5..0.5
    CHECK(m.stress(0, 0) == doctest::Approx(2.0 / 7.0));  // Σ m u u / V, mean velocity 0
    CHECK(m.stress(1, 1) == 0.0);
    CHECK(m.pressure == doctest::Approx(1.0 / 7.0));
    CHECK(m.deviator == doctest::Approx(2.0 / 7.0));  // σ₁ − σ₂ in 2D
    CHECK(m.packingFraction == doctest::Approx(4 * M_PI * 0.25 / 7.0));
    CHECK(m.coordination == 0.0);
}
