#pragma once
/// What a scene sets up on top of its built world (world_builder.hpp): the
/// walls' servos and elastic materials, the stress servo of a periodic cell,
/// the check of the periodic lengths against the Verlet reach and the stress
/// region. Every refusal names a key (Values::fail). Internal to src/io.
#include <set>
#include <string>

#include "moreau/model/scene.hpp"
#include "scene_schema.hpp"

namespace moreau::scene_io {

/// The servos of the scene's walls (WallServo), into scene.servos; marks
/// their walls as moved kinematically.
void parseServos(Scene& scene, const Values& v, const std::set<std::string>& wallNames);
/// Each wall's elastic material (hertz-material): its wall.NAME keys, the grains' where empty.
void parseWallMaterials(Scene& scene, const Values& v, const std::set<std::string>& wallNames);

/// Refuses a periodic box too short for the minimum image: the cell grid
/// finds the one image of a pair within reach only when each periodic length
/// is above twice the reach of the Verlet list, 2 r_max + margin + skin
/// (r_max: the whole world's largest grain).
void checkPeriodicLengths(const Values& v, const Scene& scene, double rMax);

/// The stress servo of a periodic cell (CellServo) from [periodic]'s
/// stress keys, into scene.cellServo.
void parseCellServo(Scene& scene, const Values& v);

/// output.stress_region against the built world: six finite numbers, min <
/// max on the dimension's axes; on a periodic axis at most one period (its
/// images count, not twice). Into scene.output.stressRegion.
void parseStressRegion(Scene& scene, const Values& v);

}  // namespace moreau::scene_io
