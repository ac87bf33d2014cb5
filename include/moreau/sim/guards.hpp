#pragma once
/// The checks of `moreau run` (docs/scenes.md, "Guards"), shared by the
/// command line's run loop (sim/run.hpp) and the Python module
/// (docs/python.md), so that both refuse the same scenes and stop the same
/// runs with the same messages.
///
/// Before the first step (InputError: exit 2, moreau.InputError):
/// checkMdStep and checkStart. While stepping (DivergenceError: exit 3,
/// moreau.DivergenceError): Guard, every step (travel) and every
/// guard.every steps (overlaps, energy).
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/model/scene.hpp"
#include "moreau/sim/checkpoint.hpp"

namespace moreau {

class Simulation;

/// A rank's part of the whole world (MPI ranks, docs/distributed.md): grain
/// k of its world is grain gid[k] of the whole (ascending), this rank's own
/// where owned[k] (the others are ghosts, which another rank owns).
struct OwnedGrains {
    const std::vector<std::uint64_t>& gid;
    const std::vector<char>& owned;
};

/// Throws InputError when an MD step cannot resolve a contact (guard.contact_steps).
/// With `ranks`, `world` is this rank's part (collective: every rank
/// throws the whole world's verdict).
void checkMdStep(const Scene& settings, const World& world, const OwnedGrains* ranks = nullptr);
inline void checkMdStep(const Scene& scene) { checkMdStep(scene, scene.world); }

/// Throws InputError when the start is not a state the methods can step:
/// grains outside the periodic box on a periodic axis (the first by id), or
/// overlapping each other or a wall (inside or behind it) by more than
/// guard.start_overlap (of those pairs, the first by ids). With `ranks` as
/// checkMdStep.
void checkStart(const Scene& settings, const World& world, const OwnedGrains* ranks = nullptr);
inline void checkStart(const Scene& scene) { checkStart(scene, scene.world); }

/// The run's checks every guard.every steps (GuardSettings): overlaps,
/// travel per step, energy. The caller decides when to check and what to
/// do when a check fails (the run loop keeps the last passing step's
/// checkpoint).
class Guard {
public:
    /// `totals` keep the energy reference across a resume (made here on a
    /// fresh run: energyStart NaN). The energy is checked only where nothing
    /// but gravity feeds it, as `sim` is now (applied forces, prescribed
    /// bodies, a deforming or servoed cell count as sources).
    Guard(const Simulation& sim, RunTotals& totals);

    /// Each grain's travel in the last step (every step: one pass over the
    /// velocities). Empty when it passes; else what failed.
    std::string checkTravel(const Simulation& sim) const;
    /// The overlaps and the energy (every guard.every steps). Empty when
    /// the state passes; else what failed.
    std::string check(const Simulation& sim) const;
    /// A step's checks: the travel, then with `full` (every guard.every
    /// steps, and a run's last) the overlaps and the energy. Empty when all pass.
    std::string checkStep(const Simulation& sim, bool full) const {
        std::string why = checkTravel(sim);
        if (why.empty() && full) why = check(sim);
        return why;
    }
    bool active() const { return g_.maxOverlap > 0.0 || g_.maxTravel > 0.0 || energy_; }
    long every() const { return g_.every; }

private:
    GuardSettings g_;
    double rMin_ = 0.0, e0_ = 0.0, budget_ = 0.0;
    bool energy_ = false;
};

}  // namespace moreau
