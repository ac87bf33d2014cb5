#include <doctest/doctest.h>

#include <barrier>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "support/input_error.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
using moreau::test::errorOf;
using moreau::test::TempDir;

namespace {

/// Ranks as threads: PlanShare's collectives through a barrier.
class ThreadRanks {
public:
    explicit ThreadRanks(int n)
        : n_(n), sync_(n), counts_(static_cast<std::size_t>(n)), bytes_(static_cast<std::size_t>(n)),
          mail_(static_cast<std::size_t>(n)) {}

    PlanShare of(int r) {
        const auto me = static_cast<std::size_t>(r);
        PlanShare s;
        s.rank = r;
        s.ranks = n_;
        s.sum = [this, me](std::uint64_t x) {
            counts_[me] = x;
            sync_.arrive_and_wait();
            std::uint64_t all = 0;
            for (const std::uint64_t c : counts_) all += c;
            sync_.arrive_and_wait();
            return all;
        };
        s.gather = [this, me](const std::string& mine) {
            bytes_[me] = mine;
            sync_.arrive_and_wait();
            std::string all;
            for (const std::string& b : bytes_) all += b;
            sync_.arrive_and_wait();
            return all;
        };
        s.exchange = [this, me](std::vector<std::string> out) {
            mail_[me] = std::move(out);
            sync_.arrive_and_wait();
            std::vector<std::string> in;
            for (const std::vector<std::string>& from : mail_) in.push_back(from[me]);
            sync_.arrive_and_wait();
            return in;
        };
        return s;
    }

    /// f(rank, share) on every rank at once.
    template <class F>
    void run(F f) {
        std::vector<std::thread> threads;
        for (int r = 1; r < n_; ++r) threads.emplace_back([this, f, r] { f(r, of(r)); });
        f(0, of(0));
        for (std::thread& t : threads) t.join();
    }

private:
    int n_;
    std::barrier<> sync_;
    std::vector<std::uint64_t> counts_;
    std::vector<std::string> bytes_;
    std::vector<std::vector<std::string>> mail_;
};

/// What one rank's plan gave: its share's grains (id → position, radius) and
/// their packed specs, or the refusal.
struct Seen {
    std::size_t grains = 0;
    bool spread = false;
    std::map<std::size_t, std::pair<Vec3, double>> each;
    std::string packed, refused;
    std::shared_ptr<const ScenePlan> plan;
};

std::vector<Seen> planOnRanks(int n, const std::string& scene, const std::vector<std::string>& sets) {
    std::vector<Seen> seen(static_cast<std::size_t>(n));
    ThreadRanks ranks(n);
    ranks.run([&](int r, const PlanShare& share) {
        Seen& s = seen[static_cast<std::size_t>(r)];
        try {
            s.plan = planSceneFile(scene, sets, share);
        } catch (const InputError& e) {
            s.refused = e.what();
            return;
        }
        s.grains = s.plan->grains();
        s.spread = s.plan->spread();
        s.plan->each([&](std::size_t i, const Vec3& x, double radius) {
            s.each[i] = {x, radius};
            s.plan->pack(i, s.packed);
        });
    });
    return seen;
}

bool sameBits(const Vec3& a, const Vec3& b) {
    for (int k = 0; k < 3; ++k)
        if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) return false;
    return true;
}

/// Every rank's shares together: every grain of the serial world once, at
/// its place, and the part of them all built from the packed specs is the
/// serial world, bit for bit.
void checkShares(const std::vector<Seen>& seen, const World& whole) {
    std::map<std::size_t, std::pair<Vec3, double>> all;
    std::vector<std::string_view> parts;
    for (const Seen& s : seen) {
        REQUIRE(s.refused.empty());
        CHECK(s.grains == whole.numGrains);
        CHECK(s.spread);
        for (const auto& [i, g] : s.each) CHECK(all.emplace(i, g).second);  // in one share only
        parts.push_back(s.packed);
    }
    REQUIRE(all.size() == whole.numGrains);
    for (const auto& [i, g] : all) {
        CAPTURE(i);
        CHECK(sameBits(g.first, whole.x[i]));
        CHECK(std::bit_cast<std::uint64_t>(g.second) == std::bit_cast<std::uint64_t>(whole.radius[i]));
    }
    std::vector<std::uint64_t> ids;
    std::vector<GrainSpec> specs;
    ScenePlan::unpack(parts, ids, specs);
    const Scene part = seen.back().plan->part(ids, specs);
    REQUIRE(part.world.numBodies() == whole.numBodies());
    for (std::size_t i = 0; i < whole.numBodies(); ++i) {
        CAPTURE(i);
        CHECK(sameBits(part.world.x[i], whole.x[i]));
        CHECK(std::bit_cast<std::uint64_t>(part.world.mass[i]) == std::bit_cast<std::uint64_t>(whole.mass[i]));
    }
    CHECK(part.world.driven.size() == whole.driven.size());
}

constexpr const char* kScene = R"([simulation]
dimension = 3
[grains]
source = file
[packing]
file = packed.txt
[wall.floor]
type = plane
point = 0 0 0
normal = 0 0 1
[group.bottom]
region = -1 -1 -1 20 20 1.6
)";

}  // namespace

TEST_CASE("a packing file read in shares: every grain on one rank, the serial bits, the first bad row on every rank") {
    TempDir dir;
    // 50 rows among comments and blank lines, some rows with ids and comments after them.
    std::string rows = "# x y z radius\n\n";
    for (int i = 0; i < 50; ++i) {
        rows += (i % 3 == 0 ? std::to_string(i + 1) + " " : std::string()) + std::to_string(1.0 + 1.1 * (i % 5)) + " " +
                std::to_string(1.0 + 1.1 * (i / 5 % 5)) + " " + std::to_string(1.0 + 1.1 * (i / 25)) + " 0.45" +
                (i % 7 == 0 ? "  # a row\n" : "\n") + (i % 11 == 0 ? "\n   \n" : "");
    }
    dir.write("packed.txt", rows);
    const std::string scene = dir.write("scene.ini", kScene);
    const Scene serial = loadSceneFile(scene, {});
    REQUIRE(serial.world.numGrains == 50);
    REQUIRE(!serial.world.driven.empty());  // the group's region holds the lowest layer
    for (const int n : {1, 2, 3, 7}) {
        CAPTURE(n);
        checkShares(planOnRanks(n, scene, {}), serial.world);
    }
    SUBCASE("more ranks than rows: some read none") {
        dir.write("packed.txt", "1 1 1 0.45\n3 1 1 0.45\n");
        checkShares(planOnRanks(5, scene, {}), loadSceneFile(scene, {}).world);
    }
    SUBCASE("two bad rows: the first one, the serial reader's line, on every rank") {
        std::string bad = rows;
        bad.insert(bad.find("\n", bad.size() * 2 / 3) + 1, "1 2 x3 0.4\n");
        bad += "1 1 1 -0.4\n";
        dir.write("packed.txt", bad);
        const std::string want = errorOf([&] { loadSceneFile(scene, {}); });
        CHECK(want.find("'x3' is not a finite number") != std::string::npos);
        for (const int n : {1, 2, 3, 7}) {
            CAPTURE(n);
            for (const Seen& s : planOnRanks(n, scene, {})) CHECK(s.refused == want);
        }
    }
    SUBCASE("no grains: the serial refusal on every rank") {
        dir.write("packed.txt", "# none\n\n");
        const std::string want = errorOf([&] { loadSceneFile(scene, {}); });
        for (const Seen& s : planOnRanks(3, scene, {})) CHECK(s.refused == want);
    }
}

TEST_CASE("the random loose packing on ranks: rank 0 places every grain, the serial bits, its refusal on every rank") {
    TempDir dir;
    dir.write("packed.txt", "1 1 1 0.45\n");
    const std::string scene = dir.write("scene.ini", kScene);
    const std::vector<std::string> sets{"grains.source=random", "random.count=60", "random.box_max=8 8 8"};
    const Scene serial = loadSceneFile(scene, sets);
    REQUIRE(serial.world.numGrains == 60);
    const std::vector<Seen> seen = planOnRanks(3, scene, sets);
    CHECK(seen[0].each.size() == 60);
    CHECK(seen[1].each.empty());
    CHECK(seen[2].each.empty());
    checkShares(seen, serial.world);
    const std::vector<std::string> tooMany{"grains.source=random", "random.count=5000", "random.box_max=8 8 8"};
    const std::string want = errorOf([&] { loadSceneFile(scene, tooMany); });
    CHECK(want.find("random.count") != std::string::npos);
    for (const Seen& s : planOnRanks(3, scene, tooMany)) CHECK(s.refused == want);
}
