/// CD paper §3.4: a CD chain with N_I iterations per step against MD with the
/// linear spring-dashpot of eqs. 67-68; the small, fast version of
/// `moreau experiment cd-md-equivalence`.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"

using namespace moreau;

TEST_SUITE("experiments") {
    TEST_CASE("cd-md-equivalence: the MD chain with kappa, gamma of eqs. 67-68 rings like the CD chain") {
        const nlohmann::json doc = test::runQuiet(cdMdEquivalence, {"experiment.iterations_1d=40", "chain.count=25",
                                                                   "experiment.packing=false"});
        const auto& r = doc["results"];
        const double q = qRandomSweep();
        CHECK(r["kappa"].get<double>() == doctest::Approx(q * 40));
        CHECK(r["gamma"].get<double>() == doctest::Approx(q * 40));
        // The 5% on omega; tau within 10% (each lies within 5% of eq. 60).
        CHECK(r["omega_md"].get<double>() / r["omega_cd"].get<double>() == doctest::Approx(1.0).epsilon(0.05));
        CHECK(r["tau_md"].get<double>() / r["tau_cd"].get<double>() == doctest::Approx(1.0).epsilon(0.10));
        test::checkAllPass(doc);
    }

    TEST_CASE("cd-md-equivalence: an MD step that does not resolve the dashpot misses the CD frequency") {
        // gamma dt_MD / m_eff = 1.5: the explicit dashpot is off by far more than 5%,
        // so the check must fail (the comparison can tell right from wrong).
        const nlohmann::json doc = test::runQuiet(cdMdEquivalence, {"experiment.iterations_1d=40", "chain.count=25",
                                                                   "experiment.packing=false",
                                                                   "experiment.md_damping_step=1.5"});
        const auto& r = doc["results"];
        CHECK(std::abs(r["omega_md"].get<double>() / r["omega_cd"].get<double>() - 1.0) > 0.05);
    }
}
