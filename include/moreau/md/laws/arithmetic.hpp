#pragma once
/// The part of the MD force laws written once for any number type: the
/// scalar `double` (with Eigen's Vec3) of the staged loop and the fused
/// pair pass, and the lane packs of the fused pass's vector kernel
/// (src/md/pair_block_kernel.inc), which runs the same operations, in the
/// same order, on L contacts at once — the same bits (-ffp-contract=off).
///
/// This header includes no Eigen and no inline function of the rest of the
/// program: the lane kernel is compiled for ISAs the program may not run
/// (pair_block.hpp). A vector type V of the arithmetic comes with
/// VecOps<V> (dot, sqrt, abs, select, any, zero; Real and Mask types):
/// kernel.hpp gives it for Vec3, the lane kernel for its own vectors.
/// Branches are selects, so a lane pack takes both sides.
#include <type_traits>

#include "moreau/model/law_table.hpp"

namespace moreau {

/// Constants of one contact after the effective-mass convention (force
/// schemes §2, last paragraph) and the friction coefficients of its pair.
template <class R>
struct ConstantsOf {
    R kn, gn, s, kt, gt;
    R mu;        ///< dynamic (sliding) friction coefficient μ_d
    R muStatic;  ///< static friction coefficient μ_s ≥ μ_d
    R kScale;    ///< what multiplies the scene's stiffnesses: 1, or m_eff where md.meff = both
    /// The values of the keys the laws declare (MdSettings::lawValues), for
    /// a kernel that reads its own: set by the staged loop, null in the
    /// fused pass (whose laws declare none).
    const LawValues* lawValues = nullptr;
};
using Constants = ConstantsOf<double>;

template <class V>
struct VecOps;

/// The kernels, one specialisation per law (md/laws/*.hpp). The laws the
/// lane schedule takes (their rows' `lanes`) give their arithmetic for any
/// number type; the others are written for the staged loop's ContactState.
template <NormalLaw N>
struct NormalKernel;
template <TangentialLaw T>
struct TangentialKernel;

/// m ? a() : b(): a branch for a scalar mask (the side not taken is not
/// computed), both sides and a select for a lane pack. The same bits.
template <class V, class M, class A, class B>
[[gnu::always_inline]] inline V choose(M m, A a, B b) {
    if constexpr (std::is_same_v<M, bool>) return m ? V(a()) : V(b());
    else return VecOps<V>::select(m, V(a()), V(b()));
}

/// Slip speeds up to this multiple of |V_n| are rounding, not slip. The
/// narrow phase's n = d (1/|d|) is a unit vector only to the last bit, so
/// V_t = V − (n·V) n of a head-on impact is a residue of a few ε |V_n|,
/// along ±n or in any direction: normalised, it would give Coulomb's full
/// μ F_n in that direction (along n: ±25 % of the normal force at μ = 0.25,
/// on the steps where |n| ≠ 1; across it: spin from a head-on impact).
inline constexpr double kSlipRounding = 64.0 * 0x1p-52;

/// Turns a vector of the old tangent plane into the new one, keeping its
/// length: the contact frame rotates with the pair (what Cundall–Strack
/// springs need so that a rigid rotation does not load them). One square
/// root (of the ratio of the squared lengths), not two.
template <class V>
[[gnu::always_inline]] inline V rotateIntoPlane(const V& old, const V& n) {
    using O = VecOps<V>;
    const V inPlane = old - O::dot(n, old) * n;
    const auto len2 = O::dot(old, old), lenIn2 = O::dot(inPlane, inPlane);
    return choose<V>(lenIn2 > 0.0, [&] { return inPlane * O::sqrt(len2 / lenIn2); }, [] { return O::zero(); });
}

/// The Cundall–Strack spring (force schemes eqs. 16–17) with damping
/// −γ_t V_t: `spring` is ζ, already carried into the current tangent plane,
/// advanced here by `dxi` (V_t Δt, or a stage's increment). The contact
/// sticks up to μ_s |F_n| (μ_d once it slides: `sliding` in and out) and
/// slides at μ_d |F_n|, the spring shortened to the length that gives
/// exactly that force. The stiffness is `kt` (c.kt for the Cundall–Strack
/// spring; Hertz–Mindlin's 8 G* a, mindlin.hpp).
template <class V, class R, class M>
[[gnu::always_inline]] inline V cundallSpring(const ConstantsOf<R>& c, R kt, const V& Vt, const V& dxi, R Fn,
                                              V& spring, M& sliding) {
    using O = VecOps<V>;
    spring = V(spring + dxi);  // eq. 17: ζ = ∫ v_s dt
    V Ft = V(-kt * spring - c.gt * Vt);
    // Squared lengths compared: a sticking contact (the common case) takes no square root.
    const R ft2 = O::dot(Ft, Ft);
    const R absFn = O::abs(Fn);
    const R limit = O::select(sliding, c.mu, c.muStatic) * absFn;
    sliding = ft2 > limit * limit;
    if (O::any(sliding)) {
        Ft = O::select(sliding, V(Ft * (c.mu * absFn / O::sqrt(ft2))), Ft);  // eq. 16
        spring = O::select(sliding, O::select(kt > 0.0, V(-(Ft + c.gt * Vt) / kt), O::zero()), spring);
    }
    return Ft;
}

}  // namespace moreau
