#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "moreau/core/error.hpp"
#include "moreau/core/progress.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/experiments/scene_keys.hpp"

namespace moreau {

nlohmann::json makeCheck(const std::string& name, double value, double expected, double tolerance, bool relative) {
    const double err = relative ? std::abs(value / expected - 1.0) : std::abs(value - expected);
    const bool pass = std::isfinite(value) && err <= tolerance;
    return {{"name", name}, {"value", value}, {"expected", expected}, {"tolerance", tolerance},
            {"relative", relative}, {"error", err}, {"pass", pass}};
}

nlohmann::json makeBoundCheck(const std::string& name, double value, double bound, bool above) {
    const bool pass = std::isfinite(value) && (above ? value > bound : value < bound);
    return {{"name", name}, {"value", value}, {"expected", bound}, {"tolerance", 0.0},
            {"relation", above ? ">" : "<"}, {"pass", pass}};
}

std::vector<std::string> listWords(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

namespace {

using Run = std::function<nlohmann::json(const ExperimentOptions&)>;

/// The scene keys an experiment reads from --set besides its own: a key,
/// `section.*` for a whole section, `!key` for one the section's pattern
/// leaves out. Any other key is refused: the experiment would ignore it, and
/// a study must not believe it took effect.
using SceneKeys = std::vector<std::string>;

/// `sceneKeys` as a line: "simulation.dt, cd.* (not cd.iterations)", or "none".
std::string sceneKeysText(const SceneKeys& sceneKeys) {
    std::string text, left;
    for (const std::string& k : sceneKeys) {
        std::string& list = k.front() == '!' ? left : text;
        list += (list.empty() ? "" : ", ") + (k.front() == '!' ? k.substr(1) : k);
    }
    if (text.empty()) return "none";
    return left.empty() ? text : text + " (not " + left + ")";
}

/// Each experiment's and bench's SceneKeys, by "experiment NAME" and "bench NAME".
std::map<std::string, SceneKeys>& sceneKeysByName() {
    static std::map<std::string, SceneKeys> keys;
    return keys;
}

/// Whether `sceneKeys` holds `key`.
bool readsKey(const SceneKeys& sceneKeys, const std::string& key) {
    bool in = false;
    for (const std::string& k : sceneKeys) {
        if (k.front() == '!') {
            if (k.compare(1, std::string::npos, key) == 0) return false;
        } else if (k == key || (k.size() > 2 && k.ends_with(".*") && key.rfind(k.substr(0, k.size() - 1), 0) == 0)) {
            in = true;
        }
    }
    return in;
}

/// The entry `name`, whose run() refuses --set keys outside its own section
/// (`own`: experiment or bench) and `sceneKeys`.
ExperimentInfo entry(std::string name, std::string description, const std::string& own, SceneKeys sceneKeys, Run run,
                     bool distributed = false) {
    const std::string label = own == "bench" ? "bench " + name : name;
    sceneKeysByName()[own + " " + name] = sceneKeys;
    Run checked = [label, own, sceneKeys, run = std::move(run)](const ExperimentOptions& options) {
        for (const std::string& set : options.sets) {
            const std::size_t eq = set.find('=');
            if (eq == std::string::npos) continue;  // malformed: the scene loader says so
            std::string key = set.substr(0, eq);
            key.erase(0, key.find_first_not_of(" \t"));
            key.erase(key.find_last_not_of(" \t") + 1);
            if (key.rfind(own + ".", 0) == 0 || readsKey(sceneKeys, key)) continue;
            if (key.size() > 64) key = key.substr(0, 64) + "…";
            throw InputError(label + ": --set key '" + key + "': not used by this " + own + " (it reads " + own +
                             ".* and the scene keys " + sceneKeysText(sceneKeys) + ")");
        }
        // The progress line on a terminal (core/progress.hpp), cleared before the results.
        progress::Line line(label, !options.quiet && progress::terminal());
        return run(options);
    };
    return {std::move(name), std::move(description), std::move(checked), distributed};
}

ExperimentInfo experiment(std::string name, std::string description, SceneKeys sceneKeys, Run run,
                          bool distributed = false) {
    return entry(std::move(name), std::move(description), "experiment", std::move(sceneKeys), std::move(run),
                 distributed);
}

ExperimentInfo bench(std::string name, std::string description, SceneKeys sceneKeys, Run run,
                     bool distributed = false) {
    return entry(std::move(name), std::move(description), "bench", std::move(sceneKeys), std::move(run), distributed);
}

// The scene keys each experiment reads, from what
// it does with its scene: a key it overrides, or a section it never builds,
// is not read.

/// The 1D chain run as the scene says (sound-wave-1d): not simulation.steps
/// (the run lasts until the fit window is recorded), not the method and
/// dimension (CD in 1D only), not md.*.
const SceneKeys kChainScene = {"simulation.dt", "simulation.seed", "simulation.gravity", "contact.*",
                                              "cd.*", "grains.*", "chain.*", "force.*", "wall.*"};
/// The 2D piston packing (cdwaves::loadPistonScene): prepared until at rest
/// and rung with experiment.prep_iterations and experiment.iterations (not
/// cd.iterations, not simulation.steps).
const SceneKeys kPistonScene = {"simulation.dt", "simulation.seed", "simulation.gravity", "contact.*",
                                               "cd.*", "!cd.iterations", "grains.*", "random.*", "wall.*"};
/// Both (iteration-scaling, cd-md-equivalence): the chain takes chain.* and
/// cd.order, cd.warm_start, cd.gap, simulation.seed (cdwaves::loadChainScene).
const SceneKeys kPistonAndChain = {"simulation.dt", "simulation.seed", "simulation.gravity",
                                                  "contact.*", "cd.*", "!cd.iterations", "grains.*",
                                                  "random.*", "wall.*", "chain.*"};
/// Load steps of chains and packings built in code (load_step.hpp): the
/// sweeps' settings, the seed and the packings' preparation N_I.
const SceneKeys kLoadSteps = {"simulation.seed", "cd.order", "cd.gap", "cd.iterations",
                                             "cd.proximal", "cd.proximal_eta", "cd.proximal_every"};
/// The soft-sphere collision experiments: grains (size, density) and laws
/// from their scene, the step from experiment.steps_per_collision.
SceneKeys collisionScene(SceneKeys more) {
    SceneKeys keys = {"grains.*", "chain.radius", "md.*", "!md.kn", "!md.gamma_n", "!md.en", "!md.tn"};
    keys.insert(keys.end(), more.begin(), more.end());
    return keys;
}

}  // namespace

std::string sceneKeysRead(const std::string& name, bool bench) {
    (void)(bench ? benches() : experiments());  // the lists are filled as the entries are made
    const auto it = sceneKeysByName().find((bench ? "bench " : "experiment ") + name);
    return it == sceneKeysByName().end() ? "none" : sceneKeysText(it->second);
}

const std::vector<ExperimentInfo>& experiments() {
    static const std::vector<ExperimentInfo> list = {
        experiment("sound-wave-1d", "CD §3.3.1 Fig. 7: artificial sound wave of a rigid chain, ω and τ vs eqs. 57-60",
                   kChainScene, soundWave1d),
        experiment("sound-wave-2d",
                   "CD §3.3.2 Fig. 8: a piston on a 2D random packing rings after a force step; eq. 64 fitted",
                   kPistonScene, soundWave2d, true),
        experiment("iteration-scaling",
                   "CD §3.3.2: omega ~ N_I^(1/2) and tau ~ N_I^(-1) for the 1D chain and the 2D packing",
                   kPistonAndChain, iterationScaling),
        experiment("cd-md-equivalence",
                   "CD §3.4 eqs. 67-68: CD chain and packing against MD with kappa, gamma of N_I",
                   kPistonAndChain, cdMdEquivalence),
        experiment("force-relaxation",
                   "CD §3.1 eq. 48: sweeps to relax a squeezed chain (∝ L²), 2D (∝ n) and 3D (∝ n^2/3) packings",
                   kLoadSteps, forceRelaxation),
        experiment("convergence-criteria",
                   "CD §2.5.1: fixed N_I, local and global criteria at matched mean overlap on a 2D compression; "
                   "residual per sweep",
                   {"simulation.dt", "simulation.steps", "simulation.seed", "simulation.gravity", "contact.*", "cd.*",
                    "!cd.criterion", "!cd.epsilon", "grains.*", "random.*", "wall.*"},
                   convergenceCriteria),
        experiment("solver-convergence",
                   "beyond the papers (issue: solver families): Siconos error against iterations and time for "
                   "cd.solver gauss-seidel, newton and apgd on the harness's flat pile and pyramid and a 2D piston "
                   "load step; velocities against impulses",
                   {"simulation.dt", "simulation.steps", "simulation.seed", "contact.*", "cd.iterations",
                    "cd.check_every", "cd.warm_start", "grains.*", "random.*", "wall.*"},
                   solverConvergence),
        experiment("sweep-orders",
                   "beyond CD §2.5: sweeps to relax a load step and sound-wave ω for random-sweep, shuffle-once, "
                   "fixed, random-sequential",
                   {"simulation.seed", "cd.gap", "cd.iterations", "cd.proximal", "cd.proximal_eta",
                    "cd.proximal_every"},
                   sweepOrders),
        experiment("restitution",
                   "force schemes Fig. 2: e_n vs impact velocity for the linear, damped Hertz, HKK and Walton-Braun "
                   "laws",
                   collisionScene({"!md.normal", "!md.s"}), restitution),
        experiment("oblique-impact",
                   "force schemes §3 Figs. 3-6: psi_f(psi_i) and e(sin theta) of oblique sphere impacts for every "
                   "tangential law",
                   {}, obliqueImpact),
        experiment("brake-failure",
                   "force schemes §4 Fig. 8, eq. 25: braking dv_x vs speed of a grazing impact, two stiffnesses",
                   collisionScene({"contact.mu"}), brakeFailure),
        experiment("detachment", "force schemes §4: restitution of a column of N grains hitting a wall vs t0/t_n",
                   collisionScene({"chain.count", "!md.meff"}), detachment),
        experiment("integrators",
                   "integration schemes §4: ARD of e_n, e_t, beta, omega_f vs the exact impact, per scheme and "
                   "steps per collision; fixed-grid error and CPU time",
                   collisionScene({"contact.mu", "!md.kt", "!md.gamma_t", "!md.integrator"}), integratorsImpact),
        experiment("relaxation-time",
                   "Pena et al. Figs. 5-9: relaxation time of two discs vs dt/t_c with Gear 5, Cundall spring vs "
                   "geometric update, three freedoms, several k_n, against the linear system; t_R vs mu, k_t/k_n, "
                   "eps_t/eps_n; with experiment.grains = polygons, Fig. 10: two squares, no rotation",
                   {}, relaxationTime),
        experiment("slow-shear",
                   "Pena et al. Fig. 3: E_k(t) of 256 disks sheared slowly between rough plates with Gear 5 at two "
                   "dt, mu = 0 and 0.5, and the cumulative difference Delta E_k",
                   {}, slowShear),
        experiment("kuhn-slip-direction",
                   "Kuhn et al. Fig. 4: direction of a sliding contact's force after one step against the movement "
                   "size, refined algorithm vs add-then-project",
                   {}, kuhnSlipDirection),
        experiment("stress-probes",
                   "Kuhn et al. Fig. 5: plastic strain increments of axisymmetric stress probes in the Rendulic "
                   "plane, conventional vs refined linear-frictional algorithm, fitted circles and hardening moduli",
                   {}, stressProbes),
        experiment("chain-modes",
                   "CD §3.2 eqs. 58-60 for every mode: omega(k), tau(k) and the cut-off k_c of the chain's "
                   "artificial sound, N_I = 10, 40, 160",
                   {}, chainModes),
        experiment("mu-of-i",
                   "beyond the papers (da Cruz et al. 2005): mu(I) and phi(I) of steady shear at fixed pressure in a "
                   "Lees-Edwards cell, CD converged and at fixed N_I, MD at stiffness levels and mapped by CD eqs. "
                   "67-68",
                   {}, muOfI),
        experiment("rigid-rotation",
                   "Kuhn et al. Fig. 6: stress of a static packing rotated rigidly by 90 deg about x1 and turned "
                   "back, for no adjustment, projection, projection + twirl of the tangential forces",
                   {}, rigidRotation),
    };
    return list;
}

const std::vector<ExperimentInfo>& benches() {
    // The bench world is built in code (benchWorld: lattice or bench.packing,
    // walls, gravity, bench.mu); the scene gives the seed, the detection
    // distances and the method's settings the bench does not fix.
    static const std::vector<ExperimentInfo> list = {
        bench("cd-sweep", "contact updates per second of frictional random sweeps on a dense 3D packing",
              {"simulation.seed", "contact.margin", "contact.skin", "contact.inner_skin", "contact.rank_check_every",
               "cd.*", "!cd.criterion", "!cd.iterations"},
              benchCdSweep, true),
        bench("md-step",
              "particle-steps per second of soft-sphere MD on the LAMMPS protocol (shared/packings/README.md)",
              {"simulation.seed", "contact.margin", "contact.skin", "contact.inner_skin", "contact.rank_check_every",
               "md.integrator", "md.restart_on_contact_change", "md.pipeline", "md.simd"},
              benchMdStep, true),
        bench("detect", "seconds per contact detection (cell grid) on a dense 3D packing",
              {"simulation.seed", "contact.margin"}, benchDetect),
        bench("fclib",
              "one CD step as a local problem (FCLIB/FC3D file, or a sphere pile through the engine) solved and "
              "scored in the Siconos/FCLIB error",
              {"simulation.seed", "cd.*"}, benchFclib),
    };
    return list;
}

CsvFile openCsv(const ExperimentOptions& options, const std::string& name, const std::string& header, int precision) {
    CsvFile csv{options.outDir / name, OutputFile(options.outDir / name)};
    csv.out << header << '\n' << std::setprecision(precision);
    return csv;
}

Scene experimentKeys(const std::string& experiment, const std::vector<std::string>& sets,
                     const std::vector<KeySpec>& keys) {
    for (const std::string& set : sets)
        if (set.rfind("experiment.", 0) != 0) {
            std::string names;
            for (const KeySpec& k : keys) names += (names.empty() ? "" : ", ") + k.key.substr(k.key.find('.') + 1);
            throw InputError(experiment + ": '" + set.substr(0, set.find('=')) + "': only experiment.* keys (" + names +
                             ") can be set");
        }
    return loadSceneText("[grains]\nsource = chain\n[chain]\ncount = 1\n", experiment, sets, keys);
}

std::vector<std::string> setsWithSeed(const ExperimentOptions& options) {
    std::vector<std::string> sets = options.sets;
    if (options.seed) sets.push_back("simulation.seed=" + std::to_string(*options.seed));
    return sets;
}

namespace {

/// The value of the whole text read by `read` (std::stod, std::stol), or none.
template <class Read>
auto wholeText(const std::string& text, Read read) -> std::optional<decltype(read(text, nullptr))> {
    try {
        std::size_t used = 0;
        const auto v = read(text, &used);
        if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace

std::optional<double> parseNumber(const std::string& text) {
    return wholeText(text, [](const std::string& t, std::size_t* used) { return std::stod(t, used); });
}

std::optional<long> parseInteger(const std::string& text) {
    return wholeText(text, [](const std::string& t, std::size_t* used) { return std::stol(t, used); });
}

bool runPlotScript(const std::string& script, const std::vector<std::string>& args, bool quiet) {
    const progress::Pause pause;  // the script's messages on a clean line
    const std::filesystem::path python = "/usr/bin/python3";
    const std::filesystem::path file = std::filesystem::path(MOREAU_SOURCE_DIR) / "tools" / ("plot_" + script + ".py");
    if (!std::filesystem::exists(python) || !std::filesystem::exists(file)) {
        if (!quiet) std::cerr << "(no plot: " << (std::filesystem::exists(python) ? file.string() : python.string()) << " not found)\n";
        return false;
    }
    std::string cmd = python.string() + " '" + file.string() + "'";
    for (const auto& a : args) cmd += " '" + a + "'";
    if (quiet) cmd += " >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0 && !quiet) std::cerr << "(plot script " << file << " failed; is python3-matplotlib installed?)\n";
    return rc == 0;
}

}  // namespace moreau
