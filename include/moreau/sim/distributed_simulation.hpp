#pragma once
/// A simulation over MPI ranks: spatial domain decomposition with ghost
/// grains (docs/distributed.md). MD steps each rank's part with the serial
/// bits; CD shares each step's sweeps between the ranks (sim/distributed_cd.hpp,
/// cd.distributed).
///
/// src/sim by concept: distributed_simulation.cpp (the bricks, the part,
/// the step), distributed_exchange.cpp (migration and rebalancing at the
/// rebuilds, ghost updates between them), distributed_loads.cpp (wall loads
/// and cell stress summed over the ranks), distributed_gather.cpp (rank 0's
/// views for output, checkpoints and the travel guard), distributed_grain.hpp
/// (a grain's state as it moves between ranks).
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/guards.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

/// What the ranks sent each other so far (rebuilds and ghost updates; the
/// gathers for output are not counted), summed over the ranks.
struct DistributedTraffic {
    std::uint64_t messages = 0;  ///< point-to-point parts of the exchanges that carried bytes
    std::uint64_t bytes = 0;
    std::uint64_t ghosts = 0;    ///< ghost grains held now, over all ranks
    std::uint64_t migrations = 0;  ///< grains that moved to another rank at the rebuilds
    std::uint64_t syncs = 0;       ///< CD domains: synchronisations of the shared bodies (per sweep and rank)
    std::uint64_t passes = 0;      ///< CD exact: replayed passes (warm starts and sweeps; rank 0's)
    std::uint64_t rounds = 0;      ///< CD exact: message rounds of those passes (rank 0's)
};

/// Seconds this rank spent in each part of its steps so far.
struct DistributedTimes {
    double rebuild = 0.0;  ///< the test whether one is due, and migration, rebalancing, the new part
    double ghosts = 0.0;   ///< ghost updates between rebuilds
    double solve = 0.0;    ///< the part's step, its stages in part().profile() (CD: with the sweeps' exchanges)
    double wait = 0.0;     ///< the checks' allreduce (a rebuild due, signals): waiting for the slowest rank
    double restore = 0.0;  ///< keeping restore points (checks more than a step apart) and going back to one
};

/// A scene that each rank builds only in part (distributed input): every
/// grain's position and radius, and the scene of a chosen few. The world is
/// the same for any rank count; no rank holds all of it.
struct SceneSource {
    using Each = std::function<void(const std::function<void(std::size_t, const Vec3&, double)>&)>;
    std::size_t grains = 0;
    /// Calls f(id, position, radius) for every grain, in the same order on
    /// every rank; where the source is spread (pack is set), for this
    /// rank's share of the grains (each grain in one rank's share).
    Each each;
    /// Optional, a spread source: pack(i, out) appends grain i (of this
    /// rank's share) to out for a rank that builds it; take(parts) reads
    /// the grains every rank sent here (parts by rank) before build, and
    /// gives their ids, ascending.
    std::function<void(std::size_t, std::string&)> pack;
    std::size_t share = 0;  ///< a spread source: the grains of this rank's share, each()'s count
    std::function<std::vector<std::uint64_t>(const std::vector<std::string_view>&)> take;
    /// Whether its polygons each have their own shape (the same on every
    /// rank): the parts build() makes hold their grains' shapes alone,
    /// grain k's as entry k of their table.
    bool ownShapes = false;
    /// The scene (settings, walls) holding grains `ids` (ascending) alone:
    /// grain k of its world is grain ids[k] of the whole.
    std::function<Scene(const std::vector<std::uint64_t>& ids)> build;
    /// Optional (a resume), called after build(ids) with its scene: the
    /// contact memory to start from (global keys; at least every record of
    /// a contact of those grains) and, where an MD scheme's state goes on,
    /// that state for the part's bodies (grain k, then the walls).
    std::function<void(const Scene& part, ContactStore& store, std::optional<MdSolver>& scheme)> memory;
};

struct DistributedGrain;
class ByteWriter;
class CdRanks;

class DistributedSimulation {
public:
    /// Every rank passes the whole scene; each keeps its part (rank 0
    /// gathers the whole world when output asks: gatherWorld).
    /// `contacts`: the memory the run starts with (a checkpoint's store, keys
    /// of the whole world), or none.
    /// `scheme`: the whole world's MD scheme state to start from (a
    /// checkpoint's multi-step history), or none.
    explicit DistributedSimulation(Scene scene, const ContactStore* contacts = nullptr,
                                   const MdSolver* scheme = nullptr);
    /// Distributed input: each rank builds only its brick's and its halo's
    /// grains from `source` (collective), as the constructor above does
    /// from the whole scene, with the same bricks and bits.
    /// The source is released once this rank's grains are built.
    explicit DistributedSimulation(SceneSource source);
    ~DistributedSimulation();
    /// One step on every rank (collective); CD: its sweeps (the same on every rank).
    /// The last step of an interval (see setCheckEvery) ends with its check;
    /// where that finds that a rank's test failed since the last one, every
    /// rank goes back to the world of that check (rolledBack(); the stats
    /// are empty).
    CdStepStats step();
    /// Whether the last step() or settle() went back to the last check: the
    /// world's clock is that check's step, and what the caller made of the
    /// steps after it (rows, sums) is void.
    bool rolledBack() const { return rolledBack_; }

    /// The checks (docs/distributed.md, "The ranks' checks"): one allreduce
    /// decides whether any grain has moved half the skin since the last
    /// rebuild (then the next step rebuilds), and carries flag() and the
    /// travel guard's verdict (watchTravel). With `steps` = 1 (the default)
    /// it ends every step. With more, up to `steps` steps apart, fewer where
    /// the fastest grain would use the skin up sooner: between checks each
    /// rank tests its own grains before each step (and with watchTravel,
    /// after it), and the next check, on finding that a test failed
    /// anywhere, takes every rank back to the last check's world, kept at
    /// that check, from which it steps again with a check after each step
    /// until it is past the failure. The bits are the same either way (a
    /// rebuild's timing changes speed, not results).
    void setCheckEvery(long steps);
    /// No check interval reaches past the step that brings the world's clock
    /// to `step` (the caller's next collective between steps, which calls settle()).
    void checkBy(long step) { checkBy_ = step; }
    /// Between steps: the check now where one is owed (a step was taken
    /// since a check that covered more than one; collective). True: every
    /// rank went back to the last check (rolledBack()).
    bool settle();
    /// Steps until the world's clock reaches `step`, then settle()s, again
    /// until a settle() finds nothing to go back over (collective).
    void advanceTo(long target);
    /// The caller's own state to keep at each restore point and take back
    /// at a rollback (e.g. the run's sums of the steps).
    void setRollbackHooks(std::function<void()> keep, std::function<void()> back) {
        keepHook_ = std::move(keep);
        backHook_ = std::move(back);
    }
    /// The travel guard between checks: each rank tests its own grains
    /// after each step (more than maxTravel radii in a step of dt fails).
    void watchTravel(double dt, double maxTravel) {
        travelDt_ = dt;
        maxTravel_ = maxTravel;
    }
    /// Whether a check was made since the last step (the last of an
    /// interval, or settle()): then travelFailure() has that step's verdict.
    bool checkedSinceStep() const { return checked_; }
    /// Checks made and rollbacks taken so far (the same on every rank).
    long checks() const { return checks_; }
    long rollbacks() const { return rollbacks_; }
    /// A value for the next check's allreduce (e.g. a signal this rank has
    /// seen); flagMax() is then the largest over the ranks. Saves a collective.
    void flag(double x) { flag_ = x; }
    double flagMax() const { return flagMax_; }
    /// Rank 0: the whole world at the current step (collective; the other
    /// ranks get an empty world). The first call gathers every grain's
    /// whole state, later ones their motion: from then on rank 0 holds the
    /// whole world.
    const World& gatherWorld();
    /// Rank 0: every contact of the step in global key order, with its last
    /// force (collective; empty on the other ranks).
    std::vector<Contact> gatherContacts();
    /// Rank 0: the whole run's contact store in global key order (collective;
    /// empty on the other ranks): with gatherWorld() what a checkpoint holds.
    ContactStore gatherStore();
    /// Rank 0: the MD scheme's state of the whole world (the carried part,
    /// and carry.perBody() entries per body: grains by id, then walls), as
    /// MdSolver::adoptScheme takes it (collective; false, on every rank,
    /// where the scheme carries nothing between steps).
    bool gatherScheme(MdSolver::SchemeCarry& carry, std::vector<MdSolver::Vec6>& entries);
    /// This rank's share of a checkpoint of the current step (its owned
    /// grains' whole state, the memory of the contacts it owns, its MD
    /// scheme entries; no collective), which writeCheckpointPart writes
    /// (checkpoint.hpp): no rank holds the whole world for a checkpoint.
    CheckpointShare share() const;
    /// Keeps share() (a run's last step the guards passed, written only
    /// where a divergence comes).
    void keepPart() { kept_ = share(); }
    /// The step keepPart() kept (-1: none), and its share.
    long keptStep() const { return kept_ ? kept_->step : -1; }
    const CheckpointShare& kept() const;
    /// series.csv's world columns at the current step, as a serial run's
    /// record and measureInto(output) have them, with their bits: each rank
    /// adds its owned grains and the contacts whose first grain it owns,
    /// and the exact sums' words are added over the ranks (collective; no
    /// gather; the same record on every rank). The elastic energy is the
    /// fused pipeline's, NaN for the staged one (CD: the caller's 0).
    StepRecord record(const OutputSettings& output);
    /// The whole world's grains' extent (WallsView's box; collective).
    WallsView grainsExtent() const;
    /// The grains of the whole world.
    std::size_t wholeGrains() const { return globalGrains_; }
    /// The whole world's contacts now, each once (gatherContacts().size()
    /// with no gather; collective, every rank).
    std::size_t contactCount();
    /// The whole world's kinetic energy (kineticEnergy; collective, every rank).
    double kineticEnergy() const;
    /// Rank 0: the whole world's stateHash, from windows of 2¹⁶ grains by
    /// id (collective; rank 0 holds one window at a time; the other ranks
    /// get the start value).
    std::uint64_t stateHash() const;
    /// This rank's piece of a VTK snapshot of the current step in `dir`
    /// (output.vtk_pieces; collective): its owned grains and the contacts
    /// it owns, with global ids (writeVtkPiece in io/output.hpp).
    void writeVtkPiece(const std::filesystem::path& dir);
    /// The run's shapes part of a snapshot (the same on every rank, whatever its part holds).
    VtkShapes vtkShapes() const { return vtkShapes_; }
    /// The serial guard's travel test over all ranks (watchTravel): empty
    /// when the last check found no grain moving more than maxTravel radii
    /// in the step before it, else (collective) the report of the first
    /// such grain by id, as a serial run words it.
    std::string travelFailure(double dt, double maxTravel) const;
    /// Totals over the ranks (collective).
    DistributedTraffic traffic() const;
    /// This rank's part as a Simulation of its owned and ghost grains.
    const Simulation& part() const { return *sim_; }
    std::size_t ownedGrains() const { return ownedCount_; }
    /// part()'s grains by global id, and which this rank owns (the start's
    /// checks over the ranks: checkMdStep, checkStart).
    OwnedGrains ownership() const { return {gid_, owned_}; }
    long rebuilds() const { return rebuilds_; }
    /// The checks after which this rank's part rebuilt its working list
    /// (the fused pipeline's; every rank alike, where any part needed it)
    /// and those after which this part needed it itself.
    long listBuilds() const { return listBuilds_; }
    long listNeeds() const { return listNeeds_; }
    long rebalances() const { return rebalances_; }
    /// Rebalances that chose another grid of bricks.
    long regrids() const { return regrids_; }
    /// The bricks per axis, e.g. "2x1x1".
    std::string grid() const;
    /// The times rank 0 gathered every grain (gatherWorld): for snapshots
    /// without pieces or of shapes and FCLIB dumps; not for rows or checkpoints.
    long worldGathers() const { return worldGathers_; }
    /// CD: sweeps per step, summed over the steps so far (the same on every rank).
    long sweeps() const { return sweeps_; }
    /// This rank's time per part of the steps so far.
    const DistributedTimes& times() const { return times_; }

private:
    friend class CdRanks;
    /// This rank's contacts (global `keys`, ascending), each with the force
    /// of its row (from the rank that owns its first body; collective).
    std::vector<Contact> contactsWithRowForces(std::vector<ContactKey>& keys);
    /// The ranks' parts as the observables add them (WorldPart): the owned
    /// grains, the walls on rank 0, sums and maxima over the ranks.
    WorldPart wholePart() const;
    /// The index of `key` in `keys` (a logic_error if absent).
    static std::size_t contactOf(const std::vector<ContactKey>& keys, ContactKey key);
    /// The bricks and their cuts from the scene's settings and every grain
    /// (`each`, `grains` of them).
    void decompose(const Scene& scene, std::size_t grains, const SceneSource::Each& each, bool spread = false);
    /// This rank's part from `scene` (its world's grain i is grain ids[i] of
    /// the whole, or i without ids), with a checkpoint's contacts and scheme.
    void start(Scene scene, const std::vector<std::uint64_t>* ids, const ContactStore* contacts,
               const MdSolver* scheme);
    int ownerOf(const Vec3& x) const;
    /// The grid of bricks for the grains' extent (see the constructor).
    std::array<int, 3> chooseGrid(const Vec3& extent) const;
    /// Whether x lies within the halo of rank r's brick.
    bool nearBrick(const Vec3& x, int r) const;
    /// This rank's part from its grains (owner[k]: the rank that owns grain k)
    /// and their contacts' memory.
    void assemble(std::vector<DistributedGrain> grains, std::vector<int> owner, ContactStore store);
    std::ptrdiff_t localOf(std::uint64_t id, const World& w) const;
    std::uint64_t globalOf(BodyId b) const;
    /// A local contact key in global ids (the same pair on every rank).
    ContactKey globalKey(ContactKey local) const;
    /// The memory of the contacts this rank computes, in global keys; with
    /// `ends`, each record's local bodies.
    ContactStore globalStore(std::vector<std::array<BodyId, 2>>* ends = nullptr) const;
    void rebuild();
    void rebalance();
    /// The part's hooks into the other ranks (a new part, or one restored).
    void installHooks();
    /// The largest distance an owned grain has moved since the last rebuild,
    /// and what it may reach before the next (half the skin, less the cell's change).
    double movedSinceBuild() const;
    double rebuildLimit() const;
    /// The allreduce of a check and what it decides (checked_, pendingRebuild_,
    /// the next interval); true: it went back to the restore point.
    bool check();
    /// A restore point of the part now; `exchangeDue`: its ghosts' motion is
    /// not yet this step's (kept before the ghost update).
    void keepRestorePoint(bool exchangeDue);
    /// Every rank back to the restore point (a test failed at step `failed`).
    void rollBack(long failed);
    /// Throws std::logic_error where a step since the last check may yet be taken back.
    void expectSettled(const char* what) const;
    /// This rank's owned grains' whole state (putGrain), the records of the
    /// contacts it owns (and the laws' slots per record), its owned grains'
    /// scheme entries and the walls' (each as gathered to rank 0).
    std::string ownedGrainBytes() const;
    std::string ownedStoreBytes(std::size_t& stride) const;
    std::string ownedSchemeBytes() const;
    std::vector<MdSolver::Vec6> wallSchemeNow() const;
    /// Rank 0's whole world from every rank's ownedGrainBytes, with the walls, cell and clock of `walls`.
    World worldFromParts(const std::vector<std::string>& parts, const World& walls) const;
    /// Rank 0's whole scheme state from every rank's ownedSchemeBytes and the walls' entries.
    void schemeFromParts(const std::vector<std::string>& parts, std::size_t per,
                         const std::vector<MdSolver::Vec6>& walls, std::vector<MdSolver::Vec6>& entries) const;
    /// scheme_ and wallScheme_ from `md`'s MD scheme state of the world `w`.
    void takeScheme(const MdSolver& md, const World& w);
    /// out[r] to rank r (comm::exchange), counted in traffic_.
    std::vector<std::string> send(const std::vector<ByteWriter>& out);
    /// out's parts, counted in traffic_ (those to other ranks that carry bytes).
    std::vector<std::string_view> counted(const std::vector<ByteWriter>& out);
    /// As send, into `box` (kept by the caller): what arrived is valid until
    /// the box's next exchange. `sameSizes`: see comm::exchange.
    const comm::Mailbox& post(const std::vector<ByteWriter>& out, comm::Mailbox& box, bool sameSizes);
    /// As post and send, with the partners alone (partners_; no collective):
    /// out[r] empty for every other rank.
    const comm::Mailbox& postNear(const std::vector<ByteWriter>& out, comm::Mailbox& box);
    std::vector<std::string> sendNear(const std::vector<ByteWriter>& out);
    /// Each wall's load summed over the ranks with the serial bits
    /// (Simulation::wallLoads; collective): `afterSolve`, between solve and
    /// integrate (MD, integrator cd) from the step's forces; otherwise from
    /// the last evaluation's, as the servos read them before a step.
    std::vector<Vec3> wallLoads(bool afterSolve);
    /// The sums of wallLoads over the ranks from `contacts` (calls its
    /// argument with each local contact's key and force on b) and the owned
    /// glued grains' summed forces (collective). Walls neither mobile nor
    /// servo-driven get zero: nothing reads their sums.
    std::vector<Vec3> sumWallLoads(const std::function<void(const std::function<void(ContactKey, const Vec3&)>&)>& contacts,
                                   const std::function<Vec3(BodyId)>& gluedForce);
    /// Simulation::cellStress over the ranks with the serial bits (collective).
    Mat3 cellStress();
    /// The cuts of the periodic axes scaled to the cell now (a cell that
    /// changes its size), before a rebuild places grains.
    void fitCutsToCell();
    /// After the solve: each mobile wall's contact force summed over the ranks.
    void sumWallForces();
    /// The ghosts' motion from their owners; with X also their entries of a
    /// stage's displacements (MdSolver::setStageHook).
    void exchangeGhosts(std::vector<MdSolver::Vec6>* X = nullptr);
    /// The outgoing ghost updates (kept buffers): each owned grain another
    /// rank holds as a ghost, its id, then what `put` writes of it.
    const std::vector<ByteWriter>& ghostParts(const std::function<void(ByteWriter&, std::size_t)>& put);
    /// The ghosts' entries of a per-body field from their owners (MdSolver::FieldRanks).
    void syncGhostField(std::vector<MdSolver::Vec6>& f);

    int ranks_ = 1, rank_ = 0;
    std::size_t globalGrains_ = 0;
    /// Own shapes (a world of polygons with more than one shape, as
    /// irregular ones: one each): each grain's shape goes with it and a
    /// part's table holds its grains' alone, the template's none.
    bool ownShapes_ = false;
    /// Whether grains carry shapes (clumps, polygons) in their messages:
    /// the same on every rank, whatever its part holds.
    bool shapes_ = false;
    VtkShapes vtkShapes_ = VtkShapes::None;
    long worldGathers_ = 0;
    std::array<int, 3> dims_{1, 1, 1};     ///< bricks per axis; rank = i + dims_x (j + dims_y k)
    int axes_ = 3;                         ///< the axes the scene moves along (its dimension)
    bool leesEdwards_ = false;             ///< a sheared cell: bricks along z alone
    std::array<bool, 3> periodic_{};
    double skin_ = 0.0, halo_ = 0.0;
    std::array<std::vector<double>, 3> cuts_;  ///< brick (i, j, k) spans [cuts_[a][i], cuts_[a][i+1]) per axis
    Scene template_;                       ///< the scene's settings (its world moved out)
    World whole_;                          ///< rank 0: the whole world for output, once gathered
    bool wholeHeld_ = false;               ///< gatherWorld has run (on every rank)
    std::optional<Simulation> sim_;        ///< this rank's part
    long listBuilds_ = 0, listNeeds_ = 0;  ///< see listBuilds()
    std::vector<std::uint64_t> gid_;       ///< global id of each local grain (ascending)
    std::vector<std::uint32_t> idBlock_;   ///< first index in gid_ of each block of 64 ids from gid_.front()
    std::vector<char> owned_;              ///< local grain owned here (1) or a ghost (0)
    std::vector<int> owner_;               ///< the rank that owns each local grain
    std::vector<Vec3> builtAt_;            ///< positions at the last rebuild
    Vec3 builtLength_ = Vec3::Zero();      ///< the cell's lengths at the last rebuild
    std::vector<std::vector<std::size_t>> sendTo_;  ///< owned grains each rank holds as ghosts
    /// The ranks this one sends ghosts to or holds ghosts of (each lists the
    /// other): between rebuilds, who may talk (postNear).
    std::vector<int> partners_;
    std::vector<ByteWriter> ghostsOut_;    ///< the ghost updates' outgoing buffers, kept
    comm::Mailbox mailbox_;                ///< send()'s buffers, kept
    /// ghost updates: of the step, of a stage (with displacements), of a field (syncGhostField)
    std::array<comm::Mailbox, 3> ghostsBox_;
    std::array<bool, 3> ghostsKnown_{};    ///< that box has exchanged since the last rebuild
    std::vector<std::vector<std::size_t>> recvAt_;  ///< local index of each ghost in rank r's updates
    std::size_t ownedCount_ = 0, ghostCount_ = 0;
    long rebuilds_ = 0, rebalances_ = 0, regrids_ = 0, sweeps_ = 0;
    DistributedTraffic traffic_;
    DistributedTimes times_;
    double flag_ = 0.0, flagMax_ = 0.0;
    // The checks (setCheckEvery): the longest interval, this one's length,
    // the world's step at which the next is due, the caller's bound, and the
    // step up to which a rollback's replay checks every step.
    long checkEvery_ = 1, interval_ = 1, sinceCheck_ = 0, checkBy_ = std::numeric_limits<long>::max();
    long strictUntil_ = -1, checks_ = 0, rollbacks_ = 0;
    bool checked_ = false;         ///< a check was made since the last step (settle), which the next step uses
    bool pendingRebuild_ = false;  ///< that check's verdict
    bool skipExchange_ = false;    ///< restored after a rebuild: the ghosts' motion is already the step's
    bool failed_ = false;          ///< this rank's own test (half the skin) failed since the last check
    bool tooFast_ = false;         ///< this rank's travel guard failed since the last check
    bool tooFastAnywhere_ = false; ///< the last check: a rank's travel guard failed in the one step before it
    bool rolledBack_ = false;
    bool forceRollbacks_ = false;  ///< MOREAU_TEST_ROLLBACK: every interval of more than a step ends in a rollback once
    double travelDt_ = 0.0, maxTravel_ = 0.0;
    std::function<void()> keepHook_, backHook_;
    /// What the steps of an interval change in the part, as it was at the check.
    struct RestorePoint {
        std::vector<Vec3> x, v, w;
        std::vector<Quat> q;
        std::vector<double> wallErrorIntegral;
        Vec3 boxMin, boxMax, strainRate, stressErrorIntegral;
        double time = 0.0, shearRate = 0.0, shift = 0.0, shearStrain = 0.0;
        long step = 0, sweeps = 0;
        ContactStore store;  ///< the contacts' memory
        std::string scheme;  ///< the staged MD solver's state (MdSolver::saveState; empty: fused or CD)
        bool exchangeDue = true;
        bool held = false;  ///< kept at the last check (the buffers stay between points)
    };
    std::optional<RestorePoint> restorePoint_;
    std::optional<CheckpointShare> kept_;  ///< keepPart()'s
    std::unique_ptr<CdRanks> cdRanks_;     ///< CD: the part's CdSolver partition
    /// MD schemes with a state between steps (multi-step history): its
    /// carried part, the walls' entries (the same on every rank); each owned
    /// grain's go with it (DistributedGrain::scheme).
    std::optional<MdSolver::SchemeCarry> scheme_;
    std::vector<MdSolver::Vec6> wallScheme_;
    std::vector<char> summedWalls_;  ///< per wall: its load is summed over the ranks (mobile, or a servo's)
};

}  // namespace moreau
