#include "moreau/analysis/cd_iteration.hpp"

#include <cmath>

namespace moreau {

double qRandomSweep() { return (4.0 * std::sqrt(std::exp(1.0)) - 5.0) / 2.0; }

double qOfOrder(SweepOrder order) {
    switch (order) {
        case SweepOrder::RandomSweep:
        case SweepOrder::RandomKeys: return qRandomSweep();  // a fresh uniform permutation per sweep
        case SweepOrder::ShuffleOnce:
        case SweepOrder::Fixed: return 1.0;
        case SweepOrder::RandomSequential: return 0.5;
        case SweepOrder::Jacobi: return 0.5;  // CD §3.1: q = 1/2 "corresponds to a parallel update"
    }
    return 0.0;
}

}  // namespace moreau
