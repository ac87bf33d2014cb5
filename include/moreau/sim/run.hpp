#pragma once
/// `moreau run`: a scene stepped to its end with the outputs of INTERFACE.md
/// (series.csv, summary.json, VTK, the run log log.txt, checkpoints), resumed
/// from a checkpoint, stopped cleanly by SIGINT or SIGTERM.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/model/scene.hpp"

namespace moreau {

struct RunOptions {
    std::filesystem::path outDir = "out";
    bool quiet = false;  ///< no log lines on stderr (log.txt is written all the same)
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

/// The keys `--set` may change when a run resumes: they change neither the
/// trajectory nor series.csv's columns (simulation.steps, output.* but
/// output.natural_error and output.stress_region, guard.*). After a
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

}  // namespace moreau
