#pragma once
/// Dependency levels of one Gauss–Seidel sweep, for running it on several
/// threads with the serial sweep's bits.
///
/// A sweep updates contact rows in a given order; each update reads and writes
/// the velocities of the row's two bodies. Two updates sharing a body must run
/// in the order's sequence; updates with disjoint bodies commute exactly (each
/// reads and writes only its own bodies). levelOrder() regroups the order into
/// levels of pairwise body-disjoint rows such that running the levels one after
/// the other (any order, any split among threads within a level) updates every
/// body in the same sequence as the serial sweep: the same bits.
///
/// Levels are counted from the end of the order ("reverse" levels): a row's
/// level is one more than the highest level of the later rows sharing a mobile
/// body with it, and the highest level runs first. This is the same number of
/// levels as counting from the front (the longest dependency chain). With
/// distinct rows (a permutation), each level is emitted in ascending row
/// order: a counting sort on a one-byte level per row, written over the order
/// itself, so the whole plan costs 1 byte per row and 1 per body beyond the
/// order, and the sweeps walk each level's rows (and, as detection sorts
/// contacts by body, their bodies) in memory order.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace moreau {

/// Scratch of levelOrder, reusable between calls.
struct LevelScratch {
    std::vector<std::uint8_t> level;  ///< per row (per position with repeated rows)
    std::vector<std::uint8_t> next;   ///< per body + two slots: highest level seen so far
    std::vector<std::int32_t> spare;  ///< output buffer, only with repeated rows
};

/// Most levels levelOrder() handles (levels are one byte). Dense packings need
/// ~30; a mobile body touching more rows than this (a piston on hundreds of
/// grains) exceeds it, and the sweep then runs serially.
constexpr int kMaxSweepLevels = 255;

/// Regroups `seq` (rows in update order; a row may repeat when
/// `distinctRows` is false) into levels: on return seq holds the same entries,
/// level by level, and level L is seq[levelStart[L], levelStart[L+1]).
/// pairs[row] holds the row's two bodies, −1 for a body no update ever moves
/// (a fixed wall: it creates no dependency). Returns false, leaving seq as it
/// was and levelStart empty, when the order needs more than kMaxSweepLevels
/// levels.
bool levelOrder(std::vector<std::int32_t>& seq, std::vector<std::int32_t>& levelStart,
                const std::vector<std::array<std::int32_t, 2>>& pairs, std::size_t numBodies, bool distinctRows,
                LevelScratch& scratch);

}  // namespace moreau
