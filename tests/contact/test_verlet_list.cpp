/// The Verlet list changes speed, never results: it must give exactly the
/// cell grid's contacts while grains move.
#include <doctest/doctest.h>

#include "moreau/contact/detection.hpp"
#include "moreau/core/rng.hpp"
#include "support/cd_steps.hpp"

using namespace moreau;

TEST_SUITE("contact") {
    TEST_CASE("Verlet list equals the cell grid on a moving packing, with few rebuilds") {
        for (bool periodic : {false, true}) {
            CAPTURE(periodic);
            World w = moreau::test::randomSpheres(800, 10.0);
            if (periodic) {
                w.periodic = {true, true, false};
                w.boxMin = Vec3::Zero();
                w.boxMax = Vec3(10, 10, 10);
            }
            moreau::test::addPlane(w, Vec3::Zero(), Vec3::UnitZ());
            Rng rng(11);
            for (std::size_t i = 0; i < w.numGrains; ++i)
                w.v[i] = Vec3(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
            const double margin = 0.05, skin = 0.1, dt = 0.004;
            CellGridDetector grid;
            VerletListDetector verlet(skin);
            std::vector<Contact> a, b;
            bool allEqual = true;
            const int steps = 300;
            for (int s = 0; s < steps; ++s) {
                grid.detect(w, margin, a);
                verlet.detect(w, margin, b);
                bool equal = a.size() == b.size();
                for (std::size_t k = 0; equal && k < a.size(); ++k)
                    equal = a[k].key == b[k].key && a[k].gap == b[k].gap && a[k].n == b[k].n;
                allEqual = allEqual && equal;
                for (std::size_t i = 0; i < w.numGrains; ++i) {
                    w.x[i] += dt * w.v[i];
                    for (int k = 0; k < 3; ++k)
                        if (w.periodic[k]) w.x[i][k] -= 10.0 * std::floor(w.x[i][k] / 10.0);
                }
            }
            CHECK(allEqual);
            CHECK(a.size() > 10);
            CHECK(verlet.builds() > 2);          // grains moved far enough to force rebuilds
            CHECK(verlet.builds() < steps / 5);  // and the list saved most grid passes
        }
    }
}
