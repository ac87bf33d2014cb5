#pragma once
/// The world builder of scene files (scene_file.hpp): from a scene's
/// validated values (scene_schema.hpp) to its World: the periodic cell, the
/// grains of the chosen generator with their masses, the forces on grains,
/// the walls, the grain groups and the wall servos. Every refusal names a
/// key (Values::fail). Internal to src/io.
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

/// The servos of the scene's walls (WallServo), into scene.servos; marks
/// their walls as moved kinematically.
void parseServos(Scene& scene, const Values& v, const std::set<std::string>& wallNames);
/// Each wall's elastic material (hertz-material): its wall.NAME keys, the grains' where empty.
void parseWallMaterials(Scene& scene, const Values& v, const std::set<std::string>& wallNames);

/// Refuses a periodic box too short for the minimum image: the cell grid
/// finds the one image of a pair within reach only when each periodic length
/// is above twice the reach of the Verlet list, 2 r_max + margin + skin.
void checkPeriodicLengths(const Values& v, const Scene& scene);

/// The stress servo of a periodic cell (CellServo) from [periodic]'s
/// stress keys, into scene.cellServo.
void parseCellServo(Scene& scene, const Values& v);

/// output.stress_region against the built world: six finite numbers, min <
/// max on the dimension's axes; on a periodic axis at most one period (its
/// images count, not twice). Into scene.output.stressRegion.
void parseStressRegion(Scene& scene, const Values& v);

}  // namespace moreau::scene_io
