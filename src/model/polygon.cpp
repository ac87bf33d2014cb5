// Convex polygon shapes: validation of a vertex list, the regular and the
// random N-gon, and exact mass properties (docs/polygons.md).
//
// With e_i = (x_i, y_i), c_i = x_i y_{i+1} − x_{i+1} y_i (the shoelace terms):
//   A = ½ Σ c_i,   A x̄ = ⅙ Σ (x_i + x_{i+1}) c_i,
//   ∫(x² + y²) dA = (1/12) Σ c_i (x_i² + x_i x_{i+1} + x_{i+1}² + y_i² + y_i y_{i+1} + y_{i+1}²)
// (Green's theorem on each edge; the last is the sum over the triangles
// (0, e_i, e_{i+1}) of A_t (|e_i|² + e_i·e_{i+1} + |e_{i+1}|²)/6). The centroid
// is found about the mean of the vertices and the moment about the centroid
// itself, so that no term cancels against a large |x̄|² A.
#include "moreau/model/polygon.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

constexpr double kPi = std::numbers::pi;

std::string fmt(double x) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

/// The one line every refusal ends with.
std::string allowed() {
    return "; allowed: a convex polygon, 3 to " + std::to_string(kMaxPolygonVertices) + " vertices";
}

[[noreturn]] void refuse(const std::string& key, const std::string& what) {
    throw InputError(key + ": " + what + allowed());
}

double cross(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

/// Whether segments pq and rs share a point (touching counts), by the signs of
/// the four orientations; collinear pairs by the overlap of their boxes.
bool segmentsMeet(double px, double py, double qx, double qy, double rx, double ry, double sx, double sy) {
    const auto side = [](double ax, double ay, double bx, double by, double cx, double cy) {
        const double o = cross(bx - ax, by - ay, cx - ax, cy - ay);
        return (o > 0.0) - (o < 0.0);
    };
    const auto within = [](double ax, double ay, double bx, double by, double cx, double cy) {
        return std::min(ax, bx) <= cx && cx <= std::max(ax, bx) && std::min(ay, by) <= cy && cy <= std::max(ay, by);
    };
    const int o1 = side(px, py, qx, qy, rx, ry), o2 = side(px, py, qx, qy, sx, sy);
    const int o3 = side(rx, ry, sx, sy, px, py), o4 = side(rx, ry, sx, sy, qx, qy);
    if (o1 != o2 && o3 != o4) return true;
    return (o1 == 0 && within(px, py, qx, qy, rx, ry)) || (o2 == 0 && within(px, py, qx, qy, sx, sy)) ||
           (o3 == 0 && within(rx, ry, sx, sy, px, py)) || (o4 == 0 && within(rx, ry, sx, sy, qx, qy));
}

/// The shape of counter-clockwise, convex vertices: moved to the centroid,
/// with the mass properties (see the top of the file).
PolygonShape shapeOf(std::vector<double> vx, std::vector<double> vy) {
    const std::size_t n = vx.size();
    double mx = 0.0, my = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        mx += vx[i];
        my += vy[i];
    }
    mx /= static_cast<double>(n);
    my /= static_cast<double>(n);
    double a2 = 0.0, sx = 0.0, sy = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = i + 1 == n ? 0 : i + 1;
        const double xi = vx[i] - mx, yi = vy[i] - my, xj = vx[j] - mx, yj = vy[j] - my;
        const double c = cross(xi, yi, xj, yj);
        a2 += c;
        sx += (xi + xj) * c;
        sy += (yi + yj) * c;
    }
    PolygonShape s;
    const double gx = mx + sx / (3.0 * a2), gy = my + sy / (3.0 * a2);
    s.centroid = Vec3(gx, gy, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        vx[i] -= gx;
        vy[i] -= gy;
    }
    double area2 = 0.0, j12 = 0.0, r2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = i + 1 == n ? 0 : i + 1;
        const double xi = vx[i], yi = vy[i], xj = vx[j], yj = vy[j];
        const double c = cross(xi, yi, xj, yj);
        area2 += c;
        j12 += c * (xi * xi + xi * xj + xj * xj + yi * yi + yi * yj + yj * yj);
        r2 = std::max(r2, xi * xi + yi * yi);
    }
    s.area = 0.5 * area2;
    s.momentPerMass = j12 / (6.0 * area2);  // (J/12) / (A) with A = area2/2
    s.boundingRadius = std::sqrt(r2);
    s.vx = std::move(vx);
    s.vy = std::move(vy);
    setEdgeNormals(s);
    return s;
}

}  // namespace

void setEdgeNormals(PolygonShape& s) {
    const std::size_t n = s.vertices();
    s.nx.resize(n);
    s.ny.resize(n);
    s.inradius = HUGE_VAL;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = i + 1 == n ? 0 : i + 1;
        const double ex = s.vx[j] - s.vx[i], ey = s.vy[j] - s.vy[i];
        const double len = std::sqrt(ex * ex + ey * ey);
        s.nx[i] = ey / len;
        s.ny[i] = -ex / len;
        s.inradius = std::min(s.inradius, s.nx[i] * s.vx[i] + s.ny[i] * s.vy[i]);
    }
}

PolygonShape regularPolygon(int n, const std::string& key) {
    if (n < 3 || n > kMaxPolygonVertices)
        throw InputError(key + ": " + std::to_string(n) + " vertices; allowed: 3 to " +
                         std::to_string(kMaxPolygonVertices));
    // Vertex k at angle −π/2 + θ_k, θ_k = (2k + 1)π/N: (sin θ_k, −cos θ_k).
    // θ_{N−1−k} = 2π − θ_k, so the second half mirrors the first in x; we
    // write it so, which makes the lowest edge flat to the last bit.
    const auto un = static_cast<std::size_t>(n);
    std::vector<double> vx(un), vy(un);
    for (std::size_t k = 0; 2 * k + 1 < un; ++k) {
        const double theta = static_cast<double>(2 * k + 1) * kPi / n;
        vx[k] = std::sin(theta);
        vy[k] = -std::cos(theta);
        vx[un - 1 - k] = -vx[k];
        vy[un - 1 - k] = vy[k];
    }
    if (un % 2 == 1) {  // θ = π: the top vertex
        vx[un / 2] = 0.0;
        vy[un / 2] = 1.0;
    }
    // The closed forms: N triangles of apex angle 2π/N and sides 1, each with
    // polar moment about the apex A_t (2 + cos(2π/N))/6.
    PolygonShape s;
    s.area = 0.5 * n * std::sin(2.0 * kPi / n);
    const double c = std::cos(kPi / n);
    s.momentPerMass = (1.0 + 2.0 * c * c) / 6.0;
    s.boundingRadius = 1.0;
    s.vx = std::move(vx);
    s.vy = std::move(vy);
    setEdgeNormals(s);
    return s;
}

PolygonShape makePolygonShape(const std::vector<double>& xy, const std::string& key) {
    if (xy.size() % 2 != 0) refuse(key, std::to_string(xy.size()) + " numbers do not make x y pairs");
    const std::size_t n = xy.size() / 2;
    if (n < 3 || n > static_cast<std::size_t>(kMaxPolygonVertices)) refuse(key, std::to_string(n) + " vertices");
    std::vector<double> vx(n), vy(n);
    for (std::size_t i = 0; i < n; ++i) {
        vx[i] = xy[2 * i];
        vy[i] = xy[2 * i + 1];
        if (!std::isfinite(vx[i]) || !std::isfinite(vy[i]))
            refuse(key, "vertex " + std::to_string(i + 1) + " has a coordinate that is not a finite number");
    }
    const auto [xlo, xhi] = std::minmax_element(vx.begin(), vx.end());
    const auto [ylo, yhi] = std::minmax_element(vy.begin(), vy.end());
    const double w = *xhi - *xlo, h = *yhi - *ylo;
    const double diagonal = std::hypot(w, h);
    // Repeated: closer than 1e-9 of the box's diagonal, where an edge's
    // direction (the contact normal) would be mostly rounding.
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
            if (std::hypot(vx[i] - vx[j], vy[i] - vy[j]) <= 1e-9 * diagonal)
                refuse(key, "vertices " + std::to_string(i + 1) + " and " + std::to_string(j + 1) + " are repeated");
    // Self-intersecting: two edges that are not neighbours share a point.
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t i1 = (i + 1) % n;
        for (std::size_t j = i + 2; j < n; ++j) {
            const std::size_t j1 = (j + 1) % n;
            if (j1 == i) continue;  // the edge before i: a neighbour
            if (segmentsMeet(vx[i], vy[i], vx[i1], vy[i1], vx[j], vy[j], vx[j1], vy[j1]))
                refuse(key, "the vertex list crosses itself (edge " + std::to_string(i + 1) + "-" +
                                std::to_string(i1 + 1) + " meets edge " + std::to_string(j + 1) + "-" +
                                std::to_string(j1 + 1) + ")");
        }
    }
    double area2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = (i + 1) % n;
        area2 += cross(vx[i] - *xlo, vy[i] - *ylo, vx[j] - *xlo, vy[j] - *ylo);
    }
    if (!(std::abs(0.5 * area2) > 1e-12 * w * h))
        refuse(key, "the vertices enclose zero area (area " + fmt(0.5 * std::abs(area2)) + ")");
    const bool ccw = area2 > 0.0;
    // Convex: every vertex turns the way the whole list does; a vertex on the
    // line through its neighbours (a turn below 1e-12 rad) is refused too, as
    // it would split an edge in two and with it the contact points of a face.
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = (i + n - 1) % n, q = (i + 1) % n;
        const double ax = vx[i] - vx[p], ay = vy[i] - vy[p], bx = vx[q] - vx[i], by = vy[q] - vy[i];
        const double turn = cross(ax, ay, bx, by);
        if (std::abs(turn) <= 1e-12 * std::hypot(ax, ay) * std::hypot(bx, by))
            refuse(key, "the vertex list is not strictly convex (vertex " + std::to_string(i + 1) +
                            " lies on the line through its neighbours)");
        if ((turn > 0.0) != ccw)
            refuse(key, "the vertex list is not convex (vertex " + std::to_string(i + 1) + " turns " +
                            (ccw ? "clockwise" : "counter-clockwise") + ")");
    }
    if (!ccw) {  // keep the first vertex first, so that indices stay readable
        std::reverse(vx.begin() + 1, vx.end());
        std::reverse(vy.begin() + 1, vy.end());
    }
    return shapeOf(std::move(vx), std::move(vy));
}

PolygonShape randomPolygon(int n, double irregularity, Rng& rng) {
    if (n < 3 || n > kMaxPolygonVertices)
        throw InputError("random polygon: " + std::to_string(n) + " vertices; allowed: 3 to " +
                         std::to_string(kMaxPolygonVertices));
    if (!(irregularity >= 0.0 && irregularity < 1.0))
        throw InputError("random polygon: irregularity " + fmt(irregularity) + "; allowed: 0 <= irregularity < 1");
    // Neighbouring angles stay at least 2(1 − irregularity)π/N apart, so the
    // vertices are in order on the circle: convex, counter-clockwise.
    const auto un = static_cast<std::size_t>(n);
    std::vector<double> vx(un), vy(un);
    for (std::size_t k = 0; k < un; ++k) {
        const double u = rng.uniform(-1.0, 1.0);
        const double angle = -0.5 * kPi + (static_cast<double>(2 * k + 1) + irregularity * u) * kPi / n;
        vx[k] = std::cos(angle);
        vy[k] = std::sin(angle);
    }
    return shapeOf(std::move(vx), std::move(vy));
}

}  // namespace moreau
