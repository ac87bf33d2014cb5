// The union of balls with no point inside three of them: Σ balls − Σ lenses, exact (union_moments.hpp).
#include "union_moments.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace moreau::union_moments {
namespace {

Moments ballMoments(const Vec3& c, double r) {
    Moments m;
    m.m0 = (4.0 / 3.0) * kPi * (r * r) * r;
    m.m1 = m.m0 * c;
    m.m2 = m.m0 * (c * c.transpose() + (r * r / 5.0) * Mat3::Identity());
    return m;
}

/// The cap of ball (c, r) of height h (0 ≤ h ≤ 2r) beyond the plane at distance
/// r − h from c along the unit vector u. With z the coordinate along u from c
/// and t = r − z, the cap's disc at depth t has radius² t(2r − t), so
///   V    = π ∫₀ʰ t(2r−t) dt              = π h²(3r − h)/3
///   ∫z   = π ∫₀ʰ (r−t) t(2r−t) dt        = π h²(2r − h)²/4
///   ∫z²  = π ∫₀ʰ (r−t)² t(2r−t) dt       = π h²(r³ − 5r²h/3 + r h² − h³/5)
///   ∫x²  = π/4 ∫₀ʰ t²(2r−t)² dt          = π h³(4r²/3 − r h + h²/5)/4   (= ∫y², x ⊥ u)
/// (h = 2r gives the ball's 4πr³/3, 0, 4πr⁵/15, 4πr⁵/15). Written in h, so a
/// thin cap keeps its relative precision.
Moments capMoments(const Vec3& c, double r, const Vec3& u, double h) {
    const double h2 = h * h;
    const double volume = kPi * h2 * (r - h / 3.0);
    const double zMoment = 0.25 * kPi * h2 * (2.0 * r - h) * (2.0 * r - h);
    const double zz = kPi * h2 * (r * r * r + h * (-5.0 / 3.0 * r * r + h * (r - h / 5.0)));
    const double xx = 0.25 * kPi * h2 * h * (4.0 / 3.0 * r * r + h * (-r + h / 5.0));
    const Mat3 uu = u * u.transpose();
    Moments m;
    m.m0 = volume;
    m.m1 = volume * c + zMoment * u;
    m.m2 = volume * c * c.transpose() + zMoment * (c * u.transpose() + u * c.transpose()) + zz * uu +
           xx * (Mat3::Identity() - uu);
    return m;
}

/// The intersection of balls (ci, ri) and (cj, rj): empty, the smaller ball
/// (one inside the other), or the two caps cut by the plane of the circle
/// where the spheres meet, at distance (d² + ri² − rj²)/(2d) from ci.
Moments lensMoments(const Vec3& ci, double ri, const Vec3& cj, double rj) {
    const Vec3 dv = cj - ci;
    const double d = dv.norm();
    if (d >= ri + rj) return {};
    if (d <= std::abs(ri - rj)) return ri <= rj ? ballMoments(ci, ri) : ballMoments(cj, rj);
    const Vec3 u = dv / d;
    // hi = ri − (d² + ri² − rj²)/(2d) = (rj² − (d − ri)²)/(2d), factored so a
    // shallow lens keeps its digits; hj likewise.
    const double hi = (rj - d + ri) * (rj + d - ri) / (2.0 * d);
    const double hj = (ri + rj - d) * (ri - rj + d) / (2.0 * d);
    Moments m = capMoments(ci, ri, u, hi);
    m.add(capMoments(cj, rj, -u, hj), 1.0);
    return m;
}

/// Power of x with respect to sphere s: negative exactly inside it.
double power(const Vec3& x, const SphereComponent& s) {
    return (x - s.centre).squaredNorm() - s.radius * s.radius;
}

bool ballsOverlap(const SphereComponent& a, const SphereComponent& b) {
    return (a.centre - b.centre).norm() < a.radius + b.radius;
}

/// Whether three balls share interior points (with a margin of 1e-12 r² on the
/// power, so near-ties count as shared: the caller then takes the quadrature,
/// which is right either way). The balls share an interior point iff
/// min_x max_k pₖ(x) < 0, pₖ the power. The pₖ differ by affine functions, so
/// at the minimiser, with active set A, x is the minimiser of one pₖ on the
/// affine set where those of A are equal: a centre (|A| = 1), the foot of a
/// centre on a radical plane (|A| = 2), or the radical centre in the plane of
/// the centres (|A| = 3; collinear centres reduce to |A| ≤ 2). Evaluating max pₖ
/// at these seven candidates therefore finds the minimum exactly.
bool ballsShareInterior(const SphereComponent& a, const SphereComponent& b, const SphereComponent& c) {
    const std::array<const SphereComponent*, 3> s{&a, &b, &c};
    const auto worst = [&](const Vec3& x) {
        return std::max({power(x, a), power(x, b), power(x, c)});
    };
    const double rMax = std::max({a.radius, b.radius, c.radius});
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k < 3; ++k) best = std::min(best, worst(s[k]->centre));
    for (int k = 0; k < 3; ++k) {
        const SphereComponent& p = *s[k];
        const SphereComponent& q = *s[(k + 1) % 3];
        const Vec3 d = q.centre - p.centre;
        const double dd = d.squaredNorm();
        if (dd == 0.0) continue;  // concentric: the centres are the candidates
        const double t = (dd + p.radius * p.radius - q.radius * q.radius) / (2.0 * dd);
        best = std::min(best, worst(p.centre + t * d));
    }
    const Vec3 dj = b.centre - a.centre;
    const Vec3 dk = c.centre - a.centre;
    const double a00 = dj.squaredNorm(), a01 = dj.dot(dk), a11 = dk.squaredNorm();
    const double det = a00 * a11 - a01 * a01;
    if (det > 1e-12 * a00 * a11) {
        const double ra2 = a.radius * a.radius;
        const double bj = a00 + ra2 - b.radius * b.radius;
        const double bk = a11 + ra2 - c.radius * c.radius;
        const double sj = (bj * a11 - bk * a01) / (2.0 * det);
        const double sk = (bk * a00 - bj * a01) / (2.0 * det);
        best = std::min(best, worst(a.centre + sj * dj + sk * dk));
    }
    return best < 1e-12 * rMax * rMax;
}

}  // namespace

bool anyTripleOverlap(const std::vector<SphereComponent>& s) {
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            if (!ballsOverlap(s[i], s[j])) continue;
            for (std::size_t k = j + 1; k < n; ++k)
                if (ballsOverlap(s[i], s[k]) && ballsOverlap(s[j], s[k]) && ballsShareInterior(s[i], s[j], s[k]))
                    return true;
        }
    return false;
}

Moments pairwiseMoments(const std::vector<SphereComponent>& s) {
    Moments m;
    for (const SphereComponent& b : s) m.add(ballMoments(b.centre, b.radius), 1.0);
    for (std::size_t i = 0; i < s.size(); ++i)
        for (std::size_t j = i + 1; j < s.size(); ++j)
            m.add(lensMoments(s[i].centre, s[i].radius, s[j].centre, s[j].radius), -1.0);
    return m;
}

}  // namespace moreau::union_moments
