#include <doctest/doctest.h>

#include <algorithm>
#include <barrier>
#include <bit>
#include <cstdint>
#include <cmath>
#include <thread>
#include <vector>

#include "moreau/core/order_statistics.hpp"
#include "moreau/core/rng.hpp"

using namespace moreau;

namespace {

/// Processes as threads: OrderCombine's collectives through a barrier.
class ThreadShares {
public:
    explicit ThreadShares(std::size_t n) : sync_(static_cast<std::ptrdiff_t>(n)), counts_(n), values_(n) {}
    OrderCombine of(std::size_t r) {
        OrderCombine c;
        c.sum = [this, r](std::vector<std::uint64_t>& v) {
            counts_[r] = v;
            sync_.arrive_and_wait();
            for (std::size_t i = 0; i < v.size(); ++i) {
                v[i] = 0;
                for (const auto& other : counts_) v[i] += other[i];
            }
            sync_.arrive_and_wait();
        };
        c.max = [this, r](std::vector<double>& v) {
            values_[r] = v;
            sync_.arrive_and_wait();
            for (std::size_t i = 0; i < v.size(); ++i)
                for (const auto& other : values_) v[i] = std::max(v[i], other[i]);
            sync_.arrive_and_wait();
        };
        c.gather = [this, r](const std::vector<double>& v) {
            values_[r] = v;
            sync_.arrive_and_wait();
            std::vector<double> all;
            for (const auto& other : values_) all.insert(all.end(), other.begin(), other.end());
            sync_.arrive_and_wait();
            return all;
        };
        return c;
    }

private:
    std::barrier<> sync_;
    std::vector<std::vector<std::uint64_t>> counts_;
    std::vector<std::vector<double>> values_;
};

/// Every query's value from a sort of the coordinates, and from
/// orderStatistics over passes of the same points (counted); with
/// `shares`, on that many threads, each passing over its own share of the
/// points (uneven: share s takes the points whose index has residue s
/// modulo shares + 1, the last share the rest), every thread's values.
void checkAgainstSort(const std::vector<Vec3>& points, const std::vector<OrderQuery>& queries, int maxPasses,
                      bool giveRange = false, std::size_t shares = 1) {
    int passes = 0;
    std::pair<Vec3, Vec3> range(Vec3::Constant(INFINITY), Vec3::Constant(-INFINITY));
    for (const Vec3& x : points) range = {range.first.cwiseMin(x), range.second.cwiseMax(x)};
    std::vector<std::vector<double>> each(shares);
    ThreadShares ranks(shares);
    const auto run = [&](std::size_t s) {
        const OrderCombine combine = ranks.of(s);
        each[s] = orderStatistics(
            points.size(), queries,
            [&](const auto& f) {
                if (s == 0) ++passes;
                for (std::size_t i = 0; i < points.size(); ++i)
                    if (shares == 1 || std::min(i % (shares + 1), shares - 1) == s) f(points[i]);
            },
            giveRange ? &range : nullptr, shares > 1 ? &combine : nullptr);
    };
    std::vector<std::thread> threads;
    for (std::size_t s = 1; s < shares; ++s) threads.emplace_back(run, s);
    run(0);
    for (std::thread& t : threads) t.join();
    for (std::size_t s = 1; s < shares; ++s) CHECK(each[s] == each[0]);
    const std::vector<double>& got = each[0];
    REQUIRE(got.size() == queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q) {
        std::vector<double> along;
        for (const Vec3& x : points) along.push_back(x[queries[q].axis]);
        std::sort(along.begin(), along.end());
        CAPTURE(q);
        CAPTURE(queries[q].k);
        CHECK(std::bit_cast<std::uint64_t>(got[q]) == std::bit_cast<std::uint64_t>(along[queries[q].k]));
    }
    CHECK(passes <= maxPasses);
}

}  // namespace

TEST_CASE("orderStatistics: the sorted coordinates' values, bit for bit, in a few passes") {
    Rng rng(5);
    SUBCASE("random points (10^5), the quantiles of 2 to 16 bricks on every axis") {
        std::vector<Vec3> points(100000);
        for (Vec3& x : points) x = Vec3(rng.uniform(-3.0, 40.0), rng.uniform(0.0, 1e-3), rng.uniform(1e6, 1e6 + 1.0));
        std::vector<OrderQuery> queries;
        for (int a = 0; a < 3; ++a)
            for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{6249}, std::size_t{6250}, std::size_t{49999},
                                  std::size_t{50000}, std::size_t{99998}, std::size_t{99999}})
                queries.push_back({a, k});
        checkAgainstSort(points, queries, 4);  // the range, the bins, the few sorted
        checkAgainstSort(points, queries, 4, false, 3);  // three shares, combined after each pass
    }
    SUBCASE("a lattice's coordinates: many points at each value") {
        std::vector<Vec3> points;
        for (int k = 0; k < 30; ++k)
            for (int j = 0; j < 40; ++j)
                for (int i = 0; i < 50; ++i) points.push_back(Vec3(1.1 * i, 0.3 + 1.1 * j, -2.0 + 1.1 * k));
        std::vector<OrderQuery> queries;
        for (int a = 0; a < 3; ++a)
            for (int r = 1; r < 7; ++r) {
                const std::size_t q = points.size() * static_cast<std::size_t>(r) / 7;
                queries.push_back({a, q - 1});
                queries.push_back({a, q});
            }
        checkAgainstSort(points, queries, 3);
        checkAgainstSort(points, queries, 2, true);  // the range given: one pass fewer
        checkAgainstSort(points, queries, 2, true, 4);
    }
    SUBCASE("clustered values: most points in one bin, others far away") {
        std::vector<Vec3> points;
        for (int i = 0; i < 40000; ++i) points.push_back(Vec3(rng.uniform(0.0, 1e-9), 0.0, 0.0));
        for (int i = 0; i < 100; ++i) points.push_back(Vec3(1e9 + i, 0.0, 0.0));
        checkAgainstSort(points, {{0, 0}, {0, 19999}, {0, 20000}, {0, 39999}, {0, 40000}, {0, 40099}}, 6);
        checkAgainstSort(points, {{0, 0}, {0, 19999}, {0, 20000}, {0, 39999}, {0, 40000}, {0, 40099}}, 6, false, 2);
    }
    SUBCASE("one point, and a handful") {
        checkAgainstSort({Vec3(2.0, -1.0, 0.5)}, {{0, 0}, {1, 0}, {2, 0}}, 2);
        checkAgainstSort({Vec3(3, 1, 0), Vec3(-1, 1, 0), Vec3(2, 1, 0), Vec3(2, 1, 0)}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 2}}, 3);
        // More shares than points: some pass over none.
        checkAgainstSort({Vec3(3, 1, 0), Vec3(-1, 1, 0), Vec3(2, 1, 0)}, {{0, 0}, {0, 1}, {0, 2}, {1, 2}}, 3, false, 5);
    }
}
