#pragma once
/// The tangential laws of the relative velocity alone (force schemes eqs.
/// 13–15), and no tangential force: no memory. Any number type
/// (arithmetic.hpp): `apply` gives the force on b from the contact's normal
/// n, tangential velocity V_t, normal velocity V_n and normal force F_n.
#include "moreau/md/laws/arithmetic.hpp"

namespace moreau {

/// No tangential force.
template <>
struct TangentialKernel<TangentialLaw::None> {
    template <class V, class R, class M>
    static V apply(const ConstantsOf<R>&, const V&, const V&, R, R, const V&, V&, M&) {
        return VecOps<V>::zero();
    }
    template <class Rate, class V>
    static void rate(const Rate&, V&) {}
};

/// Eq. 13: −μ |F_n| v̂_s. Coulomb's force does not vanish with V_t, so a V_t
/// within rounding of the normal projection (kSlipRounding |V_n|) counts as
/// no slip.
template <>
struct TangentialKernel<TangentialLaw::Coulomb> {
    template <class V, class R, class M>
    static V apply(const ConstantsOf<R>& c, const V&, const V& Vt, R Vn, R Fn, const V&, V&, M&) {
        using O = VecOps<V>;
        const R limit = c.mu * O::abs(Fn);
        const R v = O::sqrt(O::dot(Vt, Vt));
        return choose<V>(v > kSlipRounding * O::abs(Vn), [&] { return -limit / v * Vt; }, [] { return O::zero(); });
    }
    template <class Rate, class V>
    static void rate(const Rate& r, V& d) {
        d += r.slide;
    }
};

/// Eq. 14: −γ_s v_s.
template <>
struct TangentialKernel<TangentialLaw::Viscous> {
    template <class V, class R, class M>
    static V apply(const ConstantsOf<R>& c, const V&, const V& Vt, R, R, const V&, V&, M&) {
        return V(-c.gt * Vt);
    }
    template <class Rate, class V>
    static void rate(const Rate& r, V& d) {
        d += V(-r.c.gt * r.vt);
    }
};

/// Eq. 15: −min(γ_s |v_s|, μ |F_n|) v̂_s.
template <>
struct TangentialKernel<TangentialLaw::ViscousCoulomb> {
    template <class V, class R, class M>
    static V apply(const ConstantsOf<R>& c, const V&, const V& Vt, R, R Fn, const V&, V&, M&) {
        using O = VecOps<V>;
        const R limit = c.mu * O::abs(Fn);
        const R v = O::sqrt(O::dot(Vt, Vt));
        const R viscous = c.gt * v;
        return choose<V>(
            v > 0.0, [&] { return -O::select(limit < viscous, limit, viscous) / v * Vt; }, [] { return O::zero(); });
    }
    template <class Rate, class V>
    static void rate(const Rate& r, V& d) {
        d += r.sticks ? V(-r.c.gt * r.vt) : r.slide;
    }
};

}  // namespace moreau
