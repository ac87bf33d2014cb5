// grains.shape = clump in scene files: the clump's spheres, sizes, seeded
// orientations, packing files with orientation columns, and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "support/input_error.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
using moreau::test::errorOf;
using moreau::test::TempDir;

namespace {

constexpr const char* kDimers =
    "[simulation]\nmethod = md\n[grains]\nsource = random\nshape = clump\ndensity = 2\n"
    "[clump]\nspheres = \"-0.5 0 0 0.5; 0.5 0 0 0.5\"\n"
    "[random]\ncount = 20\nr_min = 0.4\nr_max = 0.6\nbox_min = 0 0 0\nbox_max = 10 10 10\n";

std::string loadError(const std::string& text, const std::vector<std::string>& sets = {}) {
    return errorOf([&] { loadSceneText(text, "t.ini", sets); });
}

}  // namespace

TEST_SUITE("clump scenes") {
    TEST_CASE("a random packing of dimers: sizes in the radius range, bounding spheres apart, seeded orientations") {
        const Scene s = loadSceneText(kDimers, "t.ini", {});
        const World& w = s.world;
        REQUIRE(w.numGrains == 20);
        REQUIRE(w.hasClumps());
        REQUIRE(w.clumpShapes.size() == 1);
        const ClumpShape& shape = w.clumpShapes[0];
        CHECK(shape.boundingRadius == doctest::Approx(1.0).epsilon(1e-15));
        CHECK(shape.volume == doctest::Approx(2.0 * 4.0 / 3.0 * std::numbers::pi * 0.125).epsilon(1e-14));
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            CHECK(w.shape[i] == 1);
            CHECK(w.size[i] >= 0.4 * (1 - 1e-15));
            CHECK(w.size[i] <= 0.6 * (1 + 1e-15));
            CHECK(w.radius[i] == doctest::Approx(w.size[i]).epsilon(1e-15));  // bounding radius = size here
            const double s3 = w.size[i] * w.size[i] * w.size[i];
            CHECK(w.mass[i] == doctest::Approx(2.0 * shape.volume * s3).epsilon(1e-14));
            // The dimer's long axis is its first principal axis (smallest moment).
            const Vec3 I = w.principalInertia(i);
            CHECK(I[0] == doctest::Approx(2.0 * 0.4 * (w.mass[i] / 2) * std::pow(0.5 * w.size[i], 2)).epsilon(1e-12));
            CHECK(std::abs(w.q[i].norm() - 1.0) < 1e-15);
            for (std::size_t j = 0; j < i; ++j) CHECK((w.x[i] - w.x[j]).norm() >= w.radius[i] + w.radius[j] - 1e-12);
        }
        // Orientations are drawn: not all alike, and the same seed gives the same bits.
        CHECK(w.q[0].angularDistance(w.q[1]) > 1e-3);
        const Scene again = loadSceneText(kDimers, "t.ini", {});
        for (std::size_t i = 0; i < w.numGrains; ++i) CHECK(again.world.q[i].coeffs() == w.q[i].coeffs());
        const Scene other = loadSceneText(kDimers, "t.ini", {"simulation.seed=2"});
        CHECK(other.world.q[0].coeffs() != w.q[0].coeffs());
    }

    TEST_CASE("packing files for clumps: an orientation after the size, identity without it") {
        TempDir dir;
        const double h = std::sqrt(0.5);
        dir.write("p3.txt", "1 1 1 0.5 " + std::to_string(h) + " 0 0 " + std::to_string(h) + "\n5 5 5 0.5\n");
        const Scene s3 = loadSceneText(
            std::string(kDimers) + "[packing]\nfile = " + (dir.path / "p3.txt").string() + "\n", "t.ini",
            {"grains.source=file"});
        REQUIRE(s3.world.numGrains == 2);
        // Body axis x (the dimer's) turned by 90° about z: along y.
        CHECK((s3.world.q[0] * Vec3::UnitX() - Vec3::UnitY()).norm() < 1e-6);
        CHECK(s3.world.q[1].angularDistance(Quat::Identity()) < 1e-15);
        CHECK(s3.world.size[0] == 0.5);
        // A file's row places the frame the spheres were given in: a dimer
        // whose spheres sit at x = 0 and x = 1 has its centre of mass half a
        // size along its axis, turned here by 90° about z.
        dir.write("shifted.txt", "1 1 1 1.0 " + std::to_string(h) + " 0 0 " + std::to_string(h) + "\n");
        const Scene shifted = loadSceneText(
            std::string(kDimers) + "[packing]\nfile = " + (dir.path / "shifted.txt").string() + "\n", "t.ini",
            {"grains.source=file", "clump.spheres=0 0 0 0.5; 1 0 0 0.5"});
        CHECK((shifted.world.x[0] - Vec3(1.0, 1.5, 1.0)).norm() < 1e-6);
        CHECK(shifted.world.clumpShapes[0].centroid.isApprox(Vec3(0.5, 0.0, 0.0), 1e-14));
        // 2D: x y z size angle.
        dir.write("p2.txt", "1 1 0 0.5 1.5707963267948966\n4 4 0 0.5\n");
        const Scene s2 = loadSceneText(std::string(kDimers) + "[packing]\nfile = " + (dir.path / "p2.txt").string() + "\n",
                                       "t.ini", {"grains.source=file", "simulation.dimension=2"});
        REQUIRE(s2.world.numGrains == 2);
        CHECK((s2.world.q[0] * Vec3::UnitX() - Vec3::UnitY()).norm() < 1e-12);
        CHECK(s2.world.invInertia[0].x() == 0.0);
        CHECK(s2.world.invInertia[0].z() > 0.0);
        // A quaternion far from unit length: the file and line.
        dir.write("bad.txt", "1 1 1 0.5 1 0 0 0\n2 2 2 0.5 1 1 0 0\n");
        CHECK(errorOf([&] {
                  loadSceneText(std::string(kDimers) + "[packing]\nfile = " + (dir.path / "bad.txt").string() + "\n",
                                "t.ini", {"grains.source=file"});
              }).find("bad.txt', line 2: quaternion '1 1 0 0' has length 1.414214 (allowed: 1 within 1e-6)") !=
              std::string::npos);
    }

    TEST_CASE("bad clumps are refused with the key and what is allowed") {
        const std::string allowed = " (allowed: 'x y z r; x y z r; ...', 1 to 16 spheres of radius > 0)";
        CHECK(loadError(kDimers, {"clump.spheres="}) ==
              "--set: key 'clump.spheres': '' holds no sphere (grains.shape = clump needs them)" + allowed);
        CHECK(loadError(kDimers, {"clump.spheres=0 0 0 -1"}) ==
              "--set: key 'clump.spheres': '0 0 0 -1' has the sphere '0 0 0 -1' of radius -1" + allowed);
        CHECK(loadError(kDimers, {"clump.spheres=0 0 0 inf"}) ==
              "--set: key 'clump.spheres': '0 0 0 inf' has the sphere '0 0 0 inf', not four finite numbers" + allowed);
        CHECK(loadError(kDimers, {"clump.spheres=0 0 1; 1 0 0 1"}).find("has the sphere '0 0 1', not four") !=
              std::string::npos);
        std::string many;
        for (int k = 0; k < 17; ++k) many += std::to_string(k) + " 0 0 0.5;";
        CHECK(loadError(kDimers, {"clump.spheres=" + many}).find("holds 17 spheres") != std::string::npos);
        CHECK(loadError(kDimers, {"simulation.dimension=2", "grains.inertia=sphere"}) ==
              "--set: key 'grains.inertia': 'sphere' is not possible with grains.shape = clump in 2D (clumps of disks) (allowed: "
              "auto|disk)");
    }
}
