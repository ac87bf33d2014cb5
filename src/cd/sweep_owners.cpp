#include "moreau/cd/sweep_owners.hpp"

#include <algorithm>

namespace moreau {

void splitOwners(OwnerSplit& split, const std::vector<std::array<std::int32_t, 2>>& pairs, std::size_t numBodies,
                 int owners, const std::vector<double>& cuts) {
    const std::size_t m = pairs.size();
    const auto T = static_cast<std::size_t>(owners);
    split.owners = owners;
    // Rows per mobile body, for the hubs.
    std::vector<std::uint32_t> degree(numBodies, 0);
    for (const auto& p : pairs)
        for (const std::int32_t x : p)
            if (x >= 0) ++degree[static_cast<std::size_t>(x)];
    // Owners: ranges of rows, except a hub's rows (last owner).
    std::vector<std::size_t> first(T + 1, m);  // owner t's first row
    for (std::size_t t = 0; t < T; ++t)
        first[t] = cuts.size() == T + 1 ? std::min(m, static_cast<std::size_t>(cuts[t] * static_cast<double>(m))) : t * m / T;
    first[0] = 0;
    split.tag.resize(m);
    for (std::size_t c = 0, t = 0; c < m; ++c) {
        while (t + 1 < T && c >= first[t + 1]) ++t;
        bool hub = false;
        for (const std::int32_t x : pairs[c]) hub = hub || (x >= 0 && degree[static_cast<std::size_t>(x)] > kHubRows);
        split.tag[c] = static_cast<std::uint8_t>(hub ? T - 1 : t);
    }
    // Shared bodies: touched by rows of two owners or more (compact ids).
    constexpr std::int32_t kUnseen = -1, kShared = -2;
    std::vector<std::int32_t> id(numBodies, kUnseen);  // first owner seen, then kShared, then the compact id
    for (std::size_t c = 0; c < m; ++c)
        for (const std::int32_t x : pairs[c]) {
            if (x < 0) continue;
            std::int32_t& s = id[static_cast<std::size_t>(x)];
            const std::int32_t t = split.tag[c];
            if (s == kUnseen) s = t;
            else if (s != t) s = kShared;
        }
    split.numShared = 0;
    for (std::int32_t& s : id) s = s == kShared ? split.numShared++ : kUnseen;
    split.syncRows.clear();
    split.rowsOf.assign(T, 0);
    split.syncOf.assign(T, 0);
    for (std::size_t c = 0; c < m; ++c) {
        const std::int32_t t = split.tag[c];
        ++split.rowsOf[static_cast<std::size_t>(t)];
        OwnerSplit::SyncRow r{static_cast<std::int32_t>(c), {-1, -1}, t};
        for (int j = 0; j < 2; ++j)
            if (pairs[c][static_cast<std::size_t>(j)] >= 0) r.shared[j] = id[static_cast<std::size_t>(pairs[c][static_cast<std::size_t>(j)])];
        if (r.shared[0] < 0 && r.shared[1] < 0) continue;
        split.tag[c] |= OwnerSplit::kSyncTag;
        ++split.syncOf[static_cast<std::size_t>(t)];
        split.syncRows.push_back(r);
    }
}

namespace {
void sizePlan(OwnerPlan& plan, std::size_t m, const OwnerSplit& split) {
    const auto T = static_cast<std::size_t>(split.owners);
    plan.rows.resize(m);
    plan.waits.resize(split.syncRows.size());
    plan.rowStart.assign(T + 1, 0);
    plan.waitStart.assign(T + 1, 0);
    for (std::size_t t = 0; t < T; ++t) {
        plan.rowStart[t + 1] = plan.rowStart[t] + split.rowsOf[t];
        plan.waitStart[t + 1] = plan.waitStart[t] + split.syncOf[t];
    }
}
}  // namespace

void planOwners(OwnerPlan& plan, const std::vector<std::int32_t>& order, const OwnerSplit& split,
                OwnerPlanScratch& scratch) {
    const std::size_t m = order.size();
    sizePlan(plan, m, split);
    std::array<std::int32_t, kMaxOwners> rowAt{}, waitAt{};
    std::copy(plan.rowStart.begin(), plan.rowStart.end() - 1, rowAt.begin());
    std::copy(plan.waitStart.begin(), plan.waitStart.end() - 1, waitAt.begin());
    scratch.count.assign(static_cast<std::size_t>(split.numShared), 0);
    scratch.lastSlot.assign(static_cast<std::size_t>(split.numShared), -1);
    scratch.lastOwner.resize(static_cast<std::size_t>(split.numShared));
    std::int32_t* rows = plan.rows.data();
    OwnerPlan::Wait* waits = plan.waits.data();
    const OwnerSplit::SyncRow* sync = split.syncRows.data();
    std::uint32_t* seen = scratch.count.data();
    std::int32_t* lastSlot = scratch.lastSlot.data();
    std::uint8_t* lastOwner = scratch.lastOwner.data();
    for (std::size_t k = 0; k < m; ++k) {
        const std::int32_t e = order[k];
        if (e >= 0) {
            rows[rowAt[static_cast<std::size_t>(e >> 27)]++] = e & 0x7ffffff;
            continue;
        }
        // A sync row: its rank among each shared body's rows so far; a wait
        // where the body's last row has another owner, who then stores.
        const OwnerSplit::SyncRow& r = sync[e & 0x7fffffff];
        const auto t = static_cast<std::size_t>(r.owner);
        rows[rowAt[t]++] = static_cast<std::int32_t>(0x80000000u | static_cast<std::uint32_t>(r.row));
        const std::int32_t index = waitAt[t]++;
        OwnerPlan::Wait& w = waits[index];
        for (int j = 0; j < 2; ++j) {
            w.shared[j] = r.shared[j];
            w.rank[j] = 0;
            if (r.shared[j] < 0) continue;
            const auto id = static_cast<std::size_t>(r.shared[j]);
            w.rank[j] = seen[id]++;
            const std::int32_t slot = lastSlot[id];
            if (slot >= 0 && lastOwner[id] != t) {
                w.rank[j] |= OwnerPlan::kWait;
                waits[slot / 2].rank[slot % 2] |= OwnerPlan::kStore;
            }
            lastSlot[id] = 2 * index + j;
            lastOwner[id] = static_cast<std::uint8_t>(t);
        }
    }
}

}  // namespace moreau
