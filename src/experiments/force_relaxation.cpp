/// CD paper §3.1, eq. 48: the iterative solver relaxes contact forces like a
/// diffusion (eqs. 42–46), so a chain of L grains squeezed at its ends needs
/// N_I ∝ (L/d)² sweeps before every reaction is right; in 2D and 3D packings
/// the sweeps of a converged load step grow as (L/d)² (eq. 48), ∝ n in 2D and
/// ∝ n^{2/3} in 3D (the cost per step, n times that, is eqs. 49–50).
///
/// Chain: one cold-started CD step (reactions from zero) of L touching grains
/// with +F on the first and −F on the last; sweeps until every reaction is
/// within εF of the exact F. The diffusion equation with R = F at both ends
/// (the external forces act as the reactions of ghost contacts 0 and L) and
/// R = 0 at the start leaves, once the higher modes have died, the error
/// (4/π) F sin(πx/L) exp(−q π² s / L²) after s sweeps, so
///     s(ε) = L² ln(4/(π ε)) / (q π²),
/// eq. 48 with its prefactor (q of the sweep order, eq. 46 for random sweeps).
///
/// Packings: a random packing compressed by a piston (load_step.hpp), at rest,
/// reactions cleared; sweeps until the force on the base is within ε of its
/// limit for good — the load has arrived (§3.1's picture of Fig. 5).
#include <array>
#include <cmath>
#include <iostream>

#include "load_step.hpp"
#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

namespace {

struct SeriesResult {
    std::vector<double> size, depth, contacts, sweeps, sweepsSd;
    std::vector<std::vector<int>> perSeed;
};

double mean(const std::vector<int>& v) {
    double s = 0.0;
    for (int x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

double stddev(const std::vector<int>& v) {
    if (v.size() < 2) return 0.0;
    const double m = mean(v);
    double s = 0.0;
    for (int x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

nlohmann::json forceRelaxation(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"experiment.lengths", KeyType::Text, "10 20 40 80 160", "chain lengths L (grains), at least 2 each"},
        {"experiment.epsilon", KeyType::Real, "1e-3",
         "accuracy: every reaction within epsilon <|R*|> of the exact (chain: F) or converged one", 0.0, 0.5, {},
         true},
        {"experiment.seeds", KeyType::Integer, "2", "seeds per size (random sweep orders and packings), averaged", 1, 1000},
        {"experiment.sizes_2d", KeyType::Text, "250 500 1000 2000",
         "disk counts n of the 2D packings (empty: skip 2D)"},
        {"experiment.sizes_3d", KeyType::Text, "1000 2000 4000 8000",
         "sphere counts n of the 3D packings (empty: skip 3D)"},
        {"experiment.mu", KeyType::Real, "0",
         "friction of the 2D/3D packings (0: the frictionless relaxation of §3.1; the paper's 2D runs use 0.05, "
         "which adds a size-independent stick-slip part)",
         0.0, kInf},
        {"experiment.pressure", KeyType::Real, "0.02",
         "piston force per unit length (2D) or area (3D) compressing the packings", 0.0, kInf, {}, true},
        {"experiment.max_sweeps", KeyType::Integer, "400000", "cap on the sweeps of one load step", 10, 1e9},
    };
    const Scene scene = loadBuiltinScene("chain_1d.ini", setsWithSeed(options), extra);
    const auto lengths = loadstep::parseCounts("experiment.lengths", sceneText(scene, "experiment.lengths"), 2);
    const auto sizes2 = loadstep::parseCounts("experiment.sizes_2d", sceneText(scene, "experiment.sizes_2d"), 20);
    const auto sizes3 = loadstep::parseCounts("experiment.sizes_3d", sceneText(scene, "experiment.sizes_3d"), 20);
    if (lengths.size() < 2) throw InputError("key 'experiment.lengths': give at least two chain lengths for the exponent");
    const double eps = sceneReal(scene, "experiment.epsilon");
    const auto seeds = static_cast<int>(sceneInteger(scene, "experiment.seeds"));
    const auto maxSweeps = static_cast<int>(sceneInteger(scene, "experiment.max_sweeps"));
    const double mu = sceneReal(scene, "experiment.mu");
    const double pressure = sceneReal(scene, "experiment.pressure");
    const CdSettings cd = scene.cd;
    const std::uint64_t seed0 = scene.simulation.seed;
    const double q = qOfOrder(cd.order);
    // A deterministic order gives the same count for every seed.
    const int chainSeeds = (cd.order == SweepOrder::Fixed) ? 1 : seeds;

    auto say = [&](const std::string& s) {
        if (!options.quiet) std::cerr << "force-relaxation: " << s << '\n';
    };

    // --- the chain (eq. 48) --------------------------------------------------
    SeriesResult chain;
    std::vector<double> theory;
    std::vector<double> errorCurve;  // largest chain, first seed
    for (long L : lengths) {
        const loadstep::LoadedSystem sys = loadstep::loadedChain(static_cast<std::size_t>(L), 1.0);
        std::vector<int> runs;
        for (int k = 0; k < chainSeeds; ++k) {
            const bool keep = (L == lengths.back() && k == 0);
            const loadstep::Convergence c = loadstep::sweepsToEpsilon(sys, cd, seed0 + static_cast<std::uint64_t>(k), eps, maxSweeps, keep);
            if (!c.reached)
                throw InputError("force-relaxation: chain L=" + std::to_string(L) + " did not reach epsilon within " +
                                 std::to_string(maxSweeps) + " sweeps; raise experiment.max_sweeps");
            runs.push_back(c.sweeps);
            if (keep) errorCurve = c.error;
        }
        const double Ld = static_cast<double>(L);
        chain.size.push_back(Ld);
        chain.depth.push_back(Ld);
        chain.contacts.push_back(Ld - 1.0);
        chain.sweeps.push_back(mean(runs));
        chain.sweepsSd.push_back(stddev(runs));
        chain.perSeed.push_back(runs);
        theory.push_back(Ld * Ld * std::log(4.0 / (M_PI * eps)) / (q * M_PI * M_PI));
        say("chain L=" + std::to_string(L) + ": " + std::to_string(mean(runs)) + " sweeps (theory " +
            std::to_string(theory.back()) + ")");
    }
    const double exponent = logSlope(chain.size, chain.sweeps);
    // Prefactor: mean ratio to the single-mode theory over the chains with L >= 40
    // (shorter ones still feel the discreteness: 1 − cos(π/L) ≠ π²/2L²).
    double ratioSum = 0.0;
    int ratioN = 0;
    for (std::size_t i = 0; i < chain.size.size(); ++i)
        if (chain.size[i] >= 40) {
            ratioSum += chain.sweeps[i] / theory[i];
            ++ratioN;
        }
    const double prefactorRatio = ratioN > 0 ? ratioSum / ratioN : std::nan("");

    // --- packings (eq. 48 in 2D and 3D) ---------------------------------------
    // A load step that has not settled within experiment.max_sweeps (a
    // packing the piston left short of jamming: the load then accelerates a
    // loose region and the base force creeps) is left out and reported.
    std::vector<double> unsettled2, unsettled3;
    auto packings = [&](int dim, const std::vector<long>& sizes, SeriesResult& res) {
        for (long n : sizes) {
            std::vector<int> runs;
            double depth = 0.0, contacts = 0.0;
            for (int k = 0; k < seeds; ++k) {
                loadstep::PackingSpec spec;
                spec.dimension = dim;
                spec.grains = static_cast<std::size_t>(n);
                spec.seed = seed0 + static_cast<std::uint64_t>(k);
                spec.mu = mu;
                spec.pressure = pressure;
                spec.prepIterations = cd.iterations;
                const loadstep::LoadedSystem sys = loadstep::loadedPacking(spec);
                const loadstep::Convergence c = loadstep::sweepsToEpsilon(sys, cd, spec.seed, eps, maxSweeps, false);
                say("  seed " + std::to_string(spec.seed) + ": " + std::to_string(c.sweeps) + " sweeps" +
                    (c.reached ? "" : " (NOT settled)") + ", base/load " + std::to_string(c.scale / sys.load) +
                    ", prep kinetic " + std::to_string(sys.prepKinetic) + ", piston speed " +
                    std::to_string(sys.pistonSpeed) + ", grain speed " + std::to_string(sys.grainSpeed) + " after " +
                    std::to_string(sys.quenchSteps) + " steps from rest, contacts " + std::to_string(sys.contacts().size()));
                if (!c.reached) {
                    (dim == 2 ? unsettled2 : unsettled3).push_back(static_cast<double>(n));
                    continue;
                }
                runs.push_back(c.sweeps);
                depth += sys.depth / sys.meanDiameter;
                contacts += static_cast<double>(sys.contacts().size());
            }
            if (runs.empty()) continue;
            const double nr = static_cast<double>(runs.size());
            res.size.push_back(static_cast<double>(n));
            res.depth.push_back(depth / nr);
            res.contacts.push_back(contacts / nr);
            res.sweeps.push_back(mean(runs));
            res.sweepsSd.push_back(stddev(runs));
            res.perSeed.push_back(runs);
            say(std::to_string(dim) + "D n=" + std::to_string(n) + ": " + std::to_string(mean(runs)) + " sweeps, depth " +
                std::to_string(depth / nr) + " mean diameters");
        }
    };
    SeriesResult p2, p3;
    packings(2, sizes2, p2);
    packings(3, sizes3, p3);
    auto costOf = [](const SeriesResult& r) {
        std::vector<double> c;
        for (std::size_t i = 0; i < r.sweeps.size(); ++i) c.push_back(r.sweeps[i] * r.contacts[i]);
        return c;
    };
    const double exp2 = logSlope(p2.size, p2.sweeps), exp3 = logSlope(p3.size, p3.sweeps);
    const double cost2 = logSlope(p2.size, costOf(p2)), cost3 = logSlope(p3.size, costOf(p3));
    const double depthExp2 = logSlope(p2.depth, p2.sweeps), depthExp3 = logSlope(p3.depth, p3.sweeps);
    // Sweeps = a + b (depth/d̄)²: a diffusive part and a size-independent one
    // (local soft modes), least squares. The chain has a = 0 and
    // b = ln(4/(π ε))/(q π²).
    auto offsetFit = [](const SeriesResult& r) {
        std::array<double, 2> ab{std::nan(""), std::nan("")};
        const std::size_t n = r.sweeps.size();
        if (n < 2) return ab;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double x = r.depth[i] * r.depth[i];
            sx += x;
            sy += r.sweeps[i];
            sxx += x * x;
            sxy += x * r.sweeps[i];
        }
        const double dn = static_cast<double>(n);
        ab[1] = (dn * sxy - sx * sy) / (dn * sxx - sx * sx);
        ab[0] = (sy - ab[1] * sx) / dn;
        return ab;
    };
    const auto fit2 = offsetFit(p2), fit3 = offsetFit(p3);

    nlohmann::json params = {{"epsilon", eps},
                             {"order", loadstep::orderName(cd.order)},
                             {"seeds", seeds},
                             {"seed", seed0},
                             {"force", 1.0},
                             {"d", 1.0},
                             {"mass", 1.0},
                             {"dt", 1.0},
                             {"mu_packings", mu},
                             {"pressure", pressure},
                             {"prep_iterations", cd.iterations},
                             {"error_measure_chain", "max over contacts |R - F| / F"},
                             {"error_measure_packings", "|F_base - F*_base| / F*_base (base force against its limit)"}};
    nlohmann::json results = {{"lengths", chain.size},
                              {"sweeps", chain.sweeps},
                              {"sweeps_sd", chain.sweepsSd},
                              {"sweeps_per_seed", chain.perSeed},
                              {"sweeps_theory", theory},
                              {"q", q},
                              {"prefactor_ratio", prefactorRatio},
                              {"exponent", exponent},
                              {"epsilon", eps},
                              {"sizes_2d", p2.size},
                              {"sweeps_2d", p2.sweeps},
                              {"sweeps_2d_sd", p2.sweepsSd},
                              {"depth_2d", p2.depth},
                              {"contacts_2d", p2.contacts},
                              {"exponent_2d", exp2},
                              {"depth_exponent_2d", depthExp2},
                              {"cost_exponent_2d", cost2},
                              {"sizes_3d", p3.size},
                              {"sweeps_3d", p3.sweeps},
                              {"sweeps_3d_sd", p3.sweepsSd},
                              {"depth_3d", p3.depth},
                              {"contacts_3d", p3.contacts},
                              {"exponent_3d", exp3},
                              {"depth_exponent_3d", depthExp3},
                              {"cost_exponent_3d", cost3},
                              {"offset_2d", fit2[0]},
                              {"slope_depth2_2d", fit2[1]},
                              {"offset_3d", fit3[0]},
                              {"slope_depth2_3d", fit3[1]},
                              {"slope_depth2_chain", std::log(4.0 / (M_PI * eps)) / (q * M_PI * M_PI)},
                              {"sweeps_2d_per_seed", p2.perSeed},
                              {"sweeps_3d_per_seed", p3.perSeed},
                              {"unsettled_2d", unsettled2},
                              {"unsettled_3d", unsettled3}};
    // Eqs. 61-63: with too few sweeps the load reaches only the diffusion
    // length l_diff = sqrt(4 q N) d into the chain and the rest is soft; the
    // transition to the rigid chain lies at l_diff ≈ L. On the largest
    // chain's error curve: l_diff/L where the largest contact error falls
    // below 0.5, 0.1 and 0.01 of the load.
    nlohmann::json transition = nlohmann::json::object();
    double lDiffAt01 = kNaN;
    for (const double level : {0.5, 0.1, 0.01}) {
        for (std::size_t i = 0; i < errorCurve.size(); ++i)
            if (errorCurve[i] < level) {
                const double ratio =
                    std::sqrt(4.0 * q * static_cast<double>(i + 1)) / static_cast<double>(lengths.back());
                transition[level == 0.5 ? "0.5" : level == 0.1 ? "0.1" : "0.01"] = ratio;
                if (level == 0.1) lDiffAt01 = ratio;
                break;
            }
    }
    results["l_diff_over_length_at_error"] = transition;
    nlohmann::json checks = nlohmann::json::array();
    // The acceptance: 2 ± 0.1.
    checks.push_back(makeCheck("chain exponent (eq. 48)", exponent, 2.0, 0.1, false));
    // Single-mode diffusion theory with q of the order (eq. 46): the continuum
    // limit, exact up to O(1/L²) and the random sweep's fluctuations of q.
    checks.push_back(makeCheck("chain sweeps / L^2 ln(4/(pi eps))/(q pi^2), L >= 40", prefactorRatio, 1.0, 0.1));
    // 2D and 3D: the paper gives only the trends n and n^(2/3) (L² with
    // L ∝ n^(1/d)). Tolerance 0.15: over a factor 16 in n the slope of a
    // log-log fit carries the boundary layers of the packing (walls, the
    // piston, rattlers) and the logarithmic growth of the initial error with
    // depth, which at these sizes shift it by ~0.1 in the chain-like
    // estimate; a different law (sweeps ∝ depth instead of depth²) would be
    // 0.5 resp. 1/3 away.
    if (!errorCurve.empty())
        checks.push_back(makeCheck("chain: l_diff / L where the error falls below 0.1 (eqs. 61-63: the transition "
                                   "lies at the system size)",
                                   lDiffAt01, 1.0, 0.5, false));
    if (p2.size.size() >= 2) checks.push_back(makeCheck("2D exponent vs n (eq. 48: N_I ~ (L/d)^2 ~ n)", exp2, 1.0, 0.15, false));
    if (p3.size.size() >= 2) checks.push_back(makeCheck("3D exponent vs n (eq. 48: N_I ~ (L/d)^2 ~ n^(2/3))", exp3, 2.0 / 3.0, 0.15,
                                                      false));

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "force_relaxation.csv", "system,size,depth,contacts,sweeps,sweeps_sd,sweeps_theory", 10);
        for (std::size_t i = 0; i < chain.size.size(); ++i)
            out << "chain," << chain.size[i] << ',' << chain.depth[i] << ',' << chain.contacts[i] << ','
                << chain.sweeps[i] << ',' << chain.sweepsSd[i] << ',' << theory[i] << '\n';
        for (std::size_t i = 0; i < p2.size.size(); ++i)
            out << "2d," << p2.size[i] << ',' << p2.depth[i] << ',' << p2.contacts[i] << ',' << p2.sweeps[i] << ','
                << p2.sweepsSd[i] << ",\n";
        for (std::size_t i = 0; i < p3.size.size(); ++i)
            out << "3d," << p3.size[i] << ',' << p3.depth[i] << ',' << p3.contacts[i] << ',' << p3.sweeps[i] << ','
                << p3.sweepsSd[i] << ",\n";
        out.close();
        auto [csvErr, oe] = openCsv(options, "force_relaxation_error.csv", "sweep,error", 10);
        for (std::size_t i = 0; i < errorCurve.size(); ++i) oe << i + 1 << ',' << errorCurve[i] << '\n';
        oe.close();
        runPlotScript("force_relaxation",
                      {csv.string(), csvErr.string(), (options.outDir / "force_relaxation.png").string(),
                       std::to_string(eps), std::to_string(q), std::to_string(lengths.back()),
                       std::to_string(exponent), std::to_string(exp2), std::to_string(exp3)},
                      options.quiet);
    }
    return {{"experiment", "force-relaxation"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
