#pragma once
/// The integrators of md.integrator (docs/md-integrators.md), one object per
/// family (taylor, runge_kutta, verlet, adams, khakimov, gear .cpp here), and
/// SchemeStages, what every scheme but cd steps with: it puts a stage's state
/// into the world and asks the force stage (moreau/md/force_stage.hpp) for
/// the accelerations there, the laws' derivatives, implicit kicks and
/// Jacobian solves. No integrator loops over contacts.
///
/// A body's state is the 6-vector pair (X, V): X the displacement and
/// rotation vector since the step start, V the velocity and angular velocity;
/// A = dV/dt. Spheres' forces do not depend on their orientation, so the
/// rotation vector is integrated like a position and applied to the
/// quaternion once, at the end (the stage machinery: md/md_solver.hpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "moreau/core/profile.hpp"
#include "moreau/md/force_stage.hpp"
#include "moreau/model/integrator_table.hpp"

namespace moreau {

using Vec6 = MdSolver::Vec6;
using Field = std::vector<Vec6>;

/// out = Σ c_k f_k, body by body.
inline void combine(Field& out, std::initializer_list<std::pair<double, const Field*>> terms) {
    const std::size_t n = terms.begin()->second->size();
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        Vec6 s = Vec6::Zero();
        for (const auto& [c, f] : terms)
            if (c != 0.0) s += c * (*f)[i];
        out[i] = s;
    }
}

/// What a step carries besides the world and the contact memory (saved in
/// checkpoints and carried across a distributed run's rebuilds).
struct SchemeState {
    long history = 0;                      ///< steps of multi-step history available
    std::vector<Field> pastV, pastA;       ///< [k]: values k+1 steps back
    Field pastDX;                          ///< displacement of the last step (Verlet, D12)
    Field gearA, gearB, gearC, gearD;      ///< Gear's Nordsieck derivatives
    double pendingKick = 0.0;              ///< c of v_t = v_pre + c Δt a_t still owed (contact part)
    double elasticBase = 0.0;              ///< elastic energy at the evaluation that starts the step's springs
    bool haveSignature = false;            ///< touchingSignature is from the last step
    std::uint64_t touchingSignature = 0;   ///< count and key sum of the touching contacts
    long stepNumber = 0;                   ///< for messages
    /// The per-body fields, held or not (MdSolver::SchemeCarry::fields order).
    std::vector<Field*> fields();
    /// Forgets the multi-step history, Gear's derivatives and a pending kick.
    void reset();
};

/// One step of a scheme from the step start (X = 0, V0) at time t over h.
struct SchemeStep {
    World& world;
    Integrator scheme;
    const IntegratorInfo& info;
    double t, h;
    double kick;           ///< c of the implicit kick the last step owes (babab, bababab, d12, t12)
    Field& V0;             ///< the velocities at the step start (an implicit kick completes them)
    Field& A0;             ///< the accelerations at the step start, where the scheme has them
    Field& X1;             ///< out: displacement over the step
    Field& V1;             ///< out: velocities at the step's end
    const Field& zero;     ///< zeros, one per body: the step start's displacement
    double owe = 0.0;      ///< out: c of the implicit kick this step leaves owed
    bool recordHistory = true;  ///< out: (V0, A0) enter the multi-step history
};

class SchemeStages;

/// The integrators of one family.
class MdIntegrator {
public:
    virtual ~MdIntegrator() = default;
    /// md.integrator = cd: MdSolver's force stage and leapfrog kick–drift.
    virtual bool centralDifference() const { return false; }
    /// Keeps derivatives across steps (Gear): restarts where a contact changes.
    virtual bool keepsDerivatives() const { return false; }
    /// The step (every scheme but cd), calling the stages for its forces.
    virtual void advance(SchemeStages& stages, SchemeStep& step) = 0;
};

/// The family object that runs `id` (its row's IntegratorFamily).
std::unique_ptr<MdIntegrator> makeIntegrator(Integrator id);
std::unique_ptr<MdIntegrator> taylorFamily();
std::unique_ptr<MdIntegrator> rungeKuttaFamily();
std::unique_ptr<MdIntegrator> verletFamily(Integrator id);
std::unique_ptr<MdIntegrator> adamsFamily();
std::unique_ptr<MdIntegrator> khakimovFamily();
std::unique_ptr<MdIntegrator> gearFamily();

/// The stages of every scheme but cd, over the force stage.
class SchemeStages {
public:
    SchemeStages(MdForceStage& forces, bool historyMode) : forces_(&forces), historyMode_(historyMode) {}
    /// A copy of `other` that steps with `forces` (a copied MdSolver's stage).
    SchemeStages(const SchemeStages& other, MdForceStage& forces) : SchemeStages(other) { forces_ = &forces; }

    /// One whole step of `integrator` (the multi-step start-up and restarts,
    /// the owed kicks, the history, the commit of the contact memory).
    void step(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx,
              MdIntegrator& integrator);

    /// Accelerations A of every body with displacement X since the step start
    /// and velocities V, at time t; `project` makes this evaluation the one
    /// whose Coulomb-limited springs become the step's spring base.
    void evaluate(World& world, const Field& X, const Field& V, double t, Field& A, bool project);
    /// out = M⁻¹ Σ δF (MdForceStage::forceDerivative) over the step's contacts.
    void forceDerivative(const World& world, const Field* dU, const Field* dV, Field& out) const {
        auto clock = std::chrono::steady_clock::now();
        forces_->forceDerivative(world, stage_, dU, dV, out);
        lap(clock, forceSeconds);
    }
    /// Seconds in force evaluations so far (evaluate's laws and geometry,
    /// forceDerivative): StepProfile::integrateForces.
    mutable double forceSeconds = 0.0;
    /// One classical RK4 step from (0, V0): the RK scheme and the start-up of multi-step schemes.
    void rungeKutta(World& world, const Field& V0, Field& A0, double t, double dt, Field& X1, Field& V1);
    /// z solving (1 − c J) z = y with J = da/dr at the current stage (fixed point).
    void solvePositionJacobian(const World& world, double c, const Field& y, Field& z);
    /// v = vPre + c Δt a(x, v), linear dashpot solved by fixed-point on δ (A gets a(x, v)).
    void implicitKick(World& world, const Field& X, Field& V, double c, double dt, double t, Field& A);
    /// Puts a state of the step into the world and refreshes the step's
    /// contacts' geometry there (without evaluating forces).
    void placeGeometry(World& world, const Field& X, const Field& V);
    /// Scratch fields, reused from step to step.
    Field& scratch(int k) { return scratch_[k]; }

    SchemeState state;
    std::function<void(World&, Field&)> stageHook;
    MdSolver::ForceHook forceHook;
    MdSolver::ContactChanges changes;
    MdSolver::FieldRanks fieldRanks;

private:
    /// Puts a state of the step into the world: positions x0 + X, velocities
    /// and spins V. Returns the displacements to evaluate with: X, or with a
    /// stage hook X with the ghosts' displacements from their owners (a copy).
    const Field& placeState(World& world, const Field& X, const Field& V);
    /// The contacts' geometry at the placed state and the memory to evaluate
    /// from there: base_ with the springs moved by the stage's displacements X.
    void stageSprings(World& world, const Field& X, std::vector<double>& out);
    /// History mode: stage increments for displacements X at elapsed time tau.
    void stageIncrements(const World& world, const Field& X, double tau);
    /// History mode: the laws at the current world state from the step-start memory.
    void historyForces(World& world, const Field& X, double tau);
    /// Whether a contact opens, closes or starts pulling (clipped) across
    /// this step or since the last: multi-step and Gear schemes restart there.
    bool contactsChange(const World& world, const std::vector<Contact>& contacts, const ContactSlots& slots, double h);
    void commit(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const Field& X, const Field& V,
                double dt);
    /// The fixed point z_i = next(i) (implicit kick, Khakimov), D the force
    /// derivative at z as a displacement (`position`) or velocity change:
    /// done once the largest change over every process's bodies (a
    /// distributed run's own ones here) is within 1e-15 of the largest entry.
    template <class Next>
    void fixedPoint(const World& world, Field& z, bool position, Field& D, Next next);

    MdForceStage* forces_;
    bool historyMode_;
    bool checked_ = false;
    std::vector<Vec3> x0_;                ///< positions at the step start (unwrapped during the step)
    std::vector<Contact> stage_;          ///< the step's contacts, geometry at the current stage
    std::vector<Vec3> n0_;                ///< their normals at the step start
    /// The memory a stage evaluates from (stride per contact): the committed
    /// memory at the step start, whose springs the evaluations with
    /// `project` replace (evaluate()); and a stage's copy of it.
    std::vector<double> base_, stageSlots_;
    std::vector<Vec3> disp_;
    /// History mode (laws with memory beyond the spring, ForceLawRow::
    /// historyStages; a sliding flag; or md.spring_increment = velocity):
    /// each evaluation applies the law to the step-start memory (base_) with
    /// the stage's increment since the step start, and the memory of one
    /// evaluation at the step's end state is committed.
    std::vector<Vec3> stageIncrement_;
    std::vector<double> stageTwirl_;
    std::vector<Quat> q0_;                ///< orientations at the step start (Peña's reference)
    double t0_ = 0.0, stepDt_ = 0.0;
    Field placedX_;                       ///< placeState's X with the hook's changes
    Field scratch_[13];
};

}  // namespace moreau
