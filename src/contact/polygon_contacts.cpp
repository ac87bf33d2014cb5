/// The narrow phase and the lever arms of polygons (docs/polygons.md): a
/// World's polygons placed at their poses and handed to the geometry of
/// contact/polygon_geometry.hpp.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <new>

#include "moreau/contact/contact.hpp"
#include "moreau/contact/polygon_geometry.hpp"
#include "moreau/contact/shape_poses.hpp"

namespace moreau {

namespace {
/// Polygon i turned on the spot (turnPolygon), for callers without a
/// ShapePoses: the same bits as a ShapePoses' polygon(i).
struct TurnedPolygon {
    double x[kMaxPolygonVertices], y[kMaxPolygonVertices], nx[kMaxPolygonVertices], ny[kMaxPolygonVertices];
    PlacedPolygon view;
    TurnedPolygon(const World& world, std::size_t i) : view(turnPolygon(world, i, x, y, nx, ny)) {}
};

/// Turned polygon b moved by d: its vertices plus d into x, y (room for
/// kMaxPolygonVertices); its normals and extent do not change.
PlacedPolygon moved(const PlacedPolygon& b, const Vec3& d, double* x, double* y) {
    for (std::size_t k = 0; k < b.n; ++k) {
        x[k] = b.x[k] + d.x();
        y[k] = b.y[k] + d.y();
    }
    return {x, y, b.n, b.nx, b.ny, b.extent};
}

/// The offset of polygon i's vertex k from its centre, world frame
/// (turnPolygon's arithmetic for that vertex).
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

/// A contact of a and b with no history, constructed at c (the caller's
/// room may be raw storage: see polygonContacts).
Contact& fresh(Contact& place, BodyId a, BodyId b, std::uint32_t feature, const Vec3& n, double gap) {
    Contact& c = *::new (static_cast<void*>(&place)) Contact();
    c.key = makeContactKey(a, b, feature);
    c.a = a;
    c.b = b;
    c.n = n;
    c.gap = gap;
    return c;
}

/// polygonOverlapGeometry with a's polygon A and b's turned polygon B (null
/// for a wall), both about their centres.
PolygonOverlapGeometry overlapGeometry(const World& world, const Contact& c, const PlacedPolygon& A,
                                       const PlacedPolygon* B) {
    const auto ia = static_cast<std::size_t>(c.a);
    const bool wall = B == nullptr;
    const Vec3 d = wall ? Vec3::Zero() : separation(world, c.a, c.b);  // x_b − x_a, minimum image
    Overlap o;
    bool overlapping = false;
    if (wall) {
        const Vec3 origin = world.x[static_cast<std::size_t>(c.b)] - world.x[ia];
        overlapping = polygonHalfPlaneOverlap(A, origin, world.wall(c.b).direction, o);
    } else {
        double bx[kMaxPolygonVertices], by[kMaxPolygonVertices];
        overlapping = polygonOverlap(A, moved(*B, d, bx, by), o);
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
}  // namespace

int polygonContacts(const World& world, const ShapePoses& poses, BodyId a, BodyId b, double margin, Contact* out) {
    assert(a < b && !world.isWall(a));
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    // Every grain of a world with polygons is one (Simulation refuses others);
    // a grain that is not touches nothing here.
    if (!world.polygonOf(ia) || (!world.isWall(b) && !world.polygonOf(ib))) return 0;
    if (world.isWall(b) && world.wall(b).kind != ShapeKind::Plane) return 0;
    // The pair's geometry in the frame of a's centre: A as turned, B turned
    // and moved to x_b − x_a (the wall's point likewise).
    const PlacedPolygon A = poses.polygon(ia);
    VertexEdgePoint pts[kMaxPolygonVertices];
    int found = 0;
    if (world.isWall(b)) {
        const WallShape& wall = world.wall(b);
        const Vec3 origin = world.x[ib] - world.x[ia];
        const double reach = world.radius[ia] + margin;
        if (-origin.dot(wall.direction) > reach) return 0;
        found = polygonHalfPlanePoints(A, origin, wall.direction, margin, pts);
    } else {
        const Vec3 d = separation(world, a, b);
        const double reach = world.radius[ia] + world.radius[ib] + margin;
        if (d.squaredNorm() > reach * reach) return 0;
        if (world.polygonOverlaps) {
            // MD: one contact per pair; the force stage finds the overlap
            // itself, once per evaluation (polygonOverlapGeometry), and
            // writes its normal and equivalent gap into the contact. Here only
            // whether there is one: where the inscribed circles overlap, the
            // polygons do (n along the centres, gap the circles'); else the
            // separating axis decides (its normal and separation).
            const double inner =
                world.size[ia] * world.polygonOf(ia)->inradius + world.size[ib] * world.polygonOf(ib)->inradius;
            const double d2 = d.squaredNorm();
            if (d2 < inner * inner) {
                const double dist = std::sqrt(d2);
                fresh(out[0], a, b, kOverlapFeature, dist > 0.0 ? Vec3(d / dist) : Vec3::UnitX(), dist - inner);
                return 1;
            }
            double bx[kMaxPolygonVertices], by[kMaxPolygonVertices];
            Vec3 n;
            double gap;
            if (!polygonSeparatingAxis(A, moved(poses.polygon(ib), d, bx, by), margin, n, gap)) return 0;
            fresh(out[0], a, b, kOverlapFeature, n, gap);
            return 1;
        }
        double bx[kMaxPolygonVertices], by[kMaxPolygonVertices];
        found = polygonContactPoints(A, moved(poses.polygon(ib), d, bx, by), margin, pts);
    }
    if (found == 0) return 0;
    if (world.polygonOverlaps) {  // MD, a wall: one contact with the deepest vertex's normal and gap
        int deepest = 0;
        for (int k = 1; k < found; ++k)
            if (pts[k].gap < pts[deepest].gap) deepest = k;
        fresh(out[0], a, b, kOverlapFeature, pts[deepest].n, pts[deepest].gap);
        return 1;
    }
    for (int k = 0; k < found; ++k) {
        const std::uint32_t f = (pts[k].vertexOfB ? kVertexOfB : 0u) | static_cast<std::uint32_t>(pts[k].vertex);
        fresh(out[k], a, b, f, pts[k].n, pts[k].gap);
    }
    std::sort(out, out + found, [](const Contact& l, const Contact& r) { return l.key < r.key; });
    return found;
}

PolygonOverlapGeometry polygonOverlapGeometry(const World& world, const ShapePoses& poses, const Contact& c) {
    const PlacedPolygon B = world.isWall(c.b) ? PlacedPolygon{} : poses.polygon(static_cast<std::size_t>(c.b));
    return overlapGeometry(world, c, poses.polygon(static_cast<std::size_t>(c.a)), world.isWall(c.b) ? nullptr : &B);
}

PolygonOverlapGeometry polygonOverlapGeometry(const World& world, const Contact& c) {
    const TurnedPolygon A(world, static_cast<std::size_t>(c.a));
    if (world.isWall(c.b)) return overlapGeometry(world, c, A.view, nullptr);
    const TurnedPolygon B(world, static_cast<std::size_t>(c.b));
    return overlapGeometry(world, c, A.view, &B.view);
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
