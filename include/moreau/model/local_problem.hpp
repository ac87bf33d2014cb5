#pragma once
/// A local frictional contact problem, as the non-smooth community poses
/// them (FCLIB's local problem, Siconos's FrictionContactProblem): given W
/// (3n_c × 3n_c, symmetric positive semi-definite), q and μ per contact, find
/// the impulses r and velocities u = W r + q with Coulomb's law at every
/// contact (cd/natural_map.hpp). Vectors are contact-major, each contact's
/// three components in its frame (n, t1, t2); u_n > 0 separates.
///
/// The data alone: io/fclib.hpp reads and writes it (FCLIB HDF5, the text
/// format `FC3D 1`), cd/local_problem.hpp solves it, and CdSolver poses its
/// step as one (CdSolver::localProblem).
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/core/types.hpp"

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
    std::vector<double> velocity(const std::vector<double>& r) const {
        std::vector<double> u = q;
        for (std::size_t i = 0; i < contacts(); ++i) {
            Vec3 ui = Vec3::Zero();
            for (std::size_t k = rowStart[i]; k < rowStart[i + 1]; ++k) {
                const auto j = 3 * static_cast<std::size_t>(col[k]);
                ui += block[k] * Vec3(r[j], r[j + 1], r[j + 2]);
            }
            for (int d = 0; d < 3; ++d) u[3 * i + static_cast<std::size_t>(d)] += ui[d];
        }
        return u;
    }
};

}  // namespace moreau
