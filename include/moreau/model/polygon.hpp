#pragma once
/// Convex polygons (2D grains, `grains.shape = polygon`): the shape a body of
/// the World refers to (docs/polygons.md).
///
/// A polygon's shape is stored at unit size with its centroid at the origin
/// and its vertices counter-clockwise; body i of shape k is that shape scaled
/// by World::size[i], turned by its angle about z (World::q[i]) and placed at
/// World::x[i]. Mass properties are exact (the polygon formulas).
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/core/rng.hpp"
#include "moreau/core/types.hpp"

namespace moreau {

struct PolygonShape {
    std::vector<double> vx, vy;  ///< vertices, counter-clockwise, centroid at the origin, unit size
    double area = 0.0;           ///< at unit size (scales as s²)
    /// Polar moment of inertia about the centroid per unit mass at unit size,
    /// ∫(x² + y²) dA / A (scales as s²).
    double momentPerMass = 0.0;
    double boundingRadius = 0.0;  ///< farthest vertex from the centroid, unit size
    /// The centroid in the frame the vertices were given in, unit size: a body
    /// given there at x_given with angle θ has its centre at
    /// x_given + R(θ) (size · centroid) (a packing file's row).
    Vec3 centroid = Vec3::Zero();
    /// The unit outward normal of edge k (vertex k to k + 1); a turned
    /// polygon's normals are these turned (ShapePoses).
    std::vector<double> nx, ny;
    /// The distance from the centroid to the nearest edge's line, unit size:
    /// the radius of the largest circle about the centroid inside the polygon.
    double inradius = 0.0;
    std::size_t vertices() const { return vx.size(); }
};

/// Fills s.nx, s.ny and s.inradius from its vertices (every constructor
/// below does; a checkpoint's shapes get them so after reading).
void setEdgeNormals(PolygonShape& s);

/// Most vertices a polygon may have (contact keys name a vertex in 7 bits).
constexpr int kMaxPolygonVertices = 64;

/// The regular N-gon of circumradius 1 (INTERFACE.md): vertices at angles
/// −π/2 + (2k + 1)π/N, k = 0..N−1, so at angle 0 its lowest edge is flat.
/// Throws InputError naming `key` unless 3 ≤ N ≤ kMaxPolygonVertices.
PolygonShape regularPolygon(int n, const std::string& key = "polygon.vertices");

/// The polygon of the given vertices (x, y pairs, unit size, either
/// orientation), moved so that its centroid is at the origin, vertices
/// counter-clockwise (a clockwise list is reversed after its first vertex,
/// which stays vertex 0). Throws InputError with one line naming `key` for an
/// odd count of numbers, fewer than 3 or more than kMaxPolygonVertices
/// vertices, a non-finite coordinate, repeated vertices (closer than 1e-9 of
/// the bounding box's diagonal), a self-intersecting list (edges that are not
/// neighbours meet), zero (or below 1e-12 of the bounding box's) area, or a
/// list that is not strictly convex (a vertex turning against the others, or
/// one on the line through its neighbours). Messages count vertices from 1.
PolygonShape makePolygonShape(const std::vector<double>& xy, const std::string& key = "polygon.shape");

/// A random irregular convex N-gon of circumradius 1 about its circle's
/// centre (then moved to its centroid): vertex k on the unit circle at angle
/// −π/2 + (2k + 1)π/N + irregularity · u_k · π/N, u_k uniform in (−1, 1)
/// from `rng`; irregularity in [0, 1) (0: the regular N-gon; the angles stay
/// in order, so the polygon is convex). docs/polygons.md names the
/// construction. Throws InputError for N or irregularity out of range.
PolygonShape randomPolygon(int n, double irregularity, Rng& rng);

}  // namespace moreau
