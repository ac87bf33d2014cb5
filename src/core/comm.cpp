#include "moreau/core/comm.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#ifdef MOREAU_HAVE_MPI
#include <mpi.h>
#endif

namespace moreau::comm {

int threadsPerRank(int nodeCores, int ranksOnNode, int usableCores) {
    const int share = std::max(1, nodeCores / std::max(1, ranksOnNode));
    return std::max(1, std::min(share, usableCores > 0 ? usableCores : share));
}

#ifdef MOREAU_HAVE_MPI

namespace {

bool gStarted = false;

/// Byte counts and offsets of a gather or an all-to-all (MPI counts are int).
std::vector<int> offsetsOf(const std::vector<int>& counts, int& total) {
    std::vector<int> at(counts.size());
    total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        at[r] = total;
        total += counts[r];
    }
    return at;
}

}  // namespace

bool available() { return true; }

void start(int* argc, char*** argv) {
    // Open MPI's mpirun (OMPI_*), PMIx and Hydra (PMI_*) launchers set these;
    // a plain `moreau ...` is serial and never touches MPI.
    if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK") && !std::getenv("PMI_SIZE")) return;
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    gStarted = true;
    // Threads per rank: the node's cores shared among the ranks on it (and
    // no more than the cores this rank may run on), unless OMP_NUM_THREADS
    // says otherwise; --threads still overrides both.
    if (!std::getenv("OMP_NUM_THREADS")) {
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        int local = 1;
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
        omp_set_num_threads(threadsPerRank(static_cast<int>(std::thread::hardware_concurrency()), local,
                                           omp_get_num_procs()));
    }
}

void stop() {
    if (gStarted) MPI_Finalize();
    gStarted = false;
}

int ranks() {
    int n = 1;
    if (gStarted) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

int rank() {
    int r = 0;
    if (gStarted) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static std::uint64_t gCollectives = 0;  // this rank's calls of a collective over every rank

void abortAll(int status) {
    if (gStarted) MPI_Abort(MPI_COMM_WORLD, status);
    std::exit(status);
}

double maxOverRanks(double x) {
    if (!gStarted) return x;
    ++gCollectives;
    double y = x;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return y;
}

void maxOverRanks(std::vector<double>& x) {
    if (!gStarted) return;
    ++gCollectives;
        MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

std::uint64_t sumOverRanks(std::uint64_t x) {
    if (!gStarted) return x;
    ++gCollectives;
    std::uint64_t y = x;
    MPI_Allreduce(&x, &y, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return y;
}

void sumOverRanks(std::vector<std::uint64_t>& x) {
    if (!gStarted) return;
    ++gCollectives;
        MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

std::string broadcast(const std::string& text) {
    if (!gStarted) return text;
    ++gCollectives;
    auto size = static_cast<std::uint64_t>(text.size());
    MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::string out = text;
    out.resize(size);
    MPI_Bcast(out.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
}

void exchange(const std::vector<std::string_view>& out, Mailbox& box, bool sameSizes) {
    const auto n = static_cast<std::size_t>(ranks());
    if (sameSizes && gStarted) {
        if (box.sendCount_.size() != n)
            throw std::logic_error("comm::exchange: the same sizes as an exchange this mailbox never made");
        const auto me = static_cast<std::size_t>(rank());
        std::vector<MPI_Request> requests;
        requests.reserve(2 * n);
        for (std::size_t r = 0; r < n; ++r) {
            if (static_cast<int>(out[r].size()) != box.sendCount_[r])
                throw std::logic_error("comm::exchange: a part's size changed in an exchange of the same sizes");
            if (r != me && box.count_[r] > 0)
                MPI_Irecv(box.received_.data() + box.at_[r], box.count_[r], MPI_BYTE, static_cast<int>(r), 0,
                          MPI_COMM_WORLD, &requests.emplace_back());
        }
        for (std::size_t r = 0; r < n; ++r)
            if (r != me && !out[r].empty())
                MPI_Isend(out[r].data(), static_cast<int>(out[r].size()), MPI_BYTE, static_cast<int>(r), 0,
                          MPI_COMM_WORLD, &requests.emplace_back());
        std::copy(out[me].begin(), out[me].end(), box.received_.begin() + box.at_[me]);
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        return;
    }
    box.sendCount_.resize(n);
    box.count_.resize(n);
    box.sent_.clear();
    for (std::size_t r = 0; r < n; ++r) {
        box.sendCount_[r] = static_cast<int>(out[r].size());
        box.sent_ += out[r];
    }
    if (!gStarted) {
        box.received_.swap(box.sent_);
        box.count_ = box.sendCount_;
        box.at_.assign(1, 0);
        return;
    }
    ++gCollectives;  // the all-to-all of sizes (the same-sizes exchange above is point to point)
    MPI_Alltoall(box.sendCount_.data(), 1, MPI_INT, box.count_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int sent = 0, total = 0;
    box.sendAt_ = offsetsOf(box.sendCount_, sent);
    box.at_ = offsetsOf(box.count_, total);
    box.received_.resize(static_cast<std::size_t>(total));
    MPI_Alltoallv(box.sent_.data(), box.sendCount_.data(), box.sendAt_.data(), MPI_BYTE, box.received_.data(),
                  box.count_.data(), box.at_.data(), MPI_BYTE, MPI_COMM_WORLD);
}

void exchange(const std::vector<std::string_view>& out, Mailbox& box, const std::vector<int>& partners) {
    const auto n = static_cast<std::size_t>(ranks());
    const auto me = static_cast<std::size_t>(rank());
    box.sendCount_.assign(n, 0);
    box.count_.assign(n, 0);
    std::vector<char> partner(n, 0);
    for (const int p : partners) partner[static_cast<std::size_t>(p)] = 1;
    for (std::size_t r = 0; r < n; ++r) {
        box.sendCount_[r] = static_cast<int>(out[r].size());
        if (r != me && !out[r].empty() && !partner[r])
            throw std::logic_error("comm::exchange: a part for a rank that is not a partner");
    }
    if (!gStarted) {
        box.received_.assign(out[0].begin(), out[0].end());
        box.count_ = box.sendCount_;
        box.at_.assign(1, 0);
        return;
    }
    // The sizes, then the parts: tags of their own (the same-sizes exchange uses 0).
    constexpr int kSizes = 1, kParts = 2;
    std::vector<MPI_Request> requests;
    requests.reserve(2 * partners.size());
    for (const int p : partners) {
        MPI_Irecv(&box.count_[static_cast<std::size_t>(p)], 1, MPI_INT, p, kSizes, MPI_COMM_WORLD,
                  &requests.emplace_back());
        MPI_Isend(&box.sendCount_[static_cast<std::size_t>(p)], 1, MPI_INT, p, kSizes, MPI_COMM_WORLD,
                  &requests.emplace_back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    box.count_[me] = box.sendCount_[me];
    int total = 0;
    box.at_ = offsetsOf(box.count_, total);
    box.received_.resize(static_cast<std::size_t>(total));
    requests.clear();
    for (const int p : partners) {
        const auto r = static_cast<std::size_t>(p);
        if (box.count_[r] > 0)
            MPI_Irecv(box.received_.data() + box.at_[r], box.count_[r], MPI_BYTE, p, kParts, MPI_COMM_WORLD,
                      &requests.emplace_back());
        if (!out[r].empty())
            MPI_Isend(out[r].data(), static_cast<int>(out[r].size()), MPI_BYTE, p, kParts, MPI_COMM_WORLD,
                      &requests.emplace_back());
    }
    std::copy(out[me].begin(), out[me].end(), box.received_.begin() + box.at_[me]);
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

std::vector<std::string> gatherToRoot(const std::string& mine) {
    if (!gStarted) return {mine};
    ++gCollectives;
    const int n = ranks();
    int count = static_cast<int>(mine.size()), total = 0;
    std::vector<int> counts(static_cast<std::size_t>(n));
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    const std::vector<int> at = offsetsOf(counts, total);
    std::string all(rank() == 0 ? static_cast<std::size_t>(total) : 0, '\0');
    MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
    std::vector<std::string> parts;
    if (rank() == 0)
        for (std::size_t r = 0; r < counts.size(); ++r)
            parts.push_back(all.substr(static_cast<std::size_t>(at[r]), static_cast<std::size_t>(counts[r])));
    return parts;
}

std::string gatherToAll(const std::string& mine) {
    if (!gStarted) return mine;
    ++gCollectives;
    const int n = ranks();
    int count = static_cast<int>(mine.size()), total = 0;
    std::vector<int> counts(static_cast<std::size_t>(n));
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    const std::vector<int> at = offsetsOf(counts, total);
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD);
    return all;
}

std::uint64_t collectives() { return gCollectives; }

#else  // a serial build: one process, and every collective is its own input

bool available() { return false; }
void start(int*, char***) {}
void stop() {}
int ranks() { return 1; }
int rank() { return 0; }
void abortAll(int status) { std::exit(status); }
double maxOverRanks(double x) { return x; }
void maxOverRanks(std::vector<double>&) {}
std::uint64_t sumOverRanks(std::uint64_t x) { return x; }
void sumOverRanks(std::vector<std::uint64_t>&) {}
std::string broadcast(const std::string& text) { return text; }
std::uint64_t collectives() { return 0; }
void exchange(const std::vector<std::string_view>& out, Mailbox& box, bool) {
    box.sendCount_.assign(1, static_cast<int>(out[0].size()));
    box.count_ = box.sendCount_;
    box.at_.assign(1, 0);
    box.received_.assign(out[0]);
}
void exchange(const std::vector<std::string_view>& out, Mailbox& box, const std::vector<int>&) {
    exchange(out, box, false);
}
std::vector<std::string> gatherToRoot(const std::string& mine) { return {mine}; }
std::string gatherToAll(const std::string& mine) { return mine; }

#endif

}  // namespace moreau::comm
