// What a distributed run shows rank 0 (distributed_simulation.hpp): the
// whole world, its contacts, contact store and MD scheme state (checkpoints,
// the serial snapshot files, FCLIB dumps), the travel guard's test and each
// rank's VTK piece.
#include "moreau/sim/distributed_simulation.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "distributed_grain.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/io/output.hpp"

namespace moreau {

using namespace distributed;

namespace {

/// Rank 0: every rank's `mine` (values of T, one after another), in key order.
template <class T>
std::vector<T> gatherByKey(const ByteWriter& mine) {
    std::vector<T> all;
    readEach(comm::gatherToRoot(mine.bytes()), [&](ByteReader& u, std::size_t) { all.push_back(u.get<T>("value")); });
    std::sort(all.begin(), all.end(), [](const T& p, const T& q) { return p.key < q.key; });
    return all;
}

}  // namespace

void DistributedSimulation::expectSettled(const char* what) const {
    // A step taken since a check that covered more than one may yet be
    // taken back: the caller settles first.
    if (!checked_ && sinceCheck_ > 0)
        throw std::logic_error(std::string("DistributedSimulation::") + what + " between checks (settle() first)");
}

std::string DistributedSimulation::travelFailure(double dt, double maxTravel) const {
    // The serial guard's test and report: the first grain, by id, that
    // moves more than maxTravel radii in a step (each rank its own first).
    if (!tooFastAnywhere_) return {};  // the check's verdict, the same on every rank
    const World& w = sim_->world();
    ByteWriter mine;
    for (std::size_t k = 0; k < w.numGrains; ++k) {
        const double reach = maxTravel * w.radius[k];
        if (!owned_[k] || w.v[k].squaredNorm() * (dt * dt) <= reach * reach) continue;
        mine.put(gid_[k]);
        mine.put(w.v[k].norm() * dt / w.radius[k]);
        mine.put(w.v[k].norm());
        break;  // gid_ ascends: the first here
    }
    const std::string all = comm::gatherToAll(mine.bytes());
    ByteReader u(all, kMessage);
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    double travel = 0.0, speed = 0.0;
    while (u.left() > 0) {
        const auto id = u.get<std::uint64_t>("value");
        const double t = u.get<double>("value"), v = u.get<double>("value");
        if (id < first) {
            first = id;
            travel = t;
            speed = v;
        }
    }
    if (first == std::numeric_limits<std::uint64_t>::max()) return {};
    char text[160];
    std::snprintf(text, sizeof text, "grain %zu moves %.3g radii in a step, |v| = %.3g (guard.max_travel = %g)",
                  static_cast<std::size_t>(first), travel, speed, maxTravel);
    return text;
}

std::string DistributedSimulation::ownedSchemeBytes() const {
    // Each owned grain's entries of the MD scheme's state, after its id.
    const MdSolver& md = sim_->md();
    const std::size_t per = scheme_ ? md.schemeCarry().perBody() : 0;
    const World& w = sim_->world();
    ByteWriter mine;
    std::vector<MdSolver::Vec6> e(per);
    for (std::size_t k = 0; k < w.numGrains && per > 0; ++k) {
        if (!owned_[k]) continue;
        mine.put(gid_[k]);
        md.bodyScheme(k, e.data());
        for (const MdSolver::Vec6& v : e) mine.put(v);
    }
    return std::move(mine.bytes());
}

void DistributedSimulation::schemeFromParts(const std::vector<std::string>& parts, std::size_t per,
                                            const std::vector<MdSolver::Vec6>& walls,
                                            std::vector<MdSolver::Vec6>& entries) const {
    entries.assign(globalGrains_ * per + walls.size(), MdSolver::Vec6::Zero());
    readEach(parts, [&](ByteReader& u, std::size_t) {
        const auto i = static_cast<std::size_t>(u.get<std::uint64_t>("value"));
        for (std::size_t j = 0; j < per; ++j) entries[i * per + j] = u.get<MdSolver::Vec6>("value");
    });
    std::copy(walls.begin(), walls.end(), entries.begin() + static_cast<std::ptrdiff_t>(globalGrains_ * per));
}

std::vector<MdSolver::Vec6> DistributedSimulation::wallSchemeNow() const {
    const MdSolver& md = sim_->md();
    const std::size_t per = md.schemeCarry().perBody();
    const World& w = sim_->world();
    std::vector<MdSolver::Vec6> walls(w.numWalls() * per);
    for (std::size_t k = 0; k < w.numWalls() && per > 0; ++k) md.bodyScheme(w.numGrains + k, walls.data() + k * per);
    return walls;
}

bool DistributedSimulation::gatherScheme(MdSolver::SchemeCarry& carry, std::vector<MdSolver::Vec6>& entries) {
    expectSettled("gatherScheme");
    if (!scheme_) return false;  // the same on every rank
    carry = sim_->md().schemeCarry();
    const std::vector<std::string> parts = comm::gatherToRoot(ownedSchemeBytes());
    entries.clear();
    if (rank_ == 0) schemeFromParts(parts, carry.perBody(), wallSchemeNow(), entries);
    return true;
}

std::string DistributedSimulation::ownedGrainBytes() const {
    // Each owned grain's whole state (DistributedGrain, its scheme entries aside).
    const World& w = sim_->world();
    const std::vector<std::int32_t> driven = drivenOf(w);
    ByteWriter mine;
    for (std::size_t k = 0; k < w.numGrains; ++k)
        if (owned_[k]) putGrain(mine, grainOf(w, k, gid_[k], driven, nullptr, 0, ownShapes_), shapes_);
    return std::move(mine.bytes());
}

World DistributedSimulation::worldFromParts(const std::vector<std::string>& parts, const World& walls) const {
    std::vector<DistributedGrain> grains;
    grains.reserve(globalGrains_);
    readEach(parts, [&](ByteReader& u, std::size_t) { grains.push_back(getGrain(u, shapes_)); });
    std::vector<std::size_t> order(grains.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return grains[a].gid < grains[b].gid; });
    return worldOf(grains, order, walls, ownShapes_);
}

const World& DistributedSimulation::gatherWorld() {
    expectSettled("gatherWorld");
    ++worldGathers_;
    // The first gather brings every owned grain's whole state (rank 0 holds
    // no grain before it), the later ones their motion.
    const World& w = sim_->world();
    const bool first = !wholeHeld_;
    ByteWriter mine;
    if (first) mine.bytes() = ownedGrainBytes();
    for (std::size_t k = 0; k < w.numGrains && !first; ++k) {
        if (!owned_[k]) continue;
        mine.put(gid_[k]);
        putMotion(mine, w, k);
    }
    const std::vector<std::string> parts = comm::gatherToRoot(mine.bytes());
    wholeHeld_ = true;
    if (rank_ != 0) return whole_;
    if (first) {
        whole_ = worldFromParts(parts, w);
        return whole_;
    }
    readEach(parts, [&](ByteReader& u, std::size_t) {
        const auto i = static_cast<std::size_t>(u.get<std::uint64_t>("value"));
        whole_.x[i] = u.get<Vec3>("value");
        whole_.v[i] = u.get<Vec3>("value");
        whole_.w[i] = u.get<Vec3>("value");
        whole_.q[i] = u.get<Quat>("value");
    });
    for (std::size_t k = 0; k < w.numWalls(); ++k) {
        const std::size_t i = whole_.numGrains + k, j = w.numGrains + k;
        whole_.x[i] = w.x[j];
        whole_.v[i] = w.v[j];
        whole_.w[i] = w.w[j];
        whole_.q[i] = w.q[j];
    }
    whole_.copyCellAndClock(w);
    return whole_;
}

std::vector<Contact> DistributedSimulation::gatherContacts() {
    expectSettled("gatherContacts");
    // The ghosts stepped with part of their forces: their owners' state
    // first, so that a contact with a ghost has the serial geometry. Then
    // each contact once: from the rank that owns its first body.
    exchangeGhosts();
    ByteWriter mine;
    for (Contact c : sim_->contacts()) {
        if (!owned_[static_cast<std::size_t>(c.a)]) continue;
        c.a = static_cast<BodyId>(globalOf(c.a));
        c.b = static_cast<BodyId>(globalOf(c.b));
        c.key = makeContactKey(c.a, c.b, keyFeature(c.key));
        mine.put(c);
    }
    return gatherByKey<Contact>(mine);
}

std::string DistributedSimulation::ownedStoreBytes(std::size_t& stride) const {
    // Each record once: from the rank that owns its first body (a grain).
    const ContactStore mine = globalStore();
    stride = mine.slots.stride;
    ByteWriter out;
    for (std::size_t r = 0; r < mine.records.size(); ++r) {
        const std::ptrdiff_t a = localOf(static_cast<std::uint64_t>(keyBodyA(mine.records[r].key)), sim_->world());
        if (a < 0 || !owned_[static_cast<std::size_t>(a)]) continue;
        out.put(mine.records[r]);
        for (std::size_t k = 0; k < mine.slots.stride; ++k) out.put(mine.slots.at(r)[k]);
    }
    return std::move(out.bytes());
}

static ContactStore storeFromParts(const std::vector<std::string>& parts, std::size_t stride) {
    ContactStore all;
    all.slots.stride = stride;
    std::vector<std::pair<ContactKey, std::size_t>> order;
    std::vector<ContactMemory> records;
    std::vector<double> slots;
    readEach(parts, [&](ByteReader& u, std::size_t) {
        records.push_back(u.get<ContactMemory>("value"));
        for (std::size_t k = 0; k < all.slots.stride; ++k) slots.push_back(u.get<double>("value"));
        order.emplace_back(records.back().key, records.size() - 1);
    });
    std::sort(order.begin(), order.end());
    for (const auto& [key, r] : order) {
        all.records.push_back(records[r]);
        all.slots.values.insert(all.slots.values.end(), slots.begin() + static_cast<std::ptrdiff_t>(r * all.slots.stride),
                                slots.begin() + static_cast<std::ptrdiff_t>((r + 1) * all.slots.stride));
    }
    return all;
}

ContactStore DistributedSimulation::gatherStore() {
    expectSettled("gatherStore");
    std::size_t stride = 0;
    const std::vector<std::string> parts = comm::gatherToRoot(ownedStoreBytes(stride));
    return storeFromParts(parts, stride);
}

CheckpointShare DistributedSimulation::share() const {
    expectSettled("share");
    const World& w = sim_->world();
    const std::vector<std::int32_t> driven = drivenOf(w);
    CheckpointShare s;
    s.held = scheme_.has_value();
    const std::size_t per = s.held ? sim_->md().schemeCarry().perBody() : 0;
    std::vector<DistributedGrain> grains;
    grains.reserve(ownedCount_);
    std::vector<MdSolver::Vec6> e(per);
    for (std::size_t k = 0; k < w.numGrains; ++k) {
        if (!owned_[k]) continue;
        grains.push_back(grainOf(w, k, gid_[k], driven, nullptr, 0, ownShapes_));
        s.ids.push_back(gid_[k]);
        if (per == 0) continue;
        sim_->md().bodyScheme(k, e.data());
        s.entries.insert(s.entries.end(), e.begin(), e.end());
    }
    std::vector<std::size_t> order(grains.size());
    std::iota(order.begin(), order.end(), 0);
    s.part = worldOf(grains, order, w, ownShapes_);
    s.ownShapes = ownShapes_;
    std::vector<DistributedGrain>().swap(grains);  // in s.part now: not held through the store's copy below
    // Each contact's memory once: from the rank that owns its first body.
    const ContactStore all = globalStore();
    s.store.slots.stride = all.slots.stride;
    for (std::size_t r = 0; r < all.records.size(); ++r) {
        const std::ptrdiff_t a = localOf(static_cast<std::uint64_t>(keyBodyA(all.records[r].key)), w);
        if (a < 0 || !owned_[static_cast<std::size_t>(a)]) continue;
        s.store.records.push_back(all.records[r]);
        s.store.slots.values.insert(s.store.slots.values.end(), all.slots.at(r), all.slots.at(r) + all.slots.stride);
    }
    if (s.held) {
        s.carry = sim_->md().schemeCarry();
        s.wallScheme = wallSchemeNow();
    }
    s.step = w.step;
    return s;
}

const CheckpointShare& DistributedSimulation::kept() const {
    if (!kept_) throw std::logic_error("DistributedSimulation::kept before keepPart");
    return *kept_;
}

void DistributedSimulation::writeVtkPiece(const std::filesystem::path& dir) {
    expectSettled("writeVtkPiece");
    // The ghosts at their owners' state (a contact with one has the serial
    // geometry); this rank's piece: its owned grains, the contacts whose
    // first grain it owns, and each owned grain's stress from all of its
    // contacts, those with another rank's row taking that row's force.
    exchangeGhosts();
    const World& w = sim_->world();
    std::vector<ContactKey> keys;
    const std::vector<Contact> contacts = contactsWithRowForces(keys);
    std::vector<Contact> rows;
    for (const Contact& c : contacts)
        if (owned_[static_cast<std::size_t>(c.a)]) rows.push_back(c);
    std::vector<std::size_t> owned;
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (owned_[i]) owned.push_back(i);
    std::vector<std::uint64_t> ids(w.numBodies());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = globalOf(static_cast<BodyId>(i));
    moreau::writeVtkPiece(dir, w, owned, ids, grainStress(w, contacts), rows, w.step, rank_, vtkShapes_);
}

}  // namespace moreau
