/// `moreau bench fclib` on a pile whose step is known exactly: two spheres
/// stacked on the floor at rest, in the Siconos harness's formats.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "support/experiment_run.hpp"
#include "support/temp_dir.hpp"
#ifdef MOREAU_TEST_FCLIB
#include <sys/wait.h>

#include "support/fclib_file.hpp"
#endif

using namespace moreau;
using doctest::Approx;

namespace {

/// Two spheres (R = 0.05, m = 1) on the floor, at rest: one step of Δt = 0.005
/// under g = 9.81 needs the impulses 2 m g Δt (floor) and m g Δt (between).
void writeStack(const std::string& path, double muFloor = 0.5) {
    std::ofstream out(path);
    out << "# spheres 2 radius 0.05 mass 1.0 inertia 0.0010000000000000002 dt 0.005 g 9.81\n2\n"
        << "# x y z vx vy vz wx wy wz fx fy fz tx ty tz\n"
        << "0 0 0.05 0 0 0 0 0 0 0 0 -9.81 0 0 0\n0 0 0.15 0 0 0 0 0 0 0 0 -9.81 0 0 0\n2\n"
        << "# A B mu cx cy cz n t1 t2\n"
        << "0 -1 " << muFloor << " 0 0 0 0 0 1 0 1 0 -1 0 0\n1 0 0.3 0 0 0.1 0 0 1 0 1 0 -1 0 0\n";
}

nlohmann::json bench(std::vector<std::string> sets) {
    return test::runQuiet(benchFclib, std::move(sets));
}

}  // namespace

TEST_SUITE("experiments") {
    TEST_CASE("bench fclib: the engine and the general solver give a stack's exact impulses") {
        test::TempDir tmp;
        const std::string bodies = (tmp.path / "stack.bodies").string(), rFile = (tmp.path / "stack.r").string();
        writeStack(bodies);
        const nlohmann::json doc = bench({"bench.bodies=" + bodies, "cd.criterion=natural", "cd.epsilon=1e-12",
                                          "cd.check_every=1", "bench.write_r=" + rFile});
        const nlohmann::json& res = doc["results"];
        CHECK(res["contacts"] == 2);
        CHECK(res["converged"] == true);
        CHECK(res["error"].get<double>() <= 1e-12);
        std::ifstream in(rFile);
        std::vector<double> r(6);
        for (double& x : r) in >> x;
        REQUIRE(in);
        CHECK(r[0] == Approx(2 * 9.81 * 0.005));  // floor, on sphere 0, along +z
        CHECK(r[3] == Approx(9.81 * 0.005));      // between, on sphere 1 (the file's A), along +z
        for (int k : {1, 2, 4, 5}) CHECK(std::abs(r[static_cast<std::size_t>(k)]) < 1e-14);
        // Started from its own answer (bench.r0), the first check finds it converged,
        // through the engine and through the general solver of the same problem.
        const nlohmann::json again = bench({"bench.bodies=" + bodies, "cd.criterion=natural", "cd.epsilon=1e-12",
                                            "cd.check_every=1", "bench.r0=" + rFile});
        CHECK(again["results"]["sweeps"] == 1);
        CHECK(again["results"]["error"].get<double>() <= 1e-12);
    }

    TEST_CASE("bench fclib: every cd.solver family on an FC3D problem, APGD with its relaxed error") {
        // One sliding contact, W = 2 I, q = (-1, 3, 0), mu = 0.4: Coulomb's
        // r = (0.5, -0.2, 0); De Saxce's relaxation (APGD's) r_n = (0.5 + 0.4 * 1.5) / 1.16.
        test::TempDir tmp;
        const std::string file = (tmp.path / "one.fc3d").string();
        {
            std::ofstream out(file);
            out << "FC3D 1\n1\n0.4\n-1 3 0\nW dense\n2 0 0\n0 2 0\n0 0 2\n";
        }
        for (const char* family : {"gauss-seidel", "newton", "apgd"}) {
            INFO(family);
            const std::string rFile = (tmp.path / (std::string(family) + ".r")).string();
            const nlohmann::json doc = bench({"bench.problem=" + file, std::string("cd.solver=") + family,
                                              "cd.criterion=natural", "cd.epsilon=1e-12", "cd.check_every=1",
                                              "bench.write_r=" + rFile});
            const nlohmann::json& res = doc["results"];
            CHECK(res["family"] == family);
            CHECK(res["converged"] == true);
            std::ifstream in(rFile);
            std::vector<double> r(3);
            for (double& x : r) in >> x;
            REQUIRE(in);
            if (std::string(family) == "apgd") {
                CHECK(res["relaxed_error"].get<double>() <= 1e-12);
                CHECK(res["error"].get<double>() > 1e-3);  // not Coulomb's law where the contact slides
                CHECK(r[0] == Approx((0.5 + 0.4 * 1.5) / 1.16).epsilon(1e-10));
            } else {
                CHECK_FALSE(res.contains("relaxed_error"));
                CHECK(res["error"].get<double>() <= 1e-12);
                CHECK(r[0] == Approx(0.5).epsilon(1e-12));
                CHECK(r[1] == Approx(-0.2).epsilon(1e-12));
            }
        }
        // A tolerance a family cannot reach in its iterations: reported, not silent
        // (a coupled W, which no gradient step solves exactly).
        const std::string coupled = (tmp.path / "coupled.fc3d").string();
        {
            std::ofstream out(coupled);
            out << "FC3D 1\n1\n0.4\n-1 3 0\nW dense\n2 0.5 0.3\n0.5 2 0.1\n0.3 0.1 2\n";
        }
        const nlohmann::json capped = bench({"bench.problem=" + coupled, "cd.solver=apgd", "cd.criterion=natural",
                                             "cd.epsilon=1e-30", "cd.max_iterations=5"});
        CHECK(capped["results"]["converged"] == false);
        CHECK(capped["results"]["sweeps"] == 5);
    }

    TEST_CASE("bench fclib refuses bad piles and settings with one line naming the file") {
        test::TempDir tmp;
        const std::string bodies = (tmp.path / "stack.bodies").string();
        writeStack(bodies);
        CHECK_THROWS_WITH_AS(bench({}), doctest::Contains("set exactly one of bench.problem"), InputError);
        CHECK_THROWS_WITH_AS(bench({"bench.bodies=" + bodies, "bench.write_r=" + (tmp.path / "no/r.txt").string()}),
                             doctest::Contains("does not exist"), InputError);
        const std::string shortR = (tmp.path / "short.r").string();
        std::ofstream(shortR) << "1 2 3\n";
        CHECK_THROWS_WITH_AS(bench({"bench.bodies=" + bodies, "bench.r0=" + shortR}),
                             doctest::Contains("6 in all (it holds 3"), InputError);
        {
            std::ofstream out(bodies, std::ios::app);
            out << "7\n";
        }
        CHECK_THROWS_WITH_AS(bench({"bench.bodies=" + bodies}), doctest::Contains("stack.bodies: numbers after"),
                             InputError);
    }

#if defined(MOREAU_BINARY) && defined(MOREAU_TEST_FCLIB)
    TEST_CASE("moreau bench fclib refuses a crafted FCLIB file with exit 2 and one line naming it") {
        test::TempDir tmp;
        auto f = test::diagonalProblem(2);
        (*f.p)[5] = 3000000;  // a row index past W's 6 rows
        const std::string path = tmp.write("crafted.hdf5", test::fclibImage(f));
        FILE* pipe = popen((std::string(MOREAU_BINARY) + " bench fclib --set bench.problem=" + path + " 2>&1 >/dev/null")
                               .c_str(),
                           "r");
        REQUIRE(pipe != nullptr);
        std::string text;
        char buf[512];
        while (fgets(buf, sizeof buf, pipe)) text += buf;
        const int status = pclose(pipe);
        CAPTURE(text);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 2);
        CHECK(text.find(path + ": W entry 5 at (3000000, 5) lies outside 0..5") != std::string::npos);
        CHECK(std::count(text.begin(), text.end(), '\n') == 1);
    }
#endif
}
