#pragma once
/// The world builder of scene files (scene_file.hpp): from a scene's
/// validated values (scene_schema.hpp) to its World: the periodic cell, the
/// grains of the chosen generator with their masses, the forces on grains,
/// the walls and the grain groups (their servos, materials and the stress
/// region: scene_controls.hpp). Every refusal names a key (Values::fail).
/// Internal to src/io.
#include <filesystem>
#include <set>
#include <string>

#include "moreau/model/scene.hpp"
#include "scene_schema.hpp"

namespace moreau::scene_io {

/// The world of the scene's values into scene.world: periodic box and cell
/// rates, grains (generated or from packing.file, relative to `sceneDir`),
/// [force.NAME], [wall.NAME] (after all grains, in name order) and
/// [group.NAME] sections.
void buildWorld(Scene& scene, const Values& v, const std::set<std::string>& forceNames,
                const std::set<std::string>& wallNames, const std::set<std::string>& groupNames,
                const std::filesystem::path& sceneDir);

}  // namespace moreau::scene_io
