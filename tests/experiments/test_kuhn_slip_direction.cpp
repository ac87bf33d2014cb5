/// Kuhn et al. Fig. 4: the small version of `moreau experiment kuhn-slip-direction`.
#include <doctest/doctest.h>

#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("kuhn-slip-direction: one refined step matches many small steps, one shortcut step lags") {
        const nlohmann::json doc =
            test::runQuiet(kuhnSlipDirection, {"experiment.points=9", "experiment.substeps=2000"});
        test::checkAllPass(doc);
        const auto& r = doc["results"];
        const auto refined = r["theta_refined"].get<std::vector<double>>();
        const auto shortcut = r["theta_shortcut"].get<std::vector<double>>();
        // From near θ_t = −90° for tiny movements towards 0° for large ones.
        CHECK(refined.front() < -88.0);
        CHECK(refined.back() > -1.0);
        CHECK(shortcut.back() < refined.back() - 3.0);
    }
}
