// libFuzzer harness: checkpoints through moreau::readCheckpoint, then what
// `moreau run --resume` builds from one (the scene around the checkpoint's
// world, the Simulation and its restored state) and one step of it. Bad files
// must throw moreau::InputError (a step may throw moreau::DivergenceError);
// any other exception, crash or sanitizer report is a finding.
//
// Almost every mutation breaks the checksum (FNV-1a of all bytes but the
// last 8), so each input is read twice: as given, and with its last 8 bytes
// replaced by the checksum of the others, which reaches the parser behind it.
// The step runs only for small worlds and short steps, to keep runs fast.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/simulation.hpp"

namespace {

void readAndStep(const std::string& path, const std::string& bytes) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    try {
        moreau::Checkpoint c = moreau::readCheckpoint(path);
        if (c.world.numBodies() > 200) return;
        moreau::Scene scene = moreau::loadSceneWithWorld(c.sceneText, "<fuzz>", {}, c.world);
        moreau::Simulation sim(std::move(scene));
        moreau::ByteReader in(c.state, "<fuzz>");
        sim.loadState(in);
        const moreau::Scene& s = sim.scene();
        if (s.cd.iterations > 100 || s.cd.maxIterations > 100 || s.md.substeps > 10) return;
        sim.advance();
    } catch (const moreau::InputError&) {
    } catch (const moreau::DivergenceError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/tmp/moreau_fuzz_checkpoint_" + std::to_string(::getpid());
    std::string bytes(reinterpret_cast<const char*>(data), size);
    readAndStep(path, bytes);
    if (bytes.size() > 8) {
        const std::uint64_t sum = moreau::fnv1a64(std::string_view(bytes).substr(0, bytes.size() - 8));
        std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
        readAndStep(path, bytes);
    }
    ::unlink(path.c_str());
    return 0;
}
