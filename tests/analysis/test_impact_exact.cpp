/// The exact oblique impact of the integration-schemes paper (eqs. 3–4,
/// 24–37 with the stick/slip switches) against an independent numerical
/// solution: RK4 with 400 000 steps per contact on the same equations, the
/// spring clipped to the Coulomb bound inside the force and after each step.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "moreau/analysis/impact_exact.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

struct Reference {
    double vx, vy, omega;
};

/// RK4 of m ÿ = −F_n, m v̇_x = F_t, I ω̇ = R F_t, ξ̇ = v_x + R ω with
/// F_t = −K_x clip(ξ, μ F_n/K_x), from touch to t_f.
Reference rk4(const ImpactModel& m, double vx0, double vy0, int steps) {
    using S = std::array<double, 5>;  // y, ẏ, v_x, ω, ξ
    auto fn = [&](const S& s) { return m.ky * s[0] + m.gammaY * s[1]; };
    auto clip = [&](const S& s) {
        const double bound = m.mu * std::max(fn(s), 0.0) / m.kx;
        return std::clamp(s[4], -bound, bound);
    };
    auto rhs = [&](const S& s) {
        const double ft = -m.kx * clip(s);
        return S{s[1], -fn(s) / m.mass, ft / m.mass, m.radius * ft / m.inertia, s[2] + m.radius * s[3]};
    };
    const double tf = linearContactTime(m.mass, m.ky, m.gammaY);
    const double h = tf / steps;
    S s{0.0, vy0, vx0, 0.0, 0.0};
    for (int k = 0; k < steps; ++k) {
        const S k1 = rhs(s);
        S t;
        for (int i = 0; i < 5; ++i) t[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)] + 0.5 * h * k1[static_cast<std::size_t>(i)];
        const S k2 = rhs(t);
        for (int i = 0; i < 5; ++i) t[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)] + 0.5 * h * k2[static_cast<std::size_t>(i)];
        const S k3 = rhs(t);
        for (int i = 0; i < 5; ++i) t[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)] + h * k3[static_cast<std::size_t>(i)];
        const S k4 = rhs(t);
        for (std::size_t i = 0; i < 5; ++i) s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        s[4] = clip(s);
    }
    return {s[2], -s[1], s[3]};
}

}  // namespace

TEST_SUITE("analysis") {
    TEST_CASE("impact: K_y and gamma_y from e_n and t_f invert eqs. 3-4") {
        for (double en : {0.3, 0.615, 0.9, 0.99})
            for (double tf : {1e-5, 3.4e-5}) {
                CAPTURE(en);
                CAPTURE(tf);
                const LinearNormal ln = linearNormalFor(0.26e-3, en, tf);
                CHECK(linearRestitution(0.26e-3, ln.ky, ln.gammaY) == Approx(en).epsilon(1e-12));
                CHECK(linearContactTime(0.26e-3, ln.ky, ln.gammaY) == Approx(tf).epsilon(1e-12));
            }
        // Undamped: t_f = π sqrt(m/K), e_n = 1 (limit); the inverse needs e_n < 1.
        CHECK(linearContactTime(1.0, 4.0, 0.0) == Approx(M_PI / 2.0).epsilon(1e-14));
        CHECK_THROWS(linearNormalFor(1.0, 0.1, 1.0));  // below e^-2: no underdamped solution
    }

    TEST_CASE("impact: the Gorham-Kharaz parameters (integration schemes §2)") {
        const GorhamKharaz gk;
        CHECK(gk.restitution(0.0) == Approx(1.0).epsilon(1e-12));  // v00 = chi1^(1/chi2) makes e_n(0) = 1
        CHECK(gk.restitution(3.85) == Approx(0.6155).epsilon(1e-3));
        // The paper's range of collision durations, 1.25e-5 ... 3.4e-5 s, for normal speeds 3.85 ... 0.03 m/s.
        CHECK(gk.contactTime(3.85) == Approx(1.31e-5).epsilon(5e-3));
        CHECK(gk.contactTime(3.85 * std::cos(89.55 * M_PI / 180.0)) == Approx(3.3e-5).epsilon(0.02));
        const ImpactModel m = gk.model(3.85);
        CHECK(m.kx == Approx(0.8035 * m.mass * M_PI * M_PI / std::pow(gk.contactTime(3.85), 2)).epsilon(1e-12));
        const ImpactResult r = exactImpact(m, 0.0, 3.85);
        CHECK(r.en == Approx(gk.restitution(3.85)).epsilon(1e-12));
        CHECK(r.contactTime == Approx(gk.contactTime(3.85)).epsilon(1e-12));
        CHECK(r.omegaFinal == 0.0);
    }

    TEST_CASE("impact: exact solution against RK4 with tiny steps, every mode sequence") {
        const GorhamKharaz gk;
        for (double alphaDeg : {2.0, 10.0, 20.0, 30.0, 40.0, 55.0, 70.0, 85.0}) {
            CAPTURE(alphaDeg);
            const double a = alphaDeg * M_PI / 180.0;
            const double vx0 = gk.speed * std::sin(a), vy0 = gk.speed * std::cos(a);
            const ImpactModel m = gk.model(vy0);
            const ImpactResult ex = exactImpact(m, vx0, vy0);
            const Reference ref = rk4(m, vx0, vy0, 400000);
            CAPTURE(ex.phases.size());
            const double vScale = gk.speed, wScale = gk.speed / gk.radius;
            CHECK(std::abs(ex.vxFinal - ref.vx) / vScale < 2e-6);
            CHECK(std::abs(ex.vyFinal - ref.vy) / vScale < 1e-9);
            CHECK(std::abs(ex.omegaFinal - ref.omega) / wScale < 2e-6);
            CHECK(ex.et == Approx(ex.vxFinal / vx0));
        }
    }

    TEST_CASE("impact: mode sequences and limits") {
        const GorhamKharaz gk;
        // Small angle: the spring sticks first and the contact ends sliding as F_n -> 0.
        {
            const double a = 5.0 * M_PI / 180.0;
            const ImpactModel m = gk.model(gk.speed * std::cos(a));
            const ImpactResult r = exactImpact(m, gk.speed * std::sin(a), gk.speed * std::cos(a));
            REQUIRE(r.phases.size() >= 2);
            CHECK(r.phases[0].mode == ImpactMode::Stick);
            CHECK(r.phases.back().mode == ImpactMode::Slip);
            CHECK(r.et > 0.0);
            CHECK(r.et < 1.0);
        }
        // Grazing: stick for an instant, then gross slip to the end; e_t from the sliding impulse.
        {
            const double a = 80.0 * M_PI / 180.0;
            const double vx0 = gk.speed * std::sin(a), vy0 = gk.speed * std::cos(a);
            const ImpactModel m = gk.model(vy0);
            const ImpactResult r = exactImpact(m, vx0, vy0);
            REQUIRE(r.phases.size() == 2);
            CHECK(r.phases[1].start < 0.05 * r.contactTime);
            // Slip from t1 on: Δv_x = −μ m^-1 ∫F_n = μ (ẏ(t_f) − ẏ(t1)) ≈ −μ (1 + e_n) v_y0 (t1 → 0).
            CHECK(r.vxFinal == Approx(vx0 - m.mu * (1.0 + r.en) * vy0).epsilon(2e-3));
            CHECK(r.omegaFinal == Approx((r.vxFinal - vx0) * m.mass * m.radius / m.inertia).epsilon(1e-12));
        }
        // mu = 0: no tangential force.
        {
            ImpactModel m = gk.model(3.0);
            m.mu = 0.0;
            const ImpactResult r = exactImpact(m, 1.0, 3.0);
            CHECK(r.et == Approx(1.0).epsilon(1e-14));
            CHECK(r.omegaFinal == Approx(0.0).epsilon(1e-12));
        }
        // mu huge: pure stick, ṡ = ṡ0 cos(ω_s t), impulse −K_x ṡ0 (1 − cos ω_s t_f)/ω_s².
        {
            ImpactModel m = gk.model(3.0);
            m.mu = 1e6;
            const ImpactResult r = exactImpact(m, 1.0, 3.0);
            // (A slip of negligible length remains where F_n -> 0 at the very end.)
            CHECK(r.phases[0].mode == ImpactMode::Stick);
            const double rr = 1.0 + m.mass * m.radius * m.radius / m.inertia;
            const double ws = std::sqrt(rr * m.kx / m.mass);
            const double J = -m.kx * (1.0 - std::cos(ws * r.contactTime)) / (ws * ws);
            CHECK(r.vxFinal == Approx(1.0 + J / m.mass).epsilon(1e-6));
        }
    }
}
