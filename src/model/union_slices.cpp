// The union of balls by slices normal to x: Gauss–Legendre between the arrangement events (union_moments.hpp).
#include "union_moments.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace moreau::union_moments {
namespace {

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

}  // namespace

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

}  // namespace moreau::union_moments
