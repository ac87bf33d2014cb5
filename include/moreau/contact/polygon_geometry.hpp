#pragma once
/// Geometry between convex polygons, and between a polygon and a half-plane,
/// in the x–y plane: contact points for contact dynamics (vertex–edge) and
/// the overlap region for molecular dynamics (overlap area, its centroid and
/// the chord through the boundaries' intersections). z is ignored on input
/// and 0 on output.
#include <cstddef>

#include "moreau/core/types.hpp"

namespace moreau {

/// A polygon placed in the plane: its vertices, counter-clockwise, convex
/// (the caller turns and moves a PolygonShape). Optionally the unit outward
/// normals of its edges (edge k from vertex k to k + 1) and its extent (the
/// length that scales the tolerances below), when the caller has them at
/// hand (ShapePoses keeps them per body, from the shape's: they do not
/// change when the polygon moves); without them (null, 0) the functions
/// below compute them from the vertices (polygonEdgeNormals, and the larger
/// side of the bounding box, polygonExtent).
struct PlacedPolygon {
    const double* x = nullptr;
    const double* y = nullptr;
    std::size_t n = 0;
    const double* nx = nullptr;
    const double* ny = nullptr;
    double extent = 0.0;
};

/// The unit outward normals of a counter-clockwise polygon's n edges (edge
/// k from vertex k to k + 1) into nx, ny.
void polygonEdgeNormals(const double* x, const double* y, std::size_t n, double* nx, double* ny);

/// The larger side of the bounding box of n vertices: the length that
/// scales the geometry's tolerances.
double polygonExtent(const double* x, const double* y, std::size_t n);

/// The cosine and sine of a 2D body's angle about z from its unit
/// quaternion q (World::q): w² − z² and 2wz, no trigonometry.
inline void angleCosSin(const Quat& q, double& c, double& s) {
    c = q.w() * q.w() - q.z() * q.z();
    s = 2.0 * q.w() * q.z();
}

/// The world vertices of a shape's unit vertices (vx, vy) scaled by s, turned
/// by (cos θ, sin θ) and moved to (cx, cy), written to (x, y) (n entries each).
void placePolygon(const double* vx, const double* vy, std::size_t n, double s, double c, double sn, double cx,
                  double cy, double* x, double* y);

/// One contact point of contact dynamics between polygons A and B: a vertex
/// of one on an edge of the other (LMGC90's vertex–edge points). The point
/// on the vertex's polygon is that vertex; the point on the other polygon is
/// the vertex moved by gap along n towards it (vertexOfB: minus gap n).
/// No default values: the functions below write every field, and callers
/// keep arrays of kMaxPolygonVertices of them on the stack per contact test.
struct VertexEdgePoint {
    bool vertexOfB;  ///< the vertex belongs to B (else to A)
    int vertex;      ///< its index in that polygon
    Vec3 n;          ///< unit normal from A to B (the reference edge's outward normal, ±)
    double gap;      ///< signed distance along n, < 0 when overlapping
};

/// The separating axis of A and B: over the unit edge normals of both, the
/// one along which B lies farthest out from A (B's normals turned to point
/// from A to B), n from A to B and gap that separation (< 0: they overlap
/// by at least |gap| along every edge normal; an overlap's depth along its
/// shallowest direction). Returns false, as soon as an edge shows it, when
/// that separation exceeds margin. Ties as in polygonContactPoints (A's
/// edge unless B's separates by 1e-3 of the smaller extent more). The MD
/// narrow phase's test: a pair of polygons is a contact when this holds.
bool polygonSeparatingAxis(const PlacedPolygon& a, const PlacedPolygon& b, double margin, Vec3& n, double& gap);

/// Contact points of A and B whose gap is at most `margin` (≥ 0): the
/// separating axis of largest separation over both polygons' edge normals
/// picks the reference edge (with a small preference for A's, so that near
/// ties do not flip from step to step); the other polygon's edge most
/// opposed to it is the incident edge; each end of the incident edge that
/// lies within the reference edge's extent is a point (a vertex of the
/// incident polygon), and each end of the reference edge that lies within
/// the incident edge's extent is one too (a vertex of the reference polygon,
/// its gap measured along n to the incident edge's line), extents measured
/// along the reference edge: the two ends of the interval where the edges'
/// shadows overlap. At most two points, two for faces in contact, one for a
/// vertex on a face, no two at the same place (within 1e-9 of the smaller
/// polygon's extent; there the incident vertex is kept). Returns the number
/// written to out[0..1], low end of the interval first; 0 when the largest
/// separation exceeds margin or the shadows miss each other (corners apart
/// along a diagonal: no point until they touch). Deterministic (no tolerance
/// depends on the order of the arguments other than the stated preference:
/// B's edge is the reference only when its separation is larger by 1e-3 of
/// the smaller polygon's extent).
int polygonContactPoints(const PlacedPolygon& a, const PlacedPolygon& b, double margin, VertexEdgePoint out[2]);

/// Contact points of polygon A with the half-plane {p : (p − o)·m ≥ 0} (m unit,
/// pointing where the grains live; the wall is B): each vertex whose signed
/// distance (p − o)·m is at most margin, in vertex order, with n = −m and gap
/// that distance. Returns how many were written (at most A.n) to out.
int polygonHalfPlanePoints(const PlacedPolygon& a, const Vec3& o, const Vec3& m, double margin, VertexEdgePoint* out);

/// The overlap of two convex polygons (molecular dynamics): its area, its
/// centroid and the contact line through the two points where the
/// boundaries cross (with more than two crossings, deep overlaps only, the
/// two farthest apart). n is the unit normal of that line pointing from A to
/// B: oriented so that n·(m_B − m_A) ≥ 0, m the mean of each polygon's
/// vertices; chord is the line's length. When the crossings are
/// too close to give a direction (|p2 − p1| below 1e-12 of the polygons'
/// size, or none: one polygon inside the other, p1 = p2 = the centroid) the
/// normal of the reference edge of polygonContactPoints is used.
struct Overlap {
    double area = 0.0;            ///< 0 when the polygons do not overlap
    Vec3 centroid = Vec3::Zero(); ///< of the overlap region (the contact point)
    Vec3 n = Vec3::UnitX();       ///< normal of the contact line, from A to B
    Vec3 p1 = Vec3::Zero(), p2 = Vec3::Zero();  ///< the crossings
    double chord = 0.0;           ///< |p2 − p1|
};
/// Whether A and B overlap with positive area; fills `out` (Sutherland–Hodgman
/// clipping of A by B's edges, then the shoelace formulas).
bool polygonOverlap(const PlacedPolygon& a, const PlacedPolygon& b, Overlap& out);

/// The overlap of polygon A with the half-plane's complement (the wall's
/// solid side {(p − o)·m < 0}): area, centroid, the crossings on the wall's
/// line, n = −m.
bool polygonHalfPlaneOverlap(const PlacedPolygon& a, const Vec3& o, const Vec3& m, Overlap& out);

}  // namespace moreau
