#include "moreau/cd/sweep_schedule.hpp"

#include <algorithm>
#include <stdexcept>

#include "moreau/core/rng.hpp"

namespace moreau {

std::uint64_t sweepPriority(std::uint64_t seed, std::uint64_t step, int sweep, ContactKey key) {
    return Rng::stream(seed, step, static_cast<std::uint64_t>(sweep), key ^ 0x510e527fade682d1ULL).next();
}

void SweepSchedule::run(const SweepPlan& plan, const PassOrder&, RowPass& pass, std::vector<SolverBody>&) {
    if (plan.levelStart.empty()) {
        pass.run(plan.seq.data(), 0, plan.seq.size());
        return;
    }
    const std::size_t nLevels = plan.levelStart.size() - 1;
    constexpr std::int64_t kChunk = 512;
#pragma omp parallel
    for (std::size_t L = 0; L < nLevels; ++L) {
        const std::int64_t begin = plan.levelStart[L], end = plan.levelStart[L + 1];
        // Contacts of one level are independent: any split gives the same
        // bits, so threads take chunks as they come free (the updates' costs
        // vary with cache misses; an even static split idled ~5% at barriers).
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t c = begin; c < end; c += kChunk)
            pass.run(plan.seq.data(), static_cast<std::size_t>(c), static_cast<std::size_t>(std::min(end, c + kChunk)));
    }
}

void SweepSchedule::keyedSum(const std::vector<double>&, std::size_t, std::size_t, double*) {
    throw std::logic_error("SweepSchedule::keyedSum: this schedule sums blocks (keyedSums() is false)");
}

}  // namespace moreau
