#pragma once
/// Rolling resistance, the elastic–plastic spring–dashpot model of Ai,
/// Chen, Rotter & Ooi, Powder Technology 206 (2011) 269, "model C" (their
/// eqs. 13–18): a moment between the pair against their relative rolling,
/// M_r = M_r^k + M_r^d.
///  - Spring: ΔM_r^k = −k_r Δθ_r (eq. 13), Δθ_r = ω_r Δt the relative
///    rolling rotation, ω_r = ω_a − ω_b without its twist about n, and
///    k_r = 2.25 k_n μ_r² R_r² (eq. 15; k_n the normal law's elastic
///    stiffness at the current overlap, R_r = R* the rolling radius). The
///    spring is kept in the tangent plane and saturates at
///    M_r^m = μ_r R_r |F_n| (eq. 14): a sphere rolling at the limit loses
///    μ_r R_r |F_n| per radian.
///  - Dashpot: M_r^d = −C_r ω_r while the spring is below the limit, 0 at it
///    (eq. 16 with f = 0), C_r = η_r 2 √(I_r k_r) (eq. 17) with
///    I_r = [1/(I_a + m_a r_a²) + 1/(I_b + m_b r_b²)]⁻¹ (eq. 18; a wall's
///    term is 0).
/// A sphere rolling on a plane at the limit then stops after 7 v₀²/(10 μ_r g),
/// and one on a slope holds while tan α ≤ μ_r. Memory: M_r^k (3 slots) and
/// the last total moment (3, for the work's trapezoid).
#include <algorithm>
#include <cmath>

#include "moreau/md/laws/kernel.hpp"

namespace moreau {

template <RollingLaw R>
struct RollingKernel;

/// The moment a rolling law puts on body a (b feels the opposite):
/// parameters, kinematics, the normal force and the normal law's elastic
/// stiffness k_n, and the law's memory (updated in place).
using RollingMoment = Vec3 (*)(const ContactState&, const Constants&, double Fn, double kn, double* mem, LawOutput&);

template <>
struct RollingKernel<RollingLaw::None> {
    static Vec3 moment(const ContactState&, const Constants&, double, double, double*, LawOutput&) {
        return Vec3::Zero();
    }
};

/// A body's moment of inertia about a rolling axis through its contact
/// point, I + m r² (∞ for a wall or a body that cannot turn: 1/∞ = 0 here).
inline double inverseRollingInertia(const World& world, std::size_t i) {
    if (world.isWall(static_cast<BodyId>(i)) || world.mass[i] <= 0.0) return 0.0;
    const double invI = world.invInertia[i].maxCoeff();
    if (invI <= 0.0) return 0.0;
    return 1.0 / (1.0 / invI + world.mass[i] * world.radius[i] * world.radius[i]);
}

template <>
struct RollingKernel<RollingLaw::AiTypeC> {
    static Vec3 moment(const ContactState& k, const Constants&, double Fn, double kn, double* mem, LawOutput& out) {
        constexpr std::size_t kMuRoll = lawKeyIndex("md.mu_roll"), kEtaRoll = lawKeyIndex("md.eta_roll");
        const World& world = k.world;
        const Vec3& n = k.n;
        const double muR = k.settings.lawValues[kMuRoll], eta = k.settings.lawValues[kEtaRoll];
        const double Rr = k.reducedRadius();
        const Vec3 spin = world.w[k.ia] - world.w[k.ib];
        const Vec3 rolling = spin - n.dot(spin) * n;  // ω_r: the twist about n is not rolling
        const double kr = 2.25 * kn * muR * muR * Rr * Rr;              // eq. 15
        Vec3 spring = rotateIntoPlane(slotVec3(mem), n) - kr * k.dt * rolling;  // eq. 13
        const double limit = muR * Rr * std::abs(Fn);                  // eq. 14
        const double len = spring.norm();
        const bool atLimit = len >= limit;
        if (len > limit) spring *= limit / len;
        const double invIr = inverseRollingInertia(world, k.ia) + inverseRollingInertia(world, k.ib);
        const double Cr = invIr > 0.0 ? eta * 2.0 * std::sqrt(kr / invIr) : 0.0;  // eqs. 17–18
        const Vec3 M = atLimit ? spring : Vec3(spring - Cr * rolling);             // eq. 16, f = 0
        // M on a and −M on b do the work (M_prev + M)/2 · (ω_a − ω_b) Δt on
        // the bodies; the contact receives its opposite.
        out.work = -0.5 * (slotVec3(mem + 3) + M).dot(spin) * k.dt;
        out.energy = kr > 0.0 ? 0.5 * spring.squaredNorm() / kr : 0.0;
        setSlotVec3(mem, spring);
        setSlotVec3(mem + 3, M);
        return M;
    }
};

}  // namespace moreau
