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

/// Checks that outDir can be written (exit 2 otherwise), clears the outputs
/// of an earlier run there, then steps the scene.
RunOutcome runScene(Scene scene, const RunOptions& options);

/// The keys `--set` may change when a run resumes: they cannot change the
/// trajectory. After a divergence simulation.dt and md.substeps may change
/// too (a smaller step to get past it; the result is then not the bits of
/// any uninterrupted run).
const std::vector<std::string>& resumableKeys();

/// `moreau run --resume DIR` (DIR = options.outDir): continues the run from
/// DIR/checkpoint with `sets` applied (resumableKeys() only). With
/// `sceneFile` non-empty, that scene (with `sets`) must be the checkpoint's.
/// Throws InputError for a bad or foreign checkpoint or a forbidden key.
RunOutcome resumeRun(const RunOptions& options, const std::vector<std::string>& sets,
                     const std::string& sceneFile = {});

}  // namespace moreau
