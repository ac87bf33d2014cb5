#include "moreau/sim/guards.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/md/laws/duration.hpp"
#include "moreau/sim/simulation.hpp"
#include "run_outputs.hpp"

namespace moreau {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// −Σ m g·x over the axes gravity moves a body along (those it is free on).
double potential(const World& w) {
    double u = 0.0;
    for (std::size_t i = 0; i < w.numBodies(); ++i)
        for (int k = 0; k < 3; ++k)
            if (w.invMass[i][k] > 0.0) u -= w.mass[i] * w.gravity[k] * w.x[i][k];
    return u;
}
double energyOf(const StepRecord& r, const World& w) {
    return r.kineticEnergy + r.rotationalEnergy + r.elasticEnergy + potential(w);
}

}  // namespace

void checkMdStep(const Scene& scene) {
    if (scene.simulation.method != Method::MD || scene.guard.contactSteps <= 0) return;
    const World& w = scene.world;
    if (w.numGrains == 0) return;
    // The lightest collisions: the two lightest grains, and the lightest
    // against each wall (a fixed wall counts as infinitely heavy); each law
    // gives its duration for a probe (md/laws/duration.hpp).
    // A clump's contact off its centre's line is lighter than the clump:
    // the least mass a contact on its spheres moves (lightestContactFraction).
    std::vector<double> fraction;
    for (const ClumpShape& c : w.clumpShapes) fraction.push_back(lightestContactFraction(c, w.rotationMask()));
    auto contactMass = [&](std::size_t i) { return w.clumpOf(i) ? w.mass[i] * fraction[w.shape[i] - 1u] : w.mass[i]; };
    auto contactRadius = [&](std::size_t i) {
        const ClumpShape* c = w.clumpOf(i);
        return c ? w.size[i] * *std::min_element(c->radius.begin(), c->radius.end()) : w.radius[i];
    };
    std::size_t g1 = w.numGrains, g2 = w.numGrains;
    double speed = 0.0, accel = w.gravity.norm();
    Vec3 lo = Vec3::Constant(kInfinity), hi = -lo;
    double rMax = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        const double m = w.mass[i];
        if (g1 == w.numGrains || contactMass(i) < contactMass(g1)) {
            g2 = g1;
            g1 = i;
        } else if (g2 == w.numGrains || contactMass(i) < contactMass(g2)) {
            g2 = i;
        }
        speed = std::max(speed, 2.0 * w.v[i].norm());
        const Vec3 f = w.appliedForce(static_cast<BodyId>(i), 0.0);
        const Vec3 g = i < w.force.size() ? w.force[i].after : Vec3::Zero();
        accel = std::max(accel, w.gravity.norm() + std::max(f.norm(), g.norm()) / m);
        lo = lo.cwiseMin(w.x[i]);
        hi = hi.cwiseMax(w.x[i]);
        rMax = std::max(rMax, w.radius[i]);
    }
    const double height = (hi - lo).maxCoeff() + 2.0 * rMax;
    speed += std::sqrt(2.0 * accel * height);
    const double m1 = contactMass(g1), r1 = contactRadius(g1);
    // A lone grain without walls still gets its own mass as a scale.
    std::vector<CollisionProbe> probes{{m1, speed, r1, -1}};
    if (g2 < w.numGrains) {
        const double m2 = contactMass(g2), r2 = contactRadius(g2);
        probes[0] = {m1 * m2 / (m1 + m2), speed, r1 * r2 / (r1 + r2), -1};
    }
    for (std::size_t k = 0; k < w.numWalls(); ++k) {
        const double mw = w.wallMobile[k] ? w.mass[w.numGrains + k] : kInfinity;
        probes.push_back({std::isfinite(mw) ? m1 * mw / (m1 + mw) : m1, speed, r1, static_cast<int>(k)});
    }
    double tn = kInfinity, meff = m1;
    for (const CollisionProbe& p : probes)
        if (const double t = contactDuration(scene.md, p); t < tn || (!(t > tn) && p.meff < meff)) {
            tn = t;
            meff = p.meff;
        }
    const double step = scene.simulation.dt / scene.md.substeps;
    const double limit = tn / static_cast<double>(scene.guard.contactSteps);
    if (!(step > limit)) return;
    const double substeps = std::ceil(scene.simulation.dt / limit);
    throw InputError(format("%s: keys 'simulation.dt', 'md.substeps': the MD step %.3g (simulation.dt / md.substeps) "
                            "does not resolve a contact, which lasts about %.3g (md.normal, md.kn, md.kt, smallest "
                            "m_eff %.3g, speed %.3g); it must be below %.3g (allowed: md.substeps >= %.0f, or "
                            "simulation.dt <= %.3g with md.substeps = %ld; guard.contact_steps = 0 runs it anyway)",
                            scene.origin.c_str(), step, tn, meff, speed, limit, substeps,
                            limit * static_cast<double>(scene.md.substeps), scene.md.substeps));
}

void checkStart(const Scene& scene) {
    const World& w = scene.world;
    const std::string allow = format(" (allowed: overlaps up to guard.start_overlap = %g of the smallest radius; "
                                     "inf runs it anyway)",
                                     scene.guard.startOverlap);
    double rMin = kInfinity;
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        rMin = std::min(rMin, w.radius[i]);
        for (int k = 0; k < 3; ++k)
            if (w.periodic[k] && !(w.x[i][k] >= w.boxMin[k] && w.x[i][k] < w.boxMax[k]))
                throw InputError(format("%s: grain %zu lies outside the periodic box along %c (at %g; allowed: "
                                        "[periodic.box_min, periodic.box_max))",
                                        scene.origin.c_str(), i, static_cast<char>('x' + k), w.x[i][k]));
    }
    if (w.numGrains == 0 || std::isinf(scene.guard.startOverlap)) return;
    std::vector<Contact> contacts;
    CellGridDetector().detect(w, 0.0, contacts);
    // Bodies that cannot push each other: a grain glued to a wall and the
    // wall, two grains of one plate, two kinematic bodies.
    const std::vector<BodyId> carriers = w.carriers();
    auto carrier = [&](BodyId b) { return carriers.empty() ? b : carriers[static_cast<std::size_t>(b)]; };
    auto kinematic = [&](BodyId b) {
        const auto i = static_cast<std::size_t>(b);
        return w.invMass[i] == Vec3::Zero() && w.invInertia[i] == Vec3::Zero();
    };
    for (const Contact& c : contacts) {
        if (!(c.gap < -scene.guard.startOverlap * rMin)) continue;
        if (carrier(c.a) == carrier(c.b) ||
            (kinematic(c.a) && kinematic(c.b)))
            continue;
        if (w.isWall(c.b))
            throw InputError(format("%s: grain %d lies %g inside or behind wall '%s'", scene.origin.c_str(), c.a, -c.gap,
                                    w.wallName[static_cast<std::size_t>(c.b) - w.numGrains].c_str()) +
                             allow);
        throw InputError(format("%s: grains %d and %d overlap by %g", scene.origin.c_str(), c.a, c.b, -c.gap) + allow);
    }
}

Guard::Guard(const Simulation& sim, RunTotals& totals) : g_(sim.scene().guard) {
    const World& w = sim.world();
    rMin_ = kInfinity;
    for (std::size_t i = 0; i < w.numGrains; ++i) rMin_ = std::min(rMin_, w.radius[i]);
    // Energy: only where nothing feeds it but gravity.
    bool sources = false;
    for (const ForceSchedule& f : w.force) sources = sources || f.before.norm() > 0.0 || f.after.norm() > 0.0;
    for (std::size_t i = 0; i < w.numBodies(); ++i) sources = sources || w.prescribed[i];
    for (int k = 0; k < 3; ++k) sources = sources || (w.periodic[k] && w.gravity[k] != 0.0);
    sources = sources || w.deforming() || sim.scene().cellServo.any();  // the cell works on the grains
    energy_ = g_.energy && !sources;
    if (!energy_) return;
    if (!std::isnan(totals.energyStart)) {
        e0_ = totals.energyStart;
        budget_ = totals.energyBudget;
        return;
    }
    e0_ = energyOf(sim.observe(), w);
    Vec3 lo = Vec3::Constant(kInfinity), hi = -lo;
    double rMax = 0.0, mass = 0.0;
    for (std::size_t i = 0; i < w.numBodies(); ++i) {
        if (w.isWall(static_cast<BodyId>(i)) && !w.wallMobile[i - w.numGrains]) continue;
        lo = lo.cwiseMin(w.x[i]);
        hi = hi.cwiseMax(w.x[i]);
        rMax = std::max(rMax, w.radius[i]);
        mass += w.mass[i];
    }
    const double height = w.numGrains > 0 ? (hi - lo).maxCoeff() + 2.0 * rMax : 0.0;
    budget_ = std::abs(e0_ - potential(w)) + mass * w.gravity.norm() * height;
    totals.energyStart = e0_;
    totals.energyBudget = budget_;
}

std::string Guard::checkTravel(const Simulation& sim) const {
    const World& w = sim.world();
    const double dt = sim.scene().simulation.dt;
    if (g_.maxTravel > 0.0)
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            const double reach = g_.maxTravel * w.radius[i];  // squared: no root per grain and step
            if (!(w.v[i].squaredNorm() * (dt * dt) <= reach * reach))
                return format("grain %zu moves %.3g radii in a step, |v| = %.3g (guard.max_travel = %g)", i,
                              w.v[i].norm() * dt / w.radius[i], w.v[i].norm(), g_.maxTravel);
        }
    return {};
}

std::string Guard::check(const Simulation& sim) const {
    const World& w = sim.world();
    if (g_.maxOverlap > 0.0) {
        const double overlap = sim.record().maxOverlap;
        if (!(overlap <= g_.maxOverlap * rMin_))
            return format("an overlap of %.3g, %.3g of the smallest radius (guard.max_overlap = %g)", overlap,
                          overlap / rMin_, g_.maxOverlap);
    }
    if (energy_) {
        const double e = energyOf(sim.record(), w);
        if (!(e - e0_ <= budget_))
            return format("the energy rose by %.3g from %.3g with no source to give more than %.3g "
                          "(guard.energy)",
                          e - e0_, e0_, budget_);
    }
    return {};
}

}  // namespace moreau
