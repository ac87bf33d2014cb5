#pragma once
/// Order statistics of points' coordinates without holding the points: the
/// k-th smallest x, y or z of n points that a pass can give again and again
/// (a lattice's grains made from their indices, a file read through), in a
/// few passes and memory independent of n. The values are those a sort of
/// all the coordinates would give, bit for bit.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

/// A rank along an axis: the k-th smallest (k from 0) of the points'
/// coordinates along `axis`.
struct OrderQuery {
    int axis = 0;
    std::size_t k = 0;
};

/// How processes that each pass over a share of the points (every point in
/// one share) combine a pass's tallies; every one calls them at the same
/// points (collectives). Without them, one process holds every point.
struct OrderCombine {
    /// Element by element: the sums, the largest values over the processes.
    std::function<void(std::vector<std::uint64_t>&)> sum;
    std::function<void(std::vector<double>&)> max;
    /// Every process's values, concatenated in the processes' order, on each.
    std::function<std::vector<double>(const std::vector<double>&)> gather;
};

namespace order_detail {

/// A query still open: the interval of values that holds its rank.
struct Open {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    double scale = 0.0;  ///< bins per unit of the coordinate, this pass
    std::size_t below = 0, inside = 0;  ///< points below lo, and within [lo, hi]
    bool done = false;
    std::vector<std::size_t> count;
    std::vector<double> least, most, few;
};

/// A pass's tallies of every open query, combined over the processes: the
/// bins' counts summed, their least and most values the extremes, the few
/// points every process's (each process's block: per query, a count then
/// the values).
inline void combineTallies(const OrderCombine& c, std::vector<Open>& open) {
    std::vector<std::uint64_t> counts;
    std::vector<double> ends, few;
    for (const Open& o : open) {
        if (o.done) continue;
        counts.insert(counts.end(), o.count.begin(), o.count.end());
        for (const double x : o.least) ends.push_back(-x);
        ends.insert(ends.end(), o.most.begin(), o.most.end());
        if (o.count.empty()) {
            few.push_back(static_cast<double>(o.few.size()));
            few.insert(few.end(), o.few.begin(), o.few.end());
        }
    }
    c.sum(counts);
    c.max(ends);
    const std::vector<double> all = few.empty() ? few : c.gather(few);
    std::size_t at = 0, end = 0;
    for (Open& o : open) {
        if (o.done) continue;
        for (std::size_t& k : o.count) k = static_cast<std::size_t>(counts[at++]);
        for (double& x : o.least) x = -ends[end++];
        for (double& x : o.most) x = ends[end++];
        if (o.count.empty()) o.few.clear();
    }
    for (std::size_t k = 0; k < all.size();)
        for (Open& o : open) {
            if (o.done || !o.count.empty()) continue;
            const auto m = static_cast<std::size_t>(all[k++]);
            o.few.insert(o.few.end(), all.begin() + static_cast<std::ptrdiff_t>(k),
                         all.begin() + static_cast<std::ptrdiff_t>(k + m));
            k += m;
        }
}

}  // namespace order_detail

/// The values of `queries` among the n points that pass(f) gives, calling
/// f(const Vec3&) for each point (in any order, the same points at each
/// call). Each pass narrows every open query's interval to the one of
/// kBins bins over it that holds its rank; an interval of one value, or of
/// at most kFew points (then sorted), gives the value. A coordinate in a
/// lower bin is below every one in a higher bin (the bin of a value is
/// monotone in it), so the counts below an interval stay exact. Points with
/// a non-finite coordinate are not expected.
/// `range`, where given, is every axis's smallest and largest coordinate
/// (saves the first pass).
/// `combine`, where given: pass(f) gives this process's share of the n
/// points (the range, where given, is every share's); the tallies are
/// combined after each pass (three collectives a pass), so every process
/// gets the same values.
template <class Pass>
std::vector<double> orderStatistics(std::size_t n, const std::vector<OrderQuery>& queries, Pass&& pass,
                                    const std::pair<Vec3, Vec3>* range = nullptr,
                                    const OrderCombine* combine = nullptr) {
    constexpr std::size_t kBins = 2048, kFew = 8192;
    using order_detail::Open;
    using order_detail::combineTallies;
    std::vector<Open> open(queries.size());
    std::vector<double> value(queries.size(), 0.0);
    if (queries.empty() || n == 0) return value;
    // The first pass: every axis's range.
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
    if (range) {
        lo = range->first;
        hi = range->second;
    } else {
        pass([&](const Vec3& x) {
            lo = lo.cwiseMin(x);
            hi = hi.cwiseMax(x);
        });
        if (combine) {
            std::vector<double> ends{-lo[0], -lo[1], -lo[2], hi[0], hi[1], hi[2]};
            combine->max(ends);
            lo = -Vec3(ends[0], ends[1], ends[2]);
            hi = Vec3(ends[3], ends[4], ends[5]);
        }
    }
    for (std::size_t q = 0; q < queries.size(); ++q) {
        open[q].lo = lo[queries[q].axis];
        open[q].hi = hi[queries[q].axis];
        open[q].inside = n;
    }
    for (bool left = true; left;) {
        left = false;
        for (std::size_t q = 0; q < queries.size(); ++q) {
            Open& o = open[q];
            if (o.done) continue;
            if (o.lo == o.hi) {
                value[q] = o.lo;
                o.done = true;
                continue;
            }
            left = true;
            o.few.clear();
            o.count.assign(o.inside <= kFew ? 0 : kBins, 0);
            o.scale = static_cast<double>(kBins) / (o.hi - o.lo);
            o.least.assign(o.count.size(), std::numeric_limits<double>::infinity());
            o.most.assign(o.count.size(), -std::numeric_limits<double>::infinity());
        }
        if (!left) break;
        pass([&](const Vec3& x) {
            for (std::size_t q = 0; q < queries.size(); ++q) {
                Open& o = open[q];
                const double v = x[queries[q].axis];
                if (o.done || !(v >= o.lo && v <= o.hi)) continue;
                if (o.count.empty()) {
                    o.few.push_back(v);
                    continue;
                }
                const std::size_t b = std::min(kBins - 1, static_cast<std::size_t>((v - o.lo) * o.scale));
                ++o.count[b];
                o.least[b] = std::min(o.least[b], v);
                o.most[b] = std::max(o.most[b], v);
            }
        });
        if (combine) combineTallies(*combine, open);
        for (std::size_t q = 0; q < queries.size(); ++q) {
            Open& o = open[q];
            if (o.done) continue;
            const std::size_t rank = queries[q].k - o.below;
            if (o.count.empty()) {
                std::nth_element(o.few.begin(), o.few.begin() + static_cast<std::ptrdiff_t>(rank), o.few.end());
                value[q] = o.few[rank];
                o.done = true;
                std::vector<double>().swap(o.few);
                continue;
            }
            std::size_t before = 0, b = 0;
            while (before + o.count[b] <= rank) before += o.count[b++];
            const bool narrowed = o.least[b] > o.lo || o.most[b] < o.hi;
            o.below += before;
            o.lo = o.least[b];
            o.hi = o.most[b];
            // An interval no bin narrows (a range too wide for its scale)
            // is sorted as it is.
            o.inside = narrowed ? o.count[b] : 0;
        }
    }
    return value;
}

}  // namespace moreau
