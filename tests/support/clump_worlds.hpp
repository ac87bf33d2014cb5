#pragma once
// Worlds of clumps for the clump tests (md/test_clumps.cpp,
// cd/test_clumps_cd.cpp): a built-in scene's settings and walls around a
// world built in the test.
#include <string>
#include <utility>
#include <vector>

#include "moreau/io/scene_file.hpp"
#include "moreau/model/clump.hpp"

namespace moreau::test {

/// Two touching spheres of radius 1/2 at ±1/2 along the body's x axis.
inline ClumpShape dimer() { return makeClumpShape({{Vec3(-0.5, 0, 0), 0.5}, {Vec3(0.5, 0, 0), 0.5}}, 3); }

/// A world of the given clump shape and gravity, no grains yet.
inline World emptyWorld(const ClumpShape& shape, const Vec3& gravity, int dimension = 3) {
    World w;
    w.dimension = dimension;
    w.gravity = gravity;
    w.clumpShapes.push_back(shape);
    return w;
}

/// `builtin`'s settings (with `sets`, after one grain and no VTK) on
/// `world` in place of its packing: `world` gets the scene's walls and
/// grain friction.
inline Scene sceneAround(World world, std::vector<std::string> sets, const std::string& builtin) {
    sets.insert(sets.begin(), {"random.count=1", "output.vtk_every=0"});
    Scene scene = loadBuiltinScene(builtin, sets);
    const World& from = scene.world;
    world.muGrain = from.muGrain;
    for (std::size_t w = 0; w < from.numWalls(); ++w) {
        const auto b = from.numGrains + w;
        world.addWall(from.wallName[w], from.wallShape[w], from.x[b], false, 0.0, {false, false, false});
        world.wallShape.back().mu = from.wallShape[w].mu;
    }
    scene.world = std::move(world);
    return scene;
}

}  // namespace moreau::test
