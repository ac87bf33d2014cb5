/// CD paper §3.3.1, Fig. 7: the artificial sound wave of a rigid chain.
///
/// A chain of n grains (diameter d, mass m) starts one diameter away from a
/// fixed wall; a constant force F on the last grain pushes it against the
/// wall. With a fixed number N_I of random-sweep iterations the forces relax
/// diffusively (eq. 42) and the chain behaves like an elastic, damped medium:
/// after the impact only the lowest mode λ = 4L survives (fixed wall, free
/// end), with ω and τ from eqs. 57–60 and q = (4√e − 5)/2 (eq. 46).
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>

#include "chain_theory.hpp"
#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/experiments/simulation.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

nlohmann::json soundWave1d(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"experiment.fit_delay", KeyType::Real, "-1",
         "time from the moment the chain settles against the wall (its last lift-off) to the start of the fit; "
         "-1: 2 tau_theory. Until then the oscillation is not small against the static compression F L/kappa "
         "and the unilateral wall contact makes it nonlinear: starting at tau_theory/3 biased tau by 5-15%, at "
         "tau_theory by 1-8% (N_I=20-160), at 2 tau_theory it stays within 2%",
         -1.0, std::numeric_limits<double>::infinity(), {}},
        {"experiment.fit_length", KeyType::Real, "-1", "length of the fit window; -1: 3 tau_theory", -1.0,
         std::numeric_limits<double>::infinity(), {}},
    };
    std::vector<std::string> sets = options.sets;
    if (options.seed) sets.push_back("simulation.seed=" + std::to_string(*options.seed));
    Scene scene = loadBuiltinScene("chain_1d.ini", sets, extra);
    const World& w0 = scene.world;
    if (w0.dimension != 1 || w0.numGrains < 2)
        throw InputError("sound-wave-1d: needs simulation.dimension=1 and chain.count >= 2");
    if (scene.cd.criterion != Criterion::Fixed)
        throw InputError("sound-wave-1d: key 'cd.criterion': the theory of eqs. 57-60 needs 'fixed' (N_I per step)");

    const std::size_t n = w0.numGrains;
    const auto last = static_cast<BodyId>(n - 1);
    const double d = 2.0 * w0.radius[0];
    const double dt = scene.simulation.dt;
    const double L = static_cast<double>(n) * d;
    const int NI = scene.cd.iterations;
    const ChainTheory th = chainTheory(NI, d, dt, L);

    const double fitDelayKey = sceneReal(scene, "experiment.fit_delay");
    const double fitLengthKey = sceneReal(scene, "experiment.fit_length");
    const double fitDelay = fitDelayKey >= 0 ? fitDelayKey : 2.0 * th.tau;
    const double fitLength = fitLengthKey > 0 ? fitLengthKey : 3.0 * th.tau;

    Simulation sim(std::move(scene));
    std::vector<double> t, x, wallForce;
    t.push_back(sim.world().time);
    x.push_back(sim.world().x[static_cast<std::size_t>(last)].x());
    wallForce.push_back(0.0);
    // The chain may bounce off the wall a few times before it stays pressed
    // against it (the paper's "transient period"); the fit window opens
    // fit_delay after the last moment without wall contact.
    double tImpact = -1.0, tSettled = -1.0;
    const long maxSteps = 2000000;
    for (long s = 0; s < maxSteps; ++s) {
        sim.step();
        double fw = 0.0;
        for (const Contact& c : sim.contacts())
            if (sim.world().isWall(c.b)) fw += c.history.reaction.norm();
        const double now = sim.world().time;
        t.push_back(now);
        x.push_back(sim.world().x[static_cast<std::size_t>(last)].x());
        wallForce.push_back(fw);
        if (fw > 0.0) {
            if (tImpact < 0.0) tImpact = now;
            if (tSettled < 0.0) tSettled = now;
        } else if (tImpact >= 0.0) {
            tSettled = -1.0;  // lifted off again
        }
        if (tSettled >= 0.0 && now >= tSettled + fitDelay + fitLength) break;
    }
    if (tImpact < 0.0) throw InputError("sound-wave-1d: the chain never reached the wall; check force.* and the wall");
    if (tSettled < 0.0) throw InputError("sound-wave-1d: the chain never settled against the wall");

    std::vector<double> tf, xf;
    for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] >= tSettled + fitDelay && t[i] <= tSettled + fitDelay + fitLength) {
            tf.push_back(t[i]);
            xf.push_back(x[i]);
        }
    if (tf.size() < 8) throw InputError("sound-wave-1d: fit window holds fewer than 8 samples; enlarge experiment.fit_length");
    DampedSine guess = guessDampedSine(tf, xf);
    // Start from the theory where the data-driven guess is far off (few extrema).
    if (!(std::abs(guess.omega / th.omega - 1.0) < 0.3)) {
        guess.omega = th.omega;
        guess.tau = th.tau;
    }
    const DampedSine fit = fitDampedSine(tf, xf, guess);

    nlohmann::json params = {{"particles", n}, {"iterations", NI}, {"dt", dt}, {"d", d},
                             {"mass", sim.world().mass[0]}, {"force", sim.world().appliedForce(last, 0.0).norm()},
                             {"order", sim.scene().values.at("cd.order")}, {"seed", sim.scene().simulation.seed},
                             {"fit_start", tSettled + fitDelay}, {"fit_end", tSettled + fitDelay + fitLength}};
    nlohmann::json results = {{"omega_fit", fit.omega}, {"tau_fit", fit.tau}, {"omega_theory", th.omega},
                              {"tau_theory", th.tau}, {"q", th.q}, {"r2", fit.r2},
                              {"sound_speed_theory", th.c}, {"diffusion_constant_theory", th.D},
                              {"t_impact", tImpact}, {"t_settled", tSettled}, {"fit_points", tf.size()}, {"fit_converged", fit.converged},
                              {"x0_fit", fit.x0}, {"amplitude_fit", fit.amplitude}, {"phase_fit", fit.phase}};
    nlohmann::json checks = nlohmann::json::array();
    checks.push_back(makeCheck("omega_fit/omega_theory", fit.omega, th.omega, 0.02));
    checks.push_back(makeCheck("tau_fit/tau_theory", fit.tau, th.tau, 0.05));
    checks.push_back(makeCheck("r2", fit.r2, 1.0, 0.01, false));

    if (options.writeFiles) {
        std::filesystem::create_directories(options.outDir);
        const auto csv = options.outDir / "sound_wave_1d.csv";
        std::ofstream out(csv);
        out << "time,x_last,wall_force,in_fit,x_fit,x_theory\n" << std::setprecision(12);
        // Theory curve: eq. 64 with ω, τ from theory and x0, A, φ fitted.
        std::vector<double> e1, e2;
        DampedSine theoryCurve = fit;
        {
            Eigen::MatrixXd A(static_cast<Eigen::Index>(tf.size()), 3);
            Eigen::VectorXd y(static_cast<Eigen::Index>(tf.size()));
            for (std::size_t i = 0; i < tf.size(); ++i) {
                const auto r = static_cast<Eigen::Index>(i);
                const double e = std::exp(-(tf[i] - tf[0]) / th.tau);
                A(r, 0) = 1.0;
                A(r, 1) = e * std::sin(th.omega * tf[i]);
                A(r, 2) = e * std::cos(th.omega * tf[i]);
                y[r] = xf[i];
            }
            const Eigen::Vector3d c = A.colPivHouseholderQr().solve(y);
            theoryCurve.x0 = c[0];
            theoryCurve.omega = th.omega;
            theoryCurve.tau = th.tau;
            theoryCurve.amplitude = std::hypot(c[1], c[2]) * std::exp(tf[0] / th.tau);
            theoryCurve.phase = std::atan2(c[2], c[1]);
        }
        for (std::size_t i = 0; i < t.size(); ++i) {
            const bool in = t[i] >= tf.front() && t[i] <= tf.back();
            out << t[i] << ',' << x[i] << ',' << wallForce[i] << ',' << (in ? 1 : 0) << ','
                << (t[i] >= tImpact ? fit(t[i]) : std::nan("")) << ','
                << (t[i] >= tImpact ? theoryCurve(t[i]) : std::nan("")) << '\n';
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
