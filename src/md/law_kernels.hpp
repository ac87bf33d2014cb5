#pragma once
/// The per-contact force kernels shared by MD's two contact loops: the
/// staged loop of MdSolver (every law, every integrator, md_solver.cpp) and
/// the fused pair loop of MdPairEngine (md/pair_engine.hpp). Internal to
/// src/md: both loops must run the same arithmetic, so that the fused loop
/// gives the staged loop's bits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "moreau/md/force_laws.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"
#include "pair_block.hpp"

namespace moreau::md_kernels {

/// Leapfrog kick and drift of every body (md.integrator = cd, see
/// MdSolver): v += Δt (F/m + g), ω += Δt I⁻¹ T, then x and q advance, and
/// the world's clock. With `builtAt` it also reports whether some body moved
/// more than √limit2 from builtAt (the Verlet rebuild test, minimum image).
/// A `drift` kernel of `lanes` lanes (pair_block.hpp) advances the grains
/// L at a time, with the same bits, where the world has no periodic axis
/// and no applied force. `clearForces` zeroes force and torque once read,
/// ready for the next step's sums (one pass over them fewer).
bool advanceLeapfrog(World& world, std::vector<Vec3>& force, std::vector<Vec3>& torque, double dt,
                     const std::vector<Vec3>* builtAt = nullptr, double limit2 = 0.0,
                     md_block::DriftKernel drift = nullptr, int lanes = 0, bool clearForces = false);

/// The contacts (or pairs) of each body, in key order, for per-body sums in
/// parallel: where body i is b, byB[bStart[i] .. bStart[i+1]); the list is
/// sorted by a, so where it is a is the range [aStart[i], aStart[i+1]).
/// `bodiesOf(k)` gives the (a, b) of entry k.
template <class BodiesOf>
void buildByBodyIndex(std::size_t nb, std::size_t m, BodiesOf bodiesOf, std::vector<std::int32_t>& aStart,
                      std::vector<std::int32_t>& bStart, std::vector<std::int32_t>& byB) {
    aStart.assign(nb + 1, 0);
    bStart.assign(nb + 1, 0);
    for (std::size_t k = 0; k < m; ++k) {
        const auto [a, b] = bodiesOf(k);
        ++aStart[static_cast<std::size_t>(a) + 1];
        ++bStart[static_cast<std::size_t>(b) + 1];
    }
    for (std::size_t i = 0; i < nb; ++i) {
        aStart[i + 1] += aStart[i];
        bStart[i + 1] += bStart[i];
    }
    byB.resize(m);
    std::vector<std::int32_t> fill(bStart.begin(), bStart.end() - 1);
    for (std::size_t k = 0; k < m; ++k)
        byB[static_cast<std::size_t>(fill[static_cast<std::size_t>(bodiesOf(k).second)]++)] = static_cast<std::int32_t>(k);
}

/// Throws DivergenceError naming the first body (lowest index) whose force
/// or torque is not finite: the same report for any thread count.
void checkFiniteForces(const std::vector<Vec3>& force, const std::vector<Vec3>& torque, long step);

/// Whether the forces and torques of bodies [first, last) are all finite
/// (one streaming pass, serial: for a range of a parallel region).
bool forcesFinite(const Vec3* force, const Vec3* torque, std::size_t first, std::size_t last);

/// Normal force on b along +n (force schemes eqs. 2, 6, 8, 9, 10) from the
/// overlap ξ and its rate ξ̇ = −V_n; `plastic` is the Walton–Braun memory
/// F_max of this contact.
template <NormalLaw N>
inline double normalForce(const Constants& c, double xi, double xiDot, double& plastic) {
    if constexpr (N == NormalLaw::Linear) {
        return c.kn * xi + c.gn * xiDot;
    } else if constexpr (N == NormalLaw::Hertz) {
        return c.kn * xi * std::sqrt(xi);
    } else if constexpr (N == NormalLaw::HertzDamped) {
        return c.kn * xi * std::sqrt(xi) + c.gn * xiDot;
    } else if constexpr (N == NormalLaw::HertzKuwabaraKono) {
        const double r = std::sqrt(xi);
        return c.kn * xi * r + c.gn * r * xiDot;
    } else {
        // Walton–Braun: load along k₁ ξ while beyond every earlier load;
        // otherwise unload (and reload) along k₂ (ξ − ξ₀), the line through
        // (F_max/k₁, F_max) with k₂ = k₁ + s F_max; ξ₀ is the permanent set.
        const double virgin = c.kn * xi;
        if (xiDot >= 0.0 && virgin >= plastic) {
            plastic = virgin;
            return virgin;
        }
        const double k2 = c.kn + c.s * plastic;
        const double xi0 = plastic / c.kn - plastic / k2;
        return std::max(0.0, k2 * (xi - xi0));
    }
}

/// ∂F_n/∂ξ (kU) and ∂F_n/∂ξ̇ (kV) of the normal laws at (ξ, ξ̇): the
/// linearisation the integrators use for da/dt, da/dr and the implicit kick
/// of BABAB-type schemes. Exact for every derivative of the linear law; for
/// the Hertz family and Walton–Braun only the first derivative follows from it.
template <NormalLaw N>
inline void normalRates(const Constants& c, double xi, double xiDot, double plastic, double& kU, double& kV) {
    if constexpr (N == NormalLaw::Linear) {
        kU = c.kn;
        kV = c.gn;
    } else if constexpr (N == NormalLaw::Hertz) {
        kU = 1.5 * c.kn * std::sqrt(xi);
        kV = 0.0;
    } else if constexpr (N == NormalLaw::HertzDamped) {
        kU = 1.5 * c.kn * std::sqrt(xi);
        kV = c.gn;
    } else if constexpr (N == NormalLaw::HertzKuwabaraKono) {
        const double r = std::sqrt(xi);
        kU = 1.5 * c.kn * r + (r > 0.0 ? 0.5 * c.gn * xiDot / r : 0.0);  // ∝ ξ^{-1/2}: singular at first touch
        kV = c.gn * r;
    } else {
        kV = 0.0;
        if (xiDot >= 0.0 && c.kn * xi >= plastic) {
            kU = c.kn;
        } else {
            const double k2 = c.kn + c.s * plastic;
            const double xi0 = plastic / c.kn - plastic / k2;
            kU = xi > xi0 ? k2 : 0.0;
        }
    }
}

/// Slip speeds up to this multiple of |V_n| are rounding, not slip. The
/// narrow phase's n = d (1/|d|) is a unit vector only to the last bit, so
/// V_t = V − (n·V) n of a head-on impact is a residue of a few ε |V_n|,
/// along ±n or in any direction: normalised, it would give Coulomb's full
/// μ F_n in that direction (along n: ±25 % of the normal force at μ = 0.25,
/// on the steps where |n| ≠ 1; across it: spin from a head-on impact).
inline constexpr double kSlipRounding = 64.0 * std::numeric_limits<double>::epsilon();

/// Tangential force of the velocity laws (force schemes eqs. 13–15) from
/// the tangential velocity V_t of b against a, its normal velocity V_n and
/// the normal force. Coulomb's force does not vanish with V_t, so a V_t
/// within rounding of the normal projection (kSlipRounding |V_n|) counts as
/// no slip; the viscous forces vanish with V_t and need no such cut.
template <TangentialLaw T>
inline Vec3 tangentialForce(const Constants& c, const Vec3& Vt, double Vn, double Fn) {
    const double limit = c.mu * std::abs(Fn);
    if constexpr (T == TangentialLaw::Coulomb) {
        const double v = Vt.norm();
        return v > kSlipRounding * std::abs(Vn) ? Vec3(-limit / v * Vt) : Vec3::Zero();
    } else if constexpr (T == TangentialLaw::Viscous) {
        return -c.gt * Vt;
    } else if constexpr (T == TangentialLaw::ViscousCoulomb) {
        const double v = Vt.norm();
        return v > 0.0 ? Vec3(-std::min(c.gt * v, limit) / v * Vt) : Vec3::Zero();
    } else {
        return Vec3::Zero();
    }
}

/// Cundall–Strack spring (force schemes eqs. 16–17) with damping −γ_t V_t:
/// `spring` is ζ, already carried into the current tangent plane, advanced
/// here by `dxi` (V_t Δt, or Peña's geometric increment). The contact
/// sticks up to μ_s |F_n| (μ_d once it slides) and slides at μ_d |F_n|.
[[gnu::always_inline]] inline Vec3 cundallSpring(const Constants& c, const Vec3& Vt, const Vec3& dxi, double Fn, Vec3& spring,
                          bool& sliding) {
    spring += dxi;  // eq. 17: ζ = ∫ v_s dt
    Vec3 Ft = -c.kt * spring - c.gt * Vt;
    // Squared lengths compared: a sticking contact (the common case) takes no square root.
    const double ft2 = Ft.squaredNorm();
    const double limit = (sliding ? c.mu : c.muStatic) * std::abs(Fn);
    sliding = ft2 > limit * limit;
    if (sliding) {
        // Coulomb (eq. 16): the force slides at μ|F_n|; the spring is
        // shortened to the length that gives exactly that force.
        Ft *= c.mu * std::abs(Fn) / std::sqrt(ft2);
        spring = c.kt > 0.0 ? Vec3(-(Ft + c.gt * Vt) / c.kt) : Vec3::Zero();
    }
    return Ft;
}

/// `f` scaled down to length `limit` if longer.
inline Vec3 capped(const Vec3& f, double limit) {
    const double len = f.norm();
    return len > limit ? Vec3(f * (limit / len)) : f;
}

/// Doubles of per-contact memory a tangential law declares besides the
/// spring vector (MdSolver::aux_; model/law_table.hpp), and whether it keeps
/// a sliding flag where μ_s ≠ μ_d.
constexpr std::size_t lawAux(TangentialLaw t) { return static_cast<std::size_t>(lawRow(t).extraSlots); }
constexpr bool hasSlidingState(TangentialLaw t) { return lawRow(t).slidingFlag; }

/// The constants of contact k after the effective-mass convention: walls (fixed
/// or mobile) count with their own mass, fixed ones as infinite.
inline Constants contactConstants(const MdSettings& s, double invMa, double invMb, double mu) {
    const double meff = 1.0 / (invMa + invMb);
    const double kScale = s.meff == EffectiveMass::Both ? meff : 1.0;
    const double gScale = s.meff == EffectiveMass::None ? 1.0 : meff;
    return Constants{kScale * s.kn, gScale * s.gammaN, kScale * s.s, kScale * s.kt, gScale * s.gammaT, mu,
                     s.muStaticRatio * mu};
}
/// 1/m of a body, 0 for a fixed wall (mass 0): the inverse masses above.
inline double inverseMass(const World& world, std::size_t i) { return world.mass[i] > 0.0 ? 1.0 / world.mass[i] : 0.0; }
inline Constants contactConstants(const MdSettings& s, const World& world, BodyId a, BodyId b) {
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    return contactConstants(s, inverseMass(world, ia), inverseMass(world, ib),
                            world.isWall(b) ? world.wall(b).mu : world.muGrain);
}

}  // namespace moreau::md_kernels
