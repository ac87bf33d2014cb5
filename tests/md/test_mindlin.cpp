/// The Hertz–Mindlin tangential law (md.tangential = mindlin, md/laws/
/// mindlin.hpp) against Mindlin's analytic stiffness k_t = 8 G* a, a =
/// √(R* ξ), along a loading path, and an oblique impact whose tangential
/// impulse never exceeds μ times the normal impulse.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;
using doctest::Approx;

namespace {

constexpr double kG = 1e7, kNu = 0.3;  // shear modulus (Pa) and Poisson's ratio
constexpr double kRadius = 0.01, kDensity = 2500.0;

MdSettings mindlinSettings(double gammaT) {
    MdSettings md;
    md.normal = NormalLaw::HertzDamped;
    // k~_n = 4/3 E* sqrt(R*) for a sphere on a plane of its own material,
    // E* = E/(2(1 - nu^2)), E = 2 G (1 + nu).
    const double eStar = 2.0 * kG * (1.0 + kNu) / (2.0 * (1.0 - kNu * kNu));
    md.kn = 4.0 / 3.0 * eStar * std::sqrt(kRadius);
    md.gammaN = 0.5;
    md.tangential = TangentialLaw::Mindlin;
    md.gammaT = gammaT;
    md.lawValues[lawKeyIndex("md.shear_modulus")] = kG;
    md.lawValues[lawKeyIndex("md.poisson_ratio")] = kNu;
    return md;
}

double sphereMass() { return kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3); }

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("mindlin: k_t = 8 G* sqrt(R* xi) along a loading path, and k_t/k_n = 2(1 - nu)/(2 - nu)") {
        // A sphere pressed into a plane with growing overlap while its
        // contact point slides sideways at a constant speed; μ large: it
        // sticks, so the tangential force is -k_t(ξ) ζ with ζ = u t.
        World w;
        w.dimension = 3;
        const double m = sphereMass();
        w.addGrain(Vec3(0, 0, kRadius), kRadius, m, 0.4 * m * kRadius * kRadius);
        test::addPlane(w, Vec3::Zero(), Vec3::UnitZ(), 100.0);
        const MdSettings md = mindlinSettings(0.0);
        const double dt = 1e-6, u = 0.01;
        Simulation sim = test::stagedMdSimulation(std::move(w), dt, md);
        const double gStar = kG / (2.0 * (2.0 - kNu));
        double worst = 0.0, previousFn = 0.0, previousXi = 0.0, ratio = 0.0;
        for (int k = 1; k <= 200; ++k) {
            const double xi = 1e-6 * k;  // loading: the overlap grows every step
            sim.world().x[0] = Vec3(u * dt * (k - 1), 0, kRadius - xi);
            sim.world().v[0] = Vec3(u, 0, 0);
            sim.detect();
            sim.match();
            sim.solve();  // the forces at this state, memory committed; nothing moves
            REQUIRE(sim.contacts().size() == 1);
            const Vec3 F = sim.contacts()[0].history.reaction;  // on the plane (b)
            const double zeta = u * dt * k;                      // ζ = ∫ v_t dt after k evaluations
            const double kt = 8.0 * gStar * std::sqrt(kRadius * xi);
            worst = std::max(worst, std::abs(F.x() / zeta - kt) / kt);
            CHECK(std::abs(F.y()) < 1e-15);
            // Normal stiffness dF_n/dξ by finite difference against k_t at the midpoint.
            const double Fn = -F.z();
            if (k > 100) {
                const double kn = (Fn - previousFn) / (xi - previousXi);
                const double ktMid = 8.0 * gStar * std::sqrt(kRadius * 0.5 * (xi + previousXi));
                ratio = ktMid / kn;
            }
            previousFn = Fn;
            previousXi = xi;
        }
        CHECK(worst < 1e-12);
        CHECK(ratio == Approx(2.0 * (1.0 - kNu) / (2.0 - kNu)).epsilon(1e-4));
    }

    TEST_CASE("mindlin: in an oblique impact the tangential impulse never exceeds mu times the normal impulse") {
        const double mu = 0.3;
        struct Impact {
            double tangentialImpulse, normalImpulse;
            bool withinCoulomb;
        };
        auto impact = [&](double angleDeg) {
            World w;
            w.dimension = 3;
            const double m = sphereMass();
            w.addGrain(Vec3(0, 0, kRadius + 1e-5), kRadius, m, 0.4 * m * kRadius * kRadius);
            test::addPlane(w, Vec3::Zero(), Vec3::UnitZ(), mu);
            const double a = angleDeg * M_PI / 180.0;  // from the normal
            w.v[0] = Vec3(std::sin(a), 0, -std::cos(a));
            Simulation sim = test::stagedMdSimulation(std::move(w), 1e-7, mindlinSettings(0.05));
            Vec3 J = Vec3::Zero();
            bool within = true;
            for (int k = 0; k < 40000; ++k) {
                sim.advance();
                for (const Contact& c : sim.contacts()) {
                    J += c.history.reaction * 1e-7;
                    const double jn = -J.z(), jt = std::hypot(J.x(), J.y());
                    within = within && jt <= mu * jn * (1.0 + 1e-12);
                }
                if (sim.world().x[0].z() > kRadius + 2e-5 && sim.world().v[0].z() > 0.0) break;  // bounced off
            }
            return Impact{std::hypot(J.x(), J.y()), -J.z(), within};
        };
        for (double angle : {10.0, 30.0, 50.0, 80.0}) {
            CAPTURE(angle);
            const Impact r = impact(angle);
            CHECK(r.normalImpulse > 0.0);
            CHECK(r.withinCoulomb);
            CHECK(r.tangentialImpulse <= mu * r.normalImpulse * (1.0 + 1e-12));
            // Near grazing the contact slides throughout: the impulse reaches μ J_n.
            if (angle == 80.0) CHECK(r.tangentialImpulse == Approx(mu * r.normalImpulse).epsilon(1e-3));
            // Near normal incidence it sticks for part of the impact: below μ J_n.
            if (angle == 10.0) CHECK(r.tangentialImpulse < 0.9 * mu * r.normalImpulse);
        }
    }
}
