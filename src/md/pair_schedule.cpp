// MD's pair schedule: the force stage's laws run over a persistent pair
// list (md/pair_list.hpp) with the narrow phase, each pair's memory and the
// per-body sums in one pass, the touching grain–grain pairs through a lane
// kernel (pair_block.hpp). MdSolver runs it after usePairList().
#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <type_traits>

#include "law_kernels.hpp"
#include "pair_block.hpp"
#include "moreau/core/error.hpp"
#include "moreau/md/force_stage.hpp"
#include "moreau/md/pair_list.hpp"

namespace moreau {

using namespace md_kernels;

namespace {
/// Below this many pairs a pass runs on one thread.
constexpr std::size_t kParallelPairs = 4096;
constexpr std::size_t kChunk = MdPairList::kChunk;
}  // namespace

void MdForceStage::useLanes(int maxLanes) {
    blockKernel_ = nullptr;
    driftKernel_ = nullptr;
    blockLanes_ = 0;
    blockPairs_ = 0;
    blockIsa_ = "none";
    if (maxLanes < 2) return;
    const auto choice = md_block::chooseBlockKernel(settings_.normal, settings_.tangential, maxLanes);
    blockKernel_ = choice.kernel;
    driftKernel_ = choice.kernel ? choice.drift : nullptr;
    blockLanes_ = choice.kernel ? choice.lanes : 0;
    blockPairs_ = choice.kernel ? choice.blockPairs : 0;
    blockIsa_ = choice.kernel ? choice.isa : "none";
}

void MdForceStage::setPairLanes(int maxLanes) {
    tuning_ = {};
    if (maxLanes >= 0) return useLanes(maxLanes);
    // auto: which kernel is fastest depends on the CPU (its vector units,
    // its gathers, its caches: docs/md-performance.md), so it is measured on
    // the run's own pairs. The candidates are the 8- and 4-lane kernels
    // where the CPU has them, and the scalar pass; the widest runs first.
    for (const int lanes : {8, 4}) {
        const auto choice = md_block::chooseBlockKernel(settings_.normal, settings_.tangential, lanes);
        if (choice.kernel != nullptr && choice.lanes == lanes) tuning_.lanes.push_back(lanes);
    }
    if (tuning_.lanes.empty()) return useLanes(0);
    tuning_.lanes.push_back(0);
    tuning_.best.assign(tuning_.lanes.size(), HUGE_VAL);
    useLanes(tuning_.lanes.front());
}

template <NormalLaw N, TangentialLaw T>
bool MdForceStage::pairLoop(const World& world, MdPairList& list, double dt, double margin, bool split, bool trackWork) {
    const MdSettings& s = settings_;
    const std::size_t m = list.pairs.size(), numChunks = (m + kChunk - 1) / kChunk;
    chunkWork_.assign(numChunks, 0.0);
    list.overlap.resize(m);
    const std::size_t grains = world.numGrains;
    // Raw pointers: the stores below must not make the compiler reload the
    // vectors' data pointers for every pair.
    const CellGridDetector::Pair* __restrict pairs = list.pairs.data();
    const Vec3* __restrict X = world.x.data();
    const Vec3* __restrict Vb = world.v.data();
    const Vec3* __restrict W = world.w.data();
    const double* __restrict R = world.radius.data();
    const double* __restrict invMass = list.invMass.data();
    Vec3* __restrict forces = list.force.data();
    Vec3* __restrict springs = list.spring.data();
    std::uint8_t* __restrict touched = list.touched.data();
    double* __restrict overlaps = list.overlap.data();
    double* __restrict chunkWork = chunkWork_.data();
    const double muGrain = world.muGrain;
    const bool periodic = world.anyPeriodic(), deforming = world.deforming();
    // The block kernel's view of the same data (in a periodic world it
    // leaves the pairs that may cross a seam to the scalar pass).
    static_assert(sizeof(CellGridDetector::Pair) == 2 * sizeof(std::int32_t) && sizeof(Vec3) == 3 * sizeof(double));
    const bool useBlocks = blockKernel_ != nullptr;
    const auto blockKernel = blockKernel_;
    const int lanes = blockPairs_;
    md_block::BlockContext blockContext{};
    if (useBlocks) {
        const bool spring = lawRow(T).spring;
        // Vec3 is three packed doubles (asserted above): casts, not ->data(),
        // so that an empty list (null pointers) is no member access.
        using CD = const double*;
        blockContext = md_block::BlockContext{reinterpret_cast<const std::int32_t*>(pairs),
                                              reinterpret_cast<CD>(X), reinterpret_cast<CD>(Vb), reinterpret_cast<CD>(W),
                                              R, invMass, spring ? reinterpret_cast<double*>(springs) : nullptr,
                                              reinterpret_cast<double*>(forces), touched, overlaps,
                                              static_cast<std::int64_t>(grains),
                                              list.wallTable.empty() ? nullptr : list.wallTable.data(), s.kn, s.gammaN, s.kt, s.gammaT,
                                              muGrain, s.meff == EffectiveMass::Both, s.meff != EffectiveMass::None,
                                              s.clipAttractive, trackWork, dt};
        for (int e = 0; e < 3; ++e)
            if (world.periodic[e]) blockContext.period[e] = world.boxMax[e] - world.boxMin[e];
        blockContext.deforming = periodic && deforming;
    }
    // The per-body sums are made here, in key order (MdSolver::gather's:
    // a body's terms as b, then as a): each pair adds its terms onto both
    // bodies' sums in memory as it comes. The list is sorted by a, so a
    // body's terms, as b (pairs (j, a), j < a) and then as a, come in list
    // order. (Keeping a's run in registers instead, stored when a changes,
    // gives the same bits but was about 6 % slower, likely because the test
    // for a new run, true about every third pair, is hard to predict.)
    // Split (several threads): each thread takes a range of chunks. A body's
    // terms in list order fall into consecutive ranges, so the range of its
    // first pair (its owner) sums the first part of them in place; a later
    // range spills its terms for that body, in list order, and after every
    // range is done the spills are added in range order, finishing each
    // sum in the serial order.
    Vec3* __restrict bodyF = force_.data();
    Vec3* __restrict bodyT = torque_.data();
    const std::uint32_t* __restrict owner = split ? list.split.owner.data() : nullptr;
    // The split pass and the serial one, and the pass over a periodic world
    // and over one without, are compiled apart (`split`, `wraps`: a
    // std::bool_constant each; not law axes): the serial pass tests no owner
    // per term, the plain one no periodic seam per pair.
    auto own = [owner](auto split, std::size_t i, std::size_t range) {
        if constexpr (decltype(split)::value) return owner[i] == range;
        return true;
    };
    // The helpers take the chunk's state (work sum, spill cursor)
    // explicitly and capture only pointers, by value: the loop over the
    // kernel's lanes keeps its state and pointers in registers, and hands
    // them to the (out-of-line) scalar pass only around the rare lanes it
    // leaves to it.
    struct ChunkState {
        double work = 0.0;
        MdPairList::SpillTerm* spill = nullptr;  ///< next free term of this range's spill (split)
    };
    // A pair apart whose contact had been touching: it forgets its spring.
    auto forget = [=](std::size_t k) {
        if (touched[k]) {
            touched[k] = 0;
            if constexpr (lawRow(T).spring) springs[k] = Vec3::Zero();
        }
    };
    // A touching pair's force F on b and n × F_t onto the per-body sums:
    // in place for the bodies this range owns, spilled otherwise (x − y is
    // x + (−y) exactly, so a spilled term adds the same bits later).
    auto deliver = [=](auto split, std::size_t range, ChunkState& st, std::size_t ia, std::size_t ib, const Vec3& F,
                       const Vec3& tq) {
        if (own(split, ib, range)) {
            bodyF[ib] += F;
            bodyT[ib] -= R[ib] * tq;
        } else {
            *st.spill++ = MdPairList::SpillTerm{F, -(R[ib] * tq), static_cast<std::int32_t>(ib)};
        }
        if (own(split, ia, range)) {
            bodyF[ia] -= F;
            bodyT[ia] -= R[ia] * tq;
        } else {
            *st.spill++ = MdPairList::SpillTerm{-F, -(R[ia] * tq), static_cast<std::int32_t>(ia)};
        }
    };
    // One pair, all cases (the block kernel's lanes it does not take).
    auto scalarPair = [=, &world, &s](auto split, auto wraps, std::size_t k, std::size_t range, ChunkState& st) {
        constexpr bool periodicSeams = decltype(wraps)::value;
        const BodyId a = pairs[k].a, b = pairs[k].b;
        const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
        const double ra = R[ia], rb = R[ib];
        // Narrow phase with narrowSphereSphere's / narrowSphereWall's arithmetic.
        Vec3 n = Vec3::UnitX();  // set below wherever it is read
        double gap;
        bool touching;
        if (ib < grains) {
            Vec3 d = X[ib] - X[ia];
            if constexpr (periodicSeams) d = world.minimumImageNear(d);
            const double d2 = d.squaredNorm();
            const double reach = ra + rb, slack = 1e-9 * reach + reach;
            if (!(d2 <= slack * slack)) {  // far apart: no overlap (conservative, as the detector's)
                touching = false;
                gap = HUGE_VAL;
            } else {
                const double dist = std::sqrt(d2);
                gap = dist - ra - rb;
                touching = gap < 0.0;
                n = dist > 0.0 ? Vec3(d * (1.0 / dist)) : Vec3::UnitX();
            }
        } else {
            Contact c;
            touching = narrowSphereWall(world, a, b, HUGE_VAL, c) && c.gap < 0.0;
            gap = c.gap;
            n = c.n;
        }
        Vec3& lastForce = forces[k];
        if (!touching) {
            // The contact ends when the overlap vanishes and forgets its
            // spring. Last step's force did work while it opened (counted,
            // as the staged pipeline does, while the pair is within the margin).
            forget(k);
            if (lastForce.squaredNorm() > 0.0) {
                if (trackWork) {
                    if (gap >= HUGE_VAL) {  // the far-apart exit skipped the geometry
                        Contact c;
                        gap = narrowSphereSphere(world, a, b, HUGE_VAL, c) ? c.gap : HUGE_VAL;
                        n = c.n;
                    }
                    if (gap < margin) {
                        Vec3 V = Vb[ib] - Vb[ia] - (ra * W[ia] + rb * W[ib]).cross(n);
                        if constexpr (periodicSeams)
                            if (deforming && ib < grains) V += world.imageVelocity(X[ib] - X[ia]);
                        st.work += -0.5 * lastForce.dot(V) * dt;
                    }
                }
                lastForce = Vec3::Zero();
            }
            return;
        }
        touched[k] = 1;
        const double overlap = -gap;
        overlaps[k] = overlap;
        const Constants cst = contactConstants(s, invMass[ia], invMass[ib], ib < grains ? muGrain : world.wall(b).mu);
        Vec3 V = Vb[ib] - Vb[ia] - (ra * W[ia] + rb * W[ib]).cross(n);
        if constexpr (periodicSeams)
            if (deforming && ib < grains) V += world.imageVelocity(X[ib] - X[ia]);  // the image's, in a deforming cell
        const double Vn = n.dot(V);
        // The laws' arithmetic (md/laws), as the staged loop and the lane
        // kernel run it; the fused laws keep no memory but the spring.
        const Vec3 Vt = V - Vn * n;
        double Fn = NormalKernel<N>::force(cst, overlap, -Vn, nullptr);
        if (s.clipAttractive && Fn < 0.0) Fn = 0.0;
        bool sliding = false;
        Vec3 none = Vec3::Zero();
        Vec3& spring = lawRow(T).spring ? springs[k] : none;
        const Vec3 Ft = TangentialKernel<T>::apply(cst, n, Vt, Vn, Fn, Vec3(Vt * dt), spring, sliding);
        const Vec3 F = Fn * n + Ft;
        if (trackWork) st.work += -0.5 * (lastForce + F).dot(V) * dt;
        lastForce = F;
        deliver(split, range, st, ia, ib, F, n.cross(Ft));
    };
    // Chunk `chunk` of range `range`, spilling from `spill` on; returns the
    // spill's new end.
    auto doChunk = [=](auto split, auto wraps, std::size_t chunk, std::size_t range, MdPairList::SpillTerm* spill) {
        ChunkState st{0.0, spill};  // its address is never taken: kept in registers
        auto viaScalar = [&](std::size_t k) {
            ChunkState handed = st;
            scalarPair(split, wraps, k, range, handed);
            st = handed;
        };
        const std::size_t end = std::min(m, (chunk + 1) * kChunk);
        std::size_t k = chunk * kChunk;
        if (useBlocks) {
            md_block::BlockResult r[md_block::kBlocksPerCall];
            const auto L = static_cast<std::size_t>(lanes);
            while (k + L <= end) {
                const std::size_t blocks = std::min<std::size_t>(md_block::kBlocksPerCall, (end - k) / L);
                blockKernel(blockContext, k, blocks, r);
                // The kernel stored each pair's spring, force and flag. The
                // lanes left out below are plainly apart with no force to
                // account for: the kernel has forgotten their springs, and
                // they add to no sum.
                for (std::size_t q = 0; q < blocks; ++q, k += L) {
                    const md_block::BlockResult& rq = r[q];
                    for (unsigned pending = rq.taken | rq.scalar; pending != 0; pending &= pending - 1) {
                        const int j = std::countr_zero(pending);
                        const std::size_t kj = k + static_cast<std::size_t>(j);
                        if (!(rq.taken >> j & 1u)) {
                            viaScalar(kj);
                            continue;
                        }
                        // A touching grain–grain pair computed by the kernel:
                        // the sums of the scalar path, from lane j.
                        const auto ia = static_cast<std::size_t>(pairs[kj].a);
                        const auto ib = static_cast<std::size_t>(pairs[kj].b);
                        if (trackWork) st.work += rq.work[j];
                        deliver(split, range, st, ia, ib, Vec3(rq.F[0][j], rq.F[1][j], rq.F[2][j]),
                                Vec3(rq.tq[0][j], rq.tq[1][j], rq.tq[2][j]));
                    }
                }
            }
        }
        for (; k < end; ++k) viaScalar(k);
        chunkWork[chunk] = st.work;
        return st.spill;
    };
    if (split) {
        // One range of chunks per thread (bounds has ranges + 1 entries).
        // Should the runtime give fewer threads, each takes several ranges:
        // the bodies a range owns are still summed in place by one thread,
        // in order, and the spills still wait for every range.
        // Each range's time goes to rebalance() (when the team is whole).
        // In the same parallel region (one fork and join per step): once
        // every range is done, the last thread adds the spills in range
        // order (a few thousand terms, from its own cache for two threads),
        // and then every thread checks a share of the sums for finiteness.
        const std::size_t ranges = list.split.ranges;
        const std::size_t* const bounds = list.split.bounds.data();
        list.split.rangeTime.resize(ranges, 0.0);
        double* const rangeTime = list.split.rangeTime.data();
        list.split.lastRangeSeconds.assign(ranges, 0.0);
        double* const lastRange = list.split.lastRangeSeconds.data();
        const std::size_t nb = force_.size();
        std::vector<MdPairList::SpillTerm>* const spills = list.split.spill.data();
        std::size_t* const spilled = list.split.spilled.data();
        int bad = 0;
#pragma omp parallel num_threads(static_cast<int>(ranges)) reduction(| : bad)
        {
            const auto nt = static_cast<std::size_t>(omp_get_num_threads()), me = static_cast<std::size_t>(omp_get_thread_num());
            for (auto t = me; t < ranges; t += nt) {
                const double start = omp_get_wtime();
                MdPairList::SpillTerm* const first = spills[t].data();
                MdPairList::SpillTerm* spill = first;
                for (std::size_t chunk = bounds[t]; chunk < bounds[t + 1]; ++chunk)
                    spill = periodic ? doChunk(std::true_type{}, std::true_type{}, chunk, t, spill)
                                     : doChunk(std::true_type{}, std::false_type{}, chunk, t, spill);
                spilled[t] = static_cast<std::size_t>(spill - first);
                lastRange[t] = omp_get_wtime() - start;
                rangeTime[t] += lastRange[t];
            }
#pragma omp barrier
            if (me == nt - 1)
                for (std::size_t t = 1; t < ranges; ++t)
                    for (const MdPairList::SpillTerm* term = spills[t].data(); term != spills[t].data() + spilled[t]; ++term) {
                        const auto i = static_cast<std::size_t>(term->body);
                        bodyF[i] += term->force;
                        bodyT[i] += term->torque;
                    }
#pragma omp barrier
            bad |= forcesFinite(bodyF, bodyT, me * nb / nt, (me + 1) * nb / nt) ? 0 : 1;
        }
        return bad == 0;
    }
    list.split.lastRangeSeconds.clear();
    for (std::size_t chunk = 0; chunk < numChunks; ++chunk)
        periodic ? doChunk(std::false_type{}, std::true_type{}, chunk, 0, nullptr)
                 : doChunk(std::false_type{}, std::false_type{}, chunk, 0, nullptr);
    return forcesFinite(bodyF, bodyT, 0, force_.size());
}

void MdForceStage::evaluatePairs(const World& world, MdPairList& list, const StepContext& ctx, double margin,
                                 bool trackWork) {
    const std::size_t nb = world.numBodies();
    // One thread (or a small list): one pass makes every per-body sum; more
    // threads: each takes a range of the list (MdPairList::prepareSplit,
    // redone when the list or the thread count changes), and a body's terms
    // in later ranges than its first are added after the pass, in order.
    // The same bits either way.
    const std::size_t threads = list.size() > kParallelPairs ? static_cast<std::size_t>(omp_get_max_threads()) : 1;
    const bool split = threads > 1;
    if (split) list.prepareSplit(world, threads, blockKernel_ != nullptr);
    // The per-body sums start from zero: the kick–drift of the last step
    // cleared them as it read them (sumsCleared()), so they are zeroed here
    // only at the start, after a resize or after a step that threw.
    if (!sumsClear_ || force_.size() != nb) {
        force_.assign(nb, Vec3::Zero());
        torque_.assign(nb, Vec3::Zero());
    }
    sumsClear_ = false;
    // The law pair, among those whose rows the pair schedule takes (MdSolver::pairListAdmits()).
    bool finite = true;
    // md.simd = auto measuring (setPairLanes): this pass is timed for the
    // candidate now in place, and the next pass takes the next candidate.
    const bool timed = !tuning_.lanes.empty() && list.size() >= kTunePairs;
    const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    withNormalLaw<&ForceLawRow::fused>(settings_.normal, [&]<NormalLaw N>() {
        withTangentialLaw<&ForceLawRow::fused>(settings_.tangential, [&]<TangentialLaw T>() {
            finite = pairLoop<N, T>(world, list, ctx.dt, margin, split, trackWork);
        });
    });
    if (timed) {
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        const std::size_t candidates = tuning_.lanes.size(), now = static_cast<std::size_t>(tuning_.passes) % candidates;
        tuning_.best[now] = std::min(tuning_.best[now], took.count() / static_cast<double>(list.size()));
        ++tuning_.passes;
        if (tuning_.passes < kTuneRounds * static_cast<int>(candidates)) {
            useLanes(tuning_.lanes[static_cast<std::size_t>(tuning_.passes) % candidates]);
        } else {
            const auto fastest = std::min_element(tuning_.best.begin(), tuning_.best.end()) - tuning_.best.begin();
            useLanes(tuning_.lanes[static_cast<std::size_t>(fastest)]);
            tuning_ = {};
        }
    }
    if (split && omp_get_max_threads() >= static_cast<int>(list.split.ranges)) list.rebalance();
    // The pass checked the sums; the first bad body, for the report, only
    // when one is not finite.
    if (!finite) checkFiniteForces(force_, torque_, ctx.step);
    // A glued grain's forces act on its wall (World::DrivenGrain).
    world.addGluedForces(force_);
    if (trackWork) {
        double work = 0.0;
        for (const double w : chunkWork_) work += w;
        workIn_ += work;
    }
}

std::vector<PairDiagnostic> MdForceStage::pairDiagnostics(const MdPairList& list) const {
    // Each touching pair's elastic energy as the laws give it (md/laws: the
    // fused laws keep no normal memory, so their energy is the overlap's;
    // the spring's is ½ k_t |s|², as laneLawForce has it), and its overlap,
    // counted where it carries force.
    const MdSettings& s = settings_;
    std::vector<std::size_t> touching;
    for (std::size_t k = 0; k < list.pairs.size(); ++k)
        if (list.touched[k]) touching.push_back(k);
    const std::size_t m = touching.size();
    std::vector<PairDiagnostic> out(m);
    withNormalLaw<&ForceLawRow::fused>(s.normal, [&]<NormalLaw N>() {
        const bool spring = lawRow(s.tangential).spring;
#pragma omp parallel for schedule(static) if (m > kParallelPairs)
        for (std::size_t t = 0; t < m; ++t) {
            const std::size_t k = touching[t];
            const auto ia = static_cast<std::size_t>(list.pairs[k].a), ib = static_cast<std::size_t>(list.pairs[k].b);
            const Constants cst = contactConstants(s, list.invMass[ia], list.invMass[ib], 0.0);
            const double overlap = list.overlap[k];
            const double normal = NormalKernel<N>::energy(cst, overlap, 0.0, nullptr);
            const double tangential = spring ? 0.5 * cst.kt * list.spring[k].squaredNorm() : 0.0;
            out[t] = {makeContactKey(list.pairs[k].a, list.pairs[k].b), normal + tangential, overlap,
                      list.force[k].squaredNorm() > 0.0};
        }
    });
    return out;
}

}  // namespace moreau
