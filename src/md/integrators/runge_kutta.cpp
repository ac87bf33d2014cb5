// The classical 4-stage Runge–Kutta scheme (integration-schemes paper eq. 9);
// its step is SchemeStages::rungeKutta, which also starts the multi-step schemes.
#include "stages.hpp"

namespace moreau {

namespace {

class RungeKutta final : public MdIntegrator {
public:
    void advance(SchemeStages& s, SchemeStep& step) override {
        s.rungeKutta(step.world, step.V0, step.A0, step.t, step.h, step.X1, step.V1);
    }
};

}  // namespace

std::unique_ptr<MdIntegrator> rungeKuttaFamily() { return std::make_unique<RungeKutta>(); }

}  // namespace moreau
