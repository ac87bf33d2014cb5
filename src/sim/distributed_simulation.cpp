#include "moreau/sim/distributed_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "distributed_grain.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/core/order_statistics.hpp"
#include "moreau/core/profile.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/sim/distributed_cd.hpp"

namespace moreau {

using namespace distributed;

// --- the decomposition ---------------------------------------------------------------

DistributedSimulation::DistributedSimulation(Scene scene, const ContactStore* contacts, const MdSolver* scheme)
    : ranks_(comm::ranks()), rank_(comm::rank()) {
    const World& global = scene.world;
    decompose(scene, global.numGrains, [&](const std::function<void(std::size_t, const Vec3&, double)>& f) {
        for (std::size_t i = 0; i < global.numGrains; ++i) f(i, global.x[i], global.radius[i]);
    });
    ownShapes_ = global.polygonShapes.size() > 1;
    start(std::move(scene), nullptr, contacts, scheme);
}

DistributedSimulation::DistributedSimulation(SceneSource source) : ranks_(comm::ranks()), rank_(comm::rank()) {
    // The settings and walls first (no grain), then the cuts from every
    // grain's position, then this rank's grains alone: its brick's and its
    // halo's. No rank builds the whole world.
    const bool spread = static_cast<bool>(source.pack);
    ownShapes_ = source.ownShapes;
    decompose(source.build({}), source.grains, source.each, spread);
    std::vector<std::uint64_t> ids;
    if (spread) {
        // Each rank's share to the ranks that build its grains, in rounds of
        // at most kRound grains of each share (a share of every grain, the
        // random packing's on rank 0, sends a bounded buffer at a time).
        constexpr std::size_t kRound = std::size_t{1} << 18;
        const std::uint64_t rounds =
            static_cast<std::uint64_t>(comm::maxOverRanks(static_cast<double>((source.share + kRound - 1) / kRound)));
        std::vector<std::string> out(static_cast<std::size_t>(ranks_)), in(static_cast<std::size_t>(ranks_));
        comm::Mailbox box;
        const auto round = [&] {
            comm::exchange(std::vector<std::string_view>(out.begin(), out.end()), box);
            for (std::size_t r = 0; r < out.size(); ++r) {
                out[r].clear();
                in[r] += box.from(r);
            }
        };
        std::uint64_t done = 0;
        std::size_t packed = 0;
        source.each([&](std::size_t i, const Vec3& x, double) {
            const int owner = ownerOf(x);
            for (int r = 0; r < ranks_; ++r)
                if (r == owner || nearBrick(x, r)) source.pack(i, out[static_cast<std::size_t>(r)]);
            if (++packed % kRound == 0) {
                round();
                ++done;
            }
        });
        if (packed != source.share)
            throw std::logic_error("distributed input: a share of another size than the source said");
        for (; done < rounds; ++done) round();
        box = comm::Mailbox{};
        std::vector<std::string>().swap(out);
        ids = source.take(std::vector<std::string_view>(in.begin(), in.end()));
    } else {
        source.each([&](std::size_t i, const Vec3& x, double) {
            if (ownerOf(x) == rank_ || nearBrick(x, rank_)) ids.push_back(i);
        });
        std::sort(ids.begin(), ids.end());
    }
    Scene part = source.build(ids);
    ContactStore store;
    std::optional<MdSolver> scheme;
    const bool memory = static_cast<bool>(source.memory);
    if (memory) source.memory(part, store, scheme);
    source = SceneSource{};  // what it holds (the grains' specification) is not needed any more
    if (part.world.numGrains != ids.size())
        throw std::logic_error("distributed input: the source built " + std::to_string(part.world.numGrains) +
                               " grains for " + std::to_string(ids.size()) + " ids");
    start(std::move(part), &ids, memory ? &store : nullptr, scheme ? &*scheme : nullptr);
}

void DistributedSimulation::decompose(const Scene& scene, std::size_t grains, const SceneSource::Each& each,
                                      bool spread) {
    const World& global = scene.world;
    globalGrains_ = grains;
    // A grid of bricks: the factorisation of the rank count whose inner
    // faces have the least area over the grains' extent (axes the dimension
    // moves along only); cuts at each axis's grain-count quantiles.
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
    double rMax = 0.0;
    each([&](std::size_t, const Vec3& x, double r) {
        lo = lo.cwiseMin(x);
        hi = hi.cwiseMax(x);
        rMax = std::max(rMax, r);
    });
    if (spread) {  // each rank passed over its share
        std::vector<double> most{-lo[0], -lo[1], -lo[2], hi[0], hi[1], hi[2], rMax};
        comm::maxOverRanks(most);
        lo = -Vec3(most[0], most[1], most[2]);
        hi = Vec3(most[3], most[4], most[5]);
        rMax = most[6];
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
    // The cuts between the sorted coordinates q - 1 and q (q the quantile's
    // rank), found without holding them (orderStatistics).
    std::vector<OrderQuery> queries;
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        const int n = dims_[k];
        std::vector<double>& c = cuts_[k];
        c.assign(static_cast<std::size_t>(n) + 1, 0.0);
        c.front() = periodic_[k] ? global.boxMin[a] : -std::numeric_limits<double>::infinity();
        c.back() = periodic_[k] ? global.boxMax[a] : std::numeric_limits<double>::infinity();
        for (int r = 1; r < n && grains > 0; ++r) {
            const std::size_t q = grains * static_cast<std::size_t>(r) / static_cast<std::size_t>(n);
            queries.push_back({a, q == 0 ? 0 : q - 1});
            queries.push_back({a, std::min(q, grains - 1)});
        }
    }
    const std::pair<Vec3, Vec3> range(lo, hi);
    OrderCombine combine;
    combine.sum = [](std::vector<std::uint64_t>& x) { comm::sumOverRanks(x); };
    combine.max = [](std::vector<double>& x) { comm::maxOverRanks(x); };
    combine.gather = [](const std::vector<double>& x) {
        const std::string all = comm::gatherToAll(
            std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(double)));
        std::vector<double> out(all.size() / sizeof(double));
        if (!out.empty()) std::memcpy(out.data(), all.data(), all.size());
        return out;
    };
    const std::vector<double> at = orderStatistics(
        grains, queries, [&](const auto& f) { each([&](std::size_t, const Vec3& x, double) { f(x); }); }, &range,
        spread ? &combine : nullptr);
    std::size_t next = 0;
    for (int a = 0; a < 3; ++a)
        for (int r = 1; r < dims_[static_cast<std::size_t>(a)] && grains > 0; ++r, next += 2)
            cuts_[static_cast<std::size_t>(a)][static_cast<std::size_t>(r)] = 0.5 * (at[next] + at[next + 1]);
}

void DistributedSimulation::start(Scene scene, const std::vector<std::uint64_t>* ids, const ContactStore* contacts,
                                  const MdSolver* scheme) {
    // This rank's grains and its ghosts from the scene's (no migration):
    // grain i of its world is grain ids[i] of the whole (i without ids).
    const World& global = scene.world;
    std::vector<DistributedGrain> mine;
    std::vector<int> owner;
    const std::vector<std::int32_t> driven = drivenOf(global);
    // The MD scheme's state to start from (a checkpoint's): every rank
    // takes its bodies' entries from the whole world's.
    if (scheme) takeScheme(*scheme, global);
    std::vector<int> ownerAt(global.numGrains);  // each grain's rank, or -1 where this rank leaves it out
    std::size_t kept = 0;
    for (std::size_t i = 0; i < global.numGrains; ++i) {
        const int r = ownerOf(global.x[i]);
        ownerAt[i] = r == rank_ || nearBrick(global.x[i], rank_) ? r : -1;
        kept += ownerAt[i] >= 0 ? 1 : 0;
    }
    mine.reserve(kept);
    owner.reserve(kept);
    for (std::size_t i = 0; i < global.numGrains; ++i) {
        const int r = ownerAt[i];
        if (r < 0) continue;
        mine.push_back(grainOf(global, i, ids ? (*ids)[i] : i, driven, r == rank_ ? scheme : nullptr,
                               scheme_ ? scheme_->perBody() : 0, ownShapes_));
        owner.push_back(r);
    }
    if (!scheme && scene.simulation.method == Method::MD && scene.md.integrator != Integrator::CD)
        scheme_ = MdSolver::SchemeCarry{};  // a scheme other than cd from its start
    std::vector<int>().swap(ownerAt);
    // The template's servos name walls after the whole world's grains (as
    // assemble's part renumbers them); the scene's after its own.
    for (WallServo& servo : scene.servos)
        servo.wall = static_cast<BodyId>(globalGrains_ + (static_cast<std::size_t>(servo.wall) - global.numGrains));
    template_ = std::move(scene);
    // The scene's grains are in `mine` now: its world keeps the walls and
    // settings that assemble reads.
    shapes_ = ownShapes_ || !template_.world.clumpShapes.empty() || !template_.world.polygonShapes.empty();
    vtkShapes_ = ownShapes_ || !template_.world.polygonShapes.empty() ? VtkShapes::Polygons
                 : !template_.world.clumpShapes.empty()                 ? VtkShapes::Spheres
                                                                        : VtkShapes::None;
    template_.world = worldOf({}, {}, template_.world, ownShapes_);
    if (template_.simulation.method == Method::CD) cdRanks_ = std::make_unique<CdRanks>(*this, template_.cd.distributed == CdDistributed::Exact);
    assemble(std::move(mine), std::move(owner), contacts ? *contacts : ContactStore{});
    // Rank 0 gathers the whole world when output asks for it (gatherWorld).
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
    World w = worldOf(grains, order, from, ownShapes_);
    const std::size_t n = grains.size();
    gid_.assign(n, 0);
    owned_.assign(n, 0);
    owner_.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
        gid_[k] = grains[order[k]].gid;
        owner_[k] = owner[order[k]];
        owned_[k] = owner_[k] == rank_ ? 1 : 0;
    }
    // An index over gid_ for localOf: the first local grain of each block of
    // 64 global ids from the first.
    idBlock_.assign(n == 0 ? 1 : static_cast<std::size_t>((gid_.back() - gid_.front()) >> 6) + 2, 0);
    for (std::size_t b = 0, k = 0; b < idBlock_.size(); ++b) {
        while (k < n && gid_[k] < gid_.front() + (static_cast<std::uint64_t>(b) << 6)) ++k;
        idBlock_[b] = static_cast<std::uint32_t>(k);
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
    }
    installHooks();

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
    // The partners: a rank holds ghosts of r exactly where r sends it ghosts
    // (the same halo test on the same positions), so each lists the other.
    std::vector<char> partner(static_cast<std::size_t>(ranks_), 0);
    for (int r = 0; r < ranks_; ++r)
        if (!sendTo_[static_cast<std::size_t>(r)].empty()) partner[static_cast<std::size_t>(r)] = 1;
    for (std::size_t k = 0; k < n; ++k)
        if (!owned_[k]) partner[static_cast<std::size_t>(owner_[k])] = 1;
    partners_.clear();
    for (int r = 0; r < ranks_; ++r)
        if (partner[static_cast<std::size_t>(r)]) partners_.push_back(r);
}

void DistributedSimulation::installHooks() {
    // What the part asks of the other ranks: its MD scheme's tests, the
    // ghosts' stages, the sums over the ranks (a new part, or one restored).
    if (scheme_) {
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

double DistributedSimulation::movedSinceBuild() const {
    const World& w = sim_->world();
    double moved = 0.0;
    for (std::size_t k = 0; k < w.numGrains; ++k)
        if (owned_[k]) moved = std::max(moved, w.minimumImage(w.x[k] - builtAt_[k]).norm());
    return moved;
}

double DistributedSimulation::rebuildLimit() const {
    // A cell that changes its size moves the images too: a grain and
    // another's image come closer by up to the lengths' change (the
    // Lees–Edwards offset moves images within each rank's x-y plane only).
    const World& w = sim_->world();
    double cellChange = 0.0;
    for (int a = 0; a < 3; ++a)
        if (periodic_[static_cast<std::size_t>(a)]) cellChange += std::abs(w.boxMax[a] - w.boxMin[a] - builtLength_[a]);
    return 0.5 * (skin_ - cellChange);
}

bool DistributedSimulation::check() {
    auto clock = std::chrono::steady_clock::now();
    const World& w = sim_->world();
    // This rank's largest travel since the last rebuild and speed (which
    // sizes the next interval), its failed tests and the caller's flag.
    double speed = 0.0;
    if (checkEvery_ > 1)
        for (std::size_t k = 0; k < w.numGrains; ++k)
            if (owned_[k]) speed = std::max(speed, w.v[k].squaredNorm());
    const bool forced = forceRollbacks_ && restorePoint_ && restorePoint_->held && sinceCheck_ > 1;
    // The fused pipeline's working list: a part rebuilds it when one of its
    // grains has travelled innerSkin/2 since its build. Left to each rank,
    // the ranks rebuild at different steps and each step waits for the
    // slowest: at P ranks a rebuild somewhere on most steps. With the
    // check's verdict every rank rebuilds at the same steps, where any
    // rank needs to (the bits do not depend on when the list is rebuilt).
    // (Syncing the Verlet list's builds under it too was measured on 16
    // cores and gained nothing: docs/distributed.md, "On 16 cores".)
    MdPairList* list = sim_->md().pairList();
    std::vector<double> most{movedSinceBuild(), flag_, failed_ || forced ? 1.0 : 0.0, std::sqrt(speed),
                             tooFast_ ? 1.0 : 0.0, list && list->moved() ? 1.0 : 0.0};
    lap(clock, times_.rebuild);
    comm::maxOverRanks(most);
    lap(clock, times_.wait);
    listNeeds_ += list && list->moved() ? 1 : 0;
    if (list && most[5] > 0.0) {
        list->setMoved(true);
        ++listBuilds_;
    }
    ++checks_;
    flagMax_ = most[1];
    flag_ = 0.0;
    failed_ = tooFast_ = false;
    const long now = w.step;
    // A grain too fast for the travel guard: after one step since the last
    // check, that step's (the caller reports it: travelFailure); after more,
    // some step of them, which only stepping them again one by one finds.
    const bool again = most[2] > 0.0 || (most[4] > 0.0 && sinceCheck_ > 1);
    tooFastAnywhere_ = most[4] > 0.0 && !again;
    sinceCheck_ = 0;
    if (again) {
        rollBack(now);
        lap(clock, times_.restore);
        return true;
    }
    if (restorePoint_) restorePoint_->held = false;
    const double limit = rebuildLimit();
    pendingRebuild_ = !(most[0] <= limit);
    // The next interval: as many steps as the skin left allows at twice
    // the largest travel a step makes now (grains' speed, the cell's
    // change); a rebuild first where that is under two steps.
    long steps = 1;
    if (checkEvery_ > 1 && now >= strictUntil_) {
        const double dt = sim_->scene().simulation.dt;
        double cellRate = 0.0;
        for (int a = 0; a < 3; ++a)
            if (periodic_[static_cast<std::size_t>(a)])
                cellRate += std::abs(w.strainRate[a]) * (w.boxMax[a] - w.boxMin[a]) * dt;
        const double perStep = 2.0 * (most[3] * dt + 0.5 * cellRate);
        const auto fit = [&](double room) {
            return perStep > 0.0 ? room / perStep : std::numeric_limits<double>::infinity();
        };
        double n = fit(pendingRebuild_ ? 0.5 * skin_ : limit - most[0]);
        if (!pendingRebuild_ && !(n >= 2.0)) {
            pendingRebuild_ = true;
            n = fit(0.5 * skin_);
        }
        if (n >= 2.0) steps = n >= static_cast<double>(checkEvery_) ? checkEvery_ : static_cast<long>(n);
    }
    interval_ = std::max(1L, std::min(steps, checkBy_ - now));
    checked_ = true;
    return false;
}

void DistributedSimulation::keepRestorePoint(bool exchangeDue) {
    // Into the last point's buffers (copies that allocate nothing once the
    // sizes settle: no fresh pages to fault in at every check).
    const World& w = sim_->world();
    if (!restorePoint_) restorePoint_.emplace();
    RestorePoint& p = *restorePoint_;
    p.held = true;
    p.x = w.x;
    p.v = w.v;
    p.w = w.w;
    p.q = w.q;
    p.wallErrorIntegral = w.wallErrorIntegral;
    p.boxMin = w.boxMin;
    p.boxMax = w.boxMax;
    p.strainRate = w.strainRate;
    p.stressErrorIntegral = w.stressErrorIntegral;
    p.time = w.time;
    p.shearRate = w.shearRate;
    p.shift = w.shift;
    p.shearStrain = w.shearStrain;
    p.step = w.step;
    p.sweeps = sweeps_;
    sim_->contactStore(p.store);
    p.scheme.clear();
    if (sim_->scene().simulation.method == Method::MD && !sim_->fused()) {
        ByteWriter scheme;
        sim_->md().saveState(scheme);
        p.scheme = std::move(scheme.bytes());
    }
    p.exchangeDue = exchangeDue;
    if (keepHook_) keepHook_();
}

void DistributedSimulation::rollBack(long failed) {
    if (!restorePoint_ || !restorePoint_->held)
        throw std::logic_error("distributed run: a test failed between checks without a restore point");
    RestorePoint p = std::move(*restorePoint_);
    restorePoint_.reset();
    // The part as it was at the check: what the steps change, in the world
    // they stepped (the rest they do not touch), and a Simulation made afresh.
    World w = sim_->world();
    w.x = std::move(p.x);
    w.v = std::move(p.v);
    w.w = std::move(p.w);
    w.q = std::move(p.q);
    w.wallErrorIntegral = std::move(p.wallErrorIntegral);
    w.boxMin = p.boxMin;
    w.boxMax = p.boxMax;
    w.strainRate = p.strainRate;
    w.stressErrorIntegral = p.stressErrorIntegral;
    w.time = p.time;
    w.shearRate = p.shearRate;
    w.shift = p.shift;
    w.shearStrain = p.shearStrain;
    w.step = p.step;
    Scene s = sceneWithoutWorld(sim_->scene());
    s.world = std::move(w);
    const StepProfile seconds = sim_->profile();
    sim_.emplace(std::move(s));
    sim_->continueProfile(seconds);
    sim_->restoreContacts(p.store);
    if (!p.scheme.empty()) {
        ByteReader in(p.scheme, "distributed run: a restore point");
        sim_->md().loadState(in, sim_->world().numBodies());
    }
    installHooks();
    sweeps_ = p.sweeps;
    // From there a check after every step until past the failure; the
    // first step takes the check's verdict (no rebuild: one was made before
    // the point was kept, or none was due).
    skipExchange_ = !p.exchangeDue;
    pendingRebuild_ = false;
    checked_ = true;
    interval_ = 1;
    sinceCheck_ = 0;
    tooFastAnywhere_ = false;
    strictUntil_ = failed;
    ++rollbacks_;
    if (backHook_) backHook_();
}

CdStepStats DistributedSimulation::step() {
    rolledBack_ = false;
    if (!checked_ && sinceCheck_ == 0) check();  // the first step: nothing to go back over
    auto clock = std::chrono::steady_clock::now();
    if (checked_) {
        // A check's verdict: a rebuild, or the ghosts' update; the restore
        // point of an interval of more than one step.
        checked_ = false;
        if (pendingRebuild_) {
            restorePoint_.reset();  // its buffers are the wrong size now, and the rebuild wants the memory
            rebuild();
            lap(clock, times_.rebuild);
            if (interval_ > 1) keepRestorePoint(false);
        } else {
            if (interval_ > 1) keepRestorePoint(true);
            lap(clock, times_.restore);
            if (!skipExchange_) exchangeGhosts();
            lap(clock, times_.ghosts);
        }
        skipExchange_ = false;
        lap(clock, times_.restore);
    } else {
        // Between checks: this rank's own test, which the next check carries.
        if (!(movedSinceBuild() <= rebuildLimit())) failed_ = true;
        lap(clock, times_.rebuild);
        exchangeGhosts();
        lap(clock, times_.ghosts);
    }
    const double ghosts = times_.ghosts;  // and those between substeps (assemble)
    const CdStepStats stats = sim_->advance();
    sweeps_ += stats.iterations;
    ++sinceCheck_;
    lap(clock, times_.solve);
    times_.solve -= times_.ghosts - ghosts;
    if (maxTravel_ > 0.0) {
        // The travel guard: this rank's grains, carried by the next check.
        const World& w = sim_->world();
        for (std::size_t k = 0; k < w.numGrains && !tooFast_; ++k) {
            const double reach = maxTravel_ * w.radius[k];
            if (owned_[k] && !(w.v[k].squaredNorm() * (travelDt_ * travelDt_) <= reach * reach)) tooFast_ = true;
        }
        lap(clock, times_.rebuild);
    }
    // The interval's last step: its check now (the next step's rebuild test).
    if (sinceCheck_ >= interval_ && check()) {
        rolledBack_ = true;
        return {};
    }
    return stats;
}

bool DistributedSimulation::settle() {
    rolledBack_ = false;
    // Owed where a step was taken since the last check.
    if (checked_ || sinceCheck_ == 0) return false;
    rolledBack_ = check();
    return rolledBack_;
}

void DistributedSimulation::advanceTo(long target) {
    do {
        while (sim_->world().step < target) step();
    } while (settle());
}

void DistributedSimulation::setCheckEvery(long steps) {
    checkEvery_ = std::max(1L, steps);
    // A test of the rollbacks: every interval of more than a step ends in
    // one (the same on every rank, which inherit the environment).
    forceRollbacks_ = std::getenv("MOREAU_TEST_ROLLBACK") != nullptr;
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
