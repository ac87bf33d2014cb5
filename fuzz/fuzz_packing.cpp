// libFuzzer harness: packing files through moreau::readPackingFile (the bytes
// go to a temporary file of this process). Bad files must throw
// moreau::InputError; any other exception, crash or sanitizer report is a
// finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/model/generators.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/tmp/moreau_fuzz_packing_" + std::to_string(::getpid());
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        (void)moreau::readPackingFile(path);
    } catch (const moreau::InputError&) {
    }
    ::unlink(path.c_str());
    return 0;
}
