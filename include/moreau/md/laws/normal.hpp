#pragma once
/// The normal force laws of the force-schemes paper (eqs. 2, 6, 8, 9, 10):
/// the force on b along +n from the overlap ξ and its rate ξ̇ = −V_n.
/// Each kernel gives the force, the elastic energy it stores, its
/// linearisation (∂F/∂ξ, ∂F/∂ξ̇: what the integrators use for da/dt, da/dr
/// and implicit kicks), its elastic stiffness (what the rolling law
/// scales with) and the contact duration the run guard wants resolved
/// (`duration(settings, probe)`: a template, so that this header needs
/// neither MdSettings nor CollisionProbe, md/laws/kernel.hpp). `mem` is the
/// law's memory (model/law_table.hpp: only Walton–Braun keeps one slot,
/// F_max). The forces of the laws the lane schedule takes are written for
/// any number type (arithmetic.hpp; sqrt is found by argument-dependent
/// lookup for a lane pack).
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/md/laws/arithmetic.hpp"

namespace moreau {

/// Eq. 2: k_n ξ + γ_n ξ̇.
template <>
struct NormalKernel<NormalLaw::Linear> {
    template <class R>
    static R force(const ConstantsOf<R>& c, R xi, R xiDot, double*) {
        return c.kn * xi + c.gn * xiDot;
    }
    static double energy(const Constants& c, double xi, double, const double*) { return 0.5 * c.kn * xi * xi; }
    static void rates(const Constants& c, double, double, const double*, double& kU, double& kV) {
        kU = c.kn;
        kV = c.gn;
    }
    static double stiffness(const Constants& c, double, const double*) { return c.kn; }
    /// π √(m_eff/k_n) (eq. 4 without damping), or md.tn where (md.en, md.tn) set the law.
    template <class Settings, class Probe>
    static double duration(const Settings& s, const Probe& p) {
        return s.tn > 0.0 ? s.tn : M_PI * std::sqrt(p.meff / (stiffnessScale(s, p.meff) * s.kn));
    }
};

/// The duration of an undamped Hertz collision k̃ ξ^{3/2} at closing speed
/// v (eq. 7): 3.21 (m_eff/k̃)^{2/5} v^{−1/5}; infinity at v = 0 (nothing sets a scale).
inline double hertzDuration(double meff, double kTilde, double speed) {
    if (!(speed > 0.0)) return std::numeric_limits<double>::infinity();
    return 3.21 * std::pow(meff / kTilde, 0.4) * std::pow(speed, -0.2);
}

/// The Hertz family's elastic part k̃ ξ^{3/2}, its energy 0.4 k̃ ξ^{5/2},
/// stiffness 1.5 k̃ ξ^{1/2} and contact duration (eq. 7, undamped).
struct HertzElastic {
    static double energy(const Constants& c, double xi, double, const double*) {
        return 0.4 * c.kn * xi * xi * std::sqrt(xi);
    }
    static double stiffness(const Constants& c, double xi, const double*) { return 1.5 * c.kn * std::sqrt(xi); }
    template <class Settings, class Probe>
    static double duration(const Settings& s, const Probe& p) {
        return hertzDuration(p.meff, stiffnessScale(s, p.meff) * s.kn, p.speed);
    }
};

/// Eq. 6: k̃ ξ^{3/2}.
template <>
struct NormalKernel<NormalLaw::Hertz> : HertzElastic {
    template <class R>
    static R force(const ConstantsOf<R>& c, R xi, R, double*) {
        using std::sqrt;
        return c.kn * xi * sqrt(xi);
    }
    // The first derivative only: dF/dt = (∂F/∂ξ) ξ̇ (the second would need the curvature term in ξ̇²).
    static void rates(const Constants& c, double xi, double, const double*, double& kU, double& kV) {
        kU = 1.5 * c.kn * std::sqrt(xi);
        kV = 0.0;
    }
};

/// Eq. 8: k̃ ξ^{3/2} + γ_n ξ̇.
template <>
struct NormalKernel<NormalLaw::HertzDamped> : HertzElastic {
    template <class R>
    static R force(const ConstantsOf<R>& c, R xi, R xiDot, double*) {
        using std::sqrt;
        return c.kn * xi * sqrt(xi) + c.gn * xiDot;
    }
    static void rates(const Constants& c, double xi, double, const double*, double& kU, double& kV) {
        kU = 1.5 * c.kn * std::sqrt(xi);
        kV = c.gn;
    }
};

/// Eq. 9 (Hertz–Kuwabara–Kono): k̃ ξ^{3/2} + γ̃ ξ^{1/2} ξ̇.
template <>
struct NormalKernel<NormalLaw::HertzKuwabaraKono> : HertzElastic {
    template <class R>
    static R force(const ConstantsOf<R>& c, R xi, R xiDot, double*) {
        using std::sqrt;
        const R r = sqrt(xi);
        return c.kn * xi * r + c.gn * r * xiDot;
    }
    static void rates(const Constants& c, double xi, double xiDot, const double*, double& kU, double& kV) {
        const double r = std::sqrt(xi);
        kU = 1.5 * c.kn * r + (r > 0.0 ? 0.5 * c.gn * xiDot / r : 0.0);  // ∝ ξ^{-1/2}: singular at first touch
        kV = c.gn * r;
    }
};

/// Eq. 10 (Walton–Braun): load along k₁ ξ while beyond every earlier load;
/// otherwise unload (and reload) along k₂ (ξ − ξ₀), the line through
/// (F_max/k₁, F_max) with k₂ = k₁ + s F_max; ξ₀ is the permanent set.
/// mem[0] is F_max.
template <>
struct NormalKernel<NormalLaw::WaltonBraun> {
    static double force(const Constants& c, double xi, double xiDot, double* mem) {
        double& plastic = mem[0];
        const double virgin = c.kn * xi;
        if (xiDot >= 0.0 && virgin >= plastic) {
            plastic = virgin;
            return virgin;
        }
        const double k2 = c.kn + c.s * plastic;
        const double xi0 = plastic / c.kn - plastic / k2;
        return std::max(0.0, k2 * (xi - xi0));
    }
    /// F²/(2 k₂): what unloading gives back.
    static double energy(const Constants& c, double, double Fn, const double* mem) {
        return Fn > 0.0 ? 0.5 * Fn * Fn / (c.kn + c.s * mem[0]) : 0.0;
    }
    static void rates(const Constants& c, double xi, double xiDot, const double* mem, double& kU, double& kV) {
        const double plastic = mem[0];
        kV = 0.0;
        if (xiDot >= 0.0 && c.kn * xi >= plastic) {
            kU = c.kn;
        } else {
            const double k2 = c.kn + c.s * plastic;
            const double xi0 = plastic / c.kn - plastic / k2;
            kU = xi > xi0 ? k2 : 0.0;
        }
    }
    static double stiffness(const Constants& c, double xi, const double* mem) {
        double kU, kV;
        rates(c, xi, 0.0, mem, kU, kV);
        return kU;
    }
    /// The loading branch's π √(m_eff/k₁) (eq. 4 without damping).
    template <class Settings, class Probe>
    static double duration(const Settings& s, const Probe& p) {
        return M_PI * std::sqrt(p.meff / (stiffnessScale(s, p.meff) * s.kn));
    }
};

}  // namespace moreau
