// Polygon shapes: mass properties against closed forms derived here (not by
// the shoelace sums the code uses), the vertex order and placement of the
// regular and random N-gons, and what makePolygonShape refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/polygon.hpp"
#include "support/input_error.hpp"

using namespace moreau;
using moreau::test::errorOf;

namespace {

constexpr double kPi = std::numbers::pi;

/// Every vertex turns left (counter-clockwise and convex).
bool convexCounterClockwise(const PolygonShape& s) {
    const std::size_t n = s.vertices();
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = (i + n - 1) % n, q = (i + 1) % n;
        const double turn = (s.vx[i] - s.vx[p]) * (s.vy[q] - s.vy[i]) - (s.vy[i] - s.vy[p]) * (s.vx[q] - s.vx[i]);
        if (!(turn > 0.0)) return false;
    }
    return true;
}

/// Centroid of the vertices as a region, by the triangle fan from vertex 0
/// (the centroid of each triangle is the mean of its corners).
void fanCentroid(const PolygonShape& s, double& cx, double& cy) {
    double a = 0.0;
    cx = cy = 0.0;
    for (std::size_t i = 1; i + 1 < s.vertices(); ++i) {
        const double t = 0.5 * ((s.vx[i] - s.vx[0]) * (s.vy[i + 1] - s.vy[0]) -
                                (s.vy[i] - s.vy[0]) * (s.vx[i + 1] - s.vx[0]));
        a += t;
        cx += t * (s.vx[0] + s.vx[i] + s.vx[i + 1]) / 3.0;
        cy += t * (s.vy[0] + s.vy[i] + s.vy[i + 1]) / 3.0;
    }
    cx /= a;
    cy /= a;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_SUITE("model") {

TEST_CASE("polygon shape: the unit square's area, centroid, moment and bounding radius") {
    // Given with its corner at the origin: the centroid (0.5, 0.5) in the given frame.
    const PolygonShape s = makePolygonShape({0, 0, 1, 0, 1, 1, 0, 1});
    CHECK(s.vertices() == 4);
    CHECK(s.area == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(s.momentPerMass == doctest::Approx(1.0 / 6.0).epsilon(1e-14));  // a²/6
    CHECK(s.boundingRadius == doctest::Approx(std::sqrt(0.5)).epsilon(1e-15));
    CHECK(std::abs(s.centroid.x() - 0.5) < 1e-15);
    CHECK(std::abs(s.centroid.y() - 0.5) < 1e-15);
    CHECK(s.centroid.z() == 0.0);
    // Moved to the centroid, order kept: vertex 0 is the given (0, 0).
    CHECK(std::abs(s.vx[0] + 0.5) < 1e-15);
    CHECK(std::abs(s.vy[0] + 0.5) < 1e-15);
    CHECK(std::abs(s.vx[2] - 0.5) < 1e-15);
    CHECK(std::abs(s.vy[2] - 0.5) < 1e-15);
}

TEST_CASE("polygon shape: regular N-gons against the closed forms") {
    // Area of N triangles of apex 2π/N and sides R = 1: (N/2) sin(2π/N).
    // Polar moment per mass: each triangle (0, P, Q) has ∫|x|² dA = A_t (|P|² + P·Q + |Q|²)/6
    // = A_t (2 + cos(2π/N))/6, and 2 + cos(2π/N) = 1 + 2cos²(π/N); for N = 4,
    // R² = a²/2 gives a²/6, the square's.
    for (int n : {3, 4, 5, 6, 7, 12, 63, 64}) {
        CAPTURE(n);
        const PolygonShape s = regularPolygon(n);
        REQUIRE(s.vertices() == static_cast<std::size_t>(n));
        CHECK(convexCounterClockwise(s));
        CHECK(s.area == doctest::Approx(0.5 * n * std::sin(2.0 * kPi / n)).epsilon(1e-14));
        const double c = std::cos(kPi / n);
        CHECK(s.momentPerMass == doctest::Approx((1.0 + 2.0 * c * c) / 6.0).epsilon(1e-14));
        CHECK(s.boundingRadius == doctest::Approx(1.0).epsilon(1e-15));
        CHECK(s.centroid.norm() < 1e-15);
        // The stored values agree with the general formulas of makePolygonShape.
        std::vector<double> xy;
        for (std::size_t k = 0; k < s.vertices(); ++k) {
            xy.push_back(s.vx[k]);
            xy.push_back(s.vy[k]);
        }
        const PolygonShape g = makePolygonShape(xy);
        CHECK(g.area == doctest::Approx(s.area).epsilon(1e-13));
        CHECK(g.momentPerMass == doctest::Approx(s.momentPerMass).epsilon(1e-13));
        CHECK(g.centroid.norm() < 1e-14);
        double cx, cy;
        fanCentroid(s, cx, cy);
        CHECK(std::hypot(cx, cy) < 1e-14);
        // Every vertex on the unit circle; vertex 0 at angle −π/2 + π/N.
        for (std::size_t k = 0; k < s.vertices(); ++k) CHECK(std::hypot(s.vx[k], s.vy[k]) == doctest::Approx(1.0));
        CHECK(s.vx[0] == doctest::Approx(std::cos(-kPi / 2 + kPi / n)).epsilon(1e-15));
        CHECK(s.vy[0] == doctest::Approx(std::sin(-kPi / 2 + kPi / n)).epsilon(1e-15));
        // The lowest edge is flat: vertices 0 and N−1 are the lowest, at one y exactly.
        CHECK(s.vy[0] == s.vy[static_cast<std::size_t>(n - 1)]);
        for (std::size_t k = 1; k + 1 < s.vertices(); ++k) CHECK(s.vy[k] > s.vy[0]);
    }
}

TEST_CASE("polygon shape: a right triangle's centroid and moment by hand") {
    // Legs a along x and b along y: area ab/2, centroid (a/3, b/3); about the
    // centroid I_x = ab³/36, I_y = a³b/36, so J/m = (a² + b²)/18.
    const double a = 3.0, b = 2.0;
    const PolygonShape s = makePolygonShape({0, 0, a, 0, 0, b});
    CHECK(s.area == doctest::Approx(a * b / 2).epsilon(1e-15));
    CHECK(s.centroid.x() == doctest::Approx(a / 3).epsilon(1e-15));
    CHECK(s.centroid.y() == doctest::Approx(b / 3).epsilon(1e-15));
    CHECK(s.momentPerMass == doctest::Approx((a * a + b * b) / 18).epsilon(1e-14));
    // The farthest vertex from the centroid: (a, 0), at √((2a/3)² + (b/3)²).
    CHECK(s.boundingRadius == doctest::Approx(std::hypot(2 * a / 3, b / 3)).epsilon(1e-15));
    double cx, cy;
    fanCentroid(s, cx, cy);
    CHECK(std::hypot(cx, cy) < 1e-15);
}

TEST_CASE("polygon shape: a clockwise list gives the counter-clockwise shape") {
    const std::vector<double> ccw{0, 0, 2, 0, 3, 1, 1, 2, -0.5, 1};
    const std::vector<double> cw{0, 0, -0.5, 1, 1, 2, 3, 1, 2, 0};  // the same, reversed after vertex 0
    const PolygonShape a = makePolygonShape(ccw), b = makePolygonShape(cw);
    REQUIRE(a.vertices() == b.vertices());
    CHECK(convexCounterClockwise(a));
    CHECK(convexCounterClockwise(b));
    CHECK(a.area == doctest::Approx(b.area).epsilon(1e-15));
    CHECK(a.momentPerMass == doctest::Approx(b.momentPerMass).epsilon(1e-15));
    CHECK((a.centroid - b.centroid).norm() < 1e-15);
    for (std::size_t k = 0; k < a.vertices(); ++k) {
        CHECK(std::abs(a.vx[k] - b.vx[k]) < 1e-15);
        CHECK(std::abs(a.vy[k] - b.vy[k]) < 1e-15);
    }
}

TEST_CASE("polygon shape: bad vertex lists are refused with one line naming the key") {
    const auto refusal = [](const std::vector<double>& xy) {
        return errorOf([&] { makePolygonShape(xy, "polygon.shape"); });
    };
    const double nan = std::nan("");
    struct Bad {
        const char* what;
        std::vector<double> xy;
        const char* says;
    };
    std::vector<double> many;
    for (int k = 0; k < 65; ++k) {
        many.push_back(std::cos(2 * kPi * k / 65));
        many.push_back(std::sin(2 * kPi * k / 65));
    }
    const std::vector<Bad> bad{
        {"2 vertices", {0, 0, 1, 0}, "2 vertices"},
        {"odd count", {0, 0, 1, 0, 1}, "x y pairs"},
        {"NaN", {0, 0, 1, nan, 0, 1}, "finite"},
        {"infinity", {0, 0, 1, 0, INFINITY, 1}, "finite"},
        {"collinear", {0, 0, 1, 1, 2, 2}, "zero area"},
        {"non-convex", {0, 0, 2, 0, 2, 2, 1, 0.5, 0, 2}, "vertex 4 turns clockwise"},
        {"non-convex, clockwise", {0, 0, 0, 2, 1, 0.5, 2, 2, 2, 0}, "vertex 3 turns counter-clockwise"},
        {"bow-tie", {0, 0, 1, 1, 1, 0, 0, 1}, "crosses itself"},
        {"pentagram", {0, 1, -0.588, -0.809, 0.951, 0.309, -0.951, 0.309, 0.588, -0.809}, "crosses itself"},
        {"repeated vertex", {0, 0, 1, 0, 1, 1, 1, 1, 0, 1}, "repeated"},
        {"vertex on an edge", {0, 0, 1, 0, 2, 0, 2, 2}, "strictly convex"},
        {"65 vertices", many, "65 vertices"},
    };
    for (const Bad& b : bad) {
        CAPTURE(b.what);
        const std::string e = refusal(b.xy);
        CAPTURE(e);
        CHECK(startsWith(e, "polygon.shape: "));
        CHECK(e.find(b.says) != std::string::npos);
        CHECK(e.find("allowed: a convex polygon, 3 to 64 vertices") != std::string::npos);
        CHECK(e.find('\n') == std::string::npos);
    }
    // The key is the caller's.
    CHECK(startsWith(errorOf([] { makePolygonShape({0, 0, 1, 0}, "shapes.7"); }), "shapes.7: "));
    CHECK(startsWith(errorOf([] { regularPolygon(2); }), "polygon.vertices: "));
    CHECK(startsWith(errorOf([] { regularPolygon(65, "grains.polygon"); }), "grains.polygon: "));
    CHECK(errorOf([] { regularPolygon(64); }) == "(no InputError)");
    // 64 vertices are allowed.
    many.resize(128);
    CHECK(errorOf([&] { makePolygonShape(many); }) == "(no InputError)");
}

TEST_CASE("polygon shape: random polygons are deterministic, convex and on their circle") {
    for (int n : {3, 5, 8, 64}) {
        CAPTURE(n);
        Rng r1(42), r2(42), r3(43);
        const PolygonShape a = randomPolygon(n, 0.7, r1), b = randomPolygon(n, 0.7, r2), c = randomPolygon(n, 0.7, r3);
        CHECK(a.vx == b.vx);
        CHECK(a.vy == b.vy);
        CHECK(a.vx != c.vx);
        CHECK(convexCounterClockwise(a));
        // The circle's centre is at −centroid in the shape's frame.
        for (std::size_t k = 0; k < a.vertices(); ++k)
            CHECK(std::hypot(a.vx[k] + a.centroid.x(), a.vy[k] + a.centroid.y()) ==
                  doctest::Approx(1.0).epsilon(1e-14));
        double cx, cy;
        fanCentroid(a, cx, cy);
        CHECK(std::hypot(cx, cy) < 1e-14);
        CHECK(a.area > 0.0);
        CHECK(a.area < 0.5 * n * std::sin(2.0 * kPi / n) + 1e-14);  // the regular one encloses the most
    }
}

TEST_CASE("polygon shape: irregularity 0 gives the regular polygon up to rounding") {
    for (int n : {3, 4, 9, 64}) {
        CAPTURE(n);
        Rng rng(7);
        const PolygonShape r = randomPolygon(n, 0.0, rng), s = regularPolygon(n);
        REQUIRE(r.vertices() == s.vertices());
        for (std::size_t k = 0; k < s.vertices(); ++k) {
            CHECK(std::abs(r.vx[k] - s.vx[k]) < 1e-14);
            CHECK(std::abs(r.vy[k] - s.vy[k]) < 1e-14);
        }
        CHECK(r.area == doctest::Approx(s.area).epsilon(1e-13));
        CHECK(r.momentPerMass == doctest::Approx(s.momentPerMass).epsilon(1e-13));
        CHECK(r.centroid.norm() < 1e-14);
    }
    Rng rng(1);
    CHECK(errorOf([&] { randomPolygon(5, 1.0, rng); }) != "(no InputError)");
    CHECK(errorOf([&] { randomPolygon(2, 0.5, rng); }) != "(no InputError)");
}

}  // TEST_SUITE
