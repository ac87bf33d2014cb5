// ExactSum (core/exact_sum.hpp): the exact sum rounded once, whatever the
// terms' order or how they were split into parts; checked against sums
// known in integers, ties, the range's ends, and Shewchuk's exact
// expansion sum (the algorithm of Python's math.fsum) on random terms.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "moreau/core/exact_sum.hpp"

using namespace moreau;

namespace {

double exactSum(const std::vector<double>& terms) {
    ExactSum s;
    for (double x : terms) s.add(x);
    return s.value();
}

/// Shewchuk's non-overlapping partials, rounded to nearest even (as math.fsum).
double shewchuk(const std::vector<double>& terms) {
    std::vector<double> partials;
    for (double x : terms) {
        std::size_t i = 0;
        for (double y : partials) {
            if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
            const double hi = x + y, lo = y - (hi - x);
            if (lo != 0.0) partials[i++] = lo;
            x = hi;
        }
        partials.resize(i);
        partials.push_back(x);
    }
    std::size_t n = partials.size();
    if (n == 0) return 0.0;
    double hi = partials[--n], lo = 0.0;
    while (n > 0) {
        const double x = hi, y = partials[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
        const double y = lo * 2.0, x = hi + y;
        if (y == x - hi) hi = x;
    }
    return hi;
}

bool sameBits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

}  // namespace

TEST_CASE("ExactSum: sums that rounding term by term loses") {
    CHECK(exactSum({1e100, 1.0, -1e100}) == 1.0);
    CHECK(exactSum({0.1, 0.2, -0.3}) == shewchuk({0.1, 0.2, -0.3}));
    CHECK(exactSum({}) == 0.0);
    CHECK(exactSum({-0.0, 0.0}) == 0.0);
    const double two53 = 9007199254740992.0;  // 2⁵³: from here the unit is 2
    CHECK(exactSum({two53, 1.0}) == two53);                       // a tie, to even
    CHECK(exactSum({two53, 1.0, 0x1p-60}) == two53 + 2.0);        // above the tie
    CHECK(exactSum({two53, 3.0}) == two53 + 4.0);                 // a tie, to even
    CHECK(exactSum({-two53, -1.0, -0x1p-60}) == -(two53 + 2.0));  // and below zero
    const double tiny = std::numeric_limits<double>::denorm_min();
    CHECK(exactSum({tiny, tiny, tiny}) == 3.0 * tiny);
    CHECK(exactSum({1.0, tiny, -1.0}) == tiny);
    const double big = std::numeric_limits<double>::max();
    CHECK(exactSum({big, big, -big}) == big);  // no overflow on the way
    CHECK(std::isinf(exactSum({big, big})));
    CHECK(std::isnan(exactSum({std::numeric_limits<double>::infinity(), 1.0, -std::numeric_limits<double>::infinity()})));
    CHECK(exactSum({std::numeric_limits<double>::infinity(), 1.0}) == std::numeric_limits<double>::infinity());
    CHECK(exactSum({-std::numeric_limits<double>::infinity(), 1.0}) == -std::numeric_limits<double>::infinity());
    CHECK(std::isnan(exactSum({std::numeric_limits<double>::quiet_NaN(), 1.0})));
    ExactSum inf, ninf;  // in parts: −inf here, +inf there
    inf.add(std::numeric_limits<double>::infinity());
    ninf.add(-std::numeric_limits<double>::infinity());
    inf += ninf;
    CHECK(std::isnan(inf.value()));
}

TEST_CASE("ExactSum: integers that fill whole digits sum exactly") {
    ExactSum s;
    const double unit = 4294967295.0;  // 2³² − 1: every term fills a whole digit
    std::int64_t expect = 0;
    for (int i = 0; i < 3000; ++i) {
        s.add(unit);
        s.add(-1.0);
        expect += 4294967294;
    }
    CHECK(s.value() == static_cast<double>(expect));
}

TEST_CASE("ExactSum: the same bits in any order and split, Shewchuk's sum") {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-60, 60);
    for (int trial = 0; trial < 40; ++trial) {
        std::vector<double> terms(1 + trial * 37);
        for (double& x : terms) x = std::ldexp(mantissa(rng), exponent(rng));
        if (trial % 4 == 1)  // cancellation down to the smallest terms
            for (std::size_t i = 0; i + 1 < terms.size(); i += 2) terms[i + 1] = -terms[i] * (1.0 + 0x1p-40);
        const double expect = shewchuk(terms);
        CHECK(sameBits(exactSum(terms), expect));
        std::shuffle(terms.begin(), terms.end(), rng);
        CHECK(sameBits(exactSum(terms), expect));
        // Parts, as ranks or threads add them: by operator+= and by their limbs.
        ExactSum parts[3];
        for (std::size_t i = 0; i < terms.size(); ++i) parts[i % 3].add(terms[i]);
        ExactSum whole = parts[2];
        whole += parts[0];
        whole += parts[1];
        CHECK(sameBits(whole.value(), expect));
        std::uint64_t words[ExactSum::kWords] = {};
        for (const ExactSum& p : parts) {
            const auto w = p.words();
            for (int k = 0; k < ExactSum::kWords; ++k) words[k] += w[k];
        }
        CHECK(sameBits(ExactSum::fromWords(words).value(), expect));
    }
}
