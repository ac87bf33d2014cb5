// The output folder (io/out_dir.hpp): one holder at a time, files never
// created through a link, links and special files written in place.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/io/out_dir.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
namespace fs = std::filesystem;

namespace {

using moreau::test::readFile;
using moreau::test::TempDir;

/// The InputError's message, or "" when `f` throws none.
template <class F>
std::string inputError(F f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_SUITE("io") {
    TEST_CASE("OutDirLock: one holder, named in the refusal, released with its file, a link refused") {
        TempDir tmp;
        const fs::path lockFile = tmp.path / kOutDirLockName;
        {
            const OutDirLock first(tmp.path, "--out");
            CHECK(first.held());
            CHECK(fs::is_regular_file(lockFile));
            // flock is per open file: a second lock in this process is refused too.
            const std::string why = inputError([&] { OutDirLock second(tmp.path, "--out"); });
            CHECK_MESSAGE(why.find("--out '" + tmp.path.string() + "': in use by moreau pid " +
                                   std::to_string(::getpid())) == 0,
                          why);
            CHECK(why.find('\n') == std::string::npos);
        }
        CHECK(!fs::exists(lockFile));
        // A stale file (a holder that was killed): taken over.
        std::ofstream(lockFile) << "moreau pid 1 on elsewhere (started long ago)\n";
        {
            const OutDirLock taken(tmp.path, "--out");
            CHECK(readFile(lockFile).find("moreau pid " + std::to_string(::getpid())) == 0);
        }
        // A planted link: never followed.
        const fs::path target = tmp.path / "target";
        std::ofstream(target) << "keep";
        fs::create_symlink(target, lockFile);
        const std::string why = inputError([&] { OutDirLock planted(tmp.path, "--out"); });
        CHECK_MESSAGE(why.find("symbolic link") != std::string::npos, why);
        CHECK(readFile(target) == "keep");
    }

    TEST_CASE("writeFileAtomically: unique temporaries, links written through but never created through") {
        TempDir tmp;
        const fs::path file = tmp.path / "summary.json";
        // A link planted at the old fixed temporary name is not followed.
        const fs::path precious = tmp.path / "precious";
        std::ofstream(precious) << "keep";
        fs::create_symlink(precious, tmp.path / "summary.json.tmp");
        writeFileAtomically(file, "one\n");
        CHECK(readFile(file) == "one\n");
        CHECK(readFile(precious) == "keep");
        for (const auto& entry : fs::directory_iterator(tmp.path)) {
            const bool leftover = entry.path().filename().string().find(".tmp") != std::string::npos &&
                                  entry.path() != tmp.path / "summary.json.tmp";
            CHECK_MESSAGE(!leftover, entry.path().string());
        }
        // An existing link is written through and stays a link.
        const fs::path linked = tmp.path / "series.csv", outside = tmp.path / "outside.csv";
        std::ofstream(outside) << "old";
        fs::create_symlink(outside, linked);
        writeFileAtomically(linked, "new\n", true);
        CHECK(fs::is_symlink(linked));
        CHECK(readFile(outside) == "new\n");
        // A link to nothing: refused, its target not made.
        const fs::path dangling = tmp.path / "log.txt", nowhere = tmp.path / "nowhere";
        fs::create_symlink(nowhere, dangling);
        CHECK(inputError([&] { writeFileAtomically(dangling, "x"); }).find(dangling.string()) != std::string::npos);
        CHECK(inputError([&] { OutputStream s(dangling, false); }).find(dangling.string()) != std::string::npos);
        CHECK(!fs::exists(nowhere));
        // /dev/null through a link, as a stream.
        fs::create_symlink("/dev/null", tmp.path / "null.csv");
        OutputStream null(tmp.path / "null.csv", false);
        null.write("row\n");
        null.flush();
        CHECK(fs::is_symlink(tmp.path / "null.csv"));
    }

    TEST_CASE("temporaryBase: what a killed run's temporaries stand for") {
        CHECK(temporaryBase("summary.json.Ab12Cd.tmp") == "summary.json");
        CHECK(temporaryBase("summary.json.tmp") == "summary.json");
        CHECK(temporaryBase("grains_000010.vtp.x9Y8z7.tmp") == "grains_000010.vtp");
        CHECK(temporaryBase("summary.json").empty());
        CHECK(temporaryBase(".tmp").empty());
    }
}
