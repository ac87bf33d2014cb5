#pragma once
/// The fused MD pipeline: one pass over a persistent Verlet pair list does the
/// narrow phase, the force laws, the history update in place and the sums per
/// body (with several threads, a short gather finishes the bodies two
/// threads' ranges share); a second pass integrates (leapfrog, as
/// md.integrator = cd). The touching grain–grain pairs go through a
/// lane-parallel kernel (src/md/pair_block.hpp, md.simd). The pipeline
/// replaces detect → match → forces → gather of the staged pipeline
/// (MdSolver) for the common case:
///
///   integrator cd; normal law linear, hertz, hertz-damped or hkk;
///   tangential none, coulomb, viscous, viscous-coulomb or spring;
///   μ_s = μ_d.
///
/// For these laws a contact's whole memory is its tangential spring (and its
/// last force, for the work diagnostics), so it lives next to the pair in the
/// list instead of being rebuilt, remembered and matched by key every step.
/// The laws per contact (md/laws/) and the order of every per-body sum are
/// the staged pipeline's (key order), so both give the
/// same bits for any thread count (tests/md/test_pair_engine.cpp); only the
/// energy and work sums are grouped differently (last-bit differences).
///
/// Semantics that differ from the staged pipeline, by design:
/// - contacts() computes the geometry at the current positions (after the
///   step), with the force of the step's evaluation as history.reaction; the
///   staged pipeline keeps the geometry of the evaluation.
/// - After a DivergenceError the world is unchanged but the springs have
///   advanced: the run is over anyway (Simulation writes a checkpoint).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "moreau/core/step_context.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

namespace md_block {
struct BlockContext;
struct BlockResult;
struct DriftContext;
struct DriftResult;
}  // namespace md_block

/// One touching pair's part of the fused pipeline's diagnostics: its key,
/// elastic energy and overlap at the last evaluation, and whether it carried
/// force then.
struct PairDiagnostic {
    ContactKey key = 0;
    double elastic = 0.0, overlap = 0.0;
    bool loaded = false;
};

class MdPairEngine {
public:
    /// Whether these settings run in the fused pipeline (see above). When not,
    /// `why` (if given) says which setting needs the staged one.
    static bool supports(const MdSettings& settings, std::string* why = nullptr);

    /// skin: Verlet skin (absolute length); 0 rebuilds the list every step.
    /// innerSkin: skin of the working list filtered from it (see rebuild());
    /// 0 or >= skin: the working list is the Verlet list.
    MdPairEngine(const MdSettings& settings, double skin, double innerSkin = 0.0);

    /// One step of length ctx.dt. `margin` is the detection margin: the list
    /// holds every pair within margin + skin, and contacts() those within margin.
    void step(World& world, const StepContext& ctx, double margin);
    /// The step's first part: the list (rebuilt where bodies moved beyond
    /// the skin), the narrow phase, the laws, the springs and the per-body
    /// sums. Throws DivergenceError when a sum is not finite.
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
        workIn_ = 0.0;
    }
    bool tracksWork() const { return trackWork_; }
    /// Work delivered to the contacts since trackWork(true) (as
    /// MdSolver::contactWork); NaN when the work is not tracked.
    double contactWork() const { return trackWork_ ? workIn_ : std::numeric_limits<double>::quiet_NaN(); }
    /// contactWork() less the elastic energy stored now.
    double dissipatedWork() const { return contactWork() - elasticEnergy(); }
    /// f(a, b, force on b) for each pair touching at the last evaluation, in key order.
    template <class F>
    void forEachTouchingPair(F&& f) const {
        for (std::size_t k = 0; k < pairs_.size(); ++k)
            if (touched_[k]) f(pairs_[k].a, pairs_[k].b, force_[k]);
    }
    /// The touching pairs' parts of elasticEnergy() and overlapStats(), in key order.
    std::vector<PairDiagnostic> pairDiagnostics() const;
    struct Diagnostics {
        double elastic = 0.0;
        OverlapStats overlaps;
    };
    /// Contacts carrying force at the last evaluation: count, mean and max overlap.
    const OverlapStats& overlapStats() const { return diagnostics().overlaps; }
    /// Builds of the Verlet list (cell grid) so far.
    long builds() const { return builds_; }
    /// Builds of the working list (filtered from the Verlet list) so far.
    long innerBuilds() const { return innerBuilds_; }
    /// Wall seconds each range of the last step's split force pass took
    /// (empty when that pass ran on one thread). Their spread is what the
    /// threads that finished first waited at the barrier after the pass.
    const std::vector<double>& lastRangeSeconds() const { return lastRangeSeconds_; }
    /// Pairs in the working list now.
    std::size_t pairs() const { return pairs_.size(); }

    /// The touching grain–grain pairs go through a lane-parallel kernel
    /// (src/md/pair_block.hpp), with the scalar pass's bits. `maxLanes`
    /// caps its width: 8 (AVX-512), 4 (AVX2), 2 (SSE2), 0 (scalar pass
    /// only); −1 (md.simd = auto): AVX-512 where the CPU has it, else the
    /// scalar pass. Non-periodic worlds only.
    void setBlockLanes(int maxLanes);
    /// Lanes of the kernel chosen (0: none) and its ISA ("none" when none).
    int blockLanes() const { return blockLanes_; }
    /// The ISA of the kernel that steps this world ("none": the scalar pass).
    const char* blockIsa(const World& world) const { return world.anyPeriodic() ? "none" : blockIsa_; }

    /// Between forces() and integrate(): makes `f` body i's summed pair
    /// force (a distributed run's wall, summed over ranks).
    void overrideContactForce(std::size_t i, const Vec3& f) { bodyForce_[i] = f; }
    /// Between forces() and integrate(): body i's summed pair force (a
    /// glued grain's part of its wall included).
    const Vec3& contactForce(std::size_t i) const { return bodyForce_[i]; }
    /// Adds each pair's force of the last evaluation to its bodies, f to b
    /// and −f to a, in key order (serial: the same bits for any thread
    /// count). `force` has one entry per body.
    void addPairForces(std::vector<Vec3>& force) const;
    /// Σ f ⊗ ℓ over the grain pairs' forces of the last evaluation, ℓ the
    /// minimum image of x_b − x_a now (the Love–Weber sum; walls left out).
    Mat3 pairStressSum(const World& world) const;
    /// The pairs with gap < margin at the world's current positions, in key
    /// order, with the last evaluation's force on b as history.reaction.
    void contacts(const World& world, double margin, std::vector<Contact>& out) const;

    /// The pairs' memory as contact store records, in key order: each pair
    /// that carries any (overlapping at the last evaluation, a last force, a
    /// spring), with its last force on b and, for the spring law, its spring
    /// as the staged solver's 3 slots (age is not kept here: 0).
    ContactStore memory() const;
    /// Makes `store` the pairs' memory: the next force pass rebuilds both
    /// lists at the world's positions and gives each pair its key's record,
    /// so a run continued from its world and memory() steps as the
    /// uninterrupted run. Throws InputError for a store of other slots.
    void restoreMemory(const ContactStore& store, const std::string& origin);

private:
    /// The pass for the law pair (N, T); `split`: over ranges of the list,
    /// one per thread (planSplit). Periodic worlds take the scalar pass only.
    template <NormalLaw N, TangentialLaw T>
    void forcePass(const World& world, double dt, double margin, bool split);
    /// Verlet list (cell grid within margin + skin) into outer_.
    void rebuildOuter(const World& world, double margin);
    /// Working list: the pairs of outer_ within margin + innerSkin, and every
    /// pair with memory, which it carries over by key.
    void rebuild(const World& world, double margin);
    /// Ranges of the list per thread, and each body's owner.
    void planSplit(const World& world, std::size_t ranges);
    /// Each body's owner, the range of its first pair (owner_), and the
    /// ranges' spills sized for the terms of the bodies they do not own.
    void assignOwners(std::size_t nb);
    /// Moves the cuts between ranges towards equal measured times.
    void rebalance();
    /// The last evaluation's elastic energy and overlap statistics:
    /// sumPairDiagnostics(pairDiagnostics()), made once per step, when asked.
    const Diagnostics& diagnostics() const;

    MdSettings settings_;
    void (*blockKernel_)(const md_block::BlockContext&, std::size_t, std::size_t, md_block::BlockResult*) = nullptr;
    md_block::DriftResult (*driftKernel_)(const md_block::DriftContext&, std::size_t) = nullptr;  ///< kick–drift of the same width
    int blockLanes_ = 0;
    int blockPairs_ = 0;  ///< pairs per kernel block (lanes × interleave)
    const char* blockIsa_ = "none";
    double skin_ = 0.0, innerSkin_ = 0.0, builtMargin_ = -1.0;
    bool moved_ = true;  ///< some body moved more than innerSkin/2 since the working list's build (set by the integrate pass)
    long builds_ = 0, innerBuilds_ = 0;
    CellGridDetector grid_;
    std::vector<CellGridDetector::Pair> outer_;  ///< the Verlet list (within margin + skin at its build), in key order
    std::vector<Vec3> outerAt_;                  ///< positions at the Verlet list's build
    std::vector<CellGridDetector::Pair> pairs_;  ///< the working list, in key order
    std::vector<Vec3> spring_;                   ///< tangential spring per pair (spring law only; 0 when apart)
    std::vector<Vec3> force_;                    ///< force on b per pair at the last evaluation (0 when apart)
    bool sumsFinite_ = true;                     ///< the last pass found every body's force and torque finite
    std::vector<std::uint8_t> touched_;          ///< 1 where the pair overlapped at the last evaluation
    std::vector<double> overlap_;                ///< its overlap then (where touched_)
    std::vector<Vec3> builtAt_;
    World::CellState outerCell_, builtCell_;     ///< the periodic cell at each list's build (deforming cells)
    std::vector<double> wallTable_;              ///< the kernel's wall rows (BlockContext::walls), made at each list build
    std::vector<double> invMass_;                ///< 1/m per body (0 for fixed walls), read at each list build
    /// The split pass (several threads): chunk bounds of each thread's range,
    /// and each body's owner, the range of its first pair, which sums its
    /// terms in place; later ranges spill theirs (added after the pass).
    std::vector<std::size_t> split_;
    std::size_t splitRanges_ = 0, splitPairs_ = 0;
    long splitBuild_ = -1;
    std::vector<double> rangeTime_;     ///< seconds per range since the last rebalance()
    std::vector<double> lastRangeSeconds_;  ///< seconds per range of the last split pass (empty: not split)
    std::vector<double> cutFractions_;  ///< the balanced cuts as fractions of the list (kept across rebuilds)
    long timedPasses_ = 0;
    std::vector<std::uint32_t> owner_;
    /// A term of a per-body sum left by a range for a body it does not own
    /// (the force and torque to add, signs and radius applied).
    struct SpillTerm {
        Vec3 force, torque;
        std::int32_t body;
    };
    std::vector<std::vector<SpillTerm>> spill_;  ///< per range, sized for its most terms (assignOwners)
    std::vector<std::size_t> spilled_;           ///< terms spilled per range by the last pass
    /// Pairs by body, for the owners, rebuilt with the list: where
    /// body i is b (byB_[bStart_[i] .. bStart_[i+1]]) and, the list being
    /// sorted by a, the range where it is a.
    std::vector<std::int32_t> aStart_, bStart_, byB_;
    std::vector<Vec3> bodyForce_, bodyTorque_;
    bool forcesClear_ = false;  ///< bodyForce_ and bodyTorque_ are all zero (cleared by the last kick–drift)
    std::vector<double> chunkWork_;  ///< work of each chunk of kChunk pairs in the last force pass
    double workIn_ = 0.0;
    bool trackWork_ = false;
    mutable Diagnostics diagnostics_;
    mutable bool diagnosticsDone_ = true;  ///< diagnostics_ is the last evaluation's (none yet: zeros)
};

/// The diagnostics of a list of pairs' parts in key order (every rank's,
/// for a distributed run): partial sums over chunks of a fixed size, then
/// over the chunks, with the same bits for any thread count.
MdPairEngine::Diagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms);

}  // namespace moreau
