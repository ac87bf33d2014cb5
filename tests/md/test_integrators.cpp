/// MD integrators (integration-schemes paper, Table 4, and Gear 5): the formal
/// order of every scheme on an undamped linear oscillator with rotation and a
/// sticking tangential spring, energy of an elastic head-on collision, refusal
/// of derivative schemes for laws without derivatives, the geometry refresh
/// used by the stages.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/md/md_solver.hpp"
#include "support/cd_steps.hpp"
#include "support/md_collision.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

// Oscillator: a sphere (m = 1, R = 0.5, I = 2/5 m R², r = 1 + mR²/I = 7/2)
// pressed on a fixed plane z = 0 by gravity, at its equilibrium overlap
// mg/k_n, started with a vertical and a horizontal speed. Undamped linear
// normal spring; a Cundall–Strack spring that never slides (μ = 10³). With
// k_t r = k_n both modes have ω = 100, and (integration-schemes eqs. 1, 26-29)
//   z(t) = z_eq + (v_z0/ω) sin ωt,
//   x(t) = v_x0 t + (v_x0/r)(sin(ω_s t)/ω_s − t), ω_s = sqrt(k_t r/m).
constexpr double kKn = 1e4, kG = 10.0, kR = 0.5, kVz = 0.05, kVx = 0.1;
constexpr double kKt = kKn / 3.5;

/// Position error at t = 9/8 periods (sin and cos both large: amplitude and
/// phase errors both show), N steps per period. With damping γ_n = γ_t =
/// `gamma` both modes decay: z − z_eq = (v_z0/ω_d) e^{−δt} sin ω_d t with
/// δ = γ_n/2m, and s obeys s̈ = −(r/m)(k_t s + γ_t ṡ), x − v_x0 t = (s − ṡ₀t)/r.
double oscillatorError(Integrator scheme, int N, double gamma = 0.0, bool tangential = true) {
    World w;
    w.dimension = 3;
    const double m = 1.0, I = 0.4 * m * kR * kR;
    const double zEq = kR - m * kG / kKn;
    w.addGrain(Vec3(0, 0, zEq), kR, m, I);
    moreau::test::addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 1e3);
    w.gravity = Vec3(0, 0, -kG);
    const double vx = tangential ? kVx : 0.0;
    w.v[0] = Vec3(vx, 0, kVz);
    MdSettings s;
    s.kn = kKn;
    s.gammaN = gamma;
    s.tangential = TangentialLaw::Spring;
    s.kt = kKt;
    s.gammaT = gamma;
    s.clipAttractive = false;
    s.integrator = scheme;
    const double omega = std::sqrt(kKn / m), dt = 2.0 * M_PI / omega / N, T = 1.125 * N * dt;
    Simulation sim = moreau::test::stagedMdSimulation(w, dt, s);
    for (int k = 0; k < 9 * N / 8; ++k) sim.advance();
    const World& end = sim.world();
    const double r = 1.0 + m * kR * kR / I, ws = std::sqrt(kKt * r / m);
    const double dn = gamma / (2.0 * m), wn = std::sqrt(omega * omega - dn * dn);
    const double dsd = r * gamma / (2.0 * m), wsd = std::sqrt(ws * ws - dsd * dsd);
    const double zExact = zEq + kVz / wn * std::exp(-dn * T) * std::sin(wn * T);
    const double sExact = vx / wsd * std::exp(-dsd * T) * std::sin(wsd * T);
    const double xExact = vx * T + (sExact - vx * T) / r;
    return std::abs(end.x[0].z() - zExact) / (kVz / omega) + std::abs(end.x[0].x() - xExact) / (kVx / ws);
}

/// Two grains pressed between two walls along x (1D, preload overlap δ₀ at
/// all three contacts), the first pushed: grain–grain coupling, so da/dr and
/// the derivatives act across contacts. Normal modes ω₁² = k/m, ω₂² = 3k/m:
/// u₁,₂ = (v₀/2)(sin ω₁t/ω₁ ± sin ω₂t/ω₂). Position error at t = 9/8 · 2π/ω₁.
double chainError(Integrator scheme, int N) {
    const double k = kKn, m = 1.0, d0 = 2e-3, v0 = 0.05;  // amplitude v0/ω₁ = 5e-4 < δ₀
    World w;
    w.dimension = 1;
    w.addGrain(Vec3(0.5 - d0, 0, 0), 0.5, m, 0.1);
    w.addGrain(Vec3(1.5 - 2.0 * d0, 0, 0), 0.5, m, 0.1);
    moreau::test::addPlane(w, Vec3::Zero(), Vec3::UnitX());
    moreau::test::addPlane(w, Vec3(2.0 - 3.0 * d0, 0, 0), -Vec3::UnitX());
    w.v[0] = Vec3(v0, 0, 0);
    MdSettings s;
    s.kn = k;
    s.gammaN = 0.0;
    s.tangential = TangentialLaw::None;
    s.integrator = scheme;
    const double w1 = std::sqrt(k / m), w2 = std::sqrt(3.0 * k / m), dt = 2.0 * M_PI / w1 / N, T = 1.125 * N * dt;
    Simulation sim = moreau::test::stagedMdSimulation(w, dt, s);
    for (int i = 0; i < 9 * N / 8; ++i) sim.advance();
    const World& end = sim.world();
    const double u1 = 0.5 * v0 * (std::sin(w1 * T) / w1 + std::sin(w2 * T) / w2);
    const double u2 = 0.5 * v0 * (std::sin(w1 * T) / w1 - std::sin(w2 * T) / w2);
    return (std::abs(end.x[0].x() - (0.5 - d0) - u1) + std::abs(end.x[1].x() - (1.5 - 2.0 * d0) - u2)) / (v0 / w1);
}

/// A grain orbiting inside a cylinder wall (2D), held by the wall's spring:
/// the contact normal turns by v Δt/ρ every step, the Cundall spring (rolling
/// with a small slip) turns with it. Positions after T = 0.1 (0.22 rad of
/// orbit, 1.6 normal periods) with N steps, for a self-convergence estimate.
Vec3 orbitPosition(Integrator scheme, int N, TangentialLaw law = TangentialLaw::Spring) {
    World w;
    w.dimension = 2;
    const double m = 1.0, r = 0.5, Rc = 5.0;
    w.addGrain(Vec3(Rc - r + 3e-3, 0, 0), r, m, 0.4 * m * r * r);
    WallShape cyl;
    cyl.kind = ShapeKind::Cylinder;
    cyl.direction = Vec3::UnitZ();
    cyl.radius = Rc;
    cyl.inside = true;
    cyl.mu = 1e3;
    w.addWall("drum", cyl, Vec3::Zero(), false, 0.0, {false, false, false});
    w.v[0] = Vec3(0, 10.0, 0);
    w.w[0] = Vec3(0, 0, -19.0);  // rolling would be −20: the contact point slips at 0.5
    MdSettings s;
    s.kn = kKn;
    s.gammaN = 0.0;
    s.tangential = law;
    s.kt = kKt;
    s.gammaT = 0.0;
    s.integrator = scheme;
    Simulation sim = moreau::test::stagedMdSimulation(w, 0.1 / N, s);
    for (int i = 0; i < N; ++i) sim.advance();
    return sim.world().x[0];
}

/// Least-squares slope of log error against log N.
double slope(const std::vector<int>& Ns, const std::vector<double>& errors) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(Ns.size());
    for (std::size_t i = 0; i < Ns.size(); ++i) {
        const double x = std::log(static_cast<double>(Ns[i])), y = std::log(errors[i]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    return -(n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/// Head-on elastic collision of two unit-mass grains touching at t = 0 with
/// relative speed 1, N steps per contact time t_n = π sqrt(m_eff/k):
/// |E_after/E_before − 1| once they have parted.
double collisionEnergyError(Integrator scheme, int N, bool restart = true) {
    MdSettings s;
    s.kn = kKn;
    s.gammaN = 0.0;
    s.tangential = TangentialLaw::None;
    s.integrator = scheme;
    s.restartOnContactChange = restart;
    Simulation sim = moreau::test::stagedMdSimulation(moreau::test::headOnPair(), M_PI * std::sqrt(0.5 / kKn) / N, s);
    for (int k = 0; k < N + 3; ++k) sim.advance();
    const World& end = sim.world();
    const double e = 0.5 * (end.v[0].squaredNorm() + end.v[1].squaredNorm());
    return std::abs(e / 0.25 - 1.0);
}

/// Steps per period for a scheme of order p: fine enough to be asymptotic
/// (AB5 and Gear 5 reach their slope late), coarse enough to stay far above
/// round-off.
std::vector<int> stepsFor(int order) {
    if (order == 4) return {32, 48, 64, 96};
    if (order >= 5) return {192, 256, 384, 512};
    return {64, 96, 128, 192};
}

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("integrators: every scheme shows its formal order on an undamped linear oscillator") {
        // Positions after 9/8 periods against eqs. 26-29; slope of log error
        // over log steps, least squares over 4 step sizes. Tolerance: at least
        // the formal order − 0.3 (a bug costs a whole order), at most + 1.7
        // (several schemes gain one or two orders on this linear problem:
        // Khakimov's and Gear's). Multi-step schemes start with RK4 steps:
        // AB5 and AB4+AM5 showing order 5 is the check that start-up keeps it.
        for (const IntegratorInfo& info : integrators()) {
            CAPTURE(std::string(info.name));
            const std::vector<int> Ns = stepsFor(info.order);
            std::vector<double> errors;
            // cd: its Cundall spring counts the step before the contact's
            // first detection (ζ = Σ v_{n−1/2} Δt from the step before), a
            // first-order onset offset of the default path; the normal mode
            // alone measures its order.
            const bool tangential = info.id != Integrator::CD;
            for (int N : Ns) errors.push_back(oscillatorError(info.id, N, 0.0, tangential));
            const double p = slope(Ns, errors);
            MESSAGE(std::string(info.name) << ": order " << p << " (formal " << info.order << "), error at N="
                                           << Ns.back() << ": " << errors.back());
            CHECK(p > info.order - 0.3);
            CHECK(p < info.order + 1.7);
            // Two grains between two walls: contacts between mobile bodies.
            // Twice the steps (the fast mode has √3 ω₁).
            std::vector<int> Ns2;
            std::vector<double> chain;
            for (int N : Ns) {
                Ns2.push_back(2 * N);
                chain.push_back(chainError(info.id, 2 * N));
            }
            const double q = slope(Ns2, chain);
            MESSAGE(std::string(info.name) << ": chain order " << q << ", error at N=" << Ns2.back() << ": "
                                           << chain.back());
            CHECK(q > info.order - 0.3);
            CHECK(q < info.order + 1.7);
        }
    }

    TEST_CASE("integrators: stages follow a turning contact normal (grain orbiting in a drum)") {
        // Self-convergence |x_N − x_2N| ∝ N^−p. Without tangential force the
        // stages' refreshed geometry keeps every derivative-free scheme at its
        // order. With a sticking Cundall spring the stage elongation takes the
        // lever arms and the projection at the mean normal of the step
        // (midpoint rule), which limits a turning contact to order 2
        // (docs/md-integrators.md). cd takes the initial velocity as v(−Δt/2)
        // (first order here).
        for (const TangentialLaw law : {TangentialLaw::None, TangentialLaw::Spring}) {
            for (const IntegratorInfo& info : integrators()) {
                CAPTURE(std::string(info.name));
                CAPTURE(static_cast<int>(law));
                std::vector<int> Ns = stepsFor(info.order);
                for (int& N : Ns) N *= info.order == 4 ? 4 : 2;  // AB4 and AB3+AM4 reach their slope late
                std::vector<double> errors;
                for (int N : Ns)
                    errors.push_back((orbitPosition(info.id, N, law) - orbitPosition(info.id, 2 * N, law)).norm());
                const double p = slope(Ns, errors);
                MESSAGE(std::string(info.name) << std::string(law == TangentialLaw::None ? ": drum order " : ": drum+spring order ")
                                               << p << ", |x_N - x_2N| at N=" << Ns.back() << ": " << errors.back());
                if (info.id == Integrator::CD) continue;
                // da/dt and da/dr carry the normal's turning (F_n dn/dt); the
                // higher derivatives hold the frame fixed, and T16's velocity
                // update needs the curvature of a: those schemes reach 2.
                // With the spring, its own turning (ξ carried into the new
                // tangent plane) is not in the derivatives: the schemes whose
                // velocity update uses them directly (ty3, ty4, t16) reach 1.
                const bool frameFixed = info.timeDerivatives >= 2 || info.id == Integrator::T16;
                const bool velocityFromDerivatives =
                    info.id == Integrator::TY3 || info.id == Integrator::TY4 || info.id == Integrator::T16;
                const int expected = law == TangentialLaw::Spring && velocityFromDerivatives ? 1
                                     : std::min(info.order, law == TangentialLaw::Spring || frameFixed ? 2 : 99);
                CHECK(p > expected - 0.3);
            }
        }
    }

    TEST_CASE("integrators: order with linear dashpots (normal and tangential)") {
        // The same oscillator with γ_n = γ_t = 20 (damping ratios 0.1 and
        // 0.35). Schemes that evaluate the dashpot with a velocity of another
        // instant than the positions (cd: v_{n−1/2}; pv: v_t at r_{t+Δt/2};
        // babab, bababab: the partial velocities of eqs. 12-13) and T16
        // (no ∂a/∂v term) are first order; Khakimov's D12/T12 second
        // (da/dr replaces da/dt); the rest keep their order.
        for (const IntegratorInfo& info : integrators()) {
            CAPTURE(std::string(info.name));
            const std::vector<int> Ns = stepsFor(info.dampedOrder);
            std::vector<double> errors;
            for (int N : Ns) errors.push_back(oscillatorError(info.id, N, 20.0));
            const double p = slope(Ns, errors);
            MESSAGE(std::string(info.name) << ": damped order " << p << " (expected " << info.dampedOrder << ")");
            CHECK(p > info.dampedOrder - 0.3);
            CHECK(p < info.dampedOrder + 0.7);
        }
    }

    TEST_CASE("integrators: energy of an undamped elastic collision converges with the scheme's order") {
        // Head-on collision starting on the time grid (touching at t = 0), N
        // steps per contact time. The force law has a kink at contact onset
        // and release; bababab evaluates stages outside [t, t+Δt] and T16
        // takes da/dr at the end point, so for them the kink costs O(Δt²).
        // Multi-step and Gear schemes restart at contact changes
        // (md.restart_on_contact_change), which keeps their order.
        for (const IntegratorInfo& info : integrators()) {
            CAPTURE(std::string(info.name));
            const std::vector<int> Ns{20, 40, 80, 160};
            std::vector<double> errors;
            for (int N : Ns) errors.push_back(collisionEnergyError(info.id, N));
            const double p = slope(Ns, errors);
            const int expected = info.id == Integrator::BABABAB || info.id == Integrator::T16 ? 2 : info.order;
            MESSAGE(std::string(info.name) << ": |dE/E| " << errors[0] << " " << errors[1] << " " << errors[2] << " " << errors[3]
                                           << ", slope " << p << " (expected >= " << expected << ")");
            CHECK(p > expected - 0.3);
            CHECK(errors[2] < 0.15);
        }
        SUBCASE("without the restart, multi-step history across the kink costs O(dt^2)") {
            auto withoutRestart = [](Integrator scheme, int N) {
                return collisionEnergyError(scheme, N, false);
            };
            const double p = std::log(withoutRestart(Integrator::AB4, 20) / withoutRestart(Integrator::AB4, 80)) /
                             std::log(4.0);
            CHECK(p == Approx(2.0).epsilon(0.15));
        }
    }

    TEST_CASE("integrators: a scheme needing derivatives with a law lacking them is refused") {
        MdSettings s;
        s.integrator = Integrator::TY4;
        s.normal = NormalLaw::Hertz;
        CHECK_THROWS_AS(checkIntegratorLaws(s), InputError);
        try {
            checkIntegratorLaws(s);
        } catch (const InputError& e) {
            const std::string what = e.what();
            CHECK(what.find("md.integrator 'ty4'") != std::string::npos);
            CHECK(what.find("md.normal 'hertz'") != std::string::npos);
            CHECK(what.find("allowed") != std::string::npos);
        }
        // The solver refuses at its first step, before touching the world.
        World w;
        w.addGrain(Vec3::Zero(), 0.5, 1.0, 0.1);
        const Vec3 x0 = w.x[0];
        Simulation sim = moreau::test::stagedMdSimulation(w, 1e-3, s);
        CHECK_THROWS_AS(sim.advance(), InputError);
        CHECK(sim.world().x[0] == x0);
        // First derivatives exist for the Hertz family: ty3 and the Khakimov schemes run.
        for (Integrator ok : {Integrator::TY3, Integrator::T16, Integrator::D12}) {
            s.integrator = ok;
            CHECK_NOTHROW(checkIntegratorLaws(s));
            // A damped Hertz-Kuwabara-Kono collision from first touch (where
            // ∂F/∂ξ is singular) stays finite and loses energy.
            MdSettings h;
            h.normal = NormalLaw::HertzKuwabaraKono;
            h.kn = 1e5;
            h.gammaN = 50.0;
            h.tangential = TangentialLaw::None;
            h.integrator = ok;
            Simulation hs = moreau::test::stagedMdSimulation(moreau::test::headOnPair(), 5e-5, h);
            for (int k = 0; k < 1000; ++k) hs.advance();  // t_n ≈ 0.025 (force schemes eq. 7)
            const double separation = hs.world().v[1].x() - hs.world().v[0].x();
            CHECK(std::isfinite(separation));
            CHECK(separation > 0.0);
            CHECK(separation < 1.0);
        }
        // Schemes without derivatives accept every law whose history the stages carry.
        s.integrator = Integrator::RK;
        s.normal = NormalLaw::WaltonBraun;
        for (TangentialLaw t : {TangentialLaw::None, TangentialLaw::Coulomb, TangentialLaw::Viscous,
                                TangentialLaw::ViscousCoulomb, TangentialLaw::Spring}) {
            s.tangential = t;
            CHECK(tangentialLawStagesSupported(t));
            CHECK_NOTHROW(checkIntegratorLaws(s));
        }
    }

    TEST_CASE("integrators: names, table and the geometry refresh of stages") {
        CHECK(integrators().size() == 23);
        for (const IntegratorInfo& info : integrators()) {
            CAPTURE(std::string(info.name));
            CHECK(integratorFromName(info.name) == info.id);
            CHECK(info.forceEvaluations >= 1);
        }
        CHECK(!integratorFromName("verlet"));
        CHECK(MdSettings().integrator == Integrator::CD);
        // Refresh after a move equals a fresh narrow phase, periodic images included.
        World w;
        w.periodic = {true, false, false};
        w.boxMin = Vec3(0, -5, -5);
        w.boxMax = Vec3(4, 5, 5);
        w.addGrain(Vec3(0.2, 0, 0.6), 0.5, 1.0, 0.1);
        w.addGrain(Vec3(3.3, 0.1, 0.55), 0.5, 1.0, 0.1);  // touches grain 0 through the periodic face
        moreau::test::addPlane(w, Vec3::Zero(), Vec3::UnitZ());
        std::vector<Contact> contacts, reference;
        detectBruteForce(w, 0.2, contacts);
        REQUIRE(contacts.size() == 3);
        w.x[0] += Vec3(-0.05, 0.02, -0.03);
        w.x[1] += Vec3(0.04, -0.01, 0.02);
        refreshContactGeometry(w, contacts);
        detectBruteForce(w, 0.5, reference);
        REQUIRE(reference.size() == contacts.size());
        for (std::size_t c = 0; c < contacts.size(); ++c) {
            CHECK(contacts[c].key == reference[c].key);
            CHECK(contacts[c].gap == Approx(reference[c].gap).epsilon(1e-14));
            CHECK((contacts[c].n - reference[c].n).norm() < 1e-14);
        }
    }
}
