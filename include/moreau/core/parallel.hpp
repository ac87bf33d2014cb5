#pragma once
/// Loops that run on OpenMP threads only where they are worth it.
///
/// An `if (false)` clause on `#pragma omp parallel` still opens a team of one
/// thread in libgomp (an allocation and a futex wake per region): for a world
/// of a few grains that is most of a step (Peña's two discs: about 13,000 of
/// the 19,000 instructions of a Gear 5 step, and the step's system calls).
/// These helpers run the body on the calling thread instead. The body sees the
/// same indices in either case, so the bits do not depend on the choice.
#include <cstddef>

namespace moreau {

/// body(i) for i in [0, n): a static schedule over the threads when
/// `parallel`, a plain loop otherwise.
template <class Body>
inline void forEachIndex(std::size_t n, bool parallel, Body&& body) {
    if (!parallel) {
        for (std::size_t i = 0; i < n; ++i) body(i);
        return;
    }
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) body(i);
}

/// Whether pred(i) holds for any i in [0, n), evaluated for every i (as the
/// loop it replaces), in parallel when `parallel`.
template <class Pred>
inline bool anyIndex(std::size_t n, bool parallel, Pred&& pred) {
    int any = 0;
    if (!parallel) {
        for (std::size_t i = 0; i < n; ++i) any |= pred(i) ? 1 : 0;
        return any != 0;
    }
#pragma omp parallel for schedule(static) reduction(| : any)
    for (std::size_t i = 0; i < n; ++i) any |= pred(i) ? 1 : 0;
    return any != 0;
}

/// body() on a team of threads when `parallel`, on the calling thread
/// otherwise; work-sharing loops inside it (`#pragma omp for`) then run
/// whole on that thread.
template <class Body>
inline void parallelRegion(bool parallel, Body&& body) {
    if (!parallel) {
        body();
        return;
    }
#pragma omp parallel
    body();
}

}  // namespace moreau
