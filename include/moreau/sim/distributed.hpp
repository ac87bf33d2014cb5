#pragma once
/// Runs over MPI ranks (docs/distributed.md): `mpirun -np N moreau run SCENE`.
///
/// MD steps by spatial domain decomposition. The grains are cut into bricks
/// (a grid over the axes the scene moves along, least inner face area, cuts
/// balanced by grain count per axis); each rank owns
/// the grains of its brick and holds, as ghosts, every grain of the others
/// within 2 r_max + margin + skin of it. A rank's part is an ordinary
/// Simulation of its owned and ghost grains (in global id order) and all the
/// walls. Before each step the owners send their ghosts' state; when a grain
/// has moved half the skin since the last rebuild, every rank rebuilds:
/// grains migrate to the brick they are in now, taking their contacts' whole
/// memory (the contact store), and the ghosts are chosen afresh.
///
/// Same bits for every rank count: a contact between an owned grain and a
/// ghost is computed on both ranks from identical data, and each grain sums
/// its contacts' forces in key order, which the global id order of the
/// local bodies keeps; so an owned grain steps exactly as in a serial run.
///
/// The ranks themselves: core/comm.hpp.
#include <memory>

#include "moreau/io/scene_file.hpp"
#include "moreau/sim/run.hpp"

namespace moreau {

struct Checkpoint;

/// `moreau run` of `scene` on comm::ranks() > 1 ranks: the outputs of a
/// serial run, with "distributed" in summary.json (rank 0 writes the
/// files; series rows, snapshots in pieces and checkpoints in parts come
/// from every rank's part, docs/distributed.md "Output"). With `resumed`
/// (the checkpoint `scene` was made from) the run continues it (the caller
/// holds its folder); `exact` false where the resume changed the step
/// (summary.json: bit_exact_resume). With `plan` (the scene file's,
/// `scene` its settings and walls: plan->part({})) each rank builds its
/// brick's and halo's grains alone, and the start's checks are made over
/// the ranks. Throws InputError on every rank alike for what a run on
/// ranks does not take (cd.solver other than gauss-seidel).
RunOutcome runDistributed(Scene scene, const RunOptions& options, const Checkpoint* resumed = nullptr,
                          bool exact = true, std::shared_ptr<const ScenePlan> plan = nullptr);

}  // namespace moreau
