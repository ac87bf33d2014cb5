#pragma once
/// Luding's linear hysteretic adhesive normal law: S. Luding, "Cohesive,
/// frictional powders: contact models for tension", Granular Matter 10
/// (2008) 235–246: the hysteretic adhesive force f^hys plus the viscous
/// term γ₀ v_n:
///   k₁ ξ            while k₂ (ξ − ξ₀) ≥ k₁ ξ          (loading),
///   k₂ (ξ − ξ₀)     while k₁ ξ > k₂ (ξ − ξ₀) > −k_c ξ   (unloading, reloading),
///   −k_c ξ          while −k_c ξ ≥ k₂ (ξ − ξ₀)          (adhesive branch),
/// with ξ₀ = (1 − k₁/k₂) ξ_max the plastic overlap of the largest overlap
/// ξ_max so far; on the adhesive branch ξ_max moves so that the k₂ line runs
/// through the current point (ξ₀ = (1 + k_c/k₂) ξ), from where the contact
/// reloads. k₂ is constant here (the paper lets it grow with ξ_max up to k̂₂
/// for large overlaps). k_c = 0 is Walton–Braun's linear hysteresis (force
/// schemes eq. 10) with e_n = √(k₁/k₂); the law pulls for k_c > 0, so its row
/// is cohesive (md.clip_attractive leaves it alone).
///
/// Constants: k₁ = c.kn (md.kn, after md.meff), k₂ = md.k2_ratio · k₁,
/// k_c = md.kc_ratio · k₁, γ₀ = c.gn (md.gamma_n). Memory: mem[0] = ξ_max.
///
/// What follows from it (tests/md/test_luding.cpp checks both): the largest
/// pull before separation after loading to ξ_max,
///   f_pull = k_c (k₂ − k₁) ξ_max / (k₂ + k_c),
/// reached where the k₂ line meets the adhesive branch, at ξ* = k₂ ξ₀/(k₂ + k_c);
/// and, without damping, the restitution of a collision (the energy of the
/// three branches: ½ k₁² ξ_max²/k₂ given back on the k₂ line down to ξ₀,
/// less ½ k_c k₂ ξ₀²/(k₂ + k_c) taken on the pull side),
///   e² = k₁/k₂ − k_c (k₂ − k₁)² / (k₁ k₂ (k₂ + k_c)),
/// independent of the speed (the law has no length scale); e² ≤ 0: the
/// grains stick.
#include <cmath>

#include "moreau/md/laws/kernel.hpp"

namespace moreau {

template <>
struct NormalKernel<NormalLaw::Luding> {
    /// The branch a contact is on.
    enum class Branch { Loading, Unloading, Adhesive };
    struct Stiffness {
        double k1, k2, kc;
    };
    static Stiffness stiffnesses(const Constants& c) {
        constexpr std::size_t kK2 = lawKeyIndex("md.k2_ratio"), kKc = lawKeyIndex("md.kc_ratio");
        const LawValues& v = *c.lawValues;
        return {c.kn, v[kK2] * c.kn, v[kKc] * c.kn};
    }
    /// ξ₀ of the k₂ line of the largest overlap ξ_max.
    static double plasticOverlap(const Stiffness& k, double xiMax) { return (1.0 - k.k1 / k.k2) * xiMax; }
    /// The elastic force at ξ of the memory ξ_max, and its branch.
    static double elastic(const Stiffness& k, double xi, double xiMax, Branch& branch) {
        const double unloading = k.k2 * (xi - plasticOverlap(k, xiMax));
        if (unloading >= k.k1 * xi) {
            branch = Branch::Loading;
            return k.k1 * xi;
        }
        if (unloading <= -k.kc * xi) {
            branch = Branch::Adhesive;
            return -k.kc * xi;
        }
        branch = Branch::Unloading;
        return unloading;
    }

    static double force(const Constants& c, double xi, double xiDot, double* mem) {
        const Stiffness k = stiffnesses(c);
        double& xiMax = mem[0];
        Branch branch;
        const double f = elastic(k, xi, xiMax, branch);
        if (branch == Branch::Loading) {
            xiMax = std::max(xiMax, xi);
        } else if (branch == Branch::Adhesive && k.k2 > k.k1) {
            // The k₂ line follows the point down the adhesive branch:
            // ξ₀ = (1 + k_c/k₂) ξ, ξ_max = ξ₀ k₂/(k₂ − k₁). (k₂ = k₁ has no
            // plastic overlap and never reaches this branch.)
            xiMax = (k.k2 + k.kc) * xi / (k.k2 - k.k1);
        }
        return f + c.gn * xiDot;
    }
    /// What the contact gives back if it opens from here along its current
    /// path: ½ k₂ ((ξ − ξ₀)² − (ξ* − ξ₀)²) down the k₂ line to ξ*, then
    /// −½ k_c ξ*² on the adhesive branch (negative: the work to pull the
    /// grains apart). With k_c = 0 it is Walton–Braun's F²/(2 k₂).
    static double energy(const Constants& c, double xi, double, const double* mem) {
        const Stiffness k = stiffnesses(c);
        const double xi0 = plasticOverlap(k, mem[0]);
        const double xiStar = k.k2 * xi0 / (k.k2 + k.kc);
        if (xi <= xiStar) return -0.5 * k.kc * xi * xi;
        return 0.5 * k.k2 * ((xi - xi0) * (xi - xi0) - (xiStar - xi0) * (xiStar - xi0)) - 0.5 * k.kc * xiStar * xiStar;
    }
    /// ∂F/∂ξ on the current branch in the direction ξ moves (a closing
    /// contact off the loading line reloads along k₂), and γ₀.
    static void rates(const Constants& c, double xi, double xiDot, const double* mem, double& kU, double& kV) {
        const Stiffness k = stiffnesses(c);
        Branch branch;
        elastic(k, xi, mem[0], branch);
        kV = c.gn;
        if (branch == Branch::Loading) kU = xiDot >= 0.0 ? k.k1 : k.k2;
        else if (branch == Branch::Adhesive) kU = xiDot >= 0.0 ? k.k2 : -k.kc;
        else kU = k.k2;
    }
    /// The stiffness against a small compression: k₁ on the loading line, k₂ elsewhere.
    static double stiffness(const Constants& c, double xi, const double* mem) {
        const Stiffness k = stiffnesses(c);
        Branch branch;
        elastic(k, xi, mem[0], branch);
        return branch == Branch::Loading ? k.k1 : k.k2;
    }
    /// π √(m_eff/k₂): a collision on the stiffest branch alone (eq. 4
    /// without damping), what the step must resolve.
    static double duration(const MdSettings& s, const CollisionProbe& p) {
        const double k2 = s.lawValues[lawKeyIndex("md.k2_ratio")] * stiffnessScale(s, p.meff) * s.kn;
        return M_PI * std::sqrt(p.meff / k2);
    }
};

}  // namespace moreau
