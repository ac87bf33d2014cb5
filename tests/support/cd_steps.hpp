#pragma once
/// Small helpers of the CD and MD tests: whole steps (detect, match, solve) and walls.
#include <cstdint>
#include <utility>

#include "moreau/cd/solver.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau::test {

/// Detect (margin 0.05 unless given), match with last step's contacts and
/// take one CD step.
inline CdStepStats stepWorld(World& w, CdSolver& solver, std::vector<Contact>& contacts, double dt,
                             double margin = 0.05, std::uint64_t seed = 7) {
    CellGridDetector detector;
    std::vector<Contact> fresh;
    detector.detect(w, margin, fresh);
    matchContacts(contacts, fresh);
    contacts.swap(fresh);
    StepContext ctx;
    ctx.dt = dt;
    ctx.step = w.step;
    ctx.seed = seed;
    return solver.step(w, contacts, ctx);
}

/// Detect (margin 0.05), match with last step's contacts (MD history carries
/// over through `index`) and take one MD step.
inline void mdStep(World& w, MdSolver& solver, std::vector<Contact>& contacts, std::vector<std::int32_t>& index,
                   double dt) {
    CellGridDetector detector;
    std::vector<Contact> fresh;
    detector.detect(w, 0.05, fresh);
    matchContacts(contacts, fresh, &index);
    contacts.swap(fresh);
    StepContext ctx;
    ctx.dt = dt;
    ctx.step = w.step;
    solver.step(w, contacts, index, ctx);
}

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

/// A jittered 18³ cubic lattice of unit spheres (μ = 0.5, gravity −z) on a
/// frictional floor: ~17,000 contacts, above the parallel solvers' thresholds.
inline World latticeOnFloor(std::uint64_t seed) {
    LatticeParams lp;
    lp.type = LatticeType::Cubic;
    lp.counts = {18, 18, 18};
    lp.jitter = 0.02;
    lp.seed = seed;
    World w;
    w.dimension = 3;
    w.muGrain = 0.5;
    w.gravity = Vec3(0, 0, -9.81);
    addGrains(w, makeLattice(lp), GrainShape::Sphere, 1.0);
    addPlane(w, Vec3(0, 0, -0.5), Vec3::UnitZ(), 0.5);
    return w;
}

}  // namespace moreau::test
