/// Kuhn, Suzuki & Daouadji §3, Fig. 6: objectivity of the tangential force
/// under a rigid rotation of a whole packing.
///
/// The paper's setup (experiment.boundary = periodic): the periodic
/// constant-p triaxial state at q/p = 0.8 of kuhn_triaxial.hpp. A periodic
/// cell cannot turn in our axis-aligned cells, but a contact's law sees only
/// its own pair's motion, so the packing is unrolled: a non-periodic copy of
/// the grains plus the images of those near the faces, each contact across
/// a face becoming a contact with an image that carries its memory. The
/// stress sums each of the cell's contacts once (grain with grain, or grain
/// with the image of a higher-numbered grain) over the cell's volume; before
/// the rotation it equals the periodic cell's stress.
///
/// The walled setup (experiment.boundary = walls): a box of frictional
/// spheres (μ = 0.55, k_n = k_t, Kuhn's refined law) is
/// compressed by stress-controlled walls to a static triaxial state
/// (σ₁ along x₁, σ₂ = σ₃ smaller); the walls are then taken away.
///
/// Either way the whole assembly is rotated rigidly by 90° about x₁ in many increments:
/// every increment sets each grain's position, orientation, velocity and
/// spin to the rigid motion exactly and evaluates the contact forces once
/// (MdSolver::step; what its integration stage then does to the poses is
/// overwritten by the next increment). The contact geometry, hence the
/// normal forces and branch vectors, turn exactly; only the update of the
/// tangential forces decides whether they turn with the assembly. The
/// Love–Weber stress after the rotation, turned back (σ⁰ = Rᵀ σ⁹⁰ R,
/// eq. 24), is compared with the stress before it for three variants of
/// the law: no adjustment, projection only (eq. 22), projection and twirl
/// (eqs. 22–23).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "kuhn_triaxial.hpp"
#include "moreau/core/progress.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/sim/simulation.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

namespace {

nlohmann::json matrixJson(const Mat3& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < 3; ++i) rows.push_back({m(i, 0), m(i, 1), m(i, 2)});
    return rows;
}

/// ‖a − b‖_F / ‖b‖_F.
double relativeError(const Mat3& a, const Mat3& b) { return (a - b).norm() / b.norm(); }

struct Variant {
    std::string name;
    bool projection, twirl;
    long increments;
};

/// Love–Weber stress of the grain–grain contacts in Kuhn's sign (tension
/// positive, kPa): −loveStress / 1000.
Mat3 kuhnStress(const World& world, const std::vector<Contact>& contacts, double volume) {
    return -loveStress(world, contacts, volume) / 1000.0;
}

/// The packing to turn: a non-periodic run whose grains all turn rigidly,
/// and which of its contacts make the stress.
struct Turnable {
    std::optional<Simulation> sim;     ///< its world the pose of increment 0, contacts with memory
    std::size_t originals = 0;         ///< grains [0, originals) are the packing's own
    std::vector<std::size_t> origin;   ///< per grain: itself, or the grain an image copies
    double volume = 0.0;
    /// A grain–grain contact of the packing, counted once: a an own grain,
    /// b an own grain or the image of a higher-numbered one.
    bool counted(const World& w, const Contact& c) const {
        if (w.isWall(c.b)) return false;
        const auto a = static_cast<std::size_t>(c.a), b = static_cast<std::size_t>(c.b);
        return a < originals && origin[b] > a;
    }
};

/// The periodic packing of `run` unrolled (see the file comment): its grains,
/// then the images within `layer` of the cell's faces (26 shifts), and its
/// contact memory moved onto the pairs they become. Throws std::logic_error
/// if a contact across a face finds no image (layer too thin).
Turnable unroll(const Simulation& run, double layer) {
    const World& pw = run.world();
    const std::size_t n = pw.numGrains;
    const Vec3 length = pw.boxMax - pw.boxMin;
    World u;
    u.dimension = 3;
    u.muGrain = pw.muGrain;
    u.clumpShapes = pw.clumpShapes;
    Turnable t;
    t.originals = n;
    // Grain i, or an image of it, at y: a sphere or a clump of its shape and size.
    auto add = [&](const Vec3& y, std::size_t i) {
        const BodyId id = pw.clumpOf(i) ? u.addClump(y, pw.shape[i], pw.size[i], pw.q[i], pw.mass[i])
                                        : u.addGrain(y, pw.radius[i], pw.mass[i], pw.inertia[i]);
        u.q.back() = pw.q[i];
        t.origin.push_back(i);
        return id;
    };
    for (std::size_t i = 0; i < n; ++i) add(pw.x[i], i);
    auto shiftIndex = [](const std::array<int, 3>& s) { return (s[0] + 1) * 9 + (s[1] + 1) * 3 + (s[2] + 1); };
    std::map<std::pair<std::size_t, int>, BodyId> image;
    for (int sx = -1; sx <= 1; ++sx)
        for (int sy = -1; sy <= 1; ++sy)
            for (int sz = -1; sz <= 1; ++sz) {
                if (sx == 0 && sy == 0 && sz == 0) continue;
                const Vec3 shift = Vec3(sx, sy, sz).cwiseProduct(length);
                for (std::size_t i = 0; i < n; ++i) {
                    const Vec3 y = pw.x[i] + shift;
                    if (((y - pw.boxMin).array() < -layer).any() || ((y - pw.boxMax).array() > layer).any()) continue;
                    image[{i, shiftIndex({sx, sy, sz})}] = add(y, i);
                }
            }
    // Each remembered contact (a, b) whose nearest image of b lies across a
    // face becomes (a, that image of b), same order, same memory.
    const ContactStore store = run.contactStore();
    const std::size_t stride = store.slots.stride;
    std::vector<std::pair<ContactKey, std::size_t>> order;
    for (std::size_t k = 0; k < store.records.size(); ++k) {
        const ContactKey key = store.records[k].key;
        const BodyId a = keyBodyA(key), b = keyBodyB(key);
        const auto feature = keyFeature(key);
        if (pw.isWall(b)) continue;
        const Vec3 raw = pw.x[static_cast<std::size_t>(b)] - pw.x[static_cast<std::size_t>(a)];
        std::array<int, 3> s{0, 0, 0};
        for (int d = 0; d < 3; ++d) s[static_cast<std::size_t>(d)] = -static_cast<int>(std::lround(raw[d] / length[d]));
        if (s == std::array<int, 3>{0, 0, 0}) {
            order.push_back({key, k});
            continue;
        }
        const auto it = image.find({static_cast<std::size_t>(b), shiftIndex(s)});
        if (it == image.end()) throw std::logic_error("rigid-rotation: a contact across the cell finds no image");
        order.push_back({makeContactKey(a, it->second, feature), k});
    }
    std::sort(order.begin(), order.end());
    ContactStore moved;
    moved.slots.stride = stride;
    for (const auto& [key, k] : order) {
        moved.records.push_back({key, store.records[k].history});
        if (stride > 0)
            moved.slots.values.insert(moved.slots.values.end(), store.slots.at(k), store.slots.at(k) + stride);
    }
    const Scene& scene = run.scene();
    Scene flat = sceneFromWorld(std::move(u), Method::MD, scene.simulation.dt, {}, scene.md, scene.simulation.margin,
                                scene.simulation.seed, "rigid-rotation (unrolled)");
    flat.simulation.skin = scene.simulation.skin;
    t.sim.emplace(std::move(flat));
    t.sim->restoreContacts(moved);
    t.volume = length.prod();
    return t;
}

}  // namespace

nlohmann::json rigidRotation(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.boundary", KeyType::Choice, "periodic", "periodic cell (the paper's) or walled box", 0.0, 0.0,
         {"periodic", "walls"}},
        {"experiment.particles", KeyType::Integer, "", "grains in the packing (empty: 10648 periodic, 2000 walls)",
         20.0, 1e6},
        {"experiment.grains", KeyType::Choice, "clusters",
         "periodic: Kuhn's non-convex sphere clusters (docs/clumps.md) or spheres (walls: spheres)", 0.0, 0.0,
         {"clusters", "spheres"}},
        {"experiment.prep_mu", KeyType::Text, "auto",
         "friction of the isotropic compression, which sets the porosity (auto: 0 for spheres, kClusterPrepMu for "
         "clusters, calibrated to Kuhn's porosity 0.363)", 0.0, 0.0},
        {"experiment.increments", KeyType::Integer, "1000", "rotation increments", 1.0, 1e7},
        {"experiment.angle", KeyType::Real, "90", "total rotation about x1 (degrees)", 0.0, 360.0, {}, true},
        {"experiment.prep_steps", KeyType::Integer, "60000", "walls: MD steps of the compression", 100.0, 1e8},
        {"experiment.sigma1", KeyType::Real, "160", "walls: wall stress along x1 (kPa, compression)", 0.0, kInf, {},
         true},
        {"experiment.sigma3", KeyType::Real, "75", "walls: wall stress along x2 and x3 (kPa, compression)", 0.0, kInf,
         {}, true},
        {"experiment.pressure", KeyType::Real, "100", "periodic: mean stress p (kPa)", 0.0, kInf, {}, true},
        {"experiment.q_over_p", KeyType::Real, "0.8", "periodic: q/p of the rotated state", 0.0, 1.5},
        {"experiment.mu", KeyType::Real, "0.55", "grain-grain friction coefficient", 0.0, kInf},
    };
    const Scene keyScene = experimentKeys("rigid-rotation", options.sets, keys);
    const bool periodic = sceneText(keyScene, "experiment.boundary") == "periodic";
    const auto particles = sceneText(keyScene, "experiment.particles").empty()
                               ? (periodic ? 10648L : 2000L)
                               : static_cast<long>(sceneInteger(keyScene, "experiment.particles"));
    const auto increments = static_cast<long>(sceneInteger(keyScene, "experiment.increments"));
    const double angleDeg = sceneReal(keyScene, "experiment.angle");
    const auto prepSteps = static_cast<long>(sceneInteger(keyScene, "experiment.prep_steps"));
    const double sigma1 = 1e3 * sceneReal(keyScene, "experiment.sigma1");  // Pa
    const double sigma3 = 1e3 * sceneReal(keyScene, "experiment.sigma3");
    const double mu = sceneReal(keyScene, "experiment.mu");
    const std::uint64_t seed = options.seed.value_or(1);
    Turnable turn;
    nlohmann::json prepResults, checks = nlohmann::json::array(), prepParams;
    double prepSeconds = 0.0;
    if (periodic) {
        kuhn::TriaxialOptions o;
        o.particles = particles;
        o.pressure = 1e3 * sceneReal(keyScene, "experiment.pressure");
        o.qOverP = sceneReal(keyScene, "experiment.q_over_p");
        o.mu = mu;
        o.clusters = sceneText(keyScene, "experiment.grains") == "clusters";
        o.prepMu = kuhn::prepFriction(keyScene, o.clusters);
        o.seed = seed;
        o.name = "rigid-rotation";
        kuhn::TriaxialState st = kuhn::prepareTriaxial(o);
        const World& pw = st.sim->world();
        double rMax = 0.0;
        for (std::size_t i = 0; i < pw.numGrains; ++i) rMax = std::max(rMax, pw.radius[i]);
        turn = unroll(*st.sim, 3.0 * rMax);
        const Vec3 cell = pw.boxMax - pw.boxMin;
        // The cell's stress as the rotation's increment 0 evaluates it: at
        // rest (no damping forces), Δt = 1 s, contacts from memory.
        Simulation still = *st.sim;
        still.setCellServo(CellServo{}, "rigid-rotation");
        still.setCellRates(Vec3::Zero(), 0.0, "rigid-rotation");
        for (std::size_t i = 0; i < pw.numGrains; ++i) still.world().v[i] = still.world().w[i] = Vec3::Zero();
        still.setTimeStep(1.0);
        still.detect();
        still.match();
        still.solve();
        const Mat3 cellStress = kuhnStress(still.world(), still.contacts(), cell.prod());
        prepSeconds = st.seconds;
        prepResults = {{"grains", o.clusters ? "clusters" : "spheres"},
                       {"periodic_stress", matrixJson(cellStress)},
                       {"prepared_q_over_p", st.qOverP},
                       {"porosity", st.porosity},
                       {"sliding_share", st.slidingShare},
                       {"kinetic_over_elastic", st.kineticOverElastic},
                       {"cell_size", {cell[0], cell[1], cell[2]}},
                       {"images", turn.origin.size() - turn.originals},
                       {"prep_steps", st.steps}};
        checks.push_back(makeCheck("prepared state at q/p = target", st.qOverP, o.qOverP, 0.01));
        checks.push_back(makeCheck("packing static: kinetic / elastic energy after the preparation (< 1e-6)",
                                   st.kineticOverElastic, 0.0, 1e-6, false));
        prepParams = {{"pressure_kpa", o.pressure / 1e3}, {"q_over_p", o.qOverP}, {"kn", st.stiffness},
                      {"kt", st.stiffness}, {"dt", st.dt}, {"r_min", 0.4e-3}, {"r_max", 0.6e-3}, {"density", 2650.0}};
    } else {
        // SI units: spheres of diameter 0.8–1.2 mm, quartz density, k_n = k_t.
        const double rMin = 0.4e-3, rMax = 0.6e-3, density = 2650.0, kn = 5e4, kt = kn;
        const double meanR3 = (std::pow(rMax, 4) - std::pow(rMin, 4)) / (4.0 * (rMax - rMin));
        const double grainVolume = static_cast<double>(particles) * 4.0 / 3.0 * M_PI * meanR3;
        const double boxSide = std::cbrt(grainVolume / 0.33);  // loose random packing, solid fraction 0.33
        const double mMin = density * 4.0 / 3.0 * M_PI * std::pow(rMin, 3);
        const double tn = M_PI * std::sqrt(0.5 * mMin / kn);  // shortest contact duration
        const double dt = tn / 25.0;
        const double meanMass = density * grainVolume / static_cast<double>(particles);
        // Contact damping as rates (md.meff = damping): 40% of critical for a
        // mean pair normally, half that tangentially (sticking contacts only).
        const double gammaN = 0.4 * 2.0 * std::sqrt(kn / (0.5 * meanMass));
        const double gammaT = 0.5 * gammaN;
        const double wallMass = 0.1 * density * grainVolume;

        std::ostringstream ini;
        ini << std::setprecision(17) << "[simulation]\nmethod = md\ndimension = 3\ndt = " << dt
            << "\nsteps = " << prepSteps << "\nseed = " << seed << "\ngravity = 0 0 0\n"
            << "[contact]\nmu = " << mu << "\nmargin = 0.1\nskin = 0.3\n"
            << "[md]\nnormal = linear\nkn = " << kn << "\nkt = " << kt << "\ngamma_n = " << gammaN
            << "\ngamma_t = " << gammaT << "\nmeff = damping\ntangential = kuhn\nsubsteps = 1\n"
            << "[grains]\nsource = random\ndensity = " << density << "\ninertia = sphere\n"
            << "[random]\ncount = " << particles << "\nr_min = " << rMin << "\nr_max = " << rMax
            << "\nbox_min = 0 0 0\nbox_max = " << boxSide << ' ' << boxSide << ' ' << boxSide << '\n';
        const char* axes[3] = {"x", "y", "z"};
        for (int k = 0; k < 3; ++k) {
            Vec3 e = Vec3::Zero();
            e[k] = 1.0;
            ini << "[wall." << axes[k] << "_min]\npoint = 0 0 0\nnormal = " << e.transpose() << "\nmu = 0\n";
            ini << "[wall." << axes[k] << "_max]\npoint = " << (boxSide * e).transpose()
                << "\nnormal = " << (-e).transpose()
                << "\nmu = 0\nmobile = true\nmass = " << wallMass << "\nfree = " << axes[k] << '\n';
        }
        Simulation sim(loadSceneText(ini.str(), "rigid-rotation", {}, {}));
        World& world = sim.world();
        const std::size_t ng = world.numGrains;
        // The wall bodies by name.
        auto wallBody = [&](int axis, bool max) {
            const std::string name = std::string(axes[axis]) + (max ? "_max" : "_min");
            for (std::size_t i = 0; i < world.numWalls(); ++i)
                if (world.wallName[i] == name) return static_cast<BodyId>(ng + i);
            throw std::logic_error("rigid-rotation: wall " + name + " missing");
        };

        // --- 1. Compression, stress-controlled on the mobile walls (x_max, y_max,
        // z_max). First isotropic to σ₃ without friction (ramp over the first
        // 20% of the steps, held to 35%), which gives a dense packing as Kuhn's
        // (porosity 0.363); then friction μ is switched on and σ₁ along x₁ is
        // raised from σ₃ to its target at constant lateral stress σ₃ (to 70%:
        // drained triaxial loading as Kuhn's, though at constant σ₃ rather than
        // constant p), and held while the packing comes to rest.
        world.muGrain = 0.0;
        const auto t0 = std::chrono::steady_clock::now();
        auto side = [&](int k) {
            return world.x[static_cast<std::size_t>(wallBody(k, true))][k] -
                   world.x[static_cast<std::size_t>(wallBody(k, false))][k];
        };
        const double steps = static_cast<double>(prepSteps);
        for (long s = 0; s < prepSteps; ++s) {
            const double t = static_cast<double>(s + 1) / steps;
            if (t > 0.35) world.muGrain = mu;
            const double lateral = sigma3 * std::min(1.0, t / 0.2);
            const double axial = lateral + (sigma1 - sigma3) * std::clamp((t - 0.35) / 0.35, 0.0, 1.0);
            const Vec3 target(axial, lateral, lateral);
            for (int k = 0; k < 3; ++k) {
                const double area = side((k + 1) % 3) * side((k + 2) % 3);
                Vec3 force = Vec3::Zero();
                force[k] = -target[k] * area;
                world.forceSchedule(wallBody(k, true)) = ForceSchedule{force, force, kInf};
            }
            sim.step();
            if (s % 2000 == 0) progress::notef("compression %ld/%ld", s, prepSteps);
        }
        const double wallsSeconds = secondsSince(t0);
        const Vec3 boxSize(side(0), side(1), side(2));
        const double volume = boxSize.prod();
        // The packing at rest: kinetic against elastic energy, and the stress
        // the walls feel against the target.
        const double kinetic = kineticEnergy(world) + rotationalEnergy(world);
        const double elastic = sim.md().elasticEnergy();
        Vec3 wallStress = Vec3::Zero();
        for (const Contact& c : sim.contacts())
            if (world.isWall(c.b))
                for (int k = 0; k < 3; ++k)
                    if (c.b == wallBody(k, true)) wallStress[k] += std::abs(c.history.reaction[k]);
        for (int k = 0; k < 3; ++k) wallStress[k] /= boxSize[(k + 1) % 3] * boxSize[(k + 2) % 3];
        const Mat3 stressWithWalls = -loveStress(world, sim.contacts(), volume) / 1000.0;

        // --- 2. The walls go far away; the packing is then driven kinematically.
        World away = world;
        for (std::size_t i = ng; i < away.numBodies(); ++i) {
            away.x[i] -= 1.0 * away.wallShape[i - ng].direction;  // 1 m back along the inward normal
            away.v[i] = Vec3::Zero();
            if (i < away.force.size()) away.force[i] = ForceSchedule{};
        }
        turn.sim.emplace(sim);
        turn.sim->world() = away;
        turn.originals = ng;
        for (std::size_t i = 0; i < ng; ++i) turn.origin.push_back(i);
        turn.volume = volume;
        prepSeconds = wallsSeconds;
        prepResults = {{"stress_with_walls", matrixJson(stressWithWalls)},
                       {"wall_stress_kpa", {wallStress[0] / 1e3, wallStress[1] / 1e3, wallStress[2] / 1e3}},
                       {"kinetic_over_elastic", elastic > 0.0 ? kinetic / elastic : kInf},
                       {"box_size", {boxSize[0], boxSize[1], boxSize[2]}},
                       {"solid_fraction", grainVolume / volume}};
        checks.push_back(makeCheck("packing static: kinetic / elastic energy after the compression (< 1e-3)",
                                   elastic > 0.0 ? kinetic / elastic : kInf, 0.0, 1e-3, false));
        checks.push_back(
            makeCheck("wall stress sigma_1 (kPa) reaches the target", wallStress[0] / 1e3, sigma1 / 1e3, 0.02));
        prepParams = {{"prep_steps", prepSteps}, {"sigma1_kpa", sigma1 / 1e3}, {"sigma3_kpa", sigma3 / 1e3}, {"kn", kn},
                      {"kt", kt}, {"r_min", rMin}, {"r_max", rMax}, {"density", density}, {"dt", dt},
                      {"gamma_n", gammaN}, {"gamma_t", gammaT}};
    }

    const World base = turn.sim->world();
    const std::size_t ng = base.numGrains;
    const double volume = turn.volume;
    Vec3 centre = Vec3::Zero();
    for (std::size_t i = 0; i < turn.originals; ++i) centre += base.x[i];
    centre /= static_cast<double>(turn.originals);
    const std::vector<Vec3> x0(base.x.begin(), base.x.begin() + static_cast<long>(ng));
    const std::vector<Quat> q0(base.q.begin(), base.q.begin() + static_cast<long>(ng));
    const double total = angleDeg * M_PI / 180.0;
    // The increments are quasi-static: a nominal duration of 1 s each makes
    // the velocities (and the damping forces they would cause) negligible;
    // the law itself sees displacements and rotation increments only.
    const double dtRot = 1.0;

    // The last variant repeats the correct one with ten times larger
    // increments: its error should grow tenfold (first order in Δθ).
    const long coarse = std::max(1L, increments / 10);
    const std::vector<Variant> variants = {{"none", false, false, increments},
                                           {"projection", true, false, increments},
                                           {"projection_twirl", true, true, increments},
                                           {"projection_twirl_coarse", true, true, coarse}};
    Mat3 original = Mat3::Zero();
    std::vector<Mat3> back(variants.size());
    std::vector<std::vector<double>> history(variants.size());
    std::vector<double> angles;
    long contactsGrain = 0;
    double tangentialShare = 0.0;
    std::vector<Contact> counted;
    const auto t1 = std::chrono::steady_clock::now();
    for (std::size_t v = 0; v < variants.size(); ++v) {
        // A copy of the prepared run: its contacts keep their memory.
        Simulation rot = *turn.sim;
        World& w = rot.world();
        w = base;
        rot.md().setKuhnSwitches(true, true, true, variants[v].projection, variants[v].twirl);
        rot.setTimeStep(dtRot);
        const std::vector<Contact>& contacts = rot.contacts();
        const long steps = variants[v].increments;
        const double dTheta = total / static_cast<double>(steps);
        for (long k = 0; k <= steps; ++k) {
            // Increment 0 turns nothing: the forces of the packing without walls.
            const double theta = static_cast<double>(k) * dTheta;
            const Mat3 R = Eigen::AngleAxisd(theta, Vec3::UnitX()).toRotationMatrix();
            const Quat qR(Eigen::AngleAxisd(theta, Vec3::UnitX()));
            const Vec3 omega = k == 0 ? Vec3::Zero() : Vec3(dTheta / dtRot, 0.0, 0.0);
            for (std::size_t i = 0; i < ng; ++i) {
                w.x[i] = centre + R * (x0[i] - centre);
                w.q[i] = qR * q0[i];
                w.v[i] = omega.cross(w.x[i] - centre);
                w.w[i] = omega;
            }
            w.step = k;
            // The forces of the prescribed state; nothing moves (no integrate).
            rot.detect();
            rot.match();
            rot.solve();
            counted.clear();
            for (const Contact& c : contacts)
                if (turn.counted(w, c)) counted.push_back(c);
            const Mat3 sigma = kuhnStress(w, counted, volume);
            const Mat3 turnedBack = R.transpose() * sigma * R;  // eq. 24
            if (k == 0) {
                if (v == 0) {
                    original = sigma;
                    // The part of the stress carried by the tangential forces.
                    std::vector<Contact> tangential = counted;
                    for (Contact& c : tangential) c.history.reaction -= c.history.reaction.dot(c.n) * c.n;
                    tangentialShare = kuhnStress(w, tangential, volume).norm() / sigma.norm();
                    for (const Contact& c : counted)
                        if (c.gap < 0.0) ++contactsGrain;
                }
                continue;
            }
            if (v < 3) history[v].push_back(relativeError(turnedBack, original));
            if (v == 0) angles.push_back(theta * 180.0 / M_PI);
            if (k == steps) back[v] = turnedBack;
        }
        progress::note("rotation '" + variants[v].name + "' done");
    }
    const double rotSeconds = secondsSince(t1);

    const double errCoarse = relativeError(back[3], original);
    const double dTheta = total / static_cast<double>(increments);
    const double errNone = relativeError(back[0], original), errProj = relativeError(back[1], original),
                 errTwirl = relativeError(back[2], original);
    auto asymmetry = [](const Mat3& m) { return (m - m.transpose()).norm() / m.norm(); };
    // Only the tangential forces can go wrong. Eqs. 22–23 turn them by
    // first-order rotations: per increment the projection shortens a force
    // by 1 − cos Δθ_⊥ and the twirl lengthens it by √(1 + Δθ_n²) − 1, both
    // below Δθ²/2, so after K increments a tangential force is off by less
    // than K Δθ² = θ Δθ of its length; the stress then by less than θ Δθ
    // times the share of the tangential forces in it.
    const double bound = total * dTheta * tangentialShare;

    nlohmann::json results = {
        {"stress_original", matrixJson(original)},
        {"stress_none", matrixJson(back[0])},
        {"stress_projection", matrixJson(back[1])},
        {"stress_projection_twirl", matrixJson(back[2])},
        {"error_none", errNone},
        {"error_projection", errProj},
        {"error_projection_twirl", errTwirl},
        {"coarse_increments", coarse},
        {"error_projection_twirl_coarse", errCoarse},
        {"tangential_share", tangentialShare},
        {"error_bound_projection_twirl", bound},
        {"asymmetry_original", asymmetry(original)},
        {"asymmetry_none", asymmetry(back[0])},
        {"asymmetry_projection", asymmetry(back[1])},
        {"asymmetry_projection_twirl", asymmetry(back[2])},
        {"q_over_p", (original(0, 0) - 0.5 * (original(1, 1) + original(2, 2))) / (original.trace() / 3.0)},
        {"grain_contacts", contactsGrain},
        {"compression_seconds", prepSeconds},
        {"rotation_seconds", rotSeconds},
    };
    results.update(prepResults);
    if (periodic) {
        // Unrolled right: before turning, the images carry the cell's stress.
        Mat3 cell = Mat3::Zero();
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) cell(i, j) = prepResults["periodic_stress"][i][j];
        results["unrolled_error"] = relativeError(original, cell);
        checks.push_back(makeCheck("unrolled packing before the rotation carries the periodic cell's stress (rel. "
                                   "Frobenius < 1e-6)",
                                   relativeError(original, cell), 0.0, 1e-6, false));
    }
    checks.push_back(makeCheck("projection + twirl: rotated-back stress = original (rel. Frobenius; tolerance theta "
                               "dtheta * tangential share)",
                               errTwirl, 0.0, bound, false));
    if (increments >= 10)
        checks.push_back(makeCheck("projection + twirl: error first order in the increment, error(K/10) / error(K) "
                                   "= K / (K/10)",
                                   errCoarse / errTwirl,
                                   static_cast<double>(increments) / static_cast<double>(coarse), 0.2));
    // One-sided bounds as ranges: [lower, upper] is (lower+upper)/2 ± (upper−lower)/2.
    auto atLeast = [](const std::string& name, double value, double lower, double upper) {
        return makeCheck(name, value, 0.5 * (lower + upper), 0.5 * (upper - lower), false);
    };
    checks.push_back(atLeast("none: rotated-back stress departs, error_none / error_projection_twirl in [20, 1e9]",
                             errNone / std::max(errTwirl, 1e-300), 20.0, 1e9));
    checks.push_back(atLeast("projection only: departs, error_projection / error_projection_twirl in [5, 1e9]",
                             errProj / std::max(errTwirl, 1e-300), 5.0, 1e9));
    nlohmann::json params = {{"boundary", periodic ? "periodic" : "walls"}, {"particles", particles},
                             {"increments", increments}, {"angle_deg", angleDeg}, {"mu", mu}, {"seed", seed},
                             {"units", "SI (m, kg, s); stresses in kPa with Kuhn's sign (compression negative)"}};
    params.update(prepParams);
    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "rigid_rotation.csv", "increment,angle_deg,error_none,error_projection,error_projection_twirl", 10);
        for (std::size_t i = 0; i < angles.size(); ++i)
            out << i + 1 << ',' << angles[i] << ',' << history[0][i] << ',' << history[1][i] << ',' << history[2][i]
                << '\n';
        out.close();
        auto [tensors, tout] =
            openCsv(options, "rigid_rotation_stress.csv", "case,s11,s12,s13,s21,s22,s23,s31,s32,s33", 10);
        const std::vector<std::pair<std::string, Mat3>> rows = {
            {"original", original}, {"none", back[0]}, {"projection", back[1]}, {"projection_twirl", back[2]}};
        for (const auto& [name, m] : rows) {
            tout << name;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) tout << ',' << m(i, j);
            tout << '\n';
        }
        tout.close();
        runPlotScript("rigid_rotation", {csv.string(), tensors.string(), (options.outDir / "rigid_rotation.png").string()},
                      options.quiet);
    }
    return {{"experiment", "rigid-rotation"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
