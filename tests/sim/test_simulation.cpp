// The stepper: its stages called one at a time are its step.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

/// box_3d.ini with a few overrides, shortened.
Scene boxScene(std::vector<std::string> sets) {
    sets.emplace_back("simulation.steps=40");
    return loadBuiltinScene("box_3d.ini", sets);
}

/// Runs `steps` steps through the four stages called by hand.
void stepByStages(Simulation& sim, int steps) {
    for (int k = 0; k < steps; ++k) {
        sim.detect();
        sim.match();
        sim.solve();
        sim.integrate();
    }
}

}  // namespace

TEST_SUITE("sim") {
    TEST_CASE("detect, match, solve and integrate called one by one give the step's bits") {
        // piston_2d.ini compressed by its piston, 300 steps (100 for RK4):
        // the state hashes of `moreau run examples/piston_2d.ini --set
        // simulation.steps=N ...` of the engine before the stages existed
        // (commit acf01f0), with 89 to 426 contacts at the end.
        struct Case {
            std::vector<std::string> sets;
            int steps;
            const char* hash;
        };
        const std::vector<Case> cases = {
            {{"simulation.method=cd"}, 300, "40f22af0ea279b6e"},
            {{"simulation.method=cd", "cd.order=fixed"}, 300, "d829d43e3fa2e9a6"},
            {{"simulation.method=md", "md.pipeline=staged"}, 300, "fc6099cd832374eb"},
            {{"simulation.method=md", "md.pipeline=fused"}, 300, "fc6099cd832374eb"},
            {{"simulation.method=md", "md.tangential=kuhn"}, 300, "a0b5635b08a32a2c"},
            {{"simulation.method=md", "md.integrator=rk"}, 100, "87a37ba3c57a2a4e"},
        };
        for (const Case& c : cases) {
            std::string label;
            for (const std::string& s : c.sets) label += s + " ";
            INFO(label);
            Simulation whole(loadBuiltinScene("piston_2d.ini", c.sets)), staged(loadBuiltinScene("piston_2d.ini", c.sets));
            for (int k = 0; k < c.steps; ++k) whole.advance();
            // MD: md.substeps = 100 in this scene; the stages run one substep.
            const int substeps = whole.scene().simulation.method == Method::MD ? whole.scene().md.substeps : 1;
            stepByStages(staged, c.steps * substeps);
            CHECK(hex64(stateHash(whole.world())) == c.hash);
            CHECK(hex64(stateHash(staged.world())) == c.hash);
            CHECK(whole.world().step == c.steps);
        }
    }

    TEST_CASE("stages called out of order are refused, naming the order") {
        Simulation sim(boxScene({}));
        CHECK_THROWS_WITH_AS(sim.solve(), doctest::Contains("the stage due is detect()"), std::logic_error);
        CHECK_THROWS_WITH_AS(sim.solve(), doctest::Contains("detect, match, solve, integrate"), std::logic_error);
        sim.detect();
        CHECK_THROWS_AS(sim.integrate(), std::logic_error);
        sim.match();
        CHECK_THROWS_AS(sim.match(), std::logic_error);
        sim.solve();
        sim.detect();  // a new step may start without integrating
        sim.match();
        sim.solve();
        sim.integrate();
        CHECK(sim.world().step == 1);
    }

    TEST_CASE("solve without integrate moves nothing, and CD's solve sets the new velocities") {
        Simulation sim(boxScene({"simulation.method=cd"}));
        for (int k = 0; k < 20; ++k) sim.advance();
        const World before = sim.world();
        sim.detect();
        sim.match();
        sim.solve();
        const World& after = sim.world();
        REQUIRE(after.numBodies() == before.numBodies());
        bool velocityChanged = false;
        for (std::size_t i = 0; i < after.numBodies(); ++i) {
            CHECK(after.x[i] == before.x[i]);
            velocityChanged = velocityChanged || after.v[i] != before.v[i];
        }
        CHECK(velocityChanged);  // gravity at least
        CHECK(after.step == before.step);
        CHECK(sim.solveStats().iterations > 0);
        double load = 0.0;
        for (const Contact& c : sim.contacts()) load += c.history.reaction.norm();
        CHECK(load > 0.0);
    }

    TEST_CASE("an MD solve without integrate leaves the world and reports the contact forces") {
        for (const char* pipeline : {"md.pipeline=staged", "md.pipeline=fused"}) {
            INFO(pipeline);
            Simulation sim(boxScene({"simulation.method=md", pipeline, "md.substeps=1", "simulation.dt=3e-4"}));
            for (int k = 0; k < 200; ++k) sim.advance();
            const std::uint64_t hash = stateHash(sim.world());
            sim.detect();
            sim.match();
            sim.solve();
            CHECK(stateHash(sim.world()) == hash);
            double load = 0.0;
            for (const Contact& c : sim.contacts()) load += c.history.reaction.norm();
            CHECK(load > 0.0);
        }
    }
}
