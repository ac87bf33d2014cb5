#include "moreau/sim/simulation.hpp"
#include "moreau/core/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/integrator_table.hpp"

namespace moreau {

namespace {

/// What a world with clumps needs of its scene in MD: a scheme that steps
/// them, no rolling law (its moment is written for a sphere's radius).
void checkClumps(const Scene& scene) {
    auto refuse = [&](const std::string& key, const std::string& value, const std::string& allowed) {
        throw InputError(scene.origin + ": key '" + key + "': '" + value + "' cannot run clumps (allowed: " + allowed +
                         ")");
    };
    if (scene.simulation.method != Method::MD) return;
    const IntegratorInfo& info = integratorInfo(scene.md.integrator);
    if (!info.clumps) refuse("md.integrator", info.name, "cd");
    if (scene.md.rolling != RollingLaw::None) refuse("md.rolling", "a rolling law", "none");
}

/// What a world of polygons needs of its scene: plane walls only; in MD the
/// leapfrog or Gear's predictor–correctors (the others' stages and law
/// rates are written for spheres) and no rolling law.
void checkPolygons(const Scene& scene) {
    const World& w = scene.world;
    for (std::size_t i = 0; i < w.numGrains; ++i)
        if (!w.polygonOf(i))
            throw InputError(scene.origin + ": key 'grains.shape': grain " + std::to_string(i) +
                             " is not a polygon in a world of polygons (allowed: every grain a polygon)");
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallShape[k].kind != ShapeKind::Plane)
            throw InputError(scene.origin + ": key 'wall." + w.wallName[k] +
                             ".type': 'cylinder' cannot hold polygons (allowed: plane)");
    if (scene.simulation.method != Method::MD) return;
    auto refuse = [&](const std::string& key, const std::string& value, const std::string& allowed) {
        throw InputError(scene.origin + ": key '" + key + "': '" + value + "' cannot run polygons (allowed: " +
                         allowed + ")");
    };
    const IntegratorInfo& info = integratorInfo(scene.md.integrator);
    if (!info.clumps && info.family != IntegratorFamily::Gear) refuse("md.integrator", info.name, "cd, gpc3, gpc4, gear5");
    if (scene.md.rolling != RollingLaw::None) refuse("md.rolling", "a rolling law", "none");
}

}  // namespace

Simulation::Simulation(Scene scene)
    : scene_(std::move(scene)), detector_(scene_.simulation.skin), cd_(scene_.cd), md_(scene_.md) {
    const MdSettings& md = scene_.md;
    if (scene_.world.hasClumps()) checkClumps(scene_);
    if (scene_.world.hasPolygons()) {
        checkPolygons(scene_);
        scene_.world.polygonOverlaps = scene_.simulation.method == Method::MD;
    }
    if (scene_.simulation.method != Method::MD) return;
    // A deforming cell's images move: the contact kinematics of the cd
    // scheme's force pass carry their velocity; the stage evaluations of the
    // other schemes do not yet.
    if ((scene_.world.deforming() || scene_.cellServo.any()) && md.integrator != Integrator::CD)
        throw InputError(scene_.origin + ": key 'md.integrator': '" + std::string(integratorInfo(md.integrator).name) +
                         "' cannot step a deforming periodic cell (allowed: cd with periodic.shear_rate or "
                         "periodic.strain_rate)");
    // The staged solver's laws declare the memory each contact carries.
    slots_.stride = previousSlots_.stride = md_.slotStride();
    std::string why = scene_.world.hasClumps() ? "clumps take the staged pipeline" : "polygons take the staged pipeline";
    const bool fusable = !scene_.world.hasShapes() && MdSolver::pairListAdmits(md, &why);
    if (md.pipeline == MdPipeline::Fused && !fusable)
        throw InputError(scene_.origin + ": key 'md.pipeline': 'fused' cannot run this scene: " + why +
                         " (allowed: auto, staged)");
    if (md.pipeline == MdPipeline::Fused || (md.pipeline == MdPipeline::Auto && fusable))
        md_.usePairList(scene_.simulation.skin, scene_.simulation.innerSkin, scene_.simulation.margin);
}

const std::vector<Contact>& Simulation::contacts() const {
    if (fused() && contactsStale_) {
        md_.pairList()->contacts(scene_.world, scene_.simulation.margin, contacts_);
        contactsStale_ = false;
    }
    return contacts_;
}

void Simulation::contactsInto(std::vector<Contact>& out) const {
    if (fused() && contactsStale_) md_.pairList()->contacts(scene_.world, scene_.simulation.margin, out);
    else out = contacts_;
}

ContactStore Simulation::contactStore() const {
    ContactStore store;
    contactStore(store);
    return store;
}

void Simulation::contactStore(ContactStore& store) const {
    if (fused()) return md_.pairList()->memoryInto(store);
    rememberContacts(contacts_, store.records);
    store.slots.stride = slots_.stride;
    store.slots.values = slots_.values;
}

void Simulation::restoreContacts(const ContactStore& store) {
    checkContactStore(store, scene_.origin);
    if (fused()) {
        md_.restorePairMemory(store, scene_.origin);
        contactsStale_ = true;
        return;
    }
    if (store.slots.stride != slots_.stride || store.slots.records() != (slots_.stride > 0 ? store.records.size() : 0))
        throw InputError(scene_.origin + ": contact store of " + std::to_string(store.slots.stride) +
                         " slots per contact, the scene's laws keep " + std::to_string(slots_.stride));
    const std::size_t m = store.records.size();
    contacts_.assign(m, Contact{});
    for (std::size_t k = 0; k < m; ++k) {
        const ContactMemory& r = store.records[k];
        contacts_[k] = pairContact(keyBodyA(r.key), keyBodyB(r.key));
        contacts_[k].key = r.key;
        contacts_[k].history = r.history;
    }
    slots_ = store.slots;
    next_ = Stage::Detect;
}

void Simulation::saveState(ByteWriter& out) const {
    std::ostringstream store;
    writeContactStore(store, contactStore());
    out.putString(store.str());
    out.put(static_cast<std::uint8_t>(scene_.simulation.method == Method::MD && !fused()));
    if (scene_.simulation.method == Method::MD && !fused()) md_.saveState(out);
}

void Simulation::loadState(ByteReader& in) {
    std::istringstream store(in.getString("contact store"));
    restoreContacts(readContactStore(store, scene_.origin));
    const bool staged = in.getBool("solver state");
    if (staged != (scene_.simulation.method == Method::MD && !fused()))
        in.fail(std::string("solver state of ") + (staged ? "the staged MD solver" : "no staged MD solver") +
                ", the scene's is not");
    if (staged) md_.loadState(in, scene_.world.numBodies());
}

StepRecord worldRecord(const World& w, const OverlapStats& o) {
    StepRecord r;
    r.step = w.step;
    r.time = w.time;
    r.kineticEnergy = kineticEnergy(w);
    r.rotationalEnergy = rotationalEnergy(w);
    r.contacts = o.contacts;
    r.meanOverlap = o.mean;
    r.maxOverlap = o.max;
    return r;
}

StepRecord Simulation::observe() const {
    StepRecord r = worldRecord(scene_.world, fused() ? md_.pairOverlapStats() : overlapStats(contacts_));
    if (scene_.simulation.method == Method::MD) r.elasticEnergy = md_.elasticEnergy();
    return r;
}

void Simulation::overrideContactForce(BodyId b, const Vec3& f) {
    if (scene_.simulation.method != Method::MD || scene_.md.integrator != Integrator::CD || next_ != Stage::Integrate)
        throw std::logic_error("Simulation::overrideContactForce: MD with the integrator cd, between solve and integrate");
    md_.overrideContactForce(static_cast<std::size_t>(b), f);
}

Vec3 Simulation::contactForce(BodyId b) const {
    if (scene_.simulation.method != Method::MD || scene_.md.integrator != Integrator::CD || next_ != Stage::Integrate)
        throw std::logic_error("Simulation::contactForce: MD with the integrator cd, between solve and integrate");
    return md_.contactForce(static_cast<std::size_t>(b));
}

StepRecord Simulation::measuredRecord() const {
    StepRecord r = record();
    auto clock = std::chrono::steady_clock::now();
    measureInto(r, scene_.world, contacts(), scene_.output);
    lap(clock, profile_.observe);
    return r;
}

void measureInto(StepRecord& r, const World& world, const std::vector<Contact>& contacts, const OutputSettings& output,
                 const WorldPart* part) {
    std::optional<MeasureRegion> region;
    if (const auto& box = output.stressRegion) region = MeasureRegion{(*box)[0], (*box)[1]};
    const Measurements m = measure(world, contacts, region ? &*region : nullptr, part ? *part : WorldPart{});
    r.stress = m.stress;
    r.pressure = m.pressure;
    r.deviator = m.deviator;
    r.packingFraction = m.packingFraction;
    r.coordination = m.coordination;
    r.coordinationNonRattlers = m.coordinationNonRattlers;
    r.fabric = m.fabric;
    r.wallForce = m.wallForce;  // with the grains glued to each wall (the plate's load)
    r.wallTorque = m.wallTorque;
}

Scene sceneWithoutWorld(const Scene& scene) {
    return Scene{.origin = scene.origin, .simulation = scene.simulation, .cd = scene.cd, .md = scene.md,
                 .output = scene.output, .guard = scene.guard, .world = {}, .servos = scene.servos,
                 .cellServo = scene.cellServo, .values = scene.values};
}

const StepRecord& Simulation::record() const {
    if (recordStale_) {
        auto clock = std::chrono::steady_clock::now();
        record_ = observe();
        record_.iterations = advanced_.iterations;
        record_.residual = advanced_.residual;
        record_.naturalError = advanced_.error;
        recordStale_ = false;
        lap(clock, profile_.observe);
    }
    return record_;
}

StepContext Simulation::stageContext() const {
    StepContext ctx{scene_.simulation.dt, scene_.world.step, scene_.simulation.seed};
    if (scene_.simulation.method == Method::MD) ctx.dt /= scene_.md.substeps;
    return ctx;
}

void Simulation::expectStage(Stage stage, const char* name) {
    static constexpr const char* kNames[] = {"detect", "match", "solve", "integrate"};
    if (next_ == stage) return;
    throw std::logic_error(std::string("Simulation::") + name + "(): the stage due is " +
                           kNames[static_cast<int>(next_)] +
                           "(); the stages of a step run in the order detect, match, solve, integrate "
                           "(detect may start a new step at any time)");
}

void Simulation::detect() {
    // contacts_ holds candidates not matched yet when detect() runs twice:
    // they, not last step's contacts, become the memory (all clean).
    const bool matched = next_ != Stage::Match;
    next_ = Stage::Match;
    if (fused()) return;  // the fused pipeline's pair list finds its contacts itself
    // This step's contacts replace last step's, whose records (key, history,
    // the laws' slots) the match carries over.
    if (matched) previousSlots_.values.swap(slots_.values);
    else previousSlots_.values.assign(contacts_.size() * previousSlots_.stride, 0.0);
    detector_.detect(scene_.world, scene_.simulation.margin, contacts_, previous_);
}

void Simulation::match() {
    expectStage(Stage::Match, "match");
    next_ = Stage::Solve;
    if (fused()) return;
    matchContactMemory(previous_, previousSlots_, contacts_, slots_);
    // CD: free last step's memory before the solve, whose own arrays are large.
    if (scene_.simulation.method == Method::CD) std::vector<ContactMemory>().swap(previous_);
}

void Simulation::solve() {
    expectStage(Stage::Solve, "solve");
    World& w = scene_.world;
    const StepContext ctx = stageContext();
    if (scene_.simulation.method == Method::CD) {
        stats_ = cd_.solve(w, contacts_, ctx);
    } else {
        md_.forces(w, contacts_, slots_, ctx, &detector_.shapePoses());
        contactsStale_ = fused();
    }
    next_ = Stage::Integrate;
}

void Simulation::integrate() {
    expectStage(Stage::Integrate, "integrate");
    next_ = Stage::Detect;
    progress::stepDone();
    World& w = scene_.world;
    const StepContext ctx = stageContext();
    const bool glued = w.anyGlued();
    if (glued) {
        gluedFrom_.clear();
        for (const World::DrivenGrain& d : w.driven)
            if (d.wall >= 0) gluedFrom_.push_back(w.x[static_cast<std::size_t>(d.grain)]);
        wallsFrom_.assign(w.x.begin() + static_cast<std::ptrdiff_t>(w.numGrains), w.x.end());
    }
    // A deforming cell first: the positions at the end of the step wrap
    // into the cell of that time (World::advanceCell).
    w.advanceCell(ctx.dt);
    if (scene_.simulation.method == Method::CD) {
        cd_.integrate(w, ctx.dt);
    } else {
        md_.integrate(w, contacts_, slots_, ctx);
        // Fused: contacts() asked for between the stages had the positions before the drift.
        contactsStale_ = fused();
    }
    if (!glued) return;
    // Glued grains translate with their walls, whatever the scheme did
    // with them: one rigid body (World::DrivenGrain).
    std::size_t k = 0;
    for (const World::DrivenGrain& d : w.driven) {
        if (d.wall < 0) continue;
        const auto i = static_cast<std::size_t>(d.grain), b = static_cast<std::size_t>(d.wall);
        w.x[i] = gluedFrom_[k++] + w.minimumImage(w.x[b] - wallsFrom_[b - w.numGrains]);
        w.advancePose(i, 0.0);  // the periodic wrap
        w.v[i] = w.v[b];
        w.w[i] = Vec3::Zero();
    }
}

std::vector<Vec3> Simulation::contactForces() const {
    std::vector<Vec3> force(scene_.world.numBodies(), Vec3::Zero());
    forEachContactForce([&](BodyId a, BodyId b, const Vec3& f) {
        force[static_cast<std::size_t>(b)] += f;
        force[static_cast<std::size_t>(a)] -= f;
    });
    return force;
}

std::vector<Vec3> Simulation::wallLoads() const {
    const World& w = scene_.world;
    std::vector<Vec3> force = contactForces();
    w.addGluedForces(force);
    return {force.begin() + static_cast<std::ptrdiff_t>(w.numGrains), force.end()};
}

namespace {

/// The checks of setCellRates and setCellServo.
void checkCell(const Scene& scene, const std::array<bool, 3>& axes, bool shear, const std::string& what) {
    const World& w = scene.world;
    for (int k = 0; k < 3; ++k)
        if (axes[static_cast<std::size_t>(k)] && !w.periodic[static_cast<std::size_t>(k)])
            throw InputError(what + ": axis " + std::string(1, static_cast<char>('x' + k)) +
                             " is not periodic (allowed: the periodic axes)");
    if (shear && !(w.periodic[0] && w.periodic[1]))
        throw InputError(what + ": a shear rate needs x and y periodic (allowed: 0 here)");
    if ((shear || axes[0] || axes[1] || axes[2]) && scene.simulation.method == Method::MD &&
        scene.md.integrator != Integrator::CD)
        throw InputError(what + ": md.integrator '" + std::string(integratorInfo(scene.md.integrator).name) +
                         "' cannot step a deforming cell (allowed: cd)");
}

}  // namespace

void Simulation::setCellServo(const CellServo& servo, const std::string& what) {
    checkCell(scene_, servo.axes, false, what);
    if (servo.any() && !(servo.stress.allFinite() && servo.gain > 0.0 && std::isfinite(servo.gain) && servo.maxRate > 0.0 &&
                         servo.time > 0.0))
        throw InputError(what + ": finite stresses, gain > 0, max rate > 0 and time > 0 (allowed: those)");
    scene_.cellServo = servo;
    // The scene's keys say it too, so that a checkpoint's scene continues with it.
    std::string axes;
    for (int a = 0; a < 3; ++a)
        if (servo.axes[static_cast<std::size_t>(a)]) axes += static_cast<char>('x' + a);
    scene_.values["periodic.stress_axes"] = axes;
    scene_.values["periodic.stress"] = sceneValueText(servo.stress);
    scene_.values["periodic.stress_gain"] = servo.any() ? sceneValueText(servo.gain) : "";
    scene_.values["periodic.max_strain_rate"] = sceneValueText(servo.maxRate);
    scene_.values["periodic.stress_time"] = sceneValueText(servo.time);
}

void Simulation::setCellRates(const Vec3& strainRate, double shearRate, const std::string& what) {
    checkCell(scene_, {strainRate[0] != 0.0, strainRate[1] != 0.0, strainRate[2] != 0.0}, shearRate != 0.0, what);
    if (!strainRate.allFinite() || !std::isfinite(shearRate))
        throw InputError(what + ": finite rates (allowed: finite numbers)");
    scene_.world.strainRate = strainRate;
    scene_.world.shearRate = shearRate;
    scene_.values["periodic.strain_rate"] = sceneValueText(strainRate);
    scene_.values["periodic.shear_rate"] = sceneValueText(shearRate);
}

void Simulation::setCdIterations(int n, const std::string& what) {
    if (scene_.simulation.method != Method::CD) throw InputError(what + ": CD only (simulation.method = cd)");
    if (n < 1) throw InputError(what + ": " + std::to_string(n) + " (allowed: integer >= 1)");
    cd_.settings().iterations = n;
    scene_.cd.iterations = n;
    scene_.values["cd.iterations"] = std::to_string(n);
}

void Simulation::setStage(const std::string& name, const std::string& what) {
    if (scene_.output.stage.empty())
        throw InputError(what + ": this run has no stage column (start it with output.stage = NAME, the first "
                                "stage's name)");
    if (!isStageName(name))
        throw InputError(what + ": '" + name + "' is not a stage name (allowed: " + kStageNameAllowed + ")");
    scene_.output.stage = name;
    scene_.values["output.stage"] = name;
}

Mat3 Simulation::cellStress() const {
    const World& w = scene_.world;
    Mat3 sum = Mat3::Zero();
    forEachContactForce([&](BodyId a, BodyId b, const Vec3& f) {
        if (w.isWall(b) || f == Vec3::Zero()) return;
        sum += f * w.minimumImage(w.x[static_cast<std::size_t>(b)] - w.x[static_cast<std::size_t>(a)]).transpose();
    });
    std::vector<Vec3> flow(w.numGrains);
    for (std::size_t i = 0; i < w.numGrains; ++i) flow[i] = w.v[i] - w.meanFlow(w.x[i]);
    return kineticStress(sum, {w.mass.data(), w.numGrains}, flow, w);
}

Mat3 kineticStress(Mat3 sum, std::span<const double> mass, std::span<const Vec3> flow, const World& w) {
    double volume = 1.0, total = 0.0;
    for (int k = 0; k < w.dimension; ++k) volume *= w.periodic[static_cast<std::size_t>(k)] ? w.boxMax[k] - w.boxMin[k] : 1.0;
    Vec3 momentum = Vec3::Zero();
    for (std::size_t i = 0; i < mass.size(); ++i) {
        total += mass[i];
        momentum += mass[i] * flow[i];
    }
    const Vec3 mean = total > 0.0 ? Vec3(momentum / total) : Vec3::Zero();
    for (std::size_t i = 0; i < mass.size(); ++i) {
        const Vec3 u = flow[i] - mean;
        sum += mass[i] * u * u.transpose();
    }
    return sum / volume;
}

void Simulation::applyControls() {
    World& w = scene_.world;
    if (const CellServo& cs = scene_.cellServo; cs.any()) {
        const Mat3 sigma = cellStress_ ? cellStress_() : cellStress();
        const double dt = scene_.simulation.dt;
        for (int k = 0; k < 3; ++k) {
            if (!cs.axes[static_cast<std::size_t>(k)]) continue;
            const double e = sigma(k, k) - cs.stress[k];
            const double integral = w.stressErrorIntegral[k] + e * dt;
            const double rate = cs.gain * (e + (std::isinf(cs.time) ? 0.0 : integral / cs.time));
            w.strainRate[k] = std::clamp(rate, -cs.maxRate, cs.maxRate);
            if (!std::isinf(cs.time) && std::abs(rate) <= cs.maxRate) w.stressErrorIntegral[k] = integral;  // no wind-up
        }
    }
    if (!scene_.servos.empty()) {
        const std::vector<Vec3> load = wallLoads_ ? wallLoads_() : wallLoads();
        const double dt = scene_.simulation.dt;
        for (const WallServo& s : scene_.servos) {
            const auto b = static_cast<std::size_t>(s.wall), k = b - w.numGrains;
            const Vec3& n = w.wall(s.wall).direction;
            const double e = s.stress - (-load[k].dot(n) / s.area);
            double integral = 0.0;
            if (!std::isinf(s.time)) {
                if (w.wallErrorIntegral.size() != w.numWalls()) w.wallErrorIntegral.assign(w.numWalls(), 0.0);
                integral = w.wallErrorIntegral[k] + e * dt;
            }
            const double v = s.gain * (e + (std::isinf(s.time) ? 0.0 : integral / s.time));
            const double vn = std::clamp(v, -s.maxSpeed, s.maxSpeed);
            if (!std::isinf(s.time) && std::abs(v) <= s.maxSpeed) w.wallErrorIntegral[k] = integral;  // no wind-up
            w.v[b] += (vn - w.v[b].dot(n)) * n;
        }
    }
    w.followWalls();
}

CdStepStats Simulation::advance() {
    World& w = scene_.world;
    const long step = w.step;
    const double t0 = w.time;
    stats_ = CdStepStats{};  // MD: no iterations, no residual
    const int substeps = scene_.simulation.method == Method::MD ? scene_.md.substeps : 1;
    StepProfile& p = profile_;
    auto clock = std::chrono::steady_clock::now();
    applyControls();
    lap(clock, p.controls);
    for (int k = 0; k < substeps; ++k) {
        if (k > 0 && betweenSubsteps_) {
            betweenSubsteps_();
            clock = std::chrono::steady_clock::now();  // the hook's seconds are no stage's
        }
        detect();
        lap(clock, p.detect);
        match();
        lap(clock, p.match);
        solve();
        if (afterSolve_) afterSolve_();
        lap(clock, p.solve);
        const double stageForces = scene_.simulation.method == Method::MD ? md_.stageForceSeconds() : 0.0;
        integrate();
        lap(clock, p.integrate);
        if (scene_.simulation.method == Method::MD) p.integrateForces += md_.stageForceSeconds() - stageForces;
    }
    if (scene_.simulation.method == Method::CD) cd_.addStageSeconds(p);
    if (scene_.simulation.method == Method::MD) {
        // The world counts simulation steps, not substeps.
        w.step = step + 1;
        w.time = t0 + scene_.simulation.dt;
    }
    advanced_ = stats_;
    recordStale_ = true;
    return stats_;
}

Scene sceneFromWorld(World world, Method method, double dt, const CdSettings& cd, const MdSettings& md, double margin,
                     std::uint64_t seed, std::string origin) {
    Scene scene;
    scene.origin = std::move(origin);
    scene.simulation.method = method;
    scene.simulation.dt = dt;
    scene.simulation.margin = margin;
    // The Verlet skins of a scene file's defaults (contact.skin, contact.inner_skin):
    // they change speed, never results (a tiny world would otherwise build its
    // cell grid at every step).
    double rMin = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < world.numGrains; ++i) rMin = std::min(rMin, world.radius[i]);
    if (std::isfinite(rMin)) {
        scene.simulation.skin = 0.2 * rMin;
        scene.simulation.innerSkin = 0.05 * rMin;
    }
    scene.simulation.seed = seed;
    scene.simulation.steps = 0;
    scene.cd = cd;
    scene.md = md;
    scene.world = std::move(world);
    return scene;
}

}  // namespace moreau
