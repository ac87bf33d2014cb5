// The lane-parallel contact and kick–drift kernels, 4 lanes. Compiled with -mavx2 (see
// CMakeLists.txt); run only where the CPU reports AVX2 (chooseBlockKernel).
#if defined(__x86_64__)
#include <immintrin.h>

#include "pair_block.hpp"

namespace moreau::md_block::avx2 {
namespace {
// Where a gather is microcoded (AMD before Zen 4) or costs a load port per
// lane anyway, four bodies' Vec3's come cheaper as plain loads and a 4 × 3
// transpose: (x, y) of bodies 0 and 2, and of 1 and 3, in two registers,
// unpacked into x's and y's; the z's two by two. The same doubles, so the
// same bits.
[[gnu::always_inline]] inline void loadVec3Lanes(const double* p, __m256i i, __m256d out[3]) {
    const double* p0 = p + 3 * _mm256_extract_epi64(i, 0);
    const double* p1 = p + 3 * _mm256_extract_epi64(i, 1);
    const double* p2 = p + 3 * _mm256_extract_epi64(i, 2);
    const double* p3 = p + 3 * _mm256_extract_epi64(i, 3);
    const __m256d xy02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p0)), _mm_loadu_pd(p2), 1);
    const __m256d xy13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p1)), _mm_loadu_pd(p3), 1);
    out[0] = _mm256_unpacklo_pd(xy02, xy13);
    out[1] = _mm256_unpackhi_pd(xy02, xy13);
    const __m128d z01 = _mm_loadh_pd(_mm_load_sd(p0 + 2), p1 + 2), z23 = _mm_loadh_pd(_mm_load_sd(p2 + 2), p3 + 2);
    out[2] = _mm256_insertf128_pd(_mm256_castpd128_pd256(z01), z23, 1);
}
[[gnu::always_inline]] inline __m256d loadLanes(const double* p, __m256i i) {
    const __m128d lo = _mm_loadh_pd(_mm_load_sd(p + _mm256_extract_epi64(i, 0)), p + _mm256_extract_epi64(i, 1));
    const __m128d hi = _mm_loadh_pd(_mm_load_sd(p + _mm256_extract_epi64(i, 2)), p + _mm256_extract_epi64(i, 3));
    return _mm256_insertf128_pd(_mm256_castpd128_pd256(lo), hi, 1);
}
}  // namespace
}  // namespace moreau::md_block::avx2

#define MOREAU_LANES 4
#define MOREAU_INTERLEAVE kInterleaveAvx2
#define MOREAU_BLOCK_NS avx2
#define MOREAU_VSQRT(x) ((vd)_mm256_sqrt_pd((__m256d)(x)))
#define MOREAU_GATHER(p, i) ((vd)_mm256_i64gather_pd((p), (__m256i)(i), 8))
#define MOREAU_MASKBITS(m) _mm256_movemask_pd((__m256d)(m))
#if 1
#define MOREAU_GATHER_VEC3(p, i, out)                     \
    do {                                                  \
        __m256d parts[3];                                 \
        loadVec3Lanes((p), (__m256i)(i), parts);          \
        for (int e = 0; e < 3; ++e) (out)[e] = (vd)parts[e]; \
    } while (0)
#define MOREAU_GATHER1(p, i) ((vd)loadLanes((p), (__m256i)(i)))
#endif
#include "pair_block_kernel.inc"

namespace moreau::md_block {
BlockKernel blockKernelAvx2(NormalLaw normal, TangentialLaw tangential) { return avx2::pick(normal, tangential); }
DriftKernel driftKernelAvx2() { return avx2::drift; }
}  // namespace moreau::md_block
#endif
