#include "moreau/sim/run.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "moreau/analysis/observables.hpp"
#include "moreau/io/fclib.hpp"
#include "moreau/cd/natural_map.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/out_dir.hpp"
#include "moreau/io/output.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/md/force_laws.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/distributed.hpp"
#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/guards.hpp"
#include "moreau/sim/simulation.hpp"
#include "run_outputs.hpp"

namespace moreau {

namespace {

// --- signals -------------------------------------------------------------------

volatile std::sig_atomic_t gSignal = 0;

/// The first stop signal is the one reported: a SIGTERM that follows a
/// Ctrl-C (a launcher's or batch system's) does not rename the stop.
extern "C" void onStopSignal(int signal) {
    if (gSignal == 0) gSignal = signal;
}

/// SIGINT and SIGTERM ask the run to stop after the step under way; the
/// handler is taken off once it fired (SA_RESETHAND), so a second Ctrl-C
/// ends the process at once. The old handlers come back at the end.
class StopSignals {
public:
    StopSignals() {
        gSignal = 0;
        struct sigaction sa {};
        sa.sa_handler = onStopSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGINT, &sa, &oldInt_);
        sigaction(SIGTERM, &sa, &oldTerm_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &oldInt_, nullptr);
        sigaction(SIGTERM, &oldTerm_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction oldInt_ {}, oldTerm_ {};
};

}  // namespace

// --- a serial run, step by step ------------------------------------------------

/// What a serial run holds between its steps (SteppedRun): the folder, the
/// simulation, its outputs and sums, the guards and their last good step.
struct SteppedRun::State {
    OutDirLock lock;
    std::optional<Checkpoint> from;  ///< the checkpoint a resumed run continues (RunOutputs reads it)
    std::unique_ptr<Simulation> sim;
    RunOptions options;
    RunTotals totals;
    bool exact = true;
    std::optional<RunOutputs> out;
    std::optional<Guard> guard;
    std::string sceneText;
    std::string lastGood;  ///< the checkpoint bytes of the last step the guards passed
    long lastGoodStep = -1;
    LocalProblemCapture capture;  ///< the steps an FCLIB dump writes
    bool finished = false;

    const Scene& scene() const { return sim->scene(); }

    void checkpoint(CheckpointKind kind) {
        out->checkpoint(totals, [&](const RunTotals& at) { return checkpointBytes(*sim, at, kind); });
    }
    nlohmann::json summaryOf(const char* status) {
        nlohmann::json s = out->summary(status, sim->world(), totals, sim->record().contacts);
        if (scene().simulation.method == Method::MD) {
            s["md_pipeline"] = sim->fused() ? "fused" : "staged";
            s["md_simd"] = sim->fused() ? sim->md().pairIsa(sim->world()) : "none";
        } else {
            s["cd_simd"] = sim->world().hasShapes() ? sim->cd().rowIsa() : "none";
        }
        s["phase_seconds"] = phaseSeconds(sim->profile(), scene().simulation.method == Method::CD);
        return s;
    }
    void keepGood() {
        totals.wallSeconds = out->wallSeconds();
        lastGood = checkpointBytes(*sim, totals, CheckpointKind::Diverged, &sceneText);
        lastGoodStep = sim->world().step;
    }
    /// The checkpoint of the last good step and summary.json, then DivergenceError.
    [[noreturn]] void diverged(const std::string& why) {
        finished = true;
        if (lastGood.empty()) {
            checkpoint(CheckpointKind::Diverged);
            lastGoodStep = sim->world().step;
        } else {
            out->writeCheckpoint(lastGood);
        }
        nlohmann::json summary = summaryOf("diverged");
        summary["divergence"] = why;
        summary["last_good_step"] = lastGoodStep;
        out->writeSummary(summary);
        out->log("diverged: " + why);
        const std::filesystem::path& dir = options.outDir;
        throw DivergenceError(why + "; the last good step (" + std::to_string(lastGoodStep) + ") is in " +
                              (dir / "checkpoint").string() + ": resume it with a smaller step, e.g. " +
                              "moreau run --resume " + dir.string() + " --set simulation.dt=...");
    }
};

SteppedRun::SteppedRun(std::unique_ptr<State> state) : s_(std::move(state)) {
    State& r = *s_;
    const Scene& scene = r.scene();
    const World& start = r.sim->world();
    const bool resumed = r.from.has_value();
    r.out.emplace(scene, start, r.options, resumed ? &*r.from : nullptr, r.exact,
                  scene.cd.measureError && scene.simulation.method == Method::CD,
                  std::vector<std::string>{format("moreau %s: %s %s, %s, %zu grains, %zu walls, steps %ld to %ld, %d threads",
                                                  MOREAU_VERSION, resumed ? "resuming" : "running", scene.origin.c_str(),
                                                  methodName(scene).c_str(), start.numGrains, start.numWalls(),
                                                  start.step, scene.simulation.steps, omp_get_max_threads())});
    // The guards (GuardSettings) and the last step they passed, kept as
    // the checkpoint a divergence writes.
    r.guard.emplace(*r.sim, r.totals);
    r.sceneText = canonicalSceneText(scene);
    if (r.guard->active()) r.keepGood();
    if (!resumed) {
        r.out->row(start, r.sim->measuredRecord());
        if (r.out->cadence().vtkEvery > 0) r.out->snapshot(start, r.sim->contacts(), 0);
    }
}

SteppedRun::~SteppedRun() {
    if (s_ && !s_->finished) try {
            finish(s_->sim->world().step >= steps() ? "completed" : "closed");
        } catch (const std::exception&) {  // a destructor reports nothing: what was written stands
        }
}

std::unique_ptr<SteppedRun> SteppedRun::start(Scene scene, const RunOptions& options) {
    checkMdStep(scene);
    checkStart(scene);
    auto state = std::make_unique<State>();
    state->sim = std::make_unique<Simulation>(std::move(scene));  // its errors (a scene it cannot run) come before any output
    state->lock = holdOutDir(options.outDir, options.folderOption);
    prepareOutDir(options.outDir, true);
    state->options = options;
    return std::unique_ptr<SteppedRun>(new SteppedRun(std::move(state)));
}

Simulation& SteppedRun::simulation() { return *s_->sim; }
const Simulation& SteppedRun::simulation() const { return *s_->sim; }
long SteppedRun::steps() const { return s_->scene().simulation.steps; }
bool SteppedRun::finished() const { return s_->finished; }
const std::filesystem::path& SteppedRun::folder() const { return s_->options.outDir; }

void SteppedRun::step() {
    State& r = *s_;
    if (r.finished) throw InputError(r.options.folderOption + " '" + r.options.outDir.string() + "': the run is closed");
    Simulation& sim = *r.sim;
    RunOutputs& out = *r.out;
    const RunCadence& cadence = out.cadence();
    const long steps = cadence.steps;
    const long s = sim.world().step + 1;
    std::string failure;
    try {
        const long fclibEvery = r.scene().output.fclibEvery;
        const bool dumpProblem = fclibEvery > 0 && s % fclibEvery == 0;
        sim.cd().setStepObserver(dumpProblem ? &r.capture : nullptr);
        const CdStepStats st = sim.advance();  // observed below only where written
        if (dumpProblem) writeFclib(r.capture.problem, fclibPath(r.options.outDir, s), &r.capture.reactions);
        countStep(r.totals, st, r.scene().cd);
        if (cadence.row(s)) out.row(sim.world(), sim.measuredRecord());
        if (cadence.snapshot(s)) out.snapshot(sim.world(), sim.contacts(), s);
        if (cadence.log(s)) out.logStep(s, sim.record());
        if (r.guard->active()) {
            const bool full = s % r.guard->every() == 0 || s == steps;
            const std::string why = r.guard->checkStep(sim, full);
            if (!why.empty()) failure = format("step %ld: ", s) + why;
            else if (full) r.keepGood();
        }
        if (failure.empty() && cadence.checkpoint(s)) r.checkpoint(CheckpointKind::Periodic);
    } catch (const InputError& e) {
        // An output that could not be written (a full disk): what was
        // written stands, and summary.json says where it ended, if it can.
        r.finished = true;
        nlohmann::json summary = r.summaryOf("failed");
        summary["error"] = e.what();
        try {
            out.writeSummary(summary);
        } catch (const InputError&) {
        }
        throw;
    } catch (const DivergenceError& e) {
        // A value turned non-finite; the world is the step's before it
        // (Simulation::advance), but the guards' last step is the better
        // way back, where they are on.
        failure = e.what();
    }
    if (!failure.empty()) r.diverged(failure);
}

void SteppedRun::checkpoint() {
    State& r = *s_;
    if (r.finished) throw InputError(r.options.folderOption + " '" + r.options.outDir.string() + "': the run is closed");
    r.checkpoint(CheckpointKind::Periodic);
}

void SteppedRun::restartGuards() {
    State& r = *s_;
    r.totals.energyStart = std::numeric_limits<double>::quiet_NaN();  // Guard makes the reference anew
    r.guard.emplace(*r.sim, r.totals);
    if (r.guard->active()) r.keepGood();
}

RunOutcome SteppedRun::finish(const char* status, const char* signal) {
    State& r = *s_;
    RunOutcome outcome;
    if (r.finished) return outcome;
    r.finished = true;
    const bool stopped = signal != nullptr;
    if (stopped) {
        r.checkpoint(CheckpointKind::Stopped);
        outcome.exitStatus = 128 + (std::string(signal) == "SIGINT" ? SIGINT : SIGTERM);
    } else if (std::string(status) == "closed") {
        r.checkpoint(CheckpointKind::Stopped);  // ended before its steps: a checkpoint to continue from
    }
    r.out->flush();
    outcome.summary = r.summaryOf(status);
    if (stopped) outcome.summary["signal"] = signal;
    r.out->writeSummary(outcome.summary);
    const long done = r.sim->world().step;
    outcome.report = stopped ? r.out->stopped(signal, done, "") : r.out->completed(done, outcome.summary);
    r.lock.release();
    return outcome;
}

namespace {

// --- the loop --------------------------------------------------------------------

/// Steps `run` to simulation.steps (stopped early by SIGINT or SIGTERM,
/// with a checkpoint).
RunOutcome runLoop(SteppedRun& run) {
    StopSignals signals;
    const long steps = run.steps();
    for (long s = run.simulation().world().step + 1; s <= steps; ++s) {
        run.step();
        if (gSignal != 0 && s < steps) return run.finish("stopped", gSignal == SIGINT ? "SIGINT" : "SIGTERM");
    }
    return run.finish("completed");
}

// --- on MPI ranks (docs/distributed.md) ---------------------------------------

/// summary.json's phase_seconds on ranks and the slowest rank's
/// (collective): each rank's part's stages (phaseSeconds), its steps'
/// exchange, rebuild and wait, and `gather`, the seconds between its steps;
/// per phase the mean over the ranks, and the largest.
std::pair<nlohmann::json, nlohmann::json> rankPhases(const DistributedSimulation& run, bool cd, double gather) {
    const DistributedTimes& t = run.times();
    nlohmann::json mean = phaseSeconds(run.part().profile(), cd), max;
    mean.update(nlohmann::json{{"exchange", t.ghosts},
                               {"rebuild", t.rebuild},
                               {"wait", t.wait},
                               {"restore", t.restore},
                               {"gather", gather}});
    std::vector<double> most;
    std::vector<std::uint64_t> nanoseconds;  // comm sums integers
    for (const double x : mean) {
        most.push_back(x);
        nanoseconds.push_back(static_cast<std::uint64_t>(std::llround(x * 1e9)));
    }
    comm::maxOverRanks(most);
    comm::sumOverRanks(nanoseconds);
    std::size_t k = 0;
    for (auto it = mean.begin(); it != mean.end(); ++it, ++k) {
        max[it.key()] = most[k];
        *it = 1e-9 * static_cast<double>(nanoseconds[k]) / comm::ranks();
    }
    return {mean, max};
}

/// A checkpoint in parts as the ranks' distributed input: each rank reads
/// every part for the grains' positions (the bricks), then keeps its own
/// grains, their contacts' memory and scheme entries; no rank builds the
/// whole world. `scene`: the run's settings around the checkpoint's walls.
SceneSource partsSource(const Checkpoint& c, Scene scene) {
    struct Held {
        Checkpoint c;
        Scene scene;
        ContactStore store;
        std::vector<MdSolver::Vec6> entries;
    };
    auto held = std::make_shared<Held>();
    held->c.path = c.path;
    held->c.world = c.world;
    held->c.parts = c.parts;
    held->scene = std::move(scene);
    SceneSource source;
    source.grains = static_cast<std::size_t>(c.parts->grains);
    // Own shapes: the main file's world holds no polygon shape (pickCheckpointGrains).
    source.ownShapes = c.world.polygonShapes.empty() && sceneText(held->scene, "grains.shape") == "polygon";
    source.each = [held](const std::function<void(std::size_t, const Vec3&, double)>& f) {
        eachCheckpointPart(held->c, held->c.world,
                           [&](const World& part, const std::vector<std::uint64_t>& ids, const ContactStore&,
                               const std::vector<MdSolver::Vec6>&) {
                               for (std::size_t k = 0; k < ids.size(); ++k)
                                   f(static_cast<std::size_t>(ids[k]), part.x[k], part.radius[k]);
                           });
    };
    source.build = [held](const std::vector<std::uint64_t>& ids) {
        Scene s = sceneWithoutWorld(held->scene);
        if (ids.empty()) {  // the settings and walls (decompose, or a rank with no grain): no pass over the parts
            s.world = held->c.world;
            held->store = ContactStore{};
            held->entries = held->c.parts->wallScheme;
            return s;
        }
        CheckpointPick pick = pickCheckpointGrains(held->c, &ids);
        // Its servos name walls after its own grains.
        for (WallServo& servo : s.servos)
            servo.wall = static_cast<BodyId>(ids.size() + (static_cast<std::size_t>(servo.wall) - held->c.world.numGrains));
        s.world = std::move(pick.world);
        held->store = std::move(pick.store);
        held->entries = std::move(pick.entries);
        return s;
    };
    source.memory = [held](const Scene& part, ContactStore& store, std::optional<MdSolver>& scheme) {
        store = std::move(held->store);
        const CheckpointParts& index = *held->c.parts;
        // As the whole-scene resume: a scheme's history where one goes on.
        if (!index.held || part.simulation.method != Method::MD || part.md.integrator == Integrator::CD) return;
        const std::size_t per = index.carry.perBody();
        scheme.emplace(part.md);
        scheme->adoptScheme(index.carry, part.world.numBodies(), [&](std::size_t i, MdSolver::Vec6* e) {
            std::copy_n(held->entries.data() + i * per, per, e);
        });
    };
    return source;
}

}  // namespace

namespace {

/// The ranks' collectives for a plan's checks and shares.
PlanShare planShare() {
    PlanShare share;
    share.rank = comm::rank();
    share.ranks = comm::ranks();
    share.sum = [](std::uint64_t x) { return comm::sumOverRanks(x); };
    share.gather = [](const std::string& mine) { return comm::gatherToAll(mine); };
    share.exchange = [](std::vector<std::string> out) {
        comm::Mailbox box;
        comm::exchange(std::vector<std::string_view>(out.begin(), out.end()), box);
        std::vector<std::string>().swap(out);
        std::vector<std::string> in(box.ranks());
        for (std::size_t r = 0; r < in.size(); ++r) in[r] = std::string(box.from(r));
        return in;
    };
    return share;
}

/// A scene file's plan as the ranks' distributed input: each rank builds
/// its brick's and halo's grains alone. The source owns the plan, which
/// goes once the ranks have built their parts.
SceneSource planSource(std::shared_ptr<const ScenePlan> plan) {
    SceneSource source;
    source.grains = plan->grains();
    source.ownShapes = plan->ownShapes();
    source.each = [plan](const std::function<void(std::size_t, const Vec3&, double)>& f) { plan->each(f); };
    if (!plan->spread()) {
        source.build = [plan](const std::vector<std::uint64_t>& ids) { return plan->part(ids); };
        return source;
    }
    // A spread plan (a packing file read in shares, the random packing
    // placed on rank 0): the specs sent here build the part.
    struct Taken {
        std::vector<std::uint64_t> ids;
        std::vector<GrainSpec> specs;
    };
    auto taken = std::make_shared<Taken>();
    source.pack = [plan](std::size_t i, std::string& out) { plan->pack(i, out); };
    source.share = plan->shareGrains();
    source.take = [taken](const std::vector<std::string_view>& parts) {
        ScenePlan::unpack(parts, taken->ids, taken->specs);
        return taken->ids;
    };
    source.build = [plan, taken](const std::vector<std::uint64_t>& ids) {
        if (ids.empty()) return plan->part(ids);
        if (ids != taken->ids) throw std::logic_error("distributed input: a part of grains not sent here");
        return plan->part(ids, taken->specs);
    };
    return source;
}

}  // namespace

RunOutcome runDistributed(Scene scene, const RunOptions& options, const Checkpoint* resumed, bool exact,
                          std::shared_ptr<const ScenePlan> plan) {
    if (scene.simulation.method == Method::CD && scene.cd.solver != CdSolverFamily::GaussSeidel)
        throw InputError(scene.origin + ": key 'cd.solver': " + std::string(lawName(kCdSolverNames, scene.cd.solver)) +
                         " solves a step's whole problem on one process (allowed on MPI ranks: gauss-seidel)");
    if (scene.world.hasShapes()) {
        // What cannot step clumps (a scheme, the fused pipeline, a rolling
        // law) is refused here as a serial run refuses it, by a Simulation
        // of the whole scene (one line, exit 2), not later by each rank's part.
        Simulation{Scene(scene)};
    } else if (plan && (!scene.world.clumpShapes.empty() || !scene.world.polygonShapes.empty())) {
        // Clumps or polygons from the plan: the scene of its first grain says the same.
        Simulation{plan->part({0})};
    }
    if (!resumed && !plan) {
        checkMdStep(scene);
        checkStart(scene);
    }
    const bool root = comm::rank() == 0;
    const std::filesystem::path& dir = options.outDir;
    const Scene settings = sceneWithoutWorld(scene);
    const RunCadence cadence(settings);  // the same on every rank
    const long steps = cadence.steps;
    const GuardSettings& guard = settings.guard;
    const long first = scene.world.step;  // 0, or the checkpoint's step
    RunTotals totals = resumed ? resumed->totals : RunTotals{};
    // A checkpoint's contact store, and a multi-step scheme's history (the
    // rest of its solver state adds nothing the ranks' schemes read).
    ContactStore startStore;
    std::optional<MdSolver> startScheme;
    const bool parts = resumed && resumed->parts;  // a checkpoint in parts: each rank reads its own grains
    if (resumed && !parts) {
        const std::string what = "checkpoint '" + resumed->path.string() + "'";
        ByteReader in(resumed->state, what);
        std::istringstream bytes(in.getString("contact store"));
        startStore = readContactStore(bytes, what);
        if (in.getBool("solver state") && scene.simulation.method == Method::MD &&
            scene.md.integrator != Integrator::CD) {
            startScheme.emplace(scene.md);
            startScheme->loadState(in, scene.world.numBodies());
        }
    }
    double rMin = parts ? resumed->parts->rMin : plan ? plan->rMin() : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < scene.world.numGrains; ++i) rMin = std::min(rMin, scene.world.radius[i]);
    const std::size_t grains = parts  ? resumed->parts->grains
                               : plan ? plan->grains()
                                      : scene.world.numGrains,
                      walls = scene.world.numWalls();
    // Each rank's part: from the checkpoint's parts or the scene file's
    // plan, its brick's grains alone; else from the whole scene.
    const bool bricks = parts || plan;
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<DistributedSimulation> made;
    try {  // an error seen by one rank ends them all
        made = parts  ? std::make_unique<DistributedSimulation>(partsSource(*resumed, std::move(scene)))
               : plan ? std::make_unique<DistributedSimulation>(planSource(std::move(plan)))
                      : std::make_unique<DistributedSimulation>(std::move(scene), resumed ? &startStore : nullptr,
                                                                startScheme ? &*startScheme : nullptr);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "moreau: error on rank %d: %s\n", comm::rank(), e.what());
        comm::abortAll(1);
    }
    if (!resumed && bricks) {
        // The start's checks over the ranks' parts, as a serial run makes
        // them on the whole world (collective: every rank throws alike).
        const OwnedGrains owned = made->ownership();
        checkMdStep(settings, made->part().world(), &owned);
        checkStart(settings, made->part().world(), &owned);
    }
    std::string failure;
    OutDirLock lock;  // rank 0 holds DIR for the run (a resumed run's caller holds it already)
    if (root) try {
            if (!resumed) lock = holdOutDir(dir);
            prepareOutDir(dir, !resumed);
        } catch (const InputError& e) {
            failure = e.what();
        }
    failure = comm::broadcast(failure);
    if (!failure.empty()) throw InputError(failure);

    // From here an error seen by one rank ends them all.
    try {
        DistributedSimulation& run = *made;
        std::optional<RunOutputs> out;  // rank 0
        StepRecord last;
        const bool cd = settings.simulation.method == Method::CD;
        CdStepStats stats;  // CD: the last step's sweeps (the same on every rank)
        const bool pieces = settings.output.vtkPieces;
        auto observe = [&](bool row, bool snapshot) {
            // The row from the ranks' parts (no gather: exact sums added over
            // the ranks, the serial bits): overlaps and measurements from the
            // contacts at the step's end positions; the elastic energy 0 (CD:
            // rigid grains), NaN (the staged pipeline) or the fused
            // pipeline's (its diagnostics replace the overlaps too).
            last = run.record(settings.output);
            if (cd) {
                last.elasticEnergy = 0.0;
                last.iterations = stats.iterations;
                last.residual = stats.residual;
                last.naturalError = stats.error;
            }
            if (snapshot && pieces) run.writeVtkPiece(dir / "vtk");
            // Without pieces rank 0 writes the snapshot from the whole world.
            if (snapshot && !pieces) {
                const World& w = run.gatherWorld();
                const std::vector<Contact> contacts = run.gatherContacts();
                if (root) out->snapshot(w, contacts, w.step, pieces ? comm::ranks() : 0);
            } else if (snapshot) {
                WallsView walls = run.grainsExtent();
                walls.force = last.wallForce;
                walls.torque = last.wallTorque;
                if (root) out->snapshotParallel(run.part().world(), walls, comm::ranks(), run.vtkShapes());
            }
            if (root && row) out->row(run.part().world(), last);
        };
        const World& start = run.part().world();  // its walls and cell name series.csv's columns
        if (root) {
            std::vector<std::string> intro{format(
                "moreau %s: %s %s, %s on %d ranks (bricks %s), %zu grains, %zu walls, steps %ld to %ld, %d threads "
                "per rank",
                MOREAU_VERSION, resumed ? "resuming" : "running", settings.origin.c_str(),
                !cd ? "md" : settings.cd.distributed == CdDistributed::Exact ? "cd (exact)" : "cd (domains)",
                comm::ranks(), run.grid().c_str(), grains, walls, first, steps, omp_get_max_threads())};
            if (guard.energy) intro.push_back("guard.energy is not checked on MPI ranks yet");
            out.emplace(settings, start, options, resumed, exact, false, intro, t0);
        }
        // Between the steps: the gathers for the outputs, guards and
        // checkpoints, and rank 0's records and files (phase_seconds' gather).
        double gatherSeconds = 0.0;
        auto clock = std::chrono::steady_clock::now();
        if (!resumed) observe(true, cadence.vtkEvery > 0);
        // Rank 0: the whole world, its contact store and, with a multi-step
        // scheme, its history, gathered (collective; empty on the other
        // ranks); as a serial run's Simulation, its checkpoint's bytes (any
        // rank count resumes them) or an FCLIB dump's step.
        struct Whole {
            World world;
            ContactStore store;
            bool held = false;
            MdSolver::SchemeCarry carry;
            std::vector<MdSolver::Vec6> entries;
        };
        auto gather = [&] {
            Whole s;
            s.world = run.gatherWorld();
            s.store = run.gatherStore();
            s.held = run.gatherScheme(s.carry, s.entries);
            return s;
        };
        auto serial = [&](const Whole& s) {
            Scene whole = sceneWithoutWorld(settings);
            whole.world = s.world;
            auto sim = std::make_unique<Simulation>(std::move(whole));
            sim->restoreContacts(s.store);
            const std::size_t per = s.carry.perBody();
            if (s.held)
                sim->md().adoptScheme(s.carry, s.world.numBodies(), [&](std::size_t i, MdSolver::Vec6* e) {
                    std::copy_n(s.entries.data() + i * per, per, e);
                });
            return sim;
        };
        // A checkpoint in parts (checkpoint.hpp): each rank writes its share,
        // then rank 0 the file that lists them; no rank holds the whole world.
        const std::string sceneText = canonicalSceneText(settings);
        auto writeParts = [&](const CheckpointShare& share, RunTotals& at, CheckpointKind kind) {
            const std::vector<std::string> parts =
                comm::gatherToRoot(writeCheckpointPart(dir, share, comm::rank(), comm::ranks()));
            if (root)
                out->checkpointWith(
                    at,
                    [&](const RunTotals& with) {
                        writeCheckpointMain(dir, share, grains, parts, with, kind, sceneText, settings.origin);
                    },
                    kind != CheckpointKind::Diverged);
        };
        auto checkpoint = [&](CheckpointKind kind) { writeParts(run.share(), totals, kind); };
        // As a serial run: the last step the guards passed, the checkpoint a
        // divergence writes: each rank keeps its share (no gather, and no
        // rank holds the whole world for it); rank 0 the run's sums then.
        const bool guarded = guard.maxOverlap > 0.0 || guard.maxTravel > 0.0;
        RunTotals goodTotals;
        long lastGoodStep = -1;
        auto keepGood = [&] {
            run.keepPart();
            lastGoodStep = run.keptStep();
            goodTotals = totals;
            if (root) goodTotals.wallSeconds = out->wallSeconds();
        };
        if (guarded) keepGood();

        StopSignals signals;
        std::string stopped;
        // The ranks' checks (contact.rank_check_every): between them each
        // rank tests its own grains (the travel guard too), and a check may
        // take every rank back to the last one (then the loop goes on from
        // there, with the run's sums as they were). Every step after which
        // the loop gathers (rows, snapshots, guards, log lines, checkpoints,
        // FCLIB dumps, the end) ends an interval: settle() first.
        run.setCheckEvery(settings.simulation.rankCheckEvery);
        if (guard.maxTravel > 0.0) run.watchTravel(settings.simulation.dt, guard.maxTravel);
        RunTotals keptTotals;
        run.setRollbackHooks([&] { keptTotals = totals; }, [&] { totals = keptTotals; });
        const auto gathersAfter = [&](long t) {
            const bool dump = cd && settings.output.fclibEvery > 0 &&
                              (t % settings.output.fclibEvery == 0 || (t + 1) % settings.output.fclibEvery == 0);
            return t >= steps || cadence.row(t) || cadence.snapshot(t) || cadence.log(t) || cadence.checkpoint(t) ||
                   (guarded && t % guard.every == 0) || dump;
        };
        const auto checkBy = [&](long t) {
            long u = t;
            while (!gathersAfter(u) && u - t < settings.simulation.rankCheckEvery) ++u;
            run.checkBy(u);
        };
        long s = first + 1;
        // After a rollback: on from the step after the world's.
        const auto resume = [&] { s = run.part().world().step + 1; };
        while (s <= steps) {
            lap(clock, gatherSeconds);
            run.flag(static_cast<double>(gSignal));  // any rank's, reduced with the next check
            // An FCLIB dump: rank 0 steps the gathered world as a serial run
            // would, for the step's problem (dumps are rare: a whole serial step).
            const bool dumpProblem = cd && settings.output.fclibEvery > 0 && s % settings.output.fclibEvery == 0;
            LocalProblem problem;
            std::vector<double> reactions;
            if (dumpProblem) {
                const Whole whole = gather();
                if (root) {
                    const auto replay = serial(whole);
                    LocalProblemCapture capture;
                    replay->cd().setStepObserver(&capture);
                    replay->advance();
                    problem = std::move(capture.problem);
                    reactions = std::move(capture.reactions);
                }
            }
            checkBy(s);
            stats = run.step();
            clock = std::chrono::steady_clock::now();
            if (run.rolledBack()) {
                resume();
                continue;
            }
            if (gathersAfter(s)) {
                checkBy(s + 1);
                if (run.settle()) {
                    resume();
                    continue;
                }
            }
            if (dumpProblem) {
                // The run's own impulses (exact: the serial ones, which the
                // replay has already), in the contact frames.
                const bool domains = settings.cd.distributed != CdDistributed::Exact;
                const std::vector<Contact> contacts = domains ? run.gatherContacts() : std::vector<Contact>{};
                if (root) {
                    if (domains && contacts.size() != problem.contacts())
                        throw std::logic_error("FCLIB dump on ranks: the run's contacts are not the problem's rows");
                    if (domains)
                        for (std::size_t c = 0; c < contacts.size(); ++c) {
                            Vec3 t1, t2;
                            contactFrame(contacts[c].n, t1, t2);
                            const Vec3 P = contacts[c].history.reaction * settings.simulation.dt;
                            reactions[3 * c] = P.dot(contacts[c].n);
                            reactions[3 * c + 1] = P.dot(t1);
                            reactions[3 * c + 2] = P.dot(t2);
                        }
                    writeFclib(problem, fclibPath(dir, s), &reactions);
                }
            }
            if (cd) countStep(totals, stats, settings.cd);
            std::string why;
            if (guard.maxTravel > 0.0 && run.checkedSinceStep()) {
                why = run.travelFailure(settings.simulation.dt, guard.maxTravel);
                if (!why.empty()) why = format("step %ld: ", s) + why;
            }
            const bool row = cadence.row(s), snapshot = cadence.snapshot(s), logStep = cadence.log(s);
            const bool guardStep = guard.maxOverlap > 0.0 && (s % guard.every == 0 || s == steps);
            if (why.empty() && (row || snapshot || guardStep || logStep)) {
                observe(row, snapshot);
                if (root && guardStep && !(last.maxOverlap <= guard.maxOverlap * rMin))
                    why = format("step %ld: an overlap of %.3g, %.3g of the smallest radius (guard.max_overlap = %g)",
                                 s, last.maxOverlap, last.maxOverlap / rMin, guard.maxOverlap);
                why = comm::broadcast(why);
            }
            if (!why.empty()) {
                failure = why;
                break;
            }
            if (guarded && (s % guard.every == 0 || s == steps)) keepGood();
            if (root && logStep) out->logStep(s, last);
            if (cadence.checkpoint(s)) checkpoint(CheckpointKind::Periodic);
            const double signal = run.flagMax();
            if (signal != 0.0 && s < steps) {
                checkBy(s + 1);
                if (run.settle()) {  // the flag comes again with the next check
                    resume();
                    continue;
                }
                checkpoint(CheckpointKind::Stopped);
                stopped = signal == SIGINT ? "SIGINT" : "SIGTERM";
                break;
            }
            ++s;
        }
        lap(clock, gatherSeconds);
        const auto [phases, slowest] = rankPhases(run, cd, gatherSeconds);
        // The summary's whole-world numbers from the parts (no gather).
        const WorldNumbers whole{grains, run.kineticEnergy(), run.stateHash()};
        const World& w = run.part().world();  // the walls, the clock and the clumps' shapes
        const std::uint64_t collectives = comm::collectives();  // rank 0's, the outputs' gathers included
        const DistributedTraffic traffic = run.traffic();
        RunOutcome outcome;
        outcome.exitStatus = !failure.empty() ? 3 : stopped.empty() ? 0 : 128 + (stopped == "SIGINT" ? SIGINT : SIGTERM);
        // A divergence: the last good step's shares, kept on every rank, as a
        // checkpoint in parts (its run's sums as they were then).
        if (!failure.empty() && lastGoodStep >= 0) writeParts(run.kept(), goodTotals, CheckpointKind::Diverged);
        if (!root) return outcome;
        out->flush();
        nlohmann::json summary = out->summary(
            !failure.empty() ? "diverged" : !stopped.empty() ? "stopped" : "completed", w, whole, totals, last.contacts);
        if (!stopped.empty()) summary["signal"] = stopped;
        if (!cd) summary["md_pipeline"] = run.part().fused() ? "fused" : "staged";
        summary["distributed"] = {{"grid", run.grid()},
                                  {"input", bricks ? "bricks" : "whole"},
                                  {"rebuilds", run.rebuilds()},
                                  {"rebalances", run.rebalances()},
                                  {"regrids", run.regrids()},
                                  {"messages", traffic.messages},
                                  {"bytes", traffic.bytes},
                                  {"ghosts", traffic.ghosts},
                                  {"migrations", traffic.migrations},
                                  {"checks", run.checks()},
                                  {"rollbacks", run.rollbacks()},
                                  {"collectives", collectives},
                                  {"world_gathers", run.worldGathers()},
                                  {"phase_seconds_max", slowest}};
        summary["phase_seconds"] = phases;
        if (cd) {
            const bool exact = settings.cd.distributed == CdDistributed::Exact;
            summary["distributed"]["cd"] = {{"mode", exact ? "exact" : "domains"}, {"sweeps", run.sweeps()}};
            if (exact) {
                summary["distributed"]["cd"]["passes"] = traffic.passes;
                summary["distributed"]["cd"]["rounds"] = traffic.rounds;
            } else {
                summary["distributed"]["cd"]["syncs"] = traffic.syncs;
            }
        }
        if (!failure.empty()) {
            summary["divergence"] = failure;
            if (lastGoodStep >= 0) summary["last_good_step"] = lastGoodStep;
        }
        out->writeSummary(summary);
        outcome.summary = summary;
        if (!failure.empty()) {
            out->log("diverged: " + failure);
            std::fprintf(stderr,
                         "moreau: the simulation diverged: %s; the last good step (%ld) is in %s: resume it with a "
                         "smaller step, e.g. mpirun ... moreau run --resume %s --set simulation.dt=...\n",
                         failure.c_str(), lastGoodStep, (dir / "checkpoint").c_str(), dir.c_str());
            return outcome;
        }
        outcome.report = !stopped.empty() ? out->stopped(stopped.c_str(), w.step, "mpirun ... ")
                                          : out->completed(w.step, summary);
        return outcome;
    } catch (const DivergenceError& e) {
        if (root) std::fprintf(stderr, "moreau: the simulation diverged: %s\n", e.what());
        comm::abortAll(3);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "moreau: error on rank %d: %s\n", comm::rank(), e.what());
        comm::abortAll(1);
    }
}

const std::vector<std::string>& resumableKeys() {
    // Every output.* and guard.* key but the three that change series.csv's
    // columns or what they measure (natural_error, stress_region, stage) (the file would not be one run's): a
    // test checks the list against the scene's keys.
    static const std::vector<std::string> keys = {
        "simulation.steps",    "output.every",       "output.vtk_every",    "output.vtk_pieces",
        "output.fclib_every",  "output.log_every",   "output.checkpoint_every", "guard.contact_steps",
        "guard.every",         "guard.max_overlap",  "guard.max_travel",    "guard.energy",
        "guard.start_overlap"};
    return keys;
}

RunOutcome runScene(Scene scene, const RunOptions& options) {
    if (comm::ranks() > 1) return runDistributed(std::move(scene), options);
    const auto run = SteppedRun::start(std::move(scene), options);
    return runLoop(*run);
}

RunOutcome runSceneFile(const std::string& path, const std::vector<std::string>& sets, const RunOptions& options) {
    if (comm::ranks() > 1) {
        std::shared_ptr<const ScenePlan> plan =
            planSceneFile(path, sets, planShare());
        Scene settings = plan->part({});
        return runDistributed(std::move(settings), options, nullptr, true, std::move(plan));
    }
    return runScene(loadSceneFile(path, sets), options);
}

namespace {
/// A run's folder held, its checkpoint read and the scene to continue
/// with, `sets` checked against what a resume may change (resumeRun).
struct PreparedResume {
    OutDirLock lock;
    Checkpoint checkpoint;
    Scene scene;
    bool exact = true;
};

PreparedResume prepareResume(const RunOptions& options, const std::vector<std::string>& sets,
                             const std::string& sceneFile, bool merge = true) {
    const std::filesystem::path file = options.outDir / "checkpoint";
    PreparedResume p;
    p.lock = holdResumedDir(options.outDir);  // before the checkpoint is read: no run writes it now
    p.checkpoint = readCheckpoint(file, merge);
    Checkpoint& c = p.checkpoint;
    const std::string origin = "checkpoint '" + file.string() + "'";
    const Scene before = loadSceneWithWorld(c.sceneText, origin, {}, c.world);
    Scene scene = loadSceneWithWorld(c.sceneText, origin, sets, c.world);
    scene.origin = c.origin;
    const auto& resumable = resumableKeys();
    auto listed = [&](const std::string& key) {
        return std::find(resumable.begin(), resumable.end(), key) != resumable.end();
    };
    const bool diverged = c.kind == CheckpointKind::Diverged;
    auto mayChange = [&](const std::string& key) {
        return listed(key) || (diverged && (key == "simulation.dt" || key == "md.substeps"));
    };
    auto allowed = [&] {
        std::string text;
        for (const std::string& key : resumable) text += (text.empty() ? "" : ", ") + key;
        return text + (diverged ? "; after a divergence also simulation.dt, md.substeps" : "");
    };
    for (const auto& [key, value] : scene.values) {
        const auto was = before.values.find(key);
        if (was != before.values.end() && was->second == value) continue;
        if (was == before.values.end()) {  // a new wall, force or group: another world
            // Named as the --set that adds it (the section's other keys come with their defaults).
            const std::string section = key.substr(0, key.rfind('.') + 1);
            std::string named = key;
            for (const std::string& set : sets)
                if (set.starts_with(section)) {
                    named = set.substr(0, set.find('='));
                    break;
                }
            throw InputError("--set " + named + ": cannot be added when a run resumes (the checkpoint's scene has no [" +
                             section.substr(0, section.size() - 1) + "]; allowed: " + allowed() + ")");
        }
        if (!mayChange(key))
            throw InputError("--set " + key + ": cannot change when a run resumes (it would change the trajectory or " +
                             "what series.csv's columns are; allowed: " + allowed() + ")");
        if (key == "simulation.dt" || key == "md.substeps") p.exact = false;
    }
    if (!sceneFile.empty()) {
        // The scene named beside --resume must be the checkpoint's.
        const Scene named = loadSceneSettings(sceneFile, sets);  // its keys alone: no world built
        for (const auto& [key, value] : named.values) {
            if (listed(key)) continue;
            const auto it = scene.values.find(key);
            if (it == scene.values.end() || it->second != value)
                throw InputError(origin + ": is a checkpoint of another scene than '" + sceneFile + "': key '" + key +
                                 "' is '" + (it == scene.values.end() ? std::string("(absent)") : it->second) +
                                 "' there, '" + value + "' in the scene");
        }
    }
    if (scene.simulation.steps < c.world.step)
        throw InputError("--set simulation.steps: " + std::to_string(scene.simulation.steps) +
                         " is below the checkpoint's step " + std::to_string(c.world.step) + " (" + file.string() + ")");
    // Another version of Moreau reads the same format: the run continues,
    // with a warning, as the README's upgrade path; its bits may differ from
    // the uninterrupted run's (a fix to a law changes them), which
    // summary.json records (checkpointVersionNote).
    if (c.version != MOREAU_VERSION && !options.quiet && comm::rank() == 0)
        std::fprintf(stderr, "moreau: warning: %s\n", versionWarning(c).c_str());
    // A checkpoint in parts left unmerged: the world holds the walls alone,
    // the contact distances follow the parts' smallest grain.
    if (c.parts) setContactDistances(scene, c.parts->rMin);
    p.scene = std::move(scene);
    return p;
}
}  // namespace

std::unique_ptr<SteppedRun> SteppedRun::resume(const RunOptions& options, const std::vector<std::string>& sets,
                                               const std::string& sceneFile) {
    PreparedResume p = prepareResume(options, sets, sceneFile);
    prepareOutDir(options.outDir, false);
    auto state = std::make_unique<State>();
    state->lock = std::move(p.lock);
    state->sim = std::make_unique<Simulation>(std::move(p.scene));
    const std::string origin = "checkpoint '" + (options.outDir / "checkpoint").string() + "'";
    ByteReader in(p.checkpoint.state, origin);
    state->sim->loadState(in);
    if (in.left() != 0) in.fail("bytes after the simulation state");
    if (!p.exact && !options.quiet)
        std::fprintf(stderr, "moreau: resuming a diverged run with a changed step: the result is not the bits of any "
                             "uninterrupted run\n");
    state->totals = p.checkpoint.totals;
    state->exact = p.exact;
    state->from = std::move(p.checkpoint);
    state->options = options;
    return std::unique_ptr<SteppedRun>(new SteppedRun(std::move(state)));
}

RunOutcome resumeRun(const RunOptions& options, const std::vector<std::string>& sets, const std::string& sceneFile) {
    if (comm::ranks() > 1) {
        PreparedResume p = prepareResume(options, sets, sceneFile, false);
        return runDistributed(std::move(p.scene), options, &p.checkpoint, p.exact);
    }
    const auto run = SteppedRun::resume(options, sets, sceneFile);
    return runLoop(*run);
}

}  // namespace moreau
