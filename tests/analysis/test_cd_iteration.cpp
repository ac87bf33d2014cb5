#include <doctest/doctest.h>

#include "moreau/analysis/cd_iteration.hpp"

using namespace moreau;

TEST_SUITE("analysis") {
    TEST_CASE("cd iteration: q of each sweep order (eq. 46 for the random sweep)") {
        // (4 sqrt(e) - 5)/2 = 0.79744254140..., the paper's 0.797.
        CHECK(qRandomSweep() == doctest::Approx(0.7974425414).epsilon(1e-10));
        CHECK(qOfOrder(SweepOrder::RandomSweep) == qRandomSweep());
        CHECK(qOfOrder(SweepOrder::ShuffleOnce) == 1.0);
        CHECK(qOfOrder(SweepOrder::Fixed) == 1.0);
        CHECK(qOfOrder(SweepOrder::RandomSequential) == 0.5);
    }
}
