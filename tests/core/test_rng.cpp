// The random numbers every sweep order, packing and jitter draws from
// (core/rng.hpp): SplitMix64 as published, streams that depend on every word
// of their tuple, bounded draws without bias and a shuffle that is a
// permutation. Golden values pin the bits: a change to the generator changes
// every seeded result (STYLE.md §9).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "moreau/core/rng.hpp"

using namespace moreau;

namespace {

/// The first `n` numbers of a generator.
std::vector<std::uint64_t> firstOf(Rng rng, std::size_t n) {
    std::vector<std::uint64_t> out(n);
    for (auto& x : out) x = rng.next();
    return out;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("rng: SplitMix64's reference outputs (Vigna's splitmix64.c)") {
    // splitmix64.c seeded with 1234567, the vector other ports test against.
    CHECK(firstOf(Rng(1234567), 5) == std::vector<std::uint64_t>{6457827717110365317ULL, 3203168211198807973ULL,
                                                                 9817491932198370423ULL, 4593380528125082431ULL,
                                                                 16408922859458223821ULL});
    // State 0 is a valid state: its first output is the finaliser of the golden gamma.
    CHECK(Rng(0).next() == 0xe220a8397b1dcdafULL);
}

TEST_CASE("rng: the same seed gives the same sequence, another seed another") {
    CHECK(firstOf(Rng(42), 1000) == firstOf(Rng(42), 1000));
    const auto a = firstOf(Rng(42), 1000), b = firstOf(Rng(43), 1000);
    std::size_t equal = 0;
    for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
    CHECK(equal == 0);
}

TEST_CASE("rng: streams depend on every word of (seed, a, b, c) and are reproducible") {
    CHECK(firstOf(Rng::stream(7, 3, 2, 1), 100) == firstOf(Rng::stream(7, 3, 2, 1), 100));
    // Defaults: stream(seed, a) is stream(seed, a, 0, 0).
    CHECK(firstOf(Rng::stream(7, 3), 10) == firstOf(Rng::stream(7, 3, 0, 0), 10));

    // Neighbouring tuples (run seed, step, sweep) as the CD sweeps draw them:
    // no two streams share a first number, and swapping words changes the stream.
    std::set<std::uint64_t> first;
    std::size_t tuples = 0;
    for (std::uint64_t seed = 0; seed < 4; ++seed)
        for (std::uint64_t step = 0; step < 16; ++step)
            for (std::uint64_t sweep = 0; sweep < 16; ++sweep) {
                first.insert(Rng::stream(seed, step, sweep).next());
                ++tuples;
            }
    CHECK(first.size() == tuples);
    CHECK(Rng::stream(1, 2, 3).next() != Rng::stream(1, 3, 2).next());
    CHECK(Rng::stream(1, 0, 0, 1).next() != Rng::stream(1, 0, 1, 0).next());
    // A stream is not the plain generator of its seed.
    CHECK(Rng::stream(5, 0).next() != Rng(5).next());
}

TEST_CASE("rng: neighbouring streams are uncorrelated") {
    // The bits of streams (s, k) and (s, k + 1): about half of them differ
    // (64 x 2000 bits; 6 standard deviations is about 0.0084 of them).
    for (std::uint64_t k = 0; k < 8; ++k) {
        Rng a = Rng::stream(11, k), b = Rng::stream(11, k + 1);
        double differing = 0.0;
        const int draws = 2000;
        for (int i = 0; i < draws; ++i) differing += std::popcount(a.next() ^ b.next());
        CHECK(differing / (64.0 * draws) == doctest::Approx(0.5).epsilon(0.02));
    }
}

TEST_CASE("rng: skip(k) gives what k calls of next() would, at once") {
    for (const std::uint64_t k : {0ULL, 1ULL, 2ULL, 7ULL, 1000ULL, 123457ULL}) {
        CAPTURE(k);
        Rng walked = Rng::stream(9, 4, 2), jumped = Rng::stream(9, 4, 2);
        for (std::uint64_t i = 0; i < k; ++i) walked.next();
        jumped.skip(k);
        for (int i = 0; i < 4; ++i) CHECK(jumped.next() == walked.next());
    }
}

TEST_CASE("rng: uniform draws lie in 0 <= u < 1 and lo <= x < hi, with the right mean") {
    Rng rng(99);
    double sum = 0.0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        const double u = rng.uniform();
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        sum += u;
    }
    CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
    for (int i = 0; i < 1000; ++i) {
        const double x = rng.uniform(-2.0, 3.0);
        REQUIRE(x >= -2.0);
        REQUIRE(x < 3.0);
    }
    // 53 bits: the top 53 bits of next(), scaled by 2^-53.
    Rng a(5), b(5);
    CHECK(a.uniform() == static_cast<double>(b.next() >> 11) * 0x1.0p-53);
}

TEST_CASE("rng: below(n) lies in 0 <= k < n, unbiased, and below(1) is 0") {
    Rng rng(2024);
    for (int i = 0; i < 100; ++i) CHECK(rng.below(1) == 0);
    // n = 3 does not divide 2^32: a modulo draw would favour the small values.
    std::array<int, 3> counts{};
    const int n = 300000;
    for (int i = 0; i < n; ++i) {
        const std::uint32_t k = rng.below(3);
        REQUIRE(k < 3);
        ++counts[k];
    }
    for (const int c : counts) CHECK(c == doctest::Approx(n / 3.0).epsilon(0.01));
    // The largest bound: every draw below it.
    for (int i = 0; i < 1000; ++i) CHECK(rng.below(0xffffffffu) < 0xffffffffu);
}

TEST_CASE("rng: shuffle is a permutation, the same for the same seed, and every order occurs") {
    std::vector<int> a(100), b(100);
    std::iota(a.begin(), a.end(), 0);
    b = a;
    Rng ra(8), rb(8);
    ra.shuffle(std::span<int>(a));
    rb.shuffle(std::span<int>(b));
    CHECK(a == b);
    std::vector<int> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> identity(100);
    std::iota(identity.begin(), identity.end(), 0);
    CHECK(sorted == identity);
    CHECK(a != identity);

    // The 6 orders of 3 items, each about a sixth of the time (Fisher-Yates).
    std::set<std::array<int, 3>> seen;
    std::array<int, 6> counts{};
    Rng rng(3);
    const int n = 60000;
    for (int i = 0; i < n; ++i) {
        std::array<int, 3> p{0, 1, 2};
        rng.shuffle(std::span<int>(p));
        seen.insert(p);
        std::array<int, 3> q{0, 1, 2};
        int rank = 0;
        do {
            if (q == p) break;
            ++rank;
        } while (std::next_permutation(q.begin(), q.end()));
        ++counts[static_cast<std::size_t>(rank)];
    }
    CHECK(seen.size() == 6);
    for (const int c : counts) CHECK(c == doctest::Approx(n / 6.0).epsilon(0.05));
}

}  // TEST_SUITE("core")
