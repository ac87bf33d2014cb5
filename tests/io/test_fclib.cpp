/// The local problems' readers against hostile files: FCLIB (HDF5) files whose
/// sizes, indices, pointers and vectors disagree, and text files declaring
/// more than they hold. Each is refused with an InputError naming the file and
/// what is wrong, before anything is read out of bounds or allocated for it.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "moreau/cd/natural_map.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/fclib.hpp"
#include "support/temp_dir.hpp"
#ifdef MOREAU_TEST_FCLIB
#include "support/fclib_file.hpp"
#endif

using namespace moreau;

TEST_SUITE("cd") {
    TEST_CASE("FC3D text files declaring more than they hold are refused before allocating") {
        test::TempDir tmp;
        // 10^9 contacts would be 32 GB of mu and q; the file holds three numbers.
        const std::string huge = tmp.write("huge.fc3d", "FC3D 1\n1000000000\n0.5 -1 0\n");
        CHECK_THROWS_WITH_AS(readLocalProblem(huge),
                             doctest::Contains("huge.fc3d: declares 1000000000 contacts (4 numbers each for mu and q) "
                                               "but holds only 3 more tokens"),
                             InputError);
        const std::string dense = tmp.write("dense.fc3d", "FC3D 1\n1\n0.5\n-1 0 0\nW dense\n1 0 0\n");
        CHECK_THROWS_WITH_AS(readLocalProblem(dense), doctest::Contains("dense.fc3d: declares a dense W of 3 x 3 numbers"),
                             InputError);
        const std::string triplets =
            tmp.write("triplets.fc3d", "FC3D 1\n1\n0.5\n-1 0 0\nW triplet 999999999\n0 0 1\n");
        CHECK_THROWS_WITH_AS(readLocalProblem(triplets), doctest::Contains("triplets.fc3d: declares 999999999 W entries"),
                             InputError);
        // What they hold exactly is read.
        const std::string ok = tmp.write("ok.fc3d", "FC3D 1\n1\n0.5\n-1 0 0\nW dense\n2 0 0 0 2 0 0 0 2\n");
        CHECK(readLocalProblem(ok).contacts() == 1);
    }

#ifdef MOREAU_TEST_FCLIB
    TEST_CASE("FCLIB files are read in all three storages of W") {
        test::TempDir tmp;
        auto read = [&](const test::FclibFields& f, const std::string& name) {
            const std::string path = tmp.write(name, test::fclibImage(f));
            return readLocalProblem(path);
        };
        // W = 2 I plus one off-diagonal entry W(0, 3) = 0.5, as triplets,
        // compressed columns and compressed rows.
        test::FclibFields t = test::diagonalProblem(2);
        t.p->push_back(0);
        t.i->push_back(3);
        t.x->push_back(0.5);
        *t.nz += 1;
        *t.nzmax += 1;
        test::FclibFields csc = test::diagonalProblem(2, true);
        // column 3 holds rows 0 and 3
        csc.i = std::vector<long long>{0, 1, 2, 0, 3, 4, 5};
        csc.x = std::vector<double>{2, 2, 2, 0.5, 2, 2, 2};
        csc.p = std::vector<long long>{0, 1, 2, 3, 5, 6, 7};
        csc.nzmax = 7;
        test::FclibFields csr = csc;
        csr.nz = -2;  // row 0 holds columns 0 and 3
        csr.i = std::vector<long long>{0, 3, 1, 2, 3, 4, 5};
        csr.x = std::vector<double>{2, 0.5, 2, 2, 2, 2, 2};
        csr.p = std::vector<long long>{0, 2, 3, 4, 5, 6, 7};
        for (const auto& [f, name] : {std::pair{&t, "t.hdf5"}, std::pair{&csc, "csc.hdf5"}, std::pair{&csr, "csr.hdf5"}}) {
            CAPTURE(name);
            const LocalProblem p = read(*f, name);
            REQUIRE(p.contacts() == 2);
            CHECK(p.rowStart == std::vector<std::size_t>{0, 2, 3});
            CHECK(p.col == std::vector<std::int32_t>{0, 1, 1});
            CHECK(p.block[0] == 2.0 * Mat3::Identity());
            CHECK(p.block[1](0, 0) == 0.5);
            CHECK(p.block[1].cwiseAbs().sum() == 0.5);
            CHECK(p.mu == std::vector<double>{0.5, 0.5});
            CHECK(p.q[0] == -1.0);
        }
    }

    TEST_CASE("FCLIB files whose sizes, indices or pointers disagree are refused naming the file") {
        test::TempDir tmp;
        const std::string path = (tmp.path / "bad.hdf5").string();
        auto refused = [&](const test::FclibFields& f, const char* what) {
            {
                std::ofstream out(path, std::ios::binary | std::ios::trunc);
                const std::string image = test::fclibImage(f);
                out.write(image.data(), static_cast<std::streamsize>(image.size()));
            }
            std::string message;
            try {
                (void)readLocalProblem(path);
            } catch (const InputError& e) {
                message = e.what();
            }
            CAPTURE(what);
            CHECK(message.find(path + ": ") == 0);
            CHECK(message.find(what) != std::string::npos);
            CHECK(message.find('\n') == std::string::npos);
            // The same bytes from memory: the fuzz harness's entry.
            CHECK_THROWS_AS(readFclibImage(test::fclibImage(f), "image"), InputError);
        };
        using test::diagonalProblem;
        {  // the heap overflow of issue 38: a row index past W's rows
            auto f = diagonalProblem(2);
            (*f.p)[5] = 3000000;
            refused(f, "W entry 5 at (3000000, 5) lies outside 0..5");
        }
        {
            auto f = diagonalProblem(2);
            (*f.i)[1] = -7;
            refused(f, "W entry 1 at (1, -7) lies outside 0..5");
        }
        {  // compressed columns: a pointer past nzmax, decreasing, not from 0
            auto f = diagonalProblem(2, true);
            (*f.p)[6] = 99;
            refused(f, "W/p[6] = 99 (allowed: non-decreasing, at most W/nzmax = 6)");
            (*f.p)[6] = 6;
            (*f.p)[3] = 1;
            refused(f, "W/p[3] = 1 (allowed: non-decreasing");
            (*f.p)[3] = 3;
            (*f.p)[0] = 1;
            refused(f, "W/p starts at 1 (allowed: 0)");
        }
        {  // a row index of a compressed column out of range
            auto f = diagonalProblem(2, true);
            (*f.i)[2] = 6;
            refused(f, "W entry 2 at (6, 2) lies outside 0..5");
        }
        {  // arrays shorter or longer than the sizes declare
            auto f = diagonalProblem(2);
            f.x->resize(3);
            refused(f, "W/x holds 3 entries (W/m, W/nz, W/nzmax declare 6)");
            f = diagonalProblem(2);
            f.p->pop_back();
            refused(f, "W/p holds 5 entries (W/m, W/nz, W/nzmax declare 6)");
            f = diagonalProblem(2, true);
            f.p->push_back(6);
            refused(f, "W/p holds 8 entries (W/m, W/nz, W/nzmax declare 7)");
            f = diagonalProblem(2);
            f.nz = 7;
            refused(f, "W/nz 7 exceeds W/nzmax 6");
        }
        {  // mu and q against W
            auto f = diagonalProblem(2);
            f.mu->pop_back();
            refused(f, "mu holds 1 numbers (W has 2 contacts)");
            f = diagonalProblem(2);
            f.q->push_back(0.0);
            refused(f, "q holds 7 numbers (W has 6 rows)");
            f = diagonalProblem(2);
            f.q.reset();
            refused(f, "'/fclib_local/vectors/q' is missing");
            f = diagonalProblem(2, false, true);
            f.r->resize(4);
            refused(f, "the solution's r holds 4 numbers (W has 6 rows)");
        }
        {  // W's shape and storage, the problem's kind
            auto f = diagonalProblem(2);
            f.n = 9;
            refused(f, "W is 6 x 9 (allowed: square, 3 rows per contact");
            f = diagonalProblem(2);
            f.nz = -3;
            refused(f, "W/nz -3 (allowed: >= 0 triplets, -1 compressed columns, -2 compressed rows)");
            f = diagonalProblem(2);
            f.nzmax = -1;
            refused(f, "W/nzmax -1");
            f = diagonalProblem(2);
            f.indicesAsReals = true;
            refused(f, "'/fclib_local/W/p' holds non-integers");
            f = diagonalProblem(2);
            (*f.x)[4] = std::nan("");
            refused(f, "W entry 4 is not finite");
            f = diagonalProblem(2);
            f.spacedim = 2;
            refused(f, "spacedim 2 (allowed: 3)");
            f = diagonalProblem(2);
            f.equalities = true;
            refused(f, "has equality constraints V, R");
            f = diagonalProblem(2);
            f.global = true;
            refused(f, "a global problem (allowed: a local one");
            f = diagonalProblem(2);
            (*f.mu)[1] = -0.1;
            refused(f, "mu of contact 1 is -0.1");
        }
        // Not HDF5 past its signature.
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << "\x89HDF\r\n\x1a\n" << std::string(200, 'x');
        }
        CHECK_THROWS_WITH_AS(readLocalProblem(path), doctest::Contains("bad.hdf5: not a readable HDF5 file"),
                             InputError);
        // int64 indices read as integers.
        auto wide = diagonalProblem(2);
        wide.wideIndices = true;
        CHECK(readFclibImage(test::fclibImage(wide), "wide").contacts() == 2);
    }

    TEST_CASE("FCLIB's merit of a stored solution is computed with u = W r + q") {
        // W = 2 I, q_n = -1, mu = 0.5 at two contacts: r_n = 1/2 is the answer
        // (u = 0), FCLIB's MERIT_1 is |r - P_K(r - (u + mu |u_t| e_n))| over
        // 1 + sqrt(|q|) = 1 + 2^(1/4). With u taken as q (W unread), the
        // answer would score sqrt(2) / (1 + 2^(1/4)) = 0.646.
        const double scale = 1.0 + std::pow(2.0, 0.25);
        auto merit = [&](double rn, bool compressed) {
            auto f = test::diagonalProblem(2, compressed, true);
            for (std::size_t c = 0; c < 2; ++c) (*f.r)[3 * c] = rn;
            return readFclibImage(test::fclibImage(f), "m").fclibMerit;
        };
        for (bool compressed : {false, true}) {
            CAPTURE(compressed);
            CHECK(merit(0.5, compressed) <= 1e-15);
            // r_n = 1/4: u_n = -1/2, the residual 1/2 per contact.
            CHECK(merit(0.25, compressed) == doctest::Approx(std::sqrt(0.5) / scale).epsilon(1e-14));
            CHECK(merit(0.0, compressed) == doctest::Approx(std::sqrt(2.0) / scale).epsilon(1e-14));
        }
        // A problem Moreau writes (W compressed by columns) scores the same
        // residual as naturalError, over FCLIB's normalisation.
        LocalProblem p = readFclibImage(test::fclibImage(test::diagonalProblem(3)), "w");
        p.block[0](0, 1) = p.block[0](1, 0) = 0.3;  // not diagonal
        const std::vector<double> r = {0.4, 0.1, -0.05, 0.5, 0.0, 0.0, 0.2, 0.0, 0.1};
        test::TempDir tmp;
        const std::string file = (tmp.path / "p.hdf5").string();
        writeFclib(p, file, &r);
        const LocalProblem back = readLocalProblem(file);
        const std::vector<double> u = p.velocity(r);
        double e2 = 0.0, q2 = 0.0;
        for (std::size_t c = 0; c < 3; ++c) {
            const Vec3 rc(r[3 * c], r[3 * c + 1], r[3 * c + 2]), uc(u[3 * c], u[3 * c + 1], u[3 * c + 2]);
            e2 += naturalMapResidual2(rc, uc, Vec3::UnitX(), p.mu[c]);
        }
        for (double v : p.q) q2 += v * v;
        CHECK(back.solution == r);
        CHECK(back.fclibMerit > 0.01);
        // A link planted where the problem goes is replaced, not written through.
        const auto victim = tmp.path / "victim.txt", link = tmp.path / "link.hdf5";
        std::ofstream(victim) << "precious";
        std::filesystem::create_symlink(victim, link);
        writeFclib(p, link.string(), &r);
        CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(link)));
        CHECK(readLocalProblem(link.string()).solution == r);
        std::ifstream kept(victim);
        std::string text;
        kept >> text;
        CHECK(text == "precious");
        for (const auto& e : std::filesystem::directory_iterator(tmp.path))  // no temporary folder left
            CHECK(e.path().filename().string().rfind(".fclib-", 0) == std::string::npos);
        CHECK(back.fclibMerit == doctest::Approx(std::sqrt(e2) / (1.0 + std::sqrt(std::sqrt(q2)))).epsilon(1e-13));
    }
#endif
}
