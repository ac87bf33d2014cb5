// The progress line of experiments and benches (core/progress.hpp): what it
// says for a plan in units, in steps, and without one.
#include <doctest/doctest.h>

#include "moreau/core/progress.hpp"

using namespace moreau;

TEST_CASE("progress line: the fraction and ETA of the plan, elapsed time, steps and the note") {
    {
        progress::Line line("stress-probes", false);  // draws nothing: the text alone
        CHECK(progress::open());
        CHECK(progress::text(1.0) == "stress-probes  1s");
        progress::expectUnits(4);
        progress::advance();
        progress::notef("%s probe %d/%d", "refined", 1, 4);
        // A quarter done in 10 s: 30 s left at that rate.
        CHECK(progress::text(10.0) == "stress-probes   25.0 %  10s, ETA 30s  refined probe 1/4");
        for (int s = 0; s < 1234; ++s) progress::stepDone();
        CHECK(progress::text(3725.0) == "stress-probes   25.0 %  1h02m, ETA 3h06m  1 234 steps  refined probe 1/4");
    }
    CHECK_FALSE(progress::open());
    progress::note("ignored");  // no line: nothing kept
    {
        progress::Line line("bench md-step", false);
        progress::expectSteps(2000);
        for (int s = 0; s < 500; ++s) progress::stepDone();
        CHECK(progress::text(1.0) == "bench md-step   25.0 %  1s  500 steps");  // no ETA in the first 2 s
        CHECK(progress::text(75.0) == "bench md-step   25.0 %  1m15s, ETA 3m45s  500 steps");
        for (int s = 0; s < 5000; ++s) progress::stepDone();
        CHECK(progress::text(300.0) == "bench md-step  100.0 %  5m00s, ETA 0s  5 500 steps");  // past the plan
    }
}
