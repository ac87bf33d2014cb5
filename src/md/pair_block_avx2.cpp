// The lane-parallel contact and kick–drift kernels, 4 lanes. Compiled with -mavx2 (see
// CMakeLists.txt); run only where the CPU reports AVX2 (chooseBlockKernel).
#if defined(__x86_64__)
#include <immintrin.h>

#include "pair_block.hpp"

#define MOREAU_LANES 4
#define MOREAU_INTERLEAVE kInterleaveAvx2
#define MOREAU_BLOCK_NS avx2
#define MOREAU_VSQRT(x) ((vd)_mm256_sqrt_pd((__m256d)(x)))
#define MOREAU_GATHER(p, i) ((vd)_mm256_i64gather_pd((p), (__m256i)(i), 8))
#define MOREAU_MASKBITS(m) _mm256_movemask_pd((__m256d)(m))
#include "pair_block_kernel.inc"

namespace moreau::md_block {
BlockKernel blockKernelAvx2(NormalLaw normal, TangentialLaw tangential) { return avx2::pick(normal, tangential); }
DriftKernel driftKernelAvx2() { return avx2::drift; }
}  // namespace moreau::md_block
#endif
