#include "moreau/core/exact_sum.hpp"

#include <cmath>
#include <limits>

namespace moreau {

void ExactSum::normalize() {
    // Carries upward (arithmetic shifts: floor), every digit but the last
    // into [0, 2³²); the last keeps the sign.
    for (int k = 0; k + 1 < kLimbs; ++k) {
        const std::int64_t carry = limb_[k] >> 32;
        limb_[k] -= carry * (std::int64_t{1} << 32);
        limb_[k + 1] += carry;
    }
    pending_ = 1;
}

ExactSum& ExactSum::operator+=(const ExactSum& other) {
    ExactSum o = other;
    if (pending_ + o.pending_ >= kPendingMax) {
        normalize();
        o.normalize();
    }
    for (int k = 0; k < kLimbs; ++k) limb_[k] += o.limb_[k];
    pending_ += o.pending_;
    for (int k = 0; k < 3; ++k) special_[k] += o.special_[k];
    return *this;
}

std::array<std::uint64_t, ExactSum::kWords> ExactSum::words() const {
    ExactSum s = *this;
    s.normalize();
    std::array<std::uint64_t, kWords> w{};
    for (int k = 0; k < kLimbs; ++k) w[k] = static_cast<std::uint64_t>(s.limb_[k]);
    for (int k = 0; k < 3; ++k) w[kLimbs + k] = special_[k];
    return w;
}

ExactSum ExactSum::fromWords(const std::uint64_t* words) {
    ExactSum s;
    for (int k = 0; k < kLimbs; ++k) s.limb_[k] = static_cast<std::int64_t>(words[k]);
    for (int k = 0; k < 3; ++k) s.special_[k] = words[kLimbs + k];
    s.normalize();
    return s;
}

double ExactSum::value() const {
    if (special_[2] > 0 || (special_[0] > 0 && special_[1] > 0)) return std::numeric_limits<double>::quiet_NaN();
    if (special_[0] > 0) return std::numeric_limits<double>::infinity();
    if (special_[1] > 0) return -std::numeric_limits<double>::infinity();
    ExactSum s = *this;
    s.normalize();
    const bool negative = s.limb_[kLimbs - 1] < 0;  // the lower digits are not negative
    if (negative) {
        for (std::int64_t& d : s.limb_) d = -d;
        s.normalize();
    }
    int h = kLimbs - 1;
    while (h >= 0 && s.limb_[h] == 0) --h;
    if (h < 0) return 0.0;
    // The top three digits exactly, whether any digit below is not zero.
    const int lo = h >= 2 ? h - 2 : 0;
    Uint128 t = 0;
    for (int j = h; j >= lo; --j) t = (t << 32) + static_cast<std::uint64_t>(s.limb_[j]);
    bool sticky = false;
    for (int j = 0; j < lo; ++j) sticky = sticky || s.limb_[j] != 0;
    const int base = 32 * lo - 1074;
    const auto high = static_cast<std::uint64_t>(t >> 64);
    const int bits = high != 0 ? 128 - __builtin_clzll(high) : 64 - __builtin_clzll(static_cast<std::uint64_t>(t));
    double result;
    if (bits <= 53) {  // then nothing lies below (h < 2)
        result = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(t)), base);
    } else {
        const int drop = bits - 53;
        auto mantissa = static_cast<std::uint64_t>(t >> drop);
        const Uint128 rest = t - (static_cast<Uint128>(mantissa) << drop);
        const Uint128 half = static_cast<Uint128>(1) << (drop - 1);
        if (rest > half || (rest == half && (sticky || (mantissa & 1u) != 0))) ++mantissa;
        result = std::ldexp(static_cast<double>(mantissa), base + drop);
    }
    return negative ? -result : result;
}

}  // namespace moreau
