/// μ(I) with both methods (beyond the five papers; da Cruz, Emam, Prochnow,
/// Roux & Chevoir, Phys. Rev. E 72, 021309, 2005): steady simple shear of
/// polydisperse frictional disks (or spheres) at a fixed pressure, in a
/// Lees–Edwards cell whose height a stress servo sets, with contact dynamics
/// (a converged criterion and fixed N_I) and with MD (stiffness levels
/// κ = k_n/P, and κ, γ mapped from each N_I by the CD paper's eqs. 67–68).
///
/// Units: the mean diameter d, the grains' density ρ and the pressure P are
/// 1, so the time unit is d √(ρ/P) and the inertial number
/// I = γ̇ d √(ρ/P) is the shear rate. Each method runs the inertial numbers
/// from the largest down, each run starting from the last one's state, until
/// the data say the flow is steady (MSER, analysis/steady_state.hpp); its
/// averages and error bars come from batch means over the steady part.
#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>

#include <unistd.h>

#include "moreau/core/progress.hpp"
#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "shear_flow.hpp"

namespace moreau {

using namespace shearflow;

nlohmann::json muOfI(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.dimension", KeyType::Integer, "2", "2: disks (da Cruz et al.), 3: spheres", 2.0, 3.0},
        {"experiment.particles", KeyType::Integer, "0", "grains in the cell (0: 400 in 2D, 500 in 3D)", 0.0, 1e7},
        {"experiment.inertial_numbers", KeyType::Text, "0.316 0.178 0.1 0.0562 0.0316 0.0178 0.01 0.00316 0.001",
         "inertial numbers I = shear rate x d sqrt(rho/P), run from the largest down"},
        {"experiment.methods", KeyType::Text,
         "cd_converged cd_ni10 cd_ni40 cd_ni160 md_kappa1e3 md_kappa1e4 md_kappa1e5 md_mapped_ni10 md_mapped_ni40 "
         "md_mapped_ni160",
         "methods: cd_converged, cd_ni<N>, md_kappa<k_n/P>, md_mapped_ni<N> (kappa, gamma of CD eqs. 67-68)"},
        {"experiment.mu", KeyType::Real, "0.4", "grain friction coefficient", 0.0, kInf},
        {"experiment.polydispersity", KeyType::Real, "0.2", "diameters uniform in d (1 -+ this)", 0.0, 0.9},
        {"experiment.strain_per_step", KeyType::Real, "2e-3",
         "CD: shear strain per time step (dt = this / I, at most cd_dt_max)", 0.0,
         0.1, {}, true},
        {"experiment.cd_dt_max", KeyType::Real, "0.1", "CD: time step at most this (unit d sqrt(rho/P))", 0.0, kInf,
         {}, true},
        {"experiment.cd_converged_min_i", KeyType::Real, "0.01",
         "cd_converged runs only at I >= this (below, each I costs minutes)", 0.0, kInf},
        {"experiment.cd_criterion", KeyType::Choice, "local", "cd_converged: criterion (CD eqs. 35, 36)", 0.0, 0.0,
         {"local", "global"}},
        {"experiment.cd_epsilon", KeyType::Real, "1e-2", "cd_converged: epsilon of the criterion",
         0.0, 1.0, {}, true},
        {"experiment.restitution", KeyType::Real, "0.1", "MD stiffness levels: normal restitution of a mean pair",
         0.0, 1.0, {}, true},
        {"experiment.kt_over_kn", KeyType::Real, "0.5", "MD stiffness levels: k_t / k_n", 0.0, kInf},
        {"experiment.md_steps_per_contact", KeyType::Real, "10", "MD stiffness levels: t_c / dt, lightest pair", 1.0,
         kInf},
        {"experiment.md_damping_step", KeyType::Real, "0.5", "MD mapped: gamma dt_MD / m_eff", 0.0, 2.0, {}, true},
        {"experiment.md_max_steps_per_strain", KeyType::Real, "2e5",
         "MD runs needing more steps per unit strain are skipped (cost)", 1.0, kInf},
        {"experiment.min_strain", KeyType::Real, "2", "shear strain run at least at each I", 0.0, kInf, {}, true},
        {"experiment.max_strain", KeyType::Real, "8", "shear strain at most at each I", 0.0, kInf, {}, true},
        {"experiment.samples_per_strain", KeyType::Real, "200", "stress and solid fraction samples per unit strain",
         1.0, 1e6},
        {"experiment.servo_gain", KeyType::Real, "0.5",
         "servo: strain rate of the height per relative stress error, over the shear rate", 0.0, kInf, {}, true},
        {"experiment.servo_filter", KeyType::Real, "0.05", "servo: shear strain over which it averages sigma_yy",
         0.0, kInf, {}, true},
        {"experiment.fit_max_i", KeyType::Real, "0.1", "fit mu = mu_min + b I, phi = phi_max - a I over I <= this",
         0.0, kInf, {}, true},
    };
    const Scene keyScene = experimentKeys("mu-of-i", options.sets, keys);
    Options o;
    o.dimension = static_cast<int>(sceneInteger(keyScene, "experiment.dimension"));
    o.particles = static_cast<long>(sceneInteger(keyScene, "experiment.particles"));
    if (o.particles == 0) o.particles = o.dimension == 2 ? 400 : 500;
    o.mu = sceneReal(keyScene, "experiment.mu");
    o.polydispersity = sceneReal(keyScene, "experiment.polydispersity");
    o.strainPerStep = sceneReal(keyScene, "experiment.strain_per_step");
    o.cdEpsilon = sceneReal(keyScene, "experiment.cd_epsilon");
    o.cdDtMax = sceneReal(keyScene, "experiment.cd_dt_max");
    o.cdLocal = sceneText(keyScene, "experiment.cd_criterion") == "local";
    o.convergedMinI = sceneReal(keyScene, "experiment.cd_converged_min_i");
    o.restitution = sceneReal(keyScene, "experiment.restitution");
    o.ktOverKn = sceneReal(keyScene, "experiment.kt_over_kn");
    o.stepsPerContact = sceneReal(keyScene, "experiment.md_steps_per_contact");
    o.dampingStep = sceneReal(keyScene, "experiment.md_damping_step");
    o.maxStepsPerStrain = sceneReal(keyScene, "experiment.md_max_steps_per_strain");
    o.minStrain = sceneReal(keyScene, "experiment.min_strain");
    o.maxStrain = std::max(o.minStrain, sceneReal(keyScene, "experiment.max_strain"));
    o.samplesPerStrain = sceneReal(keyScene, "experiment.samples_per_strain");
    o.servoGain = sceneReal(keyScene, "experiment.servo_gain");
    o.servoFilter = sceneReal(keyScene, "experiment.servo_filter");
    o.fitMaxI = sceneReal(keyScene, "experiment.fit_max_i");
    o.seed = options.seed.value_or(1);
    o.chunkStrain = std::min(0.5, o.minStrain);

    std::vector<double> inertial;
    for (const std::string& w : listWords(sceneText(keyScene, "experiment.inertial_numbers"))) {
        const double v = parseNumber(w).value_or(kNaN);
        if (!(v > 0.0) || !(v <= 10.0))
            throw InputError("mu-of-i: key 'experiment.inertial_numbers': '" + w +
                             "' is not an inertial number (allowed: numbers in (0, 10])");
        inertial.push_back(v);
    }
    if (inertial.empty())
        throw InputError("mu-of-i: key 'experiment.inertial_numbers': empty (allowed: one or more numbers in (0, 10])");
    std::sort(inertial.begin(), inertial.end(), std::greater<>());
    std::vector<MethodSpec> methods;
    for (const std::string& w : listWords(sceneText(keyScene, "experiment.methods"))) methods.push_back(parseMethod(w));
    if (methods.empty()) throw InputError("mu-of-i: key 'experiment.methods': empty (allowed: cd_converged, ...)");

    const auto t0 = std::chrono::steady_clock::now();
    const Scene prepared = preparePacking(o);
    const double prepSeconds = secondsSince(t0);
    progress::expectUnits(static_cast<double>(methods.size()));

    // The methods run side by side (each one's chain of inertial numbers in
    // order, single-threaded inside): the same bits for any thread count.
    std::vector<MethodRun> runs(methods.size());
    std::vector<std::exception_ptr> errors(methods.size());
    int done = 0;
    // The dearest chains first, so that the last one to start is short.
    auto cost = [](const MethodSpec& m) {
        switch (m.kind) {
            case Kind::CdConverged: return 1e9;
            case Kind::MdMapped: return 1e4 * m.value;
            case Kind::CdFixed: return 1e3 * m.value;
            case Kind::MdStiff: return std::log10(m.value);
        }
        return 0.0;
    };
    std::vector<std::size_t> order(methods.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return cost(methods[a]) > cost(methods[b]); });
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t j = 0; j < methods.size(); ++j) {
        const std::size_t k = order[j];
        try {
            runs[k] = runMethod(prepared, methods[k], inertial, o);
        } catch (...) {
            errors[k] = std::current_exception();
        }
#pragma omp critical(mu_of_i_progress)
        {
            ++done;
            progress::advance();
            progress::notef("%d/%zu methods done (%s)", done, methods.size(), methods[k].name.c_str());
        }
    }
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    const double seconds = secondsSince(t0);

    nlohmann::json results = {{"inertial_number", inertial}};
    nlohmann::json details = nlohmann::json::object();
    for (const MethodRun& r : runs) {
        const std::string& n = r.spec.name;
        nlohmann::json mu = nlohmann::json::array(), phi = nlohmann::json::array(), muErr = nlohmann::json::array(),
                       phiErr = nlohmann::json::array();
        nlohmann::json pts = nlohmann::json::array();
        for (const FlowPoint& p : r.points) {
            mu.push_back(numberOrNull(p.mu));
            phi.push_back(numberOrNull(p.phi));
            muErr.push_back(numberOrNull(p.muError));
            phiErr.push_back(numberOrNull(p.phiError));
            pts.push_back({{"inertial_number", p.inertial}, {"ran", p.ran}, {"note", p.note}, {"steady", p.steady},
                           {"strain", p.strain}, {"steady_strain", p.steadyStrain},
                           {"pressure_ratio", numberOrNull(p.pressureRatio)},
                           {"pressure_error", numberOrNull(p.pressureError)},
                           {"coordination", numberOrNull(p.coordination)}, {"overlap", numberOrNull(p.overlap)},
                           {"steps", p.steps}, {"seconds", p.seconds}, {"sweeps_per_step", p.sweeps},
                           {"kappa", numberOrNull(p.kappa)}, {"dt", p.dt}});
        }
        results["mu_" + n] = mu;
        results["phi_" + n] = phi;
        results["mu_min_" + n] = numberOrNull(r.muFit.points >= 2 ? r.muFit.intercept : kNaN);
        results["b_" + n] = numberOrNull(r.muFit.points >= 2 ? r.muFit.slope : kNaN);
        results["phi_max_" + n] = numberOrNull(r.phiFit.points >= 2 ? r.phiFit.intercept : kNaN);
        results["a_" + n] = numberOrNull(r.phiFit.points >= 2 ? -r.phiFit.slope : kNaN);
        details[n] = {{"mu_error", muErr},
                      {"phi_error", phiErr},
                      {"mu_fit", {{"mu_min", r.muFit.intercept}, {"mu_min_error", r.muFit.interceptError},
                                  {"b", r.muFit.slope}, {"b_error", r.muFit.slopeError}, {"r2", r.muFit.r2},
                                  {"points", r.muFit.points}}},
                      {"phi_fit", {{"phi_max", r.phiFit.intercept}, {"phi_max_error", r.phiFit.interceptError},
                                   {"a", -r.phiFit.slope}, {"a_error", r.phiFit.slopeError}, {"r2", r.phiFit.r2},
                                   {"points", r.phiFit.points}}},
                      {"points", pts},
                      {"seconds", r.seconds}};
    }
    results["methods"] = details;
    results["seconds"] = seconds;
    results["prep_seconds"] = prepSeconds;

    // Checks. The references: converged CD and the stiffest MD level run.
    nlohmann::json checks = nlohmann::json::array();
    const MethodRun* cdRef = nullptr;
    const MethodRun* mdRef = nullptr;
    for (const MethodRun& r : runs) {
        if (r.spec.kind == Kind::CdConverged) cdRef = &r;
        if (r.spec.kind == Kind::MdStiff && (!mdRef || r.spec.value > mdRef->spec.value)) mdRef = &r;
    }
    for (const MethodRun& r : runs) {
        int unsteady = 0, offPressure = 0;
        for (const FlowPoint& p : r.points) {
            if (p.ran && !p.steady) ++unsteady;
            if (p.ran && std::abs(p.pressureRatio - 1.0) > std::max(0.02, 3.0 * p.pressureError)) ++offPressure;
        }
        checks.push_back(makeCheck(r.spec.name + ": every run steady by MSER (runs not steady)", unsteady, 0.0, 0.0,
                                   false));
        checks.push_back(makeCheck(r.spec.name + ": servo holds <sigma_yy> = P within 2 % or 3 error bars (runs off)",
                                   offPressure, 0.0, 0.0, false));
    }
    for (const MethodRun* r : {cdRef, mdRef}) {
        if (!r || r->muFit.points < 3) continue;
        const double rise = r->muFit.slope / r->muFit.slopeError;
        nlohmann::json c = makeCheck(r->spec.name + ": mu rises with I (fitted b over its error, >= 3)", rise, 3.0,
                                     0.0, false);
        c["error"] = std::isfinite(rise) ? std::max(0.0, 3.0 - rise) : kNaN;
        c["pass"] = std::isfinite(rise) && rise >= 3.0;
        checks.push_back(c);
        checks.push_back(makeCheck(r->spec.name + ": linear fit of mu(I), R^2 (>= 0.9)", r->muFit.r2, 1.0, 0.1, false));
        checks.push_back(makeCheck(r->spec.name + ": linear fit of phi(I), R^2 (>= 0.9)", r->phiFit.r2, 1.0, 0.1,
                                   false));
    }
    // Converged CD against the stiffest MD level that ran at the same I.
    if (cdRef)
        for (std::size_t i = 0; i < inertial.size(); ++i) {
            const FlowPoint& c = cdRef->points[i];
            const MethodRun* md = nullptr;
            for (const MethodRun& r : runs)
                if (r.spec.kind == Kind::MdStiff && r.points[i].ran && (!md || r.spec.value > md->spec.value)) md = &r;
            if (!c.ran || !md) continue;
            const FlowPoint& m = md->points[i];
            // Within 5 % (μ) and 1 % (φ) beyond two standard errors of the
            // difference: the runs' statistics are part of the comparison.
            std::ostringstream at;
            at << " at I = " << inertial[i];
            const std::string pair = cdRef->spec.name + " vs " + md->spec.name;
            auto agree = [&](const std::string& what, double a, double ae, double b, double be, double tol) {
                const double slack = 2.0 * std::hypot(ae, be) / std::abs(b);
                nlohmann::json check =
                    makeCheck(pair + ": " + what + at.str() + " (" + std::to_string(static_cast<int>(100 * tol)) +
                                  " % + 2 standard errors)",
                              a, b, tol + slack);
                check["statistical_slack"] = slack;
                checks.push_back(check);
            };
            agree("mu", c.mu, c.muError, m.mu, m.muError, 0.05);
            agree("phi", c.phi, c.phiError, m.phi, m.phiError, 0.01);
        }
    nlohmann::json params = {{"dimension", o.dimension},
                             {"particles", o.particles},
                             {"mu", o.mu},
                             {"polydispersity", o.polydispersity},
                             {"strain_per_step", o.strainPerStep},
                             {"cd_epsilon", o.cdEpsilon},
                             {"cd_dt_max", o.cdDtMax},
                             {"cd_converged_min_i", o.convergedMinI},
                             {"cd_criterion", o.cdLocal ? "local" : "global"},
                             {"restitution", o.restitution},
                             {"kt_over_kn", o.ktOverKn},
                             {"md_steps_per_contact", o.stepsPerContact},
                             {"md_damping_step", o.dampingStep},
                             {"md_max_steps_per_strain", o.maxStepsPerStrain},
                             {"min_strain", o.minStrain},
                             {"max_strain", o.maxStrain},
                             {"samples_per_strain", o.samplesPerStrain},
                             {"servo_gain", o.servoGain},
                             {"servo_filter", o.servoFilter},
                             {"fit_max_i", o.fitMaxI},
                             {"q", qRandomSweep()},
                             {"seed", o.seed},
                             {"units", "mean diameter d = 1, density rho = 1, pressure P = 1; time d sqrt(rho/P)"}};
    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "mu_of_i.csv",
                                  "method,inertial_number,ran,steady,mu,mu_error,phi,phi_error,pressure_ratio,"
                                  "coordination,overlap,strain,steady_strain,steps,seconds,sweeps_per_step,kappa,dt");
        for (const MethodRun& r : runs)
            for (const FlowPoint& p : r.points)
                out << r.spec.name << ',' << p.inertial << ',' << p.ran << ',' << p.steady << ',' << p.mu << ','
                    << p.muError << ',' << p.phi << ',' << p.phiError << ',' << p.pressureRatio << ','
                    << p.coordination << ',' << p.overlap << ',' << p.strain << ',' << p.steadyStrain << ','
                    << p.steps << ',' << p.seconds << ',' << p.sweeps << ',' << p.kappa << ',' << p.dt << '\n';
        out.close();
        auto [tcsv, tout] = openCsv(options, "mu_of_i_series.csv", "method,inertial_number,strain,mu,phi,sigma_yy", 8);
        for (const MethodRun& r : runs)
            for (const auto& s : r.trace)
                tout << r.spec.name << ',' << s[0] << ',' << s[1] << ',' << s[2] << ',' << s[3] << ',' << s[4] << '\n';
        tout.close();
        runPlotScript("mu_of_i", {csv.string(), (options.outDir / "mu_of_i.png").string()}, options.quiet);
    }
    return {{"experiment", "mu-of-i"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau

