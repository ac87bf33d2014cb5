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
//
// A checkpoint in parts (MPI ranks' format, checkpoint.hpp) is several
// files: an input holding the parts' magic after its start is cut there,
// the first piece written as `checkpoint`, the next ones, in order, under
// the names the reader asks for (the file names are the reader's, not the
// input's).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/checkpoint.hpp"
#include "moreau/sim/simulation.hpp"

namespace {

void spit(const std::filesystem::path& file, std::string_view bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void readAndStep(const std::filesystem::path& dir, const std::string& bytes) {
    static constexpr std::string_view kPart = "moreau-checkpoint-part\n";
    std::vector<std::size_t> cuts{0};
    for (std::size_t at = bytes.find(kPart, 1); at != std::string::npos; at = bytes.find(kPart, at + 1)) cuts.push_back(at);
    cuts.push_back(bytes.size());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::filesystem::path path = dir / "checkpoint";
    spit(path, std::string_view(bytes).substr(0, cuts[1]));
    // Each part under the name the reader asks for (a missing part's
    // InputError names it), the input's pieces in order, at most 8.
    for (std::size_t next = 1;; ++next) {
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
            return;
        } catch (const moreau::InputError& e) {
            const std::string what = e.what(), tag = "checkpoint part '";
            const std::size_t at = what.find(tag), end = at == std::string::npos ? at : what.find('\'', at + tag.size());
            if (end == std::string::npos || what.find("no such file") == std::string::npos || next + 1 >= cuts.size() ||
                next > 8)
                return;
            const std::filesystem::path part = what.substr(at + tag.size(), end - at - tag.size());
            if (part.parent_path() != dir) return;
            spit(part, std::string_view(bytes).substr(cuts[next], cuts[next + 1] - cuts[next]));
        } catch (const moreau::DivergenceError&) {
            return;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("moreau_fuzz_checkpoint_" + std::to_string(::getpid()));
    std::string bytes(reinterpret_cast<const char*>(data), size);
    readAndStep(dir, bytes);
    // The main file's checksum made right (its end: the first part's start).
    const std::size_t end = std::min(bytes.size(), bytes.find("moreau-checkpoint-part\n", 1));
    if (end > 8) {
        const std::uint64_t sum = moreau::fnv1a64(std::string_view(bytes).substr(0, end - 8));
        std::memcpy(bytes.data() + end - 8, &sum, 8);
        readAndStep(dir, bytes);
    }
    std::filesystem::remove_all(dir);
    return 0;
}
