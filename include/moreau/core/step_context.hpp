#pragma once
/// What every stage of a time step may read: time step, step number, seed.
#include <cstdint>

namespace moreau {

struct StepContext {
    double dt = 1.0;
    long step = 0;
    std::uint64_t seed = 1;
};

}  // namespace moreau
