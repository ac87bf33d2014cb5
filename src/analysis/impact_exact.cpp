#include "moreau/analysis/impact_exact.hpp"

#include <cmath>
#include <stdexcept>

namespace moreau {

namespace {

/// The normal motion (eqs. 24–25) and its force.
struct Normal {
    double m, k, g, vy0, delta, w;
    Normal(double mass, double ky, double gammaY, double v) : m(mass), k(ky), g(gammaY), vy0(v) {
        if (!(mass > 0.0) || !(ky > 0.0) || !(gammaY >= 0.0))
            throw std::invalid_argument("exactImpact: mass and K_y must be positive, gamma_y non-negative");
        delta = -g / (2.0 * m);
        const double w2 = k / m - delta * delta;
        if (!(w2 > 0.0)) throw std::invalid_argument("exactImpact: the normal model is overdamped");
        w = std::sqrt(w2);
    }
    double y(double t) const { return vy0 / w * std::exp(delta * t) * std::sin(w * t); }
    double vy(double t) const {
        return vy0 * std::exp(delta * t) * (delta / w * std::sin(w * t) + std::cos(w * t));
    }
    double fn(double t) const { return k * y(t) + g * vy(t); }  // = −m ÿ
    double fnDot(double t) const { return k * vy(t) - g * fn(t) / m; }
    /// F_n = 0 again: ω t_f = π + 2 atan(δ/ω) (eq. 4 with the double-angle form of its arctan).
    double contactTime() const { return (M_PI + 2.0 * std::atan2(delta, w)) / w; }
};

/// Tangential state at the start of a phase.
struct Start {
    double t, xi, u, J;  ///< time, spring, contact-point velocity ṡ, tangential impulse ∫F_t
};

struct Tangential {
    Normal n;
    double kx, mu, r, ws, us0;  ///< r = 1 + m R²/I, ω_s² = r K_x/m, ṡ₀

    /// Spring, ṡ and impulse at t in the phase that began at `a`.
    void at(const Start& a, ImpactMode mode, double sign, double t, double& xi, double& u, double& J) const {
        if (mode == ImpactMode::Stick) {
            // ξ̈ = ṡ̇ = r F_t/m = −ω_s² ξ (eqs. 26–27, started from ξ_a, ṡ_a).
            const double tau = t - a.t;
            const double c = std::cos(ws * tau), s = std::sin(ws * tau);
            xi = a.xi * c + a.u / ws * s;
            u = -a.xi * ws * s + a.u * c;
            J = a.J - kx * (a.xi * s / ws + a.u * (1.0 - c) / (ws * ws));
        } else {
            // F_t = −σ μ F_n = σ μ m ÿ: the impulse follows ẏ (eqs. 32–37).
            xi = sign * mu * n.fn(t) / kx;
            J = a.J + sign * mu * n.m * (n.vy(t) - n.vy(a.t));
            u = us0 + r * J / n.m;
        }
    }
    /// Stick → slip when this turns non-negative.
    double stickExcess(const Start& a, double t) const {
        double xi, u, J;
        at(a, ImpactMode::Stick, 0.0, t, xi, u, J);
        return kx * std::abs(xi) - mu * n.fn(t);
    }
    /// Slip → stick when this turns negative: the free spring would move
    /// inside the bound μ F_n/K_x.
    double slipDrive(const Start& a, double sign, double t) const {
        double xi, u, J;
        at(a, ImpactMode::Slip, sign, t, xi, u, J);
        return sign * u - mu * n.fnDot(t) / kx;
    }
};

constexpr int kScan = 20000;  ///< samples per contact duration in the switch scan

/// First t in (a, b] where f turns from `before` (true: f < 0 expected first)
/// to the other side, by a scan and bisection; b + 1 if none.
template <class F>
double firstCrossing(F f, double a, double b, bool fromNegative, double step) {
    auto bad = [&](double v) { return fromNegative ? v >= 0.0 : v < 0.0; };
    double lo = a;
    for (double t = a + step;; t += step) {
        const double tt = std::min(t, b);
        if (bad(f(tt))) {
            double hi = tt;
            for (int i = 0; i < 200 && hi - lo > 0.0; ++i) {
                const double mid = 0.5 * (lo + hi);
                if (mid <= lo || mid >= hi) break;
                if (bad(f(mid)))
                    hi = mid;
                else
                    lo = mid;
            }
            return hi;
        }
        lo = tt;
        if (tt >= b) return b + 1.0;
    }
}

struct Solved {
    Tangential tangential;
    std::vector<ImpactPhase> phases;
    std::vector<Start> starts;
    double tf;
};

Solved solve(const ImpactModel& m, double vx0, double vy0, double omega0) {
    if (!(vy0 > 0.0)) throw std::invalid_argument("exactImpact: the approach speed vy0 must be positive");
    if (!(m.inertia > 0.0) || !(m.radius > 0.0) || !(m.kx > 0.0) || !(m.mu >= 0.0))
        throw std::invalid_argument("exactImpact: inertia, radius and K_x must be positive, mu non-negative");
    const double r = 1.0 + m.mass * m.radius * m.radius / m.inertia;
    Solved s{Tangential{Normal(m.mass, m.ky, m.gammaY, vy0), m.kx, m.mu, r, std::sqrt(r * m.kx / m.mass),
                        vx0 + m.radius * omega0},
             {}, {}, 0.0};
    s.tf = s.tangential.n.contactTime();
    const Tangential& tg = s.tangential;
    const double step = s.tf / kScan;
    Start a{0.0, 0.0, tg.us0, 0.0};
    ImpactPhase phase{0.0, ImpactMode::Stick, 0.0};
    for (int guard = 0; guard < 100000; ++guard) {
        s.phases.push_back(phase);
        s.starts.push_back(a);
        double next;
        if (phase.mode == ImpactMode::Stick)
            next = firstCrossing([&](double t) { return tg.stickExcess(a, t); }, a.t, s.tf, true, step);
        else
            next = firstCrossing([&](double t) { return tg.slipDrive(a, phase.sign, t); }, a.t, s.tf, false, step);
        if (next >= s.tf) break;
        double xi, u, J;
        tg.at(a, phase.mode, phase.sign, next, xi, u, J);
        if (phase.mode == ImpactMode::Stick) {
            const double sign = xi != 0.0 ? (xi > 0.0 ? 1.0 : -1.0) : (u >= 0.0 ? 1.0 : -1.0);
            phase = {next, ImpactMode::Slip, sign};
            xi = sign * tg.mu * tg.n.fn(next) / tg.kx;  // exactly at the bound
        } else {
            phase = {next, ImpactMode::Stick, 0.0};
        }
        a = {next, xi, u, J};
    }
    return s;
}

}  // namespace

ImpactResult exactImpact(const ImpactModel& model, double vx0, double vy0, double omega0) {
    const Solved s = solve(model, vx0, vy0, omega0);
    double xi, u, J;
    s.tangential.at(s.starts.back(), s.phases.back().mode, s.phases.back().sign, s.tf, xi, u, J);
    ImpactResult r;
    r.contactTime = s.tf;
    r.vxFinal = vx0 + J / model.mass;
    r.omegaFinal = omega0 + model.radius * J / model.inertia;
    r.vyFinal = -s.tangential.n.vy(s.tf);
    r.en = r.vyFinal / vy0;
    r.et = vx0 != 0.0 ? r.vxFinal / vx0 : std::nan("");
    r.beta = std::atan(r.vxFinal / r.vyFinal) * 180.0 / M_PI;
    r.phases = s.phases;
    return r;
}

double linearContactTime(double mass, double ky, double gammaY) { return Normal(mass, ky, gammaY, 1.0).contactTime(); }

double linearRestitution(double mass, double ky, double gammaY) {
    const Normal n(mass, ky, gammaY, 1.0);
    return std::exp(n.delta * n.contactTime());  // eq. 3: e_n = exp(δ t_f)
}

LinearNormal linearNormalFor(double mass, double en, double tf) {
    if (!(en > std::exp(-2.0) && en < 1.0) || !(tf > 0.0) || !(mass > 0.0))
        throw std::invalid_argument("linearNormalFor: needs e_n in (e^-2, 1), t_f > 0, m > 0");
    const double delta = std::log(en) / tf;  // eqs. 3–4: e_n = exp(δ t_f)
    // f(ω) = ω t_f − π − 2 atan(δ/ω): negative at its minimum ω*, positive at π/t_f.
    auto f = [&](double w) { return w * tf - M_PI - 2.0 * std::atan(delta / w); };
    double lo = std::sqrt(std::max(2.0 * -delta / tf - delta * delta, 0.0)), hi = M_PI / tf;
    if (!(f(lo) < 0.0) || !(f(hi) > 0.0)) throw std::invalid_argument("linearNormalFor: no underdamped solution");
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        (f(mid) < 0.0 ? lo : hi) = mid;
    }
    const double w = 0.5 * (lo + hi);
    return {mass * (w * w + delta * delta), -2.0 * mass * delta};
}

double GorhamKharaz::restitution(double vy0) const {
    const double v00 = std::pow(chi1, 1.0 / chi2);
    return chi1 * std::pow(vy0 + v00, -chi2);
}

double GorhamKharaz::contactTime(double vy0) const { return chi3 * std::pow(vy0, -chi4); }

ImpactModel GorhamKharaz::model(double vy0) const {
    const double tf = contactTime(vy0);
    const LinearNormal ln = linearNormalFor(mass, restitution(vy0), tf);
    ImpactModel m;
    m.mass = mass;
    m.radius = radius;
    m.inertia = 0.4 * mass * radius * radius;
    m.ky = ln.ky;
    m.gammaY = ln.gammaY;
    m.kx = kappa * mass * M_PI * M_PI / (tf * tf);
    m.mu = mu;
    return m;
}

}  // namespace moreau
