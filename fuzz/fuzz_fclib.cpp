// libFuzzer harness: FCLIB local problems through moreau::readFclibImage. The
// bytes are read as the datasets of FCLIB's layout (sizes, indices, pointers,
// vectors and their lengths, types; tests/support/fclib_file.hpp), written as
// an HDF5 file image in memory and read back: the inputs reach Moreau's
// checks rather than HDF5's own parser. Bad problems must throw
// moreau::InputError; any other exception, crash or sanitizer report is a
// finding. Accepted problems are also solved for a few sweeps.
#include <cstddef>
#include <cstdint>

#include "moreau/cd/local_problem.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/fclib.hpp"
#include "support/fclib_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string image = moreau::test::fclibImage(moreau::test::decodeFclibFields(data, size));
    try {
        const moreau::LocalProblem p = moreau::readFclibImage(image, "fuzz.hdf5");
        std::vector<double> r;
        moreau::CdSettings cd;
        cd.criterion = moreau::Criterion::Fixed;
        cd.iterations = 3;
        (void)moreau::solveLocal(p, r, cd, 1);
        if (!p.solution.empty()) (void)moreau::naturalError(p, p.solution);
    } catch (const moreau::InputError&) {
    }
    return 0;
}
