// The Taylor family (integration-schemes paper eqs. 5-8): forward Euler and
// the Taylor expansions of order 2 to 4, the higher terms from the laws'
// time derivatives (MdForceStage::forceDerivative).
#include "stages.hpp"

namespace moreau {

namespace {

class Taylor final : public MdIntegrator {
public:
    void advance(SchemeStages& s, SchemeStep& step) override {
        const double h = step.h;
        const Field& V0 = step.V0;
        Field &A0 = step.A0, &X1 = step.X1, &V1 = step.V1;
        s.evaluate(step.world, step.zero, V0, step.t, A0, true);
        const double p2 = step.scheme == Integrator::FE ? 0.0 : 0.5 * h * h;
        combine(X1, {{h, &V0}, {p2, &A0}});
        combine(V1, {{1.0, &V0}, {h, &A0}});
        // TY3 and TY4: b = da/dt (eq. 7), and c = db/dt (eq. 8; the paper's "1/2 4" is 1/24).
        const int derivatives = step.info.timeDerivatives;
        if (derivatives >= 1) {
            Field &B = s.scratch(4), &C = s.scratch(5);
            s.forceDerivative(step.world, &V0, &A0, B);
            combine(X1, {{1.0, &X1}, {h * h * h / 6.0, &B}});
            combine(V1, {{1.0, &V1}, {0.5 * h * h, &B}});
            if (derivatives >= 2) {
                s.forceDerivative(step.world, &A0, &B, C);
                combine(X1, {{1.0, &X1}, {h * h * h * h / 24.0, &C}});
                combine(V1, {{1.0, &V1}, {h * h * h / 6.0, &C}});
            }
        }
    }
};

}  // namespace

std::unique_ptr<MdIntegrator> taylorFamily() { return std::make_unique<Taylor>(); }

}  // namespace moreau
