#pragma once
/// `moreau run`: a scene stepped to its end with the outputs of INTERFACE.md
/// (series.csv, summary.json, VTK, the run log log.txt, checkpoints), resumed
/// from a checkpoint, stopped cleanly by SIGINT or SIGTERM.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/model/scene.hpp"

namespace moreau {

struct RunOptions {
    std::filesystem::path outDir = "out";
    bool quiet = false;  ///< no log lines on stderr (log.txt is written all the same)
    std::string folderOption = "--out";  ///< how messages name the folder ("out=" from Python)
};

/// How a run ended: summary.json's content, a few lines for stdout, and the
/// exit status (0 completed; 130 or 143 stopped by SIGINT or SIGTERM after
/// writing a checkpoint). A divergence throws DivergenceError once the
/// checkpoint of the last good step and summary.json are written.
struct RunOutcome {
    nlohmann::json summary;
    std::string report;
    int exitStatus = 0;
};

/// Holds outDir for the run (OutDirLock: a second run into it gets an
/// InputError naming this one), checks that it can be written (exit 2
/// otherwise), clears the outputs of an earlier run there, then steps the scene.
RunOutcome runScene(Scene scene, const RunOptions& options);
/// `moreau run SCENE`: runScene of the scene file `path` with `sets`; on
/// MPI ranks each rank builds its brick's grains alone where they are
/// round (ScenePlan: no rank builds the whole world).
RunOutcome runSceneFile(const std::string& path, const std::vector<std::string>& sets, const RunOptions& options);

/// The keys `--set` may change when a run resumes: they change neither the
/// trajectory nor series.csv's columns (simulation.steps, output.* but
/// output.natural_error, output.stress_region and output.stage, guard.*). After a
/// divergence simulation.dt and md.substeps may change too (a smaller step
/// to get past it; the result is then not the bits of any uninterrupted run).
const std::vector<std::string>& resumableKeys();

/// `moreau run --resume DIR` (DIR = options.outDir): continues the run from
/// DIR/checkpoint with `sets` applied (resumableKeys() only). With
/// `sceneFile` non-empty, that scene (with `sets`) must be the checkpoint's.
/// Holds DIR from before the checkpoint is read. Throws InputError for a
/// held DIR, a bad or foreign checkpoint, a forbidden key or one of a section
/// the checkpoint's scene lacks. A checkpoint of another Moreau version (the
/// same format) is resumed with a warning (stderr unless quiet, log.txt) and
/// summary.json's checkpoint_version and bit_exact_resume = false.
RunOutcome resumeRun(const RunOptions& options, const std::vector<std::string>& sets,
                     const std::string& sceneFile = {});

class Simulation;

/// A serial run that its caller steps: `moreau run`'s loop (runScene,
/// resumeRun) and Python's Simulation(..., out=DIR). It holds the folder
/// and writes what INTERFACE.md lists as it steps: series.csv rows, VTK
/// snapshots, log.txt and checkpoints at their cadences, the guards'
/// checks, summary.json at finish(). The cadences end at the scene's
/// simulation.steps as `moreau run`'s do; a caller may step past it.
class SteppedRun {
public:
    /// A fresh run of `scene` into options.outDir: what `moreau run` refuses
    /// before step 0 throws InputError before any output; then the folder is
    /// held (a held one throws, naming its holder), cleared of an earlier
    /// run's outputs, and step 0's row and snapshot are written.
    static std::unique_ptr<SteppedRun> start(Scene scene, const RunOptions& options);
    /// The run in options.outDir continued from its checkpoint, with `sets`
    /// (resumeRun's checks and messages; serial).
    static std::unique_ptr<SteppedRun> resume(const RunOptions& options, const std::vector<std::string>& sets,
                                              const std::string& sceneFile = {});
    /// Finishes an unfinished run ("completed" at or past simulation.steps,
    /// else "closed"), swallowing errors.
    ~SteppedRun();
    SteppedRun(const SteppedRun&) = delete;
    SteppedRun& operator=(const SteppedRun&) = delete;

    Simulation& simulation();
    const Simulation& simulation() const;
    long steps() const;  ///< the scene's simulation.steps
    bool finished() const;
    const std::filesystem::path& folder() const;  ///< options.outDir

    /// One step with its outputs and checks. A divergence (a value not
    /// finite, a guard that fails) writes the checkpoint of the last good
    /// step and summary.json, finishes the run and throws DivergenceError;
    /// an output that cannot be written writes summary.json ("failed") if
    /// it can and throws InputError. After finish() it throws InputError.
    void step();
    /// DIR/checkpoint of the state now (atomically).
    void checkpoint();
    /// The guards from the state now (Guard): after a change of the state
    /// or its sources between steps (a setter), the energy guard measures
    /// from here, and checkpoints carry that reference.
    void restartGuards();
    /// Flushes series.csv, writes summary.json with `status` and releases
    /// the folder; with `signal` ("SIGINT", "SIGTERM"), or status "closed"
    /// (a caller's run ended before simulation.steps), a checkpoint first,
    /// as a stopped run's. Once; later calls return an empty outcome.
    RunOutcome finish(const char* status, const char* signal = nullptr);

private:
    struct State;
    explicit SteppedRun(std::unique_ptr<State> state);
    std::unique_ptr<State> s_;
};

}  // namespace moreau
