#include "scene_controls.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau::scene_io {

void parseWallMaterials(Scene& scene, const Values& v, const std::set<std::string>& wallNames) {
    // The laws from material constants (md/laws/hertz_material.hpp): each wall's
    // wall.NAME.youngs_modulus and wall.NAME.poisson_ratio, the grains' where empty.
    const ElasticMaterial grains{v.real("md.youngs_modulus"), v.real("md.poisson_ratio")};
    const std::vector<std::string>& names = scene.world.wallName;
    scene.md.wallMaterials.assign(names.size(), grains);
    for (std::size_t k = 0; k < names.size(); ++k) {
        const std::string p = "wall." + names[k] + ".";
        if (!wallNames.count(names[k])) continue;  // a given world's wall without a section
        if (!v.empty(p + "youngs_modulus")) scene.md.wallMaterials[k].youngsModulus = v.real(p + "youngs_modulus");
        if (!v.empty(p + "poisson_ratio")) scene.md.wallMaterials[k].poissonRatio = v.real(p + "poisson_ratio");
    }
}

void parseServos(Scene& scene, const Values& v, const std::set<std::string>& wallNames) {
    World& world = scene.world;
    const int dimension = world.dimension;
    for (const std::string& name : wallNames) {
        const std::string p = "wall." + name + ".";
        if (v.empty(p + "servo_stress")) continue;
        const auto it = std::find(world.wallName.begin(), world.wallName.end(), name);
        if (it == world.wallName.end()) continue;  // a given world without this wall: refused elsewhere
        const std::size_t k = static_cast<std::size_t>(it - world.wallName.begin());
        const auto b = static_cast<BodyId>(world.numGrains + k);
        const WallShape& shape = world.wallShape[k];
        if (shape.kind != ShapeKind::Plane) v.fail(p + "servo_stress", "is set on a cylinder", "a servo on plane walls only");
        if (world.wallMobile[k])
            v.fail(p + "servo_stress", "is set on a mobile wall",
                   "mobile = false (the servo moves the wall itself; a mobile wall follows its force)");
        if (v.empty(p + "servo_gain"))
            v.fail(p + "servo_gain", "is empty", "a real > 0 (speed per unit stress) when servo_stress is set");
        WallServo servo;
        servo.wall = b;
        servo.stress = v.real(p + "servo_stress");
        servo.gain = v.real(p + "servo_gain");
        servo.maxSpeed = v.real(p + "servo_max_speed");
        servo.time = v.real(p + "servo_time");
        if (!v.empty(p + "servo_area")) {
            servo.area = v.real(p + "servo_area");
        } else {
            // The periodic box across an axis-aligned normal.
            int along = -1;
            for (int a = 0; a < dimension; ++a)
                if (shape.direction[a] != 0.0) along = along < 0 ? a : 3;
            servo.area = 1.0;
            bool periodicAcross = along >= 0 && along < 3;
            for (int a = 0; a < dimension && periodicAcross; ++a)
                if (a != along) {
                    periodicAcross = world.periodic[a];
                    servo.area *= world.boxMax[a] - world.boxMin[a];
                }
            if (!periodicAcross)
                v.fail(p + "servo_area", "is empty, and the wall is not across a periodic box",
                       "the area (2D: length) the servo's stress refers to, > 0");
        }
        world.prescribed[static_cast<std::size_t>(b)] = true;
        scene.servos.push_back(servo);
    }
}

/// Refuses a periodic box too short for the minimum image: the cell grid
/// finds the one image of a pair within reach only when each periodic length
/// is above twice the reach of the Verlet list, 2 r_max + margin + skin
/// (CellGridDetector would otherwise stop the first step, naming neither file
/// nor key).
void checkPeriodicLengths(const Values& v, const Scene& scene, double rMax) {
    const World& w = scene.world;
    const double reach = 2.0 * rMax + scene.simulation.margin + scene.simulation.skin;
    for (int a = 0; a < 3; ++a) {
        const double length = w.boxMax[a] - w.boxMin[a];
        if (!w.periodic[static_cast<std::size_t>(a)] || length > 2.0 * reach) continue;
        const std::string axis(1, static_cast<char>('x' + a));
        v.fail("periodic.box_max",
               "leaves the periodic box " + formatNumber(length) + " long along " + axis +
                   ", not above twice the detection reach 2 r_max + margin + skin = " + formatNumber(reach) +
                   " (r_max " + formatNumber(rMax) + ")",
               "box_max - box_min > " + formatNumber(2.0 * reach) + " on the periodic axes, or smaller grains, "
               "contact.margin or contact.skin");
    }
}

void parseCellServo(Scene& scene, const Values& v) {
    CellServo& cs = scene.cellServo;
    cs.axes = axesOf(v.text("periodic.stress_axes"));
    for (int a = 0; a < 3; ++a)
        if (cs.axes[static_cast<std::size_t>(a)] && !scene.world.periodic[static_cast<std::size_t>(a)])
            v.fail("periodic.stress_axes", std::string("names the axis ") + static_cast<char>('x' + a) + ", which is not periodic",
                   "periodic axes only");
    if (cs.any()) {
        if (v.empty("periodic.stress_gain"))
            v.fail("periodic.stress_gain", "is empty", "a real > 0 (strain rate per unit stress) with stress_axes");
        cs.stress = v.vec("periodic.stress");
        cs.gain = v.real("periodic.stress_gain");
        cs.maxRate = v.real("periodic.max_strain_rate");
        cs.time = v.real("periodic.stress_time");
        for (int a = 0; a < 3; ++a)
            if (cs.axes[static_cast<std::size_t>(a)] && v.vec("periodic.strain_rate")[a] != 0.0)
                v.fail("periodic.strain_rate", std::string("sets the rate of ") + static_cast<char>('x' + a) +
                                                   ", which the stress servo controls",
                       "0 on periodic.stress_axes");
    }
}

void parseStressRegion(Scene& scene, const Values& v) {
    if (v.empty("output.stress_region")) return;
    // Six finite numbers, min < max on the dimension's axes; on a
    // periodic axis at most one period (its images count, not twice).
    const std::string key = "output.stress_region";
    const std::string allowed = "six numbers 'xmin ymin zmin xmax ymax zmax' with min < max on the dimension's "
                                "axes and at most one period on a periodic axis, or empty";
    const auto words = splitWords(v.text(key), true);
    if (words.size() != 6) v.fail(key, "is not six numbers", allowed);
    std::array<Vec3, 2> box;
    for (std::size_t i = 0; i < 6; ++i) {
        const auto x = parseDouble(words[i]);
        if (!x || !std::isfinite(*x)) v.fail(key, "is not six finite numbers", allowed);
        box[i / 3][static_cast<int>(i % 3)] = *x;
    }
    const World& w = scene.world;
    for (int a = 0; a < w.dimension; ++a) {
        const std::string axis(1, static_cast<char>('x' + a));
        if (!(box[0][a] < box[1][a])) v.fail(key, "does not have min < max along " + axis, allowed);
        if (w.periodic[static_cast<std::size_t>(a)] && box[1][a] - box[0][a] > w.boxMax[a] - w.boxMin[a])
            v.fail(key, "is longer than the periodic box along " + axis, allowed);
    }
    scene.output.stressRegion = box;
}

}  // namespace moreau::scene_io
