#pragma once
/// Small helpers of the CD and MD tests: a Simulation around a world built
/// in code (whose steps are the stepper's), and walls.
#include <array>
#include <cstdint>
#include <utility>

#include "moreau/core/rng.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau::test {

/// A CD run of the world `w` with time step dt, detection margin 0.05 and
/// seed 7 unless given: its steps are the stepper's (sim.advance()).
inline Simulation cdSimulation(World w, double dt, const CdSettings& cd = {}, double margin = 0.05,
                               std::uint64_t seed = 7) {
    return Simulation(sceneFromWorld(std::move(w), Method::CD, dt, cd, MdSettings{}, margin, seed));
}

/// An MD run of the world `w` with time step dt and detection margin 0.05
/// on the staged solver (md.pipeline = staged: sim.md() is the MdSolver that
/// steps, whatever the fused pipeline would support).
inline Simulation stagedMdSimulation(World w, double dt, MdSettings md) {
    md.pipeline = MdPipeline::Staged;
    return Simulation(sceneFromWorld(std::move(w), Method::MD, dt, CdSettings{}, md, 0.05));
}

inline WallShape planeShape(const Vec3& normal, double mu = 0.0) {
    WallShape s;
    s.kind = ShapeKind::Plane;
    s.direction = normal.normalized();
    s.mu = mu;
    return s;
}

/// A fixed plane through `point`.
inline BodyId addPlane(World& w, const Vec3& point, const Vec3& normal, double mu = 0.0) {
    return w.addWall("plane", planeShape(normal, mu), point, false, 0.0, {false, false, false});
}

/// `count` spheres of radius 0.3 to 0.5 (unit density) of a loose random
/// packing in the cube [0, side]³ of a 3D world.
inline World randomSpheres(std::size_t count, double side) {
    RandomPackingParams p;
    p.count = count;
    p.rMin = 0.3;
    p.rMax = 0.5;
    p.boxMax = Vec3::Constant(side);
    World w;
    w.dimension = 3;
    addGrains(w, makeRandomLoosePacking(p), GrainShape::Sphere, 1.0);
    return w;
}

/// A jittered cubic lattice of unit spheres (counts per axis) on a floor
/// (μ 0.5) with μ `mu` between grains, under gravity; `throwSpeed` > 0 gives
/// each grain random velocities (up to ±throwSpeed/2) and spins (twice that),
/// so that its contacts open, stick and slide.
inline World cubicLatticeOnFloor(std::array<std::size_t, 3> counts, double throwSpeed, std::uint64_t seed = 3,
                                 double jitter = 0.02, double mu = 0.3) {
    LatticeParams lp;
    lp.type = LatticeType::Cubic;
    lp.counts = counts;
    lp.jitter = jitter;
    lp.seed = seed;
    World w;
    w.dimension = 3;
    w.muGrain = mu;
    w.gravity = Vec3(0, 0, -9.81);
    addGrains(w, makeLattice(lp), GrainShape::Sphere, 1.0);
    addPlane(w, Vec3(0, 0, -0.5), Vec3::UnitZ(), 0.5);
    if (throwSpeed > 0.0) {
        Rng rng = Rng::stream(11, 0);
        for (std::size_t i = 0; i < w.numGrains; ++i)
            for (int k = 0; k < 3; ++k) {
                w.v[i][k] = throwSpeed * (rng.uniform() - 0.5);
                w.w[i][k] = 2.0 * throwSpeed * (rng.uniform() - 0.5);
            }
    }
    return w;
}

/// A jittered n³ cubic lattice of unit spheres (μ = 0.5, gravity −z) on a
/// frictional floor; at n = 18 ~17,000 contacts, above the parallel solvers'
/// thresholds.
inline World latticeOnFloor(std::uint64_t seed, std::size_t n = 18, double jitter = 0.02) {
    return cubicLatticeOnFloor({n, n, n}, 0.0, seed, jitter, 0.5);
}

}  // namespace moreau::test
