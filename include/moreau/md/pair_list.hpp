#pragma once
/// The contacts of MD's pair schedule (MdForceStage::evaluatePairs, run by
/// MdSolver::usePairList): a persistent Verlet list of candidate pairs, in key order,
/// with each pair's memory beside it — its tangential spring, its last force
/// (for the work diagnostics), whether it touched and its overlap at the last
/// evaluation. For the laws that schedule takes this is a contact's whole
/// memory, so it stays next to the pair instead of being rebuilt, remembered
/// and matched by key every step (detect and match of the staged pipeline).
///
/// Two lists: the Verlet list (cell grid within margin + skin at its build)
/// and the working list filtered from it (within margin + innerSkin, and
/// every pair with memory); and the list's split into ranges per thread,
/// each body owned by the range of its first pair.
///
/// The laws per contact and the order of every per-body sum are the contact
/// list schedule's (key order), so both give the same bits for any thread
/// count (tests/md/test_pair_engine.cpp); only the energy and work sums are
/// grouped differently (last-bit differences). By design, contacts() gives
/// the geometry at the current positions (after the step) with the force of
/// the step's evaluation, where the contact list keeps the evaluation's
/// geometry; and after a DivergenceError the springs have advanced (the run
/// is over anyway: Simulation writes a checkpoint).
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/contact/contact_store.hpp"
#include "moreau/core/exact_sum.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// One touching pair's part of the pair schedule's diagnostics: its key,
/// elastic energy and overlap at the last evaluation, and whether it carried
/// force then.
struct PairDiagnostic {
    ContactKey key = 0;
    double elastic = 0.0, overlap = 0.0;
    bool loaded = false;
};

/// The pair schedule's diagnostics: the laws' elastic energy and the
/// overlaps of the pairs carrying force.
struct PairDiagnostics {
    double elastic = 0.0;
    OverlapStats overlaps;
};
/// The diagnostics of a list of pairs' parts, in any order: exact sums
/// (ExactSum), the same bits for any thread count and cut into parts
/// (MPI ranks: each adds its own, then the parts' words are added).
PairDiagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms);
struct PairDiagnosticSums {
    ExactSum elastic, overlap;
    std::uint64_t loaded = 0;
    double max = 0.0;
    void add(const PairDiagnostic& t);
    PairDiagnosticSums& operator+=(const PairDiagnosticSums& o);
    PairDiagnostics value() const;
};

class MdPairList {
public:
    /// Pairs per partial sum of energy, work and overlap, and per unit of the
    /// thread split (fixed: the same bits for any thread count).
    static constexpr std::size_t kChunk = 256;

    /// spring: the tangential law keeps a spring per pair. skin: Verlet skin
    /// (absolute length); 0 rebuilds the list every step. innerSkin: skin of
    /// the working list; 0 or >= skin: the working list is the Verlet list.
    MdPairList(bool spring, double skin, double innerSkin);

    /// Makes the working list hold every pair within `margin` (the detection
    /// margin) of touching at the world's positions and every pair with
    /// memory, rebuilding what the bodies' travel since the builds requires.
    void update(const World& world, double margin);
    /// What the kick–drift found: some body moved more than innerSkin/2
    /// since the working list's build (its positions: builtAt()).
    void setMoved(bool moved) { moved_ = moved; }
    /// Whether the next update() rebuilds the working list for travel.
    bool moved() const { return moved_; }

    const std::vector<Vec3>& builtAt() const { return builtAt_; }
    /// The travel, squared, that makes the working list stale.
    double travelLimit2() const { return 0.25 * innerSkin_ * innerSkin_; }

    /// Builds of the Verlet list (cell grid) and of the working list so far.
    long builds() const { return builds_; }
    long innerBuilds() const { return innerBuilds_; }
    std::size_t size() const { return pairs.size(); }

    /// The pairs' memory as contact store records, in key order: each pair
    /// that carries any (overlapping at the last evaluation, a last force, a
    /// spring), with its last force on b and, for the spring law, its spring
    /// as the staged solver's 3 slots (age is not kept here: 0).
    ContactStore memory() const;
    /// memory() into `store` (its buffers reused: a restore point kept again and again).
    void memoryInto(ContactStore& store) const;
    /// Makes `store` the pairs' memory: the next update() rebuilds both lists
    /// at the world's positions and gives each pair its key's record. Throws
    /// InputError for a store of other slots.
    void restoreMemory(const ContactStore& store, const std::string& origin);
    /// The pairs with gap < margin at the world's current positions, in key
    /// order, with the last evaluation's force on b as history.reaction.
    void contacts(const World& world, double margin, std::vector<Contact>& out) const;
    /// f(a, b, force on b) for each pair touching at the last evaluation, in key order.
    template <class F>
    void forEachTouchingPair(F&& f) const {
        for (std::size_t k = 0; k < pairs.size(); ++k)
            if (touched[k]) f(pairs[k].a, pairs[k].b, force[k]);
    }

    /// The split for `ranges` threads (redone when the list, the thread count
    /// or the size changed): ranges of whole chunks of about equal cost, a
    /// pair of the lane kernel (`laneKernel`: the schedule has one) costing
    /// less than one of the scalar pass.
    void prepareSplit(const World& world, std::size_t ranges, bool laneKernel);
    /// Moves the cuts between ranges towards equal measured times.
    void rebalance();

    // The list and each pair's memory, in key order: the pair schedule reads
    // and writes them (MdForceStage::evaluatePairs).
    std::vector<CellGridDetector::Pair> pairs;
    std::vector<Vec3> spring;           ///< tangential spring per pair (spring law only; 0 when apart)
    std::vector<Vec3> force;            ///< force on b per pair at the last evaluation (0 when apart)
    std::vector<std::uint8_t> touched;  ///< 1 where the pair overlapped at the last evaluation
    std::vector<double> overlap;        ///< its overlap then (where touched)
    std::vector<double> invMass;        ///< 1/m per body (0 for fixed walls), read at each list build
    /// Per wall, for the lane kernel (md_block::BlockContext::walls): a
    /// plane's normal and μ, and 1 for a plane; made at each list build.
    std::vector<double> wallTable;

    /// A term of a per-body sum left by a range for a body it does not own
    /// (the force and torque to add, signs and radius applied).
    struct SpillTerm {
        Vec3 force, torque;
        std::int32_t body;
    };
    /// The split pass (several threads): each range's chunks, each body's
    /// owner (the range of its first pair, which sums its terms in place;
    /// later ranges spill theirs, added after the pass in range order).
    struct Split {
        std::vector<std::size_t> bounds;             ///< chunk bounds of the ranges (ranges + 1)
        std::vector<std::uint32_t> owner;            ///< per body
        std::vector<std::vector<SpillTerm>> spill;   ///< per range, sized for its most terms
        std::vector<std::size_t> spilled;            ///< terms spilled per range by the last pass
        std::vector<double> rangeTime;               ///< seconds per range since the last rebalance()
        std::vector<double> lastRangeSeconds;        ///< seconds per range of the last split pass (empty: not split)
        std::size_t ranges = 0;
    } split;

private:
    void rebuildOuter(const World& world, double margin);
    void rebuild(const World& world, double margin);
    void assignOwners(std::size_t nb);

    bool spring_;
    double skin_ = 0.0, innerSkin_ = 0.0, builtMargin_ = -1.0;
    bool moved_ = true;
    long builds_ = 0, innerBuilds_ = 0;
    CellGridDetector grid_;
    std::vector<CellGridDetector::Pair> outer_;  ///< the Verlet list (within margin + skin at its build), in key order
    std::vector<Vec3> outerAt_;                  ///< positions at the Verlet list's build
    std::vector<Vec3> builtAt_;                  ///< positions at the working list's build
    World::CellState outerCell_, builtCell_;     ///< the periodic cell at each list's build (deforming cells)
    /// Pairs by body, for the owners: where body i is b (byB_[bStart_[i] ..
    /// bStart_[i+1]]) and, the list being sorted by a, the range where it is a.
    std::vector<std::int32_t> aStart_, bStart_, byB_;
    std::size_t splitPairs_ = 0;
    long splitBuild_ = -1;
    std::vector<double> cutFractions_;  ///< the balanced cuts as fractions of the list (kept across rebuilds)
    long timedPasses_ = 0;
};

}  // namespace moreau
