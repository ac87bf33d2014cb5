#pragma once
/// What MD's two schedules of the force stage share besides the law
/// kernels (md/laws/): the staged loop of MdForceStage (every law, every
/// integrator, force_stage.cpp) and the pair schedule (pair_schedule.cpp)
/// — the contact constants, the per-body sums, the
/// finiteness checks and the leapfrog kick and drift (integrators/verlet.cpp).
/// Internal to src/md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "moreau/contact/contact.hpp"
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

/// contactVelocity of two spheres, or a sphere and a wall (no clumps in the world).
inline Vec3 sphereContactVelocity(const World& world, const Contact& k) {
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    return world.v[ib] - world.v[ia] - (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(k.n);
}
/// Velocity of b's contact point relative to a's at contact k
/// (CD eq. 3 with l_a = r_a n, l_b = −r_b n; a clump's arms from leverArm;
/// a deforming cell's image velocity is the caller's to add).
inline Vec3 contactVelocity(const World& world, const Contact& k) {
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    if (world.hasShapes())
        return world.v[ib] + world.w[ib].cross(leverArm(world, k, k.b)) - world.v[ia] -
               world.w[ia].cross(leverArm(world, k, k.a));
    return sphereContactVelocity(world, k);
}

/// The constants of contact k after the effective-mass convention: walls (fixed
/// or mobile) count with their own mass, fixed ones as infinite.
inline Constants contactConstants(const MdSettings& s, double invMa, double invMb, double mu) {
    const double meff = 1.0 / (invMa + invMb);
    const double kScale = s.meff == EffectiveMass::Both ? meff : 1.0;
    const double gScale = s.meff == EffectiveMass::None ? 1.0 : meff;
    return Constants{kScale * s.kn, gScale * s.gammaN, kScale * s.s, kScale * s.kt, gScale * s.gammaT, mu,
                     s.muStaticRatio * mu, kScale};
}
/// 1/m of a body, 0 for a fixed wall (mass 0): the inverse masses above.
inline double inverseMass(const World& world, std::size_t i) { return world.mass[i] > 0.0 ? 1.0 / world.mass[i] : 0.0; }
inline Constants contactConstants(const MdSettings& s, const World& world, BodyId a, BodyId b) {
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    return contactConstants(s, inverseMass(world, ia), inverseMass(world, ib),
                            world.isWall(b) ? world.wall(b).mu : world.muGrain);
}
/// Once per run: what the normal law's kernel derives from the settings
/// alone (its runConstants, where it declares one) into s.normalRunConstants.
inline void prepareRunConstants(MdSettings& s) {
    withNormalLaw(s.normal, [&]<NormalLaw N>() {
        if constexpr (requires { NormalKernel<N>::runConstants(s); }) s.normalRunConstants = NormalKernel<N>::runConstants(s);
    });
}
/// The constants of contact (a, b) under the normal law N: those above,
/// the law values for the kernels that read their own keys, and the
/// normal law's per-pair constants where its kernel computes them from the
/// pair and the run's constants (hertz-material: k̃ and Tsuji's η from E*, R*, m_eff).
template <NormalLaw N>
inline Constants contactConstants(const MdSettings& s, const World& world, const Contact& k) {
    Constants c = contactConstants(s, world, k.a, k.b);
    c.lawValues = &s.lawValues;
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    if constexpr (requires { NormalKernel<N>::pairConstants(c, s, world, ia, ib, 0.0, 0.0); })
        NormalKernel<N>::pairConstants(c, s, world, ia, ib, contactRadius(world, k, k.a), contactRadius(world, k, k.b));
    return c;
}

}  // namespace moreau::md_kernels
