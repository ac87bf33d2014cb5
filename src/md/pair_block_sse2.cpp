// The lane-parallel contact and kick–drift kernels, 2 lanes (SSE2: every x86-64; plain
// vector code elsewhere), and the
// choice of the widest kernel the CPU runs.
#include "pair_block.hpp"

#define MOREAU_LANES 2
#define MOREAU_INTERLEAVE kInterleaveSse2
#define MOREAU_BLOCK_NS sse2
#if defined(__x86_64__)
#include <emmintrin.h>
#define MOREAU_VSQRT(x) ((vd)_mm_sqrt_pd((__m128d)(x)))
#define MOREAU_MASKBITS(m) _mm_movemask_pd((__m128d)(m))
#else
#define MOREAU_VSQRT(x) (vd{__builtin_sqrt((x)[0]), __builtin_sqrt((x)[1])})
#define MOREAU_MASKBITS(m) (((m)[0] & 1) | ((m)[1] & 1) << 1)
#endif
#define MOREAU_GATHER(p, i) (vd{(p)[(i)[0]], (p)[(i)[1]]})
#include "pair_block_kernel.inc"

namespace moreau::md_block {

BlockKernel blockKernelSse2(NormalLaw normal, TangentialLaw tangential) { return sse2::pick(normal, tangential); }
DriftKernel driftKernelSse2() { return sse2::drift; }

BlockKernelChoice chooseBlockKernel(NormalLaw normal, TangentialLaw tangential, int maxLanes) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (maxLanes >= 8 && __builtin_cpu_supports("avx512f"))
        return {blockKernelAvx512(normal, tangential), driftKernelAvx512(), 8, 8 * kInterleaveAvx512, "avx512"};
    if (maxLanes >= 4 && __builtin_cpu_supports("avx2"))
        return {blockKernelAvx2(normal, tangential), driftKernelAvx2(), 4, 4 * kInterleaveAvx2, "avx2"};
    return {blockKernelSse2(normal, tangential), driftKernelSse2(), 2, 2 * kInterleaveSse2, "sse2"};
#else
    (void)maxLanes;
    return {blockKernelSse2(normal, tangential), driftKernelSse2(), 2, 2 * kInterleaveSse2, "generic"};
#endif
}

}  // namespace moreau::md_block
