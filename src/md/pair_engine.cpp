#include "moreau/md/pair_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "law_kernels.hpp"
#include "pair_block.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

using namespace md_kernels;

namespace {

/// Below this many pairs a pass runs on one thread.
constexpr std::size_t kParallelPairs = 4096;
/// Pairs per partial sum of energy, work and overlap (fixed: the same bits
/// for any thread count).
constexpr std::size_t kChunk = 256;

}  // namespace

bool MdPairEngine::supports(const MdSettings& s, std::string* why) {
    auto no = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (s.integrator != Integrator::CD) return no("md.integrator is not cd");
    const auto notFused = [&](const char* key, std::string_view law) {
        return no(std::string(key) + " = " + std::string(law) + " is not among the fused pass's laws");
    };
    if (!lawRow(s.normal).fused) return notFused("md.normal", lawRow(s.normal).name);
    if (!lawRow(s.tangential).fused) return notFused("md.tangential", lawRow(s.tangential).name);
    if (s.muStaticRatio != 1.0) return no("md.mu_static_ratio != 1 keeps a sliding flag per contact");
    if (!lawRow(s.rolling).fused) return no("md.rolling keeps a rolling spring per contact");
    return true;
}

MdPairEngine::MdPairEngine(const MdSettings& settings, double skin, double innerSkin)
    : settings_(settings), skin_(skin), innerSkin_(innerSkin > 0.0 && innerSkin < skin ? innerSkin : skin) {
    std::string why;
    if (!supports(settings, &why)) throw InputError("md.pipeline = fused: " + why + "; use md.pipeline = staged");
    setBlockLanes(settings.simdLanes);
}

void MdPairEngine::setBlockLanes(int maxLanes) {
    blockKernel_ = nullptr;
    driftKernel_ = nullptr;
    blockLanes_ = 0;
    blockPairs_ = 0;
    blockIsa_ = "none";
    if (maxLanes >= 0 && maxLanes < 2) return;
    const auto choice = md_block::chooseBlockKernel(settings_.normal, settings_.tangential, maxLanes);
    blockKernel_ = choice.kernel;
    driftKernel_ = choice.kernel ? choice.drift : nullptr;
    blockLanes_ = choice.kernel ? choice.lanes : 0;
    blockPairs_ = choice.kernel ? choice.blockPairs : 0;
    blockIsa_ = choice.kernel ? choice.isa : "none";
}

ContactStore MdPairEngine::memory() const {
    const bool spring = lawRow(settings_.tangential).spring;
    ContactStore store;
    store.slots.stride = spring ? 3 : 0;
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
        const bool springy = spring && spring_[k].squaredNorm() > 0.0;
        if (!touched_[k] && force_[k].squaredNorm() == 0.0 && !springy) continue;
        ContactMemory r;
        r.key = makeContactKey(pairs_[k].a, pairs_[k].b);
        r.history.reaction = force_[k];
        store.records.push_back(r);
        if (spring) store.slots.values.insert(store.slots.values.end(), spring_[k].data(), spring_[k].data() + 3);
    }
    return store;
}

void MdPairEngine::restoreMemory(const ContactStore& store, const std::string& origin) {
    const bool spring = lawRow(settings_.tangential).spring;
    const std::size_t stride = spring ? 3 : 0, m = store.records.size();
    if (store.slots.stride != stride || store.slots.values.size() != m * stride)
        throw InputError(origin + ": contact store of " + std::to_string(store.slots.stride) +
                         " slots per contact, the scene's laws keep " + std::to_string(stride));
    pairs_.resize(m);
    force_.resize(m);
    spring_.assign(spring ? m : 0, Vec3::Zero());
    touched_.resize(m);
    for (std::size_t k = 0; k < m; ++k) {
        const ContactKey key = store.records[k].key;
        pairs_[k] = {keyBodyA(key), keyBodyB(key)};
        force_[k] = store.records[k].history.reaction;
        if (spring) spring_[k] = slotVec3(store.slots.at(k));
        // A pass leaves a force or a spring only on pairs it found
        // overlapping; one overlapping with neither has nothing to forget.
        touched_[k] = force_[k].squaredNorm() > 0.0 || (spring && spring_[k].squaredNorm() > 0.0) ? 1 : 0;
    }
    // The next pass builds both lists afresh and carries this memory by key.
    outerAt_.clear();
    builtAt_.clear();
    moved_ = true;
    // The overlaps are the next pass's to find: until it runs, the
    // diagnostics (energy, overlaps) are zeros.
    overlap_.assign(m, 0.0);
    diagnostics_ = Diagnostics{};
    diagnosticsDone_ = true;
}

void MdPairEngine::rebuildOuter(const World& world, double margin) {
    grid_.detectPairs(world, margin + skin_, outer_);
    grid_.releaseBuffers();
    outerAt_ = world.x;
    outerCell_ = world.cellState();
    ++builds_;
}

void MdPairEngine::rebuild(const World& world, double margin) {
    // The working list: the pairs of the Verlet list within margin +
    // innerSkin now, and every pair that has memory (touching at the last
    // evaluation, or with last step's force still to account for), whatever
    // its gap. A pair left out is apart with no memory, and no body moves
    // more than innerSkin/2 before the next filtering, so it stays apart: it
    // would add nothing to any sum. The memory is carried over by key
    // (merge-join; both lists are in key order). With innerSkin = skin every
    // pair of the Verlet list is kept.
    const bool filter = innerSkin_ < skin_;
    const double reach = margin + innerSkin_;
    const bool spring = lawRow(settings_.tangential).spring;
    std::vector<CellGridDetector::Pair> fresh;
    fresh.reserve(filter ? outer_.size() / 2 : outer_.size());
    std::vector<Vec3> freshSpring, freshForce;
    std::vector<std::uint8_t> freshTouched;
    // Where each pair of the Verlet list was in the old working list (−1:
    // nowhere), by the merge-join that carries every contact's memory.
    std::vector<std::int32_t> from(outer_.size());
    mergeByKey(
        pairs_.size(), [&](std::size_t o) { return makeContactKey(pairs_[o].a, pairs_[o].b); }, outer_.size(),
        [&](std::size_t k) { return makeContactKey(outer_[k].a, outer_[k].b); },
        [&](std::size_t k, std::size_t o) { from[k] = static_cast<std::int32_t>(o); },
        [&](std::size_t k) { from[k] = -1; });
    Contact c;
    for (std::size_t k = 0; k < outer_.size(); ++k) {
        const CellGridDetector::Pair p = outer_[k];
        const bool known = from[k] >= 0;
        const auto o = static_cast<std::size_t>(known ? from[k] : 0);
        const bool memory = known && (touched_[o] || force_[o].squaredNorm() > 0.0 || (spring && spring_[o].squaredNorm() > 0.0));
        if (filter && !memory) {
            const bool near = world.isWall(p.b) ? narrowSphereWall(world, p.a, p.b, reach, c)
                                                : narrowSphereSphere(world, p.a, p.b, reach, c);
            if (!near) continue;
        }
        fresh.push_back(p);
        if (spring) freshSpring.push_back(known ? spring_[o] : Vec3::Zero());
        freshForce.push_back(known ? force_[o] : Vec3::Zero());
        freshTouched.push_back(known ? touched_[o] : std::uint8_t{0});
    }
    const std::size_t m = fresh.size();
    pairs_.swap(fresh);
    spring_.swap(freshSpring);
    force_.swap(freshForce);
    touched_.swap(freshTouched);
    builtAt_ = world.x;
    builtCell_ = world.cellState();
    builtMargin_ = margin;
    ++innerBuilds_;
    // Pairs by body, for the owners of the split pass (assignOwners).
    buildByBodyIndex(
        world.numBodies(), m, [this](std::size_t k) { return std::pair{pairs_[k].a, pairs_[k].b}; }, aStart_, bStart_,
        byB_);
}

template <NormalLaw N, TangentialLaw T>
void MdPairEngine::forcePass(const World& world, double dt, double margin, bool split) {
    const MdSettings& s = settings_;
    const std::size_t m = pairs_.size(), numChunks = (m + kChunk - 1) / kChunk;
    chunkWork_.assign(numChunks, 0.0);
    overlap_.resize(m);
    const std::size_t grains = world.numGrains;
    // Raw pointers: the stores below must not make the compiler reload the
    // vectors' data pointers for every pair.
    const CellGridDetector::Pair* __restrict pairs = pairs_.data();
    const Vec3* __restrict X = world.x.data();
    const Vec3* __restrict Vb = world.v.data();
    const Vec3* __restrict W = world.w.data();
    const double* __restrict R = world.radius.data();
    const double* __restrict invMass = invMass_.data();
    Vec3* __restrict forces = force_.data();
    Vec3* __restrict springs = spring_.data();
    std::uint8_t* __restrict touched = touched_.data();
    double* __restrict overlaps = overlap_.data();
    double* __restrict chunkWork = chunkWork_.data();
    const double muGrain = world.muGrain;
    const bool trackWork = trackWork_;
    const bool periodic = world.anyPeriodic(), deforming = world.deforming();
    // The block kernel's view of the same data (non-periodic worlds).
    static_assert(sizeof(CellGridDetector::Pair) == 2 * sizeof(std::int32_t) && sizeof(Vec3) == 3 * sizeof(double));
    const bool useBlocks = !periodic && blockKernel_ != nullptr;
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
                                              wallTable_.empty() ? nullptr : wallTable_.data(), s.kn, s.gammaN, s.kt, s.gammaT,
                                              muGrain, s.meff == EffectiveMass::Both, s.meff != EffectiveMass::None,
                                              s.clipAttractive, trackWork, dt};
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
    Vec3* __restrict bodyF = bodyForce_.data();
    Vec3* __restrict bodyT = bodyTorque_.data();
    const std::uint32_t* __restrict owner = split ? owner_.data() : nullptr;
    auto own = [owner](std::size_t i, std::size_t range) { return owner == nullptr || owner[i] == range; };
    // The helpers take the chunk's state (work sum, spill cursor)
    // explicitly and capture only pointers, by value: the loop over the
    // kernel's lanes keeps its state and pointers in registers, and hands
    // them to the (out-of-line) scalar pass only around the rare lanes it
    // leaves to it.
    struct ChunkState {
        double work = 0.0;
        SpillTerm* spill = nullptr;  ///< next free term of this range's spill (split)
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
    auto deliver = [=](std::size_t range, ChunkState& st, std::size_t ia, std::size_t ib, const Vec3& F, const Vec3& tq) {
        if (own(ib, range)) {
            bodyF[ib] += F;
            bodyT[ib] -= R[ib] * tq;
        } else {
            *st.spill++ = SpillTerm{F, -(R[ib] * tq), static_cast<std::int32_t>(ib)};
        }
        if (own(ia, range)) {
            bodyF[ia] -= F;
            bodyT[ia] -= R[ia] * tq;
        } else {
            *st.spill++ = SpillTerm{-F, -(R[ia] * tq), static_cast<std::int32_t>(ia)};
        }
    };
    // One pair, all cases (the block kernel's lanes it does not take).
    auto scalarPair = [=, &world, &s](std::size_t k, std::size_t range, ChunkState& st) {
        const BodyId a = pairs[k].a, b = pairs[k].b;
        const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
        const double ra = R[ia], rb = R[ib];
        // Narrow phase with narrowSphereSphere's / narrowSphereWall's arithmetic.
        Vec3 n = Vec3::UnitX();  // set below wherever it is read
        double gap;
        bool touching;
        if (ib < grains) {
            Vec3 d = X[ib] - X[ia];
            if (periodic) d = world.minimumImageNear(d);
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
                        if (periodic)
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
        if (periodic)
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
        deliver(range, st, ia, ib, F, n.cross(Ft));
    };
    // Chunk `chunk` of range `range`, spilling from `spill` on; returns the
    // spill's new end.
    auto doChunk = [=](std::size_t chunk, std::size_t range, SpillTerm* spill) {
        ChunkState st{0.0, spill};  // its address is never taken: kept in registers
        auto viaScalar = [&](std::size_t k) {
            ChunkState handed = st;
            scalarPair(k, range, handed);
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
                        deliver(range, st, ia, ib, Vec3(rq.F[0][j], rq.F[1][j], rq.F[2][j]),
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
        // One range of chunks per thread (split_ has splitRanges_ + 1 bounds).
        // Should the runtime give fewer threads, each takes several ranges:
        // the bodies a range owns are still summed in place by one thread,
        // in order, and the spills still wait for every range.
        // Each range's time goes to rebalance() (when the team is whole).
        // In the same parallel region (one fork and join per step): once
        // every range is done, the last thread adds the spills in range
        // order (a few thousand terms, from its own cache for two threads),
        // and then every thread checks a share of the sums for finiteness.
        const std::size_t ranges = splitRanges_;
        rangeTime_.resize(ranges, 0.0);
        double* const rangeTime = rangeTime_.data();
        lastRangeSeconds_.assign(ranges, 0.0);
        double* const lastRange = lastRangeSeconds_.data();
        const std::size_t nb = bodyForce_.size();
        std::vector<SpillTerm>* const spills = spill_.data();
        std::size_t* const spilled = spilled_.data();
        int bad = 0;
#pragma omp parallel num_threads(static_cast<int>(ranges)) reduction(| : bad)
        {
            const auto nt = static_cast<std::size_t>(omp_get_num_threads()), me = static_cast<std::size_t>(omp_get_thread_num());
            for (auto t = me; t < ranges; t += nt) {
                const double start = omp_get_wtime();
                SpillTerm* const first = spills[t].data();
                SpillTerm* spill = first;
                for (std::size_t chunk = split_[t]; chunk < split_[t + 1]; ++chunk) spill = doChunk(chunk, t, spill);
                spilled[t] = static_cast<std::size_t>(spill - first);
                lastRange[t] = omp_get_wtime() - start;
                rangeTime[t] += lastRange[t];
            }
#pragma omp barrier
            if (me == nt - 1)
                for (std::size_t t = 1; t < ranges; ++t)
                    for (const SpillTerm* term = spills[t].data(); term != spills[t].data() + spilled[t]; ++term) {
                        const auto i = static_cast<std::size_t>(term->body);
                        bodyF[i] += term->force;
                        bodyT[i] += term->torque;
                    }
#pragma omp barrier
            bad |= forcesFinite(bodyF, bodyT, me * nb / nt, (me + 1) * nb / nt) ? 0 : 1;
        }
        sumsFinite_ = bad == 0;
    } else {
        lastRangeSeconds_.clear();
        for (std::size_t chunk = 0; chunk < numChunks; ++chunk) doChunk(chunk, 0, nullptr);
        sumsFinite_ = forcesFinite(bodyF, bodyT, 0, bodyForce_.size());
    }
}

void MdPairEngine::planSplit(const World& world, std::size_t ranges) {
    // Ranges of whole chunks of about equal cost. A grain–wall pair that
    // takes the scalar pass (no lane kernel, or a wall other than a plane)
    // costs about 2.5 grain–grain pairs in the lane kernel (costs in half
    // units below). Walls cluster at one end of a packing stored bottom to
    // top (the floor): before plane walls went into the kernel, counting
    // pairs alone left one thread 12 % more work on packing_N10000.
    // (The split never changes a result: every body is summed in key order.)
    // A body belongs to the range of its first pair (assignOwners).
    constexpr std::size_t kGrainCost = 2, kScalarWallCost = 5;
    const std::size_t nb = world.numBodies(), grains = world.numGrains;
    const bool kernel = blockKernel_ != nullptr && !world.anyPeriodic();
    std::vector<std::size_t> wallCost(nb - grains);
    for (std::size_t i = 0; i < wallCost.size(); ++i)
        wallCost[i] = kernel && world.wall(static_cast<BodyId>(grains + i)).kind == ShapeKind::Plane ? kGrainCost
                                                                                                  : kScalarWallCost;
    const std::size_t m = pairs_.size(), numChunks = (m + kChunk - 1) / kChunk;
    splitRanges_ = ranges;
    splitPairs_ = m;
    std::vector<std::size_t> costBefore(numChunks + 1, 0);  // cost of the chunks before chunk c
    for (std::size_t c = 0; c < numChunks; ++c) {
        std::size_t cost = 0;
        for (std::size_t k = c * kChunk; k < std::min(m, (c + 1) * kChunk); ++k)
            cost += static_cast<std::size_t>(pairs_[k].b) >= grains
                        ? wallCost[static_cast<std::size_t>(pairs_[k].b) - grains]
                        : kGrainCost;
        costBefore[c + 1] = costBefore[c] + cost;
    }
    split_.resize(ranges + 1);
    for (std::size_t t = 0, c = 0; t <= ranges; ++t) {
        const std::size_t target = t * costBefore[numChunks] / ranges;
        while (c < numChunks && costBefore[c] < target) ++c;
        split_[t] = t == ranges ? numChunks : c;
    }
    // Where timing has shown the ranges to cost unequal time (rebalance()),
    // its cuts, as fractions of the list, replace the model's.
    if (cutFractions_.size() == ranges + 1)
        for (std::size_t t = 1; t < ranges; ++t)
            split_[t] = std::clamp<std::size_t>(static_cast<std::size_t>(cutFractions_[t] * static_cast<double>(numChunks)),
                                                split_[t - 1], numChunks);
    assignOwners(nb);
}

void MdPairEngine::assignOwners(std::size_t nb) {
    // A body's owner is the range of its first pair (as a or as b; bodies
    // with no pair: range 0, never read). Each range's spill holds at most
    // one term per pair of the range and body it does not own.
    const std::size_t ranges = splitRanges_, numChunks = split_[ranges], m = pairs_.size();
    std::vector<std::uint32_t> rangeOfChunk(numChunks);
    for (std::size_t t = 0; t < ranges; ++t)
        for (std::size_t c = split_[t]; c < split_[t + 1]; ++c) rangeOfChunk[c] = static_cast<std::uint32_t>(t);
    owner_.assign(nb, 0);
    for (std::size_t i = 0; i < nb; ++i) {
        std::size_t first = SIZE_MAX;
        if (aStart_[i] < aStart_[i + 1]) first = static_cast<std::size_t>(aStart_[i]);
        if (bStart_[i] < bStart_[i + 1])  // byB lists a body's pairs in key order
            first = std::min(first, static_cast<std::size_t>(byB_[static_cast<std::size_t>(bStart_[i])]));
        if (first != SIZE_MAX) owner_[i] = rangeOfChunk[first / kChunk];
    }
    std::vector<std::size_t> capacity(ranges, 0);
    for (std::size_t k = 0; k < m; ++k) {
        const std::uint32_t t = rangeOfChunk[k / kChunk];
        capacity[t] += (owner_[static_cast<std::size_t>(pairs_[k].a)] != t ? 1 : 0) +
                       (owner_[static_cast<std::size_t>(pairs_[k].b)] != t ? 1 : 0);
    }
    spill_.resize(ranges);
    spilled_.assign(ranges, 0);
    for (std::size_t t = 0; t < ranges; ++t) spill_[t].resize(capacity[t]);
}

void MdPairEngine::rebalance() {
    // Every kRebalanceSteps split passes, move each cut halfway towards
    // where the measured times say the ranges would cost the same (the cost
    // of a chunk taken as its range's mean). Timing changes which thread
    // sums which body, never a result (every body is summed in key order).
    constexpr long kRebalanceSteps = 50;
    if (++timedPasses_ < kRebalanceSteps) return;
    const std::size_t ranges = splitRanges_, numChunks = split_[ranges];
    double total = 0.0;
    for (double t : rangeTime_) total += t;
    std::vector<double> cumulative(numChunks + 1, 0.0);  // time of the chunks before chunk c
    for (std::size_t t = 0; t < ranges; ++t) {
        const std::size_t n = split_[t + 1] - split_[t];
        for (std::size_t c = split_[t]; c < split_[t + 1]; ++c)
            cumulative[c + 1] = cumulative[c] + rangeTime_[t] / static_cast<double>(n);
    }
    bool changed = false;
    for (std::size_t t = 1; t < ranges && total > 0.0; ++t) {
        const double goal = total * static_cast<double>(t) / static_cast<double>(ranges);
        std::size_t c = 0;
        while (c < numChunks && cumulative[c + 1] <= goal) ++c;
        const std::size_t cut = (split_[t] + c + 1) / 2;
        if (cut != split_[t] && cut >= split_[t - 1] && cut <= split_[t + 1]) split_[t] = cut, changed = true;
    }
    cutFractions_.assign(ranges + 1, 0.0);
    for (std::size_t t = 0; t <= ranges; ++t)
        cutFractions_[t] = static_cast<double>(split_[t]) / static_cast<double>(std::max<std::size_t>(numChunks, 1));
    if (changed) assignOwners(owner_.size());
    rangeTime_.assign(ranges, 0.0);
    timedPasses_ = 0;
}

void MdPairEngine::step(World& world, const StepContext& ctx, double margin) {
    forces(world, ctx, margin);
    integrate(world, ctx);
}

void MdPairEngine::forces(const World& world, const StepContext& ctx, double margin) {
    const std::size_t nb = world.numBodies();
    if (!moved_ && world.deforming() && builtAt_.size() == nb) {
        // A deforming cell moves the images as well: the working list holds
        // while 2 (largest travel) + the cell's change stays below innerSkin.
        const double limit = 0.5 * (innerSkin_ - world.cellChange(builtCell_)), limit2 = limit * limit;
        bool far = !(limit > 0.0);
        for (std::size_t i = 0; i < nb && !far; ++i)
            far = world.minimumImage(world.x[i] - builtAt_[i]).squaredNorm() > limit2;
        moved_ = far;
    }
    if (skin_ <= 0.0 || moved_ || builtAt_.size() != nb || margin != builtMargin_) {
        // The Verlet list holds every pair within margin + skin at its
        // build; the working list's filter needs every pair within margin +
        // innerSkin now, so the Verlet list is good while no body has moved
        // more than (skin − innerSkin)/2 since its build.
        bool stale = skin_ <= 0.0 || outerAt_.size() != nb || margin != builtMargin_ || innerSkin_ >= skin_;
        if (!stale) {
            const double limit = 0.5 * (skin_ - innerSkin_ - world.cellChange(outerCell_)), limit2 = limit * limit;
            const Vec3* __restrict x = world.x.data();
            const Vec3* __restrict x0 = outerAt_.data();
            const bool periodic = world.anyPeriodic();
            int far = 0;
#pragma omp parallel for schedule(static) reduction(| : far) if (nb > 4 * kParallelPairs)
            for (std::size_t i = 0; i < nb; ++i) {
                const Vec3 d = x[i] - x0[i];
                far |= (periodic ? world.minimumImage(d) : d).squaredNorm() >= limit2 ? 1 : 0;
            }
            stale = far != 0 || !(limit > 0.0);
        }
        if (stale) rebuildOuter(world, margin);
        rebuild(world, margin);
        // Masses are read once per list build, not per step (they do not
        // change during a run; an edit takes effect at the next build).
        invMass_.resize(nb);
        for (std::size_t i = 0; i < nb; ++i) invMass_[i] = inverseMass(world, i);
        // The walls for the kernel, likewise per build: a plane's normal and
        // μ (other shapes stay with the scalar pass).
        const std::size_t grains = world.numGrains, walls = nb - grains;
        wallTable_.assign(5 * walls, 0.0);
        for (std::size_t i = 0; i < walls; ++i) {
            const WallShape& shape = world.wall(static_cast<BodyId>(grains + i));
            if (shape.kind != ShapeKind::Plane) continue;
            for (int e = 0; e < 3; ++e) wallTable_[5 * i + static_cast<std::size_t>(e)] = shape.direction[e];
            wallTable_[5 * i + 3] = shape.mu;
            wallTable_[5 * i + 4] = 1.0;
        }
    }
    // One thread (or a small list): one pass makes every per-body sum; more
    // threads: each takes a range of the list (planSplit, redone when the
    // list or the thread count changes), and a body's terms in later ranges
    // than its first are added after the pass, in order. The same bits
    // either way.
    const std::size_t threads = pairs_.size() > kParallelPairs ? static_cast<std::size_t>(omp_get_max_threads()) : 1;
    const bool split = threads > 1;
    if (split && (innerBuilds_ != splitBuild_ || threads != splitRanges_ || splitPairs_ != pairs_.size())) {
        planSplit(world, threads);
        splitBuild_ = innerBuilds_;
        rangeTime_.assign(threads, 0.0);
        timedPasses_ = 0;
    }
    // The per-body sums start from zero: the kick–drift of the last step
    // cleared them as it read them (forcesClear_), so they are zeroed here
    // only at the start, after a resize or after a step that threw.
    if (!forcesClear_ || bodyForce_.size() != nb) {
        bodyForce_.assign(nb, Vec3::Zero());
        bodyTorque_.assign(nb, Vec3::Zero());
    }
    forcesClear_ = false;
    // The law pair, among those whose rows the fused schedule takes (supports()).
    withNormalLaw<&ForceLawRow::fused>(settings_.normal, [&]<NormalLaw N>() {
        withTangentialLaw<&ForceLawRow::fused>(
            settings_.tangential, [&]<TangentialLaw T>() { forcePass<N, T>(world, ctx.dt, margin, split); });
    });
    if (split && omp_get_max_threads() >= static_cast<int>(splitRanges_)) rebalance();
    // The pass checked the sums; the first bad body, for the report, only
    // when one is not finite.
    if (!sumsFinite_) checkFiniteForces(bodyForce_, bodyTorque_, ctx.step);
    // A glued grain's forces act on its wall (World::DrivenGrain).
    world.addGluedForces(bodyForce_);
    if (trackWork_) {
        double work = 0.0;
        for (const double w : chunkWork_) work += w;
        workIn_ += work;
    }
    diagnosticsDone_ = false;
}

void MdPairEngine::addPairForces(std::vector<Vec3>& force) const {
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
        force[static_cast<std::size_t>(pairs_[k].b)] += force_[k];
        force[static_cast<std::size_t>(pairs_[k].a)] -= force_[k];
    }
}

Mat3 MdPairEngine::pairStressSum(const World& world) const {
    Mat3 sum = Mat3::Zero();
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
        const auto a = static_cast<std::size_t>(pairs_[k].a), b = static_cast<std::size_t>(pairs_[k].b);
        if (b >= world.numGrains || force_[k] == Vec3::Zero()) continue;
        sum += force_[k] * world.minimumImage(world.x[b] - world.x[a]).transpose();
    }
    return sum;
}

void MdPairEngine::integrate(World& world, const StepContext& ctx) {
    moved_ = advanceLeapfrog(world, bodyForce_, bodyTorque_, ctx.dt, &builtAt_, 0.25 * innerSkin_ * innerSkin_, driftKernel_,
                             blockLanes_, true);
    forcesClear_ = true;
}

std::vector<PairDiagnostic> MdPairEngine::pairDiagnostics() const {
    // Each touching pair's elastic energy as the laws give it (md/laws: the
    // fused laws keep no normal memory, so their energy is the overlap's;
    // the spring's is ½ k_t |s|², as laneLawForce has it), and its overlap,
    // counted where it carries force.
    const MdSettings& s = settings_;
    std::vector<std::size_t> touching;
    for (std::size_t k = 0; k < pairs_.size(); ++k)
        if (touched_[k]) touching.push_back(k);
    const std::size_t m = touching.size();
    std::vector<PairDiagnostic> out(m);
    withNormalLaw<&ForceLawRow::fused>(s.normal, [&]<NormalLaw N>() {
        const bool spring = lawRow(s.tangential).spring;
#pragma omp parallel for schedule(static) if (m > kParallelPairs)
        for (std::size_t t = 0; t < m; ++t) {
            const std::size_t k = touching[t];
            const auto ia = static_cast<std::size_t>(pairs_[k].a), ib = static_cast<std::size_t>(pairs_[k].b);
            const Constants cst = contactConstants(s, invMass_[ia], invMass_[ib], 0.0);
            const double overlap = overlap_[k];
            const double normal = NormalKernel<N>::energy(cst, overlap, 0.0, nullptr);
            const double tangential = spring ? 0.5 * cst.kt * spring_[k].squaredNorm() : 0.0;
            out[t] = {makeContactKey(pairs_[k].a, pairs_[k].b), normal + tangential, overlap,
                      force_[k].squaredNorm() > 0.0};
        }
    });
    return out;
}

MdPairEngine::Diagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms) {
    // Partial sums by chunk of kChunk touching pairs in key order, then over
    // the chunks in order: the same bits for any thread count and whatever
    // else the list holds (it depends on when it was built, e.g. before or
    // after a restart), and on MPI ranks from the terms of every rank.
    const std::size_t m = terms.size(), numChunks = (m + kChunk - 1) / kChunk;
    struct Part {
        double elastic = 0.0, overlap = 0.0, max = 0.0;
        std::size_t loaded = 0;
    };
    std::vector<Part> parts(numChunks);
#pragma omp parallel for schedule(static) if (m > kParallelPairs)
    for (std::size_t chunk = 0; chunk < numChunks; ++chunk) {
        Part p;
        for (std::size_t t = chunk * kChunk; t < std::min(m, (chunk + 1) * kChunk); ++t) {
            p.elastic += terms[t].elastic;
            if (terms[t].loaded) {
                ++p.loaded;
                p.overlap += terms[t].overlap;
                p.max = std::max(p.max, terms[t].overlap);
            }
        }
        parts[chunk] = p;
    }
    MdPairEngine::Diagnostics d;
    double overlap = 0.0;
    for (const Part& p : parts) {
        d.elastic += p.elastic;
        overlap += p.overlap;
        d.overlaps.contacts += p.loaded;
        d.overlaps.max = std::max(d.overlaps.max, p.max);
    }
    if (d.overlaps.contacts > 0) d.overlaps.mean = overlap / static_cast<double>(d.overlaps.contacts);
    return d;
}

const MdPairEngine::Diagnostics& MdPairEngine::diagnostics() const {
    if (diagnosticsDone_) return diagnostics_;
    diagnostics_ = sumPairDiagnostics(pairDiagnostics());
    diagnosticsDone_ = true;
    return diagnostics_;
}

void MdPairEngine::contacts(const World& world, double margin, std::vector<Contact>& out) const {
    out.clear();
    Contact c;
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
        const BodyId a = pairs_[k].a, b = pairs_[k].b;
        const bool kept = world.isWall(b) ? narrowSphereWall(world, a, b, margin, c) : narrowSphereSphere(world, a, b, margin, c);
        if (!kept) continue;
        c.history = ContactHistory{};
        c.history.reaction = force_[k];
        out.push_back(c);
    }
}

}  // namespace moreau
