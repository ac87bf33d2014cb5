#pragma once
/// The example scenes of examples/, compiled into the library.
#include <map>
#include <string>

namespace moreau {

/// File name (e.g. "chain_1d.ini") → file text.
const std::map<std::string, std::string>& embeddedScenes();

}  // namespace moreau
