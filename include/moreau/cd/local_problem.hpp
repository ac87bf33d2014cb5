#pragma once
/// Solving local frictional contact problems (model/local_problem.hpp; read
/// and written by io/fclib.hpp): their error, and a Gauss–Seidel solver for
/// any 3×3 blocks and any μ per contact, with an exact one-contact solver.
/// The engine's own sweep (cd/solver.hpp) is the fast path for spheres and
/// disks; CdSolver::localProblem() poses its step as a local problem.
#include <cstdint>
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/local_problem.hpp"
#include "moreau/model/scene.hpp"

namespace moreau {

/// The Siconos/FCLIB error of impulses r (3 per contact): natural map with
/// De Saxcé's velocity over max(‖q‖, ‖r‖, ‖u‖) (cd/natural_map.hpp).
double naturalError(const LocalProblem& problem, const std::vector<double>& r);

/// One contact: the r of Coulomb's law for u = W r + q (W positive definite).
/// Separation (r = 0) when q_n ≥ 0, else sticking if −W⁻¹q lies in the cone,
/// else sliding: r = ρ (1, −μ d) with u_n = 0 and u_t ∥ d, found by secant
/// steps on the slip direction d, else a scan of d with bisection (the root
/// nearest the starting direction when several exist).
Vec3 solveOneContact(const Mat3& W, const Vec3& q, double mu);
/// The same with W⁻¹ given, the root search starting from the slip direction
/// of `guess` (the contact's previous impulse): the Gauss–Seidel's form.
Vec3 solveOneContact(const Mat3& W, const Mat3& Winv, const Vec3& q, double mu, const Vec3& guess);

struct LocalSolveResult {
    int sweeps = 0;
    double error = 0.0;     ///< natural-map error of the returned r
    double seconds = 0.0;   ///< the sweeps and their error checks
    bool converged = false;
};
/// Gauss–Seidel over the contacts with solveOneContact, from the r given: the
/// order, criterion (fixed or natural; local and global read as natural),
/// epsilon, check_every and max_iterations of `settings`, random orders drawn
/// from `seed`.
LocalSolveResult solveLocal(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                            std::uint64_t seed);

}  // namespace moreau
