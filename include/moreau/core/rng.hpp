#pragma once
/// Deterministic random numbers. We use our own generator and our own bounded
/// draws so that a seed gives the same bits with every compiler and library
/// version (std::uniform_int_distribution and friends are not specified
/// bit-exactly by the standard).
#include <cstdint>
#include <span>
#include <utility>

namespace moreau {

/// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, passes BigCrush, and
/// any seed (including 0) is a valid state.
class Rng {
public:
    explicit Rng(std::uint64_t seed = 0) : state_(seed) {}

    /// A generator for an independent stream identified by (seed, a, b, c),
    /// e.g. (run seed, step, sweep). The words are mixed, not added, so nearby
    /// tuples give unrelated streams.
    static Rng stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
        std::uint64_t s = mix(seed ^ 0x6a09e667f3bcc909ULL);
        s = mix(s ^ (a + 0x9e3779b97f4a7c15ULL));
        s = mix(s ^ (b + 0xbb67ae8584caa73bULL));
        s = mix(s ^ (c + 0x3c6ef372fe94f82bULL));
        return Rng(s);
    }

    std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        return mix(state_);
    }

    /// Skips the next `draws` values of next(): the generator then gives
    /// what it would after that many calls, at once (SplitMix64's state
    /// moves by a constant per draw).
    void skip(std::uint64_t draws) { state_ += draws * 0x9e3779b97f4a7c15ULL; }

    /// Uniform double in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform double in [lo, hi).
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

    /// Uniform integer in [0, n) without modulo bias (Lemire 2019), n > 0.
    std::uint32_t below(std::uint32_t n) {
        std::uint64_t m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next() >> 32)) * n;
        auto low = static_cast<std::uint32_t>(m);
        if (low < n) {
            const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
            while (low < threshold) {
                m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next() >> 32)) * n;
                low = static_cast<std::uint32_t>(m);
            }
        }
        return static_cast<std::uint32_t>(m >> 32);
    }

    /// Fisher–Yates shuffle in place.
    template <class T>
    void shuffle(std::span<T> a) {
        for (std::size_t i = a.size(); i > 1; --i) {
            const std::size_t j = below(static_cast<std::uint32_t>(i));
            std::swap(a[i - 1], a[j]);
        }
    }

private:
    static std::uint64_t mix(std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::uint64_t state_;
};

}  // namespace moreau
