#pragma once
/// Soft-sphere molecular dynamics on the shared geometry: the normal laws of
/// the force-schemes paper (eqs. 2, 6, 8, 9, 10), tangential Coulomb,
/// viscous, Coulomb-limited viscous, Cundall–Strack spring, Walton–Braun/
/// Mindlin spring and saw-tooth laws (eqs. 13–22), Kuhn's refined 3D
/// algorithm and Peña's geometric spring (md/force_laws.hpp,
/// docs/md-force-laws.md), and velocity Verlet. The law pair is chosen once
/// per step and the per-contact loop is compiled for it (no branch on the
/// law per contact).
///
/// The step is the CD step's pipeline with a different solve stage:
/// detect → match → computeForces → integrate. Velocity Verlet is written in
/// its leapfrog form so that detection stays first: the world holds the
/// half-step velocities v_{n−1/2}; forces at x_n use them for damping (as
/// LAMMPS's gran styles do), then v_{n+1/2} = v_{n−1/2} + Δt F_n/m and
/// x_{n+1} = x_n + Δt v_{n+1/2} — the same positions as velocity Verlet.
/// That is md.integrator = cd, the default and fast path.
///
/// Every other scheme of model/integrator_table.hpp is stepped by its
/// family's object (src/md/integrators/; docs/md-integrators.md), which
/// calls the same force stage (src/md/force_stage.hpp) at its own stages:
/// the world's x, v, w are the state at the step start; each force
/// evaluation sets the world to the stage's positions and velocities,
/// refreshes the geometry of the step's contact list there, and evaluates
/// the laws from the step-start contact history (src/md/integrators/stages.hpp).
///
/// The force stage runs in one of two schedules (MdForceStage): over the
/// contact list that the step's detect and match made (every law, every
/// integrator), or, after usePairList(), over a persistent pair list that
/// holds each pair's memory (md/pair_list.hpp; the fused pipeline, for the
/// central-difference scheme and the laws whose memory is at most a spring:
/// pairListAdmits()), where MD finds its own contacts and detect and match
/// have nothing to do. Both give the same bits.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <bit>
#include <functional>
#include <memory>
#include <vector>

#include "moreau/core/step_context.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/md/force_laws.hpp"
#include "moreau/md/pair_list.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

class ByteReader;
class ByteWriter;
class MdForceStage;
class MdIntegrator;
class SchemeStages;

class MdSolver {
public:
    explicit MdSolver(const MdSettings& settings);
    ~MdSolver();
    /// A copy steps on as the original would (Simulation is a value).
    MdSolver(const MdSolver& other);
    MdSolver& operator=(const MdSolver& other);
    MdSolver(MdSolver&&) noexcept;
    MdSolver& operator=(MdSolver&&) noexcept;

    /// Whether `settings` run in the pair schedule (integrator cd, the laws
    /// whose rows are `fused`, no rolling law, μ_s = μ_d). When not, `why`
    /// (if given) says which setting needs the contact list.
    static bool pairListAdmits(const MdSettings& settings, std::string* why = nullptr);
    /// From now on the force stage runs over a pair list of its own
    /// (MdPairList with these skins; `margin`: the detection margin), and
    /// forces() and integrate() ignore their contacts and slots. Throws
    /// InputError when the settings are not admitted.
    void usePairList(double skin, double innerSkin, double margin);
    /// The pair list (null: the contact list schedule).
    const MdPairList* pairList() const { return pairs_ ? &*pairs_ : nullptr; }
    /// The same, to schedule its working list's builds (MPI ranks build
    /// theirs at the same steps: DistributedSimulation::check).
    MdPairList* pairList() { return pairs_ ? &*pairs_ : nullptr; }
    /// Pair schedule: makes `store` the pairs' memory (MdPairList::restoreMemory);
    /// until the next step the diagnostics are zeros.
    void restorePairMemory(const ContactStore& store, const std::string& origin);
    /// Pair schedule: the lanes of its lane kernel (md.simd,
    /// MdForceStage::setPairLanes) and the ISA that steps `world` ("none":
    /// the scalar pass).
    int pairLanes() const;
    const char* pairIsa(const World& world) const;
    /// md.simd = auto still timing its candidate kernels (pairLanes() is
    /// the one in place; the choice is made after a few passes).
    bool pairLanesTuning() const;
    /// Pair schedule: whether the steps sum the work delivered to the
    /// contacts (off unless asked for: a running sum must see every step,
    /// and no output of a run reads it; the contact list schedule always
    /// sums it). Turning it on starts the sum at zero.
    void trackWork(bool on);
    /// Pair schedule: the touching pairs' parts of elasticEnergy() and
    /// pairOverlapStats() in key order, and their sums (made from the pairs'
    /// memory when first asked for after a step: steps whose diagnostics
    /// nobody reads cost nothing).
    std::vector<PairDiagnostic> pairDiagnostics() const;
    const OverlapStats& pairOverlapStats() const { return diagnostics().overlaps; }

    /// One step. `contacts` hold this step's geometry and `slots` their
    /// committed memory (slotStride() doubles each, carried from last step
    /// by matchContactMemory; zeros for a new contact). On return
    /// history.reaction holds the force on body b of each contact and
    /// `slots` the memory the step committed.
    void step(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx);
    /// The step's solve stage. Integrator cd: the forces at the current
    /// state (positions x_n, velocities v_{n−1/2}), the contact memory
    /// committed and each contact's force on b in history.reaction; nothing
    /// moves. Throws DivergenceError when a force is not finite. Other
    /// schemes evaluate the forces at their own stages, inside integrate():
    /// here they do nothing. `atThisPose`: shapes that may hold the world's
    /// clumps' or polygons' pose already (the detector's, read if current).
    void forces(const World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx,
                const ShapePoses* atThisPose = nullptr);
    /// The step's integrate stage: cd: kick and drift with the forces of
    /// forces(); other schemes: their whole step (their family object).
    void integrate(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx);

    /// Integrator cd, between forces() and integrate(): makes `f` body i's
    /// summed contact force (a distributed run's wall, summed over ranks).
    void overrideContactForce(std::size_t i, const Vec3& f);
    const Vec3& contactForce(std::size_t i) const;
    /// Doubles of memory per contact the laws declare (ContactSlots::stride),
    /// and where each law's part lies.
    std::size_t slotStride() const { return slotLayout().stride; }
    const LawSlots& slotLayout() const;

    /// Elastic energy stored in the contacts at the step's force evaluation
    /// (cd: at x_n, before the positions advance; other schemes: at the
    /// evaluation whose springs start the step, see SchemeStages): Σ ½ k_n ξ² + ½ k_t |s|².
    double elasticEnergy() const;
    /// Seconds the scheme's stages spent in force evaluations so far (every
    /// scheme but cd, whose forces are the solve stage): StepProfile::integrateForces.
    double stageForceSeconds() const;

    const MdSettings& settings() const { return settings_; }

    /// Turns Kuhn's refinements (md.kuhn_*) on or off between steps; the
    /// contact memory is kept. The rigid-rotation experiment rotates one
    /// prepared packing with different switches.
    void setKuhnSwitches(bool onset, bool slipOnset, bool slipRotation, bool projection, bool twirl);

    /// Work delivered to the contacts since the solver started (trapezoidal
    /// in each step: −½ (F_prev + F) · ΔU, ΔU the relative displacement of
    /// the contact points; Kuhn's law uses its own tangential increments).
    /// Pair schedule: since trackWork(true); NaN when the work is not tracked.
    double contactWork() const;
    /// Energy the contacts have dissipated so far: contactWork() minus what
    /// they store now (damping, friction, plastic set, springs of ended contacts).
    double dissipatedWork() const { return contactWork() - elasticEnergy(); }
    /// Kuhn's law: the sums of its tangential work increments over all steps
    /// and contacts (Fig. 1, lines 45, 52 and 53); zero for the other laws.
    struct TangentialWork {
        double total = 0.0, elastic = 0.0, dissipated = 0.0;
    };
    const TangentialWork& kuhnWork() const;
    /// Per contact of `slots` (the memory the last step committed, same
    /// order as its contacts): Kuhn's dissipated tangential work accumulated
    /// over the contact's life; empty for the other laws.
    std::vector<double> kuhnContactDissipation(const ContactSlots& slots) const;
    /// Forget multi-step history, Gear derivatives and a pending implicit kick:
    /// the next step starts the scheme afresh from the world as it is.
    void reset();
    /// What a step carries besides the world and the contact memory: the
    /// multi-step history, Gear's derivatives, a pending implicit kick, the
    /// contact-change signature, the energy and work sums. A solver that
    /// loads what another saved steps as that one would (checkpoints).
    void saveState(ByteWriter& out) const;
    /// Throws InputError (through `in`) when the bytes are not a saved state
    /// of a world of `bodies` bodies.
    void loadState(ByteReader& in, std::size_t bodies);

    /// Per-body 6-vector: translation (x, v, a, ...) then rotation (θ, ω, α, ...).
    using Vec6 = Eigen::Matrix<double, 6, 1>;

    /// The scheme's state apart from its per-body fields (saveState's
    /// multi-step history, Verlet's last displacement, Gear's derivatives):
    /// what a distributed run gives every part at a rebuild, each body's
    /// entries travelling with the body.
    struct SchemeCarry {
        long history = 0;
        double pendingKick = 0.0;
        bool haveSignature = false;
        std::uint64_t signature = 0;
        std::uint32_t fields = 0;  ///< bit j: per-body field j is held (schemeFields() order)
        bool past = false;         ///< the multi-step history has its 4 slots
        std::size_t perBody() const { return static_cast<std::size_t>(std::popcount(fields)); }
        /// Names only fields the state has: the 4 + 4 multi-step slots where
        /// `past`, then pastDX and Gear's four (SchemeState::fields()).
        bool fits() const { return (fields >> (past ? 13u : 5u)) == 0; }
    };
    SchemeCarry schemeCarry() const;
    /// Body i's entries of the held fields (carry.perBody() of them) into `out`.
    void bodyScheme(std::size_t i, Vec6* out) const;
    /// Takes `carry` for a world of `bodies` bodies whose entries `entry`
    /// writes (carry.perBody() per body).
    void adoptScheme(const SchemeCarry& carry, std::size_t bodies, const std::function<void(std::size_t, Vec6*)>& entry);
    /// A distributed run's part in the contact-change test of the
    /// multi-step schemes (SchemeStages::step): whether this process counts a
    /// contact (each contact of the whole world on one process), its key in
    /// the whole world, and the sum of the signature and the "any" of the
    /// kink flag over the processes. Empty: a serial run.
    struct ContactChanges {
        std::function<bool(const Contact&)> counts;
        std::function<ContactKey(const Contact&)> key;
        std::function<void(std::uint64_t&, bool&)> reduce;
    };
    void setContactChanges(ContactChanges changes);
    /// A distributed run's part in the derivatives and fixed points of the
    /// schemes (Taylor, Gear, Khakimov, the implicit kick): make the ghosts'
    /// entries of a per-body field their owners' (before a derivative reads
    /// it), whether a body's entries count here, and the largest of two
    /// values over the processes. Empty: a serial run.
    struct FieldRanks {
        std::function<void(std::vector<Vec6>&)> ghosts;
        std::function<bool(std::size_t)> counts;
        std::function<void(double&, double&)> max;
    };
    void setFieldRanks(FieldRanks ranks);

    /// Called each time a scheme other than cd has put a stage's state into
    /// the world, before the forces there are evaluated (and at the step's
    /// end state), with the world and the stage's displacements since the
    /// step start (translation, rotation angle per body): a distributed run
    /// updates its ghost grains in both (sim/distributed.hpp). Empty: none.
    void setStageHook(std::function<void(World&, std::vector<Vec6>&)> hook);
    /// Called after each evaluation of a scheme other than cd has summed the
    /// contacts' forces per body, with the stage's contacts, their forces on
    /// b and the per-body sums, which it may change: a distributed run sums
    /// the mobile walls' over its ranks. Empty: none.
    using ForceHook = std::function<void(const std::vector<Contact>&, const std::vector<Vec3>&, std::vector<Vec3>&)>;
    void setForceHook(ForceHook hook);

private:
    /// The pair schedule's elastic energy and overlap statistics of the last
    /// evaluation: sumPairDiagnostics(pairDiagnostics()), made once per step.
    const PairDiagnostics& diagnostics() const;
    /// Throws std::logic_error unless `slots` holds this solver's layout for `contacts`.
    void checkSlots(const std::vector<Contact>& contacts, const ContactSlots& slots) const;

    MdSettings settings_;
    std::unique_ptr<MdForceStage> forces_;       ///< the force stage (src/md/force_stage.hpp)
    std::unique_ptr<SchemeStages> stages_;       ///< the stages of every scheme but cd (src/md/integrators/)
    std::unique_ptr<MdIntegrator> integrator_;  ///< md.integrator's family object
    bool centralDifference_ = true;              ///< cd: forces() evaluates, integrate() kicks and drifts
    std::optional<MdPairList> pairs_;            ///< the pair schedule's list (usePairList)
    double margin_ = 0.0;                        ///< the pair list's detection margin
    bool trackWork_ = false;                     ///< the pair schedule sums the work
    mutable PairDiagnostics diagnostics_;
    mutable bool diagnosticsDone_ = true;        ///< diagnostics_ is the last evaluation's (none yet: zeros)
};

}  // namespace moreau
