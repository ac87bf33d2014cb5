// Polygon geometry: vertex–edge contact points (contact dynamics) and the
// overlap region (molecular dynamics) between two polygons and between a
// polygon and a half-plane, against configurations whose answer is known by
// hand, plus properties every answer must have (each point's partner lies on
// the other polygon's boundary; swapping A and B only flips n).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "moreau/contact/polygon_geometry.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/polygon.hpp"

using namespace moreau;

namespace {

constexpr double kPi = std::numbers::pi;

/// A shape placed in the plane, owning its world vertices.
struct Placed {
    std::vector<double> x, y;
    PlacedPolygon view() const { return {x.data(), y.data(), x.size()}; }
};

Placed place(const PolygonShape& s, double size, double angle, double cx, double cy) {
    Placed p;
    p.x.resize(s.vertices());
    p.y.resize(s.vertices());
    placePolygon(s.vx.data(), s.vy.data(), s.vertices(), size, std::cos(angle), std::sin(angle), cx, cy, p.x.data(),
                 p.y.data());
    return p;
}

/// The square of side `a` centred at (cx, cy), turned by `angle`: vertex 0 is
/// the lower left corner at angle 0, then counter-clockwise.
Placed square(double cx, double cy, double a = 1.0, double angle = 0.0) {
    static const PolygonShape unit = makePolygonShape({-0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5, 0.5});
    return place(unit, a, angle, cx, cy);
}

bool near(const Vec3& u, const Vec3& v, double eps = 1e-12) { return (u - v).norm() <= eps; }

/// Distance from (px, py) to the boundary of p (the nearest edge segment).
double distanceToBoundary(const Placed& p, double px, double py) {
    double best = INFINITY;
    for (std::size_t i = 0; i < p.x.size(); ++i) {
        const std::size_t j = (i + 1) % p.x.size();
        const double ex = p.x[j] - p.x[i], ey = p.y[j] - p.y[i];
        const double t = std::clamp(((px - p.x[i]) * ex + (py - p.y[i]) * ey) / (ex * ex + ey * ey), 0.0, 1.0);
        best = std::min(best, std::hypot(p.x[i] + t * ex - px, p.y[i] + t * ey - py));
    }
    return best;
}

/// The point of `pt` on its vertex's polygon and on the other one.
void pointsOf(const VertexEdgePoint& pt, const Placed& a, const Placed& b, Vec3& onA, Vec3& onB) {
    if (pt.vertexOfB) {
        onB = Vec3(b.x[static_cast<std::size_t>(pt.vertex)], b.y[static_cast<std::size_t>(pt.vertex)], 0.0);
        onA = onB - pt.gap * pt.n;
    } else {
        onA = Vec3(a.x[static_cast<std::size_t>(pt.vertex)], a.y[static_cast<std::size_t>(pt.vertex)], 0.0);
        onB = onA + pt.gap * pt.n;
    }
}

}  // namespace

TEST_SUITE("contact") {

TEST_CASE("polygon placement: scale, turn and move the unit vertices") {
    const double vx[2] = {1.0, 0.0}, vy[2] = {0.0, 2.0};
    double x[2], y[2];
    const double t = 0.3;
    placePolygon(vx, vy, 2, 2.0, std::cos(t), std::sin(t), 5.0, -1.0, x, y);
    CHECK(x[0] == doctest::Approx(5.0 + 2.0 * std::cos(t)).epsilon(1e-15));
    CHECK(y[0] == doctest::Approx(-1.0 + 2.0 * std::sin(t)).epsilon(1e-15));
    CHECK(x[1] == doctest::Approx(5.0 - 4.0 * std::sin(t)).epsilon(1e-15));
    CHECK(y[1] == doctest::Approx(-1.0 + 4.0 * std::cos(t)).epsilon(1e-15));
}

TEST_CASE("polygon contact points: two squares face to face, both orders") {
    const double g = 0.1;
    const Placed a = square(0.5, 0.5), b = square(1.5 + g, 0.5);  // A's right face, B's left face
    VertexEdgePoint pt[2];
    SUBCASE("A first: B's corners on A's face") {
        REQUIRE(polygonContactPoints(a.view(), b.view(), 0.2, pt) == 2);
        for (const VertexEdgePoint& p : pt) {
            CHECK(p.vertexOfB);
            CHECK(p.gap == doctest::Approx(g).epsilon(1e-12));
            CHECK(near(p.n, Vec3(1, 0, 0), 1e-15));
        }
        CHECK(pt[0].vertex == 0);  // B's lower left corner (1 + g, 0)
        CHECK(pt[1].vertex == 3);  // B's upper left corner (1 + g, 1)
    }
    SUBCASE("B first: the same points seen from the other side") {
        REQUIRE(polygonContactPoints(b.view(), a.view(), 0.2, pt) == 2);
        for (const VertexEdgePoint& p : pt) {
            CHECK(p.vertexOfB);  // A's corners, A now the second argument
            CHECK(p.gap == doctest::Approx(g).epsilon(1e-12));
            CHECK(near(p.n, Vec3(-1, 0, 0), 1e-15));
        }
        CHECK(pt[0].vertex == 2);  // A's upper right corner
        CHECK(pt[1].vertex == 1);  // A's lower right corner
    }
    SUBCASE("beyond the margin: none") {
        CHECK(polygonContactPoints(a.view(), b.view(), 0.09, pt) == 0);
        CHECK(polygonContactPoints(b.view(), a.view(), 0.09, pt) == 0);
    }
}

TEST_CASE("polygon contact points: faces half offset give one vertex of each") {
    const double g = 0.05;
    const Placed a = square(0.5, 0.5), b = square(1.5 + g, 1.0);  // B half a side higher
    VertexEdgePoint pt[2];
    REQUIRE(polygonContactPoints(a.view(), b.view(), 0.1, pt) == 2);
    CHECK(pt[0].vertexOfB);
    CHECK(pt[0].vertex == 0);  // B's lower left corner (1 + g, 0.5) on A's face
    CHECK(!pt[1].vertexOfB);
    CHECK(pt[1].vertex == 2);  // A's upper right corner (1, 1) against B's face
    for (const VertexEdgePoint& p : pt) {
        CHECK(p.gap == doctest::Approx(g).epsilon(1e-12));
        CHECK(near(p.n, Vec3(1, 0, 0), 1e-15));
    }
}

TEST_CASE("polygon contact points: the corner of a turned square on a face") {
    // B turned by 45°: its vertex 0 points down, at (0.5, 1 + g) above A's top face.
    const double g = 0.02;
    const Placed a = square(0.5, 0.5), b = square(0.5, 1.0 + g + std::sqrt(0.5), 1.0, kPi / 4);
    VertexEdgePoint pt[2];
    REQUIRE(polygonContactPoints(a.view(), b.view(), 0.1, pt) == 1);
    CHECK(pt[0].vertexOfB);
    CHECK(pt[0].vertex == 0);
    CHECK(pt[0].gap == doctest::Approx(g).epsilon(1e-12));
    CHECK(near(pt[0].n, Vec3(0, 1, 0), 1e-15));
    REQUIRE(polygonContactPoints(b.view(), a.view(), 0.1, pt) == 1);
    CHECK(!pt[0].vertexOfB);
    CHECK(pt[0].vertex == 0);
    CHECK(pt[0].gap == doctest::Approx(g).epsilon(1e-12));
    CHECK(near(pt[0].n, Vec3(0, -1, 0), 1e-15));
}

TEST_CASE("polygon contact points: overlapping faces give negative gaps") {
    const double d = 0.03;
    const Placed a = square(0.5, 0.5), b = square(1.5 - d, 0.5);
    VertexEdgePoint pt[2];
    REQUIRE(polygonContactPoints(a.view(), b.view(), 0.0, pt) == 2);
    for (const VertexEdgePoint& p : pt) {
        CHECK(p.gap == doctest::Approx(-d).epsilon(1e-12));
        CHECK(near(p.n, Vec3(1, 0, 0), 1e-15));
    }
}

TEST_CASE("polygon contact points: coincident corners give no duplicate points") {
    VertexEdgePoint pt[2];
    SUBCASE("two equal squares stacked: exactly 2 points") {
        const Placed a = square(0.5, 0.5), b = square(0.5, 1.5);
        REQUIRE(polygonContactPoints(a.view(), b.view(), 0.01, pt) == 2);
        Vec3 a0, b0, a1, b1;
        pointsOf(pt[0], a, b, a0, b0);
        pointsOf(pt[1], a, b, a1, b1);
        CHECK((a0 - a1).norm() == doctest::Approx(1.0).epsilon(1e-12));  // the two ends of the face
        for (const VertexEdgePoint& p : pt) {
            CHECK(p.gap == doctest::Approx(0.0));
            CHECK(near(p.n, Vec3(0, 1, 0), 1e-15));
        }
    }
    SUBCASE("corner on corner: exactly 1 point") {
        const Placed a = square(0.5, 0.5), b = square(1.5, 1.5);
        REQUIRE(polygonContactPoints(a.view(), b.view(), 0.01, pt) == 1);
        Vec3 onA, onB;
        pointsOf(pt[0], a, b, onA, onB);
        CHECK(near(onA, Vec3(1, 1, 0)));
        CHECK(near(onB, Vec3(1, 1, 0)));
    }
    SUBCASE("a smaller square flush with a corner of the larger") {
        const Placed a = square(0.5, 0.5), b = square(0.25, 1.25, 0.5);
        REQUIRE(polygonContactPoints(a.view(), b.view(), 0.01, pt) == 2);
        CHECK(pt[0].vertexOfB);
        CHECK(pt[1].vertexOfB);
        CHECK(pt[0].vertex != pt[1].vertex);
    }
}

TEST_CASE("polygon contact points: every point's partner lies on the other polygon's boundary") {
    // Random convex polygons of assorted sizes, turned at random and moved
    // along a random direction until their separating gap is about δ; each
    // point: a vertex of one, the partner (vertex ± gap n) on the other's edge.
    Rng rng(2024);
    int points = 0, pairs = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const int na = 3 + static_cast<int>(rng.below(10)), nb = 3 + static_cast<int>(rng.below(10));
        const PolygonShape sa = randomPolygon(na, 0.6, rng), sb = randomPolygon(nb, 0.6, rng);
        const double size = rng.uniform(0.5, 2.0), dir = rng.uniform(0.0, 2 * kPi);
        const Placed a = place(sa, 1.0, rng.uniform(0.0, 2 * kPi), 0.0, 0.0);
        const double angleB = rng.uniform(0.0, 2 * kPi);
        // Bisect the centre distance to touching, then back off by δ along the same direction.
        double lo = 0.0, hi = 2.0 + 2.0 * size;  // the shapes lie within 2 size of their centroids
        for (int it = 0; it < 60; ++it) {
            const double mid = 0.5 * (lo + hi);
            const Placed b = place(sb, size, angleB, mid * std::cos(dir), mid * std::sin(dir));
            Overlap o;
            (polygonOverlap(a.view(), b.view(), o) ? lo : hi) = mid;
        }
        const double delta = rng.uniform(-0.05, 0.05);
        const double dist = hi + delta;
        const Placed b = place(sb, size, angleB, dist * std::cos(dir), dist * std::sin(dir));
        VertexEdgePoint pt[2];
        const double margin = 0.1;
        const int n = polygonContactPoints(a.view(), b.view(), margin, pt);
        pairs += n > 0;
        for (int k = 0; k < n; ++k) {
            CAPTURE(trial);
            CAPTURE(k);
            ++points;
            CHECK(pt[k].gap <= margin);
            CHECK(std::abs(pt[k].n.norm() - 1.0) < 1e-14);
            CHECK(pt[k].n.z() == 0.0);
            Vec3 onA, onB;
            pointsOf(pt[k], a, b, onA, onB);
            CHECK(distanceToBoundary(a, onA.x(), onA.y()) < 1e-9);
            CHECK(distanceToBoundary(b, onB.x(), onB.y()) < 1e-9);
        }
        if (n == 2) {  // two different places
            Vec3 a0, b0, a1, b1;
            pointsOf(pt[0], a, b, a0, b0);
            pointsOf(pt[1], a, b, a1, b1);
            CHECK((a0 - a1).norm() > 1e-9);
        }
    }
    CHECK(pairs > 300);  // most configurations within the margin have a point (626 points over 400 pairs)
    CHECK(points > pairs);
}

TEST_CASE("polygon half-plane points: a square on a floor, flat and tilted") {
    const Vec3 o(0, 0, 0), m(0, 1, 0);  // grains live at y ≥ 0
    VertexEdgePoint pt[4];
    const double h = 0.01;
    SUBCASE("flat: its two lower corners") {
        const Placed a = square(0.5, 0.5 + h);
        REQUIRE(polygonHalfPlanePoints(a.view(), o, m, 0.05, pt) == 2);
        CHECK(pt[0].vertex == 0);
        CHECK(pt[1].vertex == 1);
        for (int k = 0; k < 2; ++k) {
            CHECK(!pt[k].vertexOfB);
            CHECK(pt[k].gap == doctest::Approx(h).epsilon(1e-12));
            CHECK(near(pt[k].n, Vec3(0, -1, 0), 0.0));
        }
        CHECK(polygonHalfPlanePoints(a.view(), o, m, 0.005, pt) == 0);
    }
    SUBCASE("tilted by 0.1 rad: its lowest corner") {
        const double t = 0.1;
        // Turned by t, corner 0 is the lowest, at height cy − (cos t + sin t)/2;
        // corner 1 is sin t higher, beyond the margin.
        const Placed a = square(0.5, h + 0.5 * (std::cos(t) + std::sin(t)), 1.0, t);
        REQUIRE(polygonHalfPlanePoints(a.view(), o, m, 0.05, pt) == 1);
        CHECK(pt[0].vertex == 0);
        CHECK(pt[0].gap == doctest::Approx(h).epsilon(1e-12));
    }
}

TEST_CASE("polygon overlap: two squares overlapping by a rectangle") {
    const Placed a = square(0.5, 0.5), b = square(1.2, 0.9);  // B = [0.7, 1.7] × [0.4, 1.4]
    Overlap o;
    REQUIRE(polygonOverlap(a.view(), b.view(), o));
    // [0.7, 1] × [0.4, 1]; the boundaries cross at (1, 0.4) and (0.7, 1).
    CHECK(o.area == doctest::Approx(0.3 * 0.6).epsilon(1e-13));
    CHECK(near(o.centroid, Vec3(0.85, 0.7, 0), 1e-14));
    const bool order = near(o.p1, Vec3(1, 0.4, 0));
    CHECK(near(order ? o.p1 : o.p2, Vec3(1, 0.4, 0), 1e-14));
    CHECK(near(order ? o.p2 : o.p1, Vec3(0.7, 1, 0), 1e-14));
    CHECK(o.chord == doctest::Approx(std::sqrt(0.45)).epsilon(1e-13));
    CHECK(near(o.n, Vec3(2, 1, 0) / std::sqrt(5.0), 1e-14));  // ⟂ (−0.3, 0.6), towards B

    SUBCASE("swapping A and B: the same region, n negated") {
        Overlap s;
        REQUIRE(polygonOverlap(b.view(), a.view(), s));
        CHECK(s.area == doctest::Approx(o.area).epsilon(1e-14));
        CHECK(near(s.centroid, o.centroid, 1e-14));
        CHECK(near(s.n, -o.n, 1e-14));
        CHECK(s.chord == doctest::Approx(o.chord).epsilon(1e-14));
    }
}

TEST_CASE("polygon overlap: equal aligned squares pressed face to face, both orders") {
    // The boundaries overlap along the sides x = 0 and x = 1; the crossings
    // are the ends of one of the two faces, either way a chord of length 1
    // normal to y.
    const double d = 0.02;
    const Placed a = square(0.5, 0.5), b = square(0.5, 1.5 - d);
    Overlap ab, ba;
    REQUIRE(polygonOverlap(a.view(), b.view(), ab));
    REQUIRE(polygonOverlap(b.view(), a.view(), ba));
    for (const Overlap* o : {&ab, &ba}) {
        CHECK(o->area == doctest::Approx(d).epsilon(1e-12));
        CHECK(near(o->centroid, Vec3(0.5, 1 - d / 2, 0), 1e-14));
        CHECK(o->chord == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(std::abs(o->p1.y() - o->p2.y()) < 1e-15);
    }
    CHECK(near(ab.n, Vec3(0, 1, 0), 1e-15));
    CHECK(near(ba.n, Vec3(0, -1, 0), 1e-15));
}

TEST_CASE("polygon overlap: a triangle cutting a square's corner") {
    const Placed a = square(0.5, 0.5);
    Placed b;
    b.x = {0.3, 1.3, 2.0};  // its first edge on x + y = 1.6
    b.y = {1.3, 0.3, 2.0};
    Overlap o;
    REQUIRE(polygonOverlap(a.view(), b.view(), o));
    // The corner triangle (1, 0.6), (1, 1), (0.6, 1): legs 0.4.
    CHECK(o.area == doctest::Approx(0.08).epsilon(1e-13));
    CHECK(near(o.centroid, Vec3(2.6 / 3, 2.6 / 3, 0), 1e-14));
    CHECK(o.chord == doctest::Approx(0.4 * std::sqrt(2.0)).epsilon(1e-13));
    CHECK(near(o.n, Vec3(1, 1, 0) / std::sqrt(2.0), 1e-14));
    CHECK(std::abs(o.p1.x() + o.p1.y() - 1.6) < 1e-14);
    CHECK(std::abs(o.p2.x() + o.p2.y() - 1.6) < 1e-14);
}

TEST_CASE("polygon overlap: identical polygons, one inside the other, none") {
    Overlap o;
    SUBCASE("identical squares") {
        const Placed a = square(0.5, 0.5);
        REQUIRE(polygonOverlap(a.view(), a.view(), o));
        CHECK(o.area == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(near(o.centroid, Vec3(0.5, 0.5, 0), 1e-14));
        CHECK(std::abs(o.n.norm() - 1.0) < 1e-14);
        CHECK(std::isfinite(o.chord));
    }
    SUBCASE("identical turned polygons") {
        const PolygonShape s = regularPolygon(7);
        const Placed a = place(s, 1.3, 0.37, 0.2, -0.1);
        REQUIRE(polygonOverlap(a.view(), a.view(), o));
        CHECK(o.area == doctest::Approx(1.69 * s.area).epsilon(1e-12));
        CHECK(near(o.centroid, Vec3(0.2, -0.1, 0), 1e-12));
        CHECK(std::abs(o.n.norm() - 1.0) < 1e-12);
        CHECK(std::isfinite(o.chord));
        CHECK(std::isfinite(o.p1.norm() + o.p2.norm()));
    }
    SUBCASE("a small square inside a big one: its own area, no crossing") {
        const Placed a = square(0.0, 0.0, 4.0), b = square(0.5, 0.25, 1.0);
        REQUIRE(polygonOverlap(a.view(), b.view(), o));
        CHECK(o.area == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(near(o.centroid, Vec3(0.5, 0.25, 0), 1e-14));
        CHECK(o.chord == 0.0);
        CHECK(std::abs(o.n.norm() - 1.0) < 1e-14);
    }
    SUBCASE("apart, and touching along a face: no overlap") {
        CHECK(!polygonOverlap(square(0.5, 0.5).view(), square(1.6, 0.5).view(), o));
        CHECK(o.area == 0.0);
        CHECK(!polygonOverlap(square(0.5, 0.5).view(), square(1.5, 0.5).view(), o));
        CHECK(!polygonOverlap(square(0.5, 0.5).view(), square(1.5, 1.5).view(), o));
    }
}

TEST_CASE("polygon overlap: swapping A and B gives the same region and n negated") {
    Rng rng(99);
    int overlapping = 0;
    for (int trial = 0; trial < 300; ++trial) {
        CAPTURE(trial);
        const PolygonShape sa = randomPolygon(3 + static_cast<int>(rng.below(12)), 0.8, rng);
        const PolygonShape sb = randomPolygon(3 + static_cast<int>(rng.below(12)), 0.8, rng);
        const Placed a = place(sa, 1.0, rng.uniform(0, 2 * kPi), 0.0, 0.0);
        const double size = rng.uniform(0.3, 1.5);
        const Placed b = place(sb, size, rng.uniform(0, 2 * kPi), rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5));
        Overlap ab, ba;
        const bool hit = polygonOverlap(a.view(), b.view(), ab);
        REQUIRE(hit == polygonOverlap(b.view(), a.view(), ba));
        if (!hit) continue;
        ++overlapping;
        CHECK(ab.area == doctest::Approx(ba.area).epsilon(1e-12));
        CHECK(ab.area <= std::min(sa.area, sb.area * size * size) * (1 + 1e-12));
        CHECK(near(ab.centroid, ba.centroid, 1e-12));
        CHECK(ab.chord == doctest::Approx(ba.chord).epsilon(1e-12));
        if (ab.chord > 1e-6) CHECK(near(ab.n, -ba.n, 1e-9));
        CHECK(std::abs(ab.n.norm() - 1.0) < 1e-12);
        // The crossings lie on both boundaries.
        if (ab.chord == 0.0) continue;
        CHECK(distanceToBoundary(a, ab.p1.x(), ab.p1.y()) < 1e-12);
        CHECK(distanceToBoundary(b, ab.p1.x(), ab.p1.y()) < 1e-12);
        CHECK(distanceToBoundary(a, ab.p2.x(), ab.p2.y()) < 1e-12);
        CHECK(distanceToBoundary(b, ab.p2.x(), ab.p2.y()) < 1e-12);
    }
    CHECK(overlapping > 50);
}

TEST_CASE("polygon half-plane overlap: a square sunk into a floor") {
    const Vec3 o(0, 0, 0), m(0, 1, 0);
    const double a = 2.0, d = 0.3;
    Overlap ov;
    REQUIRE(polygonHalfPlaneOverlap(square(1.0, 1.0 - d, a).view(), o, m, ov));  // [0, 2] × [−0.3, 1.7]
    CHECK(ov.area == doctest::Approx(a * d).epsilon(1e-13));
    CHECK(near(ov.centroid, Vec3(1.0, -d / 2, 0), 1e-14));
    CHECK(near(ov.n, Vec3(0, -1, 0), 0.0));
    CHECK(ov.chord == doctest::Approx(a).epsilon(1e-14));
    CHECK(std::abs(ov.p1.y()) < 1e-15);
    CHECK(std::abs(ov.p2.y()) < 1e-15);
    CHECK(std::min(ov.p1.x(), ov.p2.x()) == doctest::Approx(0.0));
    CHECK(std::max(ov.p1.x(), ov.p2.x()) == doctest::Approx(a));

    SUBCASE("a corner sunk into a tilted wall: a right isosceles triangle") {
        // The wall's line through (1, 1) at 45°, grains on the side of m = (1, 1)/√2;
        // a square turned so its corner 0 points at the wall, sunk by h along m.
        const Vec3 mt = Vec3(1, 1, 0) / std::sqrt(2.0), ot(1, 1, 0);
        const double h = 0.2;
        const Placed sq = square(0.0, 0.0, 1.0, 0.0);  // corner 0 at (−0.5, −0.5), pointing along −m
        const Vec3 corner(-0.5, -0.5, 0);
        const Vec3 shift = ot - h * mt - corner;
        Placed moved = sq;
        for (std::size_t k = 0; k < 4; ++k) {
            moved.x[k] += shift.x();
            moved.y[k] += shift.y();
        }
        REQUIRE(polygonHalfPlaneOverlap(moved.view(), ot, mt, ov));
        // The sunk part is the corner's right triangle with height h: base 2h, area h².
        CHECK(ov.area == doctest::Approx(h * h).epsilon(1e-12));
        CHECK(near(ov.centroid, ot - (h / 3) * mt, 1e-13));  // depths 0, 0, h
        CHECK(ov.chord == doctest::Approx(2 * h).epsilon(1e-12));
        CHECK(near(ov.n, -mt, 0.0));
    }
    SUBCASE("above the floor: none") {
        CHECK(!polygonHalfPlaneOverlap(square(1.0, 1.01, a).view(), o, m, ov));
        CHECK(ov.area == 0.0);
    }
}

}  // TEST_SUITE

TEST_CASE("polygon contact points: two convex polygons that overlap always have a point") {
    // Random pairs of random polygons placed near the reach of their
    // circles, kept where the clip finds an area (slight overlaps mostly):
    // CD must see each such pair (else a body passes into another).
    Rng rng(7);
    int overlapping = 0, missed = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        Rng ra = Rng::stream(11, static_cast<std::uint64_t>(trial), 1), rb = Rng::stream(11, static_cast<std::uint64_t>(trial), 2);
        const PolygonShape pa = randomPolygon(3 + static_cast<int>(rng.uniform() * 6), 0.9 * rng.uniform(), ra);
        const PolygonShape pb = randomPolygon(3 + static_cast<int>(rng.uniform() * 6), 0.9 * rng.uniform(), rb);
        double ax[64], ay[64], bx[64], by[64];
        const double ta = 6.3 * rng.uniform(), tb = 6.3 * rng.uniform();
        const double r = 1.6 + 0.4 * rng.uniform(), phi = 6.3 * rng.uniform();  // near the edge of reach: slight overlaps
        placePolygon(pa.vx.data(), pa.vy.data(), pa.vertices(), 1.0, std::cos(ta), std::sin(ta), 0.0, 0.0, ax, ay);
        placePolygon(pb.vx.data(), pb.vy.data(), pb.vertices(), 1.0, std::cos(tb), std::sin(tb), r * std::cos(phi),
                     r * std::sin(phi), bx, by);
        const PlacedPolygon A{ax, ay, pa.vertices()}, B{bx, by, pb.vertices()};
        Overlap o;
        if (!polygonOverlap(A, B, o)) continue;
        ++overlapping;
        VertexEdgePoint pts[2];
        if (polygonContactPoints(A, B, 0.0, pts) == 0) ++missed;
    }
    CHECK(overlapping > 1000);
    CHECK(missed == 0);
}

TEST_CASE("separating axis: two squares' overlap along x, and apart beyond the margin") {
    Vec3 n;
    double gap = 0.0;
    // Side by side, overlapping by 0.1 along x, offset by 0.3 along y: the
    // axis is A's right face (n = +x), the separation −0.1.
    REQUIRE(polygonSeparatingAxis(square(0.5, 0.5).view(), square(1.4, 0.8).view(), 0.0, n, gap));
    CHECK(near(n, Vec3(1, 0, 0), 1e-15));
    CHECK(gap == doctest::Approx(-0.1).epsilon(1e-12));
    // B first: the same axis from B's side, n from B to A (−x).
    REQUIRE(polygonSeparatingAxis(square(1.4, 0.8).view(), square(0.5, 0.5).view(), 0.0, n, gap));
    CHECK(near(n, Vec3(-1, 0, 0), 1e-15));
    CHECK(gap == doctest::Approx(-0.1).epsilon(1e-12));
    // Apart by 0.2: found within a margin of 0.25, not within 0.15.
    REQUIRE(polygonSeparatingAxis(square(0.5, 0.5).view(), square(1.7, 0.5).view(), 0.25, n, gap));
    CHECK(gap == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(!polygonSeparatingAxis(square(0.5, 0.5).view(), square(1.7, 0.5).view(), 0.15, n, gap));
    // A square turned by 45° above another, its corner 0.05 into the top face.
    const double h = 0.5 * std::sqrt(2.0);
    REQUIRE(polygonSeparatingAxis(square(0.5, 0.5).view(), square(0.5, 1.0 + h - 0.05, 1.0, kPi / 4).view(), 0.0, n,
                                  gap));
    CHECK(near(n, Vec3(0, 1, 0), 1e-12));
    CHECK(gap == doctest::Approx(-0.05).epsilon(1e-9));
}
