// Geometry between convex polygons and between a polygon and a half-plane
// (docs/polygons.md). Everything here runs per contact per step, so nothing
// allocates: the clipped polygon lives in fixed arrays on the stack, sized by
// kMaxPolygonVertices (clipping a convex n_A-gon by the n_B edges of a convex
// polygon adds at most one vertex per edge: at most n_A + n_B vertices).
#include "moreau/contact/polygon_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/model/polygon.hpp"

namespace moreau {
namespace {

/// The reference edge's preference for A: B's edge wins only when its
/// separation is larger by this fraction of the smaller polygon's extent.
/// Box2D uses a tenth of its linear slop, 5e-4 of a metre-sized body; near
/// ties (faces that are almost parallel) then keep their reference edge from
/// one step to the next instead of flipping on rounding.
constexpr double kReferencePreference = 1e-3;

/// Points closer than this fraction of the smaller extent along the
/// reference edge are one place (coincident corners give one point, not two).
constexpr double kSamePlace = 1e-9;

/// The chord gives no direction below this fraction of the smaller extent.
constexpr double kShortChord = 1e-12;

/// Room for a clipped polygon (n_A + n_B, see the top), with a margin for
/// vertices that rounding puts on both sides of a clipping line.
constexpr int kClipCapacity = 2 * kMaxPolygonVertices + 8;

/// The polygon's extent: its own when it has one (PlacedPolygon::extent).
double extentOf(const PlacedPolygon& p) { return p.extent > 0.0 ? p.extent : polygonExtent(p.x, p.y, p.n); }

std::size_t next(std::size_t i, std::size_t n) { return i + 1 == n ? 0 : i + 1; }

void polygonEdgeNormal(const double* x, const double* y, std::size_t n, std::size_t i, double& nx, double& ny) {
    const std::size_t j = next(i, n);
    const double ex = x[j] - x[i], ey = y[j] - y[i];
    const double len = std::sqrt(ex * ex + ey * ey);
    nx = ey / len;
    ny = -ex / len;
}

/// Outward unit normal of edge i of a counter-clockwise polygon: its own
/// when it has them, else polygonEdgeNormals' arithmetic.
void edgeNormal(const PlacedPolygon& p, std::size_t i, double& nx, double& ny) {
    if (p.nx) {
        nx = p.nx[i];
        ny = p.ny[i];
        return;
    }
    polygonEdgeNormal(p.x, p.y, p.n, i, nx, ny);
}

struct Axis {
    std::size_t edge = 0;
    double separation = 0.0;
};

/// The edge of `p` whose line has the other polygon `q` farthest out: the
/// largest over p's edges of min over q's vertices of n·(w − v). The first
/// edge wins a tie. Stops at the first edge whose separation exceeds
/// `enough` (that edge is returned: q lies beyond it).
Axis maxSeparation(const PlacedPolygon& p, const PlacedPolygon& q,
                   double enough = std::numeric_limits<double>::infinity()) {
    double ownX[kMaxPolygonVertices], ownY[kMaxPolygonVertices];
    const double* nxs = p.nx;
    const double* nys = p.ny;
    if (!nxs) {
        polygonEdgeNormals(p.x, p.y, p.n, ownX, ownY);
        nxs = ownX;
        nys = ownY;
    }
    Axis best{0, -std::numeric_limits<double>::infinity()};
    for (std::size_t i = 0; i < p.n; ++i) {
        const double nx = nxs[i], ny = nys[i], ox = p.x[i], oy = p.y[i];
        double s = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < q.n; ++j) s = std::min(s, nx * (q.x[j] - ox) + ny * (q.y[j] - oy));
        if (s > best.separation) {
            best = {i, s};
            if (s > enough) break;
        }
    }
    return best;
}

struct Reference {
    bool onB = false;  ///< the reference edge is B's (else A's)
    Axis axis;
};

/// The separating axis of polygonContactPoints, with its preference for A.
Reference chooseReference(const Axis& onA, const Axis& onB, double extent) {
    if (onB.separation > onA.separation + kReferencePreference * extent) return {true, onB};
    return {false, onA};
}

/// A polygon being clipped: vertices and, for each, which boundary the edge
/// leaving it lies on (an A edge below `na`, else a B edge or the wall). A
/// vertex whose arriving and leaving edges lie on different polygons is where
/// the boundaries cross.
struct ClipPolygon {
    double x[kClipCapacity], y[kClipCapacity];
    int onEdge[kClipCapacity];
    int n = 0;
    void push(double px, double py, int edge) {
        if (n == kClipCapacity) return;  // only reachable through rounding noise; keeps memory safe
        x[n] = px;
        y[n] = py;
        onEdge[n] = edge;
        ++n;
    }
};

/// Sutherland–Hodgman: keeps the part of `in` with (p − (ox, oy))·(nx, ny) ≤ 0;
/// new vertices on the clipping line leave along `edge`. Returns false,
/// leaving `out` alone, when every vertex is kept (the line does not cut:
/// the caller keeps `in`).
bool clipByLine(const ClipPolygon& in, double ox, double oy, double nx, double ny, int edge, ClipPolygon& out) {
    if (in.n == 0) return false;
    double d[kClipCapacity];
    bool cuts = false;
    for (int k = 0; k < in.n; ++k) {
        d[k] = nx * (in.x[k] - ox) + ny * (in.y[k] - oy);
        cuts |= d[k] > 0.0;
    }
    if (!cuts) return false;
    out.n = 0;
    for (int k = 0; k < in.n; ++k) {
        const int e = k + 1 == in.n ? 0 : k + 1;
        const bool startIn = d[k] <= 0.0, endIn = d[e] <= 0.0;
        if (startIn == endIn) {
            if (endIn) out.push(in.x[e], in.y[e], in.onEdge[e]);
            continue;
        }
        // One end in, one out: d[k] − d[e] is nonzero, t in [0, 1].
        const double t = d[k] / (d[k] - d[e]);
        const double ix = in.x[k] + t * (in.x[e] - in.x[k]), iy = in.y[k] + t * (in.y[e] - in.y[k]);
        if (endIn) {  // entering: the new vertex leaves along the old edge
            out.push(ix, iy, in.onEdge[k]);
            out.push(in.x[e], in.y[e], in.onEdge[e]);
        } else {  // leaving: the new vertex leaves along the clipping line
            out.push(ix, iy, edge);
        }
    }
    return true;
}

/// Area and centroid of the clipped polygon (shoelace, about its first
/// vertex) and the crossings (the two farthest apart; the centroid twice
/// when there is none: one polygon inside the other). Leaves out.n alone.
bool finishOverlap(const ClipPolygon& p, int na, Overlap& out) {
    out = Overlap{};
    if (p.n < 3) return false;
    const double x0 = p.x[0], y0 = p.y[0];
    double a2 = 0.0, sx = 0.0, sy = 0.0;
    for (int k = 1; k + 1 < p.n; ++k) {
        const double xi = p.x[k] - x0, yi = p.y[k] - y0, xj = p.x[k + 1] - x0, yj = p.y[k + 1] - y0;
        const double c = xi * yj - xj * yi;
        a2 += c;
        sx += (xi + xj) * c;
        sy += (yi + yj) * c;
    }
    if (!(a2 > 0.0)) return false;
    out.area = 0.5 * a2;
    out.centroid = Vec3(x0 + sx / (3.0 * a2), y0 + sy / (3.0 * a2), 0.0);

    int crossing[kClipCapacity];
    int count = 0;
    for (int k = 0; k < p.n; ++k) {
        const int arriving = p.onEdge[k == 0 ? p.n - 1 : k - 1];
        if ((arriving < na) != (p.onEdge[k] < na)) crossing[count++] = k;
    }
    int i1 = -1, i2 = -1;
    if (count == 1) i1 = i2 = crossing[0];
    double far2 = -1.0;
    for (int u = 0; u < count; ++u)  // two crossings but for deep overlaps
        for (int v = u + 1; v < count; ++v) {
            const double dx = p.x[crossing[v]] - p.x[crossing[u]], dy = p.y[crossing[v]] - p.y[crossing[u]];
            if (dx * dx + dy * dy > far2) {
                far2 = dx * dx + dy * dy;
                i1 = crossing[u];
                i2 = crossing[v];
            }
        }
    if (i1 < 0) {
        out.p1 = out.p2 = out.centroid;
    } else {
        out.p1 = Vec3(p.x[i1], p.y[i1], 0.0);
        out.p2 = Vec3(p.x[i2], p.y[i2], 0.0);
    }
    out.chord = (out.p2 - out.p1).norm();
    return true;
}

}  // namespace

void placePolygon(const double* vx, const double* vy, std::size_t n, double s, double c, double sn, double cx,
                  double cy, double* x, double* y) {
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = cx + s * (c * vx[i] - sn * vy[i]);
        y[i] = cy + s * (sn * vx[i] + c * vy[i]);
    }
}

void polygonEdgeNormals(const double* x, const double* y, std::size_t n, double* nx, double* ny) {
    for (std::size_t i = 0; i < n; ++i) polygonEdgeNormal(x, y, n, i, nx[i], ny[i]);
}

double polygonExtent(const double* x, const double* y, std::size_t n) {
    double xlo = x[0], xhi = x[0], ylo = y[0], yhi = y[0];
    for (std::size_t i = 1; i < n; ++i) {
        xlo = std::min(xlo, x[i]);
        xhi = std::max(xhi, x[i]);
        ylo = std::min(ylo, y[i]);
        yhi = std::max(yhi, y[i]);
    }
    return std::max(xhi - xlo, yhi - ylo);
}

bool polygonSeparatingAxis(const PlacedPolygon& a, const PlacedPolygon& b, double margin, Vec3& n, double& gap) {
    const Axis onA = maxSeparation(a, b, margin);
    if (onA.separation > margin) return false;
    const Axis onB = maxSeparation(b, a, margin);
    if (onB.separation > margin) return false;
    const Reference ref = chooseReference(onA, onB, std::min(extentOf(a), extentOf(b)));
    double nx, ny;
    edgeNormal(ref.onB ? b : a, ref.axis.edge, nx, ny);
    n = ref.onB ? Vec3(-nx, -ny, 0.0) : Vec3(nx, ny, 0.0);
    gap = ref.axis.separation;
    return true;
}

int polygonContactPoints(const PlacedPolygon& a, const PlacedPolygon& b, double margin, VertexEdgePoint out[2]) {
    const Axis onA = maxSeparation(a, b, margin);
    if (onA.separation > margin) return 0;
    const Axis onB = maxSeparation(b, a, margin);
    if (onB.separation > margin) return 0;
    const double extent = std::min(extentOf(a), extentOf(b));
    const Reference ref = chooseReference(onA, onB, extent);
    const PlacedPolygon& rp = ref.onB ? b : a;  // the reference polygon
    const PlacedPolygon& ip = ref.onB ? a : b;  // the incident one

    // The reference edge r1 → r2: tangent t, length len, outward normal n.
    const std::size_t r = ref.axis.edge, r2 = next(r, rp.n);
    const double r1x = rp.x[r], r1y = rp.y[r];
    const double ex = rp.x[r2] - r1x, ey = rp.y[r2] - r1y;
    const double len = std::sqrt(ex * ex + ey * ey);
    const double tx = ex / len, ty = ey / len, nx = ty, ny = -tx;

    // The incident edge: the one whose normal is most opposed to n (for
    // convex polygons n·n_j < 0 there: the normals leave no gap of π).
    std::size_t inc = 0;
    double most = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < ip.n; ++j) {
        double mx, my;
        edgeNormal(ip, j, mx, my);
        const double dot = nx * mx + ny * my;
        if (dot < most) {
            most = dot;
            inc = j;
        }
    }
    const std::size_t inc2 = next(inc, ip.n);

    // Where the two edges overlap along t: [max(0, lo), min(len, hi)] with
    // [lo, hi] the incident edge's shadow. Each end of that interval is an
    // incident vertex when its shadow lies on the reference edge, else the
    // reference edge's end; the incident vertex wins where both are there.
    std::size_t loV = inc, hiV = inc2;
    double lo = tx * (ip.x[inc] - r1x) + ty * (ip.y[inc] - r1y);
    double hi = tx * (ip.x[inc2] - r1x) + ty * (ip.y[inc2] - r1y);
    if (hi < lo) {
        std::swap(lo, hi);
        std::swap(loV, hiV);
    }
    const double eps = kSamePlace * extent;
    if (hi < -eps || lo > len + eps) return 0;  // the edges' shadows miss each other

    // The gap of a reference vertex q along n to the incident edge's line
    // m·(p − i1) = 0 (m ⟂ the incident edge, outward): q + gap n on that line.
    const double fx = ip.x[inc2] - ip.x[inc], fy = ip.y[inc2] - ip.y[inc];
    const double mx = fy, my = -fx;
    const double opposed = -(mx * nx + my * ny);  // > 0, see the incident edge
    struct End {
        bool incident;
        std::size_t vertex;
        double along, gap;
    };
    End ends[2];
    int count = 0;
    const auto incidentEnd = [&](std::size_t v, double along) {
        ends[count++] = {true, v, along, nx * (ip.x[v] - r1x) + ny * (ip.y[v] - r1y)};
    };
    const auto referenceEnd = [&](std::size_t v, double along) {
        if (!(opposed > 0.0)) return;  // degenerate incident edge: no line to measure to
        const double gap = (mx * (rp.x[v] - ip.x[inc]) + my * (rp.y[v] - ip.y[inc])) / opposed;
        ends[count++] = {false, v, along, gap};
    };
    if (lo >= -eps)
        incidentEnd(loV, lo);
    else
        referenceEnd(r, 0.0);
    if (hi <= len + eps)
        incidentEnd(hiV, hi);
    else
        referenceEnd(r2, len);
    if (count == 2 && ends[1].along - ends[0].along <= eps) {
        // One place (corners meet): keep the incident vertex if there is one.
        if (!ends[0].incident && ends[1].incident) ends[0] = ends[1];
        count = 1;
    }

    const Vec3 n = ref.onB ? Vec3(-nx, -ny, 0.0) : Vec3(nx, ny, 0.0);
    int written = 0;
    for (int k = 0; k < count; ++k) {
        if (ends[k].gap > margin) continue;
        VertexEdgePoint& p = out[written++];
        p.vertexOfB = ends[k].incident != ref.onB;  // incident: the other polygon
        p.vertex = static_cast<int>(ends[k].vertex);
        p.n = n;
        p.gap = ends[k].gap;
    }
    return written;
}

int polygonHalfPlanePoints(const PlacedPolygon& a, const Vec3& o, const Vec3& m, double margin, VertexEdgePoint* out) {
    int written = 0;
    const Vec3 n(-m.x(), -m.y(), 0.0);
    for (std::size_t i = 0; i < a.n; ++i) {
        const double d = (a.x[i] - o.x()) * m.x() + (a.y[i] - o.y()) * m.y();
        if (d > margin) continue;
        VertexEdgePoint& p = out[written++];
        p.vertexOfB = false;
        p.vertex = static_cast<int>(i);
        p.n = n;
        p.gap = d;
    }
    return written;
}

bool polygonOverlap(const PlacedPolygon& a, const PlacedPolygon& b, Overlap& out) {
    const int na = static_cast<int>(a.n);
    ClipPolygon bufs[2];
    ClipPolygon* cur = &bufs[0];
    ClipPolygon* nxt = &bufs[1];
    for (int k = 0; k < na; ++k) cur->push(a.x[k], a.y[k], k);
    for (std::size_t j = 0; j < b.n && cur->n > 0; ++j) {
        double nx, ny;
        edgeNormal(b, j, nx, ny);
        if (clipByLine(*cur, b.x[j], b.y[j], nx, ny, na + static_cast<int>(j), *nxt)) std::swap(cur, nxt);
    }
    if (!finishOverlap(*cur, na, out)) return false;

    const double extent = std::min(extentOf(a), extentOf(b));
    if (out.chord <= kShortChord * extent) {
        // No direction from the crossings: the separating axis (n_A n_B
        // work, so only here).
        const Reference ref = chooseReference(maxSeparation(a, b), maxSeparation(b, a), extent);
        double nx, ny;
        edgeNormal(ref.onB ? b : a, ref.axis.edge, nx, ny);
        out.n = ref.onB ? Vec3(-nx, -ny, 0.0) : Vec3(nx, ny, 0.0);
        return true;
    }
    // The chord's normal, turned towards B: n·(m_B − m_A) ≥ 0 with m the
    // means of the vertices.
    double mAx = 0.0, mAy = 0.0, mBx = 0.0, mBy = 0.0;
    for (std::size_t i = 0; i < a.n; ++i) {
        mAx += a.x[i];
        mAy += a.y[i];
    }
    for (std::size_t i = 0; i < b.n; ++i) {
        mBx += b.x[i];
        mBy += b.y[i];
    }
    const double towardX = mBx / static_cast<double>(b.n) - mAx / static_cast<double>(a.n);
    const double towardY = mBy / static_cast<double>(b.n) - mAy / static_cast<double>(a.n);
    const Vec3 d = out.p2 - out.p1;
    out.n = Vec3(-d.y(), d.x(), 0.0) / out.chord;
    if (out.n.x() * towardX + out.n.y() * towardY < 0.0) out.n = -out.n;
    return true;
}

bool polygonHalfPlaneOverlap(const PlacedPolygon& a, const Vec3& o, const Vec3& m, Overlap& out) {
    const int na = static_cast<int>(a.n);
    ClipPolygon in, clipped;
    for (int k = 0; k < na; ++k) in.push(a.x[k], a.y[k], k);
    // The solid side (p − o)·m < 0 is kept; its boundary, the wall's line, is the clipping line.
    // (A line that cuts nothing leaves the whole polygon on the solid side.)
    const ClipPolygon& solid = clipByLine(in, o.x(), o.y(), m.x(), m.y(), na, clipped) ? clipped : in;
    if (!finishOverlap(solid, na, out)) return false;
    out.n = Vec3(-m.x(), -m.y(), 0.0);
    return true;
}

}  // namespace moreau
