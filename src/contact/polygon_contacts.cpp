/// The narrow phase and the lever arms of polygons (docs/polygons.md): a
/// World's polygons placed at their poses and handed to the geometry of
/// contact/polygon_geometry.hpp.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "moreau/contact/contact.hpp"
#include "moreau/contact/polygon_geometry.hpp"

namespace moreau {

namespace {
/// Polygon i placed at `centre` (its own centre, or an image of it) with its
/// pose's angle, into x, y (room for kMaxPolygonVertices).
PlacedPolygon place(const World& world, std::size_t i, const Vec3& centre, double* x, double* y) {
    const PolygonShape& p = *world.polygonOf(i);
    double c, s;
    angleCosSin(world.q[i], c, s);
    placePolygon(p.vx.data(), p.vy.data(), p.vertices(), world.size[i], c, s, centre.x(), centre.y(), x, y);
    return {x, y, p.vertices()};
}

/// The offset of polygon i's vertex k from its centre, world frame.
Vec3 vertexOffset(const World& world, std::size_t i, unsigned k) {
    const PolygonShape& p = *world.polygonOf(i);
    double c, s, x, y;
    angleCosSin(world.q[i], c, s);
    placePolygon(&p.vx[k], &p.vy[k], 1, world.size[i], c, s, 0.0, 0.0, &x, &y);
    return {x, y, 0.0};
}

/// x_b − x_a in the minimum image (0 for a wall: its points are absolute).
Vec3 separation(const World& world, BodyId a, BodyId b) {
    return world.minimumImageNear(world.x[static_cast<std::size_t>(b)] - world.x[static_cast<std::size_t>(a)]);
}
}  // namespace

int polygonContacts(const World& world, BodyId a, BodyId b, double margin, Contact* out) {
    assert(a < b && !world.isWall(a));
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    // Every grain of a world with polygons is one (Simulation refuses others);
    // a grain that is not touches nothing here.
    if (!world.polygonOf(ia) || (!world.isWall(b) && !world.polygonOf(ib))) return 0;
    if (world.isWall(b) && world.wall(b).kind != ShapeKind::Plane) return 0;
    double ax[kMaxPolygonVertices], ay[kMaxPolygonVertices];
    VertexEdgePoint pts[kMaxPolygonVertices];
    double bx[kMaxPolygonVertices], by[kMaxPolygonVertices];
    int found = 0;
    if (world.isWall(b)) {
        const WallShape& wall = world.wall(b);
        const double reach = world.radius[ia] + margin;
        if ((world.x[ia] - world.x[ib]).dot(wall.direction) > reach) return 0;
        const PlacedPolygon A = place(world, ia, world.x[ia], ax, ay);
        found = polygonHalfPlanePoints(A, world.x[ib], wall.direction, margin, pts);
    } else {
        const Vec3 d = separation(world, a, b);
        const double reach = world.radius[ia] + world.radius[ib] + margin;
        if (d.squaredNorm() > reach * reach) return 0;
        const PlacedPolygon A = place(world, ia, world.x[ia], ax, ay);
        const PlacedPolygon B = place(world, ib, world.x[ia] + d, bx, by);
        found = polygonContactPoints(A, B, margin, pts);
    }
    if (found == 0) return 0;
    if (world.polygonOverlaps) {
        // One contact per pair, with the deepest point's normal and gap (the
        // separating axis's): the force stage finds the overlap itself, once
        // per evaluation (polygonOverlapGeometry), and writes its normal and
        // equivalent gap into the contact.
        int deepest = 0;
        for (int k = 1; k < found; ++k)
            if (pts[k].gap < pts[deepest].gap) deepest = k;
        Contact& c = out[0];
        c = Contact{};
        c.key = makeContactKey(a, b, kOverlapFeature);
        c.a = a;
        c.b = b;
        c.n = pts[deepest].n;
        c.gap = pts[deepest].gap;
        return 1;
    }
    for (int k = 0; k < found; ++k) {
        Contact& c = out[k];
        c = Contact{};
        const std::uint32_t f = (pts[k].vertexOfB ? kVertexOfB : 0u) | static_cast<std::uint32_t>(pts[k].vertex);
        c.key = makeContactKey(a, b, f);
        c.a = a;
        c.b = b;
        c.n = pts[k].n;
        c.gap = pts[k].gap;
    }
    std::sort(out, out + found, [](const Contact& l, const Contact& r) { return l.key < r.key; });
    return found;
}

PolygonOverlapGeometry polygonOverlapGeometry(const World& world, const Contact& c) {
    const auto ia = static_cast<std::size_t>(c.a);
    const bool wall = world.isWall(c.b);
    const Vec3 d = wall ? Vec3::Zero() : separation(world, c.a, c.b);  // x_b − x_a, minimum image
    double ax[kMaxPolygonVertices], ay[kMaxPolygonVertices];
    const PlacedPolygon A = place(world, ia, Vec3::Zero(), ax, ay);  // about a's centre
    Overlap o;
    bool overlapping = false;
    if (wall) {
        const Vec3 origin = world.x[static_cast<std::size_t>(c.b)] - world.x[ia];
        overlapping = polygonHalfPlaneOverlap(A, origin, world.wall(c.b).direction, o);
    } else {
        double bx[kMaxPolygonVertices], by[kMaxPolygonVertices];
        const PlacedPolygon B = place(world, static_cast<std::size_t>(c.b), d, bx, by);
        overlapping = polygonOverlap(A, B, o);
    }
    PolygonOverlapGeometry g;
    if (!overlapping) {  // apart: no force; any point will do
        g.la = wall ? Vec3::Zero() : Vec3(0.5 * d);
        g.lb = wall ? Vec3::Zero() : Vec3(g.la - d);
        g.n = c.n;
        g.gap = std::max(c.gap, 0.0);
        return g;
    }
    g.la = o.centroid;
    g.lb = wall ? Vec3::Zero() : Vec3(o.centroid - d);
    g.n = o.n;
    g.gap = -o.area / (contactRadius(world, c, c.a) + contactRadius(world, c, c.b));
    return g;
}

void polygonLeverArms(const World& world, const Contact& c, Vec3& la, Vec3& lb) {
    const std::uint32_t f = keyFeature(c.key);
    if (f == kOverlapFeature) {
        const PolygonOverlapGeometry g = polygonOverlapGeometry(world, c);
        la = g.la;
        lb = g.lb;
        return;
    }
    const bool wall = world.isWall(c.b);
    const Vec3 d = wall ? Vec3::Zero() : separation(world, c.a, c.b);  // x_b − x_a, minimum image
    const bool ofB = (f & kVertexOfB) != 0;
    const BodyId owner = ofB ? c.b : c.a;
    const Vec3 v = vertexOffset(world, static_cast<std::size_t>(owner), f & (kVertexOfB - 1u));
    // The point on the other body: the vertex moved by the gap along n
    // (towards b for a's vertex, towards a for b's).
    la = ofB ? Vec3(d + v - c.gap * c.n) : v;
    lb = wall ? Vec3::Zero() : ofB ? v : Vec3(v + c.gap * c.n - d);
}

Vec3 polygonLeverArm(const World& world, const Contact& c, BodyId body) {
    assert(body == c.a || body == c.b);
    if (world.isWall(body)) return Vec3::Zero();  // walls never rotate
    Vec3 la, lb;
    polygonLeverArms(world, c, la, lb);
    return body == c.a ? la : lb;
}

}  // namespace moreau
