#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unistd.h>

#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/model/world.hpp"
#include "support/input_error.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
using moreau::test::errorOf;
using moreau::test::TempDir;

namespace {

/// Smallest centre distance minus the sum of radii over all pairs (brute force).
double minSurfaceGap(const std::vector<GrainSpec>& g) {
    double best = INFINITY;
    for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t j = i + 1; j < g.size(); ++j)
            best = std::min(best, (g[i].position - g[j].position).norm() - g[i].radius - g[j].radius);
    return best;
}

bool sameBits(const std::vector<GrainSpec>& a, const std::vector<GrainSpec>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::memcmp(a[i].position.data(), b[i].position.data(), 3 * sizeof(double)) != 0) return false;
        if (std::memcmp(&a[i].radius, &b[i].radius, sizeof(double)) != 0) return false;
    }
    return true;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("makeChain places touching grains along +x from the origin") {
    const auto g = makeChain(50, 0.5, 0.0, Vec3(1.5, 0, 0));
    REQUIRE(g.size() == 50);
    CHECK(g[0].position.isApprox(Vec3(1.5, 0, 0)));
    CHECK(g[49].position[0] == doctest::Approx(1.5 + 49.0).epsilon(1e-14));
    for (const GrainSpec& s : g) CHECK(s.radius == 0.5);
    CHECK(minSurfaceGap(g) == doctest::Approx(0.0).epsilon(1e-12));

    const auto spaced = makeChain(3, 1.0, 0.25);
    CHECK(spaced[2].position[0] == doctest::Approx(2 * 2.25).epsilon(1e-14));

    CHECK_THROWS_AS(makeChain(0, 0.5), InputError);
    CHECK_THROWS_AS(makeChain(5, 0.0), InputError);
    CHECK_THROWS_AS(makeChain(5, 0.5, -0.1), InputError);
}

TEST_CASE("makeLattice: counts, pitch and plane of each type") {
    SUBCASE("square") {
        LatticeParams p;
        p.type = LatticeType::Square;
        p.counts = {4, 3, 7};  // z count ignored in 2D
        p.radius = 0.5;
        p.spacing = 0.1;
        p.origin = Vec3(1, 2, 3);  // z ignored in 2D
        const auto g = makeLattice(p);
        REQUIRE(g.size() == 12);
        CHECK(g[0].position.isApprox(Vec3(1, 2, 0)));
        CHECK(g[1].position.isApprox(Vec3(2.1, 2, 0)));   // x fastest
        CHECK(g[4].position.isApprox(Vec3(1, 3.1, 0)));   // next row
        for (const GrainSpec& s : g) CHECK(s.position[2] == 0.0);
        CHECK(minSurfaceGap(g) == doctest::Approx(0.1).epsilon(1e-12));
    }
    SUBCASE("hex") {
        LatticeParams p;
        p.type = LatticeType::Hex;
        p.counts = {5, 4, 1};
        p.radius = 0.5;
        const auto g = makeLattice(p);
        REQUIRE(g.size() == 20);
        // Row 1 is shifted by half a pitch and lies sqrt(3)/2 pitch above row 0.
        CHECK(g[5].position[0] == doctest::Approx(0.5).epsilon(1e-14));
        CHECK(g[5].position[1] == doctest::Approx(std::sqrt(3.0) / 2).epsilon(1e-14));
        CHECK(g[10].position[0] == doctest::Approx(0.0).epsilon(1e-14));
        // Every grain touches its neighbours, none overlap.
        CHECK(minSurfaceGap(g) == doctest::Approx(0.0).epsilon(1e-12));
        CHECK((g[0].position - g[5].position).norm() == doctest::Approx(1.0).epsilon(1e-14));
    }
    SUBCASE("cubic") {
        LatticeParams p;
        p.type = LatticeType::Cubic;
        p.counts = {3, 4, 5};
        p.radius = 0.25;
        p.spacing = 0.5;
        const auto g = makeLattice(p);
        REQUIRE(g.size() == 60);
        CHECK(g[59].position.isApprox(Vec3(2, 3, 4)));  // pitch 1
        CHECK(minSurfaceGap(g) == doctest::Approx(0.5).epsilon(1e-12));
    }
    SUBCASE("invalid parameters") {
        LatticeParams p;
        p.counts = {2, 0, 2};
        CHECK_THROWS_AS(makeLattice(p), InputError);
        p.counts = {2, 2, 2};
        p.radius = -1;
        CHECK_THROWS_AS(makeLattice(p), InputError);
    }
}

namespace {
/// A lattice of `counts` with jitter (its seed `seed`).
LatticeParams jitteredLattice(LatticeType type, std::array<std::size_t, 3> counts, double radius, double spacing,
                              double jitter, std::uint64_t seed) {
    LatticeParams p;
    p.type = type;
    p.counts = counts;
    p.radius = radius;
    p.spacing = spacing;
    p.jitter = jitter;
    p.seed = seed;
    return p;
}
}  // namespace

TEST_CASE("lattice jitter is bounded, stays in the plane and is deterministic") {
    LatticeParams p = jitteredLattice(LatticeType::Square, {10, 10, 1}, 0.5, 0.2, 0.2, 42);
    LatticeParams still = p;
    still.jitter = 0.0;
    const auto a = makeLattice(p);
    const auto b = makeLattice(p);
    const auto base = makeLattice(still);
    CHECK(sameBits(a, b));
    double maxShift = 0;
    int moved = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Vec3 d = a[i].position - base[i].position;
        CHECK(a[i].position[2] == 0.0);
        maxShift = std::max(maxShift, d.cwiseAbs().maxCoeff());
        moved += d.norm() > 0 ? 1 : 0;
    }
    CHECK(maxShift <= 0.2 * 0.5);
    CHECK(maxShift > 0.05);  // not degenerate: 200 draws up to 0.1
    CHECK(moved == 100);
    p.seed = 43;
    CHECK_FALSE(sameBits(a, makeLattice(p)));
}

TEST_CASE("lattice jitter: one stream of draws in grain order, grain n made alone with the same bits") {
    for (const LatticeType type : {LatticeType::Hex, LatticeType::Cubic}) {
        const LatticeParams p = jitteredLattice(type, {7, 5, 4}, 0.4, 0.1, 0.3, 11);
        LatticeParams still = p;
        still.jitter = 0.0;
        // The draws as one stream walked grain after grain, axis after axis.
        std::vector<GrainSpec> walked = makeLattice(still);
        Rng rng = Rng::stream(p.seed, kLatticeJitterStream);
        const int freeAxes = type == LatticeType::Cubic ? 3 : 2;
        for (GrainSpec& g : walked)
            for (int a = 0; a < freeAxes; ++a) g.position[a] += rng.uniform(-0.3 * 0.4, 0.3 * 0.4);
        const std::vector<GrainSpec> made = makeLattice(p);
        CHECK(sameBits(made, walked));
        REQUIRE(latticeCount(p) == made.size());
        for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, made.size() - 1}) {
            CAPTURE(n);
            CHECK(sameBits({latticeGrain(p, n)}, {made[n]}));
        }
    }
}

TEST_CASE("random loose packing: count, radii, box, no overlap, determinism") {
    for (int dim : {1, 2, 3}) {
        CAPTURE(dim);
        RandomPackingParams p;
        p.dimension = dim;
        p.count = dim == 1 ? 20 : 400;
        p.rMin = 0.25;
        p.rMax = 0.5;
        p.boxMin = Vec3(-1, 2, 3);
        p.boxMax = dim == 1 ? Vec3(40, 0, 0) : Vec3(20, 22, 20);
        p.seed = 7;
        const auto g = makeRandomLoosePacking(p);
        REQUIRE(g.size() == p.count);
        double rLo = INFINITY, rHi = 0;
        for (const GrainSpec& s : g) {
            rLo = std::min(rLo, s.radius);
            rHi = std::max(rHi, s.radius);
            for (int a = 0; a < 3; ++a) {
                if (a < dim) {
                    CHECK(s.position[a] - s.radius >= p.boxMin[a]);
                    CHECK(s.position[a] + s.radius <= p.boxMax[a]);
                } else {
                    CHECK(s.position[a] == 0.0);
                }
            }
        }
        CHECK(rLo >= 0.25);
        CHECK(rHi <= 0.5);
        CHECK(rHi - rLo > 0.2);  // the range is used
        CHECK(minSurfaceGap(g) >= 0.0);
        CHECK(sameBits(g, makeRandomLoosePacking(p)));
        p.seed = 8;
        CHECK_FALSE(sameBits(g, makeRandomLoosePacking(p)));
    }
}

TEST_CASE("random loose packing: dense enough to need neighbour cells, still no overlap") {
    RandomPackingParams p;
    p.dimension = 2;
    p.count = 600;
    p.rMin = p.rMax = 0.5;
    p.boxMin = Vec3::Zero();
    p.boxMax = Vec3(35, 35, 0);  // packing fraction 600 * pi / 4 / 35^2 ≈ 0.38
    const auto g = makeRandomLoosePacking(p);
    REQUIRE(g.size() == 600);
    CHECK(minSurfaceGap(g) >= 0.0);
}

TEST_CASE("random loose packing: 100k spheres") {
    RandomPackingParams p;
    p.count = 100000;
    p.rMin = 0.4;
    p.rMax = 0.5;
    p.boxMax = Vec3(60, 60, 60);  // packing fraction ≈ 0.18
    const auto g = makeRandomLoosePacking(p);
    CHECK(g.size() == 100000);
}

TEST_CASE("random loose packing: a box too small says how many fit") {
    RandomPackingParams p;
    p.dimension = 2;
    p.count = 50;
    p.boxMax = Vec3(3, 3, 0);  // 9 disks of diameter 1 at the very most
    p.maxAttemptsPerGrain = 2000;
    const std::string msg = errorOf([&] { makeRandomLoosePacking(p); });
    CHECK(msg.find("only ") != std::string::npos);
    CHECK(msg.find(" of 50 grains fit") != std::string::npos);
    CHECK(msg.find("larger box") != std::string::npos);

    p.boxMax = Vec3(0.5, 3, 0);  // narrower than a diameter
    CHECK(errorOf([&] { makeRandomLoosePacking(p); }).find("narrower") != std::string::npos);
    p.boxMax = Vec3(3, 3, 0);
    p.rMax = 0.25;  // below rMin
    CHECK_THROWS_AS(makeRandomLoosePacking(p), InputError);
}

TEST_CASE("packing files: both row shapes, comments and blank lines") {
    std::istringstream in(
        "# a packing\n"
        "\n"
        "0 0 0 0.5\n"
        "   1.5 0 0 0.25   # trailing comment\n"
        "7 -1e-3 +2 3 1\n"
        "\t\n");
    const auto g = parsePacking(in, "test.txt");
    REQUIRE(g.size() == 3);
    CHECK(g[0].radius == 0.5);
    CHECK(g[1].position.isApprox(Vec3(1.5, 0, 0)));
    CHECK(g[1].radius == 0.25);
    CHECK(g[2].position[0] == -1e-3);
    CHECK(g[2].position[1] == 2.0);
    CHECK(g[2].radius == 1.0);
}

TEST_CASE("packing files: bad rows name file and line") {
    // Parsing `text` as p.txt throws an InputError that mentions `part`.
    auto refused = [](const std::string& text, const std::string& part) {
        std::istringstream in(text);
        const std::string m = errorOf([&] { parsePacking(in, "p.txt"); });
        CAPTURE(m);
        CHECK(m.find(part) != std::string::npos);
    };
    refused("0 0 0 1\n# c\n1 2 3\n", "'p.txt', line 3");
    refused("0 0 0 1\n# c\n1 2 3\n", "3 fields");
    refused("0 0 0 1\n0 0 0 1 1 1\n", "line 2");
    refused("0 0 x 1\n", "line 1: 'x' is not a finite number");
    refused("\n0 0 0 0\n", "line 2: radius 0 is not > 0");
    refused("0 0 0 -1\n", "line 1");
    refused("a 0 0 0 1\n", "line 1: id 'a' is not an integer");
    refused("0 0 nan 1\n", "line 1");
    refused("# nothing\n\n", "has no grains");
}

TEST_CASE("packing files on disk: read, write round trip, missing file") {
    TempDir dir;
    const std::string path = dir.write("p.txt", "1 0.1 0.2 0.3 0.4\n2 1.1 1.2 1.3 0.5\n");
    const auto g = readPackingFile(path);
    REQUIRE(g.size() == 2);
    CHECK(g[1].position.isApprox(Vec3(1.1, 1.2, 1.3)));

    RandomPackingParams p;
    p.count = 50;
    p.rMin = 0.3;
    const auto packing = makeRandomLoosePacking(p);
    const std::string out = (dir.path / "round.txt").string();
    writePackingFile(out, packing);
    CHECK(sameBits(readPackingFile(out), packing));

    const std::string missing = (dir.path / "missing.txt").string();
    CHECK(errorOf([&] { readPackingFile(missing); }) == "cannot read packing file '" + missing + "'");
}

TEST_CASE("grain mass and inertia of disks and spheres, and addGrains") {
    const double pi = std::acos(-1.0);
    CHECK(grainMass(GrainShape::Disk, 0.5, 2.0) == doctest::Approx(2.0 * pi * 0.25).epsilon(1e-14));
    CHECK(grainMass(GrainShape::Sphere, 0.5, 2.0) == doctest::Approx(2.0 * 4.0 / 3.0 * pi * 0.125).epsilon(1e-14));
    CHECK(grainInertia(GrainShape::Disk, 3.0, 2.0) == doctest::Approx(6.0).epsilon(1e-14));
    CHECK(grainInertia(GrainShape::Sphere, 5.0, 1.0) == doctest::Approx(2.0).epsilon(1e-14));

    World w;
    w.dimension = 2;
    addGrains(w, makeChain(3, 0.5), GrainShape::Disk, 1.0);
    addGrains(w, makeChain(1, 0.5), GrainShape::Disk, 1.0, 7.0);
    REQUIRE(w.numGrains == 4);
    CHECK(w.mass[0] == doctest::Approx(pi * 0.25).epsilon(1e-14));
    CHECK(w.mass[3] == 7.0);
    CHECK(w.inertia[3] == doctest::Approx(0.5 * 7.0 * 0.25).epsilon(1e-14));
    CHECK(w.invMass[3].isApprox(Vec3(1.0 / 7.0, 1.0 / 7.0, 0.0)));
}

}  // TEST_SUITE
