// The Adams family (integration-schemes paper eqs. 15 and 19, Tables 1-2):
// k-step Adams–Bashforth (AB2-AB5) and the PECE pairs AB(k) + AM(k+1). The
// step count is the row's historySteps + 1; a PECE pair evaluates twice.
#include <vector>

#include "stages.hpp"

namespace moreau {

namespace {

/// Adams–Bashforth coefficients of v_t, v_{t−Δt}, … (Table 1, signs included).
std::vector<double> adamsBashforth(int k) {
    switch (k) {
        case 2: return {3.0 / 2.0, -1.0 / 2.0};
        case 3: return {23.0 / 12.0, -16.0 / 12.0, 5.0 / 12.0};
        case 4: return {55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0};
        default: return {1901.0 / 720.0, -2774.0 / 720.0, 2616.0 / 720.0, -1274.0 / 720.0, 251.0 / 720.0};
    }
}

/// Adams–Moulton coefficients of v_{t+Δt}, v_t, v_{t−Δt}, … (Table 2, signs included).
std::vector<double> adamsMoulton(int order) {
    switch (order) {
        case 3: return {5.0 / 12.0, 8.0 / 12.0, -1.0 / 12.0};
        case 4: return {9.0 / 24.0, 19.0 / 24.0, -5.0 / 24.0, 1.0 / 24.0};
        default: return {251.0 / 720.0, 646.0 / 720.0, -264.0 / 720.0, 106.0 / 720.0, -19.0 / 720.0};
    }
}

class Adams final : public MdIntegrator {
public:
    void advance(SchemeStages& s, SchemeStep& step) override {
        World& world = step.world;
        const double h = step.h, t = step.t;
        const Field& V0 = step.V0;
        Field &A0 = step.A0, &X1 = step.X1, &V1 = step.V1;
        const std::vector<Field>&pastV = s.state.pastV, &pastA = s.state.pastA;
        const std::size_t nb = V0.size();
        const int k = step.info.historySteps + 1;
        // X1 += h Σ_j c[first + j] v_{t−jΔt}, V1 likewise with the accelerations.
        auto addPast = [&](const std::vector<double>& c, std::size_t first) {
            for (int j = 0; j < k; ++j) {
                const Field& Vj = j == 0 ? V0 : pastV[static_cast<std::size_t>(j - 1)];
                const Field& Aj = j == 0 ? A0 : pastA[static_cast<std::size_t>(j - 1)];
                for (std::size_t i = 0; i < nb; ++i) {
                    X1[i] += h * c[first + static_cast<std::size_t>(j)] * Vj[i];
                    V1[i] += h * c[first + static_cast<std::size_t>(j)] * Aj[i];
                }
            }
        };
        s.evaluate(world, step.zero, V0, t, A0, true);
        X1.assign(nb, Vec6::Zero());
        V1 = V0;
        addPast(adamsBashforth(k), 0);
        if (step.info.forceEvaluations < 2) return;
        // PECE, eq. 19: evaluate at the prediction, correct with Adams–Moulton of order k + 1.
        Field& Ap = s.scratch(4);
        s.evaluate(world, X1, V1, t + h, Ap, false);
        const std::vector<double> eta = adamsMoulton(k + 1);
        Field Vp = V1;
        X1.assign(nb, Vec6::Zero());
        V1 = V0;
        for (std::size_t i = 0; i < nb; ++i) {
            X1[i] += h * eta[0] * Vp[i];
            V1[i] += h * eta[0] * Ap[i];
        }
        addPast(eta, 1);
    }
};

}  // namespace

std::unique_ptr<MdIntegrator> adamsFamily() { return std::make_unique<Adams>(); }

}  // namespace moreau
