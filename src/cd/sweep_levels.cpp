#include "moreau/cd/sweep_levels.hpp"

#include <algorithm>

namespace moreau {

bool levelOrder(std::vector<std::int32_t>& seq, std::vector<std::int32_t>& levelStart,
                const std::vector<std::array<std::int32_t, 2>>& pairs, std::size_t numBodies, bool distinctRows,
                LevelScratch& scratch) {
    const std::size_t m = seq.size();
    levelStart.clear();
    // Bodies no update moves point at a sink slot reset to 0 after every row,
    // so the loop has no branches on them. One byte per body and per row keeps
    // both tables in the core's cache (the pairs are read ~32 rows ahead).
    // With repeated rows, a row whose bodies are both fixed still depends on
    // its own earlier update (its impulse): such rows chain through a slot
    // that is never reset. (A permutation never repeats a row.)
    const auto sink = static_cast<std::int32_t>(numBodies);
    const std::int32_t chain = distinctRows ? sink : sink + 1;
    scratch.next.assign(numBodies + 2, 0);
    scratch.level.resize(m);
    std::uint8_t* next = scratch.next.data();
    std::uint8_t* level = scratch.level.data();
    const std::array<std::int32_t, 2>* pr = pairs.data();
    const std::int32_t* order = seq.data();
    std::array<std::int32_t, kMaxSweepLevels + 2> count{};
    constexpr std::size_t kAhead = 32;
    unsigned maxLevel = 0;
    for (std::size_t k = m; k-- > 0;) {
        if (k >= kAhead) __builtin_prefetch(&pr[order[k - kAhead]]);
        const std::int32_t row = order[k];
        const std::int32_t b = pr[row][1] < 0 ? sink : pr[row][1];
        const std::int32_t a = pr[row][0] >= 0 ? pr[row][0] : b == sink ? chain : sink;
        const unsigned L = std::max(next[a], next[b]) + 1u;
        if (L > static_cast<unsigned>(kMaxSweepLevels)) return false;  // seq is untouched so far
        next[a] = static_cast<std::uint8_t>(L);
        next[b] = static_cast<std::uint8_t>(L);
        next[sink] = 0;
        level[distinctRows ? static_cast<std::size_t>(row) : k] = static_cast<std::uint8_t>(L);
        ++count[L];
        maxLevel = std::max(maxLevel, L);
    }
    // The highest level runs first: its rows have no earlier dependency left.
    levelStart.assign(maxLevel + 1, 0);
    std::array<std::int32_t, kMaxSweepLevels + 2> pos{};
    std::int32_t p = 0;
    for (unsigned L = maxLevel, i = 0; L >= 1; --L, ++i) {
        levelStart[i] = p;
        pos[L] = p;
        p += count[L];
    }
    levelStart[maxLevel] = p;
    if (distinctRows) {
        // A counting sort by level over the rows in ascending order: the order
        // itself is no longer needed (the levels hold all it says), so the
        // result overwrites it.
        std::int32_t* out = seq.data();
        for (std::size_t row = 0; row < m; ++row) out[pos[level[row]]++] = static_cast<std::int32_t>(row);
    } else {
        scratch.spare.resize(m);
        std::int32_t* out = scratch.spare.data();
        for (std::size_t k = 0; k < m; ++k) out[pos[level[k]]++] = order[k];
        seq.swap(scratch.spare);
    }
    return true;
}

}  // namespace moreau
