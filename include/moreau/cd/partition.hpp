#pragma once
/// A contact-dynamics step shared by several processes (MPI ranks,
/// sim/distributed_cd.hpp; docs/distributed.md): each process solves the
/// rows of its own contacts, and the bodies that rows on several processes
/// move are made consistent between sweeps (cd.distributed = domains), or
/// the serial sweep is replayed across them (exact).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "moreau/contact/contact.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct SolverBody;

/// What a CdSolver asks of the other processes (CdSolver::setPartition).
class CdPartition {
public:
    virtual ~CdPartition() = default;
    /// Once per step, before the rows are built, for this step's local
    /// contacts: which are this process's to solve (own[c] = 1; the others
    /// get no impulse here), each body's inverse-mass factor (`share`, empty
    /// for 1 everywhere: mass splitting of the bodies several processes
    /// move), and each contact's key in the whole world (`keys`, for the
    /// random-keys order).
    virtual void begin(const World& world, const std::vector<Contact>& contacts, std::vector<char>& own,
                       std::vector<double>& share, std::vector<ContactKey>& keys) = 0;
    /// After the rows are built, before the warm start: the free velocities
    /// (the same on every process that holds a body).
    virtual void start(const std::vector<SolverBody>& bodies) = 0;
    /// After the warm start and after every sweep: the shared bodies'
    /// velocities from every process's impulses.
    virtual void synchronize(std::vector<SolverBody>& bodies) = 0;
    /// Element-wise sums over the processes, in a fixed order (the criteria).
    virtual void sum(double* values, std::size_t n) = 0;
    /// Whether `flag` holds on any process.
    virtual bool any(bool flag) = 0;

    /// Whether the processes replay the serial solve (cd.distributed =
    /// exact): then the warm start and the sweeps run through orderedPass,
    /// the criteria through keyedSum, and there is no mass splitting and
    /// nothing to synchronise.
    virtual bool exact() const = 0;
    /// exact: runs `update` on this process's rows `order` (ascending in
    /// (priority(key), key)) as one serial pass over every process's rows in
    /// that order would: each body sees its rows' updates in that order, so
    /// every process holding it ends with the serial bits.
    virtual void orderedPass(const std::vector<std::int32_t>& order,
                             const std::function<std::uint64_t(ContactKey)>& priority,
                             const std::function<void(std::int32_t)>& update, std::vector<SolverBody>& bodies) = 0;
    /// exact: `n` sums over every process's rows of `terms` (n per local
    /// row, rows not this process's ignored), added as the serial solve adds
    /// them: rows in key order, from zero, in blocks of `block` rows whose
    /// sums are then added in order. The same totals on every process.
    virtual void keyedSum(const std::vector<double>& terms, std::size_t n, std::size_t block, double* totals) = 0;
};

/// The random-keys order's priority of the contact `key` in sweep `sweep` of
/// step `step`: rows run in ascending priority, a permutation any process
/// can compute for its own contacts (ties, 2⁻⁶⁴ likely, by key).
std::uint64_t sweepPriority(std::uint64_t seed, std::uint64_t step, int sweep, ContactKey key);

}  // namespace moreau
