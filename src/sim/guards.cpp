#include "moreau/sim/guards.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "moreau/contact/detection.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/comm.hpp"
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

namespace {

/// The part's grains that count here: every grain, or this rank's own.
bool counts(const OwnedGrains* ranks, std::size_t k) { return !ranks || ranks->owned[k]; }
std::uint64_t idOf(const OwnedGrains* ranks, std::size_t k) { return ranks ? ranks->gid[k] : k; }

/// Every rank's bytes (collective with `ranks`; the serial run's own without).
std::string fromAll(const OwnedGrains* ranks, const ByteWriter& mine) {
    return ranks ? comm::gatherToAll(mine.bytes()) : mine.bytes();
}

}  // namespace

void checkMdStep(const Scene& settings, const World& w, const OwnedGrains* ranks) {
    if (settings.simulation.method != Method::MD || settings.guard.contactSteps <= 0) return;
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
    // Over the grains (a rank's own): the two lightest by (contact mass,
    // id), the largest speed and acceleration, the extent. Each a minimum
    // or maximum: the ranks' merge is the serial pass's.
    struct Light {
        double mass;
        std::uint64_t id;
        double radius;
        bool operator<(const Light& o) const { return mass < o.mass || (mass == o.mass && id < o.id); }
    };
    std::vector<Light> light;
    double speed = 0.0, accel = w.gravity.norm();
    Vec3 lo = Vec3::Constant(kInfinity), hi = -lo;
    double rMax = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!counts(ranks, i)) continue;
        const double m = w.mass[i];
        const Light l{contactMass(i), idOf(ranks, i), contactRadius(i)};
        if (light.size() < 2 || l < light[1]) {
            light.push_back(l);
            std::sort(light.begin(), light.end());
            if (light.size() > 2) light.pop_back();
        }
        speed = std::max(speed, 2.0 * w.v[i].norm());
        const Vec3 f = w.appliedForce(static_cast<BodyId>(i), 0.0);
        const Vec3 g = i < w.force.size() ? w.force[i].after : Vec3::Zero();
        accel = std::max(accel, w.gravity.norm() + std::max(f.norm(), g.norm()) / m);
        lo = lo.cwiseMin(w.x[i]);
        hi = hi.cwiseMax(w.x[i]);
        rMax = std::max(rMax, w.radius[i]);
    }
    ByteWriter mine;
    mine.put(static_cast<std::uint64_t>(light.size()));
    for (const Light& l : light) {
        mine.put(l.mass);
        mine.put(l.id);
        mine.put(l.radius);
    }
    for (const double x : {speed, accel, rMax, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]}) mine.put(x);
    const std::string all = fromAll(ranks, mine);
    ByteReader in(all, "the ranks' contact probes");
    light.clear();
    speed = 0.0;
    accel = 0.0;
    rMax = 0.0;
    lo = Vec3::Constant(kInfinity);
    hi = -lo;
    while (in.left() > 0) {
        const auto n = in.get<std::uint64_t>("count");
        for (std::uint64_t k = 0; k < n; ++k) {
            Light l{};
            l.mass = in.get<double>("mass");
            l.id = in.get<std::uint64_t>("id");
            l.radius = in.get<double>("radius");
            light.push_back(l);
        }
        speed = std::max(speed, in.get<double>("speed"));
        accel = std::max(accel, in.get<double>("acceleration"));
        rMax = std::max(rMax, in.get<double>("radius"));
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], in.get<double>("extent"));
        for (int a = 0; a < 3; ++a) hi[a] = std::max(hi[a], in.get<double>("extent"));
    }
    if (light.empty()) return;  // no grain
    std::sort(light.begin(), light.end());
    const double height = (hi - lo).maxCoeff() + 2.0 * rMax;
    speed += std::sqrt(2.0 * accel * height);
    const double m1 = light[0].mass, r1 = light[0].radius;
    // A lone grain without walls still gets its own mass as a scale.
    std::vector<CollisionProbe> probes{{m1, speed, r1, -1}};
    if (light.size() > 1) {
        const double m2 = light[1].mass, r2 = light[1].radius;
        probes[0] = {m1 * m2 / (m1 + m2), speed, r1 * r2 / (r1 + r2), -1};
    }
    for (std::size_t k = 0; k < w.numWalls(); ++k) {
        const double mw = w.wallMobile[k] ? w.mass[w.numGrains + k] : kInfinity;
        probes.push_back({std::isfinite(mw) ? m1 * mw / (m1 + mw) : m1, speed, r1, static_cast<int>(k)});
    }
    double tn = kInfinity, meff = m1;
    for (const CollisionProbe& p : probes)
        if (const double t = contactDuration(settings.md, p); t < tn || (!(t > tn) && p.meff < meff)) {
            tn = t;
            meff = p.meff;
        }
    const double step = settings.simulation.dt / settings.md.substeps;
    const double limit = tn / static_cast<double>(settings.guard.contactSteps);
    if (!(step > limit)) return;
    const double substeps = std::ceil(settings.simulation.dt / limit);
    throw InputError(format("%s: keys 'simulation.dt', 'md.substeps': the MD step %.3g (simulation.dt / md.substeps) "
                            "does not resolve a contact, which lasts about %.3g (md.normal, md.kn, md.kt, smallest "
                            "m_eff %.3g, speed %.3g); it must be below %.3g (allowed: md.substeps >= %.0f, or "
                            "simulation.dt <= %.3g with md.substeps = %ld; guard.contact_steps = 0 runs it anyway)",
                            settings.origin.c_str(), step, tn, meff, speed, limit, substeps,
                            limit * static_cast<double>(settings.md.substeps), settings.md.substeps));
}

void checkStart(const Scene& settings, const World& w, const OwnedGrains* ranks) {
    const std::string allow = format(" (allowed: overlaps up to guard.start_overlap = %g of the smallest radius; "
                                     "inf runs it anyway)",
                                     settings.guard.startOverlap);
    // The first grain by id outside the periodic box, over the ranks.
    std::uint64_t outside = std::numeric_limits<std::uint64_t>::max();
    int outsideAxis = 0;
    double outsideAt = 0.0, rMin = kInfinity;
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        if (!counts(ranks, i)) continue;
        rMin = std::min(rMin, w.radius[i]);
        for (int k = 0; k < 3 && outside == std::numeric_limits<std::uint64_t>::max(); ++k)
            if (w.periodic[k] && !(w.x[i][k] >= w.boxMin[k] && w.x[i][k] < w.boxMax[k])) {
                outside = idOf(ranks, i);
                outsideAxis = k;
                outsideAt = w.x[i][k];
            }
    }
    {
        ByteWriter mine;
        mine.put(outside);
        mine.put(static_cast<std::int32_t>(outsideAxis));
        mine.put(outsideAt);
        mine.put(rMin);
        const std::string all = fromAll(ranks, mine);
        ByteReader in(all, "the ranks' start checks");
        while (in.left() > 0) {
            const auto id = in.get<std::uint64_t>("id");
            const auto axis = in.get<std::int32_t>("axis");
            const double at = in.get<double>("position");
            rMin = std::min(rMin, in.get<double>("radius"));
            if (id < outside) {
                outside = id;
                outsideAxis = axis;
                outsideAt = at;
            }
        }
    }
    if (outside != std::numeric_limits<std::uint64_t>::max())
        throw InputError(format("%s: grain %llu lies outside the periodic box along %c (at %g; allowed: "
                                "[periodic.box_min, periodic.box_max))",
                                settings.origin.c_str(), static_cast<unsigned long long>(outside),
                                static_cast<char>('x' + outsideAxis), outsideAt));
    if (!std::isfinite(rMin) || std::isinf(settings.guard.startOverlap)) return;
    // The pairs overlapping too much; a rank counts those whose first grain
    // (by id) it owns. The report: the first pair by ids (a wall's id after
    // every grain's, walls in order).
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
    const std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    std::pair<std::uint64_t, std::uint64_t> first{none, none};
    std::string report;
    for (const Contact& c : contacts) {
        if (!(c.gap < -settings.guard.startOverlap * rMin)) continue;
        if (carrier(c.a) == carrier(c.b) || (kinematic(c.a) && kinematic(c.b))) continue;
        const auto a = static_cast<std::size_t>(c.a), b = static_cast<std::size_t>(c.b);
        const bool wall = w.isWall(c.b);
        std::pair<std::uint64_t, std::uint64_t> ids;
        if (wall) {
            if (!counts(ranks, a)) continue;
            ids = {idOf(ranks, a), none - w.numWalls() + (b - w.numGrains)};
        } else {
            const std::size_t low = idOf(ranks, a) < idOf(ranks, b) ? a : b;
            if (!counts(ranks, low)) continue;
            ids = std::minmax(idOf(ranks, a), idOf(ranks, b));
        }
        if (!(ids < first)) continue;
        first = ids;
        report = wall ? format("%s: grain %llu lies %g inside or behind wall '%s'", settings.origin.c_str(),
                               static_cast<unsigned long long>(ids.first), -c.gap,
                               w.wallName[b - w.numGrains].c_str())
                      : format("%s: grains %llu and %llu overlap by %g", settings.origin.c_str(),
                               static_cast<unsigned long long>(ids.first), static_cast<unsigned long long>(ids.second),
                               -c.gap);
    }
    ByteWriter mine;
    mine.put(first.first);
    mine.put(first.second);
    mine.putString(report);
    const std::string all = fromAll(ranks, mine);
    ByteReader in(all, "the ranks' start checks");
    while (in.left() > 0) {
        const std::pair<std::uint64_t, std::uint64_t> ids{in.get<std::uint64_t>("id"), in.get<std::uint64_t>("id")};
        std::string text = in.getString("report");
        if (ids < first || (ids == first && report.empty())) {
            first = ids;
            report = std::move(text);
        }
    }
    if (!report.empty()) throw InputError(report + allow);
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
