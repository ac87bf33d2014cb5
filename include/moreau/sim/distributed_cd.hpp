#pragma once
/// The CD step over MPI ranks (docs/distributed.md, "Contact dynamics"):
/// the schedule a rank's CdSolver runs its passes with (cd/sweep_schedule.hpp).
///
/// cd.distributed = domains (after Shojaaee et al., J. Comput. Phys. 231,
/// 612, 2012): each rank sweeps the contacts whose first grain it owns, in
/// the order cd.order gives its own rows, and after the warm start and
/// after every sweep the bodies that rows on several ranks move are made
/// consistent. Such a body is split between those k ranks (mass splitting,
/// Tonge, Benevolenski & Voroshilov, ACM TOG 31, 105, 2012): each rank's
/// rows see it with k times its inverse mass, and its velocity becomes the
/// start velocity plus the mean of the ranks' changes. The fixed points
/// are the serial step's (the shock law's fixed point does not depend on
/// the masses it is solved with); the path to them differs, so a rank count
/// gives its own bits, and extra sweeps where a tolerance is asked for.
#include <array>
#include <string>
#include <tuple>
#include <cstdint>
#include <vector>

#include "moreau/core/bytes.hpp"  // ByteWriter whole: CdRanks holds vectors of them
#include "moreau/core/comm.hpp"
#include "moreau/cd/sweep_schedule.hpp"
#include "moreau/sim/distributed_simulation.hpp"

namespace moreau {

class CdRanks final : public SweepSchedule {
public:
    CdRanks(DistributedSimulation& run, bool exact) : run_(run), exact_(exact) {}
    void begin(const World& world, const std::vector<Contact>& contacts, std::vector<char>& own,
               std::vector<double>& share, std::vector<ContactKey>& keys) override;
    void start(const std::vector<SolverBody>& bodies) override;
    void synchronize(std::vector<SolverBody>& bodies) override;
    void sum(double* values, std::size_t n) override;
    bool any(bool flag) override;
    bool shared() const override { return true; }
    /// exact (cd.distributed = exact): the serial solve replayed, its
    /// passes through orderedPass, its sums through keyedSum; no levels, no
    /// mass splitting, nothing to synchronise.
    bool levels() const override { return !exact_; }
    bool keyedSums() const override { return exact_; }
    void run(const SweepPlan& plan, const PassOrder& order, RowPass& pass, std::vector<SolverBody>& bodies) override;
    void keyedSum(const std::vector<double>& terms, std::size_t n, std::size_t block, double* totals) override;
    /// This rank's synchronisations (domains) and passes and rounds (exact);
    /// its messages and bytes count in the run's traffic.
    const DistributedTraffic& traffic() const { return traffic_; }

private:
    struct Motion {
        Vec3 v = Vec3::Zero(), w = Vec3::Zero();
    };

    /// The owned grain a message names next (its global id).
    std::size_t ownedGrain(ByteReader& in, const World& w) const;
    /// exact: the begin() of the replayed solve.
    void beginExact(const World& w, const std::vector<Contact>& contacts);
    /// exact: runs `pass` on this rank's rows `order` as one serial pass over
    /// every rank's rows in ascending (priority, key) would: each body sees
    /// its rows' updates in that order, so every rank holding it ends with
    /// the serial bits. The rows found ready in a scan run as one range.
    void orderedPass(const std::vector<std::int32_t>& order, const PassOrder& priority, RowPass& pass,
                     std::vector<SolverBody>& bodies);

    DistributedSimulation& run_;
    bool exact_ = false;
    std::vector<char> own_;            ///< per local row: this rank's
    std::vector<ContactKey> keys_;     ///< per local row: its key in the whole world
    std::vector<std::array<std::int32_t, 2>> bodiesOf_;  ///< per local row: its mobile bodies (−1: none)
    /// exact: a body whose rows lie on several ranks, or on a rank other than
    /// its owner, or a mobile wall (every rank holds it).
    struct Shared {
        std::size_t local = 0;
        std::uint64_t id = 0;  ///< its id in the whole world (grains, then walls)
        std::vector<std::pair<ContactKey, int>> rows;  ///< every rank's rows on it: key, rank
        std::vector<int> holders;  ///< the ranks that need its velocity after a pass, itself excluded
        /// In a pass: the rows in pass order (priority, key, rank) and the next one due.
        std::vector<std::tuple<std::uint64_t, ContactKey, int>> seq;
        std::size_t next = 0;
    };
    std::vector<Shared> sharedBodies_;
    std::vector<std::int32_t> sharedOf_;  ///< per local body: its index in sharedBodies_, −1 if none
    std::vector<long> blocked_;           ///< per local body: the scan that last found it waiting
    std::vector<std::int32_t> ready_;     ///< the rows a scan found ready, in order
    long scan_ = 0;
    /// Per rank r: the ghosts (local ids) this rank's rows move whose owner is
    /// r, and the owned bodies r's rows move, in the order the messages list them.
    std::vector<std::vector<std::size_t>> ghostsTo_, movedBy_;
    std::vector<char> movedHere_;      ///< per local body: a row of this rank moves it
    std::vector<double> share_;        ///< per local body: the ranks whose rows move it (≥ 1)
    std::vector<std::size_t> shared_;  ///< the owned bodies other ranks' rows move (ascending)
    std::vector<std::size_t> slot_;    ///< per local body: its place in shared_
    std::vector<std::size_t> walls_;   ///< the mobile walls (local ids, the same on every rank)
    std::vector<Motion> base_;         ///< per local body: its velocity at the last synchronisation
    DistributedTraffic traffic_;
    comm::Mailbox changesBox_, backBox_;  ///< domains syncs: changes to the owners, velocities back
    std::vector<ByteWriter> changesOut_, backOut_;  ///< their outgoing parts, kept
    bool syncedThisStep_ = false;         ///< the boxes hold this step's sizes
};

}  // namespace moreau
