// Mass properties of a union of spheres (3D) or disks (2D); docs/clumps.md.
//
// Every path accumulates the raw moments ∫1, ∫x, ∫x xᵀ of the union about a
// reference point (the mean of the centres, to keep the shift to the centroid
// free of cancellation), then shifts to the centroid and takes the inertia
// I = tr(S)·1 − S of the centred second moment S.
//
// 3D, no point inside three spheres: inclusion–exclusion, exact. The union is
// Σ balls − Σ pairwise lenses (every triple intersection has zero volume, so
// every higher term vanishes too); a lens is two spherical caps.
// 3D otherwise: slices normal to x. Each slice is a union of disks whose
// moments are exact (below); the 1D integral over x is Gauss–Legendre between
// the x's where the slice's arrangement of circles changes, with an
// a-posteriori error estimate.
// 2D: the union of disks is exact by Green's theorem on its exposed arcs.
#include "moreau/model/mass_properties.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr std::size_t kMaxComponents = 16;

/// ∫1, ∫x and ∫x xᵀ over a body, about the reference point.
struct Moments {
    double m0 = 0.0;
    Vec3 m1 = Vec3::Zero();
    Mat3 m2 = Mat3::Zero();
    void add(const Moments& o, double sign) {
        m0 += sign * o.m0;
        m1 += sign * o.m1;
        m2 += sign * o.m2;
    }
};

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

// --- union of disks in a plane (u, v): exact ---------------------------------

struct Disk {
    double u, v, rho;
};

/// ∫1, ∫u, ∫v, ∫u², ∫v², ∫uv over a plane region.
struct PlaneMoments {
    double a = 0, u = 0, v = 0, uu = 0, vv = 0, uv = 0;
};

/// Adds the full disk: area πρ², second moments about its centre πρ⁴/4.
void addDisk(PlaneMoments& m, const Disk& d) {
    const double area = kPi * d.rho * d.rho;
    const double central = 0.25 * area * d.rho * d.rho;
    m.a += area;
    m.u += area * d.u;
    m.v += area * d.v;
    m.uu += area * d.u * d.u + central;
    m.vv += area * d.v * d.v + central;
    m.uv += area * d.u * d.v;
}

/// Adds the Green's-theorem line integrals along the arc θ0 → θ1 (θ1 > θ0) of
/// disk d, traversed with the disk on its left:
///   ∫1 = ½∮(u dv − v du), ∫u = ½∮u² dv, ∫v = −½∮v² du, ∫u² = ⅓∮u³ dv,
///   ∫v² = −⅓∮v³ du, ∫uv = ½∮u²v dv,
/// with u = a + ρ cos θ, v = b + ρ sin θ. I[m][n] = ∫cosᵐθ sinⁿθ dθ by the
/// reduction formulas (m + n)Iₘₙ = [cosᵐ⁻¹ sinⁿ⁺¹] + (m−1)Iₘ₋₂,ₙ
///                 and (m + n)Iₘₙ = −[cosᵐ⁺¹ sinⁿ⁻¹] + (n−1)Iₘ,ₙ₋₂.
void addArc(PlaneMoments& m, const Disk& d, double t0, double t1) {
    const double c0 = std::cos(t0), s0 = std::sin(t0), c1 = std::cos(t1), s1 = std::sin(t1);
    const auto bracket = [&](int p, int q) {
        return std::pow(c1, p) * std::pow(s1, q) - std::pow(c0, p) * std::pow(s0, q);
    };
    const double i00 = t1 - t0;
    const double i10 = s1 - s0;
    const double i01 = c0 - c1;
    const double i11 = 0.5 * bracket(0, 2);
    const double i20 = (bracket(1, 1) + i00) / 2.0;
    const double i02 = (-bracket(1, 1) + i00) / 2.0;
    const double i30 = (bracket(2, 1) + 2.0 * i10) / 3.0;
    const double i03 = (-bracket(1, 2) + 2.0 * i01) / 3.0;
    const double i21 = (bracket(1, 2) + i01) / 3.0;
    const double i31 = (bracket(2, 2) + 2.0 * i11) / 4.0;
    const double i40 = (bracket(3, 1) + 3.0 * i20) / 4.0;
    const double i04 = (-bracket(1, 3) + 3.0 * i02) / 4.0;
    const double a = d.u, b = d.v, r = d.rho;
    m.a += 0.5 * r * (r * i00 + a * i10 + b * i01);
    m.u += 0.5 * r * (a * a * i10 + 2.0 * a * r * i20 + r * r * i30);
    m.v += 0.5 * r * (b * b * i01 + 2.0 * b * r * i02 + r * r * i03);
    m.uu += r / 3.0 * (a * a * a * i10 + 3.0 * a * a * r * i20 + 3.0 * a * r * r * i30 + r * r * r * i40);
    m.vv += r / 3.0 * (b * b * b * i01 + 3.0 * b * b * r * i02 + 3.0 * b * r * r * i03 + r * r * r * i04);
    m.uv += 0.5 * r *
            (a * a * b * i10 + a * a * r * i11 + 2.0 * a * b * r * i20 + 2.0 * a * r * r * i21 + b * r * r * i30 +
             r * r * r * i31);
}

/// Moments of the union of `disks`, exact: the boundary of the union is the
/// set of arcs of each circle that no other disk covers. A disk inside another
/// (or identical to an earlier one) is dropped first; each remaining circle is
/// cut at its crossings with the others, and an arc counts when its midpoint
/// lies strictly outside every other disk. `kept` and `angles` are reused storage.
PlaneMoments diskUnionMoments(const std::vector<Disk>& disks, std::vector<Disk>& kept, std::vector<double>& angles) {
    kept.clear();
    for (std::size_t i = 0; i < disks.size(); ++i) {
        bool inside = false;
        for (std::size_t j = 0; j < disks.size() && !inside; ++j) {
            if (j == i) continue;
            const double dist = std::hypot(disks[j].u - disks[i].u, disks[j].v - disks[i].v);
            inside = dist <= disks[j].rho - disks[i].rho && (disks[i].rho < disks[j].rho || j < i);
        }
        if (!inside) kept.push_back(disks[i]);
    }
    PlaneMoments m;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        const Disk& di = kept[i];
        angles.clear();
        for (std::size_t j = 0; j < kept.size(); ++j) {
            if (j == i) continue;
            const Disk& dj = kept[j];
            const double du = dj.u - di.u, dv = dj.v - di.v;
            const double dist = std::hypot(du, dv);
            if (dist >= di.rho + dj.rho || dist <= std::abs(di.rho - dj.rho)) continue;
            const double phi = std::atan2(dv, du);
            const double cosAlpha = (dist * dist + di.rho * di.rho - dj.rho * dj.rho) / (2.0 * dist * di.rho);
            const double alpha = std::acos(std::clamp(cosAlpha, -1.0, 1.0));
            angles.push_back(phi - alpha);
            angles.push_back(phi + alpha);
        }
        if (angles.empty()) {
            addDisk(m, di);
            continue;
        }
        for (double& t : angles) t -= 2.0 * kPi * std::floor(t / (2.0 * kPi));
        std::sort(angles.begin(), angles.end());
        const std::size_t n = angles.size();
        for (std::size_t k = 0; k < n; ++k) {
            const double t0 = angles[k];
            const double t1 = k + 1 < n ? angles[k + 1] : angles[0] + 2.0 * kPi;
            if (t1 <= t0) continue;
            const double mid = 0.5 * (t0 + t1);
            const double pu = di.u + di.rho * std::cos(mid), pv = di.v + di.rho * std::sin(mid);
            bool covered = false;
            for (std::size_t j = 0; j < kept.size() && !covered; ++j) {
                if (j == i) continue;
                const double eu = pu - kept[j].u, ev = pv - kept[j].v;
                covered = eu * eu + ev * ev < kept[j].rho * kept[j].rho;
            }
            if (!covered) addArc(m, di, t0, t1);
        }
    }
    return m;
}

// --- 3D slices ---------------------------------------------------------------

/// Gauss–Legendre nodes and weights on [0, 1] (Newton on the Legendre
/// recurrence from the usual cosine guesses; deterministic).
struct GaussRule {
    std::vector<double> node, weight;
};

GaussRule gaussLegendre(int n) {
    GaussRule g;
    g.node.resize(n);
    g.weight.resize(n);
    // P_n(x) and P'_n(x) by the three-term recurrence.
    auto legendre = [n](double x) {
        double p0 = 1.0, p1 = x;
        for (int k = 2; k <= n; ++k) {
            const double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
            p0 = p1;
            p1 = p2;
        }
        return std::pair{p1, n * (x * p1 - p0) / (x * x - 1.0)};
    };
    for (int i = 0; i < (n + 1) / 2; ++i) {
        double x = std::cos(kPi * (i + 0.75) / (n + 0.5));
        for (int it = 0; it < 100; ++it) {
            const auto [p, dp] = legendre(x);
            const double dx = p / dp;
            x -= dx;
            if (std::abs(dx) < 1e-16) break;
        }
        const double dp = legendre(x).second;  // P'_n at the converged x, for the weight
        const double w = 1.0 / ((1.0 - x * x) * dp * dp);  // on [-1, 1]: 2/((1−x²)P'²), halved for [0, 1]
        g.node[i] = 0.5 * (1.0 - x);
        g.node[n - 1 - i] = 0.5 * (1.0 + x);
        g.weight[i] = w;
        g.weight[n - 1 - i] = w;
    }
    return g;
}

const GaussRule& gaussRule(int level) {
    static const std::array<GaussRule, 6> rules = [] {
        std::array<GaussRule, 6> r;
        for (int l = 0; l < 6; ++l) r[l] = gaussLegendre(8 << l);
        return r;
    }();
    return rules[level];
}

/// The ten slice integrals as one vector: ∫1, ∫x, ∫y, ∫z, ∫x², ∫xy, ∫xz, ∫y², ∫z², ∫yz.
using SliceVector = Eigen::Matrix<double, 10, 1>;

struct SliceIntegrator {
    const std::vector<SphereComponent>& spheres;
    std::vector<Disk> disks, kept;
    std::vector<double> angles;

    SliceVector at(double x) {
        disks.clear();
        for (const SphereComponent& s : spheres) {
            const double dx = x - s.centre.x();
            const double rho2 = (s.radius - dx) * (s.radius + dx);
            if (rho2 > 0.0) disks.push_back({s.centre.y(), s.centre.z(), std::sqrt(rho2)});
        }
        const PlaneMoments p = diskUnionMoments(disks, kept, angles);
        SliceVector f;
        f << p.a, x * p.a, p.u, p.v, x * x * p.a, x * p.u, x * p.v, p.uu, p.vv, p.uv;
        return f;
    }

    /// ∫ over [a, b] with the rule of `level`, through x = a + (b − a)(3s² − 2s³):
    /// its dx/ds vanishes at both ends, so the square-root behaviour of the
    /// slices at the breakpoints becomes analytic in s and the rule converges fast.
    SliceVector integrate(double a, double b, int level) {
        const GaussRule& g = gaussRule(level);
        SliceVector sum = SliceVector::Zero();
        const double length = b - a;
        for (std::size_t k = 0; k < g.node.size(); ++k) {
            const double s = g.node[k];
            const double x = a + length * s * s * (3.0 - 2.0 * s);
            sum += (g.weight[k] * 6.0 * length * s * (1.0 - s)) * at(x);
        }
        return sum;
    }
};

/// The x's where the arrangement of slice circles changes on the union's
/// boundary: each sphere's ends, the x-extremes of each circle where two spheres
/// meet (where two slice circles touch), and each point common to three spheres'
/// surfaces (where three slice circles pass through one point). Between them
/// every slice integral is analytic in x. An event point strictly inside a
/// further sphere (by 1e-12 of its radius) lies inside the union, leaves the
/// union's slice unchanged nearby, and is skipped: with many overlaps most are.
std::vector<double> sliceBreakpoints(const std::vector<SphereComponent>& s) {
    const std::size_t n = s.size();
    std::vector<double> x;
    const auto keepIfExposed = [&](const Vec3& point, std::size_t i, std::size_t j, std::size_t k) {
        for (std::size_t l = 0; l < n; ++l) {
            if (l == i || l == j || l == k) continue;
            if ((point - s[l].centre).norm() < s[l].radius * (1.0 - 1e-12)) return;
        }
        x.push_back(point.x());
    };
    for (std::size_t i = 0; i < n; ++i)
        for (double side : {-1.0, 1.0}) keepIfExposed(s[i].centre + side * s[i].radius * Vec3::UnitX(), i, i, i);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const Vec3 dv = s[j].centre - s[i].centre;
            const double d = dv.norm();
            if (d >= s[i].radius + s[j].radius || d <= std::abs(s[i].radius - s[j].radius)) continue;
            const Vec3 u = dv / d;
            const double a = (d * d + s[i].radius * s[i].radius - s[j].radius * s[j].radius) / (2.0 * d);
            const double rho = std::sqrt(std::max(0.0, s[i].radius * s[i].radius - a * a));
            const Vec3 centre = s[i].centre + a * u;
            const Vec3 across = Vec3::UnitX() - u.x() * u;  // x's direction in the circle's plane
            if (across.norm() > 1e-6) {
                for (double side : {-1.0, 1.0}) keepIfExposed(centre + side * rho * across.normalized(), i, j, j);
            } else {
                x.push_back(centre.x());  // a circle normal to x: one event, kept
            }
            for (std::size_t k = j + 1; k < n; ++k) {
                const Vec3 dk = s[k].centre - s[i].centre;
                const double a00 = dv.squaredNorm(), a01 = dv.dot(dk), a11 = dk.squaredNorm();
                const double det = a00 * a11 - a01 * a01;
                if (!(det > 1e-12 * a00 * a11)) continue;
                const double ri2 = s[i].radius * s[i].radius;
                const double bj = a00 + ri2 - s[j].radius * s[j].radius;
                const double bk = a11 + ri2 - s[k].radius * s[k].radius;
                const Vec3 y = ((bj * a11 - bk * a01) / (2.0 * det)) * dv + ((bk * a00 - bj * a01) / (2.0 * det)) * dk;
                const double t2 = ri2 - y.squaredNorm();  // −power of the radical centre
                if (t2 <= 0.0) continue;
                const Vec3 normal = dv.cross(dk).normalized();
                for (double side : {-1.0, 1.0}) keepIfExposed(s[i].centre + y + side * std::sqrt(t2) * normal, i, j, k);
            }
        }
    std::sort(x.begin(), x.end());
    const double lo = x.front(), hi = x.back();
    const double merge = 1e-13 * (hi - lo);
    std::vector<double> out;
    for (double v : x)
        if (out.empty() || v - out.back() > merge) out.push_back(v);
    out.back() = hi;
    return out;
}

/// Relative target of the slice quadrature; the reported bound is what it reached.
constexpr double kSliceTolerance = 1e-11;
constexpr int kFinestLevel = 5;  // 256 nodes per interval

/// Raw moments by slices, and the summed |difference| between the last two
/// rule levels of each interval (per integral) as the error estimate. An
/// interval stops refining once its estimate, relative to the union's scale,
/// is below kSliceTolerance divided by the number of intervals.
Moments sliceMoments(const std::vector<SphereComponent>& s, SliceVector& error) {
    const std::vector<double> cuts = sliceBreakpoints(s);
    const std::size_t intervals = cuts.size() - 1;
    SliceIntegrator integrator{s, {}, {}, {}};
    std::vector<SliceVector> coarse(intervals), fine(intervals);
    SliceVector total = SliceVector::Zero();
    for (std::size_t k = 0; k < intervals; ++k) {
        coarse[k] = integrator.integrate(cuts[k], cuts[k + 1], 0);
        fine[k] = integrator.integrate(cuts[k], cuts[k + 1], 1);
        total += fine[k];
    }
    // Scales: volume, volume·R, volume·R² with R the extent about the reference.
    double extent = 0.0;
    for (const SphereComponent& b : s) extent = std::max(extent, b.centre.norm() + b.radius);
    SliceVector scale;
    const double v = total[0];
    scale << v, v * extent, v * extent, v * extent, v * extent * extent, v * extent * extent, v * extent * extent,
        v * extent * extent, v * extent * extent, v * extent * extent;
    const double perInterval = kSliceTolerance / static_cast<double>(intervals);
    error.setZero();
    for (std::size_t k = 0; k < intervals; ++k) {
        SliceVector diff = (fine[k] - coarse[k]).cwiseAbs();
        for (int level = 2; level <= kFinestLevel && diff.cwiseQuotient(scale).maxCoeff() > perInterval; ++level) {
            coarse[k] = fine[k];
            fine[k] = integrator.integrate(cuts[k], cuts[k + 1], level);
            diff = (fine[k] - coarse[k]).cwiseAbs();
        }
        error += diff;
    }
    SliceVector sum = SliceVector::Zero();
    for (std::size_t k = 0; k < intervals; ++k) sum += fine[k];
    Moments m;
    m.m0 = sum[0];
    m.m1 << sum[1], sum[2], sum[3];
    m.m2 << sum[4], sum[5], sum[6], sum[5], sum[7], sum[9], sum[6], sum[9], sum[8];
    return m;
}

/// Relative error of volume and inertia implied by absolute errors `e` of the
/// raw moments (first-order propagation through the shift and I = tr S − S,
/// bounded term by term), relative to the volume and the largest diagonal moment.
double relativeInertiaError(const Moments& m, const Mat3& inertia, const SliceVector& e) {
    const Vec3 g = m.m1 / m.m0;
    const Vec3 e1(e[1], e[2], e[3]);
    Mat3 e2;
    e2 << e[4], e[5], e[6], e[5], e[7], e[9], e[6], e[9], e[8];
    Mat3 eS;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            eS(i, j) = e2(i, j) + e1[i] * std::abs(g[j]) + std::abs(g[i]) * e1[j] + std::abs(g[i] * g[j]) * e[0];
    double eI = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) eI = std::max(eI, i == j ? eS.trace() + eS(i, i) : eS(i, j));
    return std::max(e[0] / m.m0, eI / inertia.diagonal().maxCoeff());
}

// --- principal frame -----------------------------------------------------------

/// Principal moments, ascending, and the rotation R (body → input) with
/// inertia = R diag Rᵀ. A tensor whose off-diagonal terms are roundoff (1e-14 of
/// the largest diagonal) gets a frame of coordinate axes, moments taken from
/// the diagonal and ordered by an insertion sort that leaves entries within
/// 1e-12 in input order, so a sphere or a cubic cluster gets identity. Otherwise
/// the symmetric eigensolver's columns, each signed so its largest component is
/// positive; a left-handed result flips the third column.
void principalAxes3(const Mat3& inertia, Vec3& moments, Mat3& frame) {
    const double scale = inertia.diagonal().cwiseAbs().maxCoeff();
    const double off = std::max({std::abs(inertia(0, 1)), std::abs(inertia(0, 2)), std::abs(inertia(1, 2))});
    if (off <= 1e-14 * scale) {
        std::array<int, 3> order{0, 1, 2};
        for (int i = 1; i < 3; ++i)
            for (int j = i; j > 0 && inertia(order[j - 1], order[j - 1]) > inertia(order[j], order[j]) + 1e-12 * scale;
                 --j)
                std::swap(order[j - 1], order[j]);
        frame.setZero();
        for (int k = 0; k < 3; ++k) {
            frame(order[k], k) = 1.0;
            moments[k] = inertia(order[k], order[k]);
        }
    } else {
        const Eigen::SelfAdjointEigenSolver<Mat3> solver(inertia);
        moments = solver.eigenvalues();
        frame = solver.eigenvectors();
        for (int k = 0; k < 3; ++k) {
            Eigen::Index big = 0;
            frame.col(k).cwiseAbs().maxCoeff(&big);
            if (frame(big, k) < 0.0) frame.col(k) = -frame.col(k);
        }
    }
    if (frame.determinant() < 0.0) frame.col(2) = -frame.col(2);
}

/// 2D: the plate tensor has z as the axis of its largest moment (I_zz = I_xx +
/// I_yy); the in-plane pair comes in closed form, the frame turns about z by
/// the angle of the smaller moment's axis, in (−π/2, π/2]; 0 when the in-plane
/// moments are equal to roundoff.
void principalAxes2(const Mat3& inertia, Vec3& moments, Quat& frame) {
    const double a = inertia(0, 0), c = inertia(1, 1), b = inertia(0, 1);
    const double half = 0.5 * (a - c);
    const double radius = std::hypot(half, b);
    double angle = 0.0;
    if (radius <= 1e-14 * (a + c)) {
        moments << a, c, inertia(2, 2);
    } else {
        const double large = 0.5 * (a + c) + radius;
        moments << (a * c - b * b) / large, large, inertia(2, 2);
        angle = 0.5 * std::atan2(2.0 * b, a - c) + 0.5 * kPi;
        if (angle > 0.5 * kPi) angle -= kPi;
    }
    frame = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
}

void checkComponents(const std::vector<SphereComponent>& components, int dimension) {
    if (dimension != 2 && dimension != 3)
        throw InputError("clump: dimension must be 2 or 3, got " + std::to_string(dimension));
    if (components.empty()) throw InputError("clump: no spheres (clump.spheres needs at least one 'x y z r')");
    if (components.size() > kMaxComponents)
        throw InputError("clump: " + std::to_string(components.size()) + " spheres, at most " +
                         std::to_string(kMaxComponents) + " allowed");
    for (std::size_t i = 0; i < components.size(); ++i) {
        const SphereComponent& s = components[i];
        if (!std::isfinite(s.radius) || !(s.radius > 0.0))
            throw InputError("clump: sphere " + std::to_string(i + 1) + " has radius " + std::to_string(s.radius) +
                             ", it must be positive and finite");
        if (!s.centre.allFinite())
            throw InputError("clump: sphere " + std::to_string(i + 1) + " has a centre that is not finite");
    }
}

}  // namespace

UnionMassProperties unionMassProperties(const std::vector<SphereComponent>& components, int dimension,
                                        UnionMethod method) {
    checkComponents(components, dimension);
    // Identical components count once; 2D works on the x–y projection.
    std::vector<SphereComponent> unique;
    for (const SphereComponent& s : components) {
        SphereComponent t = s;
        if (dimension == 2) t.centre.z() = 0.0;
        const bool seen = std::any_of(unique.begin(), unique.end(), [&](const SphereComponent& o) {
            return o.centre == t.centre && o.radius == t.radius;
        });
        if (!seen) unique.push_back(t);
    }

    UnionMassProperties out;
    if (unique.size() == 1) {
        // Closed form, in the operation order of grainMass and grainInertia.
        const double r = unique[0].radius;
        out.centroid = unique[0].centre;
        if (dimension == 3) {
            out.volume = (4.0 / 3.0) * kPi * (r * r) * r;
            out.inertia = Mat3::Identity() * (0.4 * out.volume * r * r);
            out.principalMoments = Vec3::Constant(0.4 * out.volume * r * r);
        } else {
            out.volume = kPi * (r * r);
            const double polar = 0.5 * out.volume * r * r;
            out.inertia = Vec3(0.25 * out.volume * r * r, 0.25 * out.volume * r * r, polar).asDiagonal();
            out.principalMoments = out.inertia.diagonal();
        }
        out.boundingRadius = r;
        return out;
    }

    Vec3 reference = Vec3::Zero();
    for (const SphereComponent& s : unique) reference += s.centre;
    reference /= static_cast<double>(unique.size());
    std::vector<SphereComponent> local = unique;
    for (SphereComponent& s : local) s.centre -= reference;

    Moments m;
    SliceVector sliceError = SliceVector::Zero();
    if (dimension == 2) {
        std::vector<Disk> disks, kept;
        std::vector<double> angles;
        for (const SphereComponent& s : local) disks.push_back({s.centre.x(), s.centre.y(), s.radius});
        const PlaneMoments p = diskUnionMoments(disks, kept, angles);
        m.m0 = p.a;
        m.m1 << p.u, p.v, 0.0;
        m.m2 << p.uu, p.uv, 0.0, p.uv, p.vv, 0.0, 0.0, 0.0, 0.0;
    } else if (method == UnionMethod::Automatic && !anyTripleOverlap(local)) {
        m = pairwiseMoments(local);
    } else {
        m = sliceMoments(local, sliceError);
        out.exact = false;
    }

    const Vec3 g = m.m1 / m.m0;
    const Mat3 centred = m.m2 - m.m1 * g.transpose();
    Mat3 inertia = centred.trace() * Mat3::Identity() - centred;
    inertia = 0.5 * (inertia + inertia.transpose()).eval();
    out.volume = m.m0;
    out.centroid = reference + g;
    out.inertia = inertia;
    if (!out.exact) out.errorBound = relativeInertiaError(m, inertia, sliceError);

    if (dimension == 2) {
        principalAxes2(inertia, out.principalMoments, out.principalFrame);
    } else {
        Mat3 frame;
        principalAxes3(inertia, out.principalMoments, frame);
        out.principalFrame = Quat(frame).normalized();
    }
    for (const SphereComponent& s : unique)
        out.boundingRadius = std::max(out.boundingRadius, (s.centre - out.centroid).norm() + s.radius);
    return out;
}

}  // namespace moreau
