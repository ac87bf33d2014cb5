#pragma once
/// The memory of every contact, in one record set keyed by the contact key:
/// what every method keeps (ContactHistory: the last force on b — CD's
/// reaction, MD's contact force — and the age) and the slots the force laws
/// declare (MD's tangential spring, plastic memory, law-specific state; the
/// layout is the laws', md/laws/layout.hpp). The merge-join of detection
/// (matchContactMemory) carries whole records from one step to the next; a
/// store can be written out and read back as one block (restart, and later
/// the move of contacts between processes).
#include <algorithm>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "moreau/core/parallel.hpp"
#include "moreau/contact/contact.hpp"

namespace moreau {

/// Key and history of one contact: the part of Contact that outlives the
/// step's geometry (40 bytes instead of 80). A time loop that keeps last
/// step's contacts in this form detects this step's into the same Contact
/// array, so a large run holds one Contact array instead of two.
struct ContactMemory {
    ContactKey key = 0;
    ContactHistory history;
};

/// The laws' slots of a contact list: `stride` doubles per contact, record k
/// belonging to the list's contact k (0 doubles when the laws keep nothing).
/// New contacts start with every slot 0.
struct ContactSlots {
    std::size_t stride = 0;
    std::vector<double> values;

    double* at(std::size_t k) { return values.data() + k * stride; }
    const double* at(std::size_t k) const { return values.data() + k * stride; }
    /// Records held (values.size() / stride; 0 when the stride is 0).
    std::size_t records() const { return stride > 0 ? values.size() / stride : 0; }
};

/// A contact list's whole memory, sorted by key: what survives a step.
struct ContactStore {
    std::vector<ContactMemory> records;
    ContactSlots slots;  ///< slots.records() == records.size() (or stride 0)
};

/// The merge-join that carries memory from one step's list to the next:
/// two lists in key order, `previous` (n entries, keys previousKey(p)) and
/// `current` (m entries, keys currentKey(k)); for each current entry
/// `carry(k, p)` with p the previous entry of the same key, or `fresh(k)`.
/// O(n + m), in fixed blocks of `current` (each joined from the first
/// previous key not below its own first key), in parallel when there are
/// several: the result does not depend on the split. Detection's contacts
/// (matchContactMemory) and the fused MD pipeline's pair list both carry
/// their memory through it.
template <class PreviousKey, class CurrentKey, class Carry, class Fresh>
void mergeByKey(std::size_t n, PreviousKey previousKey, std::size_t m, CurrentKey currentKey, Carry carry,
                Fresh fresh) {
    constexpr std::size_t kBlock = 8192;
    const std::size_t blocks = (m + kBlock - 1) / kBlock;
    forEachIndex(blocks, blocks > 1, [&](std::size_t blk) {
        const std::size_t begin = blk * kBlock, end = std::min(m, begin + kBlock);
        // The first previous key not below this block's first key.
        std::size_t p = 0, count = n;
        const ContactKey first = currentKey(begin);
        while (count > 0) {
            const std::size_t half = count / 2;
            if (previousKey(p + half) < first) {
                p += half + 1;
                count -= half + 1;
            } else {
                count = half;
            }
        }
        for (std::size_t k = begin; k < end; ++k) {
            const ContactKey key = currentKey(k);
            while (p < n && previousKey(p) < key) ++p;
            if (p < n && previousKey(p) == key) carry(k, p++);
            else fresh(k);
        }
    });
}

/// Throws InputError naming `origin` unless the records' keys strictly
/// increase (what the merge-join needs) and the slots hold one record each.
void checkContactStore(const ContactStore& store, const std::string& origin);

/// The bodies of a key (makeContactKey's inverse).
inline BodyId keyBodyA(ContactKey key) { return static_cast<BodyId>(key >> (kKeyBodyBits + kKeyFeatureBits)); }
inline BodyId keyBodyB(ContactKey key) {
    return static_cast<BodyId>((key >> kKeyFeatureBits) & ((ContactKey{1} << kKeyBodyBits) - 1));
}

/// Writes the store as one binary block (a tag line, the record count and
/// stride, then per record its key, last force, age and slots; doubles bit
/// for bit, little-endian as the machine's). Throws std::runtime_error when
/// the stream fails.
void writeContactStore(std::ostream& out, const ContactStore& store);
/// Reads a block written by writeContactStore. Throws InputError naming
/// `origin` and what is wrong (tag, sizes, keys not strictly increasing,
/// truncation).
ContactStore readContactStore(std::istream& in, const std::string& origin);

}  // namespace moreau
