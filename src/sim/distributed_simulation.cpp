#include "moreau/sim/distributed_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "distributed_grain.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/core/profile.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/sim/distributed_cd.hpp"

namespace moreau {

using namespace distributed;

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
    if (scheme) takeScheme(*scheme, global);
    for (std::size_t i = 0; i < global.numGrains; ++i) {
        const int r = ownerOf(global.x[i]);
        if (r != rank_ && !nearBrick(global.x[i], rank_)) continue;
        mine.push_back(grainOf(global, i, i, driven, r == rank_ ? scheme : nullptr, scheme_ ? scheme_->perBody() : 0));
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

void DistributedSimulation::takeScheme(const MdSolver& md, const World& w) {
    scheme_ = md.schemeCarry();
    const std::size_t per = scheme_->perBody();
    wallScheme_.assign(w.numWalls() * per, MdSolver::Vec6::Zero());
    for (std::size_t k = 0; k < w.numWalls() && per > 0; ++k) md.bodyScheme(w.numGrains + k, wallScheme_.data() + k * per);
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
    // Clumps: every part holds the scene's shapes, and World::shape and size
    // for each of its bodies (set below, after the walls), whether or not a
    // clump is among them: the part takes the serial world's code paths.
    const bool clumps = !from.clumpShapes.empty(), polygons = !from.polygonShapes.empty();
    w.clumpShapes = from.clumpShapes;
    w.polygonShapes = from.polygonShapes;
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
    if (clumps || polygons) {  // the walls' shape 0 and size 0
        if (clumps) w.shape.assign(w.numBodies(), 0);
        if (polygons) w.polygon.assign(w.numBodies(), 0);
        w.size.assign(w.numBodies(), 0.0);
        for (std::size_t k = 0; k < n; ++k) {
            if (clumps) w.shape[k] = grains[order[k]].shape;
            if (polygons) w.polygon[k] = grains[order[k]].polygon;
            w.size[k] = grains[order[k]].size;
        }
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
        keyed.emplace_back(makeContactKey(a, b, keyFeature(key)), r);
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
    const StepProfile seconds = sim_ ? sim_->profile() : StepProfile{};
    sim_.emplace(std::move(s));
    sim_->continueProfile(seconds);
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
             [this](const Contact& k) { return globalKey(k.key); },
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
    const std::vector<bool>& mobile = sim_->world().wallMobile;
    const bool mobileWalls = std::find(mobile.begin(), mobile.end(), true) != mobile.end();
    // Wall servos read the loads summed over the ranks (those and the
    // mobile walls' are the ones summed), the cell's servo its stress.
    summedWalls_.assign(mobile.begin(), mobile.end());
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
        if (template_.md.substeps > 1)
            sim_->setBetweenSubsteps([this] {
                auto clock = std::chrono::steady_clock::now();
                exchangeGhosts();
                lap(clock, times_.ghosts);
            });
        if (template_.md.integrator != Integrator::CD) {
            sim_->md().setStageHook([this](World&, std::vector<MdSolver::Vec6>& X) { exchangeGhosts(&X); });
            // Mobile walls: each evaluation's force on them summed over the ranks.
            if (mobileWalls)
                sim_->md().setForceHook([this](const std::vector<Contact>& contacts, const std::vector<Vec3>& forces,
                                               std::vector<Vec3>& bodyForce) {
                    const std::vector<Vec3> sum = sumWallLoads(
                        [&](const std::function<void(ContactKey, const Vec3&)>& add) {
                            for (std::size_t c = 0; c < contacts.size(); ++c) add(contacts[c].key, forces[c]);
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

ContactKey DistributedSimulation::globalKey(ContactKey local) const {
    return makeContactKey(static_cast<BodyId>(globalOf(keyBodyA(local))), static_cast<BodyId>(globalOf(keyBodyB(local))),
                          keyFeature(local));
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
        m.key = globalKey(m.key);
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

CdStepStats DistributedSimulation::step() {
    // A rebuild once any owned grain has moved half the skin since the last.
    auto clock = std::chrono::steady_clock::now();
    const World& w = sim_->world();
    double moved = 0.0;
    for (std::size_t k = 0; k < w.numGrains; ++k)
        if (owned_[k]) moved = std::max(moved, w.minimumImage(w.x[k] - builtAt_[k]).norm());
    lap(clock, times_.rebuild);
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
    lap(clock, times_.wait);
    if (again) rebuild();
    else exchangeGhosts();
    lap(clock, again ? times_.rebuild : times_.ghosts);
    const double ghosts = times_.ghosts;  // and those between substeps (assemble)
    const CdStepStats stats = sim_->advance();
    sweeps_ += stats.iterations;
    lap(clock, times_.solve);
    times_.solve -= times_.ghosts - ghosts;
    return stats;
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
