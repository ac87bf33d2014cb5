// series.csv's world columns on ranks without a gather
// (distributed_simulation.hpp, record): each rank adds its owned grains and
// the contacts whose first grain it owns; every sum is exact (ExactSum)
// and the words are added over the ranks, so the row has the serial bits.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "distributed_grain.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

using namespace distributed;

std::vector<Contact> DistributedSimulation::contactsWithRowForces(std::vector<ContactKey>& keys) {
    // Each contact with a grain owned here and a ghost is also the ghost's
    // owner's; the rank that owns its first body holds its row (its force,
    // the one the serial run has): those forces go to the other end.
    const World& w = sim_->world();
    std::vector<Contact> contacts;
    sim_->contactsInto(contacts);
    keys.resize(contacts.size());
    std::vector<ByteWriter> out(static_cast<std::size_t>(ranks_));
    for (std::size_t c = 0; c < contacts.size(); ++c) {
        const Contact& k = contacts[c];
        keys[c] = globalKey(k.key);
        const auto a = static_cast<std::size_t>(k.a), b = static_cast<std::size_t>(k.b);
        if (!owned_[a] || w.isWall(k.b) || owned_[b]) continue;
        ByteWriter& to = out[static_cast<std::size_t>(owner_[b])];
        to.put(keys[c]);
        to.put(k.history.reaction);
    }
    // Local keys in order are global keys in order (local bodies follow the global ids).
    readEach(sendNear(out), [&](ByteReader& u, std::size_t) {
        const auto key = u.get<ContactKey>("key");
        contacts[contactOf(keys, key)].history.reaction = u.get<Vec3>("reaction");
    });
    return contacts;
}

WorldPart DistributedSimulation::wholePart() const {
    WorldPart part;
    part.grains = &owned_;
    part.walls = rank_ == 0;  // every rank has the walls: one counts them
    part.wholeGrains = globalGrains_;
    part.reduce = [](std::vector<std::uint64_t>& words, std::vector<double>& maxima) {
        comm::sumOverRanks(words);
        if (!maxima.empty()) comm::maxOverRanks(maxima);
    };
    return part;
}

std::size_t DistributedSimulation::contactCount() {
    expectSettled("contactCount");
    exchangeGhosts();  // as gatherContacts: the contacts at the owners' state
    std::uint64_t mine = 0;
    for (const Contact& c : sim_->contacts()) mine += owned_[static_cast<std::size_t>(c.a)] ? 1 : 0;
    return static_cast<std::size_t>(comm::sumOverRanks(mine));
}

double DistributedSimulation::kineticEnergy() const {
    return energies(sim_->world(), {}, wholePart()).kinetic;
}

std::uint64_t DistributedSimulation::stateHash() const {
    expectSettled("stateHash");
    // The serial digest, grain by grain in id order, over windows of ids:
    // rank 0 holds one window's grains at a time, never the whole world.
    constexpr std::uint64_t kWindow = std::uint64_t{1} << 16;
    const World& w = sim_->world();
    std::uint64_t h = kStateHashStart;
    std::size_t k = 0;  // the next local grain (gid_ ascends)
    std::vector<std::pair<Vec3, Vec3>> window;
    for (std::uint64_t lo = 0; lo < globalGrains_; lo += kWindow) {
        ByteWriter mine;
        for (; k < w.numGrains && gid_[k] < lo + kWindow; ++k) {
            if (!owned_[k]) continue;
            mine.put(gid_[k]);
            mine.put(w.x[k]);
            mine.put(w.v[k]);
        }
        const std::vector<std::string> parts = comm::gatherToRoot(mine.bytes());
        if (rank_ != 0) continue;
        window.assign(std::min<std::uint64_t>(kWindow, globalGrains_ - lo), {});
        readEach(parts, [&](ByteReader& u, std::size_t) {
            const auto id = u.get<std::uint64_t>("id");
            if (id < lo || id - lo >= window.size()) throw std::logic_error("DistributedSimulation::stateHash: a grain out of its window");
            window[id - lo].first = u.get<Vec3>("x");
            window[id - lo].second = u.get<Vec3>("v");
        });
        for (const auto& [x, v] : window) h = stateHashStep(h, x, v);
    }
    return h;
}

std::size_t DistributedSimulation::contactOf(const std::vector<ContactKey>& keys, ContactKey key) {
    const auto it = std::lower_bound(keys.begin(), keys.end(), key);
    if (it == keys.end() || *it != key)
        throw std::logic_error("distributed run: a message about a pair this rank did not detect");
    return static_cast<std::size_t>(it - keys.begin());
}

StepRecord DistributedSimulation::record(const OutputSettings& output) {
    expectSettled("record");
    exchangeGhosts();  // the ghosts at their owners' state: the serial geometry
    const World& w = sim_->world();
    std::vector<ContactKey> keys;
    const std::vector<Contact> contacts = contactsWithRowForces(keys);
    std::vector<char> rows(contacts.size());
    for (std::size_t c = 0; c < contacts.size(); ++c) rows[c] = owned_[static_cast<std::size_t>(contacts[c].a)];
    WorldPart part = wholePart();
    part.rows = &rows;
    part.completeCounts = [&](std::vector<int>& count) {
        // A grain's count is whole on its owner (it holds every contact of
        // it): sent to the owner of each contact's row that has it as a ghost.
        std::vector<ByteWriter> out(static_cast<std::size_t>(ranks_));
        for (std::size_t c = 0; c < contacts.size(); ++c) {
            const auto a = static_cast<std::size_t>(contacts[c].a), b = static_cast<std::size_t>(contacts[c].b);
            if (owned_[a] || w.isWall(contacts[c].b) || !owned_[b]) continue;
            ByteWriter& to = out[static_cast<std::size_t>(owner_[a])];
            to.put(keys[c]);
            to.put(static_cast<std::int32_t>(count[b]));
        }
        readEach(sendNear(out), [&](ByteReader& u, std::size_t) {
            const std::size_t c = contactOf(keys, u.get<ContactKey>("key"));
            count[static_cast<std::size_t>(contacts[c].b)] = u.get<std::int32_t>("count");
        });
    };
    // The energies, overlaps and the fused pipeline's diagnostics go with
    // the measurements' first pass: one sum and one max over the ranks.
    PartTally terms = energyTerms(w, contacts, part);
    PairDiagnosticSums pairs;
    if (sim_->fused())
        for (const PairDiagnostic& d : sim_->md().pairDiagnostics())
            if (owned_[static_cast<std::size_t>(keyBodyA(d.key))]) pairs.add(d);
    terms.sums.insert(terms.sums.end(), {pairs.elastic, pairs.overlap});
    terms.counts.push_back(pairs.loaded);
    terms.maxima.push_back(pairs.max);
    StepRecord r;
    part.with = &terms;
    measureInto(r, w, contacts, output, &part);
    const PartEnergies e = energiesOf(terms);
    r.step = w.step;
    r.time = w.time;
    r.kineticEnergy = e.kinetic;
    r.rotationalEnergy = e.rotational;
    r.contacts = e.overlaps.contacts;
    r.meanOverlap = e.overlaps.mean;
    r.maxOverlap = e.overlaps.max;
    r.elasticEnergy = std::numeric_limits<double>::quiet_NaN();
    if (sim_->fused()) {  // the fused pipeline's, as the serial record has them (the same on every rank)
        pairs.elastic = terms.sums[3];
        pairs.overlap = terms.sums[4];
        pairs.loaded = terms.counts[1];
        pairs.max = terms.maxima[1];
        const PairDiagnostics d = pairs.value();
        r.elasticEnergy = d.elastic;
        r.contacts = d.overlaps.contacts;
        r.meanOverlap = d.overlaps.mean;
        r.maxOverlap = d.overlaps.max;
    }
    return r;
}

WallsView DistributedSimulation::grainsExtent() const {
    // The largest x + r and −(x − r) over the ranks: the serial min and max.
    const World& w = sim_->world();
    std::vector<double> m(6, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!owned_[i]) continue;
        for (int k = 0; k < 3; ++k) {
            m[static_cast<std::size_t>(k)] = std::max(m[static_cast<std::size_t>(k)], w.x[i][k] + w.radius[i]);
            m[3 + static_cast<std::size_t>(k)] = std::max(m[3 + static_cast<std::size_t>(k)], -(w.x[i][k] - w.radius[i]));
        }
    }
    comm::maxOverRanks(m);
    WallsView view;
    view.grains = globalGrains_ > 0;
    if (view.grains)
        for (int k = 0; k < 3; ++k) {
            view.hi[k] = m[static_cast<std::size_t>(k)];
            view.lo[k] = -m[3 + static_cast<std::size_t>(k)];
        }
    return view;
}

}  // namespace moreau
