// The checks `moreau run` and the Python module share (sim/guards.hpp): each
// one fires on a scene made to fail it and keeps quiet when its key is off.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "moreau/io/scene_file.hpp"
#include "moreau/sim/guards.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/input_error.hpp"

using namespace moreau;
using moreau::test::errorOf;

TEST_SUITE("sim") {
    TEST_CASE("checkMdStep refuses an MD step longer than a tenth of a contact, naming the substeps that resolve it") {
        const std::vector<std::string> md = {"simulation.method=md", "md.substeps=1"};
        const std::string why = errorOf([&] { checkMdStep(loadBuiltinScene("piston_2d.ini", md)); });
        CHECK(why.find("keys 'simulation.dt', 'md.substeps'") != std::string::npos);
        CHECK(why.find("md.substeps >= 46") != std::string::npos);
        CHECK(errorOf([&] { checkMdStep(loadBuiltinScene("piston_2d.ini", {"simulation.method=md"})); }) ==
              "(no InputError)");  // the scene's 100 substeps
        auto off = md;
        off.emplace_back("guard.contact_steps=0");
        CHECK(errorOf([&] { checkMdStep(loadBuiltinScene("piston_2d.ini", off)); }) == "(no InputError)");
    }

    TEST_CASE("checkStart refuses a grain inside a wall beyond guard.start_overlap") {
        // chain_1d.ini's first grain (radius 0.5) at x = 0.3: 0.2 into the wall at x = 0.
        const std::vector<std::string> inside = {"chain.origin=0.3 0 0"};
        const std::string why = errorOf([&] { checkStart(loadBuiltinScene("chain_1d.ini", inside)); });
        CHECK(why.find("grain 0 lies 0.2 inside or behind wall 'left'") != std::string::npos);
        CHECK(why.find("guard.start_overlap = 0.01") != std::string::npos);
        CHECK(errorOf([&] { checkStart(loadBuiltinScene("chain_1d.ini", {"chain.origin=0.3 0 0",
                                                                           "guard.start_overlap=inf"})); }) ==
              "(no InputError)");
    }

    TEST_CASE("Guard::checkTravel names a grain that moves more than guard.max_travel radii in a step") {
        // One free grain of radius 0.5 at 1 per step of 1: 2 radii a step.
        auto afterOneStep = [](const std::string& maxTravel) {
            Simulation sim(loadBuiltinScene("chain_1d.ini", {"chain.count=1", "chain.origin=5 0 0", "grains.velocity=1 0 0",
                                                             "force.push.value=0 0 0", "guard.max_travel=" + maxTravel}));
            RunTotals totals;
            const Guard guard(sim, totals);
            sim.advance();
            return guard.checkTravel(sim);
        };
        CHECK(afterOneStep("1") == "grain 0 moves 2 radii in a step, |v| = 1 (guard.max_travel = 1)");
        CHECK(afterOneStep("2.5").empty());
        CHECK(afterOneStep("0").empty());  // no check
    }
}
