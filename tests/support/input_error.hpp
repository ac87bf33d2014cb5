#pragma once
/// The message of the InputError a call throws, for the tests of what the
/// readers refuse.
#include <functional>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau::test {

/// What the InputError that `f` throws says, or "(no InputError)".
inline std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no InputError)";
}

}  // namespace moreau::test
