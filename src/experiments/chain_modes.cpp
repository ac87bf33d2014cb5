/// CD paper §3.2, eqs. 58–60, for every mode of the chain, not only the
/// lowest: the dispersion ω(k) of the artificial sound, the damping τ(k) and
/// the cut-off k_c = 2c/D above which modes are overdamped.
///
/// The chain of `sound-wave-1d` (n grains of diameter d and mass m pressed
/// against a wall by F on the last one) is first brought to rest with N_I
/// sweeps per step, touching the wall. Then one mode is excited: the grains
/// get velocities A sin(k s) (s the distance from the wall, k = (j + ½)π/L,
/// the modes of a chain fixed at the wall and loaded at its end), and the
/// contact forces' deviation from F is projected onto cos(k s), the mode's
/// force shape, and oscillating modes are fitted by eq. 64 (ω and τ free).
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "chain_theory.hpp"
#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

struct ModeResult {
    int iterations = 0, mode = 0;
    double k = 0.0, kc = 0.0;
    double omegaTheory = 0.0, tauTheory = 0.0, rateTheory = 0.0;  ///< rate: overdamped, slower root
    double omegaFit = 0.0, tauFit = 0.0, r2 = 0.0;
    double firstStep = 0.0;  ///< the projection after one step, over the excited force amplitude
    bool oscillating = false;
    int signChanges = 0;  ///< of the projection after the first step
};

/// The chain at rest against the wall (contacts carrying F), N_I sweeps a step.
Simulation restingChain(int n, int iterations, double force, std::uint64_t seed) {
    std::ostringstream ini;
    ini << "[simulation]\nmethod = cd\ndimension = 1\ndt = 1\nseed = " << seed << "\ngravity = 0 0 0\n"
        << "[contact]\nmu = 0\nmargin = 0.5\n[cd]\niterations = " << iterations
        << "\ncriterion = fixed\norder = random-sweep\nwarm_start = true\ngap = pos\n"
        << "[grains]\nsource = chain\nmass = 1\n[chain]\ncount = " << n
        << "\nradius = 0.5\nspacing = 0\norigin = 0.5 0 0\n"
        << "[wall.left]\ntype = plane\npoint = 0 0 0\nnormal = 1 0 0\n"
        << "[force.push]\ngrains = last\nvalue = " << -force << " 0 0\n";
    Simulation sim(loadSceneText(ini.str(), "chain-modes", {}, {}));
    // Settle: many times the slowest mode's damping time (eq. 60).
    const ChainTheory th = chainTheory(iterations, 1.0, 1.0, n);
    const long steps = std::lround(30.0 * th.tau) + 200;
    for (long s = 0; s < steps; ++s) sim.advance();
    for (std::size_t i = 0; i < sim.world().numGrains; ++i) sim.world().v[i] = Vec3::Zero();
    return sim;
}

/// Σ_j (R_j − F) cos(k s_j) / Σ cos², R_j the contact at s_j = j d (j = 0 the wall).
double projection(const Simulation& sim, double k, double force) {
    const World& w = sim.world();
    double num = 0.0, den = 0.0;
    for (const Contact& c : sim.contacts()) {
        const double s = w.isWall(c.b) ? 0.0 : std::max(w.x[c.a].x(), w.x[c.b].x()) - 0.5;
        const double shape = std::cos(k * s);
        num += (c.history.reaction.norm() - force) * shape;
        den += shape * shape;
    }
    return den > 0.0 ? num / den : 0.0;
}

ModeResult runMode(const Simulation& rest, int iterations, int mode, double force, double amplitude) {
    ModeResult r;
    r.iterations = iterations;
    r.mode = mode;
    const std::size_t n = rest.world().numGrains;
    const double L = static_cast<double>(n);  // d = 1, Δt = 1
    r.k = (mode + 0.5) * M_PI / L;
    const double q = qRandomSweep(), qN = q * iterations;
    const double c = std::sqrt(qN), D = qN;  // eqs. 57, 54
    r.kc = 2.0 * c / D;                       // eq. 59
    const double under = c * c - D * D * r.k * r.k / 4.0;
    r.oscillating = under > 0.0;
    r.omegaTheory = r.oscillating ? r.k * std::sqrt(under) : 0.0;  // eq. 58
    r.tauTheory = 2.0 / (D * r.k * r.k);                            // eq. 60
    if (!r.oscillating) r.rateTheory = D * r.k * r.k / 2.0 - std::sqrt(-under) * r.k;
    Simulation sim = rest;
    World& w = sim.world();
    // Velocity amplitude for a force amplitude of `amplitude` F: δR ≈ m c A/d.
    const double a = amplitude * force / c;
    for (std::size_t i = 0; i < n; ++i) w.v[i] = Vec3(a * std::sin(r.k * w.x[i].x()), 0.0, 0.0);
    // Record 4 damping times (at least 40 steps, at least 3 periods).
    double span = 4.0 * (r.oscillating ? r.tauTheory : 1.0 / r.rateTheory);
    if (r.oscillating) span = std::max(span, 3.0 * 2.0 * M_PI / r.omegaTheory);
    const long steps = std::max(40L, std::lround(span));
    std::vector<double> t, x;
    for (long s = 0; s < steps; ++s) {
        sim.advance();
        t.push_back(w.time);
        x.push_back(projection(sim, r.k, force));
    }
    r.firstStep = x[0] / (amplitude * force);
    for (std::size_t i = 2; i < x.size(); ++i)
        if ((x[i] > 0.0) != (x[i - 1] > 0.0)) ++r.signChanges;
    if (r.oscillating) {
        std::vector<double> tf(t.begin() + 1, t.end()), xf(x.begin() + 1, x.end());
        DampedSine guess = guessDampedSine(tf, xf);
        if (!(std::abs(guess.omega / r.omegaTheory - 1.0) < 0.3)) {
            guess.omega = r.omegaTheory;
            guess.tau = r.tauTheory;
        }
        const DampedSine fit = fitDampedSine(tf, xf, guess);
        r.omegaFit = fit.omega;
        r.tauFit = fit.tau;
        r.r2 = fit.r2;
    }
    return r;
}

std::vector<int> parseIntegers(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::vector<int> out;
    for (std::string w; in >> w;) {
        const std::optional<long> v = parseInteger(w);  // std::stoi's range
        if (!v || *v < 0 || *v > std::numeric_limits<int>::max())
            throw InputError("chain-modes: key '" + key + "': '" + w + "' is not a whole number >= 0");
        out.push_back(static_cast<int>(*v));
    }
    if (out.empty()) throw InputError("chain-modes: key '" + key + "': empty");
    return out;
}

}  // namespace

nlohmann::json chainModes(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.iterations", KeyType::Text, "10 40 160", "N_I values (sweeps per step)"},
        {"experiment.modes", KeyType::Text, "0 1 2 3 4 5 6 8 10 14", "mode numbers j, k = (j + 1/2) pi / L"},
        {"experiment.particles", KeyType::Integer, "50", "grains in the chain", 4.0, 1e5},
        {"experiment.amplitude", KeyType::Real, "0.1", "force amplitude of the excited mode over F", 0.0, 0.9, {},
         true},
    };
    const Scene keyScene = experimentKeys("chain-modes", options.sets, keys);
    const std::vector<int> iterations = parseIntegers(sceneText(keyScene, "experiment.iterations"),
                                                      "experiment.iterations");
    const std::vector<int> modes = parseIntegers(sceneText(keyScene, "experiment.modes"), "experiment.modes");
    const auto n = static_cast<int>(sceneInteger(keyScene, "experiment.particles"));
    const double amplitude = sceneReal(keyScene, "experiment.amplitude");
    const double force = 0.05;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<ModeResult> results;
    for (int ni : iterations) {
        if (ni < 1) throw InputError("chain-modes: key 'experiment.iterations': N_I must be >= 1");
        const Simulation rest = restingChain(n, ni, force, options.seed.value_or(1));
        for (int m : modes)
            if (m < n) results.push_back(runMode(rest, ni, m, force, amplitude));
    }
    const double seconds = secondsSince(t0);

    nlohmann::json rows = nlohmann::json::array();
    nlohmann::json checks = nlohmann::json::array();
    for (const ModeResult& r : results) {
        rows.push_back({{"iterations", r.iterations}, {"mode", r.mode}, {"k", r.k}, {"k_c", r.kc},
                        {"oscillating_theory", r.oscillating}, {"omega_theory", r.omegaTheory},
                        {"omega_fit", r.omegaFit}, {"tau_theory", r.tauTheory}, {"tau_fit", r.tauFit},
                        {"r2", numberOrNull(r.r2)},
                        {"decay_rate_theory", r.rateTheory}, {"after_one_step", r.firstStep},
                        {"sign_changes", r.signChanges}});
        std::ostringstream tag;
        tag << "N_I = " << r.iterations << ", mode " << r.mode << " (k/k_c = " << r.k / r.kc << ")";
        // Eqs. 58 and 60 are continuous in time: a mode that relaxes within
        // a step or two is beyond them (at k_c itself τ = Δt/2 for every N_I,
        // from eqs. 54, 57, 59). Checked where the mode lives: ω for
        // τ ≥ 3 Δt, τ for τ ≥ Δt.
        // The paper's claim is for every oscillating mode: the short-lived
        // ones are checked too, and fail (departures.md, chain-modes).
        if (r.oscillating)
            checks.push_back(makeCheck(tag.str() + (r.tauTheory >= 3.0 ? ": omega against eq. 58 (5 %)"
                                                                         : ": omega against eq. 58 (5 %; tau < 3 dt: "
                                                                           "the paper's 'all modes', departs)"),
                                       r.omegaFit, r.omegaTheory, 0.05));
        if (r.oscillating && r.tauTheory >= 1.0)
            checks.push_back(makeCheck(tag.str() + ": tau against eq. 60 (10 %)", r.tauFit, r.tauTheory, 0.10));
    }
    nlohmann::json params = {{"particles", n}, {"iterations", iterations}, {"modes", modes},
                             {"amplitude", amplitude}, {"force", force}, {"q", qRandomSweep()},
                             {"units", "d = m = dt = 1"}};
    nlohmann::json out = {{"experiment", "chain-modes"},
                          {"params", params},
                          {"results", {{"modes", rows}, {"seconds", seconds}}},
                          {"checks", checks}};
    if (options.writeFiles) {
        auto [csv, f] = openCsv(options, "chain_modes.csv",
                                "iterations,mode,k,k_c,omega_theory,omega_fit,tau_theory,tau_fit,r2,"
                                "decay_rate_theory,after_one_step,sign_changes");
        for (const ModeResult& r : results)
            f << r.iterations << ',' << r.mode << ',' << r.k << ',' << r.kc << ',' << r.omegaTheory << ','
              << r.omegaFit << ',' << r.tauTheory << ',' << r.tauFit << ',' << r.r2 << ',' << r.rateTheory << ','
              << r.firstStep << ',' << r.signChanges << '\n';
        f.close();
        runPlotScript("chain_modes", {csv.string(), (options.outDir / "chain_modes.png").string()}, options.quiet);
    }
    return out;
}

}  // namespace moreau
