/// summary.json's phase_seconds: the seconds of each stage of the steps
/// (core/profile.hpp), for both methods, and no effect on the results.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "moreau/io/scene_file.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;

TEST_SUITE("profile") {
    TEST_CASE("summary.json's phase_seconds names every stage, each non-negative, for CD and MD") {
        for (const std::string method : {"cd", "md"}) {
            CAPTURE(method);
            test::TempDir tmp;
            const std::vector<std::string> sets = {"simulation.method=" + method, "simulation.steps=30",
                                                   "output.vtk_every=0"};
            RunOptions options;
            options.outDir = tmp.path / "out";
            options.quiet = true;
            const RunOutcome run = runScene(loadBuiltinScene("chain_1d.ini", sets), options);
            REQUIRE(run.summary.contains("phase_seconds"));
            const nlohmann::json& p = run.summary["phase_seconds"];
            std::vector<std::string> stages = {"controls", "detect", "match", "solve", "integrate", "observe"};
            if (method == "cd")
                for (const char* part : {"solve_prepare", "solve_warm_start", "solve_sweeps", "solve_store"})
                    stages.push_back(part);
            CHECK(p.size() == stages.size());
            double sum = 0.0;
            for (const std::string& stage : stages) {
                CAPTURE(stage);
                REQUIRE(p.contains(stage));
                CHECK(p[stage].get<double>() >= 0.0);
                sum += p[stage].get<double>();
            }
            CHECK(sum > 0.0);
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
