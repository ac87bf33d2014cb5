/// summary.json's phase_seconds: the seconds of each stage of the steps
/// (core/profile.hpp), for both methods, and no effect on the results.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "moreau/io/scene_file.hpp"
#include "moreau/sim/distributed.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;

namespace {

/// chain_1d for 30 steps with `method` through `run` (runScene, or the
/// distributed loop on this one rank: runDistributed).
RunOutcome chainRun(const std::string& method, RunOutcome (*run)(Scene, const RunOptions&)) {
    test::TempDir tmp;
    RunOptions options;
    options.outDir = tmp.path / "out";
    options.quiet = true;
    return run(loadBuiltinScene("chain_1d.ini", {"simulation.method=" + method, "simulation.steps=30",
                                                 "output.vtk_every=0"}),
               options);
}

/// Checks that `p` holds exactly the serial stages, CD's solve parts and
/// `extra`, each non-negative and at least `below`'s (where given); returns
/// the sum of the stages (solve's parts are in solve).
double checkPhases(const nlohmann::json& p, const std::string& method, std::vector<std::string> stages,
                   const nlohmann::json* below = nullptr) {
    for (const char* stage : {"controls", "detect", "match", "solve", "integrate", "observe"}) stages.push_back(stage);
    if (method == "cd")
        for (const char* part : {"solve_prepare", "solve_warm_start", "solve_sweeps", "solve_store"})
            stages.push_back(part);
    // MD: integrate_forces, a part of integrate.
    CHECK(p.size() == stages.size() + (method == "md" ? 1u : 0u));
    if (method == "md") {
        REQUIRE(p.contains("integrate_forces"));
        CHECK(p["integrate_forces"].get<double>() >= 0.0);
        CHECK(p["integrate_forces"].get<double>() <= p["integrate"].get<double>());
    }
    double sum = 0.0;
    for (const std::string& stage : stages) {
        CAPTURE(stage);
        REQUIRE(p.contains(stage));
        CHECK(p[stage].get<double>() >= 0.0);
        if (below) CHECK(p[stage].get<double>() >= (*below)[stage].get<double>() - 1e-9);
        if (stage.rfind("solve_", 0) != 0) sum += p[stage].get<double>();
    }
    return sum;
}

}  // namespace

TEST_SUITE("profile") {
    TEST_CASE("summary.json's phase_seconds names every stage, each non-negative, for CD and MD") {
        for (const std::string method : {"cd", "md"}) {
            CAPTURE(method);
            const RunOutcome run = chainRun(method, runScene);
            REQUIRE(run.summary.contains("phase_seconds"));
            const double sum = checkPhases(run.summary["phase_seconds"], method, {});
            CHECK(sum > 0.0);
            CHECK(sum <= run.summary["wall_seconds"].get<double>());
        }
    }

    TEST_CASE("MD: integrate_forces is the part of integrate in the scheme's force evaluations") {
        // cd evaluates its forces in the solve stage; rk four times inside its step.
        for (const std::string scheme : {"cd", "rk"}) {
            CAPTURE(scheme);
            test::TempDir tmp;
            RunOptions options;
            options.outDir = tmp.path / "out";
            options.quiet = true;
            const RunOutcome run =
                runScene(loadBuiltinScene("chain_1d.ini", {"simulation.method=md", "md.integrator=" + scheme,
                                                           "simulation.steps=200", "output.vtk_every=0"}),
                         options);
            const nlohmann::json& p = run.summary["phase_seconds"];
            if (scheme == "cd") {
                CHECK(p["integrate_forces"].get<double>() == 0.0);
            } else {
                CHECK(p["integrate_forces"].get<double>() > 0.0);
                CHECK(p["integrate_forces"].get<double>() < p["integrate"].get<double>());
                CHECK(p["solve"].get<double>() < p["integrate_forces"].get<double>());
            }
        }
    }

    TEST_CASE("a distributed run's phase_seconds: the serial stages and the ranks' own, the mean and the max") {
        // The distributed loop on one rank (as bench.decomposed): the same
        // code and keys as on many, tests/mpi/run_distributed.py checks those.
        for (const std::string method : {"cd", "md"}) {
            CAPTURE(method);
            const RunOutcome run = chainRun(method, [](Scene scene, const RunOptions& options) {
                return runDistributed(std::move(scene), options);
            });
            const nlohmann::json& mean = run.summary["phase_seconds"];
            const std::vector<std::string> own = {"exchange", "rebuild", "wait", "restore", "gather"};
            const double sum = checkPhases(mean, method, own);
            checkPhases(run.summary["distributed"]["phase_seconds_max"], method, own, &mean);
            CHECK(mean["solve"].get<double>() > 0.0);
            CHECK(sum <= run.summary["wall_seconds"].get<double>() + 1e-6);
        }
    }

    TEST_CASE("the profile sums the stages of the steps taken and changes no bit") {
        const Scene scene = loadBuiltinScene("piston_2d.ini", {"simulation.method=cd"});
        Simulation timed(scene), plain(scene);
        for (int s = 0; s < 20; ++s) {
            timed.advance();
            (void)timed.record();
            plain.advance();
        }
        const StepProfile& p = timed.profile();
        CHECK(p.solve > 0.0);
        CHECK(p.cdSweeps > 0.0);
        CHECK(p.cdPrepare + p.cdWarmStart + p.cdSweeps + p.cdStore <= p.solve + 1e-9);
        CHECK(timed.world().v == plain.world().v);
        CHECK(timed.world().x == plain.world().x);
    }
}
