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
        CHECK(r.fabric.trace() == doctest::Approx(1.0).epsilon(1e-12));
        // Over a slab across the whole width, clear of base and piston: every
        // horizontal cut through a packing at rest carries the piston's force,
        // and with branch-fraction weights Σ f_y ℓ_y over the slab is the
        // integral of that force over the slab's height, so σ_yy is F / W
        // again (a contact-point rule would not give this).
        const double top = w.x[w.numGrains + wallIndex(w, "piston")].y();
        const MeasureRegion slab{Vec3(0, 3, 0), Vec3(width, top - 3, 0)};
        const Measurements m = measure(w, sim.contacts(), &slab);
        CHECK(std::abs(m.stress(1, 1) / (pistonForce / width) - 1.0) < 0.01);
        CHECK(std::abs(r.stress(1, 1) / (pistonForce / width) - 1.0) < 0.01);
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

namespace {

/// A periodic square lattice of touching disks (2D, pitch 1, radius 1/2,
/// centres at (i + 1/2, j + 1/2) in a 10 × 10 box), every bond loaded in
/// compression: fx along x, fy along y. Its stress is diag(fx, fy) (one bond
/// of each kind per unit area, branch length 1), its fabric diag(1/2, 1/2, 0),
/// its coordination 4 and its packing fraction π/4.
struct SquareLattice {
    World world;
    std::vector<Contact> contacts;
    SquareLattice(double fx, double fy) {
        world.dimension = 2;
        world.periodic = {true, true, false};
        world.boxMin = Vec3(0, 0, 0);
        world.boxMax = Vec3(10, 10, 0);
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < 10; ++i) world.addGrain(Vec3(i + 0.5, j + 0.5, 0), 0.5, 1.0, 0.125);
        auto bond = [&](int i, int j, int di, int dj, double f) {
            auto a = static_cast<BodyId>(j * 10 + i), b = static_cast<BodyId>(((j + dj) % 10) * 10 + (i + di) % 10);
            Vec3 n(di, dj, 0);
            if (b < a) {  // a is the lower id; n points from a to b
                std::swap(a, b);
                n = -n;
            }
            Contact c = pairContact(a, b);
            c.n = n;
            c.history.reaction = f * n;  // on b, away from a: compression
            contacts.push_back(c);
        };
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < 10; ++i) {
                bond(i, j, 1, 0, fx);
                bond(i, j, 0, 1, fy);
            }
    }
};

}  // namespace

TEST_CASE("fabric, coordination, stress and packing fraction of a loaded square lattice, whole and in regions") {
    const SquareLattice lattice(2.0, 3.0);
    auto checkLattice = [](const Measurements& m) {
        CHECK(m.stress(0, 0) == doctest::Approx(2.0).epsilon(1e-12));
        CHECK(m.stress(1, 1) == doctest::Approx(3.0).epsilon(1e-12));
        CHECK(std::abs(m.stress(0, 1)) < 1e-12);
        CHECK(m.pressure == doctest::Approx(2.5).epsilon(1e-12));
        CHECK(m.deviator == doctest::Approx(1.0).epsilon(1e-12));
        CHECK(m.fabric(0, 0) == doctest::Approx(0.5).epsilon(1e-15));
        CHECK(m.fabric(1, 1) == doctest::Approx(0.5).epsilon(1e-15));
        CHECK(m.fabric(2, 2) == 0.0);
        CHECK(m.fabric(0, 1) == 0.0);
        CHECK(m.coordination == 4.0);
        CHECK(m.coordinationNonRattlers == 4.0);
        CHECK(m.packingFraction == doctest::Approx(M_PI / 4).epsilon(1e-12));
    };
    SUBCASE("the whole cell") {
        const Measurements m = measure(lattice.world, lattice.contacts);
        CHECK(m.volume == 100.0);
        checkLattice(m);
    }
    // A region whose sides are whole pitches, anywhere: each row of bonds
    // crosses it with exactly its width, the disks' area inside is π/4 of it
    // (the lattice is periodic with period 1): the whole cell's values to rounding.
    SUBCASE("a 4 x 6 region off the lattice") {
        const MeasureRegion region{Vec3(1.3, 2.7, -5), Vec3(5.3, 8.7, 5)};
        const Measurements m = measure(lattice.world, lattice.contacts, &region);
        CHECK(m.volume == doctest::Approx(24.0));
        checkLattice(m);
    }
    SUBCASE("a region across the periodic boundary stands for its images") {
        const MeasureRegion region{Vec3(-2.2, 7.1, 0), Vec3(3.8, 12.1, 0)};
        const Measurements m = measure(lattice.world, lattice.contacts, &region);
        CHECK(m.volume == doctest::Approx(30.0));
        checkLattice(m);
    }
    // Sides that are not whole pitches: rows of bonds are counted whole or
    // not at all across the region's height, so σ_xx is off by up to one row
    // in the rows the region holds (here 4 or 5 rows for a height of 4.5:
    // up to 1/9 relative); the mean over the region's positions is exact
    // (here 5 rows for half of the offsets, 4 for the other half).
    SUBCASE("a 4.5 x 4.5 region: within one row of bonds") {
        double sum = 0.0;
        for (int k = 0; k < 10; ++k) {
            const double o = 0.1 * k + 0.05;
            const MeasureRegion region{Vec3(2 + o, 3 + o, 0), Vec3(6.5 + o, 7.5 + o, 0)};
            const Measurements m = measure(lattice.world, lattice.contacts, &region);
            CHECK(std::abs(m.stress(0, 0) / 2.0 - 1.0) <= 1.0 / 9.0 + 1e-12);
            sum += m.stress(0, 0);
        }
        CHECK(sum / 10 == doctest::Approx(2.0).epsilon(1e-12));
    }
}

TEST_CASE("measurements of a 3D cubic lattice over a region: packing fraction pi/6 from the sphere-box volumes") {
    World w;
    w.periodic = {true, true, true};
    w.boxMin = Vec3(0, 0, 0);
    w.boxMax = Vec3(6, 6, 6);
    for (int k = 0; k < 6; ++k)
        for (int j = 0; j < 6; ++j)
            for (int i = 0; i < 6; ++i) w.addGrain(Vec3(i + 0.5, j + 0.5, k + 0.5), 0.5, 1.0, 0.1);
    const MeasureRegion region{Vec3(0.3, -1.4, 2.05), Vec3(3.3, 1.6, 5.05)};  // 3 x 3 x 3, across the boundary
    const Measurements m = measure(w, {}, &region);
    CHECK(m.volume == doctest::Approx(27.0));
    CHECK(m.packingFraction == doctest::Approx(M_PI / 6).epsilon(1e-10));
    CHECK(measure(w, {}).packingFraction == doctest::Approx(M_PI / 6).epsilon(1e-14));
}

TEST_CASE("volumeInBox: caps, half and quarter disks, octants, and a box edge against fine slicing") {
    const Vec3 c(0.3, -0.2, 0.1);
    const double r = 0.7;
    auto box = [&](double x0, double y0, double z0, double x1, double y1, double z1) {
        return std::pair<Vec3, Vec3>(c + Vec3(x0, y0, z0), c + Vec3(x1, y1, z1));
    };
    const double far = 10.0;
    // 2D: whole, half, quarter, a segment r² acos(d/r) − d √(r² − d²).
    auto area = [&](const std::pair<Vec3, Vec3>& b) { return volumeInBox(c, r, b.first, b.second, 2); };
    CHECK(area(box(-far, -far, 0, far, far, 0)) == doctest::Approx(M_PI * r * r).epsilon(1e-14));
    CHECK(area(box(0, -far, 0, far, far, 0)) == doctest::Approx(M_PI * r * r / 2).epsilon(1e-14));
    CHECK(area(box(0, 0, 0, far, far, 0)) == doctest::Approx(M_PI * r * r / 4).epsilon(1e-14));
    const double d = 0.45;
    CHECK(area(box(-far, d, 0, far, far, 0)) ==
          doctest::Approx(r * r * std::acos(d / r) - d * std::sqrt(r * r - d * d)).epsilon(1e-13));
    CHECK(area(box(r, -far, 0, far, far, 0)) == 0.0);
    // 3D: whole, half, octant, a cap π h² (3r − h) / 3.
    auto volume = [&](const std::pair<Vec3, Vec3>& b) { return volumeInBox(c, r, b.first, b.second, 3); };
    const double sphere = 4.0 / 3.0 * M_PI * r * r * r;
    CHECK(volume(box(-far, -far, -far, far, far, far)) == doctest::Approx(sphere).epsilon(1e-12));
    CHECK(volume(box(-far, -far, 0, far, far, far)) == doctest::Approx(sphere / 2).epsilon(1e-12));
    CHECK(volume(box(0, 0, 0, far, far, far)) == doctest::Approx(sphere / 8).epsilon(1e-12));
    const double h = r - d;
    CHECK(volume(box(d, -far, -far, far, far, far)) == doctest::Approx(M_PI * h * h * (3 * r - h) / 3).epsilon(1e-12));
    // A box whose edge and corner cut the sphere: against 2·10⁵ slices of
    // the exact slice area (midpoint rule, error ~1e-11).
    const auto b = box(-0.2, 0.1, -0.5, 0.5, far, 0.35);
    double slices = 0.0;
    const int n = 200000;
    const double z0 = std::max(b.first.z(), c.z() - r), z1 = std::min(b.second.z(), c.z() + r), dz = (z1 - z0) / n;
    for (int k = 0; k < n; ++k) {
        const double z = z0 + (k + 0.5) * dz, rho = std::sqrt(r * r - (z - c.z()) * (z - c.z()));
        slices += dz * volumeInBox(Vec3(c.x(), c.y(), 0), rho, b.first, b.second, 2);
    }
    CHECK(volume(b) == doctest::Approx(slices).epsilon(1e-9));
    CHECK(volumeInBox(c, r, c + Vec3(-1, 0, 0), c + Vec3(0.35, 0, 0), 1) == doctest::Approx(1.05).epsilon(1e-15));
}

TEST_CASE("wall torques about the wall's point: known contacts on a floor") {
    World w;
    w.addGrain(Vec3(1, 2, 0.5), 0.5, 1.0, 0.1);
    w.addGrain(Vec3(-3, 1, 0.5), 0.5, 1.0, 0.1);
    w.addWall("floor", WallShape{}, Vec3(1, 1, 0), false, 0.0, {false, false, false});
    std::vector<Contact> contacts;
    for (const auto& [grain, force] : {std::pair(0, Vec3(0.1, 0, -2)), std::pair(1, Vec3(0, 0, -1))}) {
        Contact c = pairContact(grain, 2);
        c.n = Vec3(0, 0, -1);
        c.history.reaction = force;  // on the floor
        contacts.push_back(c);
    }
    const Measurements m = measure(w, contacts);
    CHECK(m.wallForce[0] == Vec3(0.1, 0, -3));
    // Levers from (1, 1, 0) to the contact points (1, 2, 0) and (−3, 1, 0):
    // (0, 1, 0) × (0.1, 0, −2) + (−4, 0, 0) × (0, 0, −1) = (−2, 0, −0.1) + (0, −4, 0).
    CHECK(m.wallTorque[0].x() == doctest::Approx(-2.0).epsilon(1e-15));
    CHECK(m.wallTorque[0].y() == doctest::Approx(-4.0).epsilon(1e-15));
    CHECK(m.wallTorque[0].z() == doctest::Approx(-0.1).epsilon(1e-15));
    // Fabric and coordination leave walls out.
    CHECK(m.fabric == Mat3::Zero());
    CHECK(m.coordination == 0.0);
}

TEST_CASE("per-grain stress: the grains' terms add up to the Love-Weber sum of touching grains") {
    World w;
    w.dimension = 2;
    w.addGrain(Vec3(0, 0, 0), 0.5, 1.0, 0.1);
    w.addGrain(Vec3(0.6, 0.8, 0), 0.5, 1.0, 0.1);
    w.addGrain(Vec3(1.2, 0, 0), 0.7, 1.0, 0.1);
    std::vector<Contact> contacts;
    auto add = [&](BodyId a, BodyId b, const Vec3& reaction) {
        Contact c = pairContact(a, b);
        c.n = (w.x[static_cast<std::size_t>(b)] - w.x[static_cast<std::size_t>(a)]).normalized();
        c.gap = (w.x[static_cast<std::size_t>(b)] - w.x[static_cast<std::size_t>(a)]).norm() - w.radius[0] -
                w.radius[static_cast<std::size_t>(b)];
        c.history.reaction = reaction;
        contacts.push_back(c);
    };
    add(0, 1, Vec3(0.3, 0.4, 0) * 2.0 + Vec3(-0.8, 0.6, 0) * 0.1);  // compression and friction
    add(0, 2, Vec3(1.5, 0, 0));
    const std::vector<Mat3> sigma = grainStress(w, contacts);
    // Grain 0: R ⊗ r n / (π r²) for both contacts.
    Mat3 expected0 = Mat3::Zero();
    for (const Contact& c : contacts) expected0 += c.history.reaction * (0.5 * c.n).transpose() / (M_PI * 0.25);
    CHECK((sigma[0] - expected0).norm() < 1e-14);
    CHECK(sigma[2](0, 0) == doctest::Approx(1.5 * 0.7 / (M_PI * 0.49)).epsilon(1e-14));
    CHECK(sigma[0](0, 0) > 0.0);  // compression positive
    // Σ V_i σ_i = Σ_c R ⊗ (r_a + r_b) n = Σ_c R ⊗ ℓ + R ⊗ (−gap) n.
    Mat3 sum = Mat3::Zero(), love = Mat3::Zero();
    for (std::size_t i = 0; i < 3; ++i) sum += M_PI * w.radius[i] * w.radius[i] * sigma[i];
    for (const Contact& c : contacts) {
        const Vec3 l = w.x[static_cast<std::size_t>(c.b)] - w.x[static_cast<std::size_t>(c.a)];
        love += c.history.reaction * (l - c.gap * c.n).transpose();
    }
    CHECK((sum - love).norm() < 1e-13);
}
