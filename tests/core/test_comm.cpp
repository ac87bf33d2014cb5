// Threads per MPI rank (core/comm.hpp): the node's cores over its ranks.
#include <doctest/doctest.h>

#include "moreau/core/comm.hpp"

TEST_CASE("threads per rank: the node's cores over the ranks on it, at least one, within the rank's cores") {
    using moreau::comm::threadsPerRank;
    CHECK(threadsPerRank(16, 4, 16) == 4);
    CHECK(threadsPerRank(16, 3, 16) == 5);  // the remainder idles rather than oversubscribing
    CHECK(threadsPerRank(2, 2, 2) == 1);
    CHECK(threadsPerRank(2, 3, 2) == 1);   // more ranks than cores: one each
    CHECK(threadsPerRank(16, 4, 1) == 1);  // bound to one core by mpirun
    CHECK(threadsPerRank(16, 2, 0) == 8);  // affinity unknown
    CHECK(threadsPerRank(0, 2, 4) == 1);   // cores unknown
}
