#pragma once
/// A running scene: the shared pipeline detect → match → solve → observe.
/// CD and MD differ only in the solve stage (DESIGN.md).
#include <filesystem>
#include <functional>
#include <span>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/cd/solver.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/io/output.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/model/scene.hpp"

namespace moreau {

class ByteReader;
class ByteWriter;
struct WorldPart;

class Simulation {
public:
    /// Takes the scene and runs it with the method it names (simulation.method).
    explicit Simulation(Scene scene);

    /// One time step. Throws DivergenceError when velocities become
    /// non-finite; the world is then left as it was before the step.
    const StepRecord& step() {
        advance();
        return record();
    }
    /// One time step whose observables (energies, overlaps, contacts) are
    /// made only when record() is next called: a run that writes every
    /// n-th step does not pay for them at the others. Returns the step's CD
    /// iterations and residual (MD: none).
    CdStepStats advance();

    /// The stages of one step, in order (advance() runs them all; with
    /// md.substeps = S it runs them S times, each over Δt/S, and the world's
    /// clock then counts one step). Each may be called alone, e.g. to
    /// prescribe a state between match() and solve(), or to read the forces
    /// of a state without moving it (solve() without integrate()).
    ///
    /// detect: the candidate contacts at the current positions (Verlet list
    /// and narrow phase; gap < simulation.margin).
    void detect();
    /// match: each candidate takes last step's memory of its key (CD
    /// reaction, MD spring and law memory); new contacts start clean.
    void match();
    /// solve: CD: the sweeps; the new velocities (eq. 2) into the world and
    /// the reactions into the contacts; positions untouched. MD: the forces
    /// at the current state into the contacts (integrator cd; other schemes
    /// evaluate their stages inside integrate()). The fused MD pipeline does
    /// detect and match here, in its pair pass. Throws DivergenceError,
    /// leaving the world as it was, when a value becomes non-finite.
    void solve();
    /// integrate: CD: positions from the new velocities (eq. 1); MD: kick
    /// and drift (cd) or the integrator's whole step. Advances the clock.
    void integrate();
    // A stage called out of this order throws std::logic_error (detect may
    // be called at any time: it starts a step afresh).
    /// Δt of the steps from now on (simulation.dt; MD: split into md.substeps).
    void setTimeStep(double dt) { scene_.simulation.dt = dt; }
    /// The periodic cell's stress control from now on (CellServo; none:
    /// CellServo{}); the strain rates of the axes it leaves are the world's.
    /// Throws InputError (naming `what`) where the cell cannot take it: axes
    /// that are not periodic, a shear without x and y periodic, MD with a
    /// scheme other than cd, rates or stresses not finite, a gain <= 0.
    /// The scene's values (periodic.stress_axes, stress, stress_gain,
    /// max_strain_rate, stress_time) are set to it: a checkpoint written
    /// from now on continues with it.
    void setCellServo(const CellServo& servo, const std::string& what = "setCellServo");
    /// The cell's strain rates and Lees–Edwards shear rate from now on
    /// (World::strainRate, shearRate; validated as setCellServo). The grains
    /// keep their velocities: the new flow enters from the faces. The
    /// scene's periodic.strain_rate and shear_rate say them too.
    void setCellRates(const Vec3& strainRate, double shearRate, const std::string& what = "setCellRates");
    /// CD: N_I, the sweeps of each step from now on under the fixed
    /// criterion (cd.iterations, in the scene's values too). Throws
    /// InputError naming `what` for MD or n < 1.
    void setCdIterations(int n, const std::string& what = "setCdIterations");
    /// The protocol's stage from the next row of series.csv on
    /// (output.stage, in the scene's values too). Throws InputError naming
    /// `what` for a name isStageName refuses, or a run whose output.stage
    /// was empty at the start (its series.csv has no stage column).
    void setStage(const std::string& name, const std::string& what = "setStage");
    /// Called by advance() between solve() and integrate() (none: nothing):
    /// a distributed run sums the mobile walls' forces over its ranks here.
    void setAfterSolve(std::function<void()> hook) { afterSolve_ = std::move(hook); }
    /// Called by advance() before each MD substep but the first (none:
    /// nothing): a distributed run updates its ghosts here. Its seconds count
    /// in no stage of profile().
    void setBetweenSubsteps(std::function<void()> hook) { betweenSubsteps_ = std::move(hook); }
    /// MD with the integrator cd, between solve() and integrate(): makes `f`
    /// the summed contact force on body `b` that integrate() kicks with.
    void overrideContactForce(BodyId b, const Vec3& f);
    /// MD with the integrator cd, between solve() and integrate(): the
    /// summed contact force on body `b` that integrate() would kick with.
    Vec3 contactForce(BodyId b) const;
    /// What applyControls() reads for the wall servos instead of wallLoads()
    /// (none: wallLoads()): a distributed run sums the loads over its ranks.
    void setWallLoads(std::function<std::vector<Vec3>()> loads) { wallLoads_ = std::move(loads); }
    /// What applyControls() reads for the cell's stress servo instead of
    /// cellStress() (none: cellStress()).
    void setCellStress(std::function<Mat3()> stress) { cellStress_ = std::move(stress); }
    /// The seed of the steps from now on (simulation.seed: the sweep orders).
    void setSeed(std::uint64_t seed) { scene_.simulation.seed = seed; }
    /// Whether the next stage is detect(): between two whole steps, where
    /// the world may be edited (positions, velocities, forces).
    bool betweenSteps() const { return next_ == Stage::Detect; }
    /// The CD iterations and residual of the last solve() (MD: zeros).
    const CdStepStats& solveStats() const { return stats_; }
    /// Seconds in each stage of the steps advance() took, and in the
    /// records made of them (summary.json's phase_seconds).
    const StepProfile& profile() const { return profile_; }
    /// Continues the seconds of `p` (a distributed run's part made afresh at a rebuild).
    void continueProfile(const StepProfile& p) { profile_ = p; }

    World& world() { return scene_.world; }
    const World& world() const { return scene_.world; }
    const Scene& scene() const { return scene_; }
    /// This step's contacts (gap < margin) with their last force as
    /// history.reaction. The fused MD pipeline computes them on demand at the
    /// current positions (see MdPairList::contacts).
    const std::vector<Contact>& contacts() const;
    /// The same into `out`, without keeping the fused pipeline's copy:
    /// for a caller that changes them (MPI ranks' rows) and would otherwise
    /// hold them twice.
    void contactsInto(std::vector<Contact>& out) const;
    CdSolver& cd() { return cd_; }
    /// Every contact's memory after the last step (key, last force, age and
    /// the laws' slots), sorted by key: what restoreContacts() takes back
    /// (the fused MD pipeline: its pairs' memory, MdPairList::memory()).
    ContactStore contactStore() const;
    /// contactStore() into `store`, its buffers reused.
    void contactStore(ContactStore& store) const;
    /// Makes `store` the memory the next step's match carries (the world is
    /// the caller's to set): a run continued from a world and its contact
    /// store steps as the uninterrupted run. Throws InputError when the
    /// store's slots are not the scene's laws' layout.
    void restoreContacts(const ContactStore& store);
    /// What the next step reads besides the scene and its world: the
    /// contact store and the MD scheme's state (multi-step history, Gear's
    /// derivatives; MdSolver::saveState). A Simulation of the same scene and
    /// world that loads it steps with the saved one's bits (checkpoints,
    /// sim/checkpoint.hpp). loadState throws InputError through `in`.
    void saveState(ByteWriter& out) const;
    void loadState(ByteReader& in);
    /// The MD solver (the method MD).
    MdSolver& md() { return md_; }
    const MdSolver& md() const { return md_; }
    /// Whether MD runs in the fused pipeline (md.pipeline): its force stage
    /// over a pair list of its own (MdSolver::usePairList).
    bool fused() const { return md_.pairList() != nullptr; }
    /// The contact detection of the staged pipelines (its list builds and pairs).
    const VerletListDetector& detector() const { return detector_; }
    /// The last step's record (observed when first asked for after advance()).
    const StepRecord& record() const;

    /// The force the grains exerted at the last evaluation (CD: the last
    /// step's reactions) on each wall and the grains glued to it, indexed by
    /// wall (body − numGrains): what a servo reads (WallServo).
    std::vector<Vec3> wallLoads() const;
    /// The per-body sums of the last evaluation's contact forces (CD: the
    /// last step's reactions), f to b and −f to a in key order, before the
    /// glued grains' part goes to their walls: wallLoads() from it.
    std::vector<Vec3> contactForces() const;
    /// f(a, b, force on b) for each contact of the last evaluation (CD: the
    /// last step's reactions; the fused MD pipeline: its touching pairs, no
    /// narrow phase again), in key order.
    template <class F>
    void forEachContactForce(F&& f) const {
        if (const MdPairList* pairs = md_.pairList()) return pairs->forEachTouchingPair(f);
        for (const Contact& c : contacts_) f(c.a, c.b, c.history.reaction);
    }
    /// The grains' stress over the periodic cell from the last evaluation's
    /// contact forces (Love–Weber) plus the kinetic part about the mean
    /// flow, compression positive: what the cell's stress servo reads
    /// (CellServo). Grain–wall contacts are left out.
    Mat3 cellStress() const;
    /// The controls due before a step, which advance() applies first: each
    /// servo wall's normal velocity from wallLoads(), then each glued
    /// grain's velocity from its wall's. Call it before detect() when
    /// stepping stage by stage.
    void applyControls();

    /// Diagnostics of the current state (no step): energies, overlaps, contacts.
    StepRecord observe() const;
    /// record() with the granular measurements filled in (stress, pressure,
    /// packing fraction, coordination, wall forces; analysis::measure): a
    /// pass over this step's contacts (the fused MD pipeline makes them
    /// first), so the run asks for it only where it writes a row.
    StepRecord measuredRecord() const;

private:
    /// The context of the stage now: Δt of one (sub)step, the world's step, the seed.
    StepContext stageContext() const;
    enum class Stage { Detect, Match, Solve, Integrate };
    /// Throws std::logic_error unless `stage` is the one due.
    void expectStage(Stage stage, const char* name);
    Stage next_ = Stage::Detect;  ///< the stage due next (detect is always allowed)

    Scene scene_;
    std::function<void()> afterSolve_, betweenSubsteps_;
    std::function<std::vector<Vec3>()> wallLoads_;
    std::function<Mat3()> cellStress_;
    CdStepStats stats_;
    VerletListDetector detector_;
    /// This step's contacts, and last step's as far as matching needs them:
    /// one Contact array, not two (see ContactMemory).
    mutable std::vector<Contact> contacts_;
    mutable bool contactsStale_ = false;  ///< fused MD: contacts_ not yet computed for this step
    std::vector<ContactMemory> previous_;
    CdSolver cd_;
    MdSolver md_;
    /// Positions of the glued grains and of the walls before integrate():
    /// afterwards each glued grain is moved by its wall's displacement.
    std::vector<Vec3> gluedFrom_, wallsFrom_;
    /// The laws' memory of contacts_ (MD staged), and of last step's
    /// contacts while the match carries it over.
    ContactSlots slots_, previousSlots_;
    mutable StepRecord record_;
    mutable bool recordStale_ = true;  ///< record_ not yet observed for the last step (or the start)
    CdStepStats advanced_;             ///< the last advance()'s sweeps, which record_ reports
    mutable StepProfile profile_;
};

/// cellStress() from the contacts' part Σ f ⊗ branch: plus Σ m u uᵀ over
/// the grains (masses `mass`, velocities about the mean flow `flow`, in
/// grain order) about their mean, over the cell's volume.
Mat3 kineticStress(Mat3 contactSum, std::span<const double> mass, std::span<const Vec3> flow, const World& world);
/// The scene's settings with an empty world (a copy that costs nothing per grain).
Scene sceneWithoutWorld(const Scene& scene);
/// A record's start: the world's step, time and energies of motion, and the overlaps `o`.
StepRecord worldRecord(const World& w, const OverlapStats& o);
/// Fills `r`'s granular measurements (stress, pressure, packing fraction,
/// coordination, fabric, wall loads; analysis::measure) from the world and
/// its contacts, over `output.stress_region` where set; over the parts of a
/// world cut over MPI ranks with `part` (WorldPart, analysis/observables.hpp).
void measureInto(StepRecord& r, const World& world, const std::vector<Contact>& contacts, const OutputSettings& output,
                 const WorldPart* part = nullptr);

/// A scene around a world built in code, for tests and experiments: the
/// method and Δt given, the CD and MD settings given (defaults otherwise),
/// detection margin `margin`, Verlet skins as a scene file's defaults (0.2 and
/// 0.05 of the smallest radius), seed `seed` (md.pipeline as given: auto takes
/// the fused pipeline where it applies). `origin` names it in messages.
Scene sceneFromWorld(World world, Method method, double dt, const CdSettings& cd = {}, const MdSettings& md = {},
                     double margin = 0.0, std::uint64_t seed = 1, std::string origin = "<scene built in code>");

}  // namespace moreau
