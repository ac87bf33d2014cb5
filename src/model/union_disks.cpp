// The union of disks in a plane, exact by Green's theorem on its exposed arcs (union_moments.hpp).
#include "union_moments.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace moreau::union_moments {
namespace {

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

}  // namespace

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

}  // namespace moreau::union_moments
