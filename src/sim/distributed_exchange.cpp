// The exchanges of a distributed run (distributed_simulation.hpp): at a
// rebuild, grains migrate to the rank whose brick holds them and the bricks
// may be rebalanced; between rebuilds, the ghosts' motion (and a stage's
// displacements, a field's entries) comes from their owners.
#include "moreau/sim/distributed_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "distributed_grain.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/distributed_cd.hpp"

namespace moreau {

using namespace distributed;

// --- migration and rebalancing at the rebuilds ----------------------------------------

void DistributedSimulation::rebuild() {
    fitCutsToCell();
    const World& w = sim_->world();
    // The memory of each owned grain's contacts, grain by grain (a contact
    // of two owned grains goes with both: they may part).
    std::vector<std::array<BodyId, 2>> ends;
    const ContactStore store = globalStore(&ends);
    std::vector<std::size_t> first(w.numGrains + 1, 0), records;
    const auto ownedEnds = [&](std::size_t r, auto&& f) {
        for (const BodyId b : ends[r])
            if (!w.isWall(b) && owned_[static_cast<std::size_t>(b)]) f(static_cast<std::size_t>(b));
    };
    for (std::size_t r = 0; r < ends.size(); ++r) ownedEnds(r, [&](std::size_t i) { ++first[i + 1]; });
    std::partial_sum(first.begin(), first.end(), first.begin());
    records.resize(first.back());
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (std::size_t r = 0; r < ends.size(); ++r) ownedEnds(r, [&](std::size_t i) { records[fill[i]++] = r; });
    // Balance: new cuts when the largest count a rank would own is 10 % over
    // the mean (histograms of the grains along the cut axes).
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(ranks_), 0);
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (owned_[i]) ++counts[static_cast<std::size_t>(ownerOf(w.x[i]))];
    comm::sumOverRanks(counts);
    const double mean = static_cast<double>(globalGrains_) / ranks_;
    if (static_cast<double>(*std::max_element(counts.begin(), counts.end())) > 1.1 * mean) rebalance();
    // Migration: a grain whose brick is another rank's now goes there with
    // its contacts' memory; the others stay.
    std::vector<DistributedGrain> grains;
    std::vector<int> owner;
    ContactStore kept;
    kept.slots.stride = store.slots.stride;
    const auto keep = [&](std::size_t r) {
        kept.records.push_back(store.records[r]);
        if (store.slots.stride > 0)
            kept.slots.values.insert(kept.slots.values.end(), store.slots.at(r),
                                     store.slots.at(r) + store.slots.stride);
    };
    std::vector<ByteWriter> out(static_cast<std::size_t>(ranks_));
    const std::vector<std::int32_t> driven = drivenOf(w);
    const bool clumps = shapes_;  // each grain's shape, polygon and size go with it
    // The MD scheme's state (multi-step history) goes with the grains.
    if (scheme_) takeScheme(sim_->md(), w);
    auto grainHere = [&](std::size_t i) {
        return grainOf(w, i, gid_[i], driven, scheme_ ? &sim_->md() : nullptr, scheme_ ? scheme_->perBody() : 0,
                       ownShapes_);
    };
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!owned_[i]) continue;
        const int to = ownerOf(w.x[i]);
        if (to == rank_) {
            grains.push_back(grainHere(i));
            owner.push_back(rank_);
            for (std::size_t k = first[i]; k < first[i + 1]; ++k) keep(records[k]);
            continue;
        }
        ++traffic_.migrations;
        ByteWriter& b = out[static_cast<std::size_t>(to)];
        putGrain(b, grainHere(i), clumps);
        b.put(static_cast<std::uint64_t>(first[i + 1] - first[i]));
        for (std::size_t k = first[i]; k < first[i + 1]; ++k) {
            const std::size_t r = records[k];
            b.put(store.records[r]);
            for (std::size_t s = 0; s < store.slots.stride; ++s) b.put(store.slots.at(r)[s]);
        }
    }
    readEach(send(out), [&](ByteReader& u, std::size_t) {
        grains.push_back(getGrain(u, clumps));
        owner.push_back(rank_);
        const auto m = u.get<std::uint64_t>("value");
        for (std::uint64_t c = 0; c < m; ++c) {
            kept.records.push_back(u.get<ContactMemory>("value"));
            for (std::size_t s = 0; s < kept.slots.stride; ++s) kept.slots.values.push_back(u.get<double>("value"));
        }
    });
    // Ghosts: each rank sends its new owned grains to the ranks near them.
    std::vector<ByteWriter> ghostsOut(static_cast<std::size_t>(ranks_));
    for (const DistributedGrain& g : grains)
        for (int r = 0; r < ranks_; ++r)
            if (r != rank_ && nearBrick(g.x, r)) {
                DistributedGrain ghost = g;  // a ghost's scheme entries are its owner's business
                ghost.scheme.clear();
                putGrain(ghostsOut[static_cast<std::size_t>(r)], ghost, clumps);
            }
    readEach(send(ghostsOut), [&](ByteReader& u, std::size_t r) {
        grains.push_back(getGrain(u, clumps));
        owner.push_back(static_cast<int>(r));
    });
    assemble(std::move(grains), std::move(owner), std::move(kept));
    ++rebuilds_;
}

void DistributedSimulation::rebalance() {
    // The grid again for the grains' extent now (a settling bed is no longer
    // the cloud it started as), then on each cut axis cuts at the count
    // quantiles of a 4096-bin histogram of the grains along it, over their
    // span (the same integer counts on every rank).
    const World& w = sim_->world();
    std::array<double, 3> lows{}, highs{};
    Vec3 extent;
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        double lo = std::numeric_limits<double>::infinity(), hi = -lo, rMax = 0.0;
        for (std::size_t i = 0; i < w.numGrains; ++i)
            if (owned_[i]) {
                lo = std::min(lo, w.x[i][a]);
                hi = std::max(hi, w.x[i][a]);
                rMax = std::max(rMax, w.radius[i]);
            }
        lows[k] = -comm::maxOverRanks(-lo);
        highs[k] = comm::maxOverRanks(hi);
        rMax = comm::maxOverRanks(rMax);
        extent[a] = periodic_[k] ? cuts_[k].back() - cuts_[k].front() : std::max(highs[k] - lows[k], 0.0) + 2.0 * rMax;
    }
    const std::array<int, 3> dims = chooseGrid(extent);
    if (dims != dims_) {
        dims_ = dims;
        ++regrids_;
        for (int a = 0; a < 3; ++a) {
            const auto k = static_cast<std::size_t>(a);
            const double front = cuts_[k].front(), back = cuts_[k].back();
            cuts_[k].assign(static_cast<std::size_t>(dims_[k]) + 1, 0.0);
            cuts_[k].front() = front;
            cuts_[k].back() = back;
        }
    }
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        const int n = dims_[k];
        if (n == 1) continue;
        double lo = lows[k], hi = highs[k];
        if (periodic_[k]) {
            lo = cuts_[k].front();
            hi = cuts_[k].back();
        }
        constexpr std::size_t kBins = 4096;
        const double width = (hi - lo) / static_cast<double>(kBins);
        if (!(width > 0.0)) {  // every grain at one coordinate: all in the last brick
            for (int r = 1; r < n; ++r) cuts_[k][static_cast<std::size_t>(r)] = lo;
            continue;
        }
        std::vector<std::uint64_t> hist(kBins, 0);
        for (std::size_t i = 0; i < w.numGrains; ++i)
            if (owned_[i]) {
                const double y = (w.x[i][a] - lo) / width;
                ++hist[static_cast<std::size_t>(std::clamp(y, 0.0, static_cast<double>(kBins - 1)))];
            }
        comm::sumOverRanks(hist);
        std::uint64_t seen = 0;
        std::size_t bin = 0;
        for (int r = 1; r < n; ++r) {
            const std::uint64_t target = globalGrains_ * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(n);
            while (bin < kBins && seen + hist[bin] <= target) seen += hist[bin++];
            cuts_[k][static_cast<std::size_t>(r)] = lo + width * static_cast<double>(bin);
        }
    }
    ++rebalances_;
}

// --- messages and ghost updates -------------------------------------------------------

namespace {

/// What each rank sent here in `box`'s last exchange, copied.
std::vector<std::string> received(const comm::Mailbox& box) {
    std::vector<std::string> in;
    for (std::size_t r = 0; r < box.ranks(); ++r) in.emplace_back(box.from(r));
    return in;
}

}  // namespace

std::vector<std::string_view> DistributedSimulation::counted(const std::vector<ByteWriter>& out) {
    std::vector<std::string_view> parts(out.size());
    for (std::size_t r = 0; r < out.size(); ++r) {
        parts[r] = out[r].bytes();
        if (static_cast<int>(r) != rank_ && !parts[r].empty()) {
            ++traffic_.messages;
            traffic_.bytes += parts[r].size();
        }
    }
    return parts;
}

const comm::Mailbox& DistributedSimulation::post(const std::vector<ByteWriter>& out, comm::Mailbox& box,
                                                  bool sameSizes) {
    comm::exchange(counted(out), box, sameSizes);
    return box;
}

const comm::Mailbox& DistributedSimulation::postNear(const std::vector<ByteWriter>& out, comm::Mailbox& box) {
    comm::exchange(counted(out), box, partners_);
    return box;
}

std::vector<std::string> DistributedSimulation::send(const std::vector<ByteWriter>& out) {
    return received(post(out, mailbox_, false));
}

std::vector<std::string> DistributedSimulation::sendNear(const std::vector<ByteWriter>& out) {
    return received(postNear(out, mailbox_));
}

const std::vector<ByteWriter>& DistributedSimulation::ghostParts(const std::function<void(ByteWriter&, std::size_t)>& put) {
    std::vector<ByteWriter>& out = ghostsOut_;  // kept, with its capacity, from step to step
    out.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) {
        ByteWriter& b = out[static_cast<std::size_t>(r)];
        b.clear();
        for (const std::size_t k : sendTo_[static_cast<std::size_t>(r)]) {
            b.put(gid_[k]);
            put(b, k);
        }
    }
    return out;
}

void DistributedSimulation::exchangeGhosts(std::vector<MdSolver::Vec6>* X) {
    World& mine = sim_->world();
    const std::vector<ByteWriter>& out = ghostParts([&](ByteWriter& b, std::size_t k) {
        putMotion(b, mine, k);
        if (X) b.put((*X)[k]);
    });
    // Between rebuilds the same ghosts go to the same ranks: after the first
    // update, only neighbours talk.
    const std::size_t kind = X ? 1 : 0;
    const comm::Mailbox& in = post(out, ghostsBox_[kind], ghostsKnown_[kind]);
    ghostsKnown_[kind] = true;
    recvAt_.resize(in.ranks());
    for (std::size_t r = 0; r < in.ranks(); ++r) {
        // The same ghosts arrive in the same order until the next rebuild:
        // their local indices are looked up once.
        std::vector<std::size_t>& at = recvAt_[r];
        ByteReader u(in.from(r), kMessage);
        for (std::size_t j = 0; u.left() > 0; ++j) {
            const auto id = u.get<std::uint64_t>("value");
            if (j == at.size() || gid_[at[j]] != id) {
                const std::ptrdiff_t i = localOf(id, mine);
                if (i < 0)
                    throw std::logic_error("distributed run: a ghost update for a grain this rank does not hold");
                at.resize(j);
                at.push_back(static_cast<std::size_t>(i));
            }
            const std::size_t k = at[j];
            mine.x[k] = u.get<Vec3>("value");
            mine.v[k] = u.get<Vec3>("value");
            mine.w[k] = u.get<Vec3>("value");
            mine.q[k] = u.get<Quat>("value");
            if (X) (*X)[k] = u.get<MdSolver::Vec6>("value");
        }
    }
}

void DistributedSimulation::syncGhostField(std::vector<MdSolver::Vec6>& f) {
    // As exchangeGhosts, for one per-body field (its own mailbox).
    const std::vector<ByteWriter>& out = ghostParts([&](ByteWriter& b, std::size_t k) { b.put(f[k]); });
    const comm::Mailbox& in = post(out, ghostsBox_[2], ghostsKnown_[2]);
    ghostsKnown_[2] = true;
    const World& mine = sim_->world();
    for (std::size_t r = 0; r < in.ranks(); ++r) {
        ByteReader u(in.from(r), kMessage);
        while (u.left() > 0) {
            const std::ptrdiff_t i = localOf(u.get<std::uint64_t>("value"), mine);
            if (i < 0) throw std::logic_error("distributed run: a field entry for a grain this rank does not hold");
            f[static_cast<std::size_t>(i)] = u.get<MdSolver::Vec6>("value");
        }
    }
}

}  // namespace moreau
