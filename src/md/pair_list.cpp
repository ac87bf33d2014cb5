#include "moreau/md/pair_list.hpp"

#include <omp.h>

#include <algorithm>

#include "law_kernels.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

namespace {
/// Below this many bodies the travel test runs on one thread.
constexpr std::size_t kParallelBodies = 16384;
/// Below this many pairs the diagnostics are summed on one thread.
constexpr std::size_t kParallelPairs = 4096;
}  // namespace

MdPairList::MdPairList(bool spring, double skin, double innerSkin)
    : spring_(spring), skin_(skin), innerSkin_(innerSkin > 0.0 && innerSkin < skin ? innerSkin : skin) {}

ContactStore MdPairList::memory() const {
    ContactStore store;
    memoryInto(store);
    return store;
}

void MdPairList::memoryInto(ContactStore& store) const {
    store.records.clear();
    store.slots.values.clear();
    store.slots.stride = spring_ ? 3 : 0;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const bool springy = spring_ && spring[k].squaredNorm() > 0.0;
        if (!touched[k] && force[k].squaredNorm() == 0.0 && !springy) continue;
        ContactMemory r;
        r.key = makeContactKey(pairs[k].a, pairs[k].b);
        r.history.reaction = force[k];
        store.records.push_back(r);
        if (spring_) store.slots.values.insert(store.slots.values.end(), spring[k].data(), spring[k].data() + 3);
    }
}

void MdPairList::restoreMemory(const ContactStore& store, const std::string& origin) {
    const std::size_t stride = spring_ ? 3 : 0, m = store.records.size();
    if (store.slots.stride != stride || store.slots.values.size() != m * stride)
        throw InputError(origin + ": contact store of " + std::to_string(store.slots.stride) +
                         " slots per contact, the scene's laws keep " + std::to_string(stride));
    pairs.resize(m);
    force.resize(m);
    spring.assign(spring_ ? m : 0, Vec3::Zero());
    touched.resize(m);
    for (std::size_t k = 0; k < m; ++k) {
        const ContactKey key = store.records[k].key;
        pairs[k] = {keyBodyA(key), keyBodyB(key)};
        force[k] = store.records[k].history.reaction;
        if (spring_) spring[k] = slotVec3(store.slots.at(k));
        // A pass leaves a force or a spring only on pairs it found
        // overlapping; one overlapping with neither has nothing to forget.
        touched[k] = force[k].squaredNorm() > 0.0 || (spring_ && spring[k].squaredNorm() > 0.0) ? 1 : 0;
    }
    // The next pass builds both lists afresh and carries this memory by key.
    outerAt_.clear();
    builtAt_.clear();
    moved_ = true;
    // The overlaps are the next pass's to find.
    overlap.assign(m, 0.0);
}

void MdPairList::rebuildOuter(const World& world, double margin) {
    grid_.detectPairs(world, margin + skin_, outer_);
    grid_.releaseBuffers();
    outerAt_ = world.x;
    outerCell_ = world.cellState();
    ++builds_;
}

void MdPairList::rebuild(const World& world, double margin) {
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
    std::vector<CellGridDetector::Pair> fresh;
    fresh.reserve(filter ? outer_.size() / 2 : outer_.size());
    std::vector<Vec3> freshSpring, freshForce;
    std::vector<std::uint8_t> freshTouched;
    // Where each pair of the Verlet list was in the old working list (−1:
    // nowhere), by the merge-join that carries every contact's memory.
    std::vector<std::int32_t> from(outer_.size());
    mergeByKey(
        pairs.size(), [&](std::size_t o) { return makeContactKey(pairs[o].a, pairs[o].b); }, outer_.size(),
        [&](std::size_t k) { return makeContactKey(outer_[k].a, outer_[k].b); },
        [&](std::size_t k, std::size_t o) { from[k] = static_cast<std::int32_t>(o); },
        [&](std::size_t k) { from[k] = -1; });
    Contact c;
    for (std::size_t k = 0; k < outer_.size(); ++k) {
        const CellGridDetector::Pair p = outer_[k];
        const bool known = from[k] >= 0;
        const auto o = static_cast<std::size_t>(known ? from[k] : 0);
        const bool memory = known && (touched[o] || force[o].squaredNorm() > 0.0 || (spring_ && spring[o].squaredNorm() > 0.0));
        if (filter && !memory) {
            const bool near = world.isWall(p.b) ? narrowSphereWall(world, p.a, p.b, reach, c)
                                                : narrowSphereSphere(world, p.a, p.b, reach, c);
            if (!near) continue;
        }
        fresh.push_back(p);
        if (spring_) freshSpring.push_back(known ? spring[o] : Vec3::Zero());
        freshForce.push_back(known ? force[o] : Vec3::Zero());
        freshTouched.push_back(known ? touched[o] : std::uint8_t{0});
    }
    const std::size_t m = fresh.size();
    pairs.swap(fresh);
    spring.swap(freshSpring);
    force.swap(freshForce);
    touched.swap(freshTouched);
    builtAt_ = world.x;
    builtCell_ = world.cellState();
    builtMargin_ = margin;
    ++innerBuilds_;
    // Pairs by body, for the owners of the split pass (assignOwners).
    md_kernels::buildByBodyIndex(
        world.numBodies(), m, [this](std::size_t k) { return std::pair{pairs[k].a, pairs[k].b}; }, aStart_, bStart_,
        byB_);
}

void MdPairList::update(const World& world, double margin) {
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
#pragma omp parallel for schedule(static) reduction(| : far) if (nb > kParallelBodies)
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
        invMass.resize(nb);
        for (std::size_t i = 0; i < nb; ++i) invMass[i] = md_kernels::inverseMass(world, i);
        // The walls for the kernel, likewise per build: a plane's normal and
        // μ (other shapes stay with the scalar pass).
        const std::size_t grains = world.numGrains, walls = nb - grains;
        wallTable.assign(5 * walls, 0.0);
        for (std::size_t i = 0; i < walls; ++i) {
            const WallShape& shape = world.wall(static_cast<BodyId>(grains + i));
            if (shape.kind != ShapeKind::Plane) continue;
            for (int e = 0; e < 3; ++e) wallTable[5 * i + static_cast<std::size_t>(e)] = shape.direction[e];
            wallTable[5 * i + 3] = shape.mu;
            wallTable[5 * i + 4] = 1.0;
        }
    }
}

void MdPairList::prepareSplit(const World& world, std::size_t ranges, bool laneKernel) {
    if (innerBuilds_ == splitBuild_ && ranges == split.ranges && splitPairs_ == pairs.size()) return;
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
    const bool kernel = laneKernel;
    std::vector<std::size_t> wallCost(nb - grains);
    for (std::size_t i = 0; i < wallCost.size(); ++i)
        wallCost[i] = kernel && world.wall(static_cast<BodyId>(grains + i)).kind == ShapeKind::Plane ? kGrainCost
                                                                                                  : kScalarWallCost;
    const std::size_t m = pairs.size(), numChunks = (m + kChunk - 1) / kChunk;
    split.ranges = ranges;
    splitPairs_ = m;
    std::vector<std::size_t> costBefore(numChunks + 1, 0);  // cost of the chunks before chunk c
    for (std::size_t c = 0; c < numChunks; ++c) {
        std::size_t cost = 0;
        for (std::size_t k = c * kChunk; k < std::min(m, (c + 1) * kChunk); ++k)
            cost += static_cast<std::size_t>(pairs[k].b) >= grains
                        ? wallCost[static_cast<std::size_t>(pairs[k].b) - grains]
                        : kGrainCost;
        costBefore[c + 1] = costBefore[c] + cost;
    }
    split.bounds.resize(ranges + 1);
    for (std::size_t t = 0, c = 0; t <= ranges; ++t) {
        const std::size_t target = t * costBefore[numChunks] / ranges;
        while (c < numChunks && costBefore[c] < target) ++c;
        split.bounds[t] = t == ranges ? numChunks : c;
    }
    // Where timing has shown the ranges to cost unequal time (rebalance()),
    // its cuts, as fractions of the list, replace the model's.
    if (cutFractions_.size() == ranges + 1)
        for (std::size_t t = 1; t < ranges; ++t)
            split.bounds[t] = std::clamp<std::size_t>(static_cast<std::size_t>(cutFractions_[t] * static_cast<double>(numChunks)),
                                                split.bounds[t - 1], numChunks);
    assignOwners(nb);
    splitBuild_ = innerBuilds_;
    split.rangeTime.assign(ranges, 0.0);
    timedPasses_ = 0;
}

void MdPairList::assignOwners(std::size_t nb) {
    // A body's owner is the range of its first pair (as a or as b; bodies
    // with no pair: range 0, never read). Each range's spill holds at most
    // one term per pair of the range and body it does not own.
    const std::size_t ranges = split.ranges, numChunks = split.bounds[ranges], m = pairs.size();
    std::vector<std::uint32_t> rangeOfChunk(numChunks);
    for (std::size_t t = 0; t < ranges; ++t)
        for (std::size_t c = split.bounds[t]; c < split.bounds[t + 1]; ++c) rangeOfChunk[c] = static_cast<std::uint32_t>(t);
    split.owner.assign(nb, 0);
    for (std::size_t i = 0; i < nb; ++i) {
        std::size_t first = SIZE_MAX;
        if (aStart_[i] < aStart_[i + 1]) first = static_cast<std::size_t>(aStart_[i]);
        if (bStart_[i] < bStart_[i + 1])  // byB lists a body's pairs in key order
            first = std::min(first, static_cast<std::size_t>(byB_[static_cast<std::size_t>(bStart_[i])]));
        if (first != SIZE_MAX) split.owner[i] = rangeOfChunk[first / kChunk];
    }
    std::vector<std::size_t> capacity(ranges, 0);
    for (std::size_t k = 0; k < m; ++k) {
        const std::uint32_t t = rangeOfChunk[k / kChunk];
        capacity[t] += (split.owner[static_cast<std::size_t>(pairs[k].a)] != t ? 1 : 0) +
                       (split.owner[static_cast<std::size_t>(pairs[k].b)] != t ? 1 : 0);
    }
    split.spill.resize(ranges);
    split.spilled.assign(ranges, 0);
    for (std::size_t t = 0; t < ranges; ++t) split.spill[t].resize(capacity[t]);
}

void MdPairList::rebalance() {
    // Every kRebalanceSteps split passes, move each cut halfway towards
    // where the measured times say the ranges would cost the same (the cost
    // of a chunk taken as its range's mean). Timing changes which thread
    // sums which body, never a result (every body is summed in key order).
    constexpr long kRebalanceSteps = 50;
    if (++timedPasses_ < kRebalanceSteps) return;
    const std::size_t ranges = split.ranges, numChunks = split.bounds[ranges];
    double total = 0.0;
    for (double t : split.rangeTime) total += t;
    std::vector<double> cumulative(numChunks + 1, 0.0);  // time of the chunks before chunk c
    for (std::size_t t = 0; t < ranges; ++t) {
        const std::size_t n = split.bounds[t + 1] - split.bounds[t];
        for (std::size_t c = split.bounds[t]; c < split.bounds[t + 1]; ++c)
            cumulative[c + 1] = cumulative[c] + split.rangeTime[t] / static_cast<double>(n);
    }
    bool changed = false;
    for (std::size_t t = 1; t < ranges && total > 0.0; ++t) {
        const double goal = total * static_cast<double>(t) / static_cast<double>(ranges);
        std::size_t c = 0;
        while (c < numChunks && cumulative[c + 1] <= goal) ++c;
        const std::size_t cut = (split.bounds[t] + c + 1) / 2;
        if (cut != split.bounds[t] && cut >= split.bounds[t - 1] && cut <= split.bounds[t + 1]) split.bounds[t] = cut, changed = true;
    }
    cutFractions_.assign(ranges + 1, 0.0);
    for (std::size_t t = 0; t <= ranges; ++t)
        cutFractions_[t] = static_cast<double>(split.bounds[t]) / static_cast<double>(std::max<std::size_t>(numChunks, 1));
    if (changed) assignOwners(split.owner.size());
    split.rangeTime.assign(ranges, 0.0);
    timedPasses_ = 0;
}

void MdPairList::contacts(const World& world, double margin, std::vector<Contact>& out) const {
    out.clear();
    Contact c;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const BodyId a = pairs[k].a, b = pairs[k].b;
        const bool kept = world.isWall(b) ? narrowSphereWall(world, a, b, margin, c) : narrowSphereSphere(world, a, b, margin, c);
        if (!kept) continue;
        c.history = ContactHistory{};
        c.history.reaction = force[k];
        out.push_back(c);
    }
}

PairDiagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms) {
    // Exact sums (ExactSum): the same bits for any thread count, whatever
    // else the list holds (it depends on when it was built, e.g. before or
    // after a restart), and on MPI ranks from each rank's terms.
    PairDiagnosticSums sums;
    const std::size_t m = terms.size();
#pragma omp parallel if (m > kParallelPairs)
    {
        PairDiagnosticSums mine;
#pragma omp for schedule(static) nowait
        for (std::size_t t = 0; t < m; ++t) mine.add(terms[t]);
#pragma omp critical
        sums += mine;  // exact: the order of the threads' parts does not matter
    }
    return sums.value();
}

PairDiagnosticSums& PairDiagnosticSums::operator+=(const PairDiagnosticSums& o) {
    elastic += o.elastic;
    overlap += o.overlap;
    loaded += o.loaded;
    max = std::max(max, o.max);
    return *this;
}

void PairDiagnosticSums::add(const PairDiagnostic& t) {
    elastic.add(t.elastic);
    if (!t.loaded) return;
    ++loaded;
    overlap.add(t.overlap);
    max = std::max(max, t.overlap);
}

PairDiagnostics PairDiagnosticSums::value() const {
    PairDiagnostics d;
    d.elastic = elastic.value();
    d.overlaps.contacts = loaded;
    d.overlaps.max = max;
    if (loaded > 0) d.overlaps.mean = overlap.value() / static_cast<double>(loaded);
    return d;
}

}  // namespace moreau
