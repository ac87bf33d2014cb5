/// CD paper §3.4, eqs. 65–68: on large scales a CD chain with N_I iterations
/// per step behaves like an MD chain of linear spring–dashpots with
///     κ = q m N_I / Δt²,   γ = q m N_I / Δt      (eqs. 67–68),
/// Δt the time step of the CD run. The experiment runs the 1D chain of
/// §3.3.1 and the 2D piston packing of §3.3.2 both ways and compares the
/// fitted ω and τ of eq. 64.
///
/// 2D: the paper derives eqs. 67–68 for equal grains of mass m. A CD contact
/// update scales with the contact's normal mass m_eff (eq. 17), which is m/2
/// for two equal grains, so the packing's MD contacts get κ_c = 2 q m_eff N_I/Δt²
/// and γ_c = 2 q m_eff N_I/Δt (md.meff = both), the paper's values for equal
/// grains; tangential springs get a third of these (CD's sticking friction
/// relaxes the same way, with the tangential mass of eq. 18, m_eff/3 for disks). Both runs start from the same prepared packing; the
/// MD run first settles under F (its overlaps differ from CD's), then steps.
#include <cmath>
#include <fstream>
#include <optional>

#include "cd_waves.hpp"
#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

namespace {

std::vector<KeySpec> equivalenceKeys() {
    std::vector<KeySpec> keys = cdwaves::chainKeys();
    keys.push_back({"experiment.iterations_1d", KeyType::Text, "10 40 160",
                    "N_I of the chain runs; the scalar results are for the last one"});
    keys.push_back({"experiment.iterations_2d", KeyType::Integer, "40", "N_I of the 2D packing runs", 1.0, 1e6, {}});
    keys.push_back({"experiment.md_damping_step", KeyType::Real, "0.1",
                    "MD step: gamma dt_MD / m_eff (= 2 q N_I dt_MD/dt); dt_MD = dt/ceil(2 q N_I / this). "
                    "Explicit MD must resolve the dashpot: at N_I=160, dt/2000 (0.13) matches CD to ~1%, dt/200 "
                    "(1.3) is 15% off",
                    0.0, 2.0, {}, true});
    keys.push_back({"experiment.dforce_2d", KeyType::Real, "0.1",
                    "force step dF/F of the 2D comparison (both methods): larger than sound-wave-2d's default, so "
                    "the ring stands well above what is left of the MD settling",
                    0.0, 10.0, {}, true});
    keys.push_back({"experiment.md_tangential_ratio", KeyType::Real, "0.333333333333333333",
                    "2D MD: k_t/k_n and gamma_t/gamma_n. CD's tangential update works with the tangential mass of "
                    "eq. 18, m_eff/3 for disks, hence 1/3",
                    0.0, 10.0, {}});
    keys.push_back({"experiment.md_settle_steps", KeyType::Integer, "1500",
                    "cap on the steps the MD packing settles under F (light piston, to experiment.rest_speed) "
                    "before the force step",
                    1.0, 1e9, {}});
    keys.push_back({"experiment.chain", KeyType::Bool, "true", "run the 1D chain"});
    keys.push_back({"experiment.packing", KeyType::Bool, "true", "run the 2D packing"});
    return keys;
}

int substepsFor(int iterations, double dampingStep) {
    return static_cast<int>(std::ceil(2.0 * qRandomSweep() * iterations / dampingStep));
}

}  // namespace

nlohmann::json cdMdEquivalence(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = equivalenceKeys();
    std::vector<KeySpec> keys = cdwaves::pistonKeys();
    keys.insert(keys.end(), extra.begin(), extra.end());
    Scene piston = cdwaves::loadPistonScene(options, extra);
    const std::vector<int> iters1 = cdwaves::integerList(piston, "experiment.iterations_1d");
    const int ni2 = static_cast<int>(sceneInteger(piston, "experiment.iterations_2d"));
    const double dampingStep = sceneReal(piston, "experiment.md_damping_step");
    const long settleSteps = sceneInteger(piston, "experiment.md_settle_steps");
    const double tangentialRatio = sceneReal(piston, "experiment.md_tangential_ratio");
    const bool doChain = sceneBool(piston, "experiment.chain");
    const bool doPacking = sceneBool(piston, "experiment.packing");
    const double q = qRandomSweep();

    nlohmann::json params = {{"iterations_1d", iters1}, {"iterations_2d", ni2}, {"md_damping_step", dampingStep}, {"q", q},
                             {"md_tangential_ratio", tangentialRatio}};
    nlohmann::json results = nlohmann::json::object();
    nlohmann::json checks = nlohmann::json::array();
    std::vector<cdwaves::ChainRun> cdChains, mdChains;

    if (doChain) {
        std::vector<double> wc, wm, tc, tm, kap, gam, sub, secC, secM, shrinkC, shrinkM, shrinkTheory;
        for (int ni : iters1) {
            Scene cd = cdwaves::loadChainScene(options, keys, ni);
            if (cd.cd.criterion != Criterion::Fixed)
                throw InputError("cd-md-equivalence: key 'cd.criterion': needs 'fixed' (N_I per step)");
            Scene md = cd;
            const double m = md.world.mass[0], dt = md.simulation.dt;
            const double kappa = q * m * ni / (dt * dt), gamma = q * m * ni / dt;  // eqs. 67-68
            // The static shrinkage: the last grain's rest position short of
            // where it would be with every contact just touching (the chain
            // against the wall of body numGrains), and MD's n F/κ for n contacts.
            const World& w0 = cd.world;
            double touching = w0.numBodies() > w0.numGrains ? w0.x[w0.numGrains].x() : 0.0;
            for (std::size_t i = 0; i < w0.numGrains; ++i) touching += 2.0 * w0.radius[i];
            touching -= w0.radius[w0.numGrains - 1];
            double load = 0.0;
            for (const ForceSchedule& f : w0.force) load += std::abs(f.before.x());
            md.simulation.method = Method::MD;
            md.md.normal = NormalLaw::Linear;
            md.md.meff = EffectiveMass::None;  // eq. 65: R = −κ(x_{i+1} − x_i − d) − γ(v_{i+1} − v_i)
            md.md.kn = kappa;
            md.md.gammaN = gamma;
            md.md.tangential = TangentialLaw::None;
            md.md.clipAttractive = true;
            md.md.substeps = substepsFor(ni, dampingStep);
            cdChains.push_back(cdwaves::runChain(std::move(cd), ni));
            mdChains.push_back(cdwaves::runChain(std::move(md), ni));
            const auto& c = cdChains.back();
            const auto& d = mdChains.back();
            wc.push_back(c.fit.omega);
            wm.push_back(d.fit.omega);
            tc.push_back(c.fit.tau);
            tm.push_back(d.fit.tau);
            kap.push_back(kappa);
            gam.push_back(gamma);
            sub.push_back(substepsFor(ni, dampingStep));
            secC.push_back(c.seconds);
            secM.push_back(d.seconds);
            shrinkC.push_back(touching - c.fit.x0);
            shrinkM.push_back(touching - d.fit.x0);
            shrinkTheory.push_back(static_cast<double>(w0.numGrains) * load / kappa);
            const std::string at = " (1D, N_I=" + std::to_string(ni) + ")";
            checks.push_back(makeCheck("omega_md/omega_cd" + at, d.fit.omega, c.fit.omega, 0.05));
            // Each τ fit lies within 5% of eq. 60, so MD and CD within 10%.
            checks.push_back(makeCheck("tau_md/tau_cd" + at, d.fit.tau, c.fit.tau, 0.10));
            checks.push_back(makeCheck("consistency: MD chain's static shrinkage vs n F/kappa" + at, shrinkM.back(),
                                       shrinkTheory.back(), 1e-6));
        }
        results["omega_cd"] = wc.back();
        results["omega_md"] = wm.back();
        results["tau_cd"] = tc.back();
        results["tau_md"] = tm.back();
        results["kappa"] = kap.back();
        results["gamma"] = gam.back();
        results["iterations_1d"] = iters1;
        // §3.4's "global shrinkage" on the chain: CD's is not MD's (departures.md).
        results["static_shrinkage_cd_1d"] = shrinkC;
        results["static_shrinkage_md_1d"] = shrinkM;
        results["static_shrinkage_md_theory_1d"] = shrinkTheory;
        results["omega_cd_1d"] = wc;
        results["omega_md_1d"] = wm;
        results["tau_cd_1d"] = tc;
        results["tau_md_1d"] = tm;
        results["omega_theory_1d"] = nlohmann::json::array();
        results["tau_theory_1d"] = nlohmann::json::array();
        for (const auto& c : cdChains) {
            results["omega_theory_1d"].push_back(c.theory.omega);
            results["tau_theory_1d"].push_back(c.theory.tau);
        }
        results["kappa_1d"] = kap;
        results["gamma_1d"] = gam;
        results["md_substeps_1d"] = sub;
        results["seconds_cd_1d"] = secC;
        results["seconds_md_1d"] = secM;
    }

    std::optional<cdwaves::PreparedPacking> prep;
    cdwaves::PistonRing cdRing, mdRing;
    if (doPacking) {
        const double force = sceneReal(piston, "experiment.force");
        cdwaves::RingOptions ro = cdwaves::ringOptions(piston, force);
        ro.dForce = sceneReal(piston, "experiment.dforce_2d") * force;
        prep.emplace(cdwaves::preparePacking(std::move(piston)));
        const double dt = prep->sim.scene().simulation.dt;
        cdRing = cdwaves::ringCd(*prep, ni2, ro);
        ro.settleMaxSteps = settleSteps;
        const int sub = substepsFor(ni2, dampingStep);
        mdRing = cdwaves::ringMd(*prep, ni2, sub, ro, tangentialRatio);
        const double m = 1.0;  // the largest grain (paper units)
        params["packing"] = cdwaves::packingJson(*prep);
        params["delta_force"] = ro.dForce;  // ΔF (absolute)
        results["particles_2d"] = prep->sim.world().numGrains;
        results["omega_cd_2d"] = cdRing.fit.omega;
        results["omega_md_2d"] = mdRing.fit.omega;
        results["tau_cd_2d"] = cdRing.fit.tau;
        results["tau_md_2d"] = mdRing.fit.tau;
        results["kappa_2d"] = q * m * ni2 / (dt * dt);  // two largest grains: m_eff = m/2
        results["gamma_2d"] = q * m * ni2 / dt;
        results["kappa_2d_rule"] = "2 q m_eff N_I / dt^2 per contact (md.meff=both)";
        results["r2_cd_2d"] = cdRing.fit.r2;
        results["r2_md_2d"] = mdRing.fit.r2;
        results["md_substeps_2d"] = sub;
        results["md_settle_steps_2d"] = mdRing.settleSteps;
        results["md_settle_speed_2d"] = mdRing.settleSpeed;
        results["md_settle_drift_2d"] = mdRing.settleDrift;
        results["amplitude_cd_2d"] = cdRing.fit.amplitude;
        results["amplitude_md_2d"] = mdRing.fit.amplitude;
        results["static_shift_cd_2d"] = cdRing.fit.x0 - cdRing.y0;
        results["static_shift_md_2d"] = mdRing.fit.x0 - mdRing.y0;
        results["seconds_cd_2d"] = cdRing.seconds;
        results["seconds_md_2d"] = mdRing.seconds;
        checks.push_back(makeCheck("omega_md/omega_cd (2D, N_I=" + std::to_string(ni2) + ")", mdRing.fit.omega,
                                   cdRing.fit.omega, 0.05));
        checks.push_back(makeCheck("MD packing at rest before the step (largest speed)", mdRing.settleSpeed, 0.0,
                                   sceneReal(prep->sim.scene(), "experiment.rest_speed"), false));
        // The 2D mapping is our generalisation (m → 2 m_eff); the same 10% as 1D.
        checks.push_back(makeCheck("tau_md/tau_cd (2D, N_I=" + std::to_string(ni2) + ")", mdRing.fit.tau,
                                   cdRing.fit.tau, 0.10));
    }

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "cd_md_equivalence.csv", "run,time,y,y_fit,in_fit");
        for (std::size_t k = 0; k < cdChains.size(); ++k)
            for (const auto* r : {&cdChains[k], &mdChains[k]}) {
                const std::string label = std::string(r->md ? "md" : "cd") + "_1d_" + std::to_string(r->iterations);
                for (std::size_t i = 0; i < r->t.size(); ++i) {
                    const bool in = r->t[i] >= r->fitStart && r->t[i] <= r->fitEnd;
                    out << label << ',' << r->t[i] << ',' << r->x[i] << ','
                        << (r->t[i] >= r->tSettled ? r->fit(r->t[i]) : std::nan("")) << ',' << (in ? 1 : 0) << '\n';
                }
            }
        if (doPacking) {
            cdwaves::writeRingCsv(out, "cd_2d_" + std::to_string(ni2), cdRing);
            cdwaves::writeRingCsv(out, "md_2d_" + std::to_string(ni2), mdRing);
        }
        out.close();
        const auto summary = options.outDir / "cd_md_equivalence_results.json";
        writeFileAtomically(summary, results.dump(1) + '\n');
        runPlotScript("cd_md_equivalence",
                      {csv.string(), (options.outDir / "cd_md_equivalence.png").string(), summary.string()},
                      options.quiet);
    }
    return {{"experiment", "cd-md-equivalence"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
