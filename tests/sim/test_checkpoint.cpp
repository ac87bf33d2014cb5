// Checkpoints: a run continued from the file steps with the uninterrupted
// run's bits; the file's every part is needed (the MD scheme's history
// too); a damaged file is refused with an InputError, never read wrongly.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

Scene multiStepBed() {
    return loadBuiltinScene("box_3d.ini", {"random.count=100", "random.box_max=5 5 8", "simulation.gravity=0 0 -100",
                                           "simulation.method=md", "md.integrator=ab3", "contact.mu=0.3",
                                           "md.restart_on_contact_change=false", "simulation.dt=0.001"});
}

std::filesystem::path tempFile(const char* name) {
    return std::filesystem::temp_directory_path() / (std::string("moreau_test_") + name);
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spit(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
}

/// The state hash after `total` steps of a Simulation that continues the
/// checkpoint `file` (with the MD scheme's state, or only the world and the
/// contact store).
std::uint64_t continueFrom(const std::filesystem::path& file, long total, bool schemeState) {
    const Checkpoint c = readCheckpoint(file);
    Simulation sim(loadSceneWithWorld(c.sceneText, "<checkpoint>", {}, c.world));
    ByteReader in(c.state, "<checkpoint>");
    if (schemeState) {
        sim.loadState(in);
    } else {
        std::istringstream store(in.getString("contact store"));
        sim.restoreContacts(readContactStore(store, "<checkpoint>"));
    }
    while (sim.world().step < total) sim.advance();
    return stateHash(sim.world());
}

/// readCheckpoint(file) throws one InputError naming the file (or `named`:
/// one of its parts) and `mention`.
void expectRefused(const std::filesystem::path& file, const std::string& mention,
                   const std::filesystem::path& named = {}) {
    try {
        readCheckpoint(file);
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK_MESSAGE(what.find((named.empty() ? file : named).string()) != std::string::npos, what);
        CHECK_MESSAGE(what.find(mention) != std::string::npos, what);
        return;
    }
    FAIL("accepted a checkpoint it should refuse (" << mention << ")");
}

}  // namespace

TEST_CASE("an Adams-Bashforth run continued from its checkpoint has the uninterrupted bits, and needs the scheme's history") {
    const long total = 60, cut = 25;
    Simulation whole(multiStepBed());
    while (whole.world().step < total) whole.advance();

    Simulation part(multiStepBed());
    while (part.world().step < cut) part.advance();
    RunTotals totals;
    totals.sumIterations = 3.5;
    const auto file = tempFile("ab3.ckpt");
    writeCheckpoint(file, part, totals, CheckpointKind::Periodic);

    const Checkpoint c = readCheckpoint(file);
    CHECK(c.format == kCheckpointFormat);
    CHECK(c.kind == CheckpointKind::Periodic);
    CHECK(c.world.step == cut);
    CHECK(c.totals.sumIterations == 3.5);
    CHECK(c.sceneText == canonicalSceneText(part.scene()));
    CHECK(stateHash(c.world) == stateHash(part.world()));

    CHECK(continueFrom(file, total, true) == stateHash(whole.world()));
    // Without its history the scheme starts afresh (RK4 steps): other bits.
    CHECK(continueFrom(file, total, false) != stateHash(whole.world()));
    std::filesystem::remove(file);
}

TEST_CASE("a damaged checkpoint is refused with one InputError naming the file") {
    Simulation sim(multiStepBed());
    for (int s = 0; s < 5; ++s) sim.advance();
    const auto file = tempFile("damaged.ckpt");
    writeCheckpoint(file, sim, RunTotals{}, CheckpointKind::Stopped);
    const std::string good = slurp(file);
    CHECK(readCheckpoint(file).kind == CheckpointKind::Stopped);

    auto refused = [&](const std::string& bytes, const std::string& mention) {
        spit(file, bytes);
        expectRefused(file, mention);
    };
    // Truncated anywhere, a byte flipped anywhere (sampled): the checksum.
    for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{18}, std::size_t{30}, good.size() / 3,
                          good.size() - 9, good.size() - 1})
        refused(good.substr(0, n), n < 18 ? "not a Moreau checkpoint" : n < 22 ? "truncated" : "damaged");
    for (std::size_t at = 22; at < good.size(); at += good.size() / 97 + 1) {
        std::string bad = good;
        bad[at] = static_cast<char>(bad[at] ^ 0x01);
        refused(bad, "damaged");
    }
    std::string version = good;
    version[18] = 7;
    refused(version, "format version 7");
    refused("id x y z radius\n0 0 0 0 1\n", "not a Moreau checkpoint");
    // A file whose checksum matches but whose sizes lie (made on purpose):
    // the reader checks every count against the bytes left.
    std::string lying = good.substr(0, good.size() - 8);
    const std::size_t sceneLength = 18 + 4 + 8 + std::string(MOREAU_VERSION).size() + 1;  // magic, format, version, kind
    lying.replace(sceneLength, 8, std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
    const std::uint64_t sum = fnv1a64(lying);
    lying.append(reinterpret_cast<const char*>(&sum), 8);
    refused(lying, "more than the");
    std::filesystem::remove(file);
    CHECK_THROWS_AS(readCheckpoint(file), InputError);
    CHECK_THROWS_AS(readCheckpoint(std::filesystem::temp_directory_path()), InputError);
}

TEST_CASE("a checkpoint in parts continues with the uninterrupted bits, and a part missing or damaged is refused naming it") {
    // One rank's share, written as MPI ranks write theirs (checkpoint.hpp):
    // read back as a whole checkpoint, with the AB3 scheme's history.
    const Scene bed = multiStepBed();
    const long total = 60, cut = 25;
    Simulation whole(Scene{bed});
    while (whole.world().step < total) whole.advance();
    DistributedSimulation run{Scene(bed)};
    run.advanceTo(cut);
    const CheckpointShare share = run.share();
    CHECK(share.held);
    CHECK(share.ids.size() == bed.world.numGrains);
    const auto dir = tempFile("parts");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // A part of an older checkpoint: gone once the new one is written.
    spit(dir / checkpointPartName(5, 0), "old");
    RunTotals totals;
    totals.sumIterations = 2.5;
    const std::vector<std::string> parts{writeCheckpointPart(dir, share, 0, 1)};
    writeCheckpointMain(dir, share, bed.world.numGrains, parts, totals, CheckpointKind::Stopped, canonicalSceneText(bed),
                        bed.origin);
    CHECK(!std::filesystem::exists(dir / checkpointPartName(5, 0)));
    const auto file = dir / "checkpoint";
    const Checkpoint c = readCheckpoint(file);
    CHECK(c.kind == CheckpointKind::Stopped);
    CHECK(c.totals.sumIterations == 2.5);
    CHECK(c.world.step == cut);
    CHECK(c.world.numGrains == bed.world.numGrains);
    CHECK(continueFrom(file, total, true) == stateHash(whole.world()));
    CHECK(continueFrom(file, total, false) != stateHash(whole.world()));  // the history is in the parts
    // Unmerged (a resume on ranks reads its own grains from the parts): the
    // walls alone, the parts checked, the smallest radius, each part's grains.
    const Checkpoint index = readCheckpoint(file, false);
    REQUIRE(index.parts);
    CHECK(index.world.numGrains == 0);
    CHECK(index.state.empty());
    double rMin = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < bed.world.numGrains; ++i) rMin = std::min(rMin, bed.world.radius[i]);
    CHECK(index.parts->rMin == rMin);
    std::size_t seen = 0;
    eachCheckpointPart(index, index.world,
                       [&](const World& w, const std::vector<std::uint64_t>& ids, const ContactStore& store,
                           const std::vector<MdSolver::Vec6>& entries) {
                           seen += ids.size();
                           CHECK(w.numGrains == ids.size());
                           CHECK(!store.records.empty());
                           CHECK(entries.size() == ids.size() * share.carry.perBody());
                       });
    CHECK(seen == bed.world.numGrains);

    const auto part = dir / checkpointPartName(cut, 0);
    const std::string good = slurp(part);
    auto refusedNaming = [&](const std::string& mention) { expectRefused(file, mention, part); };
    for (std::size_t at = 0; at < good.size(); at += good.size() / 37 + 1) {
        std::string bad = good;
        bad[at] = static_cast<char>(bad[at] ^ 0x01);
        spit(part, bad);
        refusedNaming("its size or checksum differs");
    }
    spit(part, good.substr(0, good.size() / 2));
    refusedNaming("its size or checksum differs");
    std::filesystem::remove(part);
    refusedNaming("no such file");
    std::filesystem::remove_all(dir);
}

TEST_CASE("a checkpoint whose world no run can have written is refused naming the file and the value") {
    const Scene bed = multiStepBed();
    const std::string text = canonicalSceneText(bed);
    const auto file = tempFile("world.ckpt");
    auto write = [&](const World& world) {
        const Simulation sim(loadSceneWithWorld(text, "<test>", {}, world));
        writeCheckpoint(file, sim, RunTotals{}, CheckpointKind::Periodic);
    };
    write(bed.world);
    CHECK(readCheckpoint(file).world.numBodies() == bed.world.numBodies());

    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto refused = [&](World world, const std::string& mention) {
        write(world);
        expectRefused(file, mention);
    };
    World w = bed.world;
    w.radius[3] = 0.0;
    refused(w, "grain 3: radius 0.000000 is not finite and > 0");
    w = bed.world;
    w.x[5][1] = nan;
    refused(w, "grain 5: a position, velocity or orientation is not finite");
    w = bed.world;
    w.invMass[0][2] = -1.0;
    refused(w, "grain 0: a mass or inertia");
    w = bed.world;
    w.wallShape[0].mu = nan;
    refused(w, "wall '" + w.wallName[0] + "': its direction");
    w = bed.world;
    w.time = nan;
    refused(w, "time is not finite");
    std::filesystem::remove(file);
}

TEST_CASE("resumableKeys: every output.* and guard.* key but the three that change series.csv's columns") {
    // docs/scenes.md ("Checkpoints and resume") says so; the scene's keys are sceneReference()'s.
    std::istringstream reference(sceneReference());
    const auto& keys = resumableKeys();
    int seen = 0;
    for (std::string line; std::getline(reference, line);) {
        const std::string key = line.substr(0, line.find(' '));
        if (!key.starts_with("output.") && !key.starts_with("guard.")) continue;
        ++seen;
        const bool listed = std::find(keys.begin(), keys.end(), key) != keys.end();
        CHECK_MESSAGE(listed == (key != "output.natural_error" && key != "output.stress_region" &&
                                 key != "output.stage"),
                      key);
    }
    CHECK(seen >= 14);
    CHECK(std::find(keys.begin(), keys.end(), "simulation.steps") != keys.end());
}
