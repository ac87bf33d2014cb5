#include "moreau/sim/distributed_cd.hpp"

#include <algorithm>

#include "distributed_grain.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/comm.hpp"

namespace moreau {

namespace {

constexpr const char* kMessage = "distributed CD: a message between ranks";

}  // namespace

std::size_t CdRanks::ownedGrain(ByteReader& in, const World& w) const {
    const std::ptrdiff_t i = run_.localOf(in.get<std::uint64_t>("grain"), w);
    if (i < 0 || !run_.owned_[static_cast<std::size_t>(i)])
        throw std::logic_error("distributed CD: rows on a grain this rank does not own");
    return static_cast<std::size_t>(i);
}

void CdRanks::begin(const World& w, const std::vector<Contact>& contacts, std::vector<char>& own,
                    std::vector<double>& share, std::vector<ContactKey>& keys) {
    const auto ranks = static_cast<std::size_t>(run_.ranks_);
    const std::size_t nb = w.numBodies(), m = contacts.size();
    auto mobile = [&](std::size_t i) { return w.invMass[i].squaredNorm() + w.invInertia[i].squaredNorm() > 0.0; };
    // A grain glued to a wall is part of it: its rows move the wall (as
    // CdSolver's rows do).
    const std::vector<BodyId> carriers = w.carriers();
    auto carrier = [&](BodyId b) {
        return static_cast<std::size_t>(carriers.empty() ? b : carriers[static_cast<std::size_t>(b)]);
    };
    // The contacts whose first grain is owned here are this rank's rows
    // (walls come after the grains: a contact's first body is a grain).
    own.assign(m, 0);
    keys.resize(m);
    movedHere_.assign(nb, 0);
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = contacts[c];
        const std::size_t a = carrier(k.a), b = carrier(k.b);
        keys[c] = run_.globalKey(k.key);
        if (!run_.owned_[static_cast<std::size_t>(k.a)]) continue;
        own[c] = 1;
        if (mobile(a)) movedHere_[a] = 1;
        if (mobile(b)) movedHere_[b] = 1;
    }
    own_ = own;
    keys_ = keys;
    syncedThisStep_ = false;
    ghostsTo_.assign(ranks, {});
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (!run_.owned_[i] && movedHere_[i]) ghostsTo_[static_cast<std::size_t>(run_.owner_[i])].push_back(i);
    // Mobile walls: every rank holds them.
    walls_.clear();
    for (std::size_t i = w.numGrains; i < nb; ++i)
        if (mobile(i)) walls_.push_back(i);
    if (exact_) {
        share.clear();  // the serial masses
        bodiesOf_.resize(m);
        for (std::size_t c = 0; c < m; ++c) {
            // (A row within one body, two grains glued to one wall, gives
            // no impulse and waits on no body: the warm start skips it.)
            const std::size_t a = carrier(contacts[c].a), b = carrier(contacts[c].b);
            bodiesOf_[c] = {mobile(a) && b != a ? static_cast<std::int32_t>(a) : -1,
                            mobile(b) && b != a ? static_cast<std::int32_t>(b) : -1};
        }
        beginExact(w, contacts);
        return;
    }
    // Each owner learns which of its grains other ranks' rows move (its
    // ghosts there: the partners alone talk) ...
    std::vector<ByteWriter> out(ranks);
    for (std::size_t r = 0; r < ranks; ++r)
        for (const std::size_t i : ghostsTo_[r]) out[r].put(run_.gid_[i]);
    std::vector<std::string> in = run_.sendNear(out);
    movedBy_.assign(ranks, {});
    share_.assign(nb, 1.0);
    std::vector<std::uint32_t> count(nb, 0);
    for (std::size_t i = 0; i < nb; ++i) count[i] = movedHere_[i];
    distributed::readEach(in, [&](ByteReader& u, std::size_t r) {
        const std::size_t i = ownedGrain(u, w);
        movedBy_[r].push_back(i);
        ++count[i];
    }, kMessage);
    shared_.clear();
    slot_.assign(nb, 0);
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (run_.owned_[i] && count[i] > static_cast<std::uint32_t>(movedHere_[i])) {
            slot_[i] = shared_.size();
            shared_.push_back(i);
        }
    // ... and tells them over how many ranks each is split.
    std::vector<ByteWriter> counts(ranks);
    for (std::size_t r = 0; r < ranks; ++r)
        for (const std::size_t i : movedBy_[r]) counts[r].put(count[i]);
    in = run_.sendNear(counts);
    for (std::size_t i = 0; i < w.numGrains; ++i) share_[i] = count[i] > 1 ? count[i] : 1.0;
    for (std::size_t r = 0; r < ranks; ++r) {
        ByteReader u(in[r], kMessage);
        for (const std::size_t i : ghostsTo_[r]) share_[i] = std::max(1.0, static_cast<double>(u.get<std::uint32_t>("count")));
    }
    // Mobile walls: split over the ranks that move them.
    std::vector<std::uint64_t> wallCount;
    for (const std::size_t i : walls_) wallCount.push_back(movedHere_[i]);
    if (!walls_.empty()) comm::sumOverRanks(wallCount);
    for (std::size_t k = 0; k < walls_.size(); ++k) share_[walls_[k]] = std::max<double>(1.0, static_cast<double>(wallCount[k]));
    share = share_;
}

void CdRanks::beginExact(const World& w, const std::vector<Contact>& contacts) {
    const auto ranks = static_cast<std::size_t>(run_.ranks_);
    const int me = run_.rank_;
    const std::size_t nb = w.numBodies();
    // The keys of this rank's rows on each mobile body.
    std::vector<std::vector<ContactKey>> keysOn(nb);
    for (std::size_t c = 0; c < contacts.size(); ++c)
        if (own_[c])
            for (const std::int32_t b : bodiesOf_[c])
                if (b >= 0) keysOn[static_cast<std::size_t>(b)].push_back(keys_[c]);
    sharedBodies_.clear();
    sharedOf_.assign(nb, -1);
    auto add = [&](std::size_t local, std::uint64_t id) {
        sharedOf_[local] = static_cast<std::int32_t>(sharedBodies_.size());
        sharedBodies_.push_back({});
        sharedBodies_.back().local = local;
        sharedBodies_.back().id = id;
        return &sharedBodies_.back();
    };
    // Grains: the owner gathers every rank's rows on its grains ...
    std::vector<ByteWriter> out(ranks);
    for (std::size_t r = 0; r < ranks; ++r)
        for (const std::size_t i : ghostsTo_[r]) {
            out[r].put(run_.gid_[i]);
            out[r].putVector(keysOn[i]);
        }
    std::vector<std::string> in = run_.send(out);
    std::vector<std::vector<std::pair<ContactKey, int>>> rowsOn(w.numGrains);
    std::vector<std::vector<int>> touching(w.numGrains);
    distributed::readEach(in, [&](ByteReader& u, std::size_t r) {
        const std::size_t i = ownedGrain(u, w);
        for (const ContactKey k : u.getVector<ContactKey>("keys")) rowsOn[i].emplace_back(k, static_cast<int>(r));
        touching[i].push_back(static_cast<int>(r));
    }, kMessage);
    // ... and sends the whole list back to the ranks that hold rows on it.
    std::vector<ByteWriter> back(ranks);
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (touching[i].empty()) continue;  // only this rank's rows (or none): nothing shared
        for (const ContactKey k : keysOn[i]) rowsOn[i].emplace_back(k, me);
        Shared* sb = add(i, run_.gid_[i]);
        sb->rows = rowsOn[i];
        sb->holders = touching[i];
        std::vector<ContactKey> keys;
        std::vector<std::int32_t> rank;
        for (const auto& [k, r] : rowsOn[i]) {
            keys.push_back(k);
            rank.push_back(r);
        }
        for (const int r : touching[i]) {
            back[static_cast<std::size_t>(r)].put(run_.gid_[i]);
            back[static_cast<std::size_t>(r)].putVector(keys);
            back[static_cast<std::size_t>(r)].putVector(rank);
        }
    }
    distributed::readEach(run_.send(back), [&](ByteReader& u, std::size_t from) {
        const std::ptrdiff_t i = run_.localOf(u.get<std::uint64_t>("grain"), w);
        if (i < 0) throw std::logic_error("distributed CD: rows on a grain this rank does not hold");
        Shared* sb = add(static_cast<std::size_t>(i), run_.gid_[static_cast<std::size_t>(i)]);
        const std::vector<ContactKey> keys = u.getVector<ContactKey>("rows");
        const std::vector<std::int32_t> rank = u.getVector<std::int32_t>("rows");
        if (keys.size() != rank.size()) throw std::logic_error("distributed CD: a row list without its ranks");
        for (std::size_t k = 0; k < keys.size(); ++k) sb->rows.emplace_back(keys[k], rank[k]);
        for (const auto& [key, r] : sb->rows)  // the owner and the other ranks with rows on it
            if (r != me && std::find(sb->holders.begin(), sb->holders.end(), r) == sb->holders.end())
                sb->holders.push_back(r);
        if (std::find(sb->holders.begin(), sb->holders.end(), static_cast<int>(from)) == sb->holders.end())
            sb->holders.push_back(static_cast<int>(from));
    }, kMessage);
    // Mobile walls (begin()'s walls_): every rank learns every rank's rows on them.
    if (walls_.empty()) return;
    ByteWriter mine;
    for (const std::size_t i : walls_) mine.putVector(keysOn[i]);
    const std::string all = comm::gatherToAll(mine.bytes());
    ByteReader u(all, kMessage);
    std::vector<Shared*> wall;
    for (const std::size_t i : walls_) wall.push_back(add(i, run_.globalGrains_ + (i - w.numGrains)));
    for (std::size_t q = 0; q < ranks; ++q)
        for (Shared* sb : wall) {
            for (const ContactKey k : u.getVector<ContactKey>("keys")) sb->rows.emplace_back(k, static_cast<int>(q));
            if (static_cast<int>(q) != me) sb->holders.push_back(static_cast<int>(q));
        }
}

void CdRanks::start(const std::vector<SolverBody>& bodies) {
    if (exact_) return;  // the passes leave every holder with the bits
    base_.resize(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) base_[i] = {bodies[i].v, bodies[i].w};
}

void CdRanks::synchronize(std::vector<SolverBody>& bodies) {
    if (exact_) return;
    ++traffic_.syncs;
    const auto ranks = static_cast<std::size_t>(run_.ranks_), me = static_cast<std::size_t>(run_.rank_);
    auto change = [&](std::size_t i) { return Motion{bodies[i].v - base_[i].v, bodies[i].w - base_[i].w}; };
    // Body i's velocity for the next sweep and the next sync.
    auto settle = [&](std::size_t i, const Motion& m) {
        base_[i] = m;
        bodies[i].v = m.v;
        bodies[i].w = m.w;
    };
    // The changes this rank's rows made to other ranks' grains, to their
    // owners (the writers kept from sweep to sweep; a Motion goes as v, then w).
    std::vector<ByteWriter>& out = changesOut_;
    out.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        out[r].clear();
        for (const std::size_t i : ghostsTo_[r]) out[r].put(change(i));
    }
    // The same parts every sync of the step: after the first, only neighbours talk.
    const comm::Mailbox& in =
        syncedThisStep_ ? run_.post(out, changesBox_, true) : run_.postNear(out, changesBox_);
    // Each shared grain: its start velocity plus the mean of the ranks'
    // changes, added in rank order.
    std::vector<Motion> sum(shared_.size());
    for (std::size_t q = 0; q < ranks; ++q) {
        if (q == me) {
            for (std::size_t k = 0; k < shared_.size(); ++k)
                if (movedHere_[shared_[k]]) {
                    const Motion d = change(shared_[k]);
                    sum[k].v += d.v;
                    sum[k].w += d.w;
                }
            continue;
        }
        ByteReader u(in.from(q), kMessage);
        for (const std::size_t i : movedBy_[q]) {
            sum[slot_[i]].v += u.get<Vec3>("change");
            sum[slot_[i]].w += u.get<Vec3>("change");
        }
    }
    for (std::size_t k = 0; k < shared_.size(); ++k) {
        const std::size_t i = shared_[k];
        settle(i, {base_[i].v + sum[k].v / share_[i], base_[i].w + sum[k].w / share_[i]});
    }
    // The new velocities back to the ranks whose rows move them.
    std::vector<ByteWriter>& back = backOut_;
    back.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        back[r].clear();
        for (const std::size_t i : movedBy_[r]) back[r].put(base_[i]);
    }
    const comm::Mailbox& again = syncedThisStep_ ? run_.post(back, backBox_, true) : run_.postNear(back, backBox_);
    syncedThisStep_ = true;
    for (std::size_t r = 0; r < ranks; ++r) {
        ByteReader u(again.from(r), kMessage);
        for (const std::size_t i : ghostsTo_[r]) settle(i, u.get<Motion>("velocity"));
    }
    if (walls_.empty()) return;
    // Mobile walls: every rank's change, in rank order.
    ByteWriter mine;
    for (const std::size_t i : walls_) mine.put(change(i));
    run_.traffic_.bytes += mine.bytes().size() * (ranks - 1);
    run_.traffic_.messages += ranks - 1;
    const std::string all = comm::gatherToAll(mine.bytes());
    ByteReader u(all, kMessage);
    std::vector<Motion> wsum(walls_.size());
    for (std::size_t q = 0; q < ranks; ++q)
        for (std::size_t k = 0; k < walls_.size(); ++k) {
            wsum[k].v += u.get<Vec3>("wall change");
            wsum[k].w += u.get<Vec3>("wall change");
        }
    for (std::size_t k = 0; k < walls_.size(); ++k) {
        const std::size_t i = walls_[k];
        settle(i, {base_[i].v + wsum[k].v / share_[i], base_[i].w + wsum[k].w / share_[i]});
    }
}

void CdRanks::sum(double* values, std::size_t n) {
    ByteWriter mine;
    for (std::size_t k = 0; k < n; ++k) mine.put(values[k]);
    const std::string all = comm::gatherToAll(mine.bytes());
    ByteReader u(all, kMessage);
    for (std::size_t k = 0; k < n; ++k) values[k] = 0.0;
    for (int q = 0; q < run_.ranks_; ++q)
        for (std::size_t k = 0; k < n; ++k) values[k] += u.get<double>("sum");
}

void CdRanks::run(const SweepPlan& plan, const PassOrder& order, RowPass& pass, std::vector<SolverBody>& bodies) {
    if (exact_) orderedPass(plan.seq, order, pass, bodies);
    else SweepSchedule::run(plan, order, pass, bodies);
}

void CdRanks::orderedPass(const std::vector<std::int32_t>& order, const PassOrder& priority, RowPass& pass,
                          std::vector<SolverBody>& bodies) {
    // Dataflow over the ranks: a row runs once each of its shared bodies
    // has seen every earlier row on it (the body's `next` names it) and no
    // earlier row of this rank on one of its other bodies waits. After each
    // round of scans, the velocity of a shared body whose next row lies on
    // another rank goes there. The pass ends when no rank has rows left; the
    // last row's rank then sends each shared body's velocity to its holders.
    const auto ranks = static_cast<std::size_t>(run_.ranks_);
    const int me = run_.rank_;
    for (Shared& sb : sharedBodies_) {
        sb.seq.clear();
        for (const auto& [key, r] : sb.rows) sb.seq.emplace_back(priority.priority(key), key, r);
        std::sort(sb.seq.begin(), sb.seq.end());
        sb.next = 0;
    }
    blocked_.resize(bodies.size(), -1);
    std::vector<std::int32_t> pending = order, left;
    std::vector<char> moved(sharedBodies_.size(), 0);
    std::vector<std::size_t> movedList;
    auto put = [&](ByteWriter& b, const Shared& sb) {
        b.put(sb.id);
        b.put(static_cast<std::uint64_t>(sb.next));
        b.put(bodies[sb.local].v);
        b.put(bodies[sb.local].w);
    };
    auto take = [&](const std::vector<std::string>& in) {
        distributed::readEach(in, [&](ByteReader& u, std::size_t) {
            const auto id = u.get<std::uint64_t>("body");
            const std::ptrdiff_t i = id >= run_.globalGrains_
                                         ? static_cast<std::ptrdiff_t>(run_.part().world().numGrains +
                                                                       (id - run_.globalGrains_))
                                         : run_.localOf(id, run_.part().world());
            if (i < 0 || sharedOf_[static_cast<std::size_t>(i)] < 0)
                throw std::logic_error("distributed CD: a velocity for a body this rank does not share");
            Shared& sb = sharedBodies_[static_cast<std::size_t>(sharedOf_[static_cast<std::size_t>(i)])];
            sb.next = static_cast<std::size_t>(u.get<std::uint64_t>("body"));
            bodies[sb.local].v = u.get<Vec3>("body");
            bodies[sb.local].w = u.get<Vec3>("body");
        }, kMessage);
    };
    ++traffic_.passes;
    while (true) {
        ++scan_;
        left.clear();
        ready_.clear();
        for (const std::int32_t c : pending) {
            bool ready = true;
            for (const std::int32_t b : bodiesOf_[static_cast<std::size_t>(c)]) {
                if (b < 0) continue;
                const auto i = static_cast<std::size_t>(b);
                if (blocked_[i] == scan_) ready = false;
                const std::int32_t k = sharedOf_[i];
                if (k >= 0) {
                    const Shared& sb = sharedBodies_[static_cast<std::size_t>(k)];
                    if (sb.next >= sb.seq.size() || std::get<1>(sb.seq[sb.next]) != keys_[static_cast<std::size_t>(c)])
                        ready = false;
                }
            }
            if (!ready) {
                for (const std::int32_t b : bodiesOf_[static_cast<std::size_t>(c)])
                    if (b >= 0) blocked_[static_cast<std::size_t>(b)] = scan_;
                left.push_back(c);
                continue;
            }
            ready_.push_back(c);  // run after the scan: readiness reads no velocity
            for (const std::int32_t b : bodiesOf_[static_cast<std::size_t>(c)]) {
                if (b < 0) continue;
                const std::int32_t k = sharedOf_[static_cast<std::size_t>(b)];
                if (k < 0) continue;
                ++sharedBodies_[static_cast<std::size_t>(k)].next;
                if (!moved[static_cast<std::size_t>(k)]) {
                    moved[static_cast<std::size_t>(k)] = 1;
                    movedList.push_back(static_cast<std::size_t>(k));
                }
            }
        }
        pass.run(ready_.data(), 0, ready_.size());
        pending.swap(left);
        // Each shared body this scan moved goes to the rank of its next row.
        std::vector<ByteWriter> out(ranks);
        for (const std::size_t k : movedList) {
            moved[k] = 0;
            const Shared& sb = sharedBodies_[k];
            if (sb.next < sb.seq.size() && std::get<2>(sb.seq[sb.next]) != me)
                put(out[static_cast<std::size_t>(std::get<2>(sb.seq[sb.next]))], sb);
        }
        movedList.clear();
        take(run_.send(out));
        ++traffic_.rounds;
        if (comm::maxOverRanks(static_cast<double>(pending.size())) == 0.0) break;
    }
    // The pass's last velocity of each shared body to the ranks holding it.
    std::vector<ByteWriter> out(ranks);
    for (const Shared& sb : sharedBodies_)
        if (!sb.seq.empty() && std::get<2>(sb.seq.back()) == me)
            for (const int r : sb.holders) put(out[static_cast<std::size_t>(r)], sb);
    take(run_.send(out));
}

void CdRanks::keyedSum(const std::vector<double>& terms, std::size_t n, std::size_t block, double* totals) {
    // Rank 0 adds every rank's terms in key order, as the serial solve does.
    ByteWriter mine;
    for (std::size_t c = 0; c < own_.size(); ++c) {
        if (!own_[c]) continue;
        mine.put(keys_[c]);
        for (std::size_t k = 0; k < n; ++k) mine.put(terms[n * c + k]);
    }
    const std::vector<std::string> parts = comm::gatherToRoot(mine.bytes());
    ByteWriter result;
    if (run_.rank_ == 0) {
        std::vector<std::pair<ContactKey, std::size_t>> order;
        std::vector<double> all;
        distributed::readEach(parts, [&](ByteReader& u, std::size_t) {
            order.emplace_back(u.get<ContactKey>("term"), all.size());
            for (std::size_t k = 0; k < n; ++k) all.push_back(u.get<double>("term"));
        }, kMessage);
        std::sort(order.begin(), order.end());
        std::vector<double> total(n, 0.0), part(n, 0.0);
        for (std::size_t r = 0; r < order.size(); ++r) {
            for (std::size_t k = 0; k < n; ++k) part[k] += all[order[r].second + k];
            if ((r + 1) % block == 0 || r + 1 == order.size()) {
                for (std::size_t k = 0; k < n; ++k) {
                    total[k] += part[k];
                    part[k] = 0.0;
                }
            }
        }
        for (const double t : total) result.put(t);
    }
    const std::string sums = comm::broadcast(result.bytes());
    ByteReader u(sums, kMessage);
    for (std::size_t k = 0; k < n; ++k) totals[k] = u.get<double>("sum");
}

bool CdRanks::any(bool flag) { return comm::maxOverRanks(flag ? 1.0 : 0.0) > 0.0; }

}  // namespace moreau
