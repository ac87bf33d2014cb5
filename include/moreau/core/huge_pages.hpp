#pragma once
/// Transparent huge pages for large arrays read in random order.
///
/// The CD sweeps visit the 112-byte rows in a random permutation, so with
/// 4 KB pages almost every row access misses the TLB: backing the rows with
/// 2 MB pages made one thread's sweep 25% faster on the development machine
/// (docs/contact-dynamics.md). Where the kernel's THP mode is "madvise" (the
/// default of many distributions) an array gets them only when asked.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moreau {

/// Asks the kernel to back the 2 MB-aligned blocks inside [p, p + bytes)
/// with huge pages. Call it before the memory is first touched; a no-op
/// where unsupported or for ranges smaller than a huge page. Never changes
/// any value, so results are the same with or without it.
inline void adviseHugePages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t begin = (start + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t end = (start + bytes) & ~(kHuge - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/// v.resize(n), with huge pages advised for the storage when it is newly
/// allocated (before the resize touches it).
template <class T, class A>
void resizeHuge(std::vector<T, A>& v, std::size_t n) {
    if (v.capacity() < n) {
        std::vector<T, A>().swap(v);
        v.reserve(n);
        adviseHugePages(v.data(), n * sizeof(T));
    }
    v.resize(n);
}

}  // namespace moreau
