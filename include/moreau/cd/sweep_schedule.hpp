#pragma once
/// How the passes of a CD step run: on one thread, by dependency levels on
/// several (sweep_levels.hpp), or shared by several processes (MPI ranks,
/// sim/distributed_cd.hpp; docs/distributed.md). Every pass over rows (the
/// warm start, a Gauss–Seidel sweep, Jacobi's apply) is one RowPass over an
/// order; the schedule only decides which ranges of that order run where and
/// when, each range through the one loop of the row solve (sweepRange in
/// solver.cpp). The solver holds one schedule for the whole run: its own
/// (serial, and levels where a plan has them), or the one a distributed run
/// installs (CdSolver::setSchedule).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "moreau/contact/contact.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct SolverBody;

/// The random-keys order's priority of the contact `key` in sweep `sweep` of
/// step `step`: rows run in ascending priority, a permutation any process
/// can compute for its own contacts (ties, 2⁻⁶⁴ likely, by key).
std::uint64_t sweepPriority(std::uint64_t seed, std::uint64_t step, int sweep, ContactKey key);

/// A pass's rows in update order; with dependency levels, level L is
/// seq[levelStart[L], levelStart[L+1]) (no levels: seq in that order).
struct SweepPlan {
    std::vector<std::int32_t> seq;
    std::vector<std::int32_t> levelStart;
};

/// The order of a pass's rows across processes: ascending (priority, key),
/// the priority being the key itself or the random-keys draw of a sweep.
struct PassOrder {
    bool random = false;
    std::uint64_t seed = 0, step = 0;
    int sweep = 0;
    std::uint64_t priority(ContactKey key) const {
        return random ? sweepPriority(seed, step, sweep, key) : static_cast<std::uint64_t>(key);
    }
};

/// The row solve of one pass: updates rows order[begin..end) in that
/// sequence (one call per range, never per row).
class RowPass {
public:
    virtual void run(const std::int32_t* order, std::size_t begin, std::size_t end) = 0;

protected:
    ~RowPass() = default;
};

/// The schedule of one process (serial, or levels where the plan has them);
/// a distributed run derives its own. Its step hooks do nothing here.
class SweepSchedule {
public:
    virtual ~SweepSchedule() = default;

    /// Once per step, before the rows are built, for this step's contacts:
    /// which are this process's to solve (own[c] = 1; empty: all), each
    /// body's inverse-mass factor (`share`, empty for 1 everywhere: mass
    /// splitting of the bodies several processes move), and each contact's
    /// key in the whole world (`keys`; empty: the contacts' own).
    virtual void begin(const World&, const std::vector<Contact>&, std::vector<char>& own, std::vector<double>& share,
                       std::vector<ContactKey>& keys) {
        own.clear();
        share.clear();
        keys.clear();
    }
    /// After the rows are built, before the warm start: the free velocities.
    virtual void start(const std::vector<SolverBody>&) {}
    /// After the warm start and after every sweep: the shared bodies'
    /// velocities from every process's impulses.
    virtual void synchronize(std::vector<SolverBody>&) {}
    /// Whether every process sweeps even without rows (their exchanges pair up).
    virtual bool shared() const { return false; }
    /// Whether a sweep's plan may be regrouped into dependency levels.
    virtual bool levels() const { return true; }

    /// Runs `pass` over the plan's rows: level by level on the threads where
    /// the plan has levels, else serially in seq order.
    virtual void run(const SweepPlan& plan, const PassOrder& order, RowPass& pass, std::vector<SolverBody>& bodies);

    /// Element-wise sums over the processes, in a fixed order (the criteria).
    virtual void sum(double*, std::size_t) {}
    /// Whether `flag` holds on any process.
    virtual bool any(bool flag) { return flag; }
    /// Whether the criteria's sums add every process's row terms in key
    /// order (keyedSum) instead of summing each process's blocks (sum).
    virtual bool keyedSums() const { return false; }
    /// keyedSums: `n` sums over every process's rows of `terms` (n per local
    /// row, rows not this process's ignored), added as the serial solve adds
    /// them: rows in key order, from zero, in blocks of `block` rows whose
    /// sums are then added in order. The same totals on every process.
    virtual void keyedSum(const std::vector<double>& terms, std::size_t n, std::size_t block, double* totals);
};

}  // namespace moreau
