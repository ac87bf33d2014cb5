// The Gear family (integration-schemes paper eqs. 20-22, Table 3; Peña et
// al. appendix): predictor–correctors of 4, 5 and 6 values (GPC3, GPC4,
// gear5). Their derivatives start from the laws' time derivatives and are
// kept across steps (SchemeState::gearA..D); no multi-step history.
#include "stages.hpp"

namespace moreau {

namespace {

class Gear final : public MdIntegrator {
public:
    bool keepsDerivatives() const override { return true; }

    void advance(SchemeStages& s, SchemeStep& step) override {
        World& world = step.world;
        const double h = step.h, t = step.t;
        const Field& V0 = step.V0;
        Field &A0 = step.A0, &X1 = step.X1, &V1 = step.V1;
        SchemeState& g5 = s.state;
        const std::size_t nb = V0.size();
        // Corrector weights on (r Δt⁻², v Δt⁻¹, a, b Δt, c Δt², d Δt³):
        // Table 3, and Peña's α_k scaled by k!/2 (α₀/2, α₁/2, α₂, 3α₃, 12α₄, 60α₅).
        const double w[3][6] = {{1.0 / 12.0, 5.0 / 12.0, 1.0, 1.0, 0.0, 0.0},
                                {19.0 / 240.0, 3.0 / 8.0, 1.0, 1.5, 1.0, 0.0},
                                {3.0 / 32.0, 251.0 / 720.0, 1.0, 11.0 / 6.0, 2.0, 1.0}};
        const int g = step.info.timeDerivatives - 1;  // gpc3, gpc4, gear5
        if (g5.gearA.size() != nb) {
            // Start-up: the higher derivatives from the force laws.
            s.evaluate(world, step.zero, V0, t, A0, false);
            g5.gearA = A0;
            s.forceDerivative(world, &V0, &A0, g5.gearB);
            g5.gearC.assign(nb, Vec6::Zero());
            g5.gearD.assign(nb, Vec6::Zero());
            if (g >= 1) s.forceDerivative(world, &A0, &g5.gearB, g5.gearC);
            if (g >= 2) s.forceDerivative(world, &g5.gearB, &g5.gearC, g5.gearD);
        }
        Field &Vp = s.scratch(4), &Ap = s.scratch(5), &Bp = s.scratch(6), &Cp = s.scratch(7), &Af = s.scratch(8);
        const Field &A = g5.gearA, &B = g5.gearB, &C = g5.gearC, &D = g5.gearD;
        const double h2 = h * h, h3 = h2 * h, h4 = h3 * h, h5 = h4 * h;
        combine(X1, {{h, &V0}, {h2 / 2, &A}, {h3 / 6, &B}, {h4 / 24, &C}, {h5 / 120, &D}});
        combine(Vp, {{1.0, &V0}, {h, &A}, {h2 / 2, &B}, {h3 / 6, &C}, {h4 / 24, &D}});
        combine(Ap, {{1.0, &A}, {h, &B}, {h2 / 2, &C}, {h3 / 6, &D}});
        combine(Bp, {{1.0, &B}, {h, &C}, {h2 / 2, &D}});
        combine(Cp, {{1.0, &C}, {h, &D}});
        s.evaluate(world, X1, Vp, t + h, Af, true);  // eq. 21 / Peña eq. 17
        V1.resize(nb);
        for (std::size_t i = 0; i < nb; ++i) {
            const Vec6 da = Af[i] - Ap[i];
            X1[i] += w[g][0] * h2 * da;
            V1[i] = Vp[i] + w[g][1] * h * da;
            g5.gearA[i] = Ap[i] + w[g][2] * da;
            g5.gearB[i] = Bp[i] + w[g][3] / h * da;
            if (g >= 1) g5.gearC[i] = Cp[i] + w[g][4] / h2 * da;
            if (g >= 2) g5.gearD[i] += w[g][5] / h3 * da;
        }
        // A0 is not a_t here; Gear keeps no multi-step history.
        step.recordHistory = false;
    }
};

}  // namespace

std::unique_ptr<MdIntegrator> gearFamily() { return std::make_unique<Gear>(); }

}  // namespace moreau
