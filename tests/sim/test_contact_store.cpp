// The contact store: every contact's whole memory, written out and read back
// as one block, continues a run as if it had not stopped.
#include <doctest/doctest.h>

#include <cstring>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

using namespace moreau;

namespace {

/// A small box_3d.ini bed that settles fast (strong gravity), with the
/// laws of `sets`.
Scene smallBed(std::vector<std::string> sets) {
    for (const char* s : {"random.count=100", "random.box_max=5 5 8", "simulation.gravity=0 0 -100"})
        sets.emplace_back(s);
    return loadBuiltinScene("box_3d.ini", sets);
}

ContactStore throughStream(const ContactStore& store) {
    std::stringstream io;
    writeContactStore(io, store);
    return readContactStore(io, "<test stream>");
}

bool sameBits(const World& a, const World& b) {
    for (std::size_t i = 0; i < a.numBodies(); ++i)
        if (a.x[i] != b.x[i] || a.v[i] != b.v[i] || a.w[i] != b.w[i] || !a.q[i].coeffs().isApprox(b.q[i].coeffs(), 0.0))
            return false;
    return true;
}

/// Runs `before` steps, then continues twice for `after` steps: the run
/// itself, and a new Simulation from a copy of its world with (or without)
/// its contact store read back from a stream. Returns whether the two end
/// worlds agree to the bit.
bool continuesExactly(const Scene& scene, int before, int after, bool restore, std::size_t* withMemory = nullptr) {
    Simulation run(scene);
    for (int k = 0; k < before; ++k) run.advance();
    const ContactStore store = throughStream(run.contactStore());
    if (withMemory) {
        *withMemory = 0;
        for (std::size_t k = 0; k < store.records.size(); ++k) {
            bool any = store.records[k].history.reaction.squaredNorm() > 0.0;
            for (std::size_t j = 0; j < store.slots.stride; ++j) any = any || store.slots.at(k)[j] != 0.0;
            *withMemory += any ? 1 : 0;
        }
    }
    Scene copy = scene;
    copy.world = run.world();
    Simulation resumed(std::move(copy));
    if (restore) resumed.restoreContacts(store);
    for (int k = 0; k < after; ++k) {
        run.advance();
        resumed.advance();
    }
    return sameBits(run.world(), resumed.world());
}

}  // namespace

TEST_SUITE("sim") {
    TEST_CASE("contact store: a run continued from its world and contact store gives the run's bits") {
        SUBCASE("MD, laws with memory in every slot kind (plastic F_max, Mindlin spring and state, sliding flag)") {
            const Scene scene = smallBed({"simulation.method=md", "md.pipeline=staged", "md.normal=walton-braun",
                                          "md.s=50", "md.tangential=walton-braun", "md.mu_static_ratio=1.3",
                                          "md.substeps=2"});
            std::size_t withMemory = 0;
            CHECK(continuesExactly(scene, 120, 60, true, &withMemory));
            CHECK(withMemory > 50);  // the store did carry memory
            // Without the store the springs start afresh: not the same run.
            CHECK_FALSE(continuesExactly(scene, 120, 60, false));
        }
        SUBCASE("MD in the fused pipeline (the default): its pairs' springs and last forces") {
            const Scene scene = smallBed({"simulation.method=md", "md.pipeline=fused"});
            std::size_t withMemory = 0;
            CHECK(continuesExactly(scene, 120, 60, true, &withMemory));
            CHECK(withMemory > 20);
            CHECK_FALSE(continuesExactly(scene, 120, 60, false));
            // The fused pipeline's store has the staged solver's layout for
            // these laws: a staged run continues from it as well.
            Scene staged = scene;
            staged.md.pipeline = MdPipeline::Staged;
            Simulation fused(scene), reference(staged);
            for (int k = 0; k < 120; ++k) fused.advance(), reference.advance();
            CHECK(fused.contactStore().slots.stride == reference.contactStore().slots.stride);
        }
        SUBCASE("MD, a multi-stage integrator in history mode (kuhn, rk)") {
            const Scene scene = smallBed({"simulation.method=md", "md.tangential=kuhn", "md.integrator=rk",
                                          "md.substeps=2"});
            CHECK(continuesExactly(scene, 120, 40, true));
        }
        SUBCASE("CD: the reactions warm-start the resumed run") {
            const Scene scene = smallBed({"simulation.method=cd", "cd.iterations=5"});
            CHECK(continuesExactly(scene, 120, 30, true));
            CHECK_FALSE(continuesExactly(scene, 120, 30, false));
        }
    }

    TEST_CASE("contact store: a damaged block is refused with one line naming it") {
        ContactStore store;
        store.records = {{makeContactKey(0, 1), {}}, {makeContactKey(0, 2), {}}};
        store.slots = {2, {1, 2, 3, 4}};
        std::stringstream io;
        writeContactStore(io, store);
        const std::string block = io.str();
        const ContactStore back = throughStream(store);
        CHECK(back.records.size() == 2);
        CHECK(back.records[1].key == makeContactKey(0, 2));
        CHECK(back.slots.values == store.slots.values);
        CHECK(keyBodyA(back.records[1].key) == 0);
        CHECK(keyBodyB(back.records[1].key) == 2);
        auto refusal = [](const std::string& text) {
            std::istringstream in(text);
            try {
                readContactStore(in, "restart/contacts.bin");
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string("accepted");
        };
        CHECK(refusal("not a store") ==
              "restart/contacts.bin: contact store: does not start with the tag 'moreau-contact-store 2' (or 1)");
        CHECK(refusal(block.substr(0, block.size() - 3)) ==
              "restart/contacts.bin: contact store: truncated at record 1 of 2");
        store.records[1].key = makeContactKey(0, 1);
        std::stringstream twice;
        writeContactStore(twice, store);
        CHECK(refusal(twice.str()) == "restart/contacts.bin: contact store: keys not strictly increasing at record 1");
        // A store of another layout does not fit the scene's laws; keys out
        // of order do not fit the merge-join.
        Simulation sim(smallBed({"simulation.method=md", "md.pipeline=staged"}));
        CHECK_THROWS_AS(sim.restoreContacts(back), InputError);
        ContactStore unordered = back;
        unordered.slots = {3, std::vector<double>(6, 0.0)};
        std::swap(unordered.records[0], unordered.records[1]);
        CHECK_THROWS_WITH_AS(sim.restoreContacts(unordered), doctest::Contains("keys not strictly increasing"),
                             InputError);
    }

    TEST_CASE("a version-1 store (keys a | b | feature in 30 + 30 + 4 bits) is read with its keys re-encoded") {
        ContactStore store;
        store.slots.stride = 0;
        for (const auto& [a, b, f] : {std::tuple{0, 1, 0u}, std::tuple{0, 7, 3u}, std::tuple{5, 123456, 15u}}) {
            ContactMemory r;
            r.key = makeContactKey(a, b, f);
            r.history.age = static_cast<std::uint32_t>(b);
            store.records.push_back(r);
        }
        std::stringstream io;
        writeContactStore(io, store);
        std::string bytes = io.str();
        // Rewrite it as version 1 wrote it.
        const std::string tag = "moreau-contact-store 2\n";
        REQUIRE(bytes.compare(0, tag.size(), tag) == 0);
        bytes[tag.size() - 2] = '1';
        const std::size_t record = sizeof(ContactKey) + 3 * sizeof(double) + sizeof(std::uint32_t);
        for (std::size_t k = 0; k < store.records.size(); ++k) {
            const ContactKey key = store.records[k].key;
            const ContactKey old = static_cast<ContactKey>(keyBodyA(key)) << 34 |
                                   static_cast<ContactKey>(keyBodyB(key)) << 4 | keyFeature(key);
            std::memcpy(bytes.data() + tag.size() + 16 + k * record, &old, sizeof old);
        }
        std::istringstream in(bytes);
        const ContactStore back = readContactStore(in, "<version 1>");
        REQUIRE(back.records.size() == 3);
        for (std::size_t k = 0; k < 3; ++k) {
            CHECK(back.records[k].key == store.records[k].key);
            CHECK(back.records[k].history.age == store.records[k].history.age);
        }
        CHECK(keyFeature(back.records[2].key) == 15u);
        CHECK(keyBodyB(back.records[2].key) == 123456);
    }
}
