#pragma once
/// The processes of a run: MPI ranks under mpirun, else one (docs/distributed.md).
/// Built without MPI, or started without mpirun, a process is rank 0 of 1
/// and every collective below returns its own input.
///
/// Messages are byte strings (ByteWriter / ByteReader, core/bytes.hpp).
#include <cstdint>
#include <string>
#include <vector>

namespace moreau::comm {

/// Whether this build can run over MPI ranks.
bool available();
/// Starts MPI when the process was launched by mpirun (its environment
/// says so); otherwise nothing.
void start(int* argc, char*** argv);
/// Ends MPI if start() began it.
void stop();
/// Ranks of the run and this process's rank (1 and 0 without MPI).
int ranks();
int rank();
/// Ends every rank of the run with `status` (MPI_Abort), after an error
/// that only some ranks saw; a serial process exits.
[[noreturn]] void abortAll(int status);

// --- collectives (every rank calls them, in the same order) ---------------

/// The largest `x` over the ranks.
double maxOverRanks(double x);
/// Sums over the ranks, element by element.
std::uint64_t sumOverRanks(std::uint64_t x);
void sumOverRanks(std::vector<std::uint64_t>& x);
/// Rank 0's `text` on every rank.
std::string broadcast(const std::string& text);
/// out[r] goes to rank r; returns what each rank sent here, by rank.
std::vector<std::string> exchange(const std::vector<std::string>& out);
/// Rank 0 gets every rank's bytes by rank; the others an empty list.
std::vector<std::string> gatherToRoot(const std::string& mine);
/// Every rank's bytes, concatenated in rank order, on every rank.
std::string gatherToAll(const std::string& mine);

}  // namespace moreau::comm
