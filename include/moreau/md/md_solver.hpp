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
/// Every other scheme of model/integrator_table.hpp runs through stepScheme
/// (src/md/integrators.cpp; docs/md-integrators.md): the world's x, v, w are
/// the state at the step start; each force evaluation sets the world to the
/// stage's positions and velocities, refreshes the geometry of the step's
/// contact list there, and evaluates the laws from the step-start contact
/// history. The tangential spring of a stage is the committed spring plus the
/// tangential relative displacement of the contact point since the step start
/// (so it is integrated by the scheme itself); history is committed once, at
/// the end of the step. Multi-step schemes keep their own history here and
/// start with RK4 steps; reset() forgets it (call it after editing the world).
#include <cstdint>
#include <bit>
#include <functional>
#include <vector>

#include "moreau/core/step_context.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/md/force_laws.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

class ByteReader;
class ByteWriter;

class MdSolver {
public:
    explicit MdSolver(const MdSettings& settings);

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
    /// here they do nothing.
    void forces(const World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx);
    /// The step's integrate stage: cd: kick and drift with the forces of
    /// forces(); other schemes: their whole step (stepScheme).
    void integrate(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx);

    /// Integrator cd, between forces() and integrate(): makes `f` body i's
    /// summed contact force (a distributed run's wall, summed over ranks).
    void overrideContactForce(std::size_t i, const Vec3& f) { force_[i] = f; }
    const Vec3& contactForce(std::size_t i) const { return force_[i]; }
    /// Doubles of memory per contact the laws declare (ContactSlots::stride),
    /// and where each law's part lies.
    std::size_t slotStride() const { return layout_.stride; }
    const LawSlots& slotLayout() const { return layout_; }

    /// Elastic energy stored in the contacts at the step's force evaluation
    /// (cd: at x_n, before the positions advance; other schemes: at the
    /// evaluation whose springs start the step, see stepScheme): Σ ½ k_n ξ² + ½ k_t |s|².
    double elasticEnergy() const { return elastic_; }

    const MdSettings& settings() const { return settings_; }

    /// Turns Kuhn's refinements (md.kuhn_*) on or off between steps; the
    /// contact memory is kept. The rigid-rotation experiment rotates one
    /// prepared packing with different switches.
    void setKuhnSwitches(bool onset, bool slipOnset, bool slipRotation, bool projection, bool twirl) {
        settings_.kuhnOnset = onset;
        settings_.kuhnSlipOnset = slipOnset;
        settings_.kuhnSlipRotation = slipRotation;
        settings_.kuhnProjection = projection;
        settings_.kuhnTwirl = twirl;
    }

    /// Work delivered to the contacts since the solver started (trapezoidal
    /// in each step: −½ (F_prev + F) · ΔU, ΔU the relative displacement of
    /// the contact points; Kuhn's law uses its own tangential increments).
    double contactWork() const { return workIn_; }
    /// Energy the contacts have dissipated so far: contactWork() minus what
    /// they store now (damping, friction, plastic set, springs of ended contacts).
    double dissipatedWork() const { return workIn_ - elastic_; }
    /// Kuhn's law: the sums of its tangential work increments over all steps
    /// and contacts (Fig. 1, lines 45, 52 and 53); zero for the other laws.
    struct TangentialWork {
        double total = 0.0, elastic = 0.0, dissipated = 0.0;
    };
    const TangentialWork& kuhnWork() const { return lawWork_; }
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
    };
    SchemeCarry schemeCarry() const;
    /// Body i's entries of the held fields (carry.perBody() of them) into `out`.
    void bodyScheme(std::size_t i, Vec6* out) const;
    /// Takes `carry` for a world of `bodies` bodies whose entries `entry`
    /// writes (carry.perBody() per body).
    void adoptScheme(const SchemeCarry& carry, std::size_t bodies, const std::function<void(std::size_t, Vec6*)>& entry);
    /// A distributed run's part in the contact-change test of the
    /// multi-step schemes (stepScheme): whether this process counts a
    /// contact (each contact of the whole world on one process), its key in
    /// the whole world, and the sum of the signature and the "any" of the
    /// kink flag over the processes. Empty: a serial run.
    struct ContactChanges {
        std::function<bool(const Contact&)> counts;
        std::function<ContactKey(const Contact&)> key;
        std::function<void(std::uint64_t&, bool&)> reduce;
    };
    void setContactChanges(ContactChanges changes) { changes_ = std::move(changes); }
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
    void setFieldRanks(FieldRanks ranks) { fieldRanks_ = std::move(ranks); }

    /// Called each time a scheme other than cd has put a stage's state into
    /// the world, before the forces there are evaluated (and at the step's
    /// end state), with the world and the stage's displacements since the
    /// step start (translation, rotation angle per body): a distributed run
    /// updates its ghost grains in both (sim/distributed.hpp). Empty: none.
    void setStageHook(std::function<void(World&, std::vector<Vec6>&)> hook) { stageHook_ = std::move(hook); }
    /// Called after each evaluation of a scheme other than cd has summed the
    /// contacts' forces per body, with the stage's contacts, their forces on
    /// b and the per-body sums, which it may change: a distributed run sums
    /// the mobile walls' over its ranks. Empty: none.
    using ForceHook = std::function<void(const std::vector<Contact>&, const std::vector<Vec3>&, std::vector<Vec3>&)>;
    void setForceHook(ForceHook hook) { forceHook_ = std::move(hook); }

private:
    /// What a stage evaluation of a multi-stage scheme advances the memory
    /// by, per contact, instead of V_t dt: the tangential movement since the
    /// step start, Kuhn's twirl angle; and whether the stage is the step start.
    struct StageIncrements {
        const Vec3* increment;
        const double* twirl;
        bool atStepStart;
    };
    /// The forces of every contact at the world's state from its memory
    /// `committed` (slotStride() doubles per contact), advanced over dt or by
    /// a stage's increments; the updated memory goes to next_.
    void computeForces(const World& world, const std::vector<Contact>& contacts, const double* committed, double dt,
                       const StageIncrements* stage = nullptr);
    template <NormalLaw N, TangentialLaw T, bool Stage>
    void forceLoop(const World& world, const std::vector<Contact>& contacts, const double* committed, double dt,
                   const StageIncrements* stage);
    /// Makes this evaluation's contact memory the committed one (into
    /// `slots`; the work sums) and stores the forces in history.reaction.
    void commitContacts(std::vector<Contact>& contacts, ContactSlots& slots);
    /// Throws std::logic_error unless `slots` holds this solver's layout for `contacts`.
    void checkSlots(const std::vector<Contact>& contacts, const ContactSlots& slots) const;
    /// The per-body sums of the contacts' forces and torques (force_, torque_).
    void gather(const World& world, const std::vector<Contact>& contacts);
    void gatherForces(const World& world, const std::vector<Contact>& contacts);

    // --- every scheme but cd (src/md/integrators.cpp) -----------------------
    void stepScheme(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx);
    /// One classical RK4 step from (0, V0): the RK scheme and the start-up of multi-step schemes.
    void rungeKutta(World& world, const std::vector<Vec6>& V0, std::vector<Vec6>& A0, double t, double dt,
                    std::vector<Vec6>& X1, std::vector<Vec6>& V1);
    /// z solving (1 − c J) z = y with J = da/dr at the current stage (fixed point).
    void solvePositionJacobian(const World& world, double c, const std::vector<Vec6>& y, std::vector<Vec6>& z);
    /// Puts a state of the step into the world: positions x0 + X (X the
    /// displacement since the step start), velocities and spins V. Returns
    /// the displacements to evaluate with: X, or with a stage hook X with
    /// the ghosts' displacements from their owners (a copy).
    const std::vector<Vec6>& placeState(World& world, const std::vector<Vec6>& X, const std::vector<Vec6>& V);
    /// Accelerations A of every body with displacement X since the step start
    /// and velocities V, at time t; `project` makes this evaluation the one
    /// whose Coulomb-limited springs become the step's spring base.
    void evaluate(World& world, const std::vector<Vec6>& X, const std::vector<Vec6>& V, double t,
                  std::vector<Vec6>& A, bool project);
    /// out = M⁻¹ Σ_contacts δF for relative contact displacement rates from dU
    /// (stiffness part) and dV (damping part), linearised at the last
    /// evaluation (src/md/md_solver.cpp, next to the laws).
    void forceDerivative(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                         const std::vector<Vec6>* dV, std::vector<Vec6>& out) const;
    /// Whether contact k's normal law, at the world's state and with its
    /// committed normal memory `memory` (null: none), gives a pulling force,
    /// which md.clip_attractive sets to zero.
    bool normalForcePulls(const World& world, const Contact& k, const double* memory) const;
    template <NormalLaw N, TangentialLaw T>
    void forceDerivativeLoop(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                             const std::vector<Vec6>* dV, std::vector<Vec3>& dF) const;
    /// Tangential relative displacement of each contact point for body displacements X.
    void contactDisplacement(const World& world, const std::vector<Vec6>& X, std::vector<Vec3>& out) const;
    /// v = vPre + c Δt a(x, v), linear dashpot solved by fixed-point on δ (A gets a(x, v)).
    void implicitKick(World& world, const std::vector<Vec6>& X, std::vector<Vec6>& V, double c, double dt,
                      double t, std::vector<Vec6>& A);
    long stepNumber_ = 0;  ///< for messages
    void commitScheme(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const std::vector<Vec6>& X,
                      const std::vector<Vec6>& V, double dt);

    MdSettings settings_;
    std::function<void(World&, std::vector<Eigen::Matrix<double, 6, 1>>&)> stageHook_;
    ForceHook forceHook_;
    ContactChanges changes_;
    FieldRanks fieldRanks_;
    /// A fixed point's convergence test (implicit kick, Khakimov): body i's
    /// change into the largest change and entry so far (a distributed run's
    /// own bodies only); done once the largest change over every process's
    /// bodies is within 1e-15 of the largest entry.
    void trackChange(std::size_t i, const Vec6& next, const Vec6& previous, double& change, double& size) const;
    bool fixedPointDone(double change, double size) const;
    mutable std::vector<Vec6> syncU_, syncV_;  ///< forceDerivative's inputs with the ghosts' entries synced
    /// The per-body fields of the scheme's state, held or not (SchemeCarry::fields).
    std::vector<std::vector<Vec6>*> schemeFields();
    std::vector<const std::vector<Vec6>*> schemeFields() const;
    std::vector<Eigen::Matrix<double, 6, 1>> placedX_;  ///< placeState's X with the hook's changes
    LawSlots layout_;            ///< where each law's memory lies in a contact's slots
    std::vector<double> next_;   ///< the memory an evaluation leaves, slotStride() per contact
    std::vector<double> chunkWork_;             ///< work delivered to the contacts in the step, per chunk of contacts
    std::vector<Vec3> lawWorkStep_;             ///< laws that count their own work (Kuhn), per contact: (ΔW^t, rev, irrev)
    double workIn_ = 0.0;
    TangentialWork lawWork_;
    std::vector<Vec3> contactForce_;         ///< force on b per contact
    std::vector<Vec3> contactTorque_;        ///< r n × F_t per contact (torques are −r_a, −r_b times it)
    RollingMoment rollingMoment_ = nullptr;  ///< the rolling law's kernel (null: none)
    std::vector<Vec3> contactCouple_;        ///< the rolling moment on a per contact (b: its opposite)
    std::vector<double> chunkElastic_;          ///< elastic energy per chunk of contacts
    std::vector<Vec3> force_, torque_;       ///< per body
    std::vector<std::int32_t> aStart_, bStart_, byB_;  ///< contacts by body, in key order
    double elastic_ = 0.0;

    // State of the general schemes.
    bool checked_ = false;
    std::vector<Vec3> x0_;                    ///< positions at the step start (unwrapped during the step)
    std::vector<Contact> stage_;              ///< the step's contacts, geometry at the current stage
    std::vector<Vec3> n0_;                    ///< their normals at the step start
    /// The memory a stage evaluates from (slotStride() per contact): the
    /// committed memory at the step start, whose springs the evaluations
    /// with `project` replace (evaluate()); and a stage's copy of it.
    std::vector<double> base_, stageSlots_;
    std::vector<Vec3> disp_;
    /// History mode (laws with memory beyond the spring, ForceLawRow::
    /// historyStages: walton-braun, saw-tooth, kuhn, pena; a sliding flag; or
    /// md.spring_increment = velocity): each evaluation applies the law to
    /// the step-start memory (base_) with the stage's increment since the
    /// step start (stageIncrement_, stageTwirl_), and the memory of one
    /// evaluation at the step's end state is committed.
    bool historyMode_ = false;
    std::vector<Vec3> stageIncrement_;
    std::vector<double> stageTwirl_;
    std::vector<Quat> q0_;                    ///< orientations at the step start (Peña's reference)
    double t0_ = 0.0, stepDt_ = 0.0;
    /// History mode: stage increments for displacements X at elapsed time tau.
    void stageIncrements(const World& world, const std::vector<Vec6>& X, double tau);
    /// History mode: the laws at the current world state from the step-start memory.
    void historyForces(World& world, const std::vector<Vec6>& X, double tau);
    long history_ = 0;                        ///< steps of multi-step history available
    std::vector<std::vector<Vec6>> pastV_, pastA_;  ///< [k]: values k+1 steps back
    std::vector<Vec6> pastDX_;                ///< displacement of the last step (Verlet, D12)
    std::vector<Vec6> gearA_, gearB_, gearC_, gearD_;  ///< Gear's Nordsieck derivatives
    double pendingKick_ = 0.0;                ///< c of v_t = v_pre + c Δt a_t still owed (contact part)
    double elasticBase_ = 0.0;                ///< elastic energy at that evaluation
    bool haveSignature_ = false;              ///< touchingSignature_ is from the last step
    std::uint64_t touchingSignature_ = 0;     ///< count and key sum of the touching contacts
    std::vector<Vec6> scratch_[13];
};

}  // namespace moreau
