/// The ranks' checks (DistributedSimulation::setCheckEvery; docs/distributed.md,
/// "The ranks' checks") on one rank, the code path of many: checks spaced
/// out, and every interval of more than a step taken back once and stepped
/// again (MOREAU_TEST_ROLLBACK), end in the serial run's bits.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

/// MOREAU_TEST_ROLLBACK set while it lives (the hook setCheckEvery reads).
struct ForcedRollbacks {
    explicit ForcedRollbacks(bool on) : on_(on) {
        if (on_) setenv("MOREAU_TEST_ROLLBACK", "1", 1);
    }
    ~ForcedRollbacks() {
        if (on_) unsetenv("MOREAU_TEST_ROLLBACK");
    }
    bool on_;
};

struct Stepped {
    std::uint64_t hash = 0;
    long checks = 0, rollbacks = 0;
};

Stepped stepDistributed(const Scene& scene, long steps, long every, bool forced) {
    const ForcedRollbacks hook(forced);
    DistributedSimulation run{Scene(scene)};
    run.setCheckEvery(every);
    run.advanceTo(steps);
    const World& w = run.gatherWorld();
    CHECK(w.step == steps);
    return {stateHash(w), run.checks(), run.rollbacks()};
}

}  // namespace

TEST_SUITE("distributed checks") {
    TEST_CASE("checks up to 20 steps apart, and rollbacks, give the serial bits on one rank") {
        struct Case {
            std::string scene;
            std::vector<std::string> sets;
            long steps;
            bool fewer;  ///< grains slow enough for checks several steps apart
        };
        const std::vector<Case> cases = {
            // The fused MD pipeline; a mobile piston.
            {"piston_2d.ini", {"simulation.method=md", "md.substeps=1", "simulation.dt=0.01"}, 600, true},
            // A multi-step scheme: its history in the restore point.
            {"box_3d.ini",
             {"simulation.method=md", "md.integrator=ab3-am4", "md.substeps=1", "simulation.dt=3e-4",
              "random.count=150"},
             300, true},
            // CD: the reactions' memory (the warm start) in the restore point
            // (its grains rebuild the lists nearly every step: no fewer checks).
            {"piston_2d.ini", {"simulation.method=cd", "cd.order=random-keys"}, 120, false},
        };
        for (const Case& c : cases) {
            CAPTURE(c.scene);
            CAPTURE(c.sets.front());
            CAPTURE(c.sets[1]);
            const Scene scene = loadBuiltinScene(c.scene, c.sets);
            CAPTURE(c.steps);
            Simulation serial{Scene(scene)};
            for (long s = 0; s < c.steps; ++s) serial.advance();
            const std::uint64_t want = stateHash(serial.world());
            const Stepped every = stepDistributed(scene, c.steps, 1, false);
            const Stepped apart = stepDistributed(scene, c.steps, 20, false);
            const Stepped back = stepDistributed(scene, c.steps, 20, true);
            CHECK(every.hash == want);
            CHECK(apart.hash == want);
            CHECK(back.hash == want);
            // One check at the start and one after every step; spaced out,
            // fewer; forced, every interval of more than a step went back.
            CHECK(every.checks == c.steps + 1);
            CHECK(every.rollbacks == 0);
            if (c.fewer) CHECK(apart.checks < every.checks / 4);
            CHECK(back.rollbacks > 0);
        }
    }

    TEST_CASE("a rank's record from its part has the serial record's bits on one rank") {
        // DistributedSimulation::record: the sums' words reduced over the
        // ranks, the counts completed by the neighbours (here: none), the
        // code path of many ranks (distributed_runs checks 2 and 3).
        struct Case {
            std::string scene;
            std::vector<std::string> sets;
            long steps;
        };
        const std::vector<Case> cases = {
            // The fused MD pipeline's diagnostics: a bed on the floor.
            {"box_3d.ini",
             {"simulation.method=md", "md.substeps=1", "simulation.dt=1e-3", "random.count=100",
              "random.box_max=5 5 8", "wall.x_max.point=5 0 0", "wall.y_max.point=0 5 0"},
             2000},
            // CD over a stress region (weighted branches, grains inside).
            {"box_3d.ini", {"simulation.method=cd", "output.stress_region=2 2 0 9 9 3"}, 150},
        };
        for (const Case& c : cases) {
            CAPTURE(c.scene);
            CAPTURE(c.sets.front());
            const Scene scene = loadBuiltinScene(c.scene, c.sets);
            Simulation serial{Scene(scene)};
            for (long s = 0; s < c.steps; ++s) serial.advance();
            const StepRecord want = serial.measuredRecord();
            DistributedSimulation run{Scene(scene)};
            run.advanceTo(c.steps);
            const StepRecord got = run.record(scene.output);
            CHECK(got.step == want.step);
            CHECK(got.contacts == want.contacts);
            CHECK(want.contacts > 10);
            CHECK(want.coordinationNonRattlers > 0.0);
            // Every number of the row, bit for bit (CD's elastic energy is the run's 0).
            for (const auto member : {&StepRecord::kineticEnergy, &StepRecord::rotationalEnergy, &StepRecord::meanOverlap,
                                      &StepRecord::maxOverlap, &StepRecord::pressure, &StepRecord::deviator,
                                      &StepRecord::packingFraction, &StepRecord::coordination,
                                      &StepRecord::coordinationNonRattlers})
                CHECK(got.*member == want.*member);
            if (scene.simulation.method == Method::MD) CHECK(got.elasticEnergy == want.elasticEnergy);
            CHECK(got.stress == want.stress);
            CHECK(got.fabric == want.fabric);
            CHECK(got.wallForce == want.wallForce);
            CHECK(got.wallTorque == want.wallTorque);
            CHECK(run.kineticEnergy() == kineticEnergy(serial.world()));
            CHECK(run.stateHash() == stateHash(serial.world()));
            CHECK(run.contactCount() == serial.contacts().size());
        }
    }
}
