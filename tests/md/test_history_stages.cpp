/// The history laws (walton-braun, saw-tooth, kuhn, pena tangential, and the
/// sliding flag of md.mu_static_ratio != 1) through the stages of every
/// integrator: an oblique impact gives the same outcome with md.integrator =
/// cd and the multi-stage schemes, to the schemes' accuracy.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/md/md_solver.hpp"

using namespace moreau;

namespace {

struct Outcome {
    Vec3 v, w;
    double kuhnDissipated = 0.0;
};

/// Two spheres (R = 3 mm, m = 1.48e-4 kg) meet at relative speed 1 m/s with
/// ψ = v_s/|v_n| = psi in the x–y plane; linear normal law, t_n ≈ 1e-5 s.
Outcome impact(MdSettings md, Integrator scheme, double psi, double dt) {
    constexpr double r = 3e-3, m = 1.48e-4;
    md.integrator = scheme;
    World w;
    w.dimension = 2;
    w.muGrain = 0.3;
    const double I = 0.4 * m * r * r;
    const double th = std::atan(psi);
    const Vec3 u(-std::cos(th), std::sin(th), 0.0);
    const double lead = 2e-6;
    w.addGrain(0.5 * u * lead, r, m, I);
    w.addGrain(Vec3(2.0 * r, 0.0, 0.0) - 0.5 * u * lead, r, m, I);
    w.v[0] = -0.5 * u;
    w.v[1] = 0.5 * u;
    MdSolver solver(md);
    std::vector<Contact> contacts{pairContact(0, 1)};
    // One contact all along: its memory stays in place from step to step.
    ContactSlots slots{solver.slotStride(), std::vector<double>(solver.slotStride(), 0.0)};
    StepContext ctx;
    ctx.dt = dt;
    const long steps = static_cast<long>(std::lround(4e-5 / dt));
    for (long k = 0; k < steps; ++k) {
        const Vec3 d = w.x[1] - w.x[0];
        contacts[0].n = d / d.norm();
        contacts[0].gap = d.norm() - 2.0 * r;
        ctx.step = w.step;
        solver.step(w, contacts, slots, ctx);
    }
    return {w.v[1], w.w[1], solver.kuhnWork().dissipated};
}

MdSettings laws(TangentialLaw t) {
    MdSettings md;
    md.kn = 7.32e6;
    md.gammaN = 2.06;
    md.tangential = t;
    md.kt = 2.0 / 7.0 * md.kn;
    md.gammaT = 0.5;
    md.zeta0 = 1e-7;
    md.clipAttractive = true;
    return md;
}

}  // namespace

TEST_SUITE("md") {
    TEST_CASE("integrators: history laws give cd's oblique impact through the stages of other schemes") {
        struct Case {
            const char* name;
            MdSettings md;
        };
        // Kuhn at ψ = 1 (stick, slip, stick) exercises the step-start
        // evaluation: without the committed sliding flag it converged to a
        // spin 0.5 % off with rk and 3 % off with fe.
        std::vector<Case> cases = {{"walton-braun", laws(TangentialLaw::WaltonBraun)},
                                   {"saw-tooth", laws(TangentialLaw::SawTooth)},
                                   {"kuhn", laws(TangentialLaw::Kuhn)},
                                   {"pena", laws(TangentialLaw::Pena)},
                                   {"spring mu_s = 1.5 mu_d", laws(TangentialLaw::Spring)}};
        cases[1].md.zeta0 = 1e-6;  // teeth resolved by t_n/400
        cases[4].md.muStaticRatio = 1.5;
        cases.push_back({"walton-braun mu_s = 1.3 mu_d", laws(TangentialLaw::WaltonBraun)});
        cases.back().md.muStaticRatio = 1.3;
        // t_n / 400 and t_n / 1600. The laws switch between sticking and
        // sliding (saw-tooth: every tooth) at instants no scheme resolves
        // better than Δt, so cd and the other schemes differ at O(Δt) there:
        // the check is agreement within 2.5 % and convergence towards each
        // other (the gap shrinks with Δt), which a wrongly carried memory fails.
        const double dt = 2.5e-8;
        auto gap = [](const Outcome& a, const Outcome& b) {
            return (a.v - b.v).norm() + 3e-3 * (a.w - b.w).norm();  // r ω: a velocity
        };
        for (const Case& c : cases) {
            for (double psi : {0.3, 1.0, 3.0}) {  // sticking, mixed and sliding impacts
                CAPTURE(std::string(c.name));
                CAPTURE(psi);
                const Outcome ref = impact(c.md, Integrator::CD, psi, dt);
                const Outcome refFine = impact(c.md, Integrator::CD, psi, dt / 4.0);
                const double scale = ref.v.norm();
                for (Integrator s : {Integrator::RK, Integrator::PV, Integrator::AB3AM4, Integrator::BABAB, Integrator::FE}) {
                    CAPTURE(std::string(integratorInfo(s).name));
                    const Outcome o = impact(c.md, s, psi, dt);
                    const double coarse = gap(o, ref);
                    CHECK(coarse < 2.5e-2 * scale);
                    // Saw-tooth's teeth make its convergence non-monotonic: agreement only.
                    const bool converges = c.md.tangential != TangentialLaw::SawTooth;
                    if (converges && coarse > 1e-3 * scale) {
                        const Outcome fine = impact(c.md, s, psi, dt / 4.0);
                        CHECK(gap(fine, refFine) < 0.6 * coarse);
                    }
                    if (c.md.tangential == TangentialLaw::Kuhn && ref.kuhnDissipated > 1e-12)
                        CHECK(o.kuhnDissipated == doctest::Approx(ref.kuhnDissipated).epsilon(0.05));
                }
            }
        }
    }

    TEST_CASE("integrators: without the carried memory the history laws would differ (the test can fail)") {
        // Forgetting the Walton-Braun memory between steps (a fresh solver each
        // step) changes the outcome far beyond the tolerance above.
        MdSettings md = laws(TangentialLaw::WaltonBraun);
        const Outcome a = impact(md, Integrator::RK, 1.0, 2.5e-8);
        md.tangential = TangentialLaw::Spring;
        const Outcome b = impact(md, Integrator::RK, 1.0, 2.5e-8);
        CHECK((a.v - b.v).norm() > 2e-2 * a.v.norm());
    }

    TEST_CASE("integrators: schemes needing derivatives refuse the laws without them, naming the keys") {
        MdSettings s = laws(TangentialLaw::Kuhn);
        for (Integrator needy : {Integrator::TY3, Integrator::Gear5, Integrator::T12}) {
            s.integrator = needy;
            CHECK_THROWS_AS(checkIntegratorLaws(s), InputError);
            try {
                checkIntegratorLaws(s);
            } catch (const InputError& e) {
                CHECK(std::string(e.what()).find("md.tangential 'kuhn'") != std::string::npos);
            }
        }
        // Peña's geometric increment linearises like the spring: Gear runs it.
        s.tangential = TangentialLaw::Pena;
        s.integrator = Integrator::Gear5;
        CHECK_NOTHROW(checkIntegratorLaws(s));
        s.tangential = TangentialLaw::Spring;
        s.muStaticRatio = 1.5;
        CHECK_NOTHROW(checkIntegratorLaws(s));
    }

    TEST_CASE("integrators: gear5 runs the pena and spring laws with the history stages") {
        for (TangentialLaw t : {TangentialLaw::Pena, TangentialLaw::Spring}) {
            MdSettings md = laws(t);
            md.springVelocityIncrement = t == TangentialLaw::Spring;
            const Outcome ref = impact(md, Integrator::CD, 0.5, 2.5e-8);
            const Outcome g = impact(md, Integrator::Gear5, 0.5, 2.5e-8);
            CHECK((g.v - ref.v).norm() < 5e-3 * ref.v.norm());
        }
    }
}
