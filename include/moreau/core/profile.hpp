#pragma once
/// Seconds spent in each stage of a step, summed over the steps a
/// Simulation took (as Box2D's b2Profile): Simulation::profile(), and
/// summary.json's `phase_seconds` (docs/scenes.md). A few clock reads per
/// step, none per contact; timing changes no result.
#include <chrono>

namespace moreau {

struct StepProfile {
    double controls = 0.0;   ///< applyControls: servos, cell control, glued grains
    double detect = 0.0;     ///< candidates (the fused MD pipeline: in its solve)
    double match = 0.0;      ///< last step's memory carried by key
    double solve = 0.0;      ///< CD: the impulses; MD: the forces (and the distributed sums after them)
    double integrate = 0.0;  ///< positions (MD: the integrator's whole step but the force stage cd)
    /// MD schemes but cd: the part of `integrate` in force evaluations (the
    /// laws at each stage, their derivatives, the stage's contact geometry);
    /// integrate − integrateForces is the scheme's own arithmetic.
    double integrateForces = 0.0;
    double observe = 0.0;    ///< the records and measurements the outputs asked for
    /// CD's solve stage in parts: the rows built (free velocities, masses),
    /// the warm start, the sweeps until the criterion, the velocities and
    /// reactions written back.
    double cdPrepare = 0.0, cdWarmStart = 0.0, cdSweeps = 0.0, cdStore = 0.0;
};

/// Adds the seconds since `from` to `into` and restarts `from`: one lap.
inline void lap(std::chrono::steady_clock::time_point& from, double& into) {
    const auto now = std::chrono::steady_clock::now();
    into += std::chrono::duration<double>(now - from).count();
    from = now;
}

}  // namespace moreau
