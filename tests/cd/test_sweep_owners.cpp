/// Owner-split sweeps (sweep_owners.hpp): every row goes to one owner, each
/// owner's rows keep the sweep's order, and the waits of the rows at shared
/// bodies suffice for any interleaving of the owners to update every body in
/// the sweep's sequence. The solver's owner path gives the serial bits, also
/// when fewer threads than owners run it.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include "moreau/analysis/observables.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/cd/sweep_owners.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/sim/simulation.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;

namespace {

using Pairs = std::vector<std::array<std::int32_t, 2>>;

/// Rows sorted by body as detection gives them, about one body in ten fixed
/// (−1), and body 5 on 100 rows (a hub: more than kHubRows).
Pairs sortedPairs(std::size_t rows, std::size_t numBodies, std::uint64_t seed) {
    Rng rng(seed);
    std::set<std::array<std::int32_t, 2>> keys;
    while (keys.size() < rows) {
        std::int32_t a = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(numBodies)));
        // Mostly near neighbours (as in a packing), some far.
        std::int32_t b = rng.below(8) == 0 ? static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(numBodies)))
                                           : a + 1 + static_cast<std::int32_t>(rng.below(40));
        if (keys.size() < 100) a = 5, b = 6 + static_cast<std::int32_t>(keys.size()) * 3;
        if (b >= static_cast<std::int32_t>(numBodies) || a == b) continue;
        keys.insert({std::min(a, b), std::max(a, b)});
    }
    Pairs pairs(keys.begin(), keys.end());
    for (auto& p : pairs)
        for (auto& body : p)
            if (body % 10 == 0) body = -1;
    return pairs;
}

/// The sweep's rows from the order of entries.
std::vector<std::int32_t> decode(const std::vector<std::int32_t>& order, const OwnerSplit& split) {
    std::vector<std::int32_t> rows;
    for (std::int32_t e : order)
        rows.push_back(e >= 0 ? (e & 0x7ffffff) : split.syncRows[static_cast<std::size_t>(e & 0x7fffffff)].row);
    return rows;
}

/// Runs the plans, one sweep after another with a barrier and counts from
/// zero between them (as sweepOwners does), the way any schedule of the
/// owners may: each step, an owner whose next row may run moves one row.
/// Returns each body's rows in the order they ran, none where the owners
/// deadlock. Odd seeds: the lowest owner runs whenever it may (the others
/// only as far as it needs); even seeds pick at random.
std::vector<std::vector<std::int32_t>> runAnyway(const std::vector<OwnerPlan>& plans, const OwnerSplit& split,
                                                 const Pairs& pairs, std::size_t numBodies, std::uint64_t seed) {
    const auto T = static_cast<std::size_t>(split.owners);
    std::vector<std::uint32_t> finished(static_cast<std::size_t>(split.numShared), 0);
    std::vector<std::size_t> sweepOf(T, 0), at(T), waitAt(T);
    for (std::size_t t = 0; t < T; ++t)
        at[t] = static_cast<std::size_t>(plans[0].rowStart[t]), waitAt[t] = static_cast<std::size_t>(plans[0].waitStart[t]);
    std::vector<std::vector<std::int32_t>> perBody(numBodies);
    Rng rng(seed);
    auto runnable = [&](std::size_t t) {
        if (sweepOf[t] == plans.size()) return false;
        const OwnerPlan& plan = plans[sweepOf[t]];
        if (at[t] == static_cast<std::size_t>(plan.rowStart[t + 1])) return false;
        if (plan.rows[at[t]] >= 0) return true;
        const OwnerPlan::Wait& w = plan.waits[waitAt[t]];
        for (int j = 0; j < 2; ++j)
            if ((w.rank[j] & OwnerPlan::kWait) &&
                finished[static_cast<std::size_t>(w.shared[j])] != (w.rank[j] & OwnerPlan::kRank))
                return false;
        return true;
    };
    for (;;) {
        std::vector<std::size_t> ready;
        for (std::size_t t = 0; t < T; ++t)
            if (runnable(t)) ready.push_back(t);
        if (ready.empty()) {
            // Every owner done with its current plan, or blocked.
            bool allDone = true;
            for (std::size_t t = 0; t < T; ++t)
                allDone = allDone && sweepOf[t] < plans.size() &&
                          at[t] == static_cast<std::size_t>(plans[sweepOf[t]].rowStart[t + 1]);
            if (!allDone) break;
            if (sweepOf[0] + 1 == plans.size()) {
                for (auto& s : sweepOf) s = plans.size();
                break;
            }
            // A barrier: all go on to the next plan together.
            for (std::size_t t = 0; t < T; ++t) {
                ++sweepOf[t];
                at[t] = static_cast<std::size_t>(plans[sweepOf[t]].rowStart[t]);
                waitAt[t] = static_cast<std::size_t>(plans[sweepOf[t]].waitStart[t]);
            }
            std::fill(finished.begin(), finished.end(), 0u);
            continue;
        }
        const std::size_t t = seed % 2 == 1 ? ready.front() : ready[rng.below(static_cast<std::uint32_t>(ready.size()))];
        const OwnerPlan& plan = plans[sweepOf[t]];
        const std::int32_t e = plan.rows[at[t]++];
        const std::int32_t row = e & 0x7fffffff;
        for (std::int32_t body : pairs[static_cast<std::size_t>(row)])
            if (body >= 0) perBody[static_cast<std::size_t>(body)].push_back(row);
        if (e < 0) {
            const OwnerPlan::Wait& w = plan.waits[waitAt[t]++];
            for (int j = 0; j < 2; ++j)
                if (w.rank[j] & OwnerPlan::kStore)
                    finished[static_cast<std::size_t>(w.shared[j])] = (w.rank[j] & OwnerPlan::kRank) + 1;
        }
    }
    for (std::size_t t = 0; t < T; ++t)
        if (sweepOf[t] != plans.size()) return {};  // a deadlock: no result
    return perBody;
}

}  // namespace

TEST_SUITE("cd") {
    TEST_CASE("owner split: each owner keeps the sweep's order, shared bodies wait their turn, hubs stay whole") {
        constexpr std::size_t kBodies = 600, kRows = 2500;
        const Pairs pairs = sortedPairs(kRows, kBodies, 11);
        for (int owners : {2, 3, 4}) {
            for (const std::vector<double>& cuts :
                 {std::vector<double>{}, owners == 3 ? std::vector<double>{0.0, 0.1, 0.15, 1.0} : std::vector<double>{}}) {
                CAPTURE(owners);
                CAPTURE(cuts.size());
                OwnerSplit split;
                splitOwners(split, pairs, kBodies, owners, cuts);
                // Owners of the rows; bodies touched by two owners or more are shared.
                std::vector<std::set<int>> ownersOf(kBodies);
                for (std::size_t c = 0; c < kRows; ++c)
                    for (std::int32_t body : pairs[c])
                        if (body >= 0) ownersOf[static_cast<std::size_t>(body)].insert(split.tag[c] & 0x7f);
                std::int32_t shared = 0;
                for (const auto& s : ownersOf) shared += s.size() > 1 ? 1 : 0;
                CHECK(split.numShared == shared);
                CHECK(shared > 0);
                // The hub's rows all go to the last owner; it is not shared.
                CHECK(ownersOf[5] == std::set<int>{owners - 1});
                if (cuts.size() == 4) CHECK(split.rowsOf[0] < static_cast<std::int32_t>(kRows) / 5);

                // Three sweeps, each with counts from zero.
                std::vector<OwnerPlan> alone(3);
                std::vector<std::vector<std::int32_t>> expected(kBodies);
                for (std::uint64_t sweep = 0; sweep < 3; ++sweep) {
                    std::vector<std::int32_t> order;
                    std::int32_t seen = 0;
                    for (std::size_t c = 0; c < kRows; ++c) order.push_back(split.entry(static_cast<std::int32_t>(c), seen));
                    Rng rng(100 + sweep);
                    rng.shuffle(std::span<std::int32_t>(order));
                    const std::vector<std::int32_t> sequence = decode(order, split);
                    OwnerPlan& plan = alone[sweep];
                    OwnerPlanScratch scratch;
                    planOwners(plan, order, split, scratch);
                    // Every row once, with its owner, in the sweep's order.
                    std::vector<std::int64_t> position(kRows, -1);
                    for (std::size_t k = 0; k < kRows; ++k) position[static_cast<std::size_t>(sequence[k])] = static_cast<std::int64_t>(k);
                    std::vector<int> times(kRows, 0);
                    for (int t = 0; t < owners; ++t) {
                        std::int64_t last = -1;
                        std::int32_t syncRows = 0;
                        for (std::int32_t k = plan.rowStart[static_cast<std::size_t>(t)]; k < plan.rowStart[static_cast<std::size_t>(t) + 1]; ++k) {
                            const std::int32_t e = plan.rows[static_cast<std::size_t>(k)];
                            const auto row = static_cast<std::size_t>(e & 0x7fffffff);
                            ++times[row];
                            CHECK((split.tag[row] & 0x7f) == t);
                            CHECK(position[row] > last);
                            last = position[row];
                            const bool touchesShared = std::any_of(pairs[row].begin(), pairs[row].end(), [&](std::int32_t b) {
                                return b >= 0 && ownersOf[static_cast<std::size_t>(b)].size() > 1;
                            });
                            CHECK((e < 0) == touchesShared);
                            syncRows += e < 0 ? 1 : 0;
                        }
                        CHECK(syncRows == plan.waitStart[static_cast<std::size_t>(t) + 1] - plan.waitStart[static_cast<std::size_t>(t)]);
                    }
                    CHECK(std::all_of(times.begin(), times.end(), [](int n) { return n == 1; }));
                    for (std::int32_t row : sequence)
                        for (std::int32_t body : pairs[static_cast<std::size_t>(row)])
                            if (body >= 0) expected[static_cast<std::size_t>(body)].push_back(row);
                }
                // Any schedule the waits allow updates each body in the
                // sweeps' sequence (a barrier and counts from zero between
                // sweeps, as sweepOwners runs them).
                for (std::uint64_t schedule = 0; schedule < 4; ++schedule)
                    CHECK(runAnyway(alone, split, pairs, kBodies, 7 + schedule) == expected);
            }
        }
    }

    TEST_CASE("owner split: a plan with its waits removed lets some schedule break a body's sequence") {
        // The check above can fail: without the waits, a random schedule
        // updates some shared body out of order.
        constexpr std::size_t kBodies = 600, kRows = 2500;
        const Pairs pairs = sortedPairs(kRows, kBodies, 12);
        OwnerSplit split;
        splitOwners(split, pairs, kBodies, 2, {});
        std::vector<std::int32_t> order;
        std::int32_t seen = 0;
        for (std::size_t c = 0; c < kRows; ++c) order.push_back(split.entry(static_cast<std::int32_t>(c), seen));
        Rng rng(5);
        rng.shuffle(std::span<std::int32_t>(order));
        std::vector<OwnerPlan> plans(1);
        OwnerPlanScratch scratch;
        planOwners(plans[0], order, split, scratch);
        std::vector<std::vector<std::int32_t>> expected(kBodies);
        for (std::int32_t row : decode(order, split))
            for (std::int32_t body : pairs[static_cast<std::size_t>(row)])
                if (body >= 0) expected[static_cast<std::size_t>(body)].push_back(row);
        CHECK(runAnyway(plans, split, pairs, kBodies, 0) == expected);
        for (auto& w : plans[0].waits) w.rank[0] &= OwnerPlan::kRank, w.rank[1] &= OwnerPlan::kRank;
        bool broken = false;
        for (std::uint64_t schedule = 0; schedule < 5 && !broken; ++schedule)
            broken = runAnyway(plans, split, pairs, kBodies, schedule) != expected;
        CHECK(broken);
    }

    TEST_CASE("owner sweeps give the serial bits, also with fewer threads than owners and with a hub") {
        // A mobile lid on ~324 grains (a hub) over a lattice on a floor.
        auto run = [](int threads, CdSettings::Parallel parallel, bool nested, bool& owned) {
            World w = moreau::test::latticeOnFloor(3);
            w.addWall("lid", moreau::test::planeShape(-Vec3::UnitZ(), 0.5), Vec3(0, 0, 17.5), true, 50.0,
                      {false, false, true});
            CdSettings cs;
            cs.iterations = 6;
            cs.parallel = parallel;
            Simulation sim = moreau::test::cdSimulation(std::move(w), 0.01, cs);
            owned = true;
            auto steps = [&] {
                omp_set_num_threads(threads);
                for (int s = 0; s < 3; ++s) {
                    sim.advance();
                    owned = owned && sim.cd().ownerSplit();
                }
            };
            if (nested) {
                // Inside an active region of two threads, the solver's own
                // region gets one thread: it runs every owner in turn.
                const int levels = omp_get_max_active_levels();
                omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
                {
#pragma omp master
                    steps();
                }
                omp_set_max_active_levels(levels);
            } else {
                steps();
            }
            omp_set_num_threads(omp_get_num_procs());
            return stateHash(sim.world());
        };
        bool owned = false;
        const auto serial = run(1, CdSettings::Parallel::Owners, false, owned);
        CHECK(!owned);
        CHECK(run(2, CdSettings::Parallel::Owners, false, owned) == serial);
        CHECK(owned);
        CHECK(run(3, CdSettings::Parallel::Owners, false, owned) == serial);
        CHECK(owned);
        CHECK(run(3, CdSettings::Parallel::Owners, true, owned) == serial);
        CHECK(owned);
        CHECK(run(2, CdSettings::Parallel::Levels, false, owned) == serial);
        CHECK(!owned);
    }
}
