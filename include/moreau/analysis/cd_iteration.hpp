#pragma once
/// The coarse-grained theory of the CD iteration (CD paper §3.1–3.2): how
/// fast one sweep relaxes forces, q, on which the chain's diffusion constant
/// q d²/Δt* and the sound-wave theory of eqs. 54–60 rest.
#include "moreau/model/scene.hpp"

namespace moreau {

/// q of the random sweep (a fresh permutation every sweep), CD eq. 46:
/// q = (4√e − 5)/2 ≈ 0.797.
double qRandomSweep();

/// q of a sweep order on a chain (docs/experiments-cd-solver.md): the random
/// sweep's of eq. 46; a fixed order and any one permutation kept for all
/// sweeps converge like Gauss–Seidel in a consistent order (q = 1: the graph
/// of a chain is a tree, so every order is consistently ordered and ρ_GS =
/// ρ_Jacobi²); random sequential updates are a Jacobi iteration in
/// continuous fictitious time (q = 1/2).
double qOfOrder(SweepOrder order);

}  // namespace moreau
