// The sums over the ranks a distributed run's controls read
// (distributed_simulation.hpp): each wall's load, the mobile walls' contact
// forces and the cell's stress, with the serial run's bits.
#include "moreau/sim/distributed_simulation.hpp"

#include <algorithm>

#include "distributed_grain.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"

namespace moreau {

using namespace distributed;

namespace {

/// f(local key, force on b) for each contact of the part's last evaluation,
/// in key order (Simulation::forEachContactForce). The keys keep their
/// feature: a pair of clumps (or a clump and a wall) touches at several
/// components, each its own term in the serial key order. The fused
/// pipeline (spheres only: feature 0) lists its touching pairs.
template <class F>
void forEachKeyedForce(const Simulation& sim, F&& f) {
    if (sim.fused()) {
        sim.forEachContactForce([&](BodyId a, BodyId b, const Vec3& force) { f(makeContactKey(a, b), force); });
        return;
    }
    for (const Contact& c : sim.contacts()) f(c.key, c.history.reaction);
}

}  // namespace

std::vector<Vec3> DistributedSimulation::wallLoads(bool afterSolve) {
    const std::vector<Vec3> sums = afterSolve || !sim_->world().anyGlued() ? std::vector<Vec3>{} : sim_->contactForces();
    return sumWallLoads(
        [&](const std::function<void(ContactKey, const Vec3&)>& add) { forEachKeyedForce(*sim_, add); },
        [&](BodyId grain) { return afterSolve ? sim_->contactForce(grain) : sums[static_cast<std::size_t>(grain)]; });
}

std::vector<Vec3> DistributedSimulation::sumWallLoads(
    const std::function<void(const std::function<void(ContactKey, const Vec3&)>&)>& contacts,
    const std::function<Vec3(BodyId)>& gluedForce) {
    // Each wall's load with the serial bits: its contacts with every rank's
    // owned grains, summed from zero in key order as the serial per-body sum
    // adds them (pairs without force add nothing to a sum that starts at
    // +0), then the forces on the grains glued to it, in grain order
    // (World::addGluedForces). An owned grain's own sum has the serial bits.
    const World& w = sim_->world();
    struct Glued {
        std::uint64_t grain, wall;  ///< global id, wall index
        Vec3 force;
    };
    ByteWriter mine;
    auto add = [&](ContactKey key, const Vec3& force) {
        const BodyId a = keyBodyA(key), b = keyBodyB(key);
        if (!w.isWall(b) || !owned_[static_cast<std::size_t>(a)] ||
            !summedWalls_[static_cast<std::size_t>(b) - w.numGrains])
            return;
        mine.put(std::uint8_t{0});
        mine.put(globalKey(key));
        mine.put(force);
    };
    contacts(add);
    if (w.anyGlued()) {
        for (const World::DrivenGrain& d : w.driven) {
            const auto i = static_cast<std::size_t>(d.grain);
            if (d.wall < 0 || !owned_[i] || !summedWalls_[static_cast<std::size_t>(d.wall) - w.numGrains]) continue;
            mine.put(std::uint8_t{1});
            mine.put(Glued{gid_[i], static_cast<std::uint64_t>(static_cast<std::size_t>(d.wall) - w.numGrains),
                           gluedForce(d.grain)});
        }
    }
    const std::string all = comm::gatherToAll(mine.bytes());
    std::vector<std::pair<std::uint64_t, Vec3>> terms;
    std::vector<Glued> glued;
    ByteReader u(all, kMessage);
    while (u.left() > 0) {
        if (u.get<std::uint8_t>("value") == 0) {
            const auto key = u.get<ContactKey>("value");
            terms.emplace_back(key, u.get<Vec3>("value"));
        } else {
            glued.push_back(u.get<Glued>("value"));
        }
    }
    std::sort(terms.begin(), terms.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
    std::vector<Vec3> sum(w.numWalls(), Vec3::Zero());
    for (const auto& [key, f] : terms) sum[static_cast<std::size_t>(keyBodyB(key)) - globalGrains_] += f;
    std::sort(glued.begin(), glued.end(), [](const Glued& p, const Glued& q) { return p.grain < q.grain; });
    for (const Glued& g : glued) sum[g.wall] += g.force;
    return sum;
}

Mat3 DistributedSimulation::cellStress() {
    // Simulation::cellStress over the ranks with the serial bits: every
    // grain–grain contact's term (from the rank owning its first grain) and
    // every grain's mass and velocity about the mean flow go to every rank,
    // which adds them in key and grain order, as the serial loops do. One
    // gather of O(grains) per step: a cell servo's price on ranks.
    const World& w = sim_->world();
    struct Term {
        ContactKey key;
        Vec3 f, branch;
    };
    ByteWriter contacts, grains;
    auto add = [&](ContactKey key, const Vec3& force) {
        const BodyId b = keyBodyB(key);
        const auto i = static_cast<std::size_t>(keyBodyA(key));
        if (w.isWall(b) || !owned_[i] || force == Vec3::Zero()) return;
        contacts.put(Term{globalKey(key), force, w.minimumImage(w.x[static_cast<std::size_t>(b)] - w.x[i])});
    };
    forEachKeyedForce(*sim_, add);
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!owned_[i]) continue;
        grains.put(gid_[i]);
        grains.put(w.mass[i]);
        grains.put(Vec3(w.v[i] - w.meanFlow(w.x[i])));
    }
    std::vector<Term> terms;
    const std::string allContacts = comm::gatherToAll(contacts.bytes()), allGrains = comm::gatherToAll(grains.bytes());
    ByteReader u(allContacts, kMessage);
    while (u.left() > 0) terms.push_back(u.get<Term>("value"));
    std::sort(terms.begin(), terms.end(), [](const Term& p, const Term& q) { return p.key < q.key; });
    Mat3 sum = Mat3::Zero();
    for (const Term& t : terms) sum += t.f * t.branch.transpose();
    std::vector<double> mass(globalGrains_, 0.0);
    std::vector<Vec3> flow(globalGrains_, Vec3::Zero());
    ByteReader g(allGrains, kMessage);
    while (g.left() > 0) {
        const auto i = static_cast<std::size_t>(g.get<std::uint64_t>("value"));
        mass[i] = g.get<double>("value");
        flow[i] = g.get<Vec3>("value");
    }
    return kineticStress(sum, mass, flow, w);
}

void DistributedSimulation::sumWallForces() {
    // Each mobile wall's force over the ranks (the glued grains' part
    // included), which integrate() kicks it with.
    const std::vector<Vec3> sum = wallLoads(true);
    const World& w = sim_->world();
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallMobile[k]) sim_->overrideContactForce(static_cast<BodyId>(w.numGrains + k), sum[k]);
}

}  // namespace moreau
