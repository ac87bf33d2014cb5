#pragma once
/// Checkpoints: one binary file holding everything the next step of a run
/// reads, so that `moreau run --resume DIR` continues with the bits of the
/// uninterrupted run (docs/scenes.md, "Checkpoints and resume").
///
/// Layout (all numbers in the machine's byte order):
///   "moreau-checkpoint\n", u32 format version, Moreau's version, u8 kind,
///   the run's scene as text (canonicalSceneText), its FNV-1a hash and name,
///   (format 6) u8 layout 0, the world (every body: pose, velocities, masses, shapes, force
///   schedules; the periodic box; step and time; the driven grains), the run's sums,
///   the Simulation's state (contact store; MD scheme history),
///   and last the FNV-1a checksum of every byte before it.
/// There is no random-number state to keep: every random choice of a step
/// is drawn from a stream keyed by (seed, step, sweep) (core/rng.hpp).
///
/// On MPI ranks (format 6, layout 1, "parts") no rank holds the whole world:
/// each rank writes its share to `checkpoint.STEP.pR` (its owned grains'
/// whole state, the contact memory it owns, its MD scheme entries) and
/// rank 0 then writes `checkpoint`: the header above, the world's walls,
/// cell and clock with no grain, the run's sums, the MD scheme's carried
/// part and the walls' entries, and each part's size and checksum.
/// readCheckpoint reads either layout into the same Checkpoint (the whole
/// world and state), so any rank count, or one process, resumes it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moreau/md/md_solver.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

class Simulation;

/// Why a checkpoint was written.
enum class CheckpointKind : std::uint8_t {
    Periodic = 0,  ///< output.checkpoint_every, or the end of the run
    Stopped = 1,   ///< SIGINT or SIGTERM
    Diverged = 2,  ///< the last good step before a divergence
};

/// The run loop's sums that summary.json reports over the whole run.
struct RunTotals {
    double sumIterations = 0.0, sumResidual = 0.0;
    std::int64_t maxIterations = 0, unconverged = 0;
    double wallSeconds = 0.0;  ///< wall time of the run's earlier parts
    /// The energy guard's reference (guard.energy): the start's energy and
    /// what the start and gravity can add to it (NaN: not made yet).
    double energyStart = std::numeric_limits<double>::quiet_NaN(), energyBudget = 0.0;
};

/// The main file's index of a checkpoint in parts.
struct CheckpointParts {
    std::uint64_t grains = 0;
    bool held = false;  ///< an MD scheme's state is in it
    MdSolver::SchemeCarry carry;
    std::vector<MdSolver::Vec6> wallScheme;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> listed;  ///< per part: its size and checksum
    double rMin = 0.0;  ///< the smallest grain's radius (readCheckpoint without the merge)
};

struct Checkpoint {
    std::filesystem::path path;
    std::uint32_t format = 0;
    std::string version;  ///< Moreau's version that wrote it
    CheckpointKind kind = CheckpointKind::Periodic;
    std::string sceneText;  ///< canonicalSceneText of the run
    std::string origin;     ///< the scene's name (Scene::origin)
    World world;
    RunTotals totals;
    std::string state;  ///< Simulation::saveState's bytes
    /// A checkpoint in parts read without merging them (readCheckpoint's
    /// `merge` false): `world` holds the walls, cell and clock, `state` is
    /// empty, and the parts are read with eachCheckpointPart.
    std::optional<CheckpointParts> parts;
};

/// The format written; readCheckpoint reads every format up to it (2 added
/// the deforming cell and the driven grains, World::driven; a format-1 file
/// has neither; 3 the clumps' shapes and each body's shape and size; 4 the
/// polygons; 5 the accumulated shear strain, World::shearStrain, which an
/// older file's run did not keep: 0 there; 6 the layout byte, whole or
/// parts).
constexpr std::uint32_t kCheckpointFormat = 6;

/// One rank's share of a checkpoint (DistributedSimulation::share): its
/// owned grains as a world of their own (with the walls, cell and clock),
/// their global ids, the contact memory it owns (global keys) and, where
/// an MD scheme keeps a state, each owned grain's entries (carry.perBody()
/// each, in the part's order), the carried part and the walls' entries.
struct CheckpointShare {
    World part;
    std::vector<std::uint64_t> ids;
    ContactStore store;
    bool held = false;
    MdSolver::SchemeCarry carry;
    std::vector<MdSolver::Vec6> entries, wallScheme;
    long step = -1;
    /// Own shapes (DistributedSimulation): part's polygon table holds its
    /// grains' shapes alone, the main file's world none.
    bool ownShapes = false;
};

/// Writes `share` as rank `rank`'s part of a checkpoint of `ranks` parts in
/// `dir` (atomically; InputError naming the file where it cannot) and
/// returns what the main file lists of it: its size and checksum.
std::string writeCheckpointPart(const std::filesystem::path& dir, const CheckpointShare& share, int rank, int ranks);
/// Rank 0, after every part: `dir`/checkpoint over the parts (`parts`:
/// writeCheckpointPart's answers in rank order), then the parts of other
/// steps go.
void writeCheckpointMain(const std::filesystem::path& dir, const CheckpointShare& share, std::size_t grains,
                         const std::vector<std::string>& parts, const RunTotals& totals, CheckpointKind kind,
                         const std::string& sceneText, const std::string& origin);
/// "checkpoint.000400.p3": rank 3's part of a checkpoint of step 400.
std::string checkpointPartName(long step, int rank);

/// Writes `file` atomically (io/out_dir.hpp, writeFileAtomically): the bytes
/// go to a temporary of a unique name beside it (never through a link),
/// which is flushed to the disk and renamed over `file`, so that a kill at
/// any moment leaves either the old checkpoint or the new one, whole. Throws
/// InputError naming the file when it cannot be written.
void writeCheckpoint(const std::filesystem::path& file, const Simulation& sim, const RunTotals& totals,
                     CheckpointKind kind);

/// The bytes writeCheckpoint writes, to keep in memory (the run keeps the
/// last step its guards passed) and write later with writeCheckpointBytes;
/// `sceneText`, where given, is canonicalSceneText(sim.scene()) made once.
std::string checkpointBytes(const Simulation& sim, const RunTotals& totals, CheckpointKind kind,
                            const std::string* sceneText = nullptr);
void writeCheckpointBytes(const std::filesystem::path& file, const std::string& bytes);

/// Reads and checks a checkpoint. Throws InputError with one line naming the
/// file (or the part) and what is wrong: not a checkpoint, another format
/// version, damaged (checksum), truncated, inconsistent sizes, a part
/// missing or not the one listed. A checkpoint in parts is merged into the
/// whole world and state, unless `merge` is false (Checkpoint::parts).
Checkpoint readCheckpoint(const std::filesystem::path& file, bool merge = true);
/// Each part of a checkpoint read without merging (in rank order, each
/// read and checked as readCheckpoint does): its grains as a world (with
/// `walls`' walls), their global ids (ascending), the contact memory it
/// holds (global keys) and its grains' MD scheme entries (carry.perBody()
/// each).
/// The grains `ids` (ascending; null: every one, each id checked to come
/// once) of a checkpoint read without merging: a world of them in id order
/// with the checkpoint's walls, the contact memory of every contact with a
/// grain among them (global keys, in the parts' order), and their MD scheme
/// entries (carry.perBody() each), then the walls'.
struct CheckpointPick {
    World world;
    ContactStore store;
    std::vector<MdSolver::Vec6> entries;
};
CheckpointPick pickCheckpointGrains(const Checkpoint& c, const std::vector<std::uint64_t>* ids);
void eachCheckpointPart(const Checkpoint& c, const World& walls,
                        const std::function<void(const World& part, const std::vector<std::uint64_t>& ids,
                                                 const ContactStore& store,
                                                 const std::vector<MdSolver::Vec6>& entries)>& f);

}  // namespace moreau
