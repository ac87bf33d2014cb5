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
#include "moreau/sim/run.hpp"

namespace moreau {

struct Checkpoint;

/// `moreau run` of `scene` on comm::ranks() > 1 ranks: the outputs of a
/// serial run, written by rank 0, with "ranks" in summary.json; its
/// checkpoints are a serial run's, so any rank count resumes them. With
/// `resumed` (the checkpoint `scene` was made from) the run continues it
/// (the caller holds its folder); `exact` false where the resume changed
/// the step (summary.json: bit_exact_resume).
/// Throws InputError (on every rank alike) for scenes the distributed run
/// does not take yet: CD, MD schemes with history, md.substeps > 1, mobile
/// walls, servos, driven grains, deforming cells.
RunOutcome runDistributed(Scene scene, const RunOptions& options, const Checkpoint* resumed = nullptr,
                          bool exact = true);

}  // namespace moreau
