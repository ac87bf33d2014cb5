#pragma once
/// Error types mapped to the exit statuses of INTERFACE.md.
#include <stdexcept>
#include <string>

namespace moreau {

/// Bad input: scene files, options, packing files. The message names the file,
/// the key and what is allowed. The command line exits with status 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The simulation diverged (NaN, exploding energy). Exit status 3.
struct DivergenceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace moreau
