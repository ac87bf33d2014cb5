#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"

using namespace moreau;

namespace {

constexpr std::array<bool, 3> kFixed{false, false, false};

BodyId addSphere(World& world, const Vec3& x, double r) { return world.addGrain(x, r, 1.0, 0.4 * r * r); }

WallShape plane(const Vec3& normal) {
    WallShape s;
    s.kind = ShapeKind::Plane;
    s.direction = normal.normalized();
    return s;
}

WallShape cylinder(const Vec3& axis, double radius, bool inside) {
    WallShape s;
    s.kind = ShapeKind::Cylinder;
    s.direction = axis.normalized();
    s.radius = radius;
    s.inside = inside;
    return s;
}

BodyId addFixedWall(World& world, const std::string& name, const WallShape& shape, const Vec3& x) {
    return world.addWall(name, shape, x, false, 0.0, kFixed);
}

/// Vectors equal to an absolute tolerance.
bool near(const Vec3& u, const Vec3& v, double eps = 1e-12) { return (u - v).norm() <= eps; }

/// Distance of `point` from the line through `p` along the unit vector `A`.
double distanceFromAxis(const Vec3& point, const Vec3& p, const Vec3& A) {
    const Vec3 rel = point - p;
    return (rel - rel.dot(A) * A).norm();
}

/// The cell grid must give exactly the brute-force set of keys, and the same
/// geometry to 1e-12. Reports the first mismatch instead of thousands.
void checkSameContacts(const std::vector<Contact>& got, const std::vector<Contact>& want) {
    REQUIRE(got.size() == want.size());
    std::size_t bad = 0, firstBad = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        const Contact& g = got[i];
        const Contact& w = want[i];
        const bool same = g.key == w.key && g.a == w.a && g.b == w.b && std::abs(g.gap - w.gap) <= 1e-12 &&
                          near(g.n, w.n) && g.history.age == 0;
        if (!same) {
            if (bad == 0) firstBad = i;
            ++bad;
        }
    }
    INFO("first mismatch at index " << firstBad);
    CHECK(bad == 0);
}

/// Signed distance of `point` from the surface of `wall` (plane: along its
/// normal; cylinder: radial distance from the axis minus the radius), with the
/// minimum image of point − x_wall.
double wallSurfaceDistance(const World& world, BodyId wall, const Vec3& point) {
    const WallShape& shape = world.wall(wall);
    const Vec3 rel = world.minimumImage(point - world.x[static_cast<std::size_t>(wall)]);
    if (shape.kind == ShapeKind::Plane) return rel.dot(shape.direction);
    return (rel - rel.dot(shape.direction) * shape.direction).norm() - shape.radius;
}

/// Conventions every candidate must satisfy (CD §2.4): a < b, key, a is a
/// grain, unit normal from a to b, gap < margin, and going gap·n from the
/// contact point on a's surface (x_a + r_a n) reaches b's surface: x_b − r_b n
/// for a grain (minimum image), a point of the plane or cylinder for a wall.
void checkConventions(const World& world, const std::vector<Contact>& contacts, double margin) {
    std::size_t bad = 0, firstBad = contacts.size();
    for (std::size_t i = 0; i < contacts.size(); ++i) {
        const Contact& c = contacts[i];
        const auto ia = static_cast<std::size_t>(c.a), ib = static_cast<std::size_t>(c.b);
        const Vec3 rel = world.minimumImage(world.x[ib] - world.x[ia]);
        const double scale = 1.0 + rel.norm();
        bool ok = c.a < c.b && c.key == makeContactKey(c.a, c.b) && !world.isWall(c.a) && c.gap < margin &&
                  std::abs(c.n.norm() - 1.0) < 1e-12;
        if (ok) {
            const Vec3 onA = contactPoint(world, c);
            const Vec3 onB = onA + c.gap * c.n;
            ok = near(onA, world.x[ia] + world.radius[ia] * c.n) &&
                 (world.isWall(c.b) ? std::abs(wallSurfaceDistance(world, c.b, onB)) <= 1e-11 * scale
                                    : near(onB, world.x[ia] + rel - world.radius[ib] * c.n, 1e-11 * scale));
        }
        if (i > 0) ok = ok && contacts[i - 1].key < c.key;
        if (!ok) {
            if (bad == 0) firstBad = i;
            ++bad;
        }
    }
    INFO("first violation at index " << firstBad);
    CHECK(bad == 0);
}

std::size_t countWallContacts(const World& world, const std::vector<Contact>& contacts, BodyId wall) {
    std::size_t n = 0;
    for (const Contact& c : contacts) n += (c.b == wall);
    (void)world;
    return n;
}

bool hasKey(const std::vector<Contact>& contacts, BodyId a, BodyId b) {
    for (const Contact& c : contacts)
        if (c.key == makeContactKey(a, b)) return true;
    return false;
}

/// Detect with the grid and with brute force; compare; return the grid's contacts.
std::vector<Contact> detectAndCompare(const World& world, double margin) {
    CellGridDetector detector;
    std::vector<Contact> grid, brute;
    detector.detect(world, margin, grid);
    detectBruteForce(world, margin, brute);
    checkSameContacts(grid, brute);
    checkConventions(world, grid, margin);
    return grid;
}

/// Random polydisperse grains, uniformly placed in [lo, hi) (overlaps allowed:
/// dense random configurations exercise every cell neighbourhood).
void addRandomGrains(World& world, Rng& rng, std::size_t n, const Vec3& lo, const Vec3& hi, double rmin,
                     double rmax) {
    for (std::size_t i = 0; i < n; ++i) {
        Vec3 x;
        for (int k = 0; k < 3; ++k) x[k] = lo[k] == hi[k] ? lo[k] : rng.uniform(lo[k], hi[k]);
        addSphere(world, x, rng.uniform(rmin, rmax));
    }
}

/// Sets omp threads for a scope and restores the previous value.
struct ThreadCount {
    int previous = omp_get_max_threads();
    explicit ThreadCount(int n) { omp_set_num_threads(n); }
    ~ThreadCount() { omp_set_num_threads(previous); }
};

}  // namespace

TEST_SUITE("contact") {

TEST_CASE("sphere-sphere kernel: gap, normal from lower to higher id, contact point") {
    World world;
    const Vec3 xa{1.0, -2.0, 0.5};
    const Vec3 d{1.0, 2.0, 2.0};  // |d| = 3
    addSphere(world, xa, 1.0);
    addSphere(world, xa + d, 1.5);
    const Vec3 n = d / 3.0;

    SUBCASE("separated by 0.5, inside the margin") {
        Contact c;
        REQUIRE(narrowSphereSphere(world, 0, 1, 0.6, c));
        CHECK(c.a == 0);
        CHECK(c.b == 1);
        CHECK(c.key == makeContactKey(0, 1));
        CHECK(c.gap == doctest::Approx(0.5).epsilon(1e-14));
        CHECK(near(c.n, n));
        CHECK(near(contactPoint(world, c), xa + 1.0 * n));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, world.x[1] - 1.5 * n));
        CHECK(near(leverArm(world, c, 0), 1.0 * n));
        CHECK(near(leverArm(world, c, 1), -1.5 * n));
    }
    SUBCASE("arguments in either order give the same contact") {
        Contact c1, c2;
        REQUIRE(narrowSphereSphere(world, 0, 1, 0.6, c1));
        REQUIRE(narrowSphereSphere(world, 1, 0, 0.6, c2));
        CHECK(c2.a == 0);
        CHECK(c2.b == 1);
        CHECK(near(c2.n, c1.n, 0.0));
        CHECK(c2.gap == c1.gap);
        CHECK(near(contactPoint(world, c2), contactPoint(world, c1), 0.0));
    }
    SUBCASE("outside the margin") {
        Contact c;
        CHECK_FALSE(narrowSphereSphere(world, 0, 1, 0.4, c));
    }
    SUBCASE("overlap") {
        world.x[1] = xa + 0.6 * d;  // |d| = 1.8, gap = -0.7
        Contact c;
        REQUIRE(narrowSphereSphere(world, 0, 1, 0.0, c));
        CHECK(c.gap == doctest::Approx(-0.7).epsilon(1e-14));
        CHECK(near(c.n, n));
    }
    SUBCASE("coincident centres still give a unit normal") {
        world.x[1] = xa;
        Contact c;
        REQUIRE(narrowSphereSphere(world, 0, 1, 0.0, c));
        CHECK(c.gap == doctest::Approx(-2.5).epsilon(1e-14));
        CHECK(c.n.norm() == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(near(contactPoint(world, c), xa + c.n));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, world.x[1] - 1.5 * c.n));
    }
}

TEST_CASE("sphere-sphere kernel across a periodic boundary uses the minimum image") {
    World world;
    world.periodic = {true, false, false};
    world.boxMin = {0.0, 0.0, 0.0};
    world.boxMax = {10.0, 5.0, 5.0};
    addSphere(world, {0.2, 1.0, 1.0}, 0.25);
    addSphere(world, {9.9, 1.0, 1.0}, 0.25);   // 0.3 away through the boundary
    addSphere(world, {30.3, 1.0, 1.0}, 0.25);  // three boxes further: 0.1 from grain 0
    Contact c;
    REQUIRE(narrowSphereSphere(world, 0, 1, 0.0, c));
    CHECK(c.gap == doctest::Approx(-0.2).epsilon(1e-12));
    CHECK(near(c.n, {-1.0, 0.0, 0.0}));  // from grain 0 towards the image of grain 1 at -0.1
    // On grain 0's side of the boundary, next to it; b's surface point in the image.
    CHECK(near(contactPoint(world, c), {-0.05, 1.0, 1.0}));
    CHECK(near(contactPoint(world, c) + c.gap * c.n, Vec3(9.9 - 10.0, 1.0, 1.0) - 0.25 * c.n));
    CHECK(near(leverArm(world, c, 1), {0.25, 0.0, 0.0}));
    REQUIRE(narrowSphereSphere(world, 0, 2, 0.0, c));
    CHECK(c.gap == doctest::Approx(-0.4).epsilon(1e-12));
    CHECK(near(c.n, {1.0, 0.0, 0.0}));
}

TEST_CASE("sphere-plane kernel") {
    World world;
    const Vec3 N = Vec3(1.0, 2.0, 2.0) / 3.0;
    const Vec3 p{1.0, 1.0, 1.0};
    const Vec3 t{2.0, -1.0, 0.0};  // t·N = 0: offset along the plane
    const BodyId g = addSphere(world, p + 0.8 * N + t, 0.5);
    const BodyId w = addFixedWall(world, "tilted", plane(N), p);

    SUBCASE("in front, gap 0.3") {
        Contact c;
        REQUIRE(narrowSphereWall(world, g, w, 0.31, c));
        CHECK(c.a == g);
        CHECK(c.b == w);
        CHECK(c.key == makeContactKey(g, w));
        CHECK(c.gap == doctest::Approx(0.3).epsilon(1e-14));
        CHECK(near(c.n, -N));
        CHECK(near(contactPoint(world, c), p + 0.3 * N + t));
        // gap·n further: the foot of the centre on the plane
        CHECK(near(contactPoint(world, c) + c.gap * c.n, p + t));
        CHECK(std::abs((contactPoint(world, c) + c.gap * c.n - p).dot(N)) < 1e-14);
        CHECK(near(leverArm(world, c, g), -0.5 * N));
        CHECK(leverArm(world, c, w) == Vec3::Zero());  // walls never rotate
        CHECK_FALSE(narrowSphereWall(world, g, w, 0.29, c));
    }
    SUBCASE("centre behind the plane is a deep overlap, not dropped") {
        world.x[0] = p - 0.2 * N + t;
        Contact c;
        REQUIRE(narrowSphereWall(world, g, w, 0.0, c));
        CHECK(c.gap == doctest::Approx(-0.7).epsilon(1e-14));
        CHECK(near(c.n, -N));
        CHECK(near(contactPoint(world, c), p - 0.7 * N + t));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, p + t));
    }
    SUBCASE("planes are infinite") {
        world.x[0] = p + 0.1 * N + 1e6 * t;
        Contact c;
        REQUIRE(narrowSphereWall(world, g, w, 0.0, c));
        CHECK(c.gap == doctest::Approx(-0.4).epsilon(1e-8));
    }
}

TEST_CASE("sphere-cylinder kernel, inside and outside") {
    World world;
    const Vec3 A = Vec3(0.0, 0.6, 0.8);
    const Vec3 e{1.0, 0.0, 0.0};  // e·A = 0
    const Vec3 p{1.0, 2.0, 3.0};
    addSphere(world, p + 2.5 * A + 3.0 * e, 1.0);  // ρ = 3
    const BodyId drum = addFixedWall(world, "drum", cylinder(A, 5.0, true), p);
    const BodyId post = addFixedWall(world, "post", cylinder(A, 1.5, false), p);

    SUBCASE("inside: gap = R - rho - r, n = e") {
        Contact c;
        REQUIRE(narrowSphereWall(world, 0, drum, 1.01, c));
        CHECK(c.b == drum);
        CHECK(c.gap == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(near(c.n, e));
        CHECK(near(contactPoint(world, c), p + 2.5 * A + 4.0 * e));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, p + 2.5 * A + 5.0 * e));
        CHECK(distanceFromAxis(contactPoint(world, c) + c.gap * c.n, p, A) == doctest::Approx(5.0).epsilon(1e-14));
        CHECK_FALSE(narrowSphereWall(world, 0, drum, 0.99, c));
    }
    SUBCASE("outside: gap = rho - R - r, n = -e") {
        Contact c;
        REQUIRE(narrowSphereWall(world, 0, post, 0.51, c));
        CHECK(c.b == post);
        CHECK(c.gap == doctest::Approx(0.5).epsilon(1e-14));
        CHECK(near(c.n, -e));
        CHECK(near(contactPoint(world, c), p + 2.5 * A + 2.0 * e));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, p + 2.5 * A + 1.5 * e));
        CHECK(distanceFromAxis(contactPoint(world, c) + c.gap * c.n, p, A) == doctest::Approx(1.5).epsilon(1e-14));
        CHECK_FALSE(narrowSphereWall(world, 0, post, 0.49, c));
    }
    SUBCASE("grain beyond the inside wall overlaps deeply") {
        world.x[0] = p - 4.0 * A + 5.5 * e;
        Contact c;
        REQUIRE(narrowSphereWall(world, 0, drum, 0.0, c));
        CHECK(c.gap == doctest::Approx(-1.5).epsilon(1e-14));
        CHECK(near(c.n, e));
        CHECK(near(contactPoint(world, c), p - 4.0 * A + 6.5 * e));
        CHECK(near(contactPoint(world, c) + c.gap * c.n, p - 4.0 * A + 5.0 * e));
    }
    SUBCASE("centre on the axis: any radial unit normal") {
        world.x[0] = p + 1.0 * A;
        Contact c;
        REQUIRE(narrowSphereWall(world, 0, post, 0.0, c));
        CHECK(c.gap == doctest::Approx(-2.5).epsilon(1e-14));
        CHECK(c.n.norm() == doctest::Approx(1.0).epsilon(1e-14));
        CHECK(std::abs(c.n.dot(A)) < 1e-14);
        CHECK(distanceFromAxis(contactPoint(world, c) + c.gap * c.n, p, A) == doctest::Approx(1.5).epsilon(1e-14));
    }
}

TEST_CASE("margin: a candidate needs gap strictly below the margin") {
    World world;
    addSphere(world, {0.0, 0.0, 0.0}, 0.5);
    addSphere(world, {1.25, 0.0, 0.0}, 0.5);   // gap 0.25 exactly
    addSphere(world, {10.0, 0.0, 0.75}, 0.5);  // 0.25 above the floor
    const BodyId floor = addFixedWall(world, "floor", plane({0, 0, 1}), {0.0, 0.0, 0.0});
    const double g = 0.25;
    CellGridDetector detector;
    std::vector<Contact> out;
    // The narrow phases and the detector at `margin` keep both pairs of gap g
    // (sphere-sphere 0-1, sphere-floor 2) or drop both.
    auto pairsAtGap = [&](double margin, bool kept) {
        Contact c;
        CHECK(narrowSphereSphere(world, 0, 1, margin, c) == kept);
        CHECK(narrowSphereWall(world, 2, floor, margin, c) == kept);
        detector.detect(world, margin, out);
        CHECK(hasKey(out, 0, 1) == kept);
        CHECK(hasKey(out, 2, floor) == kept);
    };

    SUBCASE("slightly above the gap: kept") { pairsAtGap(g + 1e-12, true); }
    SUBCASE("equal to the gap: dropped") { pairsAtGap(g, false); }
    SUBCASE("slightly below the gap: dropped") { pairsAtGap(g - 1e-12, false); }
    SUBCASE("the grain–floor contacts of grains 0 and 1 overlap and are always kept") {
        detector.detect(world, 0.0, out);
        CHECK(hasKey(out, 0, floor));
        CHECK(hasKey(out, 1, floor));
        CHECK(out.size() == 2);
    }
}

TEST_CASE("cell grid equals brute force: 3D polydisperse with planes and cylinders") {
    Rng rng(11);
    World world;
    world.dimension = 3;
    addRandomGrains(world, rng, 2500, {0, 0, 0}, {12, 12, 12}, 0.2, 0.6);
    const BodyId floor = addFixedWall(world, "floor", plane({0, 0, 1}), {0, 0, 0.3});
    const BodyId side = addFixedWall(world, "side", plane({-1, 0, 0}), {12, 0, 0});
    const BodyId tilted = addFixedWall(world, "tilted", plane({1, 1, 1}), {2, 2, 2});
    const BodyId drum = addFixedWall(world, "drum", cylinder({0, 0, 1}, 6.0, true), {6, 6, 0});
    const BodyId post = addFixedWall(world, "post", cylinder({1, 2, 3}, 1.5, false), {6, 6, 6});

    for (const double margin : {-0.05, 0.0, 0.05, 1.5}) {
        CAPTURE(margin);
        const auto contacts = detectAndCompare(world, margin);
        CHECK(contacts.size() > 2500);
        for (const BodyId w : {floor, side, tilted, drum, post}) CHECK(countWallContacts(world, contacts, w) > 10);
    }
}

TEST_CASE("cell grid equals brute force: 2D disks in a drum") {
    Rng rng(12);
    World world;
    world.dimension = 2;
    addRandomGrains(world, rng, 1500, {0, 0, 0}, {40, 40, 0}, 0.2, 0.8);
    const BodyId drum = addFixedWall(world, "drum", cylinder({0, 0, 1}, 20.0, true), {20, 20, 0});
    const BodyId floor = addFixedWall(world, "floor", plane({0, 1, 0}), {0, 1, 0});
    const BodyId post = addFixedWall(world, "post", cylinder({0, 0, 1}, 3.0, false), {20, 20, 0});
    for (const double margin : {0.0, 0.1}) {
        CAPTURE(margin);
        const auto contacts = detectAndCompare(world, margin);
        CHECK(contacts.size() > 1000);
        for (const BodyId w : {drum, floor, post}) CHECK(countWallContacts(world, contacts, w) > 5);
    }
}

TEST_CASE("cell grid equals brute force: 1D chain between two pistons") {
    Rng rng(13);
    World world;
    world.dimension = 1;
    double x = 0.0, rPrev = 0.0;
    for (int i = 0; i < 600; ++i) {
        const double r = rng.uniform(0.3, 0.7);
        x += rPrev + r + rng.uniform(-0.05, 0.1);
        addSphere(world, {x, 0.0, 0.0}, r);
        rPrev = r;
    }
    const BodyId left = addFixedWall(world, "left", plane({1, 0, 0}), {0.2, 0, 0});
    const BodyId right = addFixedWall(world, "right", plane({-1, 0, 0}), {x + rPrev + 0.01, 0, 0});
    for (const double margin : {0.0, 0.04, 3.0}) {
        CAPTURE(margin);
        const auto contacts = detectAndCompare(world, margin);
        CHECK(contacts.size() > 150);
        CHECK(countWallContacts(world, contacts, left) >= 1);
        CHECK(countWallContacts(world, contacts, right) >= (margin > 0.0 ? 1u : 0u));
    }
}

TEST_CASE("cell grid equals brute force: periodic axes, grains outside the primary box") {
    Rng rng(14);
    World world;
    world.dimension = 3;
    world.periodic = {true, true, false};
    world.boxMin = {-3.0, 1.0, 0.0};
    world.boxMax = {9.0, 11.0, 10.0};
    const Vec3 L = world.boxMax - world.boxMin;
    // Positions anywhere along the periodic axes, up to two boxes away.
    addRandomGrains(world, rng, 1500, {-3.0 - 2 * L.x(), 1.0 - 2 * L.y(), 0.0},
                    {9.0 + 2 * L.x(), 11.0 + 2 * L.y(), 10.0}, 0.25, 0.55);
    // Hand-made pairs touching through the x and y boundaries and a corner.
    const BodyId a1 = addSphere(world, {-2.9, 5.0, 5.0}, 0.2);
    const BodyId b1 = addSphere(world, {8.8, 5.0, 5.0}, 0.2);  // image at -3.2: gap -0.1
    const BodyId a2 = addSphere(world, {4.0, 10.95, 3.0}, 0.2);
    const BodyId b2 = addSphere(world, {4.0, 1.1 + 3 * L.y(), 3.0}, 0.2);  // 0.15 apart through y
    const BodyId a3 = addSphere(world, {-2.95, 1.05, 8.0}, 0.3);
    const BodyId b3 = addSphere(world, {8.95 - 5 * L.x(), 10.95, 8.0}, 0.3);  // through the corner
    const BodyId floor = addFixedWall(world, "floor", plane({0, 0, 1}), {0, 0, 0});
    const BodyId drum = addFixedWall(world, "roller", cylinder({1, 0, 0}, 1.0, false), {0, 6, 5});

    for (const double margin : {0.0, 0.1}) {
        CAPTURE(margin);
        const auto contacts = detectAndCompare(world, margin);
        CHECK(hasKey(contacts, a1, b1));
        CHECK(hasKey(contacts, a2, b2));
        CHECK(hasKey(contacts, a3, b3));
        CHECK(countWallContacts(world, contacts, floor) > 5);
        CHECK(countWallContacts(world, contacts, drum) > 5);
        // Many contacts must be found only through the minimum image.
        std::size_t across = 0;
        for (const Contact& c : contacts) {
            if (world.isWall(c.b)) continue;
            const Vec3 raw = world.x[static_cast<std::size_t>(c.b)] - world.x[static_cast<std::size_t>(c.a)];
            across += (std::abs(raw.x()) > 0.5 * L.x() || std::abs(raw.y()) > 0.5 * L.y());
        }
        CHECK(across > 500);
    }
}

TEST_CASE("cell grid equals brute force across a Lees-Edwards boundary, 2D and 3D, any offset") {
    // The image of the cell across +y lies δ further along x; the grid must
    // find the pairs through it as the O(n²) minimum image does, for offsets
    // near 0, within a cell, half the box and just below a whole box, with
    // grains also beyond the faces (binned as their images).
    Rng rng(16);
    for (const int dim : {2, 3}) {
        for (const double shift : {0.0, 0.37, 3.1, 6.0, 11.99}) {
            CAPTURE(dim);
            CAPTURE(shift);
            World world;
            world.dimension = dim;
            world.periodic = {true, true, dim == 3};
            world.boxMin = {-1.0, 2.0, 0.0};
            world.boxMax = {11.0, 12.0, dim == 3 ? 8.0 : 0.0};
            world.shearRate = 1e-3;  // Lees–Edwards on, whatever the offset
            world.shift = shift;
            const Vec3 L = world.boxMax - world.boxMin;
            addRandomGrains(world, rng, dim == 3 ? 1200 : 500, {-1.0, 2.0 - L.y(), 0.0},
                            {11.0, 12.0 + L.y(), dim == 3 ? 8.0 : 0.0}, 0.25, 0.55);
            // A pair touching only through the sheared face: b sits just above
            // the top face, δ along x from a, which sits just above the bottom.
            const BodyId a = addSphere(world, {2.0, 2.1, 1.0}, 0.3);
            const BodyId b = addSphere(world, {std::fmod(2.0 + shift + 0.1, L.x()) - 1.0 + 1.0, 11.8, 1.0}, 0.3);
            for (const double margin : {0.0, 0.15}) {
                CAPTURE(margin);
                const auto contacts = detectAndCompare(world, margin);
                CHECK(hasKey(contacts, a, b));
                std::size_t across = 0;
                for (const Contact& c : contacts) {
                    const Vec3 raw = world.x[static_cast<std::size_t>(c.b)] - world.x[static_cast<std::size_t>(c.a)];
                    across += std::abs(raw.y()) > 0.5 * L.y();
                }
                CHECK(across > 50);
            }
        }
    }
}

TEST_CASE("cell grid equals brute force: periodic box only a few cells long") {
    // reach = largest diameter + margin = 1.2; an x box of 2.5 holds 2 cells
    // (all pairs along x), 3.7 holds 3 (smallest wrapping grid), as does y.
    Rng rng(15);
    for (const double Lx : {2.5, 3.7, 5.0}) {
        CAPTURE(Lx);
        World world;
        world.dimension = 2;
        world.periodic = {true, true, false};
        world.boxMax = {Lx, 3.7, 0.0};
        addRandomGrains(world, rng, 40, {0, 0, 0}, {Lx, 3.7, 0}, 0.3, 0.5);
        world.radius[0] = 0.5;
        const auto contacts = detectAndCompare(world, 0.2);
        CHECK(contacts.size() > 20);
    }
}

TEST_CASE("periodic box shorter than twice the reach is refused") {
    World world;
    world.periodic = {false, true, false};
    world.boxMax = {10.0, 2.3, 10.0};
    addSphere(world, {1, 1, 1}, 0.5);
    addSphere(world, {5, 1, 1}, 0.5);
    CellGridDetector detector;
    std::vector<Contact> out;
    CHECK_THROWS_AS(detector.detect(world, 0.2, out), InputError);  // needs L > 2.4
    CHECK_NOTHROW(detector.detect(world, 0.1, out));                 // needs L > 2.2
}

TEST_CASE("cell grid equals brute force: sparse box (grains flown far away)") {
    Rng rng(16);
    World world;
    addRandomGrains(world, rng, 1000, {0, 0, 0}, {10, 10, 10}, 0.3, 0.5);
    const BodyId far1 = addSphere(world, {1e6, -2e5, 3.0}, 0.5);
    const BodyId far2 = addSphere(world, {1e6 + 0.9, -2e5, 3.0}, 0.5);
    addSphere(world, {-1e7, 5.0, 5.0}, 0.5);
    addSphere(world, {5.0, 5.0, 4e6}, 0.5);
    const BodyId floor = addFixedWall(world, "floor", plane({0, 0, 1}), {0, 0, 0});
    const auto contacts = detectAndCompare(world, 0.05);
    CHECK(hasKey(contacts, far1, far2));
    CHECK(hasKey(contacts, far1, floor) == false);
    CHECK(contacts.size() > 1000);
}

TEST_CASE("no grains, walls only, non-finite positions, very negative margins") {
    CellGridDetector detector;
    std::vector<Contact> out(3);
    World walls;
    addFixedWall(walls, "floor", plane({0, 0, 1}), {0, 0, 0});
    detector.detect(walls, 0.1, out);
    CHECK(out.empty());

    World world;
    addSphere(world, {0, 0, 0}, 0.5);
    addSphere(world, {0.9, 0, 0}, 0.5);
    addSphere(world, {std::nan(""), 0, 0}, 0.5);
    addSphere(world, {HUGE_VAL, 0, 0}, 0.5);
    detectAndCompare(world, 0.0);
    detector.detect(world, 0.0, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].key == makeContactKey(0, 1));

    // A margin so negative that no grain pair can qualify: only wall contacts.
    const BodyId floor = addFixedWall(world, "floor", plane({0, 0, 1}), {0, 0, 0});
    detector.detect(world, -1.0, out);
    CHECK(out.empty());
    detector.detect(world, -0.4, out);
    REQUIRE(out.size() == 2);
    CHECK(out[0].key == makeContactKey(0, floor));
    CHECK(out[1].key == makeContactKey(1, floor));
}

TEST_CASE("walls the narrow phase cannot handle are refused with a clear error") {
    World world;
    addSphere(world, {0, 0, 0}, 0.5);
    WallShape bad = plane({0, 0, 1});
    SUBCASE("non-unit direction") { bad.direction = {0, 0, 2}; }
    SUBCASE("sphere wall") { bad.kind = ShapeKind::Sphere; }
    addFixedWall(world, "lid", bad, {0, 0, 1});
    CellGridDetector detector;
    std::vector<Contact> out;
    CHECK_THROWS_WITH_AS(detector.detect(world, 0.1, out), doctest::Contains("'lid'"), InputError);
    CHECK_THROWS_AS(detectBruteForce(world, 0.1, out), InputError);
}

TEST_CASE("detection is identical for 1, 2 and 3 threads, and buffers are reused correctly") {
    Rng rng(17);
    World big;
    addRandomGrains(big, rng, 20000, {0, 0, 0}, {30, 30, 30}, 0.3, 0.6);
    addFixedWall(big, "floor", plane({0, 0, 1}), {0, 0, 0.5});
    addFixedWall(big, "drum", cylinder({0, 0, 1}, 15.0, true), {15, 15, 0});
    World small;
    addRandomGrains(small, rng, 300, {0, 0, 0}, {5, 5, 5}, 0.3, 0.6);

    CellGridDetector detector;
    std::vector<Contact> reference, small1, small2, out;
    {
        const ThreadCount one(1);
        detector.detect(big, 0.05, reference);
    }
    REQUIRE(reference.size() > 20000);
    for (const int threads : {2, 3}) {
        CAPTURE(threads);
        const ThreadCount count(threads);
        CellGridDetector fresh;
        fresh.detect(big, 0.05, out);
        REQUIRE(out.size() == reference.size());
        std::size_t diff = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
            const Contact& g = out[i];
            const Contact& r = reference[i];
            // Bit-identical, not merely close.
            diff += !(g.key == r.key && g.a == r.a && g.b == r.b && g.gap == r.gap && g.n == r.n);
        }
        CHECK(diff == 0);
    }
    // The same detector on a smaller world, then the big one again.
    detector.detect(small, 0.05, small1);
    detectBruteForce(small, 0.05, small2);
    checkSameContacts(small1, small2);
    detector.detect(big, 0.05, out);
    checkSameContacts(out, reference);
}

TEST_CASE("Verlet list over many chunks: the cell grid's contacts, the same bits for 1, 2 and 3 threads") {
    // ~60k listed pairs: several chunks of the narrow phase, appended in order.
    Rng rng(23);
    World world;
    addRandomGrains(world, rng, 20000, {0, 0, 0}, {30, 30, 30}, 0.3, 0.6);
    addFixedWall(world, "floor", plane({0, 0, 1}), {0, 0, 0.5});
    const World start = world;
    const double margin = 0.05, skin = 0.1;
    // Shrinking the packing about its centre closes gaps: the contact count
    // grows between calls (more output than last call), first without a
    // rebuild (moves < skin/2), then with one.
    const auto shrink = [&](double factor) {
        for (std::size_t i = 0; i < world.numGrains; ++i) world.x[i] = Vec3(15, 15, 15) + factor * (world.x[i] - Vec3(15, 15, 15));
    };
    const std::vector<double> factors{1.0, 0.999, 0.99};
    std::vector<std::vector<Contact>> reference;
    {
        CellGridDetector grid;
        world = start;
        for (double f : factors) {
            shrink(f);
            reference.emplace_back();
            grid.detect(world, margin, reference.back());
        }
    }
    REQUIRE(reference[0].size() > 20000);
    REQUIRE(reference[1].size() > reference[0].size());
    REQUIRE(reference[2].size() > reference[1].size());
    for (const int threads : {1, 2, 3}) {
        CAPTURE(threads);
        const ThreadCount count(threads);
        world = start;
        VerletListDetector verlet(skin), remembering(skin);
        std::vector<Contact> out, out2;
        std::vector<ContactMemory> previous, expected;
        for (std::size_t s = 0; s < factors.size(); ++s) {
            CAPTURE(s);
            shrink(factors[s]);
            verlet.detect(world, margin, out);
            // The one-pass form remembers what rememberContacts would have.
            for (std::size_t i = 0; i < out2.size(); ++i) {
                out2[i].history.reaction = Vec3(static_cast<double>(i), 1.0, 2.0);
                out2[i].history.age = static_cast<std::uint32_t>(i % 7);
            }
            rememberContacts(out2, expected);
            remembering.detect(world, margin, out2, previous);
            REQUIRE(previous.size() == expected.size());
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < previous.size(); ++i)
                wrong += !(previous[i].key == expected[i].key && previous[i].history.reaction == expected[i].history.reaction &&
                           previous[i].history.age == expected[i].history.age);
            CHECK(wrong == 0);
            checkSameContacts(out2, out);
            REQUIRE(out.size() == reference[s].size());
            std::size_t diff = 0;
            for (std::size_t i = 0; i < out.size(); ++i) {
                const Contact& g = out[i];
                const Contact& r = reference[s][i];
                diff += !(g.key == r.key && g.a == r.a && g.b == r.b && g.gap == r.gap && g.n == r.n &&
                          g.history.age == 0 && g.history.reaction == Vec3::Zero());
            }
            CHECK(diff == 0);
        }
        CHECK(verlet.builds() == 2);
    }
    // The pairs of detectPairs are the keys of detect.
    CellGridDetector grid;
    std::vector<CellGridDetector::Pair> pairs;
    grid.detectPairs(world, margin, pairs);
    REQUIRE(pairs.size() == reference.back().size());
    std::size_t diff = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i)
        diff += makeContactKey(pairs[i].a, pairs[i].b) != reference.back()[i].key;
    CHECK(diff == 0);
    // Released buffers are allocated again by the next call.
    grid.releaseBuffers();
    std::vector<Contact> again;
    grid.detect(world, margin, again);
    checkSameContacts(again, reference.back());
}

TEST_CASE("matchContacts carries history, starts new contacts clean and drops vanished ones") {
    const auto make = [](BodyId a, BodyId b, double reactionX, std::uint32_t age) {
        Contact c;
        c.a = a;
        c.b = b;
        c.key = makeContactKey(a, b);
        c.history.reaction = {reactionX, 2.0 * reactionX, -reactionX};
        c.history.age = age;
        return c;
    };
    const std::vector<Contact> previous{make(0, 1, 1.0, 4), make(0, 3, 2.0, 1), make(2, 5, 3.0, 0),
                                        make(7, 9, 4.0, 9)};
    std::vector<Contact> current{make(0, 1, 0.0, 0), make(1, 2, 0.0, 0), make(2, 5, 0.0, 0),
                                 make(6, 7, 0.0, 0), make(7, 9, 0.0, 0), make(8, 9, 0.0, 0)};
    current[1].history.reaction = {9.0, 9.0, 9.0};  // stale data in a new contact is cleared
    matchContacts(previous, current);
    REQUIRE(current.size() == 6);
    CHECK(current[0].history.reaction == Vec3(1.0, 2.0, -1.0));
    CHECK(current[0].history.age == 5);
    CHECK(current[1].history.reaction == Vec3::Zero());
    CHECK(current[1].history.age == 0);
    CHECK(current[2].history.reaction.x() == 3.0);
    CHECK(current[2].history.age == 1);
    CHECK(current[3].history.age == 0);
    CHECK(current[3].history.reaction == Vec3::Zero());
    CHECK(current[4].history.reaction.x() == 4.0);
    CHECK(current[4].history.age == 10);
    CHECK(current[5].history.age == 0);
    CHECK(current[5].history.reaction == Vec3::Zero());

    std::vector<Contact> none;
    matchContacts(previous, none);
    CHECK(none.empty());
    std::vector<Contact> fresh{make(0, 1, 0.0, 0)};
    matchContacts({}, fresh);
    CHECK(fresh[0].history.age == 0);
}

TEST_CASE("matchContactMemory carries each contact's whole record: history and the laws' slots") {
    const auto make = [](BodyId a, BodyId b, double reactionX) {
        Contact c;
        c.a = a;
        c.b = b;
        c.key = makeContactKey(a, b);
        c.history.reaction = {reactionX, 0.0, 0.0};
        return c;
    };
    const std::vector<Contact> previous{make(0, 1, 1.0), make(0, 3, 2.0), make(2, 5, 3.0), make(7, 9, 4.0)};
    std::vector<ContactMemory> memory{ContactMemory{}};  // stale content is replaced
    rememberContacts(previous, memory);
    REQUIRE(memory.size() == previous.size());
    // Two slots per contact (say an MD law's memory), indexed like `previous`.
    const ContactSlots previousSlots{2, {1, 10, 2, 20, 3, 30, 4, 40}};
    const std::vector<Contact> candidates{make(0, 1, 0.0), make(1, 2, 0.0), make(2, 5, 0.0),
                                          make(6, 7, 0.0), make(7, 9, 0.0), make(8, 9, 0.0)};

    SUBCASE("slots of matched contacts, zeros for new ones; history as without slots") {
        std::vector<Contact> current = candidates, plain = candidates;
        ContactSlots slots{5, std::vector<double>(17, 42.0)};  // stale stride, size and content are replaced
        matchContactMemory(memory, previousSlots, current, slots);
        matchContacts(previous, plain);
        CHECK(slots.stride == 2);
        CHECK(slots.values == std::vector<double>{1, 10, 0, 0, 3, 30, 0, 0, 4, 40, 0, 0});
        REQUIRE(current.size() == plain.size());
        for (std::size_t k = 0; k < current.size(); ++k) {
            CAPTURE(k);
            CHECK(current[k].key == plain[k].key);
            CHECK(current[k].history.reaction == plain[k].history.reaction);
            CHECK(current[k].history.age == plain[k].history.age);
        }
        CHECK(current[4].history.reaction.x() == 4.0);
        CHECK(current[4].history.age == 1);
    }
    SUBCASE("empty lists") {
        ContactSlots slots{2, {5, 6}};
        std::vector<Contact> none;
        matchContactMemory(memory, previousSlots, none, slots);
        CHECK(slots.values.empty());
        std::vector<Contact> current = candidates;
        matchContactMemory({}, ContactSlots{2, {}}, current, slots);
        CHECK(slots.values == std::vector<double>(2 * candidates.size(), 0.0));
    }
    SUBCASE("no slots: the history alone") {
        std::vector<Contact> current = candidates;
        matchContactMemory(memory, current);
        CHECK(current[2].history.reaction.x() == 3.0);
        CHECK(current[1].history.age == 0);
    }
}

TEST_CASE("detect, match, detect: contacts persist through the store") {
    World world;
    addSphere(world, {0, 0, 0}, 0.5);
    addSphere(world, {1.0, 0, 0}, 0.5);
    addSphere(world, {2.05, 0, 0}, 0.5);
    CellGridDetector detector;
    std::vector<Contact> previous, current;
    detector.detect(world, 0.1, previous);
    REQUIRE(previous.size() == 2);
    previous[0].history.reaction = {1, 2, 3};
    world.x[2] = {3.0, 0, 0};  // the (1, 2) contact opens beyond the margin
    addSphere(world, {3.0, 1.05, 0}, 0.5);  // a new (2, 3) contact
    detector.detect(world, 0.1, current);
    std::vector<ContactMemory> memory;
    rememberContacts(previous, memory);
    ContactSlots slots;
    matchContactMemory(memory, ContactSlots{1, {7.0, 8.0}}, current, slots);
    REQUIRE(current.size() == 2);
    CHECK(current[0].key == makeContactKey(0, 1));
    CHECK(current[0].history.reaction == Vec3(1, 2, 3));
    CHECK(current[0].history.age == 1);
    CHECK(current[1].key == makeContactKey(2, 3));
    CHECK(current[1].history.reaction == Vec3::Zero());
    CHECK(current[1].history.age == 0);
    CHECK(slots.values == std::vector<double>{7.0, 0.0});
}

}  // TEST_SUITE
