// libFuzzer harness: scene text through moreau::loadSceneText. Bad text must
// throw moreau::InputError; any other exception, crash or sanitizer report is
// a finding.
//
// A valid scene may ask for up to 1e8 grains (chain.count, random.count,
// lattice.counts), which measures the machine's memory, not the parser: texts
// with a `count` key whose numbers multiply to more than kMaxGrains are skipped.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"

namespace {

constexpr double kMaxGrains = 1e4;

/// Whether a line `key = value` with "count" in its key asks for more than
/// kMaxGrains grains (the product of the digit runs of its value).
bool asksForManyGrains(std::string_view text) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        std::string key(line.substr(0, eq));
        for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (key.find("count") == std::string::npos) continue;
        double product = 1.0, run = -1.0;
        for (const char c : line.substr(eq + 1)) {
            if (std::isdigit(static_cast<unsigned char>(c))) {
                run = (run < 0.0 ? 0.0 : run) * 10.0 + (c - '0');
            } else if (run >= 0.0) {
                product *= run;
                run = -1.0;
            }
        }
        if (run >= 0.0) product *= run;
        if (product > kMaxGrains) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (asksForManyGrains(text)) return 0;
    try {
        (void)moreau::loadSceneText(text, "<fuzz>", {});
    } catch (const moreau::InputError&) {
    }
    return 0;
}
