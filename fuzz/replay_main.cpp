// Replays a fuzz corpus through a harness without libFuzzer: every file of
// the folders (or the files) given runs through LLVMFuzzerTestOneInput. An
// input that throws what the harness does not expect fails the run, naming it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path p = argv[i];
        if (std::filesystem::is_directory(p)) {
            for (const auto& e : std::filesystem::directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "fuzz replay: no inputs (usage: %s CORPUS_DIR|FILE...)\n", argv[0]);
        return 2;
    }
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        try {
            LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz replay: %s: unexpected exception: %s\n", file.c_str(), e.what());
            return 1;
        } catch (...) {
            std::fprintf(stderr, "fuzz replay: %s: unexpected exception\n", file.c_str());
            return 1;
        }
    }
    std::printf("fuzz replay: %zu inputs\n", files.size());
    return 0;
}
