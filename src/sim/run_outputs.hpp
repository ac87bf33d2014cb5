#pragma once
/// The output path of `moreau run` (run.hpp, INTERFACE.md): the folder a
/// run holds, and what it writes there, series.csv rows, VTK snapshots,
/// log.txt, checkpoints and summary.json, with the cadences that say when
/// each is due. One piece of code for the serial loop and for rank 0 of the
/// distributed one (run.cpp); each loop only says what its state is. Internal
/// to src/sim.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/io/out_dir.hpp"
#include "moreau/io/output.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

// --- the folder ------------------------------------------------------------------

/// Creates `dir` (a fresh run's) and holds it for the run (OutDirLock):
/// before anything in it is written or removed.
OutDirLock holdOutDir(const std::filesystem::path& dir, const std::string& option = "--out");

/// Holds the folder a run resumes in, if it is one (else readCheckpoint
/// says what is missing). Collective: rank 0 holds it, every rank gets its error.
OutDirLock holdResumedDir(const std::filesystem::path& dir);

/// Checks that a file can be made in the held `dir` (a temporary of a unique
/// name, never through a link, removed at once); a fresh run also removes
/// what an earlier run left there (its series, summary, log, checkpoint, VTK
/// snapshots and their temporaries), so that no stale file sits beside new
/// ones. Only regular files go: a link or a special file of an output's name
/// stays and is written through (docs/scenes.md), and a vtk/ that is a link
/// is not entered.
void prepareOutDir(const std::filesystem::path& dir, bool fresh);

// --- small pieces ----------------------------------------------------------------

/// printf into a std::string (at most 511 bytes).
std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

/// "cd" or "md".
std::string methodName(const Scene& scene);

/// A step's sweeps into the run's sums.
void countStep(RunTotals& totals, const CdStepStats& r, const CdSettings& cd);

/// The line a resume from another version's checkpoint prints and logs.
std::string versionWarning(const Checkpoint& c);

/// OUT/fclib/step_XXXXXX.hdf5 (at least 6 digits), its folder created.
std::string fclibPath(const std::filesystem::path& dir, long step);

// --- the outputs -----------------------------------------------------------------

/// When each output is due (output.every, vtk_every, log_every,
/// checkpoint_every): the same on every rank.
struct RunCadence {
    explicit RunCadence(const Scene& scene);
    bool row(long s) const { return (every > 0 && s % every == 0) || s == steps; }
    bool snapshot(long s) const { return vtkEvery > 0 && (s % vtkEvery == 0 || s == steps); }
    bool log(long s) const { return s % logEvery == 0 || s == steps; }
    bool checkpoint(long s) const { return checkpointEvery > 0 && (s % checkpointEvery == 0 || s == steps); }
    /// The last step of `cadence` whose output a run resumed at `first` keeps:
    /// `first`'s only where the cadence puts one (a run that ended there wrote
    /// its last step whatever the cadence; the uninterrupted run did not).
    long keptUpTo(long first, long cadence) const;

    long steps = 0, every = 0, vtkEvery = 0, checkpointEvery = 0, logEvery = 1;
};

/// Lines every output.log_every steps on stderr (unless quiet) and in
/// DIR/log.txt, flushed as written: a batch job's log shows progress.
class RunLog {
public:
    RunLog(const std::filesystem::path& file, bool toStderr, bool append);
    void line(const std::string& text);

private:
    OutputStream out_;
    bool toStderr_;
};

/// The outputs of one run in its held folder.
/// summary.json's numbers of the whole world: its grains, kinetic energy and stateHash.
struct WorldNumbers {
    std::size_t grains = 0;
    double kineticEnergy = 0.0;
    std::uint64_t stateHash = 0;
};

class RunOutputs {
public:
    /// Opens series.csv (its columns from `start`; `naturalError`: the
    /// natural_error column), vtk/ (output.vtk_every > 0) and log.txt in
    /// options.outDir. A run resumed from `from` keeps the rows and snapshots
    /// up to its first step (start.step) and appends to the log; `exact`
    /// false where the resume changed the step. Logs `intro`, the version
    /// warning of `from` and the log's column header. Wall time counts from `started`.
    RunOutputs(const Scene& scene, const World& start, const RunOptions& options, const Checkpoint* from,
               bool exact, bool naturalError, const std::vector<std::string>& intro,
               std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now());

    const RunCadence& cadence() const { return cadence_; }
    long first() const { return first_; }
    bool resumed() const { return from_ != nullptr; }
    /// The run's wall time: its earlier parts' (a checkpoint's) and this one's.
    double wallSeconds() const;

    /// A row of series.csv.
    void row(const World& w, const StepRecord& r) { series_.write(w, r, scene_.output.stage); }
    /// A snapshot's parallel files over the ranks' pieces and its walls (VtkWriter::writeParallel).
    void snapshotParallel(const World& w, const WallsView& walls, int pieces, VtkShapes shapes = VtkShapes::None) {
        vtk_->writeParallel(w, walls, w.step, w.time, pieces, shapes);
    }
    /// A VTK snapshot of step `step` (`pieces`: ranks whose pieces it lists, VtkWriter::write).
    void snapshot(const World& w, const std::vector<Contact>& contacts, long step, int pieces = 0);
    /// The log's row of step s.
    void logStep(long s, const StepRecord& rec);
    void log(const std::string& line) { log_.line(line); }
    void flush() { series_.flush(); }

    /// DIR/checkpoint, atomically, after the rows so far: the bytes `state`
    /// makes of `totals`, whose wall time is brought up to now first.
    void checkpoint(RunTotals& totals, const std::function<std::string(const RunTotals&)>& state);
    /// As checkpoint(), where `write` writes the file itself (a checkpoint in
    /// parts); with `stamp` false the sums keep their wall time (a last
    /// good step's, kept earlier).
    void checkpointWith(RunTotals& totals, const std::function<void(const RunTotals&)>& write, bool stamp = true);
    /// DIR/checkpoint, atomically, after the rows so far: `bytes` made
    /// before (the last step the guards passed).
    void writeCheckpoint(const std::string& bytes);

    /// summary.json's keys of every run: status, sizes, the run's sums, the
    /// state hash, the settings; bit_exact_resume and checkpoint_version for
    /// a resume that is not the uninterrupted run's bits. A loop adds its own
    /// keys (md_pipeline, distributed, ...) before writeSummary.
    nlohmann::json summary(const char* status, const World& w, const RunTotals& totals, std::size_t contacts) const;
    /// On ranks: `w` a rank's part (walls, clock, shapes), `whole` the whole world's numbers.
    nlohmann::json summary(const char* status, const World& w, const WorldNumbers& whole, const RunTotals& totals,
                           std::size_t contacts) const;
    void writeSummary(const nlohmann::json& summary) const;

    /// Logs how the run was stopped by `signal` after step `step`; returns
    /// the report line (`launcher`: what the resume command starts with).
    std::string stopped(const char* signal, long step, const char* launcher);
    /// Logs the completion; returns the two lines a completed run prints.
    std::string completed(long step, const nlohmann::json& summary);

private:
    double elapsed() const;  ///< seconds since `started`

    const Scene& scene_;
    std::filesystem::path dir_;
    RunCadence cadence_;
    long first_ = 0;
    const Checkpoint* from_ = nullptr;
    bool exact_ = true;
    SeriesWriter series_;
    std::unique_ptr<VtkWriter> vtk_;
    RunLog log_;
    std::chrono::steady_clock::time_point t0_;
    double wallBefore_ = 0.0;
};

}  // namespace moreau
