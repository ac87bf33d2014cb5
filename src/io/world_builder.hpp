#pragma once
/// The world builder of scene files (scene_file.hpp): from a scene's
/// validated values (scene_schema.hpp) to its World: the periodic cell, the
/// grains of the chosen generator with their masses, the forces on grains,
/// the walls and the grain groups (their servos, materials and the stress
/// region: scene_controls.hpp). Every refusal names a key (Values::fail).
/// Internal to src/io.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "moreau/io/scene_file.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/model/scene.hpp"
#include "scene_schema.hpp"

namespace moreau::scene_io {

/// A scene's grains for distributed input (ScenePlan): their count and
/// grain i's spec, as buildWorld would make it: made on demand (a
/// lattice, a chain), held in shares (a packing file: each rank reads its
/// share of the rows) or taken from those generated once (the random
/// loose packing).
struct PlannedGrains {
    std::size_t count = 0;
    /// Whether at(i) knows only this rank's share of the grains, ids
    /// [from, to) (and grain 0); else every grain, from = 0 and to = count.
    bool spread = false;
    std::size_t from = 0, to = 0;
    /// Irregular polygons, each its own shape: a part's table holds its
    /// grains' shapes alone (grain k's entry k), not the whole world's.
    bool ownShapes = false;
    /// Grain i's spec, what the world is built from.
    std::function<GrainSpec(std::size_t)> at;
    /// Grain i's centre and radius in the world from its spec (clumps,
    /// polygons: their centre of mass and bounding radius); none: the spec's own.
    std::function<GrainSpec(const GrainSpec&, std::size_t)> placing;
    double rMin = std::numeric_limits<double>::infinity(), rMax = 0.0;  ///< the smallest and largest radius placed
    /// A spread plan's grains in each group's region (group.NAME.region),
    /// by name, ascending: what a part cannot find from its own grains.
    std::shared_ptr<const std::map<std::string, std::vector<std::size_t>>> inRegion;
    GrainSpec placed(std::size_t i) const { return placing ? placing(at(i), i) : at(i); }
};

/// A spec as numbers (position, radius, orientation w x y z), as the ranks
/// send a planned grain, and back.
inline constexpr std::size_t kSpecValues = 8;
inline std::array<double, kSpecValues> specValues(const GrainSpec& g) {
    const Quat& q = g.orientation;
    return {g.position[0], g.position[1], g.position[2], g.radius, q.w(), q.x(), q.y(), q.z()};
}
inline GrainSpec specOf(const double* v) {
    GrainSpec g{Vec3(v[0], v[1], v[2]), v[3]};
    g.orientation = Quat(v[4], v[5], v[6], v[7]);
    return g;
}

/// Some of a scene's planned grains: the ids (ascending) a world is built of.
struct GrainPart {
    const PlannedGrains* grains = nullptr;
    const std::vector<std::uint64_t>* ids = nullptr;
};

/// The round grains of the values, with the whole world's checks on them
/// (radii and masses, a few grains at a time; crowding, its cells shared
/// out by `share`), without a world of them all.
PlannedGrains planGrains(const Values& v, const std::filesystem::path& sceneDir, const PlanShare& share,
                         const std::set<std::string>& groupNames);

/// The world of the scene's values into scene.world: periodic box and cell
/// rates, grains (generated or from packing.file, relative to `sceneDir`),
/// [force.NAME], [wall.NAME] (after all grains, in name order) and
/// [group.NAME] sections. With `part`, grains part->ids alone (grain k
/// of the world is grain ids[k] of the whole): the forces and groups
/// select and are checked over the whole world's grains, on every part
/// alike, and apply to the part's.
void buildWorld(Scene& scene, const Values& v, const std::set<std::string>& forceNames,
                const std::set<std::string>& wallNames, const std::set<std::string>& groupNames,
                const std::filesystem::path& sceneDir, const GrainPart* part = nullptr);

}  // namespace moreau::scene_io
