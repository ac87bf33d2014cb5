#pragma once
// An exact sum of doubles, whatever their order: each term is added, with
// no rounding, into a fixed-point number wide enough for every double
// (2⁻¹⁰⁷⁴ to 2¹⁰²⁴ and carries), held as 32-bit digits in 64-bit words;
// value() rounds the exact sum once, to nearest (ties to even). Integer
// additions commute, so the same terms give the same bits in any order:
// over threads, over MPI ranks (words() added as integers), after a
// restart. Used where series.csv's sums come from parts (observables.hpp):
// 2.4 ns a term on one core here (AMD EPYC, Zen 5), either sign; 0.5 for a
// plain sum.
#include <array>
#include <cstddef>
#include <cstdint>

namespace moreau {

__extension__ typedef unsigned __int128 Uint128;  ///< GCC's and Clang's (ExactSum's digits)

class ExactSum {
public:
    static constexpr int kLimbs = 68;  ///< 32-bit digits from 2⁻¹⁰⁷⁴; the last one signed

    void add(double x) {
        const auto bits = bitsOf(x);
        const auto field = static_cast<int>((bits >> 52) & 0x7ffu);
        if (field == 0x7ff) {  // inf or NaN: counted apart
            ++special_[(bits & ((std::uint64_t{1} << 52) - 1)) != 0 ? 2 : bits >> 63];
            return;
        }
        std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
        if (field != 0) m |= std::uint64_t{1} << 52;
        if (m == 0) return;
        const int p = field == 0 ? 0 : field - 1;  // the bit of m's unit, counted from 2⁻¹⁰⁷⁴
        const auto shifted = static_cast<Uint128>(m) << (p & 31);
        const int k = p >> 5;
        const auto d0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(shifted) & 0xffffffffu);
        const auto d1 = static_cast<std::int64_t>(static_cast<std::uint64_t>(shifted >> 32) & 0xffffffffu);
        const auto d2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(shifted >> 64));
        // The sign without a branch (terms of either sign in any order):
        // d ^ neg − neg is d or −d.
        const std::int64_t neg = -static_cast<std::int64_t>(bits >> 63);
        limb_[k] += (d0 ^ neg) - neg;
        limb_[k + 1] += (d1 ^ neg) - neg;
        limb_[k + 2] += (d2 ^ neg) - neg;
        if (++pending_ >= kPendingMax) normalize();
    }

    ExactSum& operator+=(const ExactSum& other);

    /// The exact sum rounded to the nearest double (ties to even; in the
    /// subnormal range rounded once more by ldexp, still a function of the
    /// exact sum alone); inf or NaN where a term was (NaN where both
    /// infinities were).
    double value() const;

    /// The sum as words that add as unsigned integers (wrapping; any order,
    /// e.g. an MPI sum over ranks): the canonical digits (two's complement;
    /// every digit in [0, 2³²) but the last) and the counts of +inf, −inf
    /// and NaN terms. fromWords of the words' sum is the sum of the parts.
    static constexpr int kWords = kLimbs + 3;
    std::array<std::uint64_t, kWords> words() const;
    static ExactSum fromWords(const std::uint64_t* words);

    void normalize();

private:
    static std::uint64_t bitsOf(double x) {
        std::uint64_t b;
        __builtin_memcpy(&b, &x, sizeof b);
        return b;
    }
    /// Terms added since the last carry pass: each adds under 2³² to a
    /// limb, so 2³⁰ of them cannot overflow one.
    static constexpr std::int64_t kPendingMax = std::int64_t{1} << 30;

    std::array<std::int64_t, kLimbs> limb_{};
    std::int64_t pending_ = 0;
    std::array<std::uint64_t, 3> special_{};  ///< +inf, −inf and NaN terms
};

}  // namespace moreau
