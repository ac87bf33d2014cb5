#pragma once
/// The fused MD pipeline: MD's force stage in its pair schedule
/// (MdForceStage::evaluatePairs over an MdPairList: the list rebuilt where
/// bodies moved beyond the skin, then one pass doing the narrow phase, the
/// laws, each pair's memory in place and the per-body sums), then the
/// leapfrog kick and drift (md.integrator = cd). It replaces detect → match
/// → forces → gather of the staged pipeline (MdSolver) for the common case:
///
///   integrator cd; normal and tangential laws whose rows are `fused`
///   (linear, hertz, hertz-damped or hkk; none, coulomb, viscous,
///   viscous-coulomb or spring); no rolling law; μ_s = μ_d.
///
/// For these laws a contact's whole memory is its tangential spring (and its
/// last force, for the work diagnostics), so it lives next to the pair in the
/// list. The laws per contact (md/laws/) and the order of every per-body sum
/// are the staged pipeline's (key order), so both give the same bits for any
/// thread count (tests/md/test_pair_engine.cpp); only the energy and work
/// sums are grouped differently (last-bit differences).
///
/// Semantics that differ from the staged pipeline, by design:
/// - contacts() computes the geometry at the current positions (after the
///   step), with the force of the step's evaluation as history.reaction; the
///   staged pipeline keeps the geometry of the evaluation.
/// - After a DivergenceError the world is unchanged but the springs have
///   advanced: the run is over anyway (Simulation writes a checkpoint).
#include <limits>
#include <string>
#include <vector>

#include "moreau/core/step_context.hpp"
#include "moreau/md/force_stage.hpp"
#include "moreau/md/pair_list.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

class MdPairEngine {
public:
    /// Whether these settings run in the fused pipeline (see above). When not,
    /// `why` (if given) says which setting needs the staged one.
    static bool supports(const MdSettings& settings, std::string* why = nullptr);

    /// skin: Verlet skin (absolute length); 0 rebuilds the list every step.
    /// innerSkin: skin of the working list filtered from it (MdPairList);
    /// 0 or >= skin: the working list is the Verlet list.
    MdPairEngine(const MdSettings& settings, double skin, double innerSkin = 0.0);

    /// One step of length ctx.dt. `margin` is the detection margin: the list
    /// holds every pair within margin + skin, and contacts() those within margin.
    void step(World& world, const StepContext& ctx, double margin);
    /// The step's first part: the list brought up to date, the force stage's
    /// pair schedule. Throws DivergenceError when a sum is not finite.
    void forces(const World& world, const StepContext& ctx, double margin);
    /// The step's second part: kick and drift with the sums of forces(),
    /// which it clears.
    void integrate(World& world, const StepContext& ctx);

    /// The laws' elastic energy (normal law's, ½ k_t |s|² of the springs) at the last evaluation.
    /// This and overlapStats() are made from the pairs' memory when first
    /// asked for after a step (a pass over the list; steps whose diagnostics
    /// nobody reads cost nothing), with the bits a per-step sum would have.
    double elasticEnergy() const { return diagnostics().elastic; }
    /// Whether the steps sum the work delivered to the contacts (off unless
    /// asked for: a running sum must see every step, and no output of a run
    /// reads it; the staged MdSolver always sums it). Turning it on starts
    /// the sum at zero.
    void trackWork(bool on) {
        trackWork_ = on;
        stage_.setWorkIn(0.0);
    }
    bool tracksWork() const { return trackWork_; }
    /// Work delivered to the contacts since trackWork(true) (as
    /// MdSolver::contactWork); NaN when the work is not tracked.
    double contactWork() const { return trackWork_ ? stage_.workIn() : std::numeric_limits<double>::quiet_NaN(); }
    /// contactWork() less the elastic energy stored now.
    double dissipatedWork() const { return contactWork() - elasticEnergy(); }
    /// f(a, b, force on b) for each pair touching at the last evaluation, in key order.
    template <class F>
    void forEachTouchingPair(F&& f) const {
        list_.forEachTouchingPair(f);
    }
    /// The touching pairs' parts of elasticEnergy() and overlapStats(), in key order.
    std::vector<PairDiagnostic> pairDiagnostics() const { return stage_.pairDiagnostics(list_); }
    struct Diagnostics {
        double elastic = 0.0;
        OverlapStats overlaps;
    };
    /// Contacts carrying force at the last evaluation: count, mean and max overlap.
    const OverlapStats& overlapStats() const { return diagnostics().overlaps; }
    /// Builds of the Verlet list (cell grid) and of the working list so far.
    long builds() const { return list_.builds(); }
    long innerBuilds() const { return list_.innerBuilds(); }
    /// Wall seconds each range of the last step's split force pass took
    /// (empty when that pass ran on one thread). Their spread is what the
    /// threads that finished first waited at the barrier after the pass.
    const std::vector<double>& lastRangeSeconds() const { return list_.split.lastRangeSeconds; }
    /// Pairs in the working list now.
    std::size_t pairs() const { return list_.size(); }

    /// The lane kernel's width (MdForceStage::setPairLanes). Non-periodic worlds only.
    void setBlockLanes(int maxLanes) { stage_.setPairLanes(maxLanes); }
    /// Lanes of the kernel chosen (0: none) and its ISA ("none" when none).
    int blockLanes() const { return stage_.pairLanes(); }
    /// The ISA of the kernel that steps this world ("none": the scalar pass).
    const char* blockIsa(const World& world) const { return world.anyPeriodic() ? "none" : stage_.pairIsa(); }

    /// Between forces() and integrate(): makes `f` body i's summed pair
    /// force (a distributed run's wall, summed over ranks).
    void overrideContactForce(std::size_t i, const Vec3& f) { stage_.force()[i] = f; }
    /// Between forces() and integrate(): body i's summed pair force (a
    /// glued grain's part of its wall included).
    const Vec3& contactForce(std::size_t i) const { return stage_.force()[i]; }
    /// The pair list's forces, stress sum, contacts and memory (MdPairList).
    void addPairForces(std::vector<Vec3>& force) const { list_.addPairForces(force); }
    Mat3 pairStressSum(const World& world) const { return list_.pairStressSum(world); }
    void contacts(const World& world, double margin, std::vector<Contact>& out) const { list_.contacts(world, margin, out); }
    ContactStore memory() const { return list_.memory(); }
    /// Makes `store` the pairs' memory (MdPairList::restoreMemory); until
    /// the next pass the diagnostics (energy, overlaps) are zeros.
    void restoreMemory(const ContactStore& store, const std::string& origin);

private:
    /// The last evaluation's elastic energy and overlap statistics:
    /// sumPairDiagnostics(pairDiagnostics()), made once per step, when asked.
    const Diagnostics& diagnostics() const;

    MdForceStage stage_;
    MdPairList list_;
    bool trackWork_ = false;
    mutable Diagnostics diagnostics_;
    mutable bool diagnosticsDone_ = true;  ///< diagnostics_ is the last evaluation's (none yet: zeros)
};

/// The diagnostics of a list of pairs' parts in key order (every rank's,
/// for a distributed run): partial sums over chunks of a fixed size, then
/// over the chunks, with the same bits for any thread count.
MdPairEngine::Diagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms);

}  // namespace moreau
