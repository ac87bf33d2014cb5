#pragma once
/// The scene keys each experiment and bench reads from `--set` besides its
/// own experiment.* (bench.*) keys; its run() refuses any other with exit 2
/// (src/experiments/registry.cpp keeps the lists beside the entries).
#include <string>

namespace moreau {

/// The scene keys experiment `name` (a bench's if `bench`) reads, as a line:
/// "simulation.dt, cd.* (not cd.iterations)", or "none".
std::string sceneKeysRead(const std::string& name, bool bench);

}  // namespace moreau
