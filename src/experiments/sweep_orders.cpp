/// Beyond CD §2.5: does the order of the Gauss–Seidel sweeps matter? The CD
/// paper prescribes a fresh random permutation every sweep (random sweep) to
/// avoid a directional bias; the FCLIB comparison of solvers (Acary, Brémond,
/// Huber 2018) found that reshuffling every sweep slows convergence on rigid
/// problems. For each of random-sweep, shuffle-once (one permutation per
/// step), fixed (contact key order) and random-sequential (m independent draws
/// per sweep) this measures
///  - the sweeps of a cold-started load step until every reaction is within
///    ε⟨|R*|⟩ of R* (load_step.hpp) on the squeezed chain (R* = F exactly) and
///    on 2D and 3D packings compressed by a piston (R* = the limit of the same
///    iteration), over several seeds;
///  - the artificial sound wave of the chain (sound-wave-1d) with each order:
///    ω_fit against eq. 58 with the random sweep's q (eq. 46) and with the q
///    the order should have.
///
/// Chain theory per order (docs/experiments-cd-solver.md): the chain's
/// contact graph is a tree, so every fixed order is consistently ordered and
/// its Gauss–Seidel iteration contracts like Jacobi squared (q = 1); the random
/// sweep has q = 0.797 (eq. 46); random sequential updates are a Jacobi
/// iteration in continuous fictitious time (q = 1/2). Sweeps ∝ 1/q.
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>

#include "chain_theory.hpp"
#include "load_step.hpp"
#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

namespace {

constexpr SweepOrder kOrders[] = {SweepOrder::RandomSweep, SweepOrder::ShuffleOnce, SweepOrder::Fixed,
                                  SweepOrder::RandomSequential};

struct Stat {
    double mean = 0.0, sem = 0.0;
};

Stat statOf(const std::vector<double>& v) {
    Stat s;
    if (v.empty()) return s;
    for (double x : v) s.mean += x;
    s.mean /= static_cast<double>(v.size());
    if (v.size() > 1) {
        double ss = 0.0;
        for (double x : v) ss += (x - s.mean) * (x - s.mean);
        s.sem = std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
    }
    return s;
}

}  // namespace

nlohmann::json sweepOrders(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"experiment.chain_length", KeyType::Integer, "40", "grains of the squeezed chain (0: skip)", 0, 1e6},
        {"experiment.particles_2d", KeyType::Integer, "500", "disks of the 2D packing (0: skip)", 0, 1e7},
        {"experiment.particles_3d", KeyType::Integer, "1000", "spheres of the 3D packing (0: skip)", 0, 1e7},
        {"experiment.seeds", KeyType::Integer, "5", "seeds (packings and random orders) per system", 1, 1000},
        {"experiment.epsilon", KeyType::Real, "1e-3", "accuracy of the load step, as in force-relaxation", 0.0, 0.5,
         {}, true},
        {"experiment.mu", KeyType::Real, "0.05", "friction of the 2D/3D packings", 0.0, kInf},
        {"experiment.pressure", KeyType::Real, "0.02", "piston force per unit length (2D) or area (3D)", 0.0, kInf, {},
         true},
        {"experiment.max_sweeps", KeyType::Integer, "400000", "cap on the sweeps of one load step", 10, 1e9},
        {"experiment.wave", KeyType::Bool, "true", "also run the sound wave of the chain (sound-wave-1d) per order"},
        {"experiment.wave_iterations", KeyType::Integer, "40", "N_I of the sound-wave runs", 1, 100000},
        {"experiment.wave_particles", KeyType::Integer, "50", "grains of the sound-wave chain", 2, 100000},
    };
    const Scene scene = loadBuiltinScene("chain_1d.ini", setsWithSeed(options), extra);
    const auto chainLength = sceneInteger(scene, "experiment.chain_length");
    const auto n2 = sceneInteger(scene, "experiment.particles_2d");
    const auto n3 = sceneInteger(scene, "experiment.particles_3d");
    const auto seeds = static_cast<int>(sceneInteger(scene, "experiment.seeds"));
    const double eps = sceneReal(scene, "experiment.epsilon");
    const double mu = sceneReal(scene, "experiment.mu");
    const double pressure = sceneReal(scene, "experiment.pressure");
    const auto maxSweeps = static_cast<int>(sceneInteger(scene, "experiment.max_sweeps"));
    const bool wave = sceneBool(scene, "experiment.wave");
    const auto waveNI = static_cast<int>(sceneInteger(scene, "experiment.wave_iterations"));
    const auto waveN = sceneInteger(scene, "experiment.wave_particles");
    if (chainLength == 1) throw InputError("key 'experiment.chain_length': 1 is not allowed (0 to skip, or >= 2)");
    if ((n2 > 0 && n2 < 20) || (n3 > 0 && n3 < 20))
        throw InputError("keys 'experiment.particles_2d/3d': use 0 (skip) or at least 20 grains");
    const std::uint64_t seed0 = scene.simulation.seed;
    auto say = [&](const std::string& s) {
        if (!options.quiet) std::cerr << "sweep-orders: " << s << '\n';
    };

    const std::size_t nOrders = std::size(kOrders);
    // sweeps[system][order][seed]
    std::vector<std::vector<std::vector<double>>> sweeps(3, std::vector<std::vector<double>>(nOrders));
    auto measure = [&](int system, const loadstep::LoadedSystem& sys, std::uint64_t seed) {
        for (std::size_t o = 0; o < nOrders; ++o) {
            CdSettings cd = scene.cd;
            cd.order = kOrders[o];
            const loadstep::Convergence c = loadstep::sweepsToEpsilon(sys, cd, seed, eps, maxSweeps, false);
            if (!c.reached)
                throw InputError("sweep-orders: " + loadstep::orderName(kOrders[o]) + " did not reach epsilon within " +
                                 std::to_string(maxSweeps) + " sweeps; raise experiment.max_sweeps");
            sweeps[static_cast<std::size_t>(system)][o].push_back(c.sweeps);
        }
    };
    for (int k = 0; k < seeds; ++k) {
        const std::uint64_t seed = seed0 + static_cast<std::uint64_t>(k);
        if (chainLength > 0) measure(0, loadstep::loadedChain(static_cast<std::size_t>(chainLength), 1.0), seed);
        for (int dim = 2; dim <= 3; ++dim) {
            const long n = dim == 2 ? n2 : n3;
            if (n <= 0) continue;
            loadstep::PackingSpec spec;
            spec.dimension = dim;
            spec.grains = static_cast<std::size_t>(n);
            spec.seed = seed;
            spec.mu = mu;
            spec.pressure = pressure;
            spec.prepIterations = scene.cd.iterations;
            measure(dim - 1, loadstep::loadedPacking(spec), seed);
        }
        say("seed " + std::to_string(seed) + " done");
    }

    std::vector<std::string> names;
    std::vector<double> qs, chainTheorySweeps;
    std::array<std::vector<double>, 3> means, sems;
    for (std::size_t o = 0; o < nOrders; ++o) {
        names.push_back(loadstep::orderName(kOrders[o]));
        qs.push_back(qOfOrder(kOrders[o]));
        const double L = static_cast<double>(chainLength);
        chainTheorySweeps.push_back(L * L * std::log(4.0 / (M_PI * eps)) / (qs.back() * M_PI * M_PI));
        for (std::size_t s = 0; s < 3; ++s) {
            const Stat st = statOf(sweeps[s][o]);
            means[s].push_back(st.mean);
            sems[s].push_back(st.sem);
        }
    }

    // Paired comparison: the packings of one seed differ more between seeds
    // than the orders do on one packing, so each order is compared with the
    // random sweep on the same packing and seed, and the median taken.
    std::array<std::vector<double>, 3> pairedRatio;
    for (std::size_t sy = 0; sy < 3; ++sy)
        for (std::size_t o = 0; o < nOrders; ++o) {
            std::vector<double> r;
            for (std::size_t k = 0; k < sweeps[sy][o].size() && k < sweeps[sy][0].size(); ++k)
                r.push_back(sweeps[sy][o][k] / sweeps[sy][0][k]);
            std::sort(r.begin(), r.end());
            const std::size_t m = r.size();
            pairedRatio[sy].push_back(m == 0 ? std::nan("") : (m % 2 ? r[m / 2] : 0.5 * (r[m / 2 - 1] + r[m / 2])));
        }

    // --- sound wave per order -------------------------------------------------
    std::vector<double> omegaFit, omegaRatio, omegaRatioOwnQ, qEff, r2;
    if (wave) {
        for (std::size_t o = 0; o < nOrders; ++o) {
            ExperimentOptions wo;
            wo.quiet = true;
            wo.writeFiles = false;
            wo.sets = {"cd.order=" + names[o], "cd.iterations=" + std::to_string(waveNI),
                       "chain.count=" + std::to_string(waveN), "simulation.seed=" + std::to_string(seed0)};
            const nlohmann::json doc = soundWave1d(wo);
            const auto& r = doc["results"];
            const double wf = r["omega_fit"].get<double>(), wt = r["omega_theory"].get<double>();
            const double L = static_cast<double>(waveN);
            const ChainTheory own = chainTheory(qs[o], waveNI, 1.0, 1.0, L);
            omegaFit.push_back(wf);
            omegaRatio.push_back(wf / wt);
            omegaRatioOwnQ.push_back(wf / own.omega);
            // q_eff from eq. 58: ω² = k² (qN − (qN)² k²/4), the root near qN = ω²/k².
            const double k = own.k, a = wf * wf / (k * k);
            const double disc = 1.0 - a * k * k;
            qEff.push_back(disc >= 0.0 ? (2.0 / (k * k)) * (1.0 - std::sqrt(disc)) / waveNI : std::nan(""));
            r2.push_back(r["r2"].get<double>());
            say("sound wave " + names[o] + ": omega_fit/omega_theory = " + std::to_string(wf / wt));
        }
    }

    nlohmann::json params = {{"chain_length", chainLength}, {"particles_2d", n2}, {"particles_3d", n3},
                             {"seeds", seeds}, {"seed", seed0}, {"epsilon", eps}, {"mu_packings", mu},
                             {"pressure", pressure}, {"prep_iterations", scene.cd.iterations},
                             {"wave_iterations", waveNI}, {"wave_particles", waveN}};
    nlohmann::json results = {{"orders", names},
                              {"q_theory_chain", qs},
                              {"sweeps_chain", means[0]},
                              {"sweeps_chain_sem", sems[0]},
                              {"sweeps_chain_theory", chainTheorySweeps},
                              {"sweeps_2d", means[1]},
                              {"sweeps_2d_sem", sems[1]},
                              {"sweeps_3d", means[2]},
                              {"sweeps_3d_sem", sems[2]},
                              {"sweeps_chain_per_seed", sweeps[0]},
                              {"sweeps_2d_per_seed", sweeps[1]},
                              {"sweeps_3d_per_seed", sweeps[2]},
                              {"ratio_to_random_sweep_chain", pairedRatio[0]},
                              {"ratio_to_random_sweep_2d", pairedRatio[1]},
                              {"ratio_to_random_sweep_3d", pairedRatio[2]},
                              {"omega_fit_chain", omegaFit},
                              {"omega_ratio_chain", omegaRatio},
                              {"omega_ratio_own_q_chain", omegaRatioOwnQ},
                              {"q_eff_chain", qEff},
                              {"r2_chain", r2}};
    // Reshuffling cost: random-sweep / shuffle-once, median over seeds of the paired ratio.
    for (std::size_t sy = 0; sy < 3; ++sy) {
        static const char* sys[] = {"chain", "2d", "3d"};
        if (pairedRatio[sy][1] > 0.0) results[std::string("reshuffle_cost_") + sys[sy]] = 1.0 / pairedRatio[sy][1];
    }
    nlohmann::json checks = nlohmann::json::array();
    if (chainLength > 0) {
        // Sweeps ∝ 1/q on the chain: the single-mode diffusion theory with
        // each order's q, to 10% as in force-relaxation.
        for (std::size_t o = 0; o < nOrders; ++o)
            checks.push_back(makeCheck("chain sweeps / theory (q = " + std::to_string(qs[o]).substr(0, 5) + "), " +
                                           names[o],
                                       means[0][o], chainTheorySweeps[o], 0.1));
    }
    if (wave) {
        // ω ∝ √q (eq. 57): each order's wave against eq. 58 with its own q.
        // 5%: the sound-wave-1d tolerance is 2% for the random sweep, whose q
        // is exact in the continuum limit; the other q are asymptotic
        // contraction rates of a whole iteration, not of N_I = 40 sweeps.
        for (std::size_t o = 0; o < nOrders; ++o)
            checks.push_back(makeCheck("omega_fit / omega(q of order), " + names[o], omegaRatioOwnQ[o], 1.0, 0.05));
    }

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "sweep_orders.csv",
                                  "order,q_theory,sweeps_chain,sem_chain,theory_chain,sweeps_2d,sem_2d,sweeps_3d,"
                                  "sem_3d,omega_ratio,omega_ratio_own_q,q_eff,ratio_chain,ratio_2d,ratio_3d", 10);
        for (std::size_t o = 0; o < nOrders; ++o)
            out << names[o] << ',' << qs[o] << ',' << means[0][o] << ',' << sems[0][o] << ',' << chainTheorySweeps[o]
                << ',' << means[1][o] << ',' << sems[1][o] << ',' << means[2][o] << ',' << sems[2][o] << ','
                << (wave ? omegaRatio[o] : std::nan("")) << ',' << (wave ? omegaRatioOwnQ[o] : std::nan("")) << ','
                << (wave ? qEff[o] : std::nan("")) << ',' << pairedRatio[0][o] << ',' << pairedRatio[1][o] << ','
                << pairedRatio[2][o] << '\n';
        out.close();
        runPlotScript("sweep_orders",
                      {csv.string(), (options.outDir / "sweep_orders.png").string(), std::to_string(chainLength),
                       std::to_string(n2), std::to_string(n3), std::to_string(seeds)},
                      options.quiet);
    }
    return {{"experiment", "sweep-orders"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
