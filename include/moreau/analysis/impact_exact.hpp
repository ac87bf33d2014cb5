#pragma once
/// The exact solution of a sphere's oblique impact on a fixed wall with the
/// linear model of the integration-schemes paper (Kruggel-Emden et al. 2008,
/// §2 and §4, eqs. 1–4 and 24–37):
///
///   normal:      m ÿ + γ_y ẏ + K_y y = 0 while F_n = K_y y + γ_y ẏ > 0,
///   tangential:  a spring ξ on the contact-point coordinate s = x + Rθ,
///                F_t = −K_x ξ, ξ̇ = ṡ while K_x |ξ| < μ F_n (stick); at the
///                bound the spring is held at ξ = ±μ F_n/K_x and the force
///                slides at ∓μ F_n (slip).
///
/// Time t = 0 is the first touch (y = 0, ẏ = v_y0); the contact ends at t_f,
/// where F_n returns to zero (eq. 4). Between mode switches every quantity
/// has a closed form: y, ẏ from eqs. 24–25; in stick the spring oscillates
/// at ω_s = sqrt(r K_x/m), r = 1 + m R²/I (eqs. 26–31); in slip the
/// tangential impulse is ∓μ ∫F_n dt = ±μ m (ẏ(t) − ẏ(t_a)), since F_n = −m ÿ
/// (the closed form behind eqs. 32–37). The switches are roots of
/// K_x|ξ(t)| − μ F_n(t) (stick → slip) and of σ ṡ(t) − μ Ḟ_n(t)/K_x (slip →
/// stick: the free spring would move inside the bound), found by a fine scan
/// and bisection to machine precision.
///
/// Where the paper omits a step: it writes the stick solution in s (the
/// spring elongation equals s only until the first slip); here the stick
/// phases start from the spring ξ_a left at the bound by the preceding slip,
/// with s and ξ differing by the slid distance. It also names only three
/// switch times t₁…t₃; the scan finds any number of switches.
#include <vector>

namespace moreau {

/// Constants of the impact (SI units).
struct ImpactModel {
    double mass = 0.0;     ///< m
    double radius = 0.0;   ///< R
    double inertia = 0.0;  ///< I about the centre
    double ky = 0.0;       ///< normal stiffness K_y
    double gammaY = 0.0;   ///< normal damping γ_y
    double kx = 0.0;       ///< tangential stiffness K_x
    double mu = 0.0;       ///< Coulomb coefficient μ
};

enum class ImpactMode { Stick, Slip };

struct ImpactPhase {
    double start = 0.0;  ///< time the phase begins
    ImpactMode mode = ImpactMode::Stick;
    double sign = 0.0;   ///< slip: sign σ of the spring (the force is −σ μ F_n)
};

/// Outcome of one impact.
struct ImpactResult {
    double contactTime = 0.0;  ///< t_f (eq. 4)
    double vxFinal = 0.0;      ///< v_x after the contact
    double vyFinal = 0.0;      ///< rebound normal speed (> 0)
    double omegaFinal = 0.0;   ///< ω_f
    double en = 0.0;           ///< e_n = v_yf / v_y0
    double et = 0.0;           ///< e_t = v_xf / v_x0 (NaN when v_x0 = 0)
    double beta = 0.0;         ///< rebound angle (degrees from the normal): atan(v_xf / v_yf)
    std::vector<ImpactPhase> phases;  ///< the modes in order, the first at t = 0
};

/// Exact impact: approach speed vy0 > 0 along the wall normal, tangential
/// velocity vx0 and spin omega0 (ṡ₀ = v_x0 + R ω₀). Throws std::invalid_argument
/// for an overdamped or non-positive normal model.
ImpactResult exactImpact(const ImpactModel& model, double vx0, double vy0, double omega0 = 0.0);

/// Linear normal law: e_n and t_f of eqs. 3–4 (contact ends at F_n = 0).
double linearRestitution(double mass, double ky, double gammaY);
double linearContactTime(double mass, double ky, double gammaY);

/// The inverse: K_y and γ_y with the given e_n ∈ (e^−2, 1) and t_f (eqs. 3–4
/// solved: δ = ln e_n / t_f, ω_y from ω t_f = π + 2 atan(δ/ω) by bisection).
struct LinearNormal {
    double ky = 0.0, gammaY = 0.0;
};
LinearNormal linearNormalFor(double mass, double en, double tf);

/// The Gorham–Kharaz alumina sphere on an aluminium plate (integration
/// schemes §2): e_n(v) = χ₁ (v + v₀₀)^−χ₂ with v₀₀ = χ₁^(1/χ₂), t_f(v) = χ₃ v^−χ₄,
/// K_x = κ m π²/t_f².
struct GorhamKharaz {
    double mass = 0.26e-3;    ///< kg
    double radius = 2.5e-3;   ///< m
    double speed = 3.85;      ///< impact speed, m/s
    double chi1 = 0.8377, chi2 = 0.2121, chi3 = 0.000017, chi4 = 0.1907;
    double kappa = 0.8035;    ///< tangential to normal stiffness ratio
    double mu = 0.18;

    double restitution(double vy0) const;  ///< e_n(v_y0)
    double contactTime(double vy0) const;  ///< t_f(v_y0)
    /// The model for an impact with normal speed vy0: K_y, γ_y from e_n, t_f
    /// (eqs. 3–4), K_x = κ m π²/t_f², I = 2/5 m R².
    ImpactModel model(double vy0) const;
};

}  // namespace moreau
