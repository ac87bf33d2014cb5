#pragma once
/// Local contact problems (model/local_problem.hpp) in files: FCLIB's HDF5
/// layout (read by Moreau itself, written through libfclib) and the Siconos
/// harness's text format `FC3D 1` (docs/convergence.md). FCLIB needs
/// libfclib-dev and libhdf5-dev at build time (haveFclib()).
#include <string>
#include <vector>

#include "moreau/model/local_problem.hpp"

namespace moreau {

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

}  // namespace moreau
