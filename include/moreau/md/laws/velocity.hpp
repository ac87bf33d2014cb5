#pragma once
/// The tangential laws of the relative velocity alone (force schemes eqs.
/// 13–15), and no tangential force: no memory.
#include <algorithm>
#include <cmath>

#include "moreau/md/laws/kernel.hpp"

namespace moreau {

/// No tangential force.
template <>
struct TangentialKernel<TangentialLaw::None> {
    static Vec3 force(const ContactState&, const Constants&, double, double*, bool&, LawOutput&) {
        return Vec3::Zero();
    }
};

/// Eq. 13: −μ |F_n| v̂_s. Coulomb's force does not vanish with V_t, so a V_t
/// within rounding of the normal projection (kSlipRounding |V_n|) counts as
/// no slip.
template <>
struct TangentialKernel<TangentialLaw::Coulomb> {
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double*, bool&, LawOutput&) {
        const double limit = c.mu * std::abs(Fn);
        const double v = k.Vt.norm();
        return v > kSlipRounding * std::abs(k.Vn) ? Vec3(-limit / v * k.Vt) : Vec3::Zero();
    }
};

/// Eq. 14: −γ_s v_s.
template <>
struct TangentialKernel<TangentialLaw::Viscous> {
    static Vec3 force(const ContactState& k, const Constants& c, double, double*, bool&, LawOutput&) {
        return -c.gt * k.Vt;
    }
};

/// Eq. 15: −min(γ_s |v_s|, μ |F_n|) v̂_s.
template <>
struct TangentialKernel<TangentialLaw::ViscousCoulomb> {
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double*, bool&, LawOutput&) {
        const double limit = c.mu * std::abs(Fn);
        const double v = k.Vt.norm();
        return v > 0.0 ? Vec3(-std::min(c.gt * v, limit) / v * k.Vt) : Vec3::Zero();
    }
};

}  // namespace moreau
