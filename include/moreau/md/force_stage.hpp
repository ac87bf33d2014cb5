#pragma once
/// MD's force stage (the `computeForces` of detect → match → computeForces →
/// integrate): the force laws of every contact at the world's current state,
/// from the contacts' committed memory advanced over dt (central difference)
/// or by a stage's increments since the step start (multi-stage schemes),
/// into per-contact forces, torques and rolling couples; the chunked energy
/// and work sums; the per-body gather in key order; the finiteness check;
/// and the laws' linearisation (forceDerivative) the Taylor, Gear and
/// Khakimov schemes and the implicit kicks need.
///
/// Reads: the world's positions, velocities, radii, masses and walls; the
/// contacts' geometry and last force (history.reaction); the committed memory.
/// Writes: only its own arrays, until commit() hands the new memory and the
/// forces to the contact store (the pair schedule: each pair's memory in
/// the pair list, in place). The integrators (src/md/integrators/) call it
/// and never loop over contacts themselves. The law pair is chosen once per
/// evaluation and the contact loop is compiled for it (no branch on the law
/// per contact).
///
/// Two schedules run the laws: evaluate() over the contact list that
/// detect and match made (every law, every integrator), and
/// evaluatePairs() over a persistent pair list with each pair's memory in
/// place (md/pair_list.hpp: the laws whose memory is at most a spring,
/// with the central-difference scheme; MdSolver::usePairList), which does the
/// narrow phase, the laws and the per-body sums in one pass and sends the
/// touching grain–grain pairs through a lane kernel. Both leave the per-body
/// sums in force() and torque(), in key order: the same bits.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "moreau/contact/shape_poses.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/md/pair_list.hpp"

namespace moreau {

namespace md_block {
struct BlockContext;
struct BlockResult;
struct DriftContext;
struct DriftResult;
}  // namespace md_block

class MdForceStage {
public:
    using Vec6 = MdSolver::Vec6;
    explicit MdForceStage(const MdSettings& settings, bool historyMode);

    /// A contact's lever arms from each body's centre to the contact point.
    struct ContactArms {
        Vec3 la, lb;
    };

    /// What a stage evaluation of a multi-stage scheme advances the memory
    /// by, per contact, instead of V_t dt: the tangential movement since the
    /// step start, Kuhn's twirl angle; and whether the stage is the step start.
    struct StageIncrements {
        const Vec3* increment;
        const double* twirl;
        bool atStepStart;
    };
    /// The forces of every contact at the world's state from its memory
    /// `committed` (stride() doubles per contact), advanced over dt or by a
    /// stage's increments; the updated memory is kept (memory()) until commit().
    /// A world with clumps or polygons: its shapes (ShapePoses) are updated
    /// first, for the lever arms of this evaluation and of the gather after
    /// it (a polygon's overlaps are found from them), unless `atThisPose`
    /// holds them already (ShapePoses::current: the detector's, when the
    /// evaluation follows the detection at the same pose); it must then stay
    /// unchanged until gather().
    void evaluate(const World& world, const std::vector<Contact>& contacts, const double* committed, double dt,
                  const StageIncrements* stage = nullptr, const ShapePoses* atThisPose = nullptr);
    /// The per-body sums of the last evaluation's forces and torques (and
    /// rolling couples, glued grains' forces on their walls), in key order,
    /// at the pose of that evaluation (a clump's arms are read from its balls).
    void gather(const World& world, const std::vector<Contact>& contacts);
    /// Throws DivergenceError naming the first body whose sum is not finite.
    void checkFinite(long step) const;
    /// Makes the last evaluation's memory the committed one (into `slots`),
    /// its forces the contacts' history.reaction, and counts its law work
    /// (and, with `work`, the trapezoidal work of the step).
    void commit(std::vector<Contact>& contacts, ContactSlots& slots, bool work = true);
    /// history.reaction of each contact: the last evaluation's force on b.
    void setReactions(std::vector<Contact>& contacts) const;

    /// out = M⁻¹ Σ_contacts δF for relative contact displacement rates from
    /// dU (stiffness part) and dV (damping part), linearised at the last
    /// evaluation (with `ghosts`: the ghosts' entries synced first).
    void forceDerivative(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                         const std::vector<Vec6>* dV, std::vector<Vec6>& out) const;
    void setGhosts(std::function<void(std::vector<Vec6>&)> ghosts) { ghosts_ = std::move(ghosts); }
    /// Whether contact k's normal law, at the world's state and with its
    /// committed normal memory `memory` (null: none), gives a pulling force,
    /// which md.clip_attractive sets to zero.
    bool normalForcePulls(const World& world, const Contact& k, const double* memory) const;

    /// The pair schedule: the laws over `list` (updated for the world's
    /// positions) at the world's state, each pair's memory advanced over
    /// ctx.dt in place, the per-body sums (glued grains' forces on their
    /// walls) in force() and torque(). Throws DivergenceError naming the
    /// first body whose sum is not finite. With trackWork, the step's work
    /// delivered to the pairs adds to workIn().
    void evaluatePairs(const World& world, MdPairList& list, const StepContext& ctx, double margin, bool trackWork);
    /// The lane kernel of evaluatePairs for the touching grain–grain pairs
    /// (src/md/pair_block.hpp), with the scalar pass's bits. `maxLanes`
    /// caps its width: 8 (AVX-512), 4 (AVX2), 2 (SSE2), 0 (scalar pass
    /// only); −1 (md.simd = auto): measured, the fastest per pair of the
    /// 8- and 4-lane kernels the CPU has and the scalar pass (each timed in
    /// turn over the first passes of at least kTunePairs pairs, kTuneRounds
    /// times; any choice gives the same bits).
    void setPairLanes(int maxLanes);
    static constexpr std::size_t kTunePairs = 2048;
    static constexpr int kTuneRounds = 3;
    /// md.simd = auto still timing its candidates.
    bool pairLanesTuning() const { return !tuning_.lanes.empty(); }
    /// Lanes of the kernel chosen (0: none) and its ISA ("none" when none).
    int pairLanes() const { return blockLanes_; }
    const char* pairIsa() const { return blockIsa_; }
    /// The kick–drift kernel of the same width (null: none).
    md_block::DriftResult (*driftKernel() const)(const md_block::DriftContext&, std::size_t) { return driftKernel_; }
    /// The kick–drift read and zeroed force() and torque(): evaluatePairs
    /// need not clear them.
    void sumsCleared() { sumsClear_ = true; }
    /// Each pair of `list` touching at the last evaluation: its key, the
    /// laws' elastic energy and its overlap, in key order.
    std::vector<PairDiagnostic> pairDiagnostics(const MdPairList& list) const;

    const MdSettings& settings() const { return settings_; }
    MdSettings& settings() { return settings_; }
    const LawSlots& layout() const { return layout_; }
    /// The memory the last evaluation left (layout().stride per contact).
    std::vector<double>& memory() { return next_; }
    /// Per body, after gather().
    std::vector<Vec3>& force() { return force_; }
    const std::vector<Vec3>& force() const { return force_; }
    std::vector<Vec3>& torque() { return torque_; }
    /// Per contact: the force on b of the last evaluation.
    const std::vector<Vec3>& contactForces() const { return contactForce_; }

    double elastic() const { return elastic_; }
    void setElastic(double e) { elastic_ = e; }
    double workIn() const { return workIn_; }
    void setWorkIn(double w) { workIn_ = w; }
    MdSolver::TangentialWork& lawWork() { return lawWork_; }
    const MdSolver::TangentialWork& lawWork() const { return lawWork_; }

private:
    template <NormalLaw N, TangentialLaw T>
    void forceLoop(const World& world, const std::vector<Contact>& contacts, const double* committed, double dt,
                   const StageIncrements* stage);
    /// evaluatePairs' pass for the law pair; `split`: over the list's
    /// ranges, one per thread. Returns whether every per-body sum is finite.
    template <NormalLaw N, TangentialLaw T>
    bool pairLoop(const World& world, MdPairList& list, double dt, double margin, bool split, bool trackWork);
    template <NormalLaw N, TangentialLaw T>
    void forceDerivativeLoop(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                             const std::vector<Vec6>* dV, std::vector<Vec3>& dF) const;
    void gatherForces(const World& world, const std::vector<Contact>& contacts);

    MdSettings settings_;
    LawSlots layout_;                        ///< where each law's memory lies in a contact's slots
    RollingMoment rollingMoment_ = nullptr;  ///< the rolling law's kernel (null: none)
    std::vector<double> next_;               ///< the memory an evaluation leaves, stride per contact
    std::vector<double> chunkWork_;          ///< work delivered to the contacts in the step, per chunk of contacts
    std::vector<double> chunkElastic_;       ///< elastic energy per chunk of contacts
    std::vector<Vec3> lawWorkStep_;          ///< laws that count their own work (Kuhn), per contact: (ΔW^t, rev, irrev)
    std::vector<Vec3> contactForce_;         ///< force on b per contact
    std::vector<Vec3> contactTorque_;        ///< r n × F_t per contact (torques are −r_a, −r_b times it)
    std::vector<Vec3> contactCouple_;        ///< the rolling moment on a per contact (b: its opposite)
    std::vector<Vec3> force_, torque_;       ///< per body
    ShapePoses poses_;                       ///< a world with clumps or polygons: its shapes, when evaluate() finds them itself
    const ShapePoses* shapes_ = &poses_;     ///< the shapes of the last evaluate(): poses_ or the caller's
    /// A world of polygons: each contact's overlap geometry at the last
    /// evaluate() (polygonOverlapGeometry: the arms to the overlap's
    /// centroid, the contact line's normal, the equivalent gap −A/l_c), found
    /// once per evaluation; commit() writes n and gap into the contacts.
    std::vector<PolygonOverlapGeometry> polygonGeometry_;
    /// A world with clumps: each contact's arms at the last evaluate()
    /// (leverArm from the shapes), for its force loop and the gather.
    std::vector<ContactArms> clumpArms_;
    std::vector<std::int32_t> aStart_, bStart_, byB_;  ///< contacts by body, in key order
    double elastic_ = 0.0, workIn_ = 0.0;
    MdSolver::TangentialWork lawWork_;
    std::function<void(std::vector<Vec6>&)> ghosts_;
    mutable std::vector<Vec6> syncU_, syncV_;  ///< forceDerivative's inputs with the ghosts' entries synced
    // The pair schedule's lane kernels (setPairLanes).
    void (*blockKernel_)(const md_block::BlockContext&, std::size_t, std::size_t, md_block::BlockResult*) = nullptr;
    md_block::DriftResult (*driftKernel_)(const md_block::DriftContext&, std::size_t) = nullptr;
    int blockLanes_ = 0;
    int blockPairs_ = 0;  ///< pairs per kernel block (lanes × interleave)
    const char* blockIsa_ = "none";
    /// md.simd = auto while it measures: the candidates' widths (0: the
    /// scalar pass), each one's least seconds per pair so far, and the
    /// timed passes (candidate passes % size runs next). Empty once chosen.
    struct KernelTuning {
        std::vector<int> lanes;
        std::vector<double> best;
        int passes = 0;
    } tuning_;
    void useLanes(int maxLanes);  ///< the kernel of this width cap (0: none)
    bool sumsClear_ = false;  ///< force_ and torque_ are all zero (cleared by the last kick–drift)
};

}  // namespace moreau
