#include "moreau/contact/contact_store.hpp"

#include <algorithm>
#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>

#include "moreau/core/error.hpp"

namespace moreau {

namespace {

constexpr char kTag[] = "moreau-contact-store 2\n";
constexpr std::size_t kTagLength = sizeof(kTag) - 1;
/// Version 1 stored keys as a (30 bits) | b (30) | feature (4): read and re-encoded.
constexpr char kTagVersion1[] = "moreau-contact-store 1\n";
static_assert(sizeof(kTagVersion1) == sizeof(kTag));
/// Bounds on what a block may declare, so that a damaged count fails as a
/// read error instead of a huge allocation.
constexpr std::uint64_t kMaxStride = 4096, kMaxRecords = std::uint64_t{1} << 34;

template <class T>
void put(std::ostream& out, const T& value) {
    out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}
template <class T>
bool get(std::istream& in, T& value) {
    return static_cast<bool>(in.read(reinterpret_cast<char*>(&value), sizeof(T)));
}

}  // namespace

void checkContactStore(const ContactStore& store, const std::string& origin) {
    const std::size_t m = store.records.size();
    if (store.slots.stride > 0 && store.slots.values.size() != m * store.slots.stride)
        throw InputError(origin + ": contact store: " + std::to_string(store.slots.values.size()) +
                         " slot values for " + std::to_string(m) + " records of " +
                         std::to_string(store.slots.stride));
    for (std::size_t k = 1; k < m; ++k)
        if (!(store.records[k - 1].key < store.records[k].key))
            throw InputError(origin + ": contact store: keys not strictly increasing at record " + std::to_string(k));
}

void writeContactStore(std::ostream& out, const ContactStore& store) {
    const std::uint64_t count = store.records.size(), stride = store.slots.stride;
    if (stride > 0 && store.slots.records() != count)
        throw std::logic_error("writeContactStore: slots for " + std::to_string(store.slots.records()) +
                               " records, " + std::to_string(count) + " records");
    // One buffer, one write: a store of 10^5 contacts is 10^6 fields.
    const std::size_t recordBytes = sizeof(ContactKey) + 3 * sizeof(double) + sizeof(ContactHistory::age) + stride * sizeof(double);
    std::string buffer;
    buffer.reserve(kTagLength + 16 + count * recordBytes);
    buffer.append(kTag, kTagLength);
    auto append = [&buffer](const void* p, std::size_t n) { buffer.append(static_cast<const char*>(p), n); };
    append(&count, sizeof count);
    append(&stride, sizeof stride);
    for (std::size_t k = 0; k < count; ++k) {
        const ContactMemory& r = store.records[k];
        append(&r.key, sizeof r.key);
        for (int e = 0; e < 3; ++e) append(&r.history.reaction[e], sizeof(double));
        append(&r.history.age, sizeof r.history.age);
        if (stride > 0) append(store.slots.at(k), stride * sizeof(double));
    }
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (!out) throw std::runtime_error("writeContactStore: the stream failed");
}

ContactStore readContactStore(std::istream& in, const std::string& origin) {
    auto fail = [&](const std::string& what) -> ContactStore {
        throw InputError(origin + ": contact store: " + what);
    };
    char tag[kTagLength];
    if (!in.read(tag, static_cast<std::streamsize>(kTagLength)) ||
        (std::string(tag, kTagLength) != kTag && std::string(tag, kTagLength) != kTagVersion1))
        return fail("does not start with the tag 'moreau-contact-store 2' (or 1)");
    const bool version1 = std::string(tag, kTagLength) == kTagVersion1;
    std::uint64_t count = 0, stride = 0;
    if (!get(in, count) || !get(in, stride)) return fail("truncated before the record count and stride");
    if (count > kMaxRecords) return fail("record count " + std::to_string(count) + " is beyond any run");
    if (stride > kMaxStride)
        return fail("stride " + std::to_string(stride) + " doubles per contact (allowed: at most " +
                    std::to_string(kMaxStride) + ")");
    ContactStore store;
    store.slots.stride = stride;
    // Grown as records arrive (reserved up to a bound), so that a damaged
    // count fails at the end of the data, not in one huge allocation.
    const std::size_t reserve = std::min<std::uint64_t>(count, std::uint64_t{1} << 20);
    store.records.reserve(reserve);
    store.slots.values.reserve(reserve * stride);
    for (std::size_t k = 0; k < count; ++k) {
        ContactMemory& r = store.records.emplace_back();
        bool ok = get(in, r.key);
        if (ok && version1) {
            const std::uint64_t a = r.key >> 34, b = (r.key >> 4) & ((std::uint64_t{1} << 30) - 1);
            if (a >> kKeyBodyBits != 0 || b >> kKeyBodyBits != 0)
                return fail("record " + std::to_string(k) + " names a body beyond " + std::to_string(1u << kKeyBodyBits));
            r.key = makeContactKey(static_cast<BodyId>(a), static_cast<BodyId>(b), static_cast<std::uint32_t>(r.key & 0xFu));
        }
        for (int e = 0; e < 3; ++e) ok = ok && get(in, r.history.reaction[e]);
        ok = ok && get(in, r.history.age);
        store.slots.values.resize((k + 1) * stride);
        if (ok && stride > 0)
            ok = static_cast<bool>(in.read(reinterpret_cast<char*>(store.slots.at(k)),
                                           static_cast<std::streamsize>(stride * sizeof(double))));
        if (!ok) return fail("truncated at record " + std::to_string(k) + " of " + std::to_string(count));
        if (k > 0 && !(store.records[k - 1].key < r.key))
            return fail("keys not strictly increasing at record " + std::to_string(k));
    }
    return store;
}

}  // namespace moreau
