#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <vector>

#include "moreau/core/order_statistics.hpp"
#include "moreau/core/rng.hpp"

using namespace moreau;

namespace {

/// Every query's value from a sort of the coordinates, and from
/// orderStatistics over passes of the same points (counted).
void checkAgainstSort(const std::vector<Vec3>& points, const std::vector<OrderQuery>& queries, int maxPasses,
                      bool giveRange = false) {
    int passes = 0;
    std::pair<Vec3, Vec3> range(Vec3::Constant(INFINITY), Vec3::Constant(-INFINITY));
    for (const Vec3& x : points) range = {range.first.cwiseMin(x), range.second.cwiseMax(x)};
    const std::vector<double> got = orderStatistics(
        points.size(), queries,
        [&](const auto& f) {
            ++passes;
            for (const Vec3& x : points) f(x);
        },
        giveRange ? &range : nullptr);
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
    }
    SUBCASE("clustered values: most points in one bin, others far away") {
        std::vector<Vec3> points;
        for (int i = 0; i < 40000; ++i) points.push_back(Vec3(rng.uniform(0.0, 1e-9), 0.0, 0.0));
        for (int i = 0; i < 100; ++i) points.push_back(Vec3(1e9 + i, 0.0, 0.0));
        checkAgainstSort(points, {{0, 0}, {0, 19999}, {0, 20000}, {0, 39999}, {0, 40000}, {0, 40099}}, 6);
    }
    SUBCASE("one point, and a handful") {
        checkAgainstSort({Vec3(2.0, -1.0, 0.5)}, {{0, 0}, {1, 0}, {2, 0}}, 2);
        checkAgainstSort({Vec3(3, 1, 0), Vec3(-1, 1, 0), Vec3(2, 1, 0), Vec3(2, 1, 0)}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 2}}, 3);
    }
}
