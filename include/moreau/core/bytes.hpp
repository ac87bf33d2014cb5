#pragma once
/// Binary blocks of plain values, for checkpoints: ByteWriter appends to a
/// string, ByteReader reads it back with every size checked against what is
/// left, so a damaged or hostile file fails with one InputError naming it and
/// what was being read (never a huge allocation, never a read past the end).
/// Values are stored bit for bit in the machine's byte order (checkpoints
/// move between runs of one build on one kind of machine).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau {

/// FNV-1a, 64 bits: the checksum of a checkpoint and the hash of its scene text.
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

/// Values put() and get() copy as bytes: trivially copyable ones, and plain
/// structs of doubles and integers such as Eigen's fixed-size vectors and
/// quaternions (which declare copy operations but hold only their values).
template <class T>
inline constexpr bool kPlainValue =
    std::is_trivially_copyable_v<T> || (std::is_standard_layout_v<T> && std::is_trivially_destructible_v<T>);

class ByteWriter {
public:
    /// A writer that keeps no bytes, only their count (size(); bytes() stays
    /// empty): the first pass of a large file's writing, whose count the
    /// second reserves, so that its bytes are held once instead of grown by
    /// doubling (up to three times their size while the last growth copies).
    static ByteWriter counting() {
        ByteWriter w;
        w.counting_ = true;
        return w;
    }
    template <class T>
    void put(const T& value) {
        static_assert(kPlainValue<T>);
        add(reinterpret_cast<const char*>(&value), sizeof(T));
    }
    /// Bytes as they are (a file's magic).
    void putRaw(std::string_view s) { add(s.data(), s.size()); }
    /// Overwrites the value put at byte `at` (a length known only later).
    template <class T>
    void putAt(std::size_t at, const T& value) {
        static_assert(kPlainValue<T>);
        if (!counting_) std::memcpy(bytes_.data() + at, &value, sizeof(T));
    }
    void putString(std::string_view s) {
        put(static_cast<std::uint64_t>(s.size()));
        add(s.data(), s.size());
    }
    template <class T>
    void putVector(const std::vector<T>& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        put(static_cast<std::uint64_t>(v.size()));
        add(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    /// Fixed-size Eigen vectors and quaternions (plain doubles, no padding).
    template <class T>
    void putDense(const std::vector<T>& v) {
        static_assert(sizeof(T) % sizeof(double) == 0 && std::is_same_v<typename T::Scalar, double>);
        put(static_cast<std::uint64_t>(v.size()));
        add(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    /// The bytes put so far (a counting writer's count).
    std::size_t size() const { return counting_ ? counted_ : bytes_.size(); }
    void reserve(std::size_t n) {
        if (!counting_) bytes_.reserve(n);
    }
    void putBools(const std::vector<bool>& v) {
        put(static_cast<std::uint64_t>(v.size()));
        for (const bool b : v) put(static_cast<std::uint8_t>(b));
    }
    const std::string& bytes() const { return bytes_; }
    std::string& bytes() { return bytes_; }
    /// Empty again, keeping the capacity (a writer reused every step).
    void clear() { bytes_.clear(); }

private:
    void add(const char* p, std::size_t n) {
        if (counting_) counted_ += n;
        else bytes_.append(p, n);
    }
    std::string bytes_;
    bool counting_ = false;
    std::size_t counted_ = 0;
};

class ByteReader {
public:
    /// Reads `bytes`; errors say "`origin`: `what` (...)".
    ByteReader(std::string_view bytes, std::string origin) : bytes_(bytes), origin_(std::move(origin)) {}

    template <class T>
    T get(const char* what) {
        static_assert(kPlainValue<T>);
        T value;
        std::memcpy(static_cast<void*>(&value), take(sizeof(T), what), sizeof(T));
        return value;
    }
    bool getBool(const char* what) {
        const auto b = get<std::uint8_t>(what);
        if (b > 1) fail(std::string(what) + " is " + std::to_string(b) + ", not 0 or 1");
        return b == 1;
    }
    std::string getString(const char* what) {
        const std::size_t n = count(1, what);
        return std::string(take(n, what), n);
    }
    template <class T>
    std::vector<T> getVector(const char* what) {
        static_assert(std::is_trivially_copyable_v<T>);
        const std::size_t n = count(sizeof(T), what);
        std::vector<T> v(n);
        if (n > 0) std::memcpy(static_cast<void*>(v.data()), take(n * sizeof(T), what), n * sizeof(T));
        return v;
    }
    template <class T>
    std::vector<T> getDense(const char* what) {
        static_assert(sizeof(T) % sizeof(double) == 0 && std::is_same_v<typename T::Scalar, double>);
        const std::size_t n = count(sizeof(T), what);
        std::vector<T> v(n);
        if (n > 0) std::memcpy(static_cast<void*>(v.data()), take(n * sizeof(T), what), n * sizeof(T));
        return v;
    }
    std::vector<bool> getBools(const char* what) {
        const std::size_t n = count(1, what);
        std::vector<bool> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = getBool(what);
        return v;
    }
    /// A count of items of `itemBytes` each, checked against the bytes left.
    std::size_t count(std::size_t itemBytes, const char* what) {
        const auto n = get<std::uint64_t>(what);
        if (itemBytes > 0 && n > left() / itemBytes)
            fail(std::string(what) + ": " + std::to_string(n) + " items, more than the " + std::to_string(left()) +
                 " bytes left hold");
        return static_cast<std::size_t>(n);
    }
    std::size_t left() const { return bytes_.size() - at_; }
    std::size_t offset() const { return at_; }
    [[noreturn]] void fail(const std::string& why) const {
        throw InputError(origin_ + ": " + why + " (at byte " + std::to_string(at_) + ")");
    }

private:
    const char* take(std::size_t n, const char* what) {
        if (n > left()) fail(std::string("truncated in ") + what);
        const char* p = bytes_.data() + at_;
        at_ += n;
        return p;
    }
    std::string_view bytes_;
    std::size_t at_ = 0;
    std::string origin_;
};

}  // namespace moreau
