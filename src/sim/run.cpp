#include "moreau/sim/run.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
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

// --- the output folder ------------------------------------------------------------

/// Creates `dir` (a fresh run's) and holds it for the run (OutDirLock):
/// before anything in it is written or removed.
OutDirLock holdOutDir(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
        throw InputError("--out '" + dir.string() + "': cannot create the folder" +
                         (ec ? " (" + ec.message() + ")" : std::string(" (a file of that name exists)")));
    return OutDirLock(dir, "--out");
}

/// Holds the folder a run resumes in, if it is one (else readCheckpoint
/// says what is missing). Collective: rank 0 holds it, every rank gets its error.
OutDirLock holdResumedDir(const std::filesystem::path& dir) {
    OutDirLock lock;
    std::string failure;
    std::error_code ec;
    if (comm::rank() == 0) try {
            if (std::filesystem::is_directory(dir, ec)) lock = OutDirLock(dir, "--resume");
        } catch (const InputError& e) {
            failure = e.what();
        }
    failure = comm::broadcast(failure);
    if (!failure.empty()) throw InputError(failure);
    return lock;
}

/// Checks that a file can be made in the held `dir` (a temporary of a unique
/// name, never through a link, removed at once); a fresh run also removes
/// what an earlier run left there (its series, summary, log, checkpoint, VTK
/// snapshots and their temporaries), so that no stale file sits beside new
/// ones. Only regular files go: a link or a special file of an output's name
/// stays and is written through (docs/scenes.md), and a vtk/ that is a link
/// is not entered.
void prepareOutDir(const std::filesystem::path& dir, bool fresh) {
    std::error_code ec;
    try {
        std::filesystem::path probe;
        ::close(createUniqueTemporary(dir / ".moreau-write-test", probe));
        std::filesystem::remove(probe, ec);
    } catch (const InputError&) {
        throw InputError("--out '" + dir.string() + "': the folder is not writable");
    }
    // A link or special file of an output's name is written through, later:
    // one that cannot be (a link to nothing or to a folder, a folder) is
    // refused now, before any work.
    for (const char* name : {"series.csv", "summary.json", "log.txt", "checkpoint"}) {
        const std::filesystem::path p = dir / name;
        const auto link = std::filesystem::symlink_status(p, ec);
        if (!std::filesystem::exists(link) || std::filesystem::is_regular_file(link)) continue;
        const auto target = std::filesystem::status(p, ec);
        if (!std::filesystem::exists(target))
            throw InputError("--out '" + dir.string() + "': '" + p.string() +
                             "' is a symbolic link to nothing (no file is created through a link; remove it)");
        if (std::filesystem::is_directory(target))
            throw InputError("--out '" + dir.string() + "': '" + p.string() + "' is a folder (allowed: a file, or a "
                             "link to one, written in place)");
    }
    if (!fresh) return;
    auto regular = [&](const std::filesystem::path& p) {
        return std::filesystem::is_regular_file(std::filesystem::symlink_status(p, ec));
    };
    auto stale = [](std::string_view name, auto isOutput) {
        const std::string_view base = temporaryBase(name);
        return isOutput(name) || (!base.empty() && (isOutput(base) || base == ".moreau-write-test"));
    };
    auto runFile = [](std::string_view name) {
        return name == "series.csv" || name == "summary.json" || name == "log.txt" || name == "checkpoint";
    };
    auto removeStale = [&](const std::filesystem::path& folder, auto isOutput) {
        std::vector<std::filesystem::path> old;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
            if (stale(entry.path().filename().string(), isOutput) && regular(entry.path())) old.push_back(entry.path());
        for (const auto& p : old) std::filesystem::remove(p, ec);
    };
    removeStale(dir, runFile);
    const std::filesystem::path vtk = dir / "vtk";
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(vtk, ec))) return;
    removeStale(vtk, [](std::string_view name) {
        const bool snapshot = (name.starts_with("grains_") || name.starts_with("contacts_") ||
                               name.starts_with("walls_")) &&
                              (name.ends_with(".vtp") || name.ends_with(".pvtp"));
        return snapshot || name == "run.pvd";
    });
    if (std::filesystem::is_empty(vtk, ec)) std::filesystem::remove(vtk, ec);
}

// --- the run log -----------------------------------------------------------------

/// Lines every output.log_every steps on stderr (unless quiet) and in
/// DIR/log.txt, flushed as written: a batch job's log shows progress.
class RunLog {
public:
    RunLog(const std::filesystem::path& file, bool toStderr, bool append)
        : out_(file, append), toStderr_(toStderr) {}
    void line(const std::string& text) {
        try {  // as ever, a log line that cannot be written is lost; series.csv reports a full disk
            out_.write(text + '\n');
            out_.flush();
        } catch (const InputError&) {
        }
        if (toStderr_) std::fprintf(stderr, "%s\n", text.c_str());
    }

private:
    OutputStream out_;
    bool toStderr_;
};

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

const char* kLogHeader = "      step          time  kinetic_energy  contacts  iterations     residual   wall_s     eta_s";

std::string methodName(const Scene& scene) { return scene.simulation.method == Method::CD ? "cd" : "md"; }

/// A step's sweeps into the run's sums.
void countStep(RunTotals& totals, const CdStepStats& r, const CdSettings& cd) {
    totals.sumIterations += r.iterations;
    totals.sumResidual += r.residual;
    totals.maxIterations = std::max<std::int64_t>(totals.maxIterations, r.iterations);
    if (r.iterations >= cd.maxIterations && cd.criterion != Criterion::Fixed) ++totals.unconverged;
}

/// The log's row of step s (wall: seconds since this part of the run began).
std::string logRow(long s, const StepRecord& rec, double wallSoFar, double wall, long first, long steps) {
    const double eta = wall / static_cast<double>(s - first) * static_cast<double>(steps - s);
    return format("%10ld %13.6g %15.6g %9zu %11d %12.4g %8.1f %9.1f", s, rec.time, rec.kineticEnergy, rec.contacts,
                  rec.iterations, rec.residual, wallSoFar, eta);
}

/// summary.json's keys that serial and distributed runs share.
nlohmann::json runSummary(const char* status, const Scene& scene, const World& w, const RunTotals& totals,
                          std::size_t contacts, long first, bool resumed, double wallSeconds) {
    nlohmann::json s;
    s["status"] = status;
    s["method"] = methodName(scene);
    const long done = w.step;
    s["steps"] = scene.simulation.steps;
    s["last_step"] = done;
    if (resumed) s["resumed_from_step"] = first;
    s["wall_seconds"] = wallSeconds;
    s["particles"] = w.numGrains;
    s["walls"] = w.numWalls();
    s["mean_iterations"] = done > 0 ? totals.sumIterations / static_cast<double>(done) : 0.0;
    s["max_iterations"] = totals.maxIterations;
    s["mean_residual"] = done > 0 ? totals.sumResidual / static_cast<double>(done) : 0.0;
    s["unconverged_steps"] = totals.unconverged;
    s["final_contacts"] = contacts;
    s["final_kinetic_energy"] = kineticEnergy(w);
    s["threads"] = omp_get_max_threads();
    s["ranks"] = comm::ranks();
    s["seed"] = scene.simulation.seed;
    s["scene"] = scene.origin;
    s["state_hash"] = hex64(stateHash(w));
    s["settings"] = scene.values;
    s["version"] = MOREAU_VERSION;
    return s;
}

/// The two lines a completed run prints.
std::string completedReport(const Scene& scene, const nlohmann::json& summary, const std::filesystem::path& dir,
                            bool vtk) {
    const std::string where = comm::ranks() > 1 ? format(" on %d ranks", comm::ranks()) : std::string();
    return format("%s: %s%s, %zu grains, %ld steps in %.3g s; state_hash %s\n", scene.origin.c_str(),
                  methodName(scene).c_str(), where.c_str(), summary["particles"].get<std::size_t>(),
                  scene.simulation.steps, summary["wall_seconds"].get<double>(),
                  summary["state_hash"].get<std::string>().c_str()) +
           "outputs in " + dir.string() + "/ (summary.json, series.csv, log.txt" + (vtk ? ", vtk/run.pvd" : "") +
           (scene.output.checkpointEvery > 0 ? ", checkpoint" : "") + ")\n";
}

/// The line a resume from another version's checkpoint prints and logs.
std::string versionWarning(const Checkpoint& c) {
    std::string version = c.version.substr(0, 64);  // a file's bytes: nothing a terminal would act on
    for (char& ch : version)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    return "checkpoint '" + c.path.string() + "' was written by Moreau " + version + ", this is Moreau " +
           MOREAU_VERSION + ": the run continues from it, but its bits may differ from an uninterrupted run's";
}

/// summary.json of a run resumed from another version's checkpoint says so.
void noteCheckpointVersion(nlohmann::json& summary, const Checkpoint* from) {
    if (!from || from->version == MOREAU_VERSION) return;
    summary["checkpoint_version"] = from->version;
    summary["bit_exact_resume"] = false;
}

// --- the loop --------------------------------------------------------------------

/// OUT/fclib/step_XXXXXX.hdf5 (at least 6 digits), its folder created.
std::string fclibPath(const std::filesystem::path& dir, long step) {
    std::filesystem::create_directories(dir / "fclib");
    char name[48];
    std::snprintf(name, sizeof name, "step_%06ld.hdf5", step);
    return (dir / "fclib" / name).string();
}

/// Steps `sim` to simulation.steps with the outputs; `from` is the
/// checkpoint a resumed run continues (null for a fresh run), `exact` false
/// where the resume changed the step (summary.json: bit_exact_resume).
RunOutcome runLoop(Simulation& sim, const RunOptions& options, RunTotals totals, const Checkpoint* from,
                   bool exact = true) {
    const bool resumed = from != nullptr;
    const Scene& scene = sim.scene();
    const std::filesystem::path& dir = options.outDir;
    const long steps = scene.simulation.steps, every = scene.output.every, vtkEvery = scene.output.vtkEvery;
    const long checkpointEvery = scene.output.checkpointEvery;
    const long logEvery = scene.output.logEvery > 0 ? scene.output.logEvery : std::max(1L, (steps + 19) / 20);
    const long first = sim.world().step;  // the step the run starts from (0, or the checkpoint's)

    // A resumed run keeps the rows and snapshots up to its first step, that
    // step's only where the cadence puts one (a run that ended there wrote
    // its last step whatever the cadence; the uninterrupted run did not).
    auto keptUpTo = [&](long cadence) {
        return first == 0 || first >= steps || (cadence > 0 && first % cadence == 0) ? first : first - 1;
    };
    SeriesWriter series(dir / "series.csv", sim.world(), resumed ? keptUpTo(every) : -1,
                        scene.cd.measureError && scene.simulation.method == Method::CD);
    std::unique_ptr<VtkWriter> vtk;
    if (vtkEvery > 0) vtk = std::make_unique<VtkWriter>(dir / "vtk", resumed ? keptUpTo(vtkEvery) : -1);
    RunLog log(dir / "log.txt", !options.quiet, resumed);
    log.line(format("moreau %s: %s %s, %s, %zu grains, %zu walls, steps %ld to %ld, %d threads", MOREAU_VERSION,
                    resumed ? "resuming" : "running", scene.origin.c_str(), methodName(scene).c_str(),
                    sim.world().numGrains, sim.world().numWalls(), first, steps, omp_get_max_threads()));
    if (from && from->version != MOREAU_VERSION) log.line("warning: " + versionWarning(*from));
    log.line(kLogHeader);

    const auto t0 = std::chrono::steady_clock::now();
    const double wallBefore = totals.wallSeconds;
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    auto checkpoint = [&](CheckpointKind kind) {
        series.flush();
        totals.wallSeconds = wallBefore + elapsed();
        writeCheckpoint(dir / "checkpoint", sim, totals, kind);
    };
    auto summaryOf = [&](const char* status) {
        nlohmann::json s = runSummary(status, scene, sim.world(), totals, sim.record().contacts, first, resumed,
                                      wallBefore + elapsed());
        if (scene.simulation.method == Method::MD) {
            s["md_pipeline"] = sim.fused() ? "fused" : "staged";
            const MdPairEngine* engine = sim.pairEngine();
            s["md_simd"] = engine ? engine->blockIsa(sim.world()) : "none";
        }
        if (!exact) s["bit_exact_resume"] = false;
        s["phase_seconds"] = phaseSeconds(sim.profile(), scene.simulation.method == Method::CD);
        noteCheckpointVersion(s, from);
        return s;
    };

    // The guards (GuardSettings) and the last step they passed, kept as
    // the checkpoint a divergence writes.
    const Guard guard(sim, totals);
    std::string lastGood;
    long lastGoodStep = -1;
    const std::string sceneText = canonicalSceneText(scene);
    auto keepGood = [&] {
        totals.wallSeconds = wallBefore + elapsed();
        lastGood = checkpointBytes(sim, totals, CheckpointKind::Diverged, &sceneText);
        lastGoodStep = sim.world().step;
    };
    if (guard.active()) keepGood();
    auto diverged = [&](const std::string& why) {
        if (lastGood.empty()) {
            checkpoint(CheckpointKind::Diverged);
            lastGoodStep = sim.world().step;
        } else {
            series.flush();
            writeCheckpointBytes(dir / "checkpoint", lastGood);
        }
        nlohmann::json summary = summaryOf("diverged");
        summary["divergence"] = why;
        summary["last_good_step"] = lastGoodStep;
        writeJsonFile(dir / "summary.json", summary);
        log.line("diverged: " + why);
        throw DivergenceError(why + "; the last good step (" + std::to_string(lastGoodStep) + ") is in " +
                              (dir / "checkpoint").string() + ": resume it with a smaller step, e.g. " +
                              "moreau run --resume " + dir.string() + " --set simulation.dt=...");
    };

    StopSignals signals;
    std::string failure;
    long s = first + 1;
    try {
        if (!resumed) {
            series.write(sim.world(), sim.measuredRecord());
            if (vtk) vtk->write(sim.world(), sim.contacts(), 0, sim.world().time);
        }
        const long fclibEvery = scene.output.fclibEvery;
        LocalProblemCapture capture;  // the steps an FCLIB dump writes
        for (; s <= steps; ++s) {
            const bool dumpProblem = fclibEvery > 0 && s % fclibEvery == 0;
            sim.cd().setStepObserver(dumpProblem ? &capture : nullptr);
            const CdStepStats r = sim.advance();  // observed below only where written
            if (dumpProblem) writeFclib(capture.problem, fclibPath(dir, s), &capture.reactions);
            countStep(totals, r, scene.cd);
            if ((every > 0 && s % every == 0) || s == steps) series.write(sim.world(), sim.measuredRecord());
            if (vtk && (s % vtkEvery == 0 || s == steps)) vtk->write(sim.world(), sim.contacts(), s, sim.world().time);
            if (s % logEvery == 0 || s == steps) {
                const double wall = elapsed();
                log.line(logRow(s, sim.record(), wallBefore + wall, wall, first, steps));
            }
            if (guard.active()) {
                std::string why = guard.checkTravel(sim);
                if (why.empty() && (s % guard.every() == 0 || s == steps)) why = guard.check(sim);
                if (!why.empty()) {
                    failure = format("step %ld: ", s) + why;
                    break;
                }
                if (s % guard.every() == 0 || s == steps) keepGood();
            }
            if (checkpointEvery > 0 && (s % checkpointEvery == 0 || s == steps)) checkpoint(CheckpointKind::Periodic);
            if (gSignal != 0 && s < steps) break;
        }
    } catch (const InputError& e) {
        // An output that could not be written (a full disk): what was
        // written stands, and summary.json says where it ended, if it can.
        nlohmann::json summary = summaryOf("failed");
        summary["error"] = e.what();
        try {
            writeJsonFile(dir / "summary.json", summary);
        } catch (const InputError&) {
        }
        throw;
    } catch (const DivergenceError& e) {
        // A value turned non-finite; the world is the step's before it
        // (Simulation::advance), but the guards' last step is the better
        // way back, where they are on.
        failure = e.what();
    }
    if (!failure.empty()) diverged(failure);

    RunOutcome outcome;
    const char* status = "completed";
    if (s <= steps) {
        checkpoint(CheckpointKind::Stopped);
        status = "stopped";
        outcome.exitStatus = 128 + static_cast<int>(gSignal);
    }
    series.flush();
    outcome.summary = summaryOf(status);
    if (outcome.exitStatus != 0) outcome.summary["signal"] = gSignal == SIGINT ? "SIGINT" : "SIGTERM";
    writeJsonFile(dir / "summary.json", outcome.summary);
    const long done = sim.world().step;
    if (outcome.exitStatus != 0) {
        const std::string line = format("stopped by %s after step %ld of %ld; resume with: moreau run --resume %s",
                                        gSignal == SIGINT ? "SIGINT" : "SIGTERM", done, steps, dir.c_str());
        log.line(line);
        outcome.report = line + "\n";
    } else {
        log.line(format("completed step %ld in %.3g s", done, wallBefore + elapsed()));
        outcome.report = completedReport(scene, outcome.summary, dir, vtk != nullptr);
    }
    return outcome;
}

// --- on MPI ranks (docs/distributed.md) ---------------------------------------

/// A series row from the whole world and its contacts, as rank 0 has them
/// after the gathers: the world's columns have the serial bits; overlaps and
/// measurements come from the contacts at the step's end positions; the
/// elastic energy is NaN (the fused pipeline's diagnostics replace both:
/// DistributedSimulation::gatherDiagnostics).
StepRecord distributedRecord(const World& w, const std::vector<Contact>& contacts, const Scene& scene) {
    StepRecord r;
    r.step = w.step;
    r.time = w.time;
    r.kineticEnergy = kineticEnergy(w);
    r.rotationalEnergy = rotationalEnergy(w);
    const OverlapStats o = overlapStats(contacts);
    r.contacts = o.contacts;
    r.meanOverlap = o.mean;
    r.maxOverlap = o.max;
    r.elasticEnergy = std::numeric_limits<double>::quiet_NaN();
    measureInto(r, w, contacts, scene.output);
    return r;
}

}  // namespace

RunOutcome runDistributed(Scene scene, const RunOptions& options, const Checkpoint* resumed, bool exact) {
    if (!resumed) {
        checkMdStep(scene);
        checkStart(scene);
    }
    const bool root = comm::rank() == 0;
    const std::filesystem::path& dir = options.outDir;
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

    const Scene settings = sceneWithoutWorld(scene);
    const long steps = settings.simulation.steps, every = settings.output.every, vtkEvery = settings.output.vtkEvery;
    const long logEvery = settings.output.logEvery > 0 ? settings.output.logEvery : std::max(1L, (steps + 19) / 20);
    const long checkpointEvery = settings.output.checkpointEvery;
    const GuardSettings& guard = settings.guard;
    const long first = scene.world.step;  // 0, or the checkpoint's step
    RunTotals totals = resumed ? resumed->totals : RunTotals{};
    const double wallBefore = totals.wallSeconds;
    // A checkpoint's contact store, and a multi-step scheme's history (the
    // rest of its solver state adds nothing the ranks' schemes read).
    ContactStore startStore;
    std::optional<MdSolver> startScheme;
    if (resumed) {
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
    auto keptUpTo = [&](long cadence) {
        return !resumed ? -1 : first == 0 || first >= steps || (cadence > 0 && first % cadence == 0) ? first : first - 1;
    };
    double rMin = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < scene.world.numGrains; ++i) rMin = std::min(rMin, scene.world.radius[i]);
    const std::size_t grains = scene.world.numGrains, walls = scene.world.numWalls();
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

    // From here an error seen by one rank ends them all.
    try {
        DistributedSimulation run(std::move(scene), resumed ? &startStore : nullptr,
                                  startScheme ? &*startScheme : nullptr);
        std::optional<SeriesWriter> series;
        std::unique_ptr<VtkWriter> vtk;
        std::optional<RunLog> log;
        StepRecord last;
        const bool cd = settings.simulation.method == Method::CD;
        CdStepStats stats;  // CD: the last step's sweeps (the same on every rank)
        const bool pieces = settings.output.vtkPieces;
        auto observe = [&](bool row, bool snapshot) {
            const World& w = run.gatherWorld();
            const std::vector<Contact> contacts = run.gatherContacts();
            const auto diagnostics = run.gatherDiagnostics();
            if (snapshot && pieces) run.writeVtkPiece(dir / "vtk");
            if (!root) return;
            last = distributedRecord(w, contacts, settings);
            if (cd) {
                last.elasticEnergy = 0.0;  // rigid grains
                last.iterations = stats.iterations;
                last.residual = stats.residual;
                last.naturalError = stats.error;
            }
            if (diagnostics) {  // the fused pipeline's, as the serial record has them
                last.elasticEnergy = diagnostics->elastic;
                last.contacts = diagnostics->overlaps.contacts;
                last.meanOverlap = diagnostics->overlaps.mean;
                last.maxOverlap = diagnostics->overlaps.max;
            }
            if (row) series->write(w, last);
            if (snapshot) vtk->write(w, contacts, w.step, w.time, pieces ? comm::ranks() : 0);
        };
        const World& start = run.gatherWorld();  // the whole world's bodies name series.csv's columns
        if (root) {
            series.emplace(dir / "series.csv", start, keptUpTo(every), false);
            if (vtkEvery > 0) vtk = std::make_unique<VtkWriter>(dir / "vtk", keptUpTo(vtkEvery));
            log.emplace(dir / "log.txt", !options.quiet, resumed != nullptr);
            log->line(format("moreau %s: %s %s, %s on %d ranks (bricks %s), %zu grains, %zu walls, "
                             "steps %ld to %ld, %d threads per rank",
                             MOREAU_VERSION, resumed ? "resuming" : "running", settings.origin.c_str(),
                             !cd ? "md" : settings.cd.distributed == CdDistributed::Exact ? "cd (exact)" : "cd (domains)",
                             comm::ranks(),
                             run.grid().c_str(), grains, walls, first, steps, omp_get_max_threads()));
            if (guard.energy)
                log->line("guard.energy is not checked on MPI ranks yet");
            if (resumed && resumed->version != MOREAU_VERSION) log->line("warning: " + versionWarning(*resumed));
            log->line(kLogHeader);
        }
        if (!resumed) observe(true, vtkEvery > 0);
        // A serial run's checkpoint, made on rank 0 from the gathered world
        // and contact store: any rank count resumes it.
        // Rank 0: the checkpoint's bytes from the gathered world and contact
        // store (collective; empty on the other ranks).
        // With a multi-step scheme, its history gathered too.
        struct SchemeState {
            bool held = false;
            MdSolver::SchemeCarry carry;
            std::vector<MdSolver::Vec6> entries;
        };
        auto gatherScheme = [&] {
            SchemeState state;
            state.held = run.gatherScheme(state.carry, state.entries);
            return state;
        };
        auto stateBytes = [&](const World& w, const ContactStore& store, const SchemeState& scheme,
                              const RunTotals& at, CheckpointKind kind) {
            Scene whole = sceneWithoutWorld(settings);
            whole.world = w;
            Simulation sim(std::move(whole));
            sim.restoreContacts(store);
            if (scheme.held) {
                const std::size_t per = scheme.carry.perBody();
                sim.md().adoptScheme(scheme.carry, w.numBodies(), [&](std::size_t i, MdSolver::Vec6* e) {
                    std::copy_n(scheme.entries.data() + i * per, per, e);
                });
            }
            return checkpointBytes(sim, at, kind);
        };
        auto checkpoint = [&](CheckpointKind kind) {
            const World& w = run.gatherWorld();
            const ContactStore store = run.gatherStore();
            const SchemeState scheme = gatherScheme();
            if (!root) return;
            series->flush();
            totals.wallSeconds = wallBefore + elapsed();
            writeCheckpointBytes(dir / "checkpoint", stateBytes(w, store, scheme, totals, kind));
        };
        // As a serial run: the last step the guards passed (rank 0: its world,
        // contact store and totals), the checkpoint a divergence writes.
        const bool guarded = guard.maxOverlap > 0.0 || guard.maxTravel > 0.0;
        World goodWorld;
        ContactStore goodStore;
        SchemeState goodScheme;
        RunTotals goodTotals;
        long lastGoodStep = -1;
        auto keepGood = [&] {
            const World& w = run.gatherWorld();
            ContactStore store = run.gatherStore();
            SchemeState scheme = gatherScheme();
            lastGoodStep = run.part().world().step;
            if (!root) return;
            goodWorld = w;
            goodStore = std::move(store);
            goodScheme = std::move(scheme);
            goodTotals = totals;
            goodTotals.wallSeconds = wallBefore + elapsed();
        };
        if (guarded) keepGood();

        StopSignals signals;
        std::string stopped;
        long s = first + 1;
        for (; s <= steps; ++s) {
            run.flag(static_cast<double>(gSignal));  // any rank's, reduced with the step's rebuild test
            // An FCLIB dump: rank 0 steps the gathered world as a serial run
            // would, for the step's problem (dumps are rare: a whole serial step).
            const bool dumpProblem = cd && settings.output.fclibEvery > 0 && s % settings.output.fclibEvery == 0;
            LocalProblem problem;
            std::vector<double> reactions;
            if (dumpProblem) {
                const World& w = run.gatherWorld();
                const ContactStore store = run.gatherStore();
                if (root) {
                    Scene whole = sceneWithoutWorld(settings);
                    whole.world = w;
                    Simulation replay(std::move(whole));
                    replay.restoreContacts(store);
                    LocalProblemCapture capture;
                    replay.cd().setStepObserver(&capture);
                    replay.advance();
                    problem = std::move(capture.problem);
                    reactions = std::move(capture.reactions);
                }
            }
            stats = run.step();
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
            if (guard.maxTravel > 0.0) {
                why = run.travelFailure(settings.simulation.dt, guard.maxTravel);
                if (!why.empty()) why = format("step %ld: ", s) + why;
            }
            const bool row = (every > 0 && s % every == 0) || s == steps;
            const bool snapshot = vtkEvery > 0 && (s % vtkEvery == 0 || s == steps);  // the same on every rank
            const bool guardStep = guard.maxOverlap > 0.0 && (s % guard.every == 0 || s == steps);
            const bool logStep = s % logEvery == 0 || s == steps;
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
            if (root && logStep) {
                const double wall = elapsed();
                log->line(logRow(s, last, wallBefore + wall, wall, first, steps));
            }
            if (checkpointEvery > 0 && (s % checkpointEvery == 0 || s == steps)) checkpoint(CheckpointKind::Periodic);
            const double signal = run.flagMax();
            if (signal != 0.0 && s < steps) {
                checkpoint(CheckpointKind::Stopped);
                stopped = signal == SIGINT ? "SIGINT" : "SIGTERM";
                break;
            }
        }
        const World& w = run.gatherWorld();
        const DistributedTraffic traffic = run.traffic();
        RunOutcome outcome;
        outcome.exitStatus = !failure.empty() ? 3 : stopped.empty() ? 0 : 128 + (stopped == "SIGINT" ? SIGINT : SIGTERM);
        if (!root) return outcome;
        if (series) series->flush();
        nlohmann::json summary = runSummary(!failure.empty() ? "diverged" : !stopped.empty() ? "stopped" : "completed",
                                            settings, w, totals, last.contacts, first, resumed != nullptr,
                                            wallBefore + elapsed());
        if (!stopped.empty()) summary["signal"] = stopped;
        if (!exact) summary["bit_exact_resume"] = false;
        noteCheckpointVersion(summary, resumed);
        if (!cd) summary["md_pipeline"] = run.part().fused() ? "fused" : "staged";
        summary["distributed"] = {{"grid", run.grid()},
                                  {"rebuilds", run.rebuilds()},
                                  {"rebalances", run.rebalances()},
                                  {"regrids", run.regrids()},
                                  {"messages", traffic.messages},
                                  {"bytes", traffic.bytes},
                                  {"ghosts", traffic.ghosts},
                                  {"migrations", traffic.migrations}};
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
            if (lastGoodStep >= 0) {
                writeCheckpointBytes(dir / "checkpoint",
                                     stateBytes(goodWorld, goodStore, goodScheme, goodTotals, CheckpointKind::Diverged));
                summary["last_good_step"] = lastGoodStep;
            }
        }
        writeJsonFile(dir / "summary.json", summary);
        outcome.summary = summary;
        if (!failure.empty()) {
            log->line("diverged: " + failure);
            std::fprintf(stderr,
                         "moreau: the simulation diverged: %s; the last good step (%ld) is in %s: resume it with a "
                         "smaller step, e.g. mpirun ... moreau run --resume %s --set simulation.dt=...\n",
                         failure.c_str(), lastGoodStep, (dir / "checkpoint").c_str(), dir.c_str());
            return outcome;
        }
        if (!stopped.empty()) {
            const std::string line = format("stopped by %s after step %ld of %ld; resume with: mpirun ... moreau run "
                                            "--resume %s",
                                            stopped.c_str(), w.step, steps, dir.c_str());
            log->line(line);
            outcome.report = line + "\n";
            return outcome;
        }
        log->line(format("completed step %ld in %.3g s", w.step, wallBefore + elapsed()));
        outcome.report = completedReport(settings, summary, dir, vtk != nullptr);
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
    // Every output.* and guard.* key but the two that change series.csv's
    // columns or what they measure (the file would not be one run's): a
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
    checkMdStep(scene);
    checkStart(scene);
    Simulation sim(std::move(scene));  // its errors (a scene it cannot run) come before any output
    const OutDirLock lock = holdOutDir(options.outDir);
    prepareOutDir(options.outDir, true);
    return runLoop(sim, options, RunTotals{}, nullptr);
}

RunOutcome resumeRun(const RunOptions& options, const std::vector<std::string>& sets, const std::string& sceneFile) {
    const std::filesystem::path file = options.outDir / "checkpoint";
    const OutDirLock lock = holdResumedDir(options.outDir);  // before the checkpoint is read: no run writes it now
    Checkpoint c = readCheckpoint(file);
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
    bool exact = true;
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
        if (key == "simulation.dt" || key == "md.substeps") exact = false;
    }
    if (!sceneFile.empty()) {
        // The scene named beside --resume must be the checkpoint's.
        const Scene named = loadSceneFile(sceneFile, sets);
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
    if (comm::ranks() > 1) return runDistributed(std::move(scene), options, &c, exact);
    prepareOutDir(options.outDir, false);
    Simulation sim(std::move(scene));
    ByteReader in(c.state, origin);
    sim.loadState(in);
    if (in.left() != 0) in.fail("bytes after the simulation state");
    if (!exact && !options.quiet)
        std::fprintf(stderr, "moreau: resuming a diverged run with a changed step: the result is not the bits of any "
                             "uninterrupted run\n");
    return runLoop(sim, options, c.totals, &c, exact);
}

}  // namespace moreau
