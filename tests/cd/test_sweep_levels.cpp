/// Dependency levels of a sweep (sweep_levels.hpp): every level touches
/// disjoint mobile bodies, every body sees its rows in the order's sequence,
/// and the fallback beyond 255 levels leaves the order as it was.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "moreau/analysis/observables.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/cd/sweep_levels.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;

namespace {

using Pairs = std::vector<std::array<std::int32_t, 2>>;

/// Checks that `leveled` (with levelStart) is a valid regrouping of `order`:
/// same entries, levels body-disjoint, each body's rows (and each row's
/// repeats) in the order's sequence, rows ascending within a level when
/// `distinct`, and as many levels as the longest dependency chain.
void checkLevels(const std::vector<std::int32_t>& order, const std::vector<std::int32_t>& leveled,
                 const std::vector<std::int32_t>& levelStart, const Pairs& pairs, std::size_t numBodies,
                 bool distinct) {
    REQUIRE(leveled.size() == order.size());
    REQUIRE(!levelStart.empty());
    CHECK(levelStart.front() == 0);
    CHECK(static_cast<std::size_t>(levelStart.back()) == order.size());
    auto a = order, b = leveled;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    CHECK(a == b);
    // Per body (and per row, for repeats): its sequence of occurrences.
    auto sequences = [&](const std::vector<std::int32_t>& seq) {
        std::vector<std::vector<std::int32_t>> perBody(numBodies), perRow(pairs.size());
        for (std::int32_t row : seq) {
            for (std::int32_t body : pairs[static_cast<std::size_t>(row)])
                if (body >= 0) perBody[static_cast<std::size_t>(body)].push_back(row);
            perRow[static_cast<std::size_t>(row)].push_back(row);
        }
        return std::make_pair(perBody, perRow);
    };
    CHECK(sequences(order) == sequences(leveled));  // perRow only counts repeats: same multiset
    std::vector<std::int64_t> seenAt(numBodies, -1);
    for (std::size_t L = 0; L + 1 < levelStart.size(); ++L) {
        CHECK(levelStart[L] < levelStart[L + 1]);  // no empty level
        for (std::int32_t k = levelStart[L]; k < levelStart[L + 1]; ++k) {
            const std::int32_t row = leveled[static_cast<std::size_t>(k)];
            if (distinct && k > levelStart[L]) CHECK(leveled[static_cast<std::size_t>(k) - 1] < row);
            for (std::int32_t body : pairs[static_cast<std::size_t>(row)]) {
                if (body < 0) continue;
                CHECK(seenAt[static_cast<std::size_t>(body)] != static_cast<std::int64_t>(L));
                seenAt[static_cast<std::size_t>(body)] = static_cast<std::int64_t>(L);
            }
        }
    }
    // Longest chain, counted from the front with rows of fixed-only bodies
    // chained to their own repeats.
    std::vector<int> lastBody(numBodies, 0), lastRow(pairs.size(), 0);
    int longest = 0;
    for (std::int32_t row : order) {
        int L = 0;
        const auto& p = pairs[static_cast<std::size_t>(row)];
        for (std::int32_t body : p)
            if (body >= 0) L = std::max(L, lastBody[static_cast<std::size_t>(body)]);
        if (p[0] < 0 && p[1] < 0 && !distinct) L = std::max(L, lastRow[static_cast<std::size_t>(row)]);
        ++L;
        for (std::int32_t body : p)
            if (body >= 0) lastBody[static_cast<std::size_t>(body)] = L;
        lastRow[static_cast<std::size_t>(row)] = L;
        longest = std::max(longest, L);
    }
    CHECK(levelStart.size() == static_cast<std::size_t>(longest) + 1);
}

/// Random rows between `numBodies` bodies; about one body in ten is fixed (−1).
Pairs randomPairs(std::size_t rows, std::size_t numBodies, std::uint64_t seed) {
    Rng rng(seed);
    Pairs pairs(rows);
    for (auto& p : pairs) {
        do {
            for (auto& body : p) body = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(numBodies)));
        } while (p[0] == p[1]);  // a contact joins two bodies
        for (auto& body : p)
            if (body % 10 == 0) body = -1;
    }
    return pairs;
}

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("sweep levels: a random permutation regroups into body-disjoint levels in ascending row order") {
        for (std::uint64_t seed : {1u, 2u, 3u}) {
            const std::size_t numBodies = 500 * seed, rows = 1500 * seed;
            const Pairs pairs = randomPairs(rows, numBodies, seed);
            std::vector<std::int32_t> order(rows);
            std::iota(order.begin(), order.end(), 0);
            Rng rng(seed + 10);
            rng.shuffle(std::span<std::int32_t>(order));
            std::vector<std::int32_t> seq = order, levelStart;
            LevelScratch scratch;
            REQUIRE(levelOrder(seq, levelStart, pairs, numBodies, true, scratch));
            checkLevels(order, seq, levelStart, pairs, numBodies, true);
            CHECK(levelStart.size() > 3);  // the check above covers more than a trivial case
        }
    }

    TEST_CASE("sweep levels: repeated rows (random sequential) keep their sequence, fixed-only rows included") {
        const std::size_t numBodies = 300, rows = 400;
        Pairs pairs = randomPairs(rows, numBodies, 9);
        pairs[7] = {-1, -1};  // a row whose bodies never move: it still depends on its own repeats
        pairs[8] = {-1, -1};
        Rng rng(4);
        std::vector<std::int32_t> order(2000);
        for (auto& row : order) row = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(rows)));
        for (std::size_t k = 0; k < 12; ++k) order[k * 100] = 7;
        order[1] = 8;
        std::vector<std::int32_t> seq = order, levelStart;
        LevelScratch scratch;
        REQUIRE(levelOrder(seq, levelStart, pairs, numBodies, false, scratch));
        checkLevels(order, seq, levelStart, pairs, numBodies, false);
        // Row 7's twelve updates sit in twelve different levels.
        std::vector<std::size_t> levelsOf7;
        for (std::size_t L = 0; L + 1 < levelStart.size(); ++L)
            for (std::int32_t k = levelStart[L]; k < levelStart[L + 1]; ++k)
                if (seq[static_cast<std::size_t>(k)] == 7) levelsOf7.push_back(L);
        CHECK(levelsOf7.size() == static_cast<std::size_t>(std::count(order.begin(), order.end(), 7)));
        CHECK(levelsOf7.size() >= 12);
        CHECK(std::adjacent_find(levelsOf7.begin(), levelsOf7.end()) == levelsOf7.end());
    }

    TEST_CASE("sweep levels: 255 levels fit, 256 leave the order untouched") {
        // Body 0 is on every row: a chain as long as the order.
        for (std::size_t rows : {255u, 256u}) {
            Pairs pairs(rows);
            for (std::size_t r = 0; r < rows; ++r) pairs[r] = {0, static_cast<std::int32_t>(r + 1)};
            std::vector<std::int32_t> order(rows);
            std::iota(order.rbegin(), order.rend(), 0);
            std::vector<std::int32_t> seq = order, levelStart = {1, 2, 3};
            LevelScratch scratch;
            const bool ok = levelOrder(seq, levelStart, pairs, rows + 1, true, scratch);
            CHECK(ok == (rows <= static_cast<std::size_t>(kMaxSweepLevels)));
            if (ok) {
                checkLevels(order, seq, levelStart, pairs, rows + 1, true);
                CHECK(seq == order);  // one row per level, in the order's sequence
            } else {
                CHECK(seq == order);
                CHECK(levelStart.empty());
            }
        }
    }

    TEST_CASE("parallel sweeps with a mobile lid on more grains than levels fit are bit-identical to serial") {
        // The lid touches ~324 grains: each sweep needs more than 255 levels
        // and runs serially on the parallel path, with the same bits.
        auto run = [](int threads, double& levels) {
            omp_set_num_threads(threads);
            World w = moreau::test::latticeOnFloor(3);
            w.addWall("lid", moreau::test::planeShape(-Vec3::UnitZ(), 0.5), Vec3(0, 0, 17.5), true, 50.0,
                      {false, false, true});
            CdSettings cs;
            cs.iterations = 6;
            Simulation sim = moreau::test::cdSimulation(std::move(w), 0.01, cs);
            levels = 0.0;
            for (int s = 0; s < 2; ++s) {
                sim.advance();
                levels += sim.cd().levelsPerSweep();
            }
            return stateHash(sim.world());
        };
        double levels1 = 0.0, levels2 = 0.0;
        const auto h1 = run(1, levels1);
        const auto h2 = run(2, levels2);
        omp_set_num_threads(omp_get_num_procs());
        CHECK(h1 == h2);
        CHECK(levels1 == 0.0);  // serial path: no levels
        if (omp_get_num_procs() > 1) CHECK(levels2 == 0.0);  // every sweep fell back to the serial order
    }
}
