#pragma once
/// Owner-split sweeps: one Gauss–Seidel sweep in a random order, run on
/// several threads with the serial sweep's bits, without dependency levels.
///
/// Each row belongs to one thread (its owner: the rows cut into equal index
/// ranges, as detection sorts them by body, so an owner's rows share bodies
/// among themselves). Each owner walks its own rows in the sweep's order.
/// Most bodies are touched by one owner's rows only, so their updates keep
/// the sweep's sequence without any synchronisation. A body touched by rows
/// of several owners (a *shared* body, near the cuts) must see its rows in
/// the sweep's sequence too. The plan gives every row touching a shared body
/// its rank among that body's rows in the sweep. Where the body's previous
/// row belongs to another owner, the row waits until the body's count of
/// finished rows equals its rank, and that previous row sets the count
/// (between rows of one owner, the thread's own order suffices). Rows of one body are far
/// apart in a random order (tens of thousands of positions on a large
/// packing), so a thread rarely waits. The earliest unfinished row of the
/// sweep can always run, so the sweep always finishes.
///
/// Against dependency levels (sweep_levels.hpp), an owner's rows come in
/// random order as in the serial sweep, and there is no barrier per level.
/// The plan is one pass over the shuffled order with no per-body table for
/// most rows. (On the 2-core machine the two schemes measured alike, and
/// the levels' dynamic chunks cope better with a slow core: `cd.parallel`
/// keeps levels as the default; docs/contact-dynamics.md.)
///
/// A mobile body touching more than kHubRows rows (a piston on hundreds of
/// grains) is not shared: all its rows go to the last owner, so that no
/// thread waits on it at every few rows.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace moreau {

/// Most owners (threads) a split holds: the owner sits in 4 bits of an
/// order entry (OwnerSplit::entry).
constexpr int kMaxOwners = 16;
/// Most rows a split holds (27 bits of an order entry).
constexpr std::size_t kMaxOwnerRows = std::size_t{1} << 27;
/// A mobile body on more rows than this keeps them all with one owner.
constexpr std::uint32_t kHubRows = 64;

/// Per step: each row's owner and the rows that touch shared bodies.
struct OwnerSplit {
    /// A row touching at least one shared body.
    struct SyncRow {
        std::int32_t row;
        std::int32_t shared[2];  ///< compact id of its body a / b if shared, else −1
        std::int32_t owner;
    };
    int owners = 0;
    std::vector<std::uint8_t> tag;  ///< per row: owner, | kSyncTag for a sync row
    std::vector<SyncRow> syncRows;  ///< the sync rows, ascending
    std::vector<std::int32_t> rowsOf, syncOf;  ///< rows and sync rows per owner
    std::int32_t numShared = 0;
    static constexpr std::uint8_t kSyncTag = 0x80;

    /// The order entry of `row` (rows taken in ascending order; `syncSeen`
    /// counts the sync rows passed): a sync row is its ordinal with bit 31
    /// set, any other row its index with its owner in bits 27–30.
    std::int32_t entry(std::int32_t row, std::int32_t& syncSeen) const {
        const std::uint8_t t = tag[static_cast<std::size_t>(row)];
        if (t & kSyncTag) return static_cast<std::int32_t>(0x80000000u | static_cast<std::uint32_t>(syncSeen++));
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(t) << 27 | static_cast<std::uint32_t>(row));
    }
};

/// Splits rows 0..m among `owners` threads. pairs[row] holds the row's two
/// bodies, −1 for a body the solver never moves (no dependency). Owner t
/// takes the rows from cuts[t]·m up to cuts[t+1]·m (fractions, ascending
/// from 0 to 1; equal ranges where `cuts` has not owners + 1 entries).
void splitOwners(OwnerSplit& split, const std::vector<std::array<std::int32_t, 2>>& pairs, std::size_t numBodies,
                 int owners, const std::vector<double>& cuts);

/// One sweep's work per owner.
struct OwnerPlan {
    /// A sync row's wait: per side, the shared body (or −1) and the row's
    /// rank among that body's rows in the sweep (bits 0–29), with kWait
    /// where the body's previous row belongs to another owner (wait until
    /// the body's count of finished rows is the rank) and kStore where its
    /// next row does (set the count to rank + 1 after the update). Between
    /// rows of one owner the thread's own order suffices.
    struct Wait {
        std::int32_t shared[2];
        std::uint32_t rank[2];
    };
    static constexpr std::uint32_t kWait = 1u << 31, kStore = 1u << 30, kRank = kStore - 1;
    std::vector<std::int32_t> rows;       ///< owner t's rows at [rowStart[t], rowStart[t+1]), in sweep order; bit 31 on sync rows
    std::vector<std::int32_t> rowStart;
    std::vector<Wait> waits;              ///< owner t's sync rows' waits at [waitStart[t], …), in its order
    std::vector<std::int32_t> waitStart;
};

/// Scratch of planOwners, per shared body.
struct OwnerPlanScratch {
    std::vector<std::uint32_t> count;     ///< its rows seen so far
    std::vector<std::int32_t> lastSlot;   ///< 2 × wait index + side of its last row, −1 before its first
    std::vector<std::uint8_t> lastOwner;  ///< the owner of its last row
};

/// The plan of one sweep from its order of entries (OwnerSplit::entry,
/// shuffled).
void planOwners(OwnerPlan& plan, const std::vector<std::int32_t>& order, const OwnerSplit& split,
                OwnerPlanScratch& scratch);

}  // namespace moreau
