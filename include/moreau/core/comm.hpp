#pragma once
/// The processes of a run: MPI ranks under mpirun, else one (docs/distributed.md).
/// Built without MPI, or started without mpirun, a process is rank 0 of 1
/// and every collective below returns its own input.
///
/// Messages are byte strings (ByteWriter / ByteReader, core/bytes.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moreau::comm {

/// Whether this build can run over MPI ranks.
bool available();
/// Starts MPI when the process was launched by mpirun (its environment
/// says so); otherwise nothing. Under mpirun, without OMP_NUM_THREADS, each
/// rank takes threadsPerRank of its node's cores (the ranks on the node
/// found with MPI_COMM_TYPE_SHARED).
void start(int* argc, char*** argv);
/// OpenMP threads of a rank: the node's cores over the ranks on it, at least
/// one, at most the cores the rank may run on (its affinity; 0: unknown).
int threadsPerRank(int nodeCores, int ranksOnNode, int usableCores);
/// Ends MPI if start() began it.
void stop();
/// Ranks of the run and this process's rank (1 and 0 without MPI).
int ranks();
int rank();
/// Ends every rank of the run with `status` (MPI_Abort), after an error
/// that only some ranks saw; a serial process exits.
[[noreturn]] void abortAll(int status);
/// How many collectives over every rank this rank has called so far (the
/// reductions, broadcasts, gathers and the all-to-all of an exchange's
/// sizes; not the point-to-point exchanges between neighbours): 0 without MPI.
std::uint64_t collectives();

// --- collectives (every rank calls them, in the same order) ---------------

/// The largest `x` over the ranks.
double maxOverRanks(double x);
/// The largest of each element over the ranks (one collective for several).
void maxOverRanks(std::vector<double>& x);
/// Sums over the ranks, element by element.
std::uint64_t sumOverRanks(std::uint64_t x);
void sumOverRanks(std::vector<std::uint64_t>& x);
/// Rank 0's `text` on every rank.
std::string broadcast(const std::string& text);
/// The buffers of a repeated exchange, kept from one to the next, so that a
/// steady exchange (ghost updates every step, CD syncs every sweep)
/// allocates and copies nothing beyond the transfer itself.
class Mailbox {
public:
    /// What rank r sent here in the last exchange (valid until the next).
    std::string_view from(std::size_t r) const {
        return std::string_view(received_).substr(static_cast<std::size_t>(at_[r]),
                                                  static_cast<std::size_t>(count_[r]));
    }
    std::size_t ranks() const { return count_.size(); }

private:
    friend void exchange(const std::vector<std::string_view>& out, Mailbox& box, bool sameSizes);
    friend void exchange(const std::vector<std::string_view>& out, Mailbox& box, const std::vector<int>& partners);
    std::string sent_, received_;
    std::vector<int> sendCount_, sendAt_, count_, at_;
};
/// out[r] goes to rank r; `box` receives what each rank sent here. With
/// `sameSizes` (every rank's call says the same), each part has the size it
/// had in this mailbox's last exchange: then only the ranks that send each
/// other bytes talk (point to point), without the all-to-all of sizes.
void exchange(const std::vector<std::string_view>& out, Mailbox& box, bool sameSizes = false);
/// As exchange, between this rank and `partners` alone (ranks that list
/// each other: r in this rank's partners exactly where this rank is in r's),
/// parts of any size: each pair trades its parts' sizes, then the parts,
/// point to point; no collective. out[r] must be empty for every other rank
/// (std::logic_error). A later exchange of the same sizes may follow.
void exchange(const std::vector<std::string_view>& out, Mailbox& box, const std::vector<int>& partners);
/// Rank 0 gets every rank's bytes by rank; the others an empty list.
std::vector<std::string> gatherToRoot(const std::string& mine);
/// Every rank's bytes, concatenated in rank order, on every rank.
std::string gatherToAll(const std::string& mine);

}  // namespace moreau::comm
