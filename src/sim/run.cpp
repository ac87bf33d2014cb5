#include "moreau/sim/run.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/io/output.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

// --- signals -------------------------------------------------------------------

volatile std::sig_atomic_t gSignal = 0;

extern "C" void onStopSignal(int signal) { gSignal = signal; }

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

/// Creates `dir` and checks that a file can be made in it; a fresh run also
/// removes what an earlier run left there (its series, summary, log,
/// checkpoint and VTK snapshots), so that no stale file sits beside new ones.
void prepareOutDir(const std::filesystem::path& dir, bool fresh) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
        throw InputError("--out '" + dir.string() + "': cannot create the folder" +
                         (ec ? " (" + ec.message() + ")" : std::string(" (a file of that name exists)")));
    const std::filesystem::path probe = dir / ".moreau-write-test";
    {
        std::ofstream f(probe);
        f << "x";
        f.close();
        if (!f) {
            std::filesystem::remove(probe, ec);
            throw InputError("--out '" + dir.string() + "': the folder is not writable");
        }
    }
    std::filesystem::remove(probe, ec);
    if (!fresh) return;
    for (const char* name : {"series.csv", "summary.json", "summary.json.tmp", "log.txt", "checkpoint",
                             "checkpoint.tmp"})
        std::filesystem::remove(dir / name, ec);
    const std::filesystem::path vtk = dir / "vtk";
    if (!std::filesystem::is_directory(vtk, ec)) return;
    std::vector<std::filesystem::path> stale;
    for (const auto& entry : std::filesystem::directory_iterator(vtk, ec)) {
        const std::string name = entry.path().filename().string();
        const bool snapshot = (name.rfind("grains_", 0) == 0 || name.rfind("contacts_", 0) == 0) &&
                              (name.ends_with(".vtp") || name.ends_with(".vtp.tmp"));
        if (snapshot || name == "run.pvd" || name == "run.pvd.tmp") stale.push_back(entry.path());
    }
    for (const auto& p : stale) std::filesystem::remove(p, ec);
    if (std::filesystem::is_empty(vtk, ec)) std::filesystem::remove(vtk, ec);
}

// --- the run log -----------------------------------------------------------------

/// Lines every output.log_every steps on stderr (unless quiet) and in
/// DIR/log.txt, flushed as written: a batch job's log shows progress.
class RunLog {
public:
    RunLog(const std::filesystem::path& file, bool toStderr, bool append) : toStderr_(toStderr) {
        out_.open(file, append ? std::ios::app : std::ios::trunc);
        if (!out_) throw InputError("cannot open output file '" + file.string() + "' for writing");
    }
    void line(const std::string& text) {
        out_ << text << '\n';
        out_.flush();
        if (toStderr_) std::fprintf(stderr, "%s\n", text.c_str());
    }

private:
    std::ofstream out_;
    bool toStderr_;
};

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

const char* kLogHeader = "      step          time  kinetic_energy  contacts  iterations     residual   wall_s     eta_s";

std::string methodName(const Scene& scene) { return scene.simulation.method == Method::CD ? "cd" : "md"; }

// --- the loop --------------------------------------------------------------------

RunOutcome runLoop(Simulation& sim, const RunOptions& options, RunTotals totals, bool resumed, bool exact = true) {
    const Scene& scene = sim.scene();
    const std::filesystem::path& dir = options.outDir;
    const long steps = scene.simulation.steps, every = scene.output.every, vtkEvery = scene.output.vtkEvery;
    const long checkpointEvery = scene.output.checkpointEvery;
    const long logEvery = scene.output.logEvery > 0 ? scene.output.logEvery : std::max(1L, (steps + 19) / 20);
    const long first = sim.world().step;  // the step the run starts from (0, or the checkpoint's)

    // A resumed run keeps the rows and snapshots up to its first step, that
    // step's only where the cadence puts one (a run that ended there wrote
    // its last step whatever the cadence; the uninterrupted run did not).
    auto keptUpTo = [&](long cadence) { return first == 0 || (cadence > 0 && first % cadence == 0) ? first : first - 1; };
    SeriesWriter series(dir / "series.csv", sim.world(), resumed ? keptUpTo(every) : -1);
    std::unique_ptr<VtkWriter> vtk;
    if (vtkEvery > 0) vtk = std::make_unique<VtkWriter>(dir / "vtk", resumed ? keptUpTo(vtkEvery) : -1);
    RunLog log(dir / "log.txt", !options.quiet, resumed);
    log.line(format("moreau %s: %s %s, %s, %zu grains, %zu walls, steps %ld to %ld, %d threads", MOREAU_VERSION,
                    resumed ? "resuming" : "running", scene.origin.c_str(), methodName(scene).c_str(),
                    sim.world().numGrains, sim.world().numWalls(), first, steps, omp_get_max_threads()));
    log.line(kLogHeader);
    if (!resumed) {
        series.write(sim.world(), sim.observe());
        if (vtk) vtk->write(sim.world(), sim.contacts(), 0, sim.world().time);
    }

    const auto t0 = std::chrono::steady_clock::now();
    const double wallBefore = totals.wallSeconds;
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    auto checkpoint = [&](CheckpointKind kind) {
        series.flush();
        totals.wallSeconds = wallBefore + elapsed();
        writeCheckpoint(dir / "checkpoint", sim, totals, kind);
    };
    auto summaryOf = [&](const char* status) {
        nlohmann::json s;
        s["status"] = status;
        s["method"] = methodName(scene);
        if (scene.simulation.method == Method::MD) {
            s["md_pipeline"] = sim.fused() ? "fused" : "staged";
            const MdPairEngine* engine = sim.pairEngine();
            s["md_simd"] = engine ? engine->blockIsa(sim.world()) : "none";
        }
        const long done = sim.world().step;
        s["steps"] = steps;
        s["last_step"] = done;
        if (resumed) s["resumed_from_step"] = first;
        if (!exact) s["bit_exact_resume"] = false;
        s["wall_seconds"] = wallBefore + elapsed();
        s["particles"] = sim.world().numGrains;
        s["walls"] = sim.world().numWalls();
        s["mean_iterations"] = done > 0 ? totals.sumIterations / static_cast<double>(done) : 0.0;
        s["max_iterations"] = totals.maxIterations;
        s["mean_residual"] = done > 0 ? totals.sumResidual / static_cast<double>(done) : 0.0;
        s["unconverged_steps"] = totals.unconverged;
        s["final_contacts"] = sim.record().contacts;
        s["final_kinetic_energy"] = kineticEnergy(sim.world());
        s["threads"] = omp_get_max_threads();
        s["seed"] = scene.simulation.seed;
        s["scene"] = scene.origin;
        s["state_hash"] = hex64(stateHash(sim.world()));
        s["settings"] = scene.values;
        s["version"] = MOREAU_VERSION;
        return s;
    };

    StopSignals signals;
    long s = first + 1;
    try {
        for (; s <= steps; ++s) {
            const CdStepStats r = sim.advance();  // observed below only where written
            totals.sumIterations += r.iterations;
            totals.sumResidual += r.residual;
            totals.maxIterations = std::max<std::int64_t>(totals.maxIterations, r.iterations);
            if (r.iterations >= scene.cd.maxIterations && scene.cd.criterion != Criterion::Fixed) ++totals.unconverged;
            if ((every > 0 && s % every == 0) || s == steps) series.write(sim.world(), sim.record());
            if (vtk && (s % vtkEvery == 0 || s == steps)) vtk->write(sim.world(), sim.contacts(), s, sim.world().time);
            if (s % logEvery == 0 || s == steps) {
                const StepRecord& rec = sim.record();
                const double wall = elapsed();
                const double eta = wall / static_cast<double>(s - first) * static_cast<double>(steps - s);
                log.line(format("%10ld %13.6g %15.6g %9zu %11d %12.4g %8.1f %9.1f", s, rec.time, rec.kineticEnergy,
                                rec.contacts, rec.iterations, rec.residual, wallBefore + wall, eta));
            }
            if (checkpointEvery > 0 && (s % checkpointEvery == 0 || s == steps)) checkpoint(CheckpointKind::Periodic);
            if (gSignal != 0 && s < steps) break;
        }
    } catch (const DivergenceError& e) {
        // The world is the last good step's (Simulation::advance): its
        // checkpoint is the way back, with a smaller step.
        checkpoint(CheckpointKind::Diverged);
        nlohmann::json summary = summaryOf("diverged");
        summary["divergence"] = e.what();
        writeJsonFile(dir / "summary.json", summary);
        log.line(format("diverged in step %ld: %s", s, e.what()));
        throw DivergenceError(std::string(e.what()) + "; the last good step (" + std::to_string(sim.world().step) +
                              ") is in " + (dir / "checkpoint").string() + ": resume it with a smaller step, e.g. " +
                              "moreau run --resume " + dir.string() + " --set simulation.dt=...");
    }

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
        outcome.report = format("%s: %s, %zu grains, %ld steps in %.3g s; state_hash %s\n", scene.origin.c_str(),
                                methodName(scene).c_str(), sim.world().numGrains, steps, wallBefore + elapsed(),
                                outcome.summary["state_hash"].get<std::string>().c_str()) +
                         "outputs in " + dir.string() + "/ (summary.json, series.csv, log.txt" +
                         (vtk ? ", vtk/run.pvd" : "") + (checkpointEvery > 0 ? ", checkpoint" : "") + ")\n";
    }
    return outcome;
}

}  // namespace

const std::vector<std::string>& resumableKeys() {
    static const std::vector<std::string> keys = {"simulation.steps", "output.every", "output.vtk_every",
                                                  "output.checkpoint_every", "output.log_every"};
    return keys;
}

RunOutcome runScene(Scene scene, const RunOptions& options) {
    Simulation sim(std::move(scene));  // its errors (a scene it cannot run) come before any output
    prepareOutDir(options.outDir, true);
    return runLoop(sim, options, RunTotals{}, false);
}

RunOutcome resumeRun(const RunOptions& options, const std::vector<std::string>& sets, const std::string& sceneFile) {
    const std::filesystem::path file = options.outDir / "checkpoint";
    Checkpoint c = readCheckpoint(file);
    const std::string origin = "checkpoint '" + file.string() + "'";
    const Scene before = loadSceneWithWorld(c.sceneText, origin, {}, c.world);
    Scene scene = loadSceneWithWorld(c.sceneText, origin, sets, c.world);
    scene.origin = c.origin;
    const auto& resumable = resumableKeys();
    auto mayChange = [&](const std::string& key) {
        return std::find(resumable.begin(), resumable.end(), key) != resumable.end() ||
               (c.kind == CheckpointKind::Diverged && (key == "simulation.dt" || key == "md.substeps"));
    };
    bool exact = true;
    for (const auto& [key, value] : scene.values) {
        if (before.values.at(key) == value) continue;
        if (!mayChange(key))
            throw InputError("--set " + key + ": cannot change when a run resumes (it would change the trajectory; " +
                             "allowed: simulation.steps, output.every, output.vtk_every, output.checkpoint_every, " +
                             "output.log_every" +
                             (c.kind == CheckpointKind::Diverged ? "; after a divergence also simulation.dt, md.substeps"
                                                                 : "") +
                             ")");
        if (key == "simulation.dt" || key == "md.substeps") exact = false;
    }
    if (!sceneFile.empty()) {
        // The scene named beside --resume must be the checkpoint's.
        const Scene named = loadSceneFile(sceneFile, sets);
        for (const auto& [key, value] : named.values) {
            if (std::find(resumable.begin(), resumable.end(), key) != resumable.end()) continue;
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
    prepareOutDir(options.outDir, false);
    Simulation sim(std::move(scene));
    ByteReader in(c.state, origin);
    sim.loadState(in);
    if (in.left() != 0) in.fail("bytes after the simulation state");
    if (!exact && !options.quiet)
        std::fprintf(stderr, "moreau: resuming a diverged run with a changed step: the result is not the bits of any "
                             "uninterrupted run\n");
    return runLoop(sim, options, c.totals, true, exact);
}

}  // namespace moreau
