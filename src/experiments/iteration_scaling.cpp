/// CD paper §3.3: ω ∝ N_I^½ and τ ∝ N_I^−1, for the 1D chain (against eqs.
/// 57–60) and for the 2D piston packing (the claim of §3.3.2).
///
/// The chain runs once per N_I from the same start. The 2D packing is
/// prepared once (seeded, at rest under F) and every N_I rings a copy of the
/// same prepared state after the same force step F → F + ΔF.
#include <algorithm>
#include <cmath>
#include <optional>

#include "cd_waves.hpp"
#include "chain_theory.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

namespace {

/// The keys beyond the piston's own.
std::vector<KeySpec> scalingKeys() {
    std::vector<KeySpec> keys = cdwaves::chainKeys();
    keys.push_back({"experiment.iterations", KeyType::Text, "10 20 40 80 160", "the N_I values (blank separated)"});
    keys.push_back({"experiment.chain", KeyType::Bool, "true", "run the 1D chain"});
    keys.push_back({"experiment.packing", KeyType::Bool, "true", "run the 2D packing"});
    keys.push_back({"experiment.stiffening", KeyType::Text, "1 0.5 0.25 0.125",
                    "§3.4: the chain with N_I and dt both scaled by these factors from the largest N_I and the "
                    "chain's dt (N_I/dt fixed), which stiffens it as 1/dt and keeps its damping (blank: skip)"});
    keys.push_back({"experiment.fluctuating", KeyType::Text, "global:0.001 local:0.01 local:0.001",
                    "§3.4: chain runs under a criterion other than a fixed N_I, as CRITERION:EPSILON (global, eq. 36; "
                    "local, eq. 35 with cd.delta), their N_I per step recorded and eqs. 58, 60 given at the mean "
                    "N_I (blank: skip)"});
    return keys;
}

/// Slope of log y against log x over the entries with x >= xMin.
double slopeFrom(const std::vector<int>& x, const std::vector<double>& y, int xMin) {
    std::vector<double> xs, ys;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i] >= xMin) {
            xs.push_back(x[i]);
            ys.push_back(y[i]);
        }
    return cdwaves::logLogSlope(xs, ys);
}

}  // namespace

nlohmann::json iterationScaling(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = scalingKeys();
    std::vector<KeySpec> keys = cdwaves::pistonKeys();
    keys.insert(keys.end(), extra.begin(), extra.end());
    Scene piston = cdwaves::loadPistonScene(options, extra);
    const std::vector<int> iters = cdwaves::integerList(piston, "experiment.iterations");
    const bool doChain = sceneBool(piston, "experiment.chain");
    const bool doPacking = sceneBool(piston, "experiment.packing");
    std::vector<std::pair<Criterion, double>> criteria;
    for (const std::string& w : listWords(sceneText(piston, "experiment.fluctuating"))) {
        const std::size_t colon = w.find(':');
        const std::string name = w.substr(0, colon);
        const std::optional<double> e = colon == std::string::npos ? std::nullopt : parseNumber(w.substr(colon + 1));
        if ((name != "global" && name != "local") || !e || !(*e > 0.0 && *e < 1.0))
            throw InputError("key 'experiment.fluctuating': '" + w +
                             "' is not CRITERION:EPSILON with global or local and an epsilon in (0, 1)");
        criteria.emplace_back(name == "global" ? Criterion::Global : Criterion::Local, *e);
    }
    std::vector<double> factors;
    for (const std::string& w : listWords(sceneText(piston, "experiment.stiffening"))) {
        const std::optional<double> f = parseNumber(w);
        if (!f || !(*f > 0.0 && *f <= 1.0))
            throw InputError("key 'experiment.stiffening': '" + w + "' is not a factor in (0, 1]");
        factors.push_back(*f);
    }
    std::vector<double> niD(iters.begin(), iters.end());

    nlohmann::json params = {{"iterations", iters}};
    nlohmann::json results = {{"iterations", iters}};
    nlohmann::json checks = nlohmann::json::array();
    std::vector<cdwaves::ChainRun> chains;
    std::vector<cdwaves::PistonRing> rings;

    if (doChain) {
        std::vector<double> w, tau, wTh, tauTh, r2;
        for (int ni : iters) {
            Scene scene = cdwaves::loadChainScene(options, keys, ni);
            if (scene.cd.criterion != Criterion::Fixed)
                throw InputError("iteration-scaling: key 'cd.criterion': the theory needs 'fixed' (N_I per step)");
            chains.push_back(cdwaves::runChain(std::move(scene), ni));
            const cdwaves::ChainRun& r = chains.back();
            w.push_back(r.fit.omega);
            tau.push_back(r.fit.tau);
            wTh.push_back(r.theory.omega);
            tauTh.push_back(r.theory.tau);
            r2.push_back(r.fit.r2);
            checks.push_back(makeCheck("1D omega/omega_theory at N_I=" + std::to_string(ni), r.fit.omega, r.theory.omega, 0.02));
            checks.push_back(makeCheck("1D tau/tau_theory at N_I=" + std::to_string(ni), r.fit.tau, r.theory.tau, 0.05));
        }
        results["omega_1d"] = w;
        results["tau_1d"] = tau;
        results["omega_theory_1d"] = wTh;
        results["tau_theory_1d"] = tauTh;
        results["r2_1d"] = r2;
        results["omega_exponent_1d"] = cdwaves::logLogSlope(niD, w);
        results["tau_exponent_1d"] = cdwaves::logLogSlope(niD, tau);
        // The exponents of eqs. 58 and 60 themselves: not exactly ½ and −1 for
        // a finite chain, since eq. 58 has the damping term D²k²/4.
        results["omega_exponent_theory_1d"] = cdwaves::logLogSlope(niD, wTh);
        results["tau_exponent_theory_1d"] = cdwaves::logLogSlope(niD, tauTh);
        params["chain_particles"] = chains.front().theory.k > 0 ? 2.0 * M_PI / chains.front().theory.k / 4.0 : 0.0;
        if (iters.size() >= 2) {
            checks.push_back(makeCheck("1D omega exponent (paper: 1/2)", results["omega_exponent_1d"], 0.5, 0.05, false));
            checks.push_back(makeCheck("1D tau exponent (paper: -1)", results["tau_exponent_1d"], -1.0, 0.05, false));
        }
        // §3.4: N_I and Δt reduced together (N_I/Δt fixed) raise the
        // stiffness κ = q m N_I/Δt² as 1/Δt (ω as Δt^-1/2) and keep the
        // damping γ = q m N_I/Δt (τ unchanged), at the same updates per time.
        if (!factors.empty()) {
            const int ni0 = *std::max_element(iters.begin(), iters.end());
            const double dt0 = cdwaves::loadChainScene(options, keys, ni0).simulation.dt;
            std::vector<double> dts, sw, stau, swTh, stauTh;
            std::vector<int> sni;
            for (double f : factors) {
                const int ni = static_cast<int>(std::lround(ni0 * f));
                Scene scene = cdwaves::loadChainScene(options, keys, ni, dt0 * f);
                const cdwaves::ChainRun r = cdwaves::runChain(std::move(scene), ni);
                const std::string at = " at N_I=" + std::to_string(ni) + ", dt=" + sceneValueText(dt0 * f);
                checks.push_back(makeCheck("stiffening: 1D omega/omega_theory" + at, r.fit.omega, r.theory.omega, 0.02));
                checks.push_back(makeCheck("stiffening: 1D tau/tau_theory" + at, r.fit.tau, r.theory.tau, 0.05));
                dts.push_back(dt0 * f);
                sni.push_back(ni);
                sw.push_back(r.fit.omega);
                stau.push_back(r.fit.tau);
                swTh.push_back(r.theory.omega);
                stauTh.push_back(r.theory.tau);
            }
            results["stiffening_dt"] = dts;
            results["stiffening_iterations"] = sni;
            results["stiffening_omega"] = sw;
            results["stiffening_tau"] = stau;
            results["stiffening_omega_theory"] = swTh;
            results["stiffening_tau_theory"] = stauTh;
            if (dts.size() >= 2) {
                const std::size_t lo = static_cast<std::size_t>(std::min_element(dts.begin(), dts.end()) - dts.begin());
                const std::size_t hi = static_cast<std::size_t>(std::max_element(dts.begin(), dts.end()) - dts.begin());
                checks.push_back(makeCheck("stiffening (§3.4): omega ratio, smallest / largest dt, vs sqrt of the dt "
                                           "ratio (stiffness as 1/dt)",
                                           sw[lo] / sw[hi], std::sqrt(dts[hi] / dts[lo]), 0.03));
                checks.push_back(makeCheck("stiffening (§3.4): tau ratio, smallest / largest dt (damping unchanged)",
                                           stau[lo] / stau[hi], 1.0, 0.05));
            }
        }
    }

    // §3.4: "applications of other convergence criteria typically involve
    // fluctuating N_I ... qualitatively the results of constant N_I remain
    // relevant": the chain under each criterion of experiment.fluctuating,
    // its N_I per step recorded, fitted as at a fixed N_I, with eqs. 58 and
    // 60 at the mean N_I of the fit window (the window sized from that mean).
    if (doChain && !criteria.empty()) {
        std::vector<double> meanNi, minNi, maxNi, w, tau, wTh, tauTh, r2, eps;
        std::vector<std::string> names;
        for (const auto& [criterion, epsilon] : criteria) {
            int nominal = 40;
            cdwaves::ChainRun r;
            double mean = 0.0, d = 1.0, dt = 1.0, length = 1.0;
            int lo = 0, hi = 0;
            for (int pass = 0; pass < 3; ++pass) {  // until the window's mean N_I is the one it was sized for
                Scene scene = cdwaves::loadChainScene(options, keys, nominal);
                scene.cd.criterion = criterion;
                scene.cd.epsilon = epsilon;
                d = 2.0 * scene.world.radius[0];
                dt = scene.simulation.dt;
                length = static_cast<double>(scene.world.numGrains) * d;
                r = cdwaves::runChain(std::move(scene), nominal);
                double sum = 0.0;
                long count = 0;
                lo = 1 << 30;
                hi = 0;
                for (std::size_t i = 1; i < r.t.size(); ++i)
                    if (r.t[i] >= r.fitStart && r.t[i] <= r.fitEnd) {
                        const int it = r.stepIterations[i - 1];
                        sum += it;
                        ++count;
                        lo = std::min(lo, it);
                        hi = std::max(hi, it);
                    }
                mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
                const int next = std::max(1, static_cast<int>(std::lround(mean)));
                if (std::abs(next - nominal) <= std::max(1, nominal / 20)) break;
                nominal = next;
            }
            // Eqs. 58 and 60 at the mean N_I (q N_I with N_I not whole). No
            // check: the paper's claim is qualitative ("more complex in
            // detail"); docs/experiments-cd.md gives what is measured.
            const ChainTheory th = chainTheory(qRandomSweep() * mean, 1, d, dt, length);
            wTh.push_back(th.omega);
            tauTh.push_back(th.tau);
            names.push_back(criterion == Criterion::Global ? "global" : "local");
            eps.push_back(epsilon);
            meanNi.push_back(mean);
            minNi.push_back(lo);
            maxNi.push_back(hi);
            w.push_back(r.fit.omega);
            tau.push_back(r.fit.tau);
            r2.push_back(r.fit.r2);
        }
        results["fluctuating_criterion"] = names;
        results["fluctuating_epsilon"] = eps;
        results["fluctuating_mean_iterations"] = meanNi;
        results["fluctuating_min_iterations"] = minNi;
        results["fluctuating_max_iterations"] = maxNi;
        results["fluctuating_omega"] = w;
        results["fluctuating_tau"] = tau;
        results["fluctuating_r2"] = r2;
        results["fluctuating_omega_theory_at_mean"] = wTh;
        results["fluctuating_tau_theory_at_mean"] = tauTh;
    }

    std::optional<cdwaves::PreparedPacking> prep;
    if (doPacking) {
        const cdwaves::RingOptions ro = cdwaves::ringOptions(piston, sceneReal(piston, "experiment.force"));
        prep.emplace(cdwaves::preparePacking(std::move(piston)));
        params["packing"] = cdwaves::packingJson(*prep);
        params["delta_force"] = ro.dForce;  // ΔF (absolute)
        params["skip_extrema"] = ro.skipExtrema;
        params["fit_taus"] = ro.fitTaus;
        std::vector<double> w, tau, r2, kv, wt;
        for (int ni : iters) {
            rings.push_back(cdwaves::ringCd(*prep, ni, ro));
            const DampedSine& f = rings.back().fit;
            w.push_back(f.omega);
            tau.push_back(f.tau);
            r2.push_back(f.r2);
            wt.push_back(f.omega * f.tau);
            kv.push_back(f.tau * (f.omega * f.omega + 1.0 / (f.tau * f.tau)) * prep->sim.scene().simulation.dt / 2.0);
        }
        results["omega_2d"] = w;
        results["tau_2d"] = tau;
        results["r2_2d"] = r2;
        results["omega_tau_2d"] = wt;
        // τ ω₀² Δt/2 (ω₀² = ω² + τ⁻²): 1 for any mode of a network of
        // Kelvin–Voigt contacts with γ/κ = Δt (eqs. 67–68).
        results["kelvin_voigt_ratio_2d"] = kv;
        results["omega_exponent_2d"] = cdwaves::logLogSlope(niD, w);
        results["tau_exponent_2d"] = cdwaves::logLogSlope(niD, tau);
        results["omega_exponent_2d_from_40"] = slopeFrom(iters, w, 40);
        results["tau_exponent_2d_from_40"] = slopeFrom(iters, tau, 40);
        if (iters.size() >= 2) {
            checks.push_back(makeCheck("2D omega exponent (paper: 1/2)", results["omega_exponent_2d"], 0.5, 0.1, false));
            // The paper states τ ~ 1/N_I for the packing without numbers; the
            // same ±0.1 as for ω. Measured, not tuned: see docs/experiments-cd.md.
            // It holds in the tall box at a small force step (the defaults);
            // a square box with dF = 0.1 F gives -0.656 (departures.md).
            checks.push_back(makeCheck("2D tau exponent (paper: -1; holds in the tall box at small dF, not in a "
                                       "square box at dF = 0.1 F: departures.md)",
                                       results["tau_exponent_2d"], -1.0, 0.1, false));
        }
        for (std::size_t i = 0; i < iters.size(); ++i)
            checks.push_back(makeCheck("2D r2 at N_I=" + std::to_string(iters[i]), r2[i], 1.0, 0.02, false));
    }

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "iteration_scaling.csv", "system,iterations,omega,tau,omega_theory,tau_theory,r2");
        for (std::size_t i = 0; i < chains.size(); ++i)
            out << "chain," << iters[i] << ',' << chains[i].fit.omega << ',' << chains[i].fit.tau << ','
                << chains[i].theory.omega << ',' << chains[i].theory.tau << ',' << chains[i].fit.r2 << '\n';
        for (std::size_t i = 0; i < rings.size(); ++i)
            out << "packing," << iters[i] << ',' << rings[i].fit.omega << ',' << rings[i].fit.tau << ",,,"
                << rings[i].fit.r2 << '\n';
        out.close();
        auto [traces, tr] = openCsv(options, "iteration_scaling_traces.csv", "run,time,y,y_fit,in_fit");
        for (const auto& r : rings) cdwaves::writeRingCsv(tr, "cd" + std::to_string(r.iterations), r);
        tr.close();
        runPlotScript("iteration_scaling",
                      {csv.string(), traces.string(), (options.outDir / "iteration_scaling.png").string()},
                      options.quiet);
    }
    return {{"experiment", "iteration-scaling"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
