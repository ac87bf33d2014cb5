#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/distributed_cd.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/io/output.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/core/comm.hpp"

namespace moreau {

namespace {

/// What a message names when it turns out shorter than its contents (a bug).
constexpr const char* kMessage = "distributed run: a message between ranks";

}  // namespace

/// A grain's whole state, as it migrates or first arrives as a ghost.
struct DistributedGrain {
    std::uint64_t gid = 0;
    Vec3 x, v, w, invMass, invInertia;
    Quat q;
    double radius = 0.0, mass = 0.0, inertia = 0.0;
    bool prescribed = false, scheduled = false;
    ForceSchedule force;
    std::int32_t driven = -2;  ///< kNotDriven, kDrivenFree or the wall it is glued to (body − numGrains)
    std::vector<MdSolver::Vec6> scheme;  ///< its entries of the MD scheme's state (owned grains; MdSolver::bodyScheme)
};

namespace {

constexpr std::int32_t kNotDriven = -2, kDrivenFree = -1;

/// Per grain of `w`: kNotDriven, kDrivenFree or the wall (body − numGrains)
/// it is glued to (World::DrivenGrain); empty when no grain is driven.
std::vector<std::int32_t> drivenOf(const World& w) {
    std::vector<std::int32_t> d;
    if (w.driven.empty()) return d;
    d.assign(w.numGrains, kNotDriven);
    for (const World::DrivenGrain& g : w.driven)
        d[static_cast<std::size_t>(g.grain)] =
            g.wall < 0 ? kDrivenFree : static_cast<std::int32_t>(static_cast<std::size_t>(g.wall) - w.numGrains);
    return d;
}

/// Grain i of `w`; `driven`: drivenOf(w).
DistributedGrain grainOf(const World& w, std::size_t i, std::uint64_t gid, const std::vector<std::int32_t>& driven) {
    DistributedGrain g;
    g.gid = gid;
    g.x = w.x[i];
    g.v = w.v[i];
    g.w = w.w[i];
    g.q = w.q[i];
    g.invMass = w.invMass[i];
    g.invInertia = w.invInertia[i];
    g.radius = w.radius[i];
    g.mass = w.mass[i];
    g.inertia = w.inertia[i];
    g.prescribed = w.prescribed[i];
    g.scheduled = i < w.force.size();
    if (g.scheduled) g.force = w.force[i];
    if (!driven.empty()) g.driven = driven[i];
    return g;
}

void putGrain(ByteWriter& out, const DistributedGrain& g) {
    out.put(g.gid);
    out.put(g.x);
    out.put(g.v);
    out.put(g.w);
    out.put(g.q);
    out.put(g.invMass);
    out.put(g.invInertia);
    out.put(g.radius);
    out.put(g.mass);
    out.put(g.inertia);
    out.put(static_cast<std::uint8_t>(g.prescribed));
    out.put(static_cast<std::uint8_t>(g.scheduled));
    if (g.scheduled) out.put(g.force);
    out.put(g.driven);
    out.put(static_cast<std::uint64_t>(g.scheme.size()));
    for (const MdSolver::Vec6& v : g.scheme) out.put(v);
}

DistributedGrain getGrain(ByteReader& in) {
    DistributedGrain g;
    g.gid = in.get<std::uint64_t>("grain");
    g.x = in.get<Vec3>("grain");
    g.v = in.get<Vec3>("grain");
    g.w = in.get<Vec3>("grain");
    g.q = in.get<Quat>("grain");
    g.invMass = in.get<Vec3>("grain");
    g.invInertia = in.get<Vec3>("grain");
    g.radius = in.get<double>("grain");
    g.mass = in.get<double>("grain");
    g.inertia = in.get<double>("grain");
    g.prescribed = in.get<std::uint8_t>("grain") != 0;
    g.scheduled = in.get<std::uint8_t>("grain") != 0;
    if (g.scheduled) g.force = in.get<ForceSchedule>("grain");
    g.driven = in.get<std::int32_t>("grain");
    g.scheme.resize(in.count(sizeof(MdSolver::Vec6), "grain"));
    for (MdSolver::Vec6& v : g.scheme) v = in.get<MdSolver::Vec6>("grain");
    return g;
}

/// The moving part of a grain's state, sent to its ghosts every step.
void putMotion(ByteWriter& out, const World& w, std::size_t i) {
    out.put(w.x[i]);
    out.put(w.v[i]);
    out.put(w.w[i]);
    out.put(w.q[i]);
}

}  // namespace

// --- the decomposition ---------------------------------------------------------------

DistributedSimulation::DistributedSimulation(Scene scene, const ContactStore* contacts, const MdSolver* scheme)
    : ranks_(comm::ranks()), rank_(comm::rank()) {
    World& global = scene.world;
    globalGrains_ = global.numGrains;
    // A grid of bricks: the factorisation of the rank count whose inner
    // faces have the least area over the grains' extent (axes the dimension
    // moves along only); cuts at each axis's grain-count quantiles.
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
    double rMax = 0.0;
    for (std::size_t i = 0; i < global.numGrains; ++i) {
        lo = lo.cwiseMin(global.x[i]);
        hi = hi.cwiseMax(global.x[i]);
        rMax = std::max(rMax, global.radius[i]);
    }
    skin_ = scene.simulation.skin;
    halo_ = 2.0 * rMax + scene.simulation.margin + skin_;
    Vec3 extent;
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        periodic_[k] = global.periodic[k];
        extent[a] = periodic_[k] ? global.boxMax[a] - global.boxMin[a] : std::max(hi[a] - lo[a], 0.0) + 2.0 * rMax;
    }
    axes_ = std::clamp(global.dimension, 1, 3);
    leesEdwards_ = global.leesEdwards();
    dims_ = chooseGrid(extent);
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        const int n = dims_[k];
        std::vector<double> along(global.numGrains);
        for (std::size_t i = 0; i < global.numGrains; ++i) along[i] = global.x[i][a];
        std::sort(along.begin(), along.end());
        std::vector<double>& c = cuts_[k];
        c.assign(static_cast<std::size_t>(n) + 1, 0.0);
        c.front() = periodic_[k] ? global.boxMin[a] : -std::numeric_limits<double>::infinity();
        c.back() = periodic_[k] ? global.boxMax[a] : std::numeric_limits<double>::infinity();
        for (int r = 1; r < n; ++r) {
            const std::size_t q = along.size() * static_cast<std::size_t>(r) / static_cast<std::size_t>(n);
            c[static_cast<std::size_t>(r)] =
                along.empty() ? 0.0 : q == 0 ? along.front() : 0.5 * (along[q - 1] + along[std::min(q, along.size() - 1)]);
        }
    }

    // Every rank holds the whole start world: it takes its own grains and its
    // ghosts from it (no migration), then keeps only rank 0's copy for output.
    std::vector<DistributedGrain> mine;
    std::vector<int> owner;
    const std::vector<std::int32_t> driven = drivenOf(global);
    // The MD scheme's state to start from (a checkpoint's): every rank
    // takes its bodies' entries from the whole world's.
    if (scheme) {
        scheme_ = scheme->schemeCarry();
        const std::size_t per = scheme_->perBody();
        wallScheme_.assign(global.numWalls() * per, MdSolver::Vec6::Zero());
        for (std::size_t k = 0; k < global.numWalls() && per > 0; ++k)
            scheme->bodyScheme(global.numGrains + k, wallScheme_.data() + k * per);
    }
    for (std::size_t i = 0; i < global.numGrains; ++i) {
        const int r = ownerOf(global.x[i]);
        if (r != rank_ && !nearBrick(global.x[i], rank_)) continue;
        mine.push_back(grainOf(global, i, i, driven));
        if (scheme_ && r == rank_ && scheme_->perBody() > 0) {
            mine.back().scheme.resize(scheme_->perBody());
            scheme->bodyScheme(i, mine.back().scheme.data());
        }
        owner.push_back(r);
    }
    if (!scheme && scene.simulation.method == Method::MD && scene.md.integrator != Integrator::CD)
        scheme_ = MdSolver::SchemeCarry{};  // a scheme other than cd from its start
    template_ = std::move(scene);
    if (template_.simulation.method == Method::CD) cdRanks_ = std::make_unique<CdRanks>(*this, template_.cd.distributed == CdDistributed::Exact);
    assemble(std::move(mine), std::move(owner), contacts ? *contacts : ContactStore{});
    if (rank_ == 0) whole_ = std::move(template_.world);
    template_.world = World{};
}

std::array<int, 3> DistributedSimulation::chooseGrid(const Vec3& extent) const {
    // The factorisation of the rank count whose inner faces have the least
    // area over `extent`, on the axes the scene moves along.
    std::array<int, 3> dims{1, 1, 1};
    double best = std::numeric_limits<double>::infinity();
    for (int px = 1; px <= ranks_; ++px)
        for (int py = 1; px * py <= ranks_; ++py) {
            if (ranks_ % (px * py) != 0) continue;
            const int pz = ranks_ / (px * py);
            const std::array<int, 3> p{px, py, pz};
            // Lees–Edwards: no cut along x, the flow direction: every rank
            // holds whole rows of the cell along x, so that the offset images
            // across y lie in the bricks that hold their grains.
            bool fits = !leesEdwards_ || px == 1;
            double area = 0.0;
            for (int a = 0; a < 3; ++a) {
                const int n = p[static_cast<std::size_t>(a)];
                if (n > 1 && a >= axes_) fits = false;
                const double faces = periodic_[static_cast<std::size_t>(a)] ? (n > 1 ? n : 0) : n - 1;
                if (a < axes_)
                    area += faces *
                            (axes_ == 3 ? extent[(a + 1) % 3] * extent[(a + 2) % 3] : axes_ == 2 ? extent[1 - a] : 1.0);
            }
            if (fits && area < best) {
                best = area;
                dims = p;
            }
        }
    return dims;
}

int DistributedSimulation::ownerOf(const Vec3& x) const {
    int r = 0;
    for (int a = 2; a >= 0; --a) {
        const std::vector<double>& c = cuts_[static_cast<std::size_t>(a)];
        double y = x[a];
        if (periodic_[static_cast<std::size_t>(a)]) {
            const double L = c.back() - c.front();
            y -= L * std::floor((y - c.front()) / L);
        }
        const auto cell = static_cast<int>(std::upper_bound(c.begin() + 1, c.end() - 1, y) - (c.begin() + 1));
        r = r * dims_[static_cast<std::size_t>(a)] + cell;
    }
    return r;
}

bool DistributedSimulation::nearBrick(const Vec3& x, int r) const {
    // Within the halo of brick r along every axis (on a periodic axis, on
    // the circle).
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        const int cell = r % dims_[k];
        r /= dims_[k];
        if (dims_[k] == 1) continue;
        const double lo = cuts_[k][static_cast<std::size_t>(cell)], hi = cuts_[k][static_cast<std::size_t>(cell) + 1];
        if (!periodic_[k]) {
            if (!(x[a] > lo - halo_ && x[a] < hi + halo_)) return false;
            continue;
        }
        const double L = cuts_[k].back() - cuts_[k].front();
        double d = x[a] - 0.5 * (lo + hi);
        d -= L * std::round(d / L);
        if (!(std::abs(d) < 0.5 * (hi - lo) + halo_)) return false;
    }
    return true;
}

std::string DistributedSimulation::grid() const {
    return std::to_string(dims_[0]) + "x" + std::to_string(dims_[1]) + "x" + std::to_string(dims_[2]);
}

DistributedSimulation::~DistributedSimulation() = default;

void DistributedSimulation::assemble(std::vector<DistributedGrain> grains, std::vector<int> owner, ContactStore store) {
    // Local bodies in global id order, then the walls: the key order of the
    // local contacts is the global one.
    std::vector<std::size_t> order(grains.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return grains[a].gid < grains[b].gid; });
    const World& from = sim_ ? sim_->world() : template_.world;
    World w;
    w.dimension = from.dimension;
    w.gravity = from.gravity;
    w.muGrain = from.muGrain;
    w.periodic = from.periodic;
    w.copyCellAndClock(from);
    const std::size_t n = grains.size();
    w.reserve(n + from.numWalls());
    bool anySchedule = false;
    for (const DistributedGrain& g : grains) anySchedule = anySchedule || g.scheduled;
    gid_.assign(n, 0);
    owned_.assign(n, 0);
    owner_.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
        const DistributedGrain& g = grains[order[k]];
        w.addGrain(g.x, g.radius, g.mass, g.inertia);
        w.v[k] = g.v;
        w.w[k] = g.w;
        w.q[k] = g.q;
        w.invMass[k] = g.invMass;
        w.invInertia[k] = g.invInertia;
        w.prescribed[k] = g.prescribed;
        if (anySchedule) w.forceSchedule(static_cast<BodyId>(k)) = g.force;
        gid_[k] = g.gid;
        owner_[k] = owner[order[k]];
        owned_[k] = owner_[k] == rank_ ? 1 : 0;
        // Driven grains (the walls follow the n grains).
        if (g.driven != kNotDriven)
            w.driven.push_back({static_cast<BodyId>(k),
                                g.driven < 0 ? -1 : static_cast<BodyId>(n + static_cast<std::size_t>(g.driven))});
    }
    // An index over gid_ for localOf: the first local grain of each block of
    // 64 global ids from the first.
    idBlock_.assign(n == 0 ? 1 : static_cast<std::size_t>((gid_.back() - gid_.front()) >> 6) + 2, 0);
    for (std::size_t b = 0, k = 0; b < idBlock_.size(); ++b) {
        while (k < n && gid_[k] < gid_.front() + (static_cast<std::uint64_t>(b) << 6)) ++k;
        idBlock_[b] = static_cast<std::uint32_t>(k);
    }
    for (std::size_t k = 0; k < from.numWalls(); ++k) {
        const std::size_t i = from.numGrains + k;
        std::array<bool, 3> freeAxes{};
        for (int a = 0; a < 3; ++a) freeAxes[static_cast<std::size_t>(a)] = from.invMass[i][a] > 0.0;
        const BodyId b = w.addWall(from.wallName[k], from.wallShape[k], from.x[i], from.wallMobile[k], from.mass[i],
                                   freeAxes);
        const auto j = static_cast<std::size_t>(b);
        w.v[j] = from.v[i];
        w.w[j] = from.w[i];
        w.q[j] = from.q[i];
        w.invMass[j] = from.invMass[i];
        w.invInertia[j] = from.invInertia[i];
        w.prescribed[j] = from.prescribed[i];
        if (i < from.force.size()) w.forceSchedule(b) = from.force[i];
    }
    // The contacts of the owned grains, in local keys and key order (a
    // contact two ranks sent is the same record twice: one is kept).
    std::vector<std::pair<ContactKey, std::size_t>> keyed;
    keyed.reserve(store.records.size());
    for (std::size_t r = 0; r < store.records.size(); ++r) {
        const ContactKey key = store.records[r].key;
        const auto a = localOf(static_cast<std::uint64_t>(keyBodyA(key)), w);
        const auto b = localOf(static_cast<std::uint64_t>(keyBodyB(key)), w);
        if (a < 0 || b < 0) continue;  // not a contact of an owned grain here
        if (!owned_[static_cast<std::size_t>(a)] && (w.isWall(b) || !owned_[static_cast<std::size_t>(b)])) continue;
        keyed.emplace_back(makeContactKey(a, b, static_cast<std::uint32_t>(key & 0xFu)), r);
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& p, const auto& q) { return p.first < q.first; });
    keyed.erase(std::unique(keyed.begin(), keyed.end(), [](const auto& p, const auto& q) { return p.first == q.first; }),
                keyed.end());
    ContactStore local;
    local.slots.stride = store.slots.stride;
    for (const auto& [key, r] : keyed) {
        ContactMemory m = store.records[r];
        m.key = key;
        local.records.push_back(m);
        if (store.slots.stride > 0)
            local.slots.values.insert(local.slots.values.end(), store.slots.at(r), store.slots.at(r) + store.slots.stride);
    }

    Scene s = sceneWithoutWorld(template_);
    for (WallServo& servo : s.servos)  // the part's walls follow its n grains
        servo.wall = static_cast<BodyId>(n + (static_cast<std::size_t>(servo.wall) - globalGrains_));
    s.world = std::move(w);
    sim_.emplace(std::move(s));
    if (local.slots.stride == 0) local.slots.stride = sim_->contactStore().slots.stride;
    sim_->restoreContacts(local);
    if (scheme_) {
        // The MD scheme's state: the carried part, each owned grain's
        // entries from its message, zeros for the ghosts (whose stages come
        // from their owners), the walls' as every rank has them.
        const std::size_t per = scheme_->perBody();
        sim_->md().adoptScheme(*scheme_, sim_->world().numBodies(), [&](std::size_t i, MdSolver::Vec6* e) {
            if (i >= n) std::copy_n(wallScheme_.data() + (i - n) * per, per, e);
            else if (grains[order[i]].scheme.size() == per) std::copy_n(grains[order[i]].scheme.data(), per, e);
            else std::fill_n(e, per, MdSolver::Vec6::Zero());
        });
        // Its test for contacts that open or close: each contact counted on
        // the rank owning its first grain, by its key in the whole world.
        sim_->md().setContactChanges(
            {[this](const Contact& k) { return owned_[static_cast<std::size_t>(k.a)] != 0; },
             [this](const Contact& k) {
                 return makeContactKey(static_cast<BodyId>(globalOf(k.a)), static_cast<BodyId>(globalOf(k.b)),
                                       static_cast<std::uint32_t>(k.key & 0xFu));
             },
             [](std::uint64_t& signature, bool& kink) {
                 std::vector<std::uint64_t> v{signature, kink ? 1u : 0u};
                 comm::sumOverRanks(v);
                 signature = v[0];
                 kink = v[1] > 0;
             }});
        // Derivatives and fixed points: the ghosts' entries of a field from
        // their owners, the convergence tests over every rank's bodies.
        sim_->md().setFieldRanks({[this](std::vector<MdSolver::Vec6>& f) { syncGhostField(f); },
                                  [this](std::size_t i) { return i >= owned_.size() || owned_[i] != 0; },
                                  [](double& a, double& b) {
                                      std::vector<double> v{a, b};
                                      comm::maxOverRanks(v);
                                      a = v[0];
                                      b = v[1];
                                  }});
    }
    // Schemes other than cd evaluate forces at stages inside the step: the
    // ghosts take each stage's state from their owners first.
    bool mobileWalls = false;
    for (std::size_t k = 0; k < sim_->world().numWalls(); ++k) mobileWalls = mobileWalls || sim_->world().wallMobile[k];
    // Wall servos read the loads summed over the ranks (those and the
    // mobile walls' are the ones summed), the cell's servo its stress.
    summedWalls_.assign(sim_->world().numWalls(), 0);
    for (std::size_t k = 0; k < summedWalls_.size(); ++k) summedWalls_[k] = sim_->world().wallMobile[k] ? 1 : 0;
    for (const WallServo& servo : sim_->scene().servos)
        summedWalls_[static_cast<std::size_t>(servo.wall) - sim_->world().numGrains] = 1;
    if (!template_.servos.empty()) sim_->setWallLoads([this] { return wallLoads(false); });
    if (template_.cellServo.any()) sim_->setCellStress([this] { return cellStress(); });
    if (cdRanks_) {
        // CD: the ranks share each step's sweeps (mobile walls included).
        sim_->cd().setSchedule(cdRanks_.get());
    } else {
        if (mobileWalls && template_.md.integrator == Integrator::CD) sim_->setAfterSolve([this] { sumWallForces(); });
        // Substeps: the ghosts take their owners' state before each.
        if (template_.md.substeps > 1) sim_->setBetweenSubsteps([this] { exchangeGhosts(); });
        if (template_.md.integrator != Integrator::CD) {
            sim_->md().setStageHook([this](World&, std::vector<MdSolver::Vec6>& X) { exchangeGhosts(&X); });
            // Mobile walls: each evaluation's force on them summed over the ranks.
            if (mobileWalls)
                sim_->md().setForceHook([this](const std::vector<Contact>& contacts, const std::vector<Vec3>& forces,
                                               std::vector<Vec3>& bodyForce) {
                    const std::vector<Vec3> sum = sumWallLoads(
                        [&](const std::function<void(BodyId, BodyId, const Vec3&)>& add) {
                            for (std::size_t c = 0; c < contacts.size(); ++c) add(contacts[c].a, contacts[c].b, forces[c]);
                        },
                        [&](BodyId grain) { return bodyForce[static_cast<std::size_t>(grain)]; });
                    const World& w = sim_->world();
                    for (std::size_t k = 0; k < w.numWalls(); ++k)
                        if (w.wallMobile[k]) bodyForce[w.numGrains + k] = sum[k];
                });
        }
    }

    recvAt_.clear();
    ghostsKnown_ = {false, false, false};
    // Where each owned grain was at this rebuild, and who needs which as a ghost.
    const World& now = sim_->world();
    builtAt_.assign(n, Vec3::Zero());
    for (std::size_t k = 0; k < n; ++k) builtAt_[k] = now.x[k];
    builtLength_ = now.boxMax - now.boxMin;
    sendTo_.assign(static_cast<std::size_t>(ranks_), {});
    for (std::size_t k = 0; k < n; ++k) {
        if (!owned_[k]) continue;
        for (int r = 0; r < ranks_; ++r)
            if (r != rank_ && nearBrick(now.x[k], r)) sendTo_[static_cast<std::size_t>(r)].push_back(k);
    }
    ownedCount_ = static_cast<std::size_t>(std::count(owned_.begin(), owned_.end(), 1));
    ghostCount_ = n - ownedCount_;
}

std::ptrdiff_t DistributedSimulation::localOf(std::uint64_t id, const World& w) const {
    if (id >= globalGrains_) {  // a wall: global ids of walls follow the grains
        const std::uint64_t k = id - globalGrains_;
        return k < w.numWalls() ? static_cast<std::ptrdiff_t>(w.numGrains + k) : -1;
    }
    if (gid_.empty() || id < gid_.front() || id > gid_.back()) return -1;
    const auto b = static_cast<std::size_t>((id - gid_.front()) >> 6);
    const auto end = gid_.begin() + idBlock_[b + 1];
    const auto it = std::lower_bound(gid_.begin() + idBlock_[b], end, id);
    return it != end && *it == id ? it - gid_.begin() : -1;
}

std::uint64_t DistributedSimulation::globalOf(BodyId b) const {
    const auto i = static_cast<std::size_t>(b);
    return i < gid_.size() ? gid_[i] : globalGrains_ + (i - gid_.size());
}

ContactStore DistributedSimulation::globalStore(std::vector<std::array<BodyId, 2>>* ends) const {
    ContactStore local = sim_->contactStore(), out;
    out.slots.stride = local.slots.stride;
    for (std::size_t r = 0; r < local.records.size(); ++r) {
        ContactMemory m = local.records[r];
        const BodyId a = keyBodyA(m.key), b = keyBodyB(m.key);
        // MD computes a contact on both its grains' ranks, CD on its first
        // grain's only: only that rank's record holds its reaction.
        const bool mine = owned_[static_cast<std::size_t>(a)] ||
                          (!cdRanks_ && !sim_->world().isWall(b) && owned_[static_cast<std::size_t>(b)]);
        if (!mine) continue;
        m.key = makeContactKey(static_cast<BodyId>(globalOf(a)), static_cast<BodyId>(globalOf(b)),
                               static_cast<std::uint32_t>(m.key & 0xFu));
        out.records.push_back(m);
        if (ends) ends->push_back({a, b});
        if (local.slots.stride > 0)
            out.slots.values.insert(out.slots.values.end(), local.slots.at(r), local.slots.at(r) + local.slots.stride);
    }
    return out;
}

void DistributedSimulation::fitCutsToCell() {
    // A cell that changes its size: the cuts of a periodic axis keep their
    // place in the cell (the grains move with its flow).
    const World& w = sim_->world();
    for (int a = 0; a < 3; ++a) {
        std::vector<double>& c = cuts_[static_cast<std::size_t>(a)];
        if (!periodic_[static_cast<std::size_t>(a)] || (c.front() == w.boxMin[a] && c.back() == w.boxMax[a])) continue;
        const double scale = (w.boxMax[a] - w.boxMin[a]) / (c.back() - c.front()), from = c.front();
        for (double& x : c) x = w.boxMin[a] + (x - from) * scale;
        c.front() = w.boxMin[a];
        c.back() = w.boxMax[a];
    }
}

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
    // The MD scheme's state (multi-step history) goes with the grains.
    if (scheme_) {
        const MdSolver& md = sim_->md();
        scheme_ = md.schemeCarry();
        const std::size_t per = scheme_->perBody();
        wallScheme_.assign(w.numWalls() * per, MdSolver::Vec6::Zero());
        for (std::size_t k = 0; k < w.numWalls() && per > 0; ++k) md.bodyScheme(w.numGrains + k, wallScheme_.data() + k * per);
    }
    auto grainHere = [&](std::size_t i) {
        DistributedGrain g = grainOf(w, i, gid_[i], driven);
        if (scheme_ && scheme_->perBody() > 0) {
            g.scheme.resize(scheme_->perBody());
            sim_->md().bodyScheme(i, g.scheme.data());
        }
        return g;
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
        putGrain(b, grainHere(i));
        b.put(static_cast<std::uint64_t>(first[i + 1] - first[i]));
        for (std::size_t k = first[i]; k < first[i + 1]; ++k) {
            const std::size_t r = records[k];
            b.put(store.records[r]);
            for (std::size_t s = 0; s < store.slots.stride; ++s) b.put(store.slots.at(r)[s]);
        }
    }
    const std::vector<std::string> in = send(out);
    for (const std::string& b : in) {
        ByteReader u(b, kMessage);
        while (u.left() > 0) {
            grains.push_back(getGrain(u));
            owner.push_back(rank_);
            const auto m = u.get<std::uint64_t>("value");
            for (std::uint64_t c = 0; c < m; ++c) {
                kept.records.push_back(u.get<ContactMemory>("value"));
                for (std::size_t s = 0; s < kept.slots.stride; ++s) kept.slots.values.push_back(u.get<double>("value"));
            }
        }
    }
    // Ghosts: each rank sends its new owned grains to the ranks near them.
    std::vector<ByteWriter> ghostsOut(static_cast<std::size_t>(ranks_));
    for (const DistributedGrain& g : grains)
        for (int r = 0; r < ranks_; ++r)
            if (r != rank_ && nearBrick(g.x, r)) {
                DistributedGrain ghost = g;  // a ghost's scheme entries are its owner's business
                ghost.scheme.clear();
                putGrain(ghostsOut[static_cast<std::size_t>(r)], ghost);
            }
    const std::vector<std::string> ghostsIn = send(ghostsOut);
    for (std::size_t r = 0; r < ghostsIn.size(); ++r) {
        ByteReader u(ghostsIn[r], kMessage);
        while (u.left() > 0) {
            grains.push_back(getGrain(u));
            owner.push_back(static_cast<int>(r));
        }
    }
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

const comm::Mailbox& DistributedSimulation::post(const std::vector<ByteWriter>& out, comm::Mailbox& box,
                                                  bool sameSizes) {
    std::vector<std::string_view> parts(out.size());
    for (std::size_t r = 0; r < out.size(); ++r) {
        parts[r] = out[r].bytes();
        if (static_cast<int>(r) != rank_ && !parts[r].empty()) {
            ++traffic_.messages;
            traffic_.bytes += parts[r].size();
        }
    }
    comm::exchange(parts, box, sameSizes);
    return box;
}

std::vector<std::string> DistributedSimulation::send(const std::vector<ByteWriter>& out) {
    const comm::Mailbox& box = post(out, mailbox_, false);
    std::vector<std::string> in;
    for (std::size_t r = 0; r < box.ranks(); ++r) in.emplace_back(box.from(r));
    return in;
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
    const World& w = sim_->world();
    const std::vector<ByteWriter>& out = ghostParts([&](ByteWriter& b, std::size_t k) {
        putMotion(b, w, k);
        if (X) b.put((*X)[k]);
    });
    World& mine = sim_->world();
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

std::vector<Vec3> DistributedSimulation::wallLoads(bool afterSolve) {
    const std::vector<Vec3> sums = afterSolve || !sim_->world().anyGlued() ? std::vector<Vec3>{} : sim_->contactForces();
    return sumWallLoads(
        [&](const std::function<void(BodyId, BodyId, const Vec3&)>& add) {
            if (const MdPairEngine* engine = sim_->pairEngine()) engine->forEachTouchingPair(add);  // no narrow phase again
            else
                for (const Contact& c : sim_->contacts()) add(c.a, c.b, c.history.reaction);
        },
        [&](BodyId grain) { return afterSolve ? sim_->contactForce(grain) : sums[static_cast<std::size_t>(grain)]; });
}

std::vector<Vec3> DistributedSimulation::sumWallLoads(
    const std::function<void(const std::function<void(BodyId, BodyId, const Vec3&)>&)>& contacts,
    const std::function<Vec3(BodyId)>& gluedForce) {
    // Each wall's load with the serial bits: its contacts with every rank's
    // owned grains, summed from zero in key order as the serial per-body sum
    // adds them (pairs without force add nothing to a sum that starts at
    // +0), then the forces on the grains glued to it, in grain order
    // (World::addGluedForces). An owned grain's own sum has the serial bits.
    const World& w = sim_->world();
    ByteWriter mine;
    auto add = [&](BodyId a, BodyId b, const Vec3& force) {
        if (!w.isWall(b) || !owned_[static_cast<std::size_t>(a)] ||
            !summedWalls_[static_cast<std::size_t>(b) - w.numGrains])
            return;
        mine.put(std::uint8_t{0});
        mine.put(makeContactKey(static_cast<BodyId>(globalOf(a)), static_cast<BodyId>(globalOf(b))));
        mine.put(force);
    };
    contacts(add);
    if (w.anyGlued()) {
        for (const World::DrivenGrain& d : w.driven) {
            const auto i = static_cast<std::size_t>(d.grain);
            if (d.wall < 0 || !owned_[i] || !summedWalls_[static_cast<std::size_t>(d.wall) - w.numGrains]) continue;
            mine.put(std::uint8_t{1});
            mine.put(gid_[i]);
            mine.put(static_cast<std::uint64_t>(static_cast<std::size_t>(d.wall) - w.numGrains));
            mine.put(gluedForce(d.grain));
        }
    }
    const std::string all = comm::gatherToAll(mine.bytes());
    std::vector<std::pair<std::uint64_t, Vec3>> terms;
    std::vector<std::array<std::uint64_t, 2>> glued;  // grain, wall
    std::vector<Vec3> gluedSums;
    ByteReader u(all, kMessage);
    while (u.left() > 0) {
        if (u.get<std::uint8_t>("value") == 0) {
            const auto key = u.get<ContactKey>("value");
            terms.emplace_back(key, u.get<Vec3>("value"));
        } else {
            const auto grain = u.get<std::uint64_t>("value");
            glued.push_back({grain, u.get<std::uint64_t>("value")});
            gluedSums.push_back(u.get<Vec3>("value"));
        }
    }
    std::sort(terms.begin(), terms.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
    std::vector<Vec3> sum(w.numWalls(), Vec3::Zero());
    for (const auto& [key, f] : terms) sum[static_cast<std::size_t>(keyBodyB(key)) - globalGrains_] += f;
    std::vector<std::size_t> order(glued.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return glued[a][0] < glued[b][0]; });
    for (const std::size_t k : order) sum[glued[k][1]] += gluedSums[k];
    return sum;
}

Mat3 DistributedSimulation::cellStress() {
    // Simulation::cellStress over the ranks with the serial bits: every
    // grain–grain contact's term (from the rank owning its first grain) and
    // every grain's mass and velocity about the mean flow go to every rank,
    // which adds them in key and grain order, as the serial loops do. One
    // gather of O(grains) per step: a cell servo's price on ranks.
    const World& w = sim_->world();
    ByteWriter contacts, grains;
    auto add = [&](BodyId a, BodyId b, const Vec3& force) {
        const auto i = static_cast<std::size_t>(a);
        if (w.isWall(b) || !owned_[i] || force == Vec3::Zero()) return;
        contacts.put(makeContactKey(static_cast<BodyId>(globalOf(a)), static_cast<BodyId>(globalOf(b))));
        contacts.put(force);
        contacts.put(w.minimumImage(w.x[static_cast<std::size_t>(b)] - w.x[i]));
    };
    if (const MdPairEngine* engine = sim_->pairEngine()) engine->forEachTouchingPair(add);
    else
        for (const Contact& c : sim_->contacts()) add(c.a, c.b, c.history.reaction);
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!owned_[i]) continue;
        grains.put(gid_[i]);
        grains.put(w.mass[i]);
        grains.put(Vec3(w.v[i] - w.meanFlow(w.x[i])));
    }
    struct Term {
        ContactKey key;
        Vec3 f, branch;
    };
    std::vector<Term> terms;
    const std::string allContacts = comm::gatherToAll(contacts.bytes()), allGrains = comm::gatherToAll(grains.bytes());
    ByteReader u(allContacts, kMessage);
    while (u.left() > 0) {
        Term t;
        t.key = u.get<ContactKey>("value");
        t.f = u.get<Vec3>("value");
        t.branch = u.get<Vec3>("value");
        terms.push_back(t);
    }
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

CdStepStats DistributedSimulation::step() {
    // A rebuild once any owned grain has moved half the skin since the last.
    using Clock = std::chrono::steady_clock;
    const auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    const auto t0 = Clock::now();
    const World& w = sim_->world();
    double moved = 0.0;
    for (std::size_t k = 0; k < w.numGrains; ++k)
        if (owned_[k]) moved = std::max(moved, w.minimumImage(w.x[k] - builtAt_[k]).norm());
    const auto t1 = Clock::now();
    // One allreduce per step: the rebuild test and the caller's flag.
    std::vector<double> most{moved, flag_};
    comm::maxOverRanks(most);
    flagMax_ = most[1];
    flag_ = 0.0;
    // A cell that changes its size moves the images too: a grain and
    // another's image come closer by up to the lengths' change (the
    // Lees–Edwards offset moves images within each rank's x-y plane only).
    double cellChange = 0.0;
    for (int a = 0; a < 3; ++a)
        if (periodic_[static_cast<std::size_t>(a)]) cellChange += std::abs(w.boxMax[a] - w.boxMin[a] - builtLength_[a]);
    const bool again = !(most[0] <= 0.5 * (skin_ - cellChange));
    const auto t2 = Clock::now();
    if (again) rebuild();
    else exchangeGhosts();
    const auto t3 = Clock::now();
    const CdStepStats stats = sim_->advance();
    sweeps_ += stats.iterations;
    const auto t4 = Clock::now();
    times_.wait += seconds(t1, t2);
    (again ? times_.rebuild : times_.ghosts) += seconds(t2, t3);
    times_.solve += seconds(t0, t1) + seconds(t3, t4);
    return stats;
}

std::string DistributedSimulation::travelFailure(double dt, double maxTravel) const {
    // The serial guard's test and report: the first grain, by id, that
    // moves more than maxTravel radii in a step (each rank its own first).
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

bool DistributedSimulation::gatherScheme(MdSolver::SchemeCarry& carry, std::vector<MdSolver::Vec6>& entries) {
    if (!scheme_) return false;  // the same on every rank
    const MdSolver& md = sim_->md();
    carry = md.schemeCarry();
    const std::size_t per = carry.perBody();
    const World& w = sim_->world();
    ByteWriter mine;
    std::vector<MdSolver::Vec6> e(per);
    for (std::size_t k = 0; k < w.numGrains && per > 0; ++k) {
        if (!owned_[k]) continue;
        mine.put(gid_[k]);
        md.bodyScheme(k, e.data());
        for (const MdSolver::Vec6& v : e) mine.put(v);
    }
    const std::vector<std::string> parts = comm::gatherToRoot(mine.bytes());
    entries.clear();
    if (rank_ != 0) return true;
    entries.assign((globalGrains_ + w.numWalls()) * per, MdSolver::Vec6::Zero());
    for (const std::string& b : parts) {
        ByteReader u(b, kMessage);
        while (u.left() > 0) {
            const auto i = static_cast<std::size_t>(u.get<std::uint64_t>("value"));
            for (std::size_t j = 0; j < per; ++j) entries[i * per + j] = u.get<MdSolver::Vec6>("value");
        }
    }
    for (std::size_t k = 0; k < w.numWalls() && per > 0; ++k)
        md.bodyScheme(w.numGrains + k, entries.data() + (globalGrains_ + k) * per);
    return true;
}

const World& DistributedSimulation::gatherWorld() {
    const World& w = sim_->world();
    ByteWriter mine;
    for (std::size_t k = 0; k < w.numGrains; ++k) {
        if (!owned_[k]) continue;
        mine.put(gid_[k]);
        putMotion(mine, w, k);
    }
    const std::vector<std::string> parts = comm::gatherToRoot(mine.bytes());
    if (rank_ == 0) {
        for (const std::string& b : parts) {
            ByteReader u(b, kMessage);
            while (u.left() > 0) {
                const auto i = static_cast<std::size_t>(u.get<std::uint64_t>("value"));
                whole_.x[i] = u.get<Vec3>("value");
                whole_.v[i] = u.get<Vec3>("value");
                whole_.w[i] = u.get<Vec3>("value");
                whole_.q[i] = u.get<Quat>("value");
            }
        }
        for (std::size_t k = 0; k < w.numWalls(); ++k) {
            const std::size_t i = whole_.numGrains + k, j = w.numGrains + k;
            whole_.x[i] = w.x[j];
            whole_.v[i] = w.v[j];
            whole_.w[i] = w.w[j];
            whole_.q[i] = w.q[j];
        }
        whole_.copyCellAndClock(w);
    }
    return whole_;
}

std::vector<Contact> DistributedSimulation::gatherContacts() {
    // The ghosts stepped with part of their forces: their owners' state
    // first, so that a contact with a ghost has the serial geometry. Then
    // each contact once: from the rank that owns its first body.
    exchangeGhosts();
    const World& w = sim_->world();
    ByteWriter mine;
    for (Contact c : sim_->contacts()) {
        if (!owned_[static_cast<std::size_t>(c.a)]) continue;
        c.a = static_cast<BodyId>(globalOf(c.a));
        c.b = static_cast<BodyId>(globalOf(c.b));
        c.key = makeContactKey(c.a, c.b, static_cast<std::uint32_t>(c.key & 0xFu));
        mine.put(c);
    }
    (void)w;
    std::vector<Contact> all;
    for (const std::string& b : comm::gatherToRoot(mine.bytes())) {
        ByteReader u(b, kMessage);
        while (u.left() > 0) all.push_back(u.get<Contact>("value"));
    }
    std::sort(all.begin(), all.end(), [](const Contact& p, const Contact& q) { return p.key < q.key; });
    return all;
}

std::optional<MdPairEngine::Diagnostics> DistributedSimulation::gatherDiagnostics() {
    const MdPairEngine* engine = sim_->pairEngine();
    if (!engine) return std::nullopt;  // the same on every rank
    ByteWriter mine;
    for (PairDiagnostic d : engine->pairDiagnostics()) {
        const BodyId a = keyBodyA(d.key), b = keyBodyB(d.key);
        if (!owned_[static_cast<std::size_t>(a)]) continue;
        d.key = makeContactKey(static_cast<BodyId>(globalOf(a)), static_cast<BodyId>(globalOf(b)),
                               static_cast<std::uint32_t>(d.key & 0xFu));
        mine.put(d);
    }
    std::vector<PairDiagnostic> all;
    for (const std::string& b : comm::gatherToRoot(mine.bytes())) {
        ByteReader u(b, kMessage);
        while (u.left() > 0) all.push_back(u.get<PairDiagnostic>("value"));
    }
    if (rank_ != 0) return std::nullopt;
    std::sort(all.begin(), all.end(), [](const PairDiagnostic& p, const PairDiagnostic& q) { return p.key < q.key; });
    return sumPairDiagnostics(all);
}

ContactStore DistributedSimulation::gatherStore() {
    // Each record once: from the rank that owns its first body (a grain).
    const ContactStore mine = globalStore();
    ByteWriter out;
    for (std::size_t r = 0; r < mine.records.size(); ++r) {
        const std::ptrdiff_t a = localOf(static_cast<std::uint64_t>(keyBodyA(mine.records[r].key)), sim_->world());
        if (a < 0 || !owned_[static_cast<std::size_t>(a)]) continue;
        out.put(mine.records[r]);
        for (std::size_t k = 0; k < mine.slots.stride; ++k) out.put(mine.slots.at(r)[k]);
    }
    ContactStore all;
    all.slots.stride = mine.slots.stride;
    std::vector<std::pair<ContactKey, std::size_t>> order;
    std::vector<ContactMemory> records;
    std::vector<double> slots;
    for (const std::string& b : comm::gatherToRoot(out.bytes())) {
        ByteReader u(b, kMessage);
        while (u.left() > 0) {
            records.push_back(u.get<ContactMemory>("value"));
            for (std::size_t k = 0; k < all.slots.stride; ++k) slots.push_back(u.get<double>("value"));
            order.emplace_back(records.back().key, records.size() - 1);
        }
    }
    std::sort(order.begin(), order.end());
    for (const auto& [key, r] : order) {
        all.records.push_back(records[r]);
        all.slots.values.insert(all.slots.values.end(), slots.begin() + static_cast<std::ptrdiff_t>(r * all.slots.stride),
                                slots.begin() + static_cast<std::ptrdiff_t>((r + 1) * all.slots.stride));
    }
    return all;
}

void DistributedSimulation::writeVtkPiece(const std::filesystem::path& dir) {
    // The ghosts at their owners' state (a contact with one has the serial
    // geometry); this rank's piece: its owned grains, the contacts whose
    // first grain it owns, and each owned grain's stress from all of its
    // contacts, those with another rank's row taking that row's force.
    exchangeGhosts();
    const World& w = sim_->world();
    std::vector<Contact> contacts = sim_->contacts();
    std::vector<ContactKey> keys(contacts.size());
    std::vector<Contact> rows;
    std::vector<ByteWriter> out(static_cast<std::size_t>(ranks_));
    for (std::size_t c = 0; c < contacts.size(); ++c) {
        const Contact& k = contacts[c];
        keys[c] = makeContactKey(static_cast<BodyId>(globalOf(k.a)), static_cast<BodyId>(globalOf(k.b)),
                                 static_cast<std::uint32_t>(k.key & 0xFu));
        const auto a = static_cast<std::size_t>(k.a), b = static_cast<std::size_t>(k.b);
        if (!owned_[a]) continue;
        rows.push_back(k);
        if (!w.isWall(k.b) && !owned_[b]) {
            ByteWriter& to = out[static_cast<std::size_t>(owner_[b])];
            to.put(keys[c]);
            to.put(k.history.reaction);
        }
    }
    // Local keys in order are global keys in order (local bodies follow the global ids).
    for (const std::string& part : send(out)) {
        ByteReader u(part, kMessage);
        while (u.left() > 0) {
            const auto key = u.get<ContactKey>("key");
            const auto it = std::lower_bound(keys.begin(), keys.end(), key);
            if (it == keys.end() || *it != key)
                throw std::logic_error("distributed run: a contact force for a pair this rank did not detect");
            contacts[static_cast<std::size_t>(it - keys.begin())].history.reaction = u.get<Vec3>("reaction");
        }
    }
    std::vector<std::size_t> owned;
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (owned_[i]) owned.push_back(i);
    std::vector<std::uint64_t> ids(w.numBodies());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = globalOf(static_cast<BodyId>(i));
    moreau::writeVtkPiece(dir, w, owned, ids, grainStress(w, contacts), rows, w.step, rank_);
}

DistributedTraffic DistributedSimulation::traffic() const {
    DistributedTraffic t = traffic_;
    t.messages = comm::sumOverRanks(t.messages);
    t.bytes = comm::sumOverRanks(t.bytes);
    t.migrations = comm::sumOverRanks(t.migrations);
    t.ghosts = comm::sumOverRanks(static_cast<std::uint64_t>(ghostCount_));
    if (cdRanks_) {
        const DistributedTraffic cd = cdRanks_->traffic();
        t.syncs = comm::sumOverRanks(cd.syncs);
        t.passes = cd.passes;
        t.rounds = cd.rounds;
    }
    return t;
}

}  // namespace moreau
