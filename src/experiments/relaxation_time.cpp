/// Peña, Lind & Herrmann, "Modeling of the time integration step for
/// frictional contacts" (geometrical friction), §§3–4, Figs. 4 (the setup),
/// 6, 7a and 9 (not Fig. 5's E_k curves): the relaxation time t_R of the
/// kinetic energy of two discs against the time step Δt/t_c, with Cundall's
/// spring (eq. 7) and with the geometric update
/// (eqs. 14–15), with and without rotation, for several k_n.
///
/// Disc i (radius a, fixed: no translation, no rotation) and disc j (radius
/// a, mass m, I = m a²/2) touch with the centre line at 45° to x; j is pushed
/// by a constant force F = −F x̂ through its centre (no torque). The forces
/// ±F_V of Fig. 4 that "balance the reaction" are a lock of j's y
/// translation (its inverse mass along y is zero): j moves along x and
/// rotates about z, so that without rotation it has the single degree of
/// freedom §3 speaks of. (A free j would roll round i, which has no
/// equilibrium under a uniform force.) Normal: the
/// linear spring–dashpot, ν_n from ε_n by eq. 8 (m_r = m, i is fixed);
/// tangential: k_t/k_n = ν_t/ν_n = 1/3, μ = 500 (elastic regime). F = f k_n a
/// so that the overlaps, and so the curves, are the same for every k_n in
/// units of t_c (eq. 10). Gear's 5th-order predictor–corrector (md.integrator
/// = gear5) integrates; the Cundall spring adds V_t times the elapsed time at
/// the predictor (md.spring_increment = velocity, Peña eq. 7), the geometric
/// update is md.tangential = pena (eqs. 14–15 from the predicted positions
/// and angles). "Without rotation": disc j's inverse inertia is zero.
///
/// t_R is the slope of ln E_k at E_k's local maxima (eq. 12) over a window
/// of the decay, in units of t_c.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

constexpr double kRadius = 0.05, kMass = 1.0;

struct RelaxParams {
    double kn = 1e6;
    double epsN = 0.5;       ///< normal restitution ε_n (eq. 8)
    double ktRatio = 1.0 / 3.0;
    double mu = 500.0;
    double forceScale = 1e-3;  ///< F = f k_n a
};

/// t_c of eq. 10 for disc j against the fixed disc (m_r = m).
double contactTime(const RelaxParams& p) {
    const double w0 = std::sqrt(p.kn / kMass);
    const double le = std::log(p.epsN);
    const double eta = -le * w0 / std::sqrt(M_PI * M_PI + le * le);  // eq. 8 solved for η
    return M_PI / std::sqrt(w0 * w0 - eta * eta);
}

struct Series {
    std::vector<double> t, ek;  ///< t in units of t_c
    long steps = 0;
};

/// One relaxation run of `durationTc` contact times.
Series relax(const RelaxParams& p, bool geometric, bool rotation, double dtOverTc, double durationTc, long samples) {
    const double tc = contactTime(p);
    const double w0 = std::sqrt(p.kn / kMass);
    const double le = std::log(p.epsN);
    const double eta = -le * w0 / std::sqrt(M_PI * M_PI + le * le);
    MdSettings md;
    md.normal = NormalLaw::Linear;
    md.kn = p.kn;
    md.gammaN = 2.0 * kMass * eta;  // ν_n = 2 m_r η
    md.kt = p.ktRatio * p.kn;
    md.gammaT = p.ktRatio * md.gammaN;
    md.tangential = geometric ? TangentialLaw::Pena : TangentialLaw::Spring;
    md.springVelocityIncrement = !geometric;
    md.integrator = Integrator::Gear5;
    md.restartOnContactChange = true;
    World world;
    world.dimension = 2;
    world.muGrain = p.mu;
    const double I = 0.5 * kMass * kRadius * kRadius;
    world.addGrain(Vec3::Zero(), kRadius, kMass, I);
    const Vec3 n0(std::sqrt(0.5), std::sqrt(0.5), 0.0);
    world.addGrain(2.0 * kRadius * n0, kRadius, kMass, I);
    world.invMass[0] = Vec3::Zero();
    world.invInertia[0] = Vec3::Zero();
    // F_V and −F_V of Fig. 4 balance the vertical reaction: disc j moves
    // along x only (one degree of freedom, the paper's words, without rotation).
    world.invMass[1].y() = 0.0;
    if (!rotation) world.invInertia[1] = Vec3::Zero();
    world.forceSchedule(1).before = Vec3(-p.forceScale * p.kn * kRadius, 0.0, 0.0);
    world.forceSchedule(1).after = world.forceSchedule(1).before;

    // The pair stays listed (margin of a radius) as the discs barely move;
    // the staged pipeline reports the force of the step's evaluation.
    md.pipeline = MdPipeline::Staged;
    Simulation sim(sceneFromWorld(std::move(world), Method::MD, dtOverTc * tc, {}, md, kRadius, 1, "relaxation-time"));
    const World& w = sim.world();
    const long steps = static_cast<long>(std::ceil(durationTc / dtOverTc));
    const long every = std::max(1L, steps / std::max(1L, samples));
    Series s;
    for (long k = 0; k < steps; ++k) {
        sim.advance();
        if ((k + 1) % every == 0) {
            s.t.push_back(w.time / tc);
            s.ek.push_back(0.5 * kMass * w.v[1].squaredNorm() + 0.5 * I * w.w[1].squaredNorm());
        }
    }
    s.steps = steps;
    return s;
}

/// t_R from the local maxima of E_k in [from, to] (units of t_c): −1/slope of
/// ln E_k by least squares. NaN with fewer than 3 maxima.
double fitRelaxation(const Series& s, double from, double to, double& r2) {
    std::vector<double> xs, ys;
    for (std::size_t i = 1; i + 1 < s.t.size(); ++i)
        if (s.t[i] >= from && s.t[i] <= to && s.ek[i] > 0.0 && s.ek[i] >= s.ek[i - 1] && s.ek[i] > s.ek[i + 1]) {
            xs.push_back(s.t[i]);
            ys.push_back(std::log(s.ek[i]));
        }
    r2 = 0.0;
    if (xs.size() < 3) return std::numeric_limits<double>::quiet_NaN();
    const double n = static_cast<double>(xs.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) mx += xs[i] / n, my += ys[i] / n;
    double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
        syy += (ys[i] - my) * (ys[i] - my);
    }
    const double slope = sxy / sxx;
    r2 = syy > 0.0 ? sxy * sxy / (sxx * syy) : 0.0;
    return -1.0 / slope;
}

std::vector<double> parseList(const std::string& text, const std::string& key) {
    std::vector<double> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            std::size_t used = 0;
            const double v = std::stod(item, &used);
            if (used != item.size() || !(v > 0.0)) throw std::invalid_argument(item);
            out.push_back(v);
        } catch (const std::exception&) {
            throw InputError("relaxation-time: key '" + key + "': expected a comma-separated list of positive numbers, got '" +
                             text + "'");
        }
    }
    if (out.empty()) throw InputError("relaxation-time: key '" + key + "' is empty");
    return out;
}

}  // namespace

nlohmann::json relaxationTime(const ExperimentOptions& options) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<KeySpec> keys = {
        {"experiment.dt_over_tc", KeyType::Text, "1e-1,3e-2,1e-2,3e-3,1e-3,3e-4,1e-4,1e-5",
         "time steps dt/t_c (comma-separated)"},
        {"experiment.kn", KeyType::Text, "1e4,5e5,2e6,1e8", "normal stiffnesses k_n in N/m (comma-separated)"},
        {"experiment.duration", KeyType::Real, "0", "simulated time in t_c (0: 6 t_R of a first geometric run)", 0.0,
         inf, {}},
        {"experiment.collapse_kn_max_dt", KeyType::Real, "1e-5",
         "the collapse over k_n is run for dt/t_c >= this (smaller steps with the first k_n only)", 0.0, inf, {}, true},
        {"experiment.eps_n", KeyType::Real, "0.5", "normal restitution eps_n (eq. 8)", 0.0, 1.0, {}, true},
    };
    const Scene scene = experimentKeys("relaxation-time", options.sets, keys);
    std::vector<double> dts = parseList(sceneText(scene, "experiment.dt_over_tc"), "experiment.dt_over_tc");
    const std::vector<double> kns = parseList(sceneText(scene, "experiment.kn"), "experiment.kn");
    double duration = sceneReal(scene, "experiment.duration");
    const double collapseMin = sceneReal(scene, "experiment.collapse_kn_max_dt");
    RelaxParams base;
    base.epsN = sceneReal(scene, "experiment.eps_n");
    std::sort(dts.begin(), dts.end(), std::greater<>());
    const auto start = std::chrono::steady_clock::now();

    // The simulated time from t_R itself: a geometric run at a coarse step.
    RelaxParams p0 = base;
    p0.kn = kns[0];
    double trProbe = 0.0;
    if (duration <= 0.0) {
        double r2 = 0.0;
        const Series probe = relax(p0, true, true, 1e-2, 200.0, 20000);
        const double trRot = fitRelaxation(probe, 2.0, 200.0, r2);
        const Series probe2 = relax(p0, true, false, 1e-2, 200.0, 20000);
        const double trTr = fitRelaxation(probe2, 2.0, 200.0, r2);
        trProbe = std::max(std::isfinite(trRot) ? trRot : 0.0, std::isfinite(trTr) ? trTr : 0.0);
        if (!(trProbe > 0.0)) throw std::runtime_error("relaxation-time: no decay found in the probe run");
        duration = std::min(200.0, 2.0 + 6.0 * trProbe);
    }
    const double fitFrom = 0.25 * duration, fitTo = duration;
    const long samples = 20000;

    struct Variant {
        const char* name;
        bool geometric, rotation;
    };
    const Variant variants[] = {{"cundall", false, true}, {"cundall_norot", false, false},
                                {"geometric", true, true}, {"geometric_norot", true, false}};
    nlohmann::json results;
    results["dt_over_tc"] = dts;
    results["kn"] = kns;
    std::ostringstream csv;
    csv << "variant,kn,dt_over_tc,t_r,r2,steps\n" << std::setprecision(10);
    std::vector<std::vector<std::vector<double>>> tr(4, std::vector<std::vector<double>>(kns.size()));
    long totalSteps = 0;
    for (std::size_t v = 0; v < 4; ++v) {
        for (std::size_t q = 0; q < kns.size(); ++q) {
            RelaxParams p = base;
            p.kn = kns[q];
            for (double dt : dts) {
                if (q > 0 && dt < collapseMin) {
                    tr[v][q].push_back(std::numeric_limits<double>::quiet_NaN());
                    continue;
                }
                const Series s = relax(p, variants[v].geometric, variants[v].rotation, dt, duration, samples);
                totalSteps += s.steps;
                double r2 = 0.0;
                const double t = fitRelaxation(s, fitFrom, fitTo, r2);
                tr[v][q].push_back(t);
                csv << variants[v].name << ',' << p.kn << ',' << dt << ',' << t << ',' << r2 << ',' << s.steps << '\n';
            }
        }
    }
    auto json = [](const std::vector<double>& x) {
        nlohmann::json a = nlohmann::json::array();
        for (double d : x) a.push_back(std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr));
        return a;
    };
    results["tr_cundall"] = json(tr[0][0]);
    results["tr_cundall_norot"] = json(tr[1][0]);
    results["tr_geometric"] = json(tr[2][0]);
    results["tr_geometric_norot"] = json(tr[3][0]);
    for (std::size_t q = 0; q < kns.size(); ++q) {
        const std::string suffix = "_kn" + std::to_string(q);
        for (std::size_t v = 0; v < 4; ++v) results[std::string("tr_") + variants[v].name + suffix] = json(tr[v][q]);
    }
    results["duration_tc"] = duration;
    results["probe_tr"] = trProbe;
    results["total_steps"] = totalSteps;

    // Checks. Reference: the finest step of each variant.
    auto at = [&](const std::vector<double>& x, double dt) {
        for (std::size_t i = 0; i < dts.size(); ++i)
            if (std::abs(dts[i] / dt - 1.0) < 1e-9) return x[i];
        return std::numeric_limits<double>::quiet_NaN();
    };
    const double finest = dts.back();
    nlohmann::json checks = nlohmann::json::array();
    // "Converged": within 0.1 % of the finest step's t_R (the paper reads its
    // T_t off log-scale plots; its resolution is not stated).
    const double tol = 1e-3;
    // Largest dt whose t_R is within tol of the finest (converged from there down).
    auto threshold = [&](const std::vector<double>& x) {
        const double ref = x.back();
        double th = dts.back();
        for (std::size_t i = dts.size(); i-- > 0;) {
            if (!(std::abs(x[i] / ref - 1.0) <= tol)) break;
            th = dts[i];
        }
        return th;
    };
    const double thC = threshold(tr[0][0]), thCn = threshold(tr[1][0]);
    const double thG = threshold(tr[2][0]), thGn = threshold(tr[3][0]);
    results["converged_below_cundall"] = thC;
    results["converged_below_cundall_norot"] = thCn;
    results["converged_below_geometric"] = thG;
    results["converged_below_geometric_norot"] = thGn;
    // Peña Fig. 6: T_t = 1e-3 with rotation; Fig. 7a: 1e-4 without (within a factor ~3: one grid step).
    checks.push_back(makeCheck("Cundall (rotation): log10 of the largest converged dt/t_c (Fig. 6: -3)",
                               std::log10(thC), -3.0, 0.55, false));
    checks.push_back(makeCheck("Cundall (no rotation): log10 of the largest converged dt/t_c (Fig. 7a: -4)",
                               std::log10(thCn), -4.0, 0.55, false));
    auto spread = [&](const std::vector<double>& x) {
        double lo = inf, hi = 0.0;
        for (double d : x)
            if (std::isfinite(d)) lo = std::min(lo, d), hi = std::max(hi, d);
        return hi / lo - 1.0;
    };
    const double spreadG = spread(tr[2][0]), spreadGn = spread(tr[3][0]);
    const double spreadC = spread(tr[0][0]), spreadCn = spread(tr[1][0]);
    results["spread_cundall"] = spreadC;
    results["spread_cundall_norot"] = spreadCn;
    results["spread_geometric"] = spreadG;
    results["spread_geometric_norot"] = spreadGn;
    checks.push_back(makeCheck("geometric (rotation): t_R spread max/min - 1 over all dt (Fig. 9: flat, < 0.5 %)",
                               spreadG, 0.0, 5e-3, false));
    checks.push_back(makeCheck("geometric (no rotation): t_R spread max/min - 1 over all dt (Fig. 9: flat, < 0.5 %)",
                               spreadGn, 0.0, 5e-3, false));
    checks.push_back(makeCheck("Cundall / geometric t_R spread over all dt (> 10: Fig. 6 vs 9)",
                               std::min(spreadC / spreadG, spreadCn / spreadGn), 1e6, 1e6 - 10.0, false));
    // Fig. 6 / 7a: curves for several k_n collapse in dt/t_c.
    double collapse = 0.0;
    for (std::size_t v = 0; v < 2; ++v)
        for (std::size_t q = 1; q < kns.size(); ++q)
            for (std::size_t i = 0; i < dts.size(); ++i)
                if (std::isfinite(tr[v][q][i]) && std::isfinite(tr[v][0][i]))
                    collapse = std::max(collapse, std::abs(tr[v][q][i] / tr[v][0][i] - 1.0));
    results["collapse_max_rel_dev"] = collapse;
    if (kns.size() > 1)
        checks.push_back(makeCheck("Cundall: t_R(k_n)/t_R(k_n first) at equal dt/t_c, max deviation (collapse)",
                                   collapse, 0.0, 0.01, false));
    // Fig. 7a vs 6: rotation suppressed relaxes faster.
    checks.push_back(makeCheck("t_R without rotation / with rotation at the finest step (< 1, Fig. 7a vs 6)",
                               at(tr[1][0], finest) / at(tr[0][0], finest), 0.5, 0.5, false));
    // The geometric update converges to the same t_R as Cundall's at small dt.
    checks.push_back(makeCheck("geometric / Cundall t_R at the finest step (rotation)",
                               at(tr[2][0], finest) / at(tr[0][0], finest), 1.0, tol));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results["seconds"] = seconds;
    nlohmann::json params = {{"radius", kRadius}, {"mass", kMass}, {"inertia", "m a^2/2"}, {"eps_n", base.epsN},
                             {"kt_over_kn", base.ktRatio}, {"nu_t_over_nu_n", base.ktRatio}, {"mu", base.mu},
                             {"force", "F = -1e-3 k_n a x"}, {"angle_deg", 45.0}, {"integrator", "gear5"},
                             {"fit", "ln E_k at its local maxima over [duration/4, duration]"},
                             {"convergence_tolerance", tol}};
    if (options.writeFiles) {
        std::filesystem::create_directories(options.outDir);
        const auto file = options.outDir / "relaxation_time.csv";
        std::ofstream(file) << csv.str();
        runPlotScript("relaxation_time", {file.string(), (options.outDir / "relaxation_time.png").string()},
                      options.quiet);
    }
    return {{"experiment", "relaxation-time"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
