// The lane-parallel contact and kick–drift kernels, 8 lanes. Compiled with -mavx512f (see
// CMakeLists.txt); run only where the CPU reports AVX-512F (chooseBlockKernel).
#if defined(__x86_64__)
#include <immintrin.h>

#include "pair_block.hpp"

#define MOREAU_LANES 8
#define MOREAU_INTERLEAVE kInterleaveAvx512
#define MOREAU_BLOCK_NS avx512
// (_mm512_sqrt_pd and _mm512_i64gather_pd read an undefined vector in GCC 12:
// -Wuninitialized; the masked forms do not.)
#define MOREAU_VSQRT(x) ((vd)_mm512_mask_sqrt_pd((__m512d)(x), (__mmask8)0xFF, (__m512d)(x)))
#define MOREAU_GATHER(p, i) ((vd)_mm512_mask_i64gather_pd(_mm512_setzero_pd(), (__mmask8)0xFF, (__m512i)(i), (p), 8))
#define MOREAU_MASKBITS(m) _mm512_test_epi64_mask((__m512i)(m), (__m512i)(m))
#include "pair_block_kernel.inc"

namespace moreau::md_block {
BlockKernel blockKernelAvx512(NormalLaw normal, TangentialLaw tangential) { return avx512::pick(normal, tangential); }
DriftKernel driftKernelAvx512() { return avx512::drift; }
}  // namespace moreau::md_block
#endif
