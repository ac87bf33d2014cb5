#pragma once
/// Local frictional contact problems, as the non-smooth community poses them
/// (FCLIB's local problem, Siconos's FrictionContactProblem): given W
/// (3n_c × 3n_c, symmetric positive semi-definite), q and μ per contact, find
/// the impulses r and velocities u = W r + q with Coulomb's law at every
/// contact (cd/natural_map.hpp). Vectors are contact-major, each contact's
/// three components in its frame (n, t1, t2); u_n > 0 separates.
///
/// What lives here: the problem type, its readers (FCLIB HDF5 and the Siconos
/// harness's text format `FC3D 1`) and FCLIB writer, its error, and a
/// Gauss–Seidel solver for any 3×3 blocks and any μ per contact, with an exact
/// one-contact solver. The engine's own sweep (cd/solver.hpp) is the fast path
/// for spheres and disks; CdSolver::localProblem() poses its step here.
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/scene.hpp"

namespace moreau {

struct LocalProblem {
    std::vector<double> mu;  ///< per contact
    std::vector<double> q;   ///< 3 per contact
    /// W in 3×3 blocks by block row: row i holds blocks rowStart[i] ..
    /// rowStart[i + 1], columns ascending, its diagonal block among them.
    std::vector<std::size_t> rowStart{0};
    std::vector<std::int32_t> col;
    std::vector<Mat3> block;
    std::string title, description;  ///< FCLIB's info (may be empty)
    std::vector<double> solution;    ///< r of the file's solution (FCLIB), empty if it has none
    /// FCLIB's own merit (fclib_merit_local, MERIT_1) of that solution, −1 if
    /// none: the natural map's norm over 1 + sqrt(‖q‖), with u = W r + q.
    double fclibMerit = -1.0;

    std::size_t contacts() const { return mu.size(); }
    /// u = W r + q.
    std::vector<double> velocity(const std::vector<double>& r) const;
};

/// The Siconos/FCLIB error of impulses r (3 per contact): natural map with
/// De Saxcé's velocity over max(‖q‖, ‖r‖, ‖u‖) (cd/natural_map.hpp).
double naturalError(const LocalProblem& problem, const std::vector<double>& r);

/// Reads an FCLIB local problem (HDF5: the file starts with HDF5's signature)
/// or a text problem `FC3D 1` (../shared/peers/siconos/README.md). Throws
/// InputError naming the file and what is wrong: every size, index and
/// pointer of W and the lengths of q, μ and a stored solution are checked
/// against each other before use, and declared counts against what the file
/// holds. FCLIB's layout is read through HDF5 directly (libfclib's reader
/// trusts the declared sizes).
LocalProblem readLocalProblem(const std::string& path);
/// The same for an FCLIB file held in memory (an HDF5 file image), `name`
/// standing for the file in messages: the fuzz harness's entry.
LocalProblem readFclibImage(const std::string& image, const std::string& name);
/// Writes an FCLIB local problem (W in compressed columns, spacedim 3) and,
/// when `r` is given, its solution. Throws InputError if FCLIB is missing
/// from this build or the file cannot be written.
void writeFclib(const LocalProblem& problem, const std::string& path, const std::vector<double>* r = nullptr);
/// Whether this build reads and writes FCLIB's HDF5 files.
bool haveFclib();

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
