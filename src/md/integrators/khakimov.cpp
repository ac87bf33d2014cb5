// The Khakimov family (integration-schemes paper eqs. 16-18): D12 and T12
// divide the positions by 1 − (da/dr) Δt²/12 (AM3 velocities, whose a_t part
// is an implicit kick), T16 the velocities by 1 − (da/dr)(t+Δt) Δt²/6; the
// divisions are fixed points through the laws' position Jacobian.
#include "stages.hpp"

namespace moreau {

namespace {

class Khakimov final : public MdIntegrator {
public:
    void advance(SchemeStages& s, SchemeStep& step) override {
        World& world = step.world;
        const double h = step.h, t = step.t;
        Field& V0 = step.V0;
        Field &A0 = step.A0, &X1 = step.X1, &V1 = step.V1;
        if (step.scheme == Integrator::T16) {
            s.evaluate(world, step.zero, V0, t, A0, true);
            Field &JV = s.scratch(4), &y = s.scratch(5);
            s.forceDerivative(world, &V0, nullptr, JV);  // (da/dr) v_t
            combine(X1, {{h, &V0}, {0.5 * h * h, &A0}, {h * h * h / 6.0, &JV}});
            combine(y, {{1.0, &V0}, {h, &A0}, {h * h / 3.0, &JV}});
            // (da/dr) at t + Δt: the contacts' geometry at r_{t+Δt}.
            s.placeGeometry(world, X1, y);
            s.solvePositionJacobian(world, h * h / 6.0, y, V1);  // eq. 18
            return;
        }
        // D12, T12.
        s.implicitKick(world, step.zero, V0, step.kick, h, t, A0);  // completes v_t of the AM3 velocity (5/12 a_t)
        const Field& Am1 = s.state.pastA[0];
        const Field& pastDX = s.state.pastDX;
        Field& y = s.scratch(4);
        if (step.scheme == Integrator::T12) {
            combine(y, {{h, &V0}, {7.0 * h * h / 12.0, &A0}, {-h * h / 12.0, &Am1}});  // eq. 16
            s.solvePositionJacobian(world, h * h / 12.0, y, X1);
        } else {
            combine(y, {{1.0, &pastDX}, {h, &V0}, {0.5 * h * h, &A0}});  // eq. 17
            s.solvePositionJacobian(world, h * h / 12.0, y, X1);
            combine(X1, {{1.0, &X1}, {-1.0, &pastDX}});
        }
        combine(V1, {{1.0, &V0}, {8.0 * h / 12.0, &A0}, {-h / 12.0, &Am1}});
        step.owe = 5.0 / 12.0;
    }
};

}  // namespace

std::unique_ptr<MdIntegrator> khakimovFamily() { return std::make_unique<Khakimov>(); }

}  // namespace moreau
