#pragma once
/// Lane-parallel contact kernel of the fused MD pass (MdForceStage::evaluatePairs): the
/// touching grain–grain path of L consecutive pairs of the list at once,
/// in the vector width of the CPU (L = 2 with SSE2, 4 with AVX2, 8 with
/// AVX-512). The laws are the laws' own arithmetic (md/laws/arithmetic.hpp,
/// instantiated for lane packs); the narrow phase, kinematics and memory
/// handling repeat the scalar pass of pair_schedule.cpp operation for operation
/// (IEEE add, multiply, divide and square root round the same in a lane as
/// in a scalar register, and -ffp-contract=off forbids fused multiply-adds),
/// so the results are the scalar pass's bits.
///
/// The kernel stores each pair's own memory, which no other pair reads: for
/// the lanes it takes (grain–grain pairs and plane walls as b), the advanced
/// spring, the force and the touching flag; for the lanes plainly apart with
/// no force to account for (a grain beyond the conservative reach, a plane
/// not touched, no force last step), a forgotten spring and a cleared flag.
/// The caller then commits, in key order, what pairs share: the per-body
/// sums and the energy sums; and it runs the scalar pass for the remaining
/// lanes: a wall other than a plane as b, a contact opening with last step's
/// force still to account for, coincident centres.
///
/// This header is plain data: the AVX2 and AVX-512 kernels live in
/// translation units compiled for those ISAs, which must not share inline
/// functions (Eigen, the standard library) with the rest of the program.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "moreau/model/law_table.hpp"

namespace moreau::md_block {

/// Everything constant over one force pass. Vectors of 3 are Vec3 arrays
/// (x, y, z contiguous, no padding).
struct BlockContext {
    const std::int32_t* pairs;  ///< (a, b) per pair
    const double *x, *v, *w;    ///< per body
    const double *radius, *invMass;
    double* spring;           ///< per pair (tangential spring law only), read and written
    double* lastForce;        ///< per pair, read and written
    std::uint8_t* touched;    ///< per pair: overlapped at the last evaluation, read and written
    double* overlap;          ///< per pair: written (meaningful where the pair is taken)
    std::int64_t grains;      ///< bodies below this index are grains
    /// Per wall (body grains + i at 5 i): the plane's normal N (3), μ, and
    /// 1 for a plane (0: another shape, left to the scalar pass); null when
    /// the world has no wall.
    const double* walls;
    double kn, gn, kt, gt, mu;
    bool scaleK, scaleG;  ///< the effective-mass convention: k's and γ's times m_eff
    bool clip;            ///< clip attractive normal forces
    bool work;            ///< compute BlockResult::work (MdSolver::trackWork)
    double dt;
    /// Per axis, the period L_k of a periodic axis and +∞ for the others. A
    /// grain–grain lane whose separation is not within L_k / 4 on some
    /// periodic axis (World::minimumImageNear's test) may cross a seam: it
    /// is left to the scalar pass. Every other lane's separation is the
    /// scalar pass's, unwrapped.
    double period[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    /// A deforming periodic cell: a grain–grain pair's relative velocity
    /// gains World::imageVelocity, which is +0 within a quarter period (so
    /// the lane adds +0.0, as the scalar pass does).
    bool deforming = false;
};

/// The leapfrog kick–drift of L consecutive grains at once
/// (md_kernels::advanceLeapfrog with World::rotate, for a world without
/// periodic axes or applied forces), with the scalar code's bits. Vectors
/// of 3 and quaternions (x, y, z, w) are contiguous per body.
struct DriftContext {
    double *x, *v, *w, *q;
    const double *invMass, *invInertia;
    double *force, *torque;  ///< read, and zeroed when clearForces
    const double* builtAt;   ///< positions at the list build; null: no check
    double g[3];
    double dt, limit2;
    bool clearForces;
};
struct DriftResult {
    unsigned moved;         ///< bit j: grain first + j moved beyond √limit2 since the build
    unsigned slowRotation;  ///< bit j: its orientation is left to World::rotate (half-angle ≥ 10⁻²)
};
using DriftKernel = DriftResult (*)(const DriftContext&, std::size_t first);

/// Vector registers per block, computed side by side (the kernel's chain of
/// divisions and square roots is long; two independent chains in flight
/// keep the vector units busy): pairs per block = lanes × interleave.
constexpr int kInterleaveSse2 = 1, kInterleaveAvx2 = 2, kInterleaveAvx512 = 2;

constexpr int kMaxLanes = 16;  ///< pairs per block at most

/// One block's results, lane j at [j].
struct BlockResult {
    double F[3][kMaxLanes];       ///< force on b
    double tq[3][kMaxLanes];      ///< n × F_t
    double work[kMaxLanes];       ///< −½ (F_last + F)·V Δt (only with BlockContext::work)
    unsigned taken;   ///< bit j: lane j is a touching grain–grain pair, computed and stored here
    unsigned scalar;  ///< bit j: lane j is left to the scalar pass (neither taken nor plainly apart)
};

/// Computes `count` blocks of blockPairs pairs from pair `first` on into out[0 .. count).
using BlockKernel = void (*)(const BlockContext&, std::size_t first, std::size_t count, BlockResult* out);

/// Blocks per kernel call (the results stay in L1).
constexpr int kBlocksPerCall = 8;

struct BlockKernelChoice {
    BlockKernel kernel = nullptr;
    DriftKernel drift = nullptr;  ///< the kick–drift of the same width (`lanes` grains per call)
    int lanes = 0;                ///< lanes of a vector register
    int blockPairs = 0;           ///< pairs per block of the contact kernel (lanes × interleave)
    const char* isa = "";
};

/// The widest kernel this CPU runs for these laws (both rows' `lanes`);
/// `maxLanes` caps the width (2, 4 or 8). (md.simd = auto measures which
/// to take: MdForceStage::setPairLanes.)
BlockKernelChoice chooseBlockKernel(NormalLaw normal, TangentialLaw tangential, int maxLanes);

// The kernels of each width (defined in pair_block_*.cpp); null for laws without lanes.
BlockKernel blockKernelSse2(NormalLaw, TangentialLaw);
BlockKernel blockKernelAvx2(NormalLaw, TangentialLaw);
BlockKernel blockKernelAvx512(NormalLaw, TangentialLaw);
DriftKernel driftKernelSse2();
DriftKernel driftKernelAvx2();
DriftKernel driftKernelAvx512();

}  // namespace moreau::md_block
