#pragma once
/// The Cundall–Strack tangential spring (force schemes eqs. 16–17), kept in
/// the tangent plane and limited by Coulomb. Memory: the spring ζ (3 slots).
#include <cmath>

#include "moreau/md/laws/kernel.hpp"

namespace moreau {

/// Eqs. 16–17 with damping −γ_t V_t: `spring` is ζ, already carried into
/// the current tangent plane, advanced here by `dxi` (V_t Δt, or a stage's
/// increment). The contact sticks up to μ_s |F_n| (μ_d once it slides) and
/// slides at μ_d |F_n|. The spring stiffness is `kt` (c.kt for the
/// Cundall–Strack spring; Hertz–Mindlin's 8 G* a, md/laws/mindlin.hpp).
[[gnu::always_inline]] inline Vec3 cundallSpring(const Constants& c, double kt, const Vec3& Vt, const Vec3& dxi,
                                                 double Fn, Vec3& spring, bool& sliding) {
    spring += dxi;  // eq. 17: ζ = ∫ v_s dt
    Vec3 Ft = -kt * spring - c.gt * Vt;
    // Squared lengths compared: a sticking contact (the common case) takes no square root.
    const double ft2 = Ft.squaredNorm();
    const double limit = (sliding ? c.mu : c.muStatic) * std::abs(Fn);
    sliding = ft2 > limit * limit;
    if (sliding) {
        // Coulomb (eq. 16): the force slides at μ|F_n|; the spring is
        // shortened to the length that gives exactly that force.
        Ft *= c.mu * std::abs(Fn) / std::sqrt(ft2);
        spring = kt > 0.0 ? Vec3(-(Ft + c.gt * Vt) / kt) : Vec3::Zero();
    }
    return Ft;
}

template <>
struct TangentialKernel<TangentialLaw::Spring> {
    [[gnu::always_inline]] static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem,
                                             bool& sliding, LawOutput& out) {
        // The spring carried over, turned into the new tangent plane with
        // its length kept (the contact frame rotates with the pair).
        Vec3 spring = rotateIntoPlane(slotVec3(mem), k.n);
        const Vec3 Ft = cundallSpring(c, c.kt, k.Vt, k.movement(), Fn, spring, sliding);
        setSlotVec3(mem, spring);
        out.energy = 0.5 * c.kt * spring.squaredNorm();
        return Ft;
    }
};

}  // namespace moreau
