/// CD paper §3.3.1, Fig. 7: the artificial sound wave of a rigid chain.
///
/// A chain of n grains (diameter d, mass m) starts one diameter away from a
/// fixed wall; a constant force F on the last grain pushes it against the
/// wall. With a fixed number N_I of random-sweep iterations the forces relax
/// diffusively (eq. 42) and the chain behaves like an elastic, damped medium:
/// after the impact only the lowest mode λ = 4L survives (fixed wall, free
/// end), with ω and τ from eqs. 57–60 and q = (4√e − 5)/2 (eq. 46).
#include <cmath>

#include "cd_waves.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"

namespace moreau {

nlohmann::json soundWave1d(const ExperimentOptions& options) {
    Scene scene = loadBuiltinScene("chain_1d.ini", setsWithSeed(options), cdwaves::chainKeys());
    if (scene.cd.criterion != Criterion::Fixed)
        throw InputError("sound-wave-1d: key 'cd.criterion': the theory of eqs. 57-60 needs 'fixed' (N_I per step)");
    if (scene.simulation.method != Method::CD)
        throw InputError("sound-wave-1d: key 'simulation.method': must be 'cd' (cd-md-equivalence runs the MD chain)");
    const int NI = scene.cd.iterations;
    const std::string order = scene.values.at("cd.order");
    const std::uint64_t seed = scene.simulation.seed;
    const double dt = scene.simulation.dt;
    const double mass = scene.world.mass[0];
    const double d = 2.0 * scene.world.radius[0];
    const std::size_t n = scene.world.numGrains;
    const double force = scene.world.appliedForce(static_cast<BodyId>(n - 1), 0.0).norm();
    const cdwaves::ChainRun run = cdwaves::runChain(std::move(scene), NI);
    const ChainTheory& th = run.theory;
    const DampedSine& fit = run.fit;

    nlohmann::json params = {{"particles", n}, {"iterations", NI}, {"dt", dt}, {"d", d},
                             {"mass", mass}, {"force", force},
                             {"order", order}, {"seed", seed},
                             {"fit_start", run.fitStart}, {"fit_end", run.fitEnd}};
    nlohmann::json results = {{"omega_fit", fit.omega}, {"tau_fit", fit.tau}, {"omega_theory", th.omega},
                              {"tau_theory", th.tau}, {"q", th.q}, {"r2", fit.r2},
                              {"sound_speed_theory", th.c}, {"diffusion_constant_theory", th.D},
                              {"t_impact", run.tImpact}, {"t_settled", run.tSettled}, {"fit_points", run.fitPoints},
                              {"fit_converged", fit.converged}, {"x0_fit", fit.x0}, {"amplitude_fit", fit.amplitude},
                              {"phase_fit", fit.phase}, {"seconds", run.seconds}};
    nlohmann::json checks = nlohmann::json::array();
    checks.push_back(makeCheck("omega_fit/omega_theory", fit.omega, th.omega, 0.02));
    checks.push_back(makeCheck("tau_fit/tau_theory", fit.tau, th.tau, 0.05));
    checks.push_back(makeCheck("r2", fit.r2, 1.0, 0.01, false));

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "sound_wave_1d.csv", "time,x_last,wall_force,in_fit,x_fit,x_theory");
        // Fig. 7's curve: eq. 64 with ω, τ from theory and x0, A, φ fitted in the window.
        std::vector<double> tf, xf;
        for (std::size_t i = 0; i < run.t.size(); ++i)
            if (run.t[i] >= run.fitStart && run.t[i] <= run.fitEnd) {
                tf.push_back(run.t[i]);
                xf.push_back(run.x[i]);
            }
        const DampedSine theoryCurve = cdwaves::fitFixedRates(tf, xf, th.omega, th.tau);
        for (std::size_t i = 0; i < run.t.size(); ++i) {
            const bool in = run.t[i] >= run.fitStart && run.t[i] <= run.fitEnd;
            const bool after = run.t[i] >= run.tSettled;
            out << run.t[i] << ',' << run.x[i] << ',' << run.wallForce[i] << ',' << (in ? 1 : 0) << ','
                << (after ? fit(run.t[i]) : std::nan("")) << ',' << (after ? theoryCurve(run.t[i]) : std::nan(""))
                << '\n';
        }
        out.close();
        runPlotScript("sound_wave_1d", {csv.string(), (options.outDir / "sound_wave_1d.png").string(),
                                        std::to_string(th.omega), std::to_string(th.tau), std::to_string(fit.omega),
                                        std::to_string(fit.tau), std::to_string(NI)},
                      options.quiet);
    }
    return {{"experiment", "sound-wave-1d"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
