/// Shared machinery of the CD artificial-elasticity experiments (CD paper
/// §3.3–3.4); see cd_waves.hpp.
#include "cd_waves.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/core/error.hpp"
#include "moreau/sim/distributed_simulation.hpp"

namespace moreau::cdwaves {

namespace {

std::string num(double v) {
    std::ostringstream s;
    s << std::setprecision(17) << v;
    return s.str();
}

}  // namespace

DampedSine fitFixedRates(const std::vector<double>& t, const std::vector<double>& x, double omega, double tau) {
    DampedSine d;
    d.omega = omega;
    d.tau = tau;
    if (t.size() < 3) return d;
    const auto n = static_cast<Eigen::Index>(t.size());
    Eigen::MatrixXd A(n, 3);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double ti = t[static_cast<std::size_t>(i)];
        const double e = std::exp(-(ti - t.front()) / tau);
        A(i, 0) = 1.0;
        A(i, 1) = e * std::sin(omega * ti);
        A(i, 2) = e * std::cos(omega * ti);
        y[i] = x[static_cast<std::size_t>(i)];
    }
    const Eigen::Vector3d c = A.colPivHouseholderQr().solve(y);
    d.x0 = c[0];
    d.amplitude = std::hypot(c[1], c[2]) * std::exp(t.front() / tau);
    d.phase = std::atan2(c[2], c[1]);
    double sse = 0.0, sst = 0.0, mean = y.mean();
    for (Eigen::Index i = 0; i < n; ++i) {
        sse += std::pow(y[i] - d(t[static_cast<std::size_t>(i)]), 2);
        sst += std::pow(y[i] - mean, 2);
    }
    d.r2 = sst > 0.0 ? 1.0 - sse / sst : 0.0;
    d.rmsResidual = std::sqrt(sse / static_cast<double>(n));
    d.converged = true;
    return d;
}

double logLogSlope(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> lx, ly;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
        if (x[i] > 0.0 && y[i] > 0.0 && std::isfinite(y[i])) {
            lx.push_back(std::log(x[i]));
            ly.push_back(std::log(y[i]));
        }
    if (lx.size() < 2) return std::nan("");
    return linearFit(lx, ly).second;
}

// --- 1D chain ---------------------------------------------------------------------

std::vector<KeySpec> chainKeys() {
    return {
        {"experiment.fit_delay", KeyType::Real, "-1",
         "time from the moment the chain settles against the wall (its last lift-off) to the start of the fit; "
         "-1: 2 tau_theory. Until then the oscillation is not small against the static compression F L/kappa "
         "and the unilateral wall contact makes it nonlinear: starting at tau_theory/3 biased tau by 5-15%, at "
         "tau_theory by 1-8% (N_I=20-160), at 2 tau_theory it stays within 2%",
         -1.0, kInf, {}},
        {"experiment.fit_length", KeyType::Real, "-1", "length of the fit window; -1: 3 tau_theory", -1.0, kInf, {}},
    };
}

ChainRun runChain(Scene scene, int iterations) {
    const auto t0 = std::chrono::steady_clock::now();
    const World& w0 = scene.world;
    if (w0.dimension != 1 || w0.numGrains < 2)
        throw InputError("chain: needs simulation.dimension=1 and chain.count >= 2");
    ChainRun run;
    run.iterations = iterations;
    run.md = scene.simulation.method == Method::MD;
    const std::size_t n = w0.numGrains;
    const auto last = static_cast<std::size_t>(n - 1);
    const double d = 2.0 * w0.radius[0];
    const double dt = scene.simulation.dt;
    const double L = static_cast<double>(n) * d;
    run.theory = chainTheory(iterations, d, dt, L);
    const double fitDelayKey = sceneReal(scene, "experiment.fit_delay");
    const double fitLengthKey = sceneReal(scene, "experiment.fit_length");
    const double fitDelay = fitDelayKey >= 0 ? fitDelayKey : 2.0 * run.theory.tau;
    const double fitLength = fitLengthKey > 0 ? fitLengthKey : 3.0 * run.theory.tau;

    Simulation sim(std::move(scene));
    run.t.push_back(sim.world().time);
    run.x.push_back(sim.world().x[last].x());
    run.wallForce.push_back(0.0);
    // The chain may bounce off the wall a few times before it stays pressed
    // against it (the paper's "transient period"); the fit window opens
    // fit_delay after the last moment without wall contact.
    const long maxSteps = 2000000;
    for (long s = 0; s < maxSteps; ++s) {
        run.stepIterations.push_back(sim.step().iterations);
        double fw = 0.0;
        for (const Contact& c : sim.contacts())
            if (sim.world().isWall(c.b)) fw += c.history.reaction.norm();
        const double now = sim.world().time;
        run.t.push_back(now);
        run.x.push_back(sim.world().x[last].x());
        run.wallForce.push_back(fw);
        if (fw > 0.0) {
            if (run.tImpact < 0.0) run.tImpact = now;
            if (run.tSettled < 0.0) run.tSettled = now;
        } else if (run.tImpact >= 0.0) {
            run.tSettled = -1.0;  // lifted off again
        }
        if (run.tSettled >= 0.0 && now >= run.tSettled + fitDelay + fitLength) break;
    }
    if (run.tImpact < 0.0) throw InputError("chain: the chain never reached the wall; check force.* and the wall");
    if (run.tSettled < 0.0) throw InputError("chain: the chain never settled against the wall");
    run.fitStart = run.tSettled + fitDelay;
    run.fitEnd = run.tSettled + fitDelay + fitLength;
    std::vector<double> tf, xf;
    for (std::size_t i = 0; i < run.t.size(); ++i)
        if (run.t[i] >= run.fitStart && run.t[i] <= run.fitEnd) {
            tf.push_back(run.t[i]);
            xf.push_back(run.x[i]);
        }
    if (tf.size() < 8) throw InputError("chain: fit window holds fewer than 8 samples; enlarge experiment.fit_length");
    run.fitPoints = tf.size();
    DampedSine guess = guessDampedSine(tf, xf);
    // Start from the theory where the data-driven guess is far off (few extrema).
    if (!(std::abs(guess.omega / run.theory.omega - 1.0) < 0.3)) {
        guess = fitFixedRates(tf, xf, run.theory.omega, run.theory.tau);
    }
    run.fit = fitDampedSine(tf, xf, guess);
    run.seconds = secondsSince(t0);
    return run;
}

Scene loadChainScene(const ExperimentOptions& options, const std::vector<KeySpec>& keys, int iterations,
                     std::optional<double> dt) {
    std::vector<std::string> sets;
    for (const std::string& kv : options.sets) {
        const std::string key = kv.substr(0, kv.find('='));
        if (key.rfind("chain.", 0) == 0 || key.rfind("experiment.", 0) == 0 || key == "cd.order" ||
            key == "cd.warm_start" || key == "cd.gap" || key == "simulation.seed")
            sets.push_back(kv);
    }
    if (options.seed) sets.push_back("simulation.seed=" + std::to_string(*options.seed));
    sets.push_back("cd.iterations=" + std::to_string(iterations));
    if (dt) sets.push_back("simulation.dt=" + sceneValueText(*dt));
    return loadBuiltinScene("chain_1d.ini", sets, keys);
}

std::vector<int> integerList(const Scene& scene, const std::string& key) {
    std::istringstream in(sceneText(scene, key));
    std::vector<int> out;
    std::string word;
    while (in >> word) {
        const std::optional<long> v = parseInteger(word);
        if (!v || *v < 1 || *v > 1000000)
            throw InputError("key '" + key + "': '" + word + "' is not an integer in [1, 1000000] (allowed: a list like '10 20 40')");
        out.push_back(static_cast<int>(*v));
    }
    if (out.empty()) throw InputError("key '" + key + "': empty (allowed: a list of integers like '10 20 40')");
    return out;
}

// --- 2D piston packing -----------------------------------------------------------

std::vector<KeySpec> pistonKeys() {
    return {
        {"experiment.particles", KeyType::Integer, "1000",
         "number of disks (the paper: 1000); the box is sized for them (experiment.aspect, loose_fraction)", 2.0,
         1e7, {}},
        {"experiment.aspect", KeyType::Real, "4",
         "height/width of the compressed packing: 4 puts the height (~46 d for 1000 disks) at twice the diffusion "
         "length sqrt(4 q N_I) d = 22.6 d of N_I = 160, where the packing is still artificially elastic",
         0.05, 20.0, {}, true},
        {"experiment.loose_fraction", KeyType::Real, "0.4",
         "area fraction of the loose random start (random sequential addition; the box height follows)", 0.05, 0.5,
         {}},
        {"experiment.force", KeyType::Real, "0.5", "piston force F (units m d/dt^2 of the largest grain), pushing down",
         0.0, kInf, {}, true},
        {"experiment.dforce", KeyType::Real, "0.025",
         "force step dF as a fraction of F. Small: the response is nonlinear in the amplitude, which grows as "
         "1/N_I, so a large dF bends tau(N_I) (tau exponent -0.66 at 0.1 F, -0.91 at 0.05 F, -0.95 at 0.025 F)",
         0.0, 10.0, {}, true},
        {"experiment.piston_mass_ratio", KeyType::Real, "2",
         "piston mass / expected packing mass; a piston heavier than the packing leaves one clean mode", 0.0, kInf,
         {}, true},
        {"experiment.prep_iterations", KeyType::Integer, "40", "N_I while the packing is compressed and relaxed", 1.0,
         1e6, {}},
        {"experiment.light_piston", KeyType::Real, "0.1",
         "piston mass factor while the packing is compressed and settles (a light piston comes to rest fast; "
         "the rest state does not depend on its mass)",
         0.0, 1.0, {}, true},
        {"experiment.rest_speed", KeyType::Real, "1e-5",
         "the packing is at rest when the piston speed and the rms grain speed are below this (d/dt)", 0.0, kInf,
         {}, true},
        {"experiment.max_prep_steps", KeyType::Integer, "40000", "cap on the preparation steps", 1.0, 1e9, {}},
        {"experiment.skip_extrema", KeyType::Integer, "2",
         "the fit of eq. 64 starts at this extremum of the piston trace (1: the first turning point)", 0.0, 100.0,
         {}},
        {"experiment.fit_taus", KeyType::Real, "3", "length of the fit window in fitted tau", 0.1, 100.0, {}, true},
        {"experiment.max_ring_steps", KeyType::Integer, "20000", "cap on the steps after the force step", 10.0, 1e9,
         {}},
    };
}

Scene loadPistonScene(const ExperimentOptions& options, const std::vector<KeySpec>& moreKeys) {
    std::vector<KeySpec> keys = pistonKeys();
    keys.insert(keys.end(), moreKeys.begin(), moreKeys.end());
    std::vector<std::string> user;
    for (const std::string& kv : options.sets)
        if (kv.rfind("chain.", 0) != 0) user.push_back(kv);
    if (options.seed) user.push_back("simulation.seed=" + std::to_string(*options.seed));
    // First pass: the experiment keys and radii, with a tiny packing.
    std::vector<std::string> probe = user;
    probe.push_back("random.count=1");
    probe.push_back("random.box_min=0 0 0");
    probe.push_back("random.box_max=1000 1000 0");
    const Scene first = loadBuiltinScene("piston_2d.ini", probe, keys);
    const auto n = static_cast<double>(sceneInteger(first, "experiment.particles"));
    const double rMin = std::stod(first.values.at("random.r_min"));
    const double rMax = std::stod(first.values.at("random.r_max"));
    const double aspect = sceneReal(first, "experiment.aspect");
    const double loose = sceneReal(first, "experiment.loose_fraction");
    const double force = sceneReal(first, "experiment.force");
    const double ratio = sceneReal(first, "experiment.piston_mass_ratio");
    // Paper units: the largest disk has d = 1 and m = 1 (mass ∝ area).
    const double density = 1.0 / (M_PI * rMax * rMax);
    const double meanArea = M_PI * (rMin * rMin + rMin * rMax + rMax * rMax) / 3.0;
    const double denseFraction = 0.82;
    const double width = std::sqrt(n * meanArea / (denseFraction * aspect));
    const double height = n * meanArea / (loose * width);
    const double pistonMass = ratio * n * meanArea * density;
    std::vector<std::string> sets = {
        "random.count=" + std::to_string(static_cast<long long>(n)),
        "random.box_min=0 0 0",
        "random.box_max=" + num(width) + " " + num(height) + " 0",
        "grains.density=" + num(density),
        "contact.margin=1.0",  // r_min: above the piston's travel per step while it compresses
        "wall.right.point=" + num(width) + " 0 0",
        "wall.piston.point=0 " + num(height) + " 0",
        "wall.piston.mass=" + num(pistonMass),
        "wall.piston.force=0 " + num(-force) + " 0",
        "wall.piston.force_after=0 " + num(-force) + " 0",
        "cd.iterations=" + first.values.at("experiment.prep_iterations"),
    };
    sets.insert(sets.end(), user.begin(), user.end());
    return loadBuiltinScene("piston_2d.ini", sets, keys);
}

namespace {

BodyId findPiston(const World& w) {
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallName[k] == "piston") return static_cast<BodyId>(w.numGrains + k);
    throw InputError("piston: the scene has no wall named 'piston'");
}

double rmsGrainSpeed(const World& w) {
    double s = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) s += w.v[i].squaredNorm();
    return std::sqrt(s / static_cast<double>(std::max<std::size_t>(w.numGrains, 1)));
}

}  // namespace

PreparedPacking preparePacking(Scene scene) {
    const auto t0 = std::chrono::steady_clock::now();
    const double restSpeed = sceneReal(scene, "experiment.rest_speed");
    const long maxSteps = sceneInteger(scene, "experiment.max_prep_steps");
    const double force = sceneReal(scene, "experiment.force");
    const double lightPiston = sceneReal(scene, "experiment.light_piston");
    const int iterations = scene.cd.iterations;
    if (scene.world.dimension != 2) throw InputError("piston: key 'simulation.dimension': must be 2");
    if (scene.cd.criterion != Criterion::Fixed)
        throw InputError("piston: key 'cd.criterion': the experiments need 'fixed' (N_I per step, eq. 37)");
    if (scene.simulation.method != Method::CD)
        throw InputError("piston: key 'simulation.method': the packing is prepared with 'cd'");
    const BodyId piston = findPiston(scene.world);
    PreparedPacking prep{Simulation(std::move(scene))};
    prep.piston = piston;
    prep.force = force;
    prep.iterations = iterations;
    World& w = prep.sim.world();
    const auto p = static_cast<std::size_t>(piston);
    // No switch during the preparation: F throughout.
    w.forceSchedule(piston) = ForceSchedule{Vec3(0, -force, 0), Vec3(0, -force, 0), kInf};
    // Compress with a light piston (fast, and the slow piston mode dies out
    // quickly); the heavy piston of the rings goes on once all is at rest.
    const double heavy = w.mass[p];
    setWallMass(w, piston, lightPiston * heavy);
    long s = 0;
    double speed = kInf;
    for (; s < maxSteps; ++s) {
        prep.sim.step();
        if (s % 10 == 9) {
            speed = std::max(std::abs(w.v[p].y()), rmsGrainSpeed(w));
            if (speed < restSpeed && s > 50) break;
        }
    }
    prep.steps = s + 1;
    prep.finalSpeed = std::max(std::abs(w.v[p].y()), rmsGrainSpeed(w));
    // At rest: the remaining motion (below rest_speed) is removed so every
    // run starts from the same still packing; the contact forces stay warm.
    for (std::size_t i = 0; i < w.numBodies(); ++i) {
        w.v[i] = Vec3::Zero();
        w.w[i] = Vec3::Zero();
    }
    setWallMass(w, piston, heavy);
    double mass = 0.0, area = 0.0, width = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        mass += w.mass[i];
        area += M_PI * w.radius[i] * w.radius[i];
    }
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallName[k] == "right") width = w.x[w.numGrains + k].x();
    prep.packingMass = mass;
    prep.pistonMass = w.mass[p];
    prep.width = width;
    prep.height = w.x[p].y();
    prep.packingFraction = area / (width * prep.height);
    prep.seconds = secondsSince(t0);
    return prep;
}

void setWallMass(World& w, BodyId b, double mass) {
    const auto i = static_cast<std::size_t>(b);
    w.mass[i] = mass;
    for (int k = 0; k < 3; ++k)
        if (w.invMass[i][k] > 0.0) w.invMass[i][k] = 1.0 / mass;
}

RingOptions ringOptions(const Scene& scene, double force) {
    RingOptions o;
    o.restSpeed = sceneReal(scene, "experiment.rest_speed");
    o.lightPiston = sceneReal(scene, "experiment.light_piston");
    o.dForce = sceneReal(scene, "experiment.dforce") * force;
    o.skipExtrema = static_cast<int>(sceneInteger(scene, "experiment.skip_extrema"));
    o.fitTaus = sceneReal(scene, "experiment.fit_taus");
    o.maxSteps = sceneInteger(scene, "experiment.max_ring_steps");
    return o;
}

PistonRing ringPiston(Simulation sim, BodyId piston, double force, const RingOptions& o) {
    const auto t0 = std::chrono::steady_clock::now();
    PistonRing ring;
    World& w = sim.world();
    const auto p = static_cast<std::size_t>(piston);
    w.forceSchedule(piston) = ForceSchedule{Vec3(0, -force, 0), Vec3(0, -force, 0), kInf};
    const double ySettle0 = w.x[p].y();
    if (o.settleMaxSteps > 0) {
        const double heavy = w.mass[p];
        setWallMass(w, piston, o.lightPiston * heavy);
        long s = 0;
        for (; s < o.settleMaxSteps; ++s) {
            sim.step();
            if (s % 10 == 9 && s > 50 && std::max(std::abs(w.v[p].y()), rmsGrainSpeed(w)) < o.restSpeed) break;
        }
        ring.settleSteps = s + 1;
        ring.settleSpeed = std::max(std::abs(w.v[p].y()), rmsGrainSpeed(w));
        for (std::size_t i = 0; i < w.numBodies(); ++i) w.v[i] = w.w[i] = Vec3::Zero();
        setWallMass(w, piston, heavy);
    }
    ring.settleDrift = w.x[p].y() - ySettle0;
    const double tSwitch = w.time;
    w.forceSchedule(piston) = ForceSchedule{Vec3(0, -force, 0), Vec3(0, -(force + o.dForce), 0), tSwitch};
    if (comm::ranks() > 1 && sim.scene().simulation.method == Method::CD) {
        // Over MPI ranks (cd.distributed): every rank prepared the same
        // packing; the ring runs on their parts. The piston is a wall, which
        // every part holds.
        Scene scene = sim.scene();
        scene.world = w;
        const ContactStore store = sim.contactStore();
        const std::size_t wall = p - w.numGrains;
        DistributedSimulation run(std::move(scene), &store);
        return tracePiston(ring, w.x[p].y(), o, t0, [&] {
            run.step();
            const World& part = run.part().world();
            return std::pair<double, double>(part.time - tSwitch, part.x[part.numGrains + wall].y());
        });
    }
    return tracePiston(ring, w.x[p].y(), o, t0, [&] {
        sim.step();
        return std::pair<double, double>(w.time - tSwitch, w.x[p].y());
    });
}

PistonRing tracePiston(PistonRing ring, double y0, const RingOptions& o, std::chrono::steady_clock::time_point t0,
                       const std::function<std::pair<double, double>()>& advance) {
    ring.y0 = y0;
    ring.t.push_back(0.0);
    ring.y.push_back(ring.y0);
    // Turning points with hysteresis: a running extreme counts once the trace
    // has come back from it by 0.2% of the largest excursion so far (far above
    // the noise of the random sweeps, far below the swings that are fitted).
    double excursion = 0.0, runExt = ring.y0, runExtT = 0.0;
    int direction = -1;  // the piston first moves down
    double firstSwing = 0.0, lastSwing = kInf;
    DampedSine guess;
    for (long s = 0; s < o.maxSteps; ++s) {
        const auto [t, y] = advance();
        ring.t.push_back(t);
        ring.y.push_back(y);
        excursion = std::max(excursion, std::abs(y - ring.y0));
        const double h = 2e-3 * excursion;
        if ((direction < 0 && y < runExt) || (direction > 0 && y > runExt)) {
            runExt = y;
            runExtT = t;
        } else if (std::abs(y - runExt) > h && h > 0.0) {
            ring.extremaT.push_back(runExtT);
            direction = -direction;
            runExt = y;
            runExtT = t;
        }
        const std::size_t ne = ring.extremaT.size();
        // Swing amplitude between the last two turning points.
        if (ne >= 2) {
            auto at = [&](double te) {
                const auto i = static_cast<std::size_t>(std::lround(te / (ring.t[1] - ring.t[0])));
                return ring.y[std::min(i, ring.y.size() - 1)];
            };
            const double swing = std::abs(at(ring.extremaT[ne - 1]) - at(ring.extremaT[ne - 2]));
            if (ne == 2) firstSwing = swing;
            lastSwing = swing;
        }
        const int skip = std::max(o.skipExtrema, 0);
        const double tStart = skip > 0 && ne >= static_cast<std::size_t>(skip) ? ring.extremaT[skip - 1] : 0.0;
        // Decayed below 1/100 of the first swing: nothing more to fit.
        const bool decayed = ne >= static_cast<std::size_t>(skip) + 2 && lastSwing < 1e-2 * firstSwing;
        if ((s % 25 == 24 && ne >= static_cast<std::size_t>(skip) + 3) || decayed) {
            std::vector<double> tf, yf;
            for (std::size_t i = 0; i < ring.t.size(); ++i)
                if (ring.t[i] >= tStart) {
                    tf.push_back(ring.t[i]);
                    yf.push_back(ring.y[i]);
                }
            guess = guessDampedSine(tf, yf);
            if (decayed || (std::isfinite(guess.tau) && t >= tStart + 1.2 * o.fitTaus * guess.tau + 2.0 * M_PI / guess.omega))
                break;
        }
    }
    ring.steps = static_cast<long>(ring.t.size()) - 1;
    const std::size_t ne = ring.extremaT.size();
    const int skip = std::max(o.skipExtrema, 0);
    if (skip > 0 && ne < static_cast<std::size_t>(skip) + 2)
        throw InputError("piston: the trace after the force step shows " + std::to_string(ne) +
                         " turning points, too few to fit eq. 64 from turning point " + std::to_string(skip) +
                         "; raise experiment.max_ring_steps or lower experiment.skip_extrema");
    ring.fitStart = skip > 0 ? ring.extremaT[static_cast<std::size_t>(skip) - 1] : 0.0;
    auto window = [&](double end, std::vector<double>& tf, std::vector<double>& yf) {
        tf.clear();
        yf.clear();
        for (std::size_t i = 0; i < ring.t.size(); ++i)
            if (ring.t[i] >= ring.fitStart && ring.t[i] <= end) {
                tf.push_back(ring.t[i]);
                yf.push_back(ring.y[i]);
            }
    };
    std::vector<double> tf, yf;
    window(kInf, tf, yf);
    DampedSine fit = fitDampedSine(tf, yf, guessDampedSine(tf, yf));
    // The window: fit_taus fitted τ from its start (refit once with the window
    // the first fit asks for).
    for (int pass = 0; pass < 2; ++pass) {
        const double end = std::isfinite(fit.tau) && fit.tau > 0 ? ring.fitStart + o.fitTaus * fit.tau : kInf;
        window(end, tf, yf);
        if (tf.size() < 8) window(kInf, tf, yf);
        fit = fitDampedSine(tf, yf, fit);
    }
    ring.fit = fit;
    ring.fitEnd = tf.back();
    ring.fitPoints = tf.size();
    ring.seconds = secondsSince(t0);
    return ring;
}

PistonRing ringCd(const PreparedPacking& prep, int iterations, const RingOptions& options) {
    Simulation sim = prep.sim;
    sim.cd().settings().iterations = iterations;
    PistonRing ring = ringPiston(std::move(sim), prep.piston, prep.force, options);
    ring.iterations = iterations;
    return ring;
}

PistonRing ringMd(const PreparedPacking& prep, int iterations, int substeps, const RingOptions& options,
                  double tangentialRatio) {
    Scene scene = prep.sim.scene();
    scene.world = prep.sim.world();
    scene.simulation.method = Method::MD;
    const double q = qRandomSweep(), dt = scene.simulation.dt;
    MdSettings& md = scene.md;
    md.normal = NormalLaw::Linear;
    md.meff = EffectiveMass::Both;  // κ_c = kn m_eff, γ_c = γ_n m_eff
    md.kn = 2.0 * q * iterations / (dt * dt);
    md.gammaN = 2.0 * q * iterations / dt;
    // CD's sticking friction relaxes through the same iteration, with the
    // tangential mass of eq. 18 in place of the normal one: for disks
    // (I = m r²/2) 1/m_t = 3/m_eff, so the tangential constants are a third
    // (tangentialRatio = 1/3 by default).
    md.tangential = TangentialLaw::Spring;
    md.kt = tangentialRatio * md.kn;
    md.gammaT = tangentialRatio * md.gammaN;
    md.clipAttractive = true;
    md.substeps = substeps;
    PistonRing ring = ringPiston(Simulation(std::move(scene)), prep.piston, prep.force, options);
    ring.md = true;
    ring.iterations = iterations;
    return ring;
}

nlohmann::json packingJson(const PreparedPacking& prep) {
    return {{"particles", prep.sim.world().numGrains},
            {"force", prep.force},
            {"packing_mass", prep.packingMass},
            {"piston_mass", prep.pistonMass},
            {"width", prep.width},
            {"height", prep.height},
            {"packing_fraction", prep.packingFraction},
            {"prep_iterations", prep.iterations},
            {"prep_steps", prep.steps},
            {"prep_final_speed", prep.finalSpeed},
            {"prep_seconds", prep.seconds},
            {"mu", prep.sim.world().muGrain},
            {"seed", prep.sim.scene().simulation.seed}};
}

void writeRingCsv(std::ostream& out, const std::string& label, const PistonRing& ring) {
    for (std::size_t i = 0; i < ring.t.size(); ++i) {
        const bool in = ring.t[i] >= ring.fitStart && ring.t[i] <= ring.fitEnd;
        out << label << ',' << ring.t[i] << ',' << ring.y[i] - ring.y0 << ',' << ring.fit(ring.t[i]) - ring.y0 << ','
            << (in ? 1 : 0) << '\n';
    }
}

}  // namespace moreau::cdwaves
