/// Peña, Lind, McNamara & Herrmann, "Modeling of the time integration step
/// for frictional contacts" (geometrical friction), §§3–4: the relaxation
/// time t_R of the kinetic energy of two discs (Fig. 4) against the time step
/// Δt/t_c with Cundall's spring (eq. 7) and with the geometric update (eqs.
/// 14–15). Figs. 5 (E_k(t), with the μ = 0 inset), 6, 7a, 7b, 8a–c and 9
/// (rotation and translation, translation only, rotation only).
///
/// Disc i (radius a, fixed) and disc j (radius a, mass m, I = m a²/2) touch
/// with the centre line at 45° to x; j is pushed by a constant force
/// F = −F x̂ through its centre. The forces ±F_V of Fig. 4 that "balance the
/// reaction" are a lock of j's y translation (its inverse mass along y is
/// zero): j moves along x and rotates about z. (A free j would roll round i,
/// which has no equilibrium under a uniform force.) "No rotation": j's
/// inverse inertia is zero; "rotation only" (Fig. 9): its x is locked too.
/// Normal: the linear spring–dashpot, ν_n from ε_n by eq. 8 (m_r = m, as i is
/// fixed); tangential: k_t/k_n and ν_t/ν_n = k_t/k_n (§2), or ν_t from ε_t by
/// eq. 8 where ε_t/ε_n is given (Fig. 8b, c). Defaults are the paper's:
/// ε_n = 0.9875, k_t/k_n = 1/3 (so ε_t/ε_n = 1.0053), μ = 500. F = f k_n a so
/// that the overlaps, and so the curves, are the same for every k_n in units
/// of t_c (eq. 10). Gear's 5th-order predictor–corrector integrates; the
/// Cundall spring adds V_t times the elapsed time at the predictor
/// (md.spring_increment = velocity, eq. 7), the geometric update is
/// md.tangential = pena.
///
/// The reference: while the contact sticks, the two discs are a linear
/// system M q̈ + C q̇ + K q = F in q = (x, a θ), whose slowest mode sets the
/// late decay of E_k; its t_R (eigenvalues of the state matrix) is what every
/// converged run must give. t_R of a run: −1/slope of ln E_k at its local
/// maxima (eq. 12), over a window fixed by that linear analysis alone — after
/// the faster mode's share of E_k has fallen below 10⁻⁴, for two slow decay
/// times — never by the run or the list of steps. A fit with R² < 0.9 gives
/// no t_R (null) and fails its check.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <Eigen/Eigenvalues>

#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

constexpr double kRadius = 0.05, kMass = 1.0, kInertia = 0.5 * kMass * kRadius * kRadius;
constexpr double kMinR2 = 0.9;  ///< below it a fit is a failed check, never a t_R

/// Which of j's motions are free (Figs. 6, 7a and 9's three cases).
enum class Freedom { Both, NoRotation, RotationOnly };

const char* freedomSuffix(Freedom f) {
    return f == Freedom::Both ? "" : f == Freedom::NoRotation ? "_norot" : "_rotonly";
}

struct RelaxParams {
    double kn = 1e6;
    double epsN = 0.9875;       ///< normal restitution ε_n (eq. 8)
    double ktRatio = 1.0 / 3.0;  ///< k_t/k_n
    double etRatio = 0.0;       ///< ε_t/ε_n; 0: ν_t/ν_n = k_t/k_n instead
    double mu = 500.0;
    double forceScale = 1e-3;  ///< F = f k_n a
};

/// The contact's constants from the parameters (eqs. 8 and 10, m_r = m).
struct PairConstants {
    double kt = 0.0, nuN = 0.0, nuT = 0.0, tc = 0.0;
};

/// η of eq. 8 for a restitution ε and a stiffness k (m_r = m).
double viscosityFor(double eps, double k) {
    const double w0 = std::sqrt(k / kMass), le = std::log(eps);
    return -le * w0 / std::sqrt(M_PI * M_PI + le * le);
}

PairConstants constantsOf(const RelaxParams& p) {
    PairConstants c;
    const double eta = viscosityFor(p.epsN, p.kn);
    c.nuN = 2.0 * kMass * eta;
    c.tc = M_PI / std::sqrt(p.kn / kMass - eta * eta);
    c.kt = p.ktRatio * p.kn;
    c.nuT = p.etRatio > 0.0 ? 2.0 * kMass * viscosityFor(p.etRatio * p.epsN, c.kt) : p.ktRatio * c.nuN;
    return c;
}

/// ε_t of eq. 8 with k_t and ν_t.
double tangentialRestitution(const PairConstants& c) {
    const double eta = c.nuT / (2.0 * kMass), w2 = c.kt / kMass - eta * eta;
    return w2 > 0.0 ? std::exp(-M_PI * eta / std::sqrt(w2)) : 0.0;
}

/// Energy decay times of the linear (sticking) system, slowest first, in s:
/// E_k of a mode with eigenvalue λ decays as exp(2 Re λ t).
struct Modes {
    double slow = kNaN, fast = kNaN;  ///< fast: NaN with one degree of freedom
};

Modes linearModes(const PairConstants& c, double kn, Freedom freedom, bool friction) {
    const double kt = friction ? c.kt : 0.0, nuT = friction ? c.nuT : 0.0;
    // q = (x, a θ), M = diag(m, I/a²); the 45° contact gives δ = −x/√2 and
    // ξ = −x/√2 − a θ (see the file comment).
    Eigen::Matrix2d M, K, C;
    M << kMass, 0.0, 0.0, kInertia / (kRadius * kRadius);
    K << 0.5 * (kn + kt), kt / std::sqrt(2.0), kt / std::sqrt(2.0), kt;
    C << 0.5 * (c.nuN + nuT), nuT / std::sqrt(2.0), nuT / std::sqrt(2.0), nuT;
    std::vector<int> dofs;
    if (freedom != Freedom::RotationOnly) dofs.push_back(0);
    if (freedom != Freedom::NoRotation && (friction || freedom == Freedom::RotationOnly)) dofs.push_back(1);
    const auto n = static_cast<Eigen::Index>(dofs.size());
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(2 * n, 2 * n);
    for (Eigen::Index r = 0; r < n; ++r) {
        A(r, n + r) = 1.0;
        for (Eigen::Index s = 0; s < n; ++s) {
            const int i = dofs[static_cast<std::size_t>(r)], j = dofs[static_cast<std::size_t>(s)];
            A(n + r, s) = -K(i, j) / M(i, i);
            A(n + r, n + s) = -C(i, j) / M(i, i);
        }
    }
    const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(A, false).eigenvalues();
    std::vector<double> re;
    for (Eigen::Index k = 0; k < lambda.size(); ++k) re.push_back(lambda[k].real());
    std::sort(re.begin(), re.end());  // most negative (fastest) first
    Modes m;
    m.slow = -0.5 / re.back();
    if (n == 2) m.fast = -0.5 / re.front();
    return m;
}

/// The fit window in units of t_c: from the time the faster mode's share of
/// E_k has fallen by 10⁻⁴ relative to the slow one (at least one slow decay
/// time, at most six), for `length` slow decay times.
struct Window {
    double from = 0.0, to = 0.0;
};

Window fitWindow(const Modes& m, double tc, double fromGiven, double length) {
    const double slow = m.slow / tc;
    double from = slow;
    if (std::isfinite(m.fast)) {
        const double rate = tc / m.fast - 1.0 / slow;  // decay rate of the fast/slow ratio, per t_c
        if (rate > 0.0) from = std::clamp(std::log(1e4) / rate, slow, 6.0 * slow);
    }
    if (fromGiven > 0.0) from = fromGiven * slow;
    return {from, from + length * slow};
}

/// E_k at its local maxima (t in t_c), each refined by the parabola through
/// the step's three samples.
struct Maxima {
    std::vector<double> t, ek;
    long steps = 0;
};

/// Fig. 10's pair: two squares of side 2a (Peña's polygons of Fig. 1, ours:
/// the paper gives no shape), turned by 45° so that their faces meet along
/// the same 45° contact line as the discs, j offset along the face by half
/// a side (the faces overlap over a length a, so the contact line's ends
/// are a vertex of each). Overlap law F_n = k_n A / l_c, l_c = 2 √(4a²/π):
/// its normal stiffness is k_n a / l_c = k_n √π / 4.
constexpr double kSquareStiffness = 0.44311346272637900;  // √π / 4

Maxima relax(const RelaxParams& p, bool geometric, Freedom freedom, double dtOverTc, double untilTc,
             bool polygons = false) {
    const PairConstants c = constantsOf(p);
    MdSettings md;
    md.normal = NormalLaw::Linear;
    md.kn = p.kn;
    md.gammaN = c.nuN;
    md.kt = c.kt;
    md.gammaT = c.nuT;
    md.tangential = geometric ? TangentialLaw::Pena : TangentialLaw::Spring;
    md.springVelocityIncrement = !geometric;
    md.integrator = Integrator::Gear5;
    md.restartOnContactChange = true;
    md.pipeline = MdPipeline::Staged;  // reports the force of the step's evaluation
    World world;
    world.dimension = 2;
    world.muGrain = p.mu;
    const Vec3 n0(std::sqrt(0.5), std::sqrt(0.5), 0.0);
    if (polygons) {
        const Vec3 t0(-std::sqrt(0.5), std::sqrt(0.5), 0.0);
        world.polygonShapes.push_back(regularPolygon(4));
        world.addPolygon(Vec3::Zero(), 1, std::sqrt(2.0) * kRadius, 0.25 * M_PI, kMass);
        world.addPolygon(2.0 * kRadius * n0 + kRadius * t0, 1, std::sqrt(2.0) * kRadius, 0.25 * M_PI, kMass);
    } else {
        world.addGrain(Vec3::Zero(), kRadius, kMass, kInertia);
        world.addGrain(2.0 * kRadius * n0, kRadius, kMass, kInertia);
    }
    world.invMass[0] = Vec3::Zero();
    world.invInertia[0] = Vec3::Zero();
    // F_V and −F_V of Fig. 4 balance the vertical reaction.
    world.invMass[1].y() = 0.0;
    if (freedom == Freedom::NoRotation) world.invInertia[1] = Vec3::Zero();
    if (freedom == Freedom::RotationOnly) {
        // Rotation only (Fig. 9): R_ij is fixed at an overlap of 10⁻³ a and j
        // starts spinning (nothing else would turn it); the spring of eq. 15
        // relaxes the spin.
        world.invMass[1].x() = 0.0;
        world.x[1] = (2.0 - 1e-3) * kRadius * n0;
        world.w[1].z() = 1e-3 * std::sqrt(p.kn / kMass);
    }
    world.forceSchedule(1).before = Vec3(-p.forceScale * p.kn * kRadius, 0.0, 0.0);
    world.forceSchedule(1).after = world.forceSchedule(1).before;

    Simulation sim(
        sceneFromWorld(std::move(world), Method::MD, dtOverTc * c.tc, {}, md, kRadius, 1, "relaxation-time"));
    const World& w = sim.world();
    const long steps = static_cast<long>(std::ceil(untilTc / dtOverTc));
    Maxima out;
    double e0 = 0.0, e1 = 0.0, t1 = 0.0;  // the last two samples
    for (long k = 0; k < steps; ++k) {
        sim.advance();
        const double e = 0.5 * kMass * w.v[1].squaredNorm() + 0.5 * kInertia * w.w[1].squaredNorm();
        if (k >= 2 && e1 > 0.0 && e1 >= e0 && e1 > e) {
            // Vertex of the parabola through (−1, e0), (0, e1), (1, e).
            const double curv = e0 - 2.0 * e1 + e, shift = curv < 0.0 ? 0.5 * (e0 - e) / curv : 0.0;
            out.t.push_back(t1 + shift * dtOverTc);
            out.ek.push_back(e1 - 0.25 * (e0 - e) * shift);
        }
        e0 = e1;
        e1 = e;
        t1 = w.time / c.tc;
    }
    out.steps = steps;
    return out;
}

/// −1/slope of ln E_k over the maxima in [w.from, w.to] by least squares, and
/// its R²; t_R is NaN when R² < kMinR2 or with fewer than 3 maxima.
double fitRelaxation(const Maxima& s, const Window& w, double& r2) {
    std::vector<double> xs, ys;
    for (std::size_t i = 0; i < s.t.size(); ++i)
        if (s.t[i] >= w.from && s.t[i] <= w.to) {
            xs.push_back(s.t[i]);
            ys.push_back(std::log(s.ek[i]));
        }
    r2 = 0.0;
    if (xs.size() < 3) return kNaN;
    const LineFit fit = lineFitR2(xs, ys);
    const double slope = fit.slope;
    r2 = fit.r2;
    return r2 >= kMinR2 && slope < 0.0 ? -1.0 / slope : kNaN;
}

std::vector<double> parseList(const std::string& text, const std::string& key) {
    std::vector<double> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const std::optional<double> v = parseNumber(item);
        if (!v || !(*v > 0.0))
            throw InputError("relaxation-time: key '" + key +
                             "': expected a comma-separated list of positive numbers, got '" + text + "'");
        out.push_back(*v);
    }
    if (out.empty()) throw InputError("relaxation-time: key '" + key + "' is empty");
    return out;
}

/// One run of the experiment: what it varies, and what it gave.
struct Job {
    std::string study;  ///< "grid" (Figs. 6, 7a, 9), "mu0" (Fig. 5 inset), "fig7b", "fig8a", "fig8b", "fig8c"
    std::string variant;
    RelaxParams p;
    bool geometric = false;
    Freedom freedom = Freedom::Both;
    double dt = 0.0;
    bool polygons = false;  ///< Fig. 10: two squares (no rotation)
    Window window;
    double linear = kNaN;  ///< t_R of the linear system, in t_c
    Maxima maxima;
    double tr = kNaN, r2 = 0.0;
};

/// Fig. 10 (experiment.grains = polygons): t_R of the two squares against
/// dt/t_c, Cundall's spring against the geometric update, no rotation; the
/// paper's claim is that the geometric update removes the dependence on dt.
nlohmann::json polygonFigure(const ExperimentOptions& options, const std::vector<Job>& jobs,
                             const std::vector<double>& dts, long totalSteps, int failedFits, double minR2) {
    std::vector<double> cundall, geometric;
    double linear = kNaN;
    for (double dt : dts)
        for (const Job& j : jobs)
            if (j.dt == dt) {
                (j.geometric ? geometric : cundall).push_back(j.tr);
                linear = j.linear;
            }
    auto json = [](const std::vector<double>& x) {
        nlohmann::json a = nlohmann::json::array();
        for (double d : x) a.push_back(numberOrNull(d));
        return a;
    };
    auto spread = [](const std::vector<double>& x) {
        double lo = kInf, hi = 0.0;
        for (double d : x) {
            if (!std::isfinite(d)) return kInf;
            lo = std::min(lo, d), hi = std::max(hi, d);
        }
        return hi / lo - 1.0;
    };
    nlohmann::json results;
    results["dt_over_tc"] = dts;
    results["tr_polygon_cundall_norot"] = json(cundall);
    results["tr_polygon_geometric_norot"] = json(geometric);
    results["tr_polygon_linear"] = numberOrNull(linear);
    results["spread_polygon_geometric_norot"] = numberOrNull(spread(geometric));
    results["spread_polygon_cundall_norot"] = numberOrNull(spread(cundall));
    results["total_steps"] = totalSteps;
    results["fits_below_min_r2"] = failedFits;
    results["min_r2"] = minR2;
    nlohmann::json checks = nlohmann::json::array();
    checks.push_back(makeCheck("polygons, geometric update: t_R spread max/min - 1 over all dt (Fig. 10: flat, < 0.1 %)",
                               spread(geometric), 0.0, 1e-3, false));
    checks.push_back(makeCheck(
        "polygons, Cundall: t_R at the largest dt / geometric t_R there (Fig. 10: far below, < 0.9)",
        cundall.front() / geometric.front(), 0.45, 0.45, false));
    checks.push_back(makeCheck("polygons, Cundall: t_R at the finest dt / geometric t_R there (converges: within 1 %)",
                               cundall.back() / geometric.back(), 1.0, 1e-2));
    checks.push_back(makeCheck("polygons, geometric update: t_R / t_R of the linear system (within 0.5 %)",
                               geometric.back() / linear, 1.0, 5e-3));
    checks.push_back(makeCheck("polygons: fits with R^2 below 0.9 (none)", static_cast<double>(failedFits), 0.0, 0.5, false));
    const nlohmann::json params = {{"grains", "two squares of side 2a, faces at 45 degrees, offset by a along the face"},
                                   {"normal_law", "F_n = k_n A / l_c (Pena eq. 5)"},
                                   {"rotation", "none"},
                                   {"integrator", "gear5"}};
    if (options.writeFiles) {
        std::filesystem::create_directories(options.outDir);
        std::ostringstream csv;
        csv << std::setprecision(10) << "dt_over_tc,t_r_cundall,t_r_geometric,t_r_linear\n";
        for (std::size_t i = 0; i < dts.size(); ++i)
            csv << dts[i] << ',' << cundall[i] << ',' << geometric[i] << ',' << linear << '\n';
        writeFileAtomically(options.outDir / "relaxation_time_polygons.csv", csv.str());
        runPlotScript("relaxation_time_polygons",
                      {options.outDir.string(), (options.outDir / "relaxation_time_polygons.png").string()},
                      options.quiet);
    }
    return {{"experiment", "relaxation-time"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace

nlohmann::json relaxationTime(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.dt_over_tc", KeyType::Text, "1e-1,3e-2,1e-2,3e-3,1e-3,3e-4,1e-4,1e-5",
         "time steps dt/t_c of Figs. 5, 6, 7a and 9 (comma-separated)"},
        {"experiment.kn", KeyType::Text, "1e4,5e5,2e6,1e8", "normal stiffnesses k_n in N/m (comma-separated)"},
        {"experiment.collapse_kn_max_dt", KeyType::Real, "1e-3",
         "the other k_n run for dt/t_c >= this (the first k_n for every dt)", 0.0, kInf, {}, true},
        {"experiment.eps_n", KeyType::Real, "0.9875", "normal restitution eps_n (eq. 8; the paper's value)", 0.0, 1.0,
         {}, true},
        {"experiment.kt_over_kn", KeyType::Real, "0.333333333333333", "k_t/k_n (nu_t/nu_n the same unless et_over_en)",
         0.0, kInf, {}, true},
        {"experiment.et_over_en", KeyType::Real, "0",
         "eps_t/eps_n: nu_t from eq. 8 with k_t (0: nu_t/nu_n = k_t/k_n, which gives 1.0053 at the defaults)", 0.0,
         kInf},
        {"experiment.mu", KeyType::Real, "500", "friction coefficient (500: the contact never slides)", 0.0, kInf},
        {"experiment.fit_from", KeyType::Real, "0",
         "start of the fit window in slow decay times of the linear system (0: once the fast mode's share is 1e-4)",
         0.0, kInf},
        {"experiment.fit_length", KeyType::Real, "2", "length of the fit window in slow decay times", 0.0, kInf, {},
         true},
        {"experiment.extra_min_dt", KeyType::Real, "1e-4",
         "Fig. 5's mu = 0 inset and Fig. 7b run the dt/t_c of the list that are >= this", 0.0, kInf, {}, true},
        {"experiment.mu_list", KeyType::Text, "0.05,0.1,0.2,0.3,0.5,1,2,500",
         "friction coefficients of Figs. 7b and 8a (no rotation)"},
        {"experiment.kt_list", KeyType::Text, "0.1,0.2,0.333333333333333,0.5,0.7,1",
         "k_t/k_n of Fig. 8b (eps_t/eps_n = 1.0053)"},
        {"experiment.et_list", KeyType::Text, "0.995,1,1.0053,1.008,1.01", "eps_t/eps_n of Fig. 8c (k_t/k_n = 1/3)"},
        {"experiment.sweep_dt", KeyType::Real, "1e-5", "dt/t_c of Figs. 8a-c (the paper's)", 0.0, kInf, {}, true},
        {"experiment.sweeps", KeyType::Bool, "true", "run Figs. 7b and 8a-c"},
        {"experiment.rotation_sweep_dt", KeyType::Real, "1e-4",
         "dt/t_c of Fig. 8a's mu sweep with rotation (the paper: no change of t_R with mu there); 0: not run", 0.0,
         kInf},
        {"experiment.kt_dts", KeyType::Text, "1e-3,1e-4",
         "further dt/t_c of Fig. 8b's k_t/k_n sweep (the paper: convergence in dt faster as k_t/k_n -> 1); empty: none"},
        {"experiment.grains", KeyType::Choice, "disks",
         "disks: Figs. 5-9; polygons: Fig. 10, two squares in face contact, Cundall's spring against the geometric "
         "update without rotation, over the steps of experiment.dt_over_tc down to experiment.extra_min_dt",
         0, 0, {"disks", "polygons"}},
    };
    const Scene scene = experimentKeys("relaxation-time", options.sets, keys);
    std::vector<double> dts = parseList(sceneText(scene, "experiment.dt_over_tc"), "experiment.dt_over_tc");
    const std::vector<double> kns = parseList(sceneText(scene, "experiment.kn"), "experiment.kn");
    const std::vector<double> muList = parseList(sceneText(scene, "experiment.mu_list"), "experiment.mu_list");
    const std::vector<double> ktList = parseList(sceneText(scene, "experiment.kt_list"), "experiment.kt_list");
    const std::vector<double> etList = parseList(sceneText(scene, "experiment.et_list"), "experiment.et_list");
    const double collapseMin = sceneReal(scene, "experiment.collapse_kn_max_dt");
    const double fitFrom = sceneReal(scene, "experiment.fit_from");
    const double fitLength = sceneReal(scene, "experiment.fit_length");
    const double extraMin = sceneReal(scene, "experiment.extra_min_dt");
    const double sweepDt = sceneReal(scene, "experiment.sweep_dt");
    const bool sweeps = sceneBool(scene, "experiment.sweeps");
    const double rotationSweepDt = sceneReal(scene, "experiment.rotation_sweep_dt");
    const bool rotationSweep = rotationSweepDt > 0.0;
    const std::vector<double> ktDts = sceneText(scene, "experiment.kt_dts").empty()
                                          ? std::vector<double>{}
                                          : parseList(sceneText(scene, "experiment.kt_dts"), "experiment.kt_dts");
    RelaxParams base;
    base.kn = kns[0];
    base.epsN = sceneReal(scene, "experiment.eps_n");
    base.ktRatio = sceneReal(scene, "experiment.kt_over_kn");
    base.etRatio = sceneReal(scene, "experiment.et_over_en");
    base.mu = sceneReal(scene, "experiment.mu");
    auto checkEt = [&](double ratio, const std::string& key) {
        if (ratio * base.epsN >= 1.0)
            throw InputError("relaxation-time: key '" + key + "': eps_t/eps_n must stay below 1/eps_n = " +
                             std::to_string(1.0 / base.epsN) + " (eps_t < 1)");
    };
    checkEt(base.etRatio, "experiment.et_over_en");
    for (double r : etList) checkEt(r, "experiment.et_list");
    std::sort(dts.begin(), dts.end(), std::greater<>());
    const auto start = std::chrono::steady_clock::now();

    // Every run, then all of them at once (each is independent: the same
    // bits for any thread count).
    std::vector<Job> jobs;
    auto add = [&](const std::string& study, const std::string& variant, const RelaxParams& p, bool geometric,
                   Freedom freedom, double dt) {
        Job j{study, variant, p, geometric, freedom, dt, study == "fig10", {}, kNaN, {}, kNaN, 0.0};
        const PairConstants c = constantsOf(p);
        const Modes m = linearModes(c, j.polygons ? kSquareStiffness * p.kn : p.kn, freedom, p.mu > 0.0);
        j.linear = m.slow / c.tc;
        j.window = fitWindow(m, c.tc, fitFrom, fitLength);
        jobs.push_back(j);
    };
    const bool polygons = sceneText(scene, "experiment.grains") == "polygons";
    if (polygons) {
        std::vector<double> ran;
        for (double dt : dts)
            if (dt >= extraMin) ran.push_back(dt);
        dts = ran;
        for (bool geometric : {false, true})
            for (double dt : dts)
                add("fig10", geometric ? "geometric_norot" : "cundall_norot", base, geometric, Freedom::NoRotation, dt);
    }
    const Freedom freedoms[] = {Freedom::Both, Freedom::NoRotation, Freedom::RotationOnly};
    if (!polygons)
        for (bool geometric : {false, true})
            for (Freedom f : freedoms)
                for (std::size_t q = 0; q < kns.size(); ++q)
                    for (double dt : dts) {
                        if (q > 0 && dt < collapseMin) continue;
                        RelaxParams p = base;
                        p.kn = kns[q];
                        add("grid", std::string(geometric ? "geometric" : "cundall") + freedomSuffix(f), p, geometric, f,
                            dt);
                    }
    RelaxParams frictionless = base;
    frictionless.mu = 0.0;
    for (double dt : dts)
        if (dt >= extraMin && !polygons) add("mu0", "cundall_mu0", frictionless, false, Freedom::Both, dt);
    if (sweeps && !polygons) {
        for (double mu : muList) {
            RelaxParams p = base;
            p.mu = mu;
            for (double dt : dts)
                if (dt >= extraMin) add("fig7b", "cundall_norot", p, false, Freedom::NoRotation, dt);
            add("fig8a", "cundall_norot", p, false, Freedom::NoRotation, sweepDt);
            if (rotationSweep) add("fig8a_rot", "cundall", p, false, Freedom::Both, rotationSweepDt);
        }
        for (double kt : ktList) {
            RelaxParams p = base;
            p.ktRatio = kt;
            p.etRatio = 1.0053;
            add("fig8b", "cundall_norot", p, false, Freedom::NoRotation, sweepDt);
            for (double dt : ktDts) add("fig8b_dt", "cundall_norot", p, false, Freedom::NoRotation, dt);
        }
        for (double et : etList) {
            RelaxParams p = base;
            p.etRatio = et;
            add("fig8c", "cundall_norot", p, false, Freedom::NoRotation, sweepDt);
        }
    }
    // Longest first, so that the last runs to finish are short ones.
    std::vector<std::size_t> order(jobs.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return jobs[a].window.to / jobs[a].dt > jobs[b].window.to / jobs[b].dt;
    });
    std::exception_ptr failure;
    const auto count = static_cast<std::int64_t>(jobs.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < count; ++k) {
        Job& j = jobs[order[static_cast<std::size_t>(k)]];
        try {
            j.maxima = relax(j.p, j.geometric, j.freedom, j.dt, j.window.to, j.polygons);
            j.tr = fitRelaxation(j.maxima, j.window, j.r2);
        } catch (...) {
#pragma omp critical(relaxation_time_failure)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);

    long totalSteps = 0;
    int failedFits = 0;
    double minR2 = 1.0;
    for (const Job& j : jobs) {
        totalSteps += j.maxima.steps;
        minR2 = std::min(minR2, j.r2);
        if (!std::isfinite(j.tr)) ++failedFits;
    }
    auto find = [&](const std::string& study, const std::string& variant, double kn, double dt) -> const Job* {
        for (const Job& j : jobs)
            if (j.study == study && j.variant == variant && j.p.kn == kn && j.dt == dt) return &j;
        return nullptr;
    };
    auto series = [&](const std::string& study, const std::string& variant, double kn) {
        std::vector<double> out;
        for (double dt : dts) {
            const Job* j = find(study, variant, kn, dt);
            out.push_back(j ? j->tr : kNaN);
        }
        return out;
    };
    auto json = [](const std::vector<double>& x) {
        nlohmann::json a = nlohmann::json::array();
        for (double d : x) a.push_back(numberOrNull(d));
        return a;
    };
    if (polygons) return polygonFigure(options, jobs, dts, totalSteps, failedFits, minR2);

    nlohmann::json results;
    results["dt_over_tc"] = dts;
    results["kn"] = kns;
    const std::string variants[] = {"cundall",  "cundall_norot",  "cundall_rotonly",
                                    "geometric", "geometric_norot", "geometric_rotonly"};
    std::vector<std::vector<double>> tr;  // per variant, at the first k_n
    for (const std::string& v : variants) {
        tr.push_back(series("grid", v, kns[0]));
        results["tr_" + v] = json(tr.back());
        for (std::size_t q = 1; q < kns.size(); ++q)
            results["tr_" + v + "_kn" + std::to_string(q)] = json(series("grid", v, kns[q]));
    }
    results["tr_cundall_mu0"] = json(series("mu0", "cundall_mu0", kns[0]));
    const PairConstants c0 = constantsOf(base);
    results["eps_t_over_eps_n"] = tangentialRestitution(c0) / base.epsN;
    nlohmann::json linear, windows;
    for (const std::string& v : variants) {
        const Job* j = find("grid", v, kns[0], dts.back());
        linear[v] = j->linear;
        windows[v] = {j->window.from, j->window.to};
    }
    const Job* mu0 = find("mu0", "cundall_mu0", kns[0], dts.front());
    if (mu0) linear["cundall_mu0"] = mu0->linear;
    results["tr_linear"] = linear;
    results["fit_window_tc"] = windows;
    results["total_steps"] = totalSteps;
    results["fits_below_min_r2"] = failedFits;
    results["min_r2"] = minR2;

    // Convergence: within 0.1 % of the reference, from that dt down (the paper
    // reads its T_t off log-scale plots; its resolution is not stated).
    const double tol = 1e-3;
    auto threshold = [&](const std::vector<double>& x, double ref) {
        double th = kNaN;
        for (std::size_t i = dts.size(); i-- > 0;) {
            if (!(std::abs(x[i] / ref - 1.0) <= tol)) break;
            th = dts[i];
        }
        return th;
    };
    auto spread = [&](const std::vector<double>& x) {
        double lo = kInf, hi = 0.0;
        for (double d : x) {
            if (!std::isfinite(d)) return kInf;
            lo = std::min(lo, d), hi = std::max(hi, d);
        }
        return hi / lo - 1.0;
    };
    nlohmann::json checks = nlohmann::json::array();
    // The reference is the geometric update's t_R at the finest step: flat in
    // dt, it holds the finite overlap's small departure from the linear system.
    const double thC = threshold(tr[0], tr[3].back()), thCn = threshold(tr[1], tr[4].back());
    results["converged_below_cundall"] = numberOrNull(thC);
    results["converged_below_cundall_norot"] = numberOrNull(thCn);
    results["converged_below_cundall_rotonly"] = numberOrNull(threshold(tr[2], tr[5].back()));
    checks.push_back(makeCheck(
        "Cundall (rotation): log10 of the largest dt/t_c within 0.1 % of the geometric t_R (Fig. 6: -3)",
        std::log10(thC), -3.0, 0.55, false));
    checks.push_back(makeCheck(
        "Cundall (no rotation): log10 of the largest dt/t_c within 0.1 % of the geometric t_R (Fig. 7a: -4)",
        std::log10(thCn), -4.0, 0.55, false));
    for (std::size_t v = 0; v < 6; ++v) {
        const double finest = tr[v].back(), ref = linear[variants[v]];
        results["finest_over_linear_" + variants[v]] = numberOrNull(finest / ref);
        checks.push_back(makeCheck(variants[v] + ": t_R at the finest dt / t_R of the linear system", finest / ref, 1.0,
                                   5e-3));
    }
    for (std::size_t v = 3; v < 6; ++v) {
        const double s = spread(tr[v]);
        results["spread_" + variants[v]] = numberOrNull(s);
        checks.push_back(
            makeCheck(variants[v] + ": t_R spread max/min - 1 over all dt (Fig. 9: flat, < 0.5 %)", s, 0.0, 5e-3,
                      false));
    }
    const std::vector<double> trMu0 = series("mu0", "cundall_mu0", kns[0]);
    {
        std::vector<double> ran;
        for (std::size_t i = 0; i < dts.size(); ++i)
            if (dts[i] >= extraMin) ran.push_back(trMu0[i]);
        const double s = spread(ran);
        results["spread_cundall_mu0"] = numberOrNull(s);
        checks.push_back(makeCheck("Cundall, mu = 0: t_R spread over dt (Fig. 5 inset: no dt dependence, < 0.5 %)", s,
                                   0.0, 5e-3, false));
    }
    double collapse = 0.0;
    for (const std::string& v : variants)
        for (std::size_t q = 1; q < kns.size(); ++q)
            for (double dt : dts) {
                const Job *a = find("grid", v, kns[q], dt), *b = find("grid", v, kns[0], dt);
                if (a && b && std::isfinite(a->tr) && std::isfinite(b->tr))
                    collapse = std::max(collapse, std::abs(a->tr / b->tr - 1.0));
            }
    results["collapse_max_rel_dev"] = collapse;
    if (kns.size() > 1)
        checks.push_back(makeCheck("t_R(k_n)/t_R(first k_n) at equal dt/t_c, max deviation (collapse, Figs. 6, 7a)",
                                   collapse, 0.0, 0.01, false));
    checks.push_back(makeCheck("consistency (follows from the setup): t_R without rotation / with rotation at the "
                               "finest step (< 1, Fig. 7a vs 6)",
                               tr[1].back() / tr[0].back(), 0.5, 0.5, false));
    checks.push_back(makeCheck("fits with R^2 < 0.9 (no t_R reported for them)", failedFits, 0.0, 0.0, false));

    // Figs. 7b and 8a-c.
    std::ostringstream sweepCsv;
    sweepCsv << std::setprecision(10) << "study,mu,kt_over_kn,et_over_en,dt_over_tc,t_r,t_r_linear,r2\n";
    if (sweeps) {
        nlohmann::json fig7b = nlohmann::json::object(), fig8a = nlohmann::json::array();
        nlohmann::json fig8aRot = nlohmann::json::array(), fig8bDt = nlohmann::json::array();
        nlohmann::json fig8b = nlohmann::json::array(), fig8c = nlohmann::json::array();
        std::vector<double> kx, ky, ex, ey;
        double worst8 = 0.0;
        for (const Job& j : jobs) {
            if (j.study.rfind("fig", 0) != 0) continue;
            const double et = j.p.etRatio > 0.0 ? j.p.etRatio : tangentialRestitution(constantsOf(j.p)) / j.p.epsN;
            sweepCsv << j.study << ',' << j.p.mu << ',' << j.p.ktRatio << ',' << et << ',' << j.dt << ',' << j.tr << ','
                     << j.linear << ',' << j.r2 << '\n';
            const nlohmann::json row = {{"mu", j.p.mu}, {"kt_over_kn", j.p.ktRatio}, {"et_over_en", et},
                                        {"t_r", numberOrNull(j.tr)}, {"t_r_linear", j.linear}, {"r2", j.r2}};
            if (j.study == "fig7b") {
                std::ostringstream key;
                key << j.p.mu;
                fig7b[key.str()].push_back(numberOrNull(j.tr));
            }
            if (j.study == "fig8a") fig8a.push_back(row);
            if (j.study == "fig8a_rot") fig8aRot.push_back(row);
            if (j.study == "fig8b_dt") {
                nlohmann::json r = row;
                r["dt_over_tc"] = j.dt;
                fig8bDt.push_back(r);
            }
            if (j.study == "fig8b" || j.study == "fig8c") {
                worst8 = std::max(worst8, std::isfinite(j.tr) ? std::abs(j.tr / j.linear - 1.0) : kInf);
                (j.study == "fig8b" ? fig8b : fig8c).push_back(row);
                if (j.study == "fig8b") kx.push_back(std::log(j.p.ktRatio)), ky.push_back(j.tr);
                else ex.push_back(et), ey.push_back(std::log(j.tr));
            }
        }
        results["fig7b_tr_by_mu"] = fig7b;
        results["fig8a"] = fig8a;
        results["fig8b"] = fig8b;
        results["fig8c"] = fig8c;
        results["fig8bc_max_rel_dev_from_linear"] = worst8;
        // The paper's shapes: t_R "logarithmically decreases" with k_t/k_n (a
        // line in ln(k_t/k_n)), and depends "approximately exponential[ly]" on
        // ε_t/ε_n (ln t_R a line in it): slope and R² of each line.
        auto line = [](const std::vector<double>& x, const std::vector<double>& y) {
            const LineFit fit = lineFitR2(x, y);
            return nlohmann::json{{"slope", fit.slope}, {"r2", fit.r2}};
        };
        if (kx.size() > 2) results["fig8b_tr_vs_ln_kt"] = line(kx, ky);
        if (ex.size() > 2) results["fig8c_ln_tr_vs_et"] = line(ex, ey);
        // t_R max/min over the rows of a μ sweep that have a t_R.
        auto maxOverMin = [](const nlohmann::json& rows) {
            double lo = kInf, hi = 0.0;
            for (const auto& row : rows)
                if (!row["t_r"].is_null()) {
                    lo = std::min(lo, row["t_r"].get<double>());
                    hi = std::max(hi, row["t_r"].get<double>());
                }
            return hi / lo;
        };
        const double spread8a = maxOverMin(fig8a);
        results["fig8a_tr_max_over_min"] = spread8a;
        checks.push_back(makeCheck("Fig. 8a: t_R max/min over mu (the paper: a change of t_R around mu = 1, > 1.05)",
                                   spread8a, 1e6, 1e6 - 1.05, false));
        if (rotationSweep) {
            // With rotation the paper finds no such change (§3, after Fig. 8a).
            const double spreadRot = maxOverMin(fig8aRot);
            results["fig8a_rotation"] = fig8aRot;
            results["fig8a_rotation_tr_max_over_min"] = spreadRot;
            checks.push_back(makeBoundCheck(
                "Fig. 8a with rotation: t_R max/min over mu (the paper: no change with rotation, < 1.05)", spreadRot,
                1.05, false));
        }
        if (!fig8bDt.empty()) {
            // "Convergence in dt is faster as k_t/k_n -> 1": at each further dt,
            // the error of t_R against the linear system at the largest k_t/k_n
            // over that at the smallest.
            results["fig8b_by_dt"] = fig8bDt;
            nlohmann::json ratios = nlohmann::json::object();
            for (double dt : ktDts) {
                double eLo = kNaN, eHi = kNaN, kLo = kInf, kHi = -kInf;
                for (const auto& row : fig8bDt) {
                    if (row["dt_over_tc"].get<double>() != dt || row["t_r"].is_null()) continue;
                    const double k = row["kt_over_kn"].get<double>();
                    const double e = std::abs(row["t_r"].get<double>() / row["t_r_linear"].get<double>() - 1.0);
                    if (k < kLo) kLo = k, eLo = e;
                    if (k > kHi) kHi = k, eHi = e;
                }
                std::ostringstream key;
                key << dt;
                ratios[key.str()] = numberOrNull(eHi / eLo);
                checks.push_back(makeBoundCheck("Fig. 8b at dt/t_c = " + key.str() +
                                                    ": error of t_R at the largest k_t/k_n over that at the smallest "
                                                    "(the paper: convergence faster as k_t/k_n -> 1, < 1)",
                                                eHi / eLo, 1.0, false));
            }
            results["fig8b_error_ratio_high_over_low_kt"] = ratios;
        }
        checks.push_back(makeCheck("Figs. 8b, c (no sliding): t_R / t_R of the linear system, max deviation", worst8,
                                   0.0, 5e-3, false));
    }

    const double seconds = secondsSince(start);
    results["seconds"] = seconds;
    nlohmann::json params = {{"radius", kRadius},
                             {"mass", kMass},
                             {"inertia", "m a^2/2"},
                             {"eps_n", base.epsN},
                             {"kt_over_kn", base.ktRatio},
                             {"nu_t", base.etRatio > 0.0 ? "from eps_t by eq. 8" : "nu_t/nu_n = k_t/k_n"},
                             {"mu", base.mu},
                             {"force", "F = -1e-3 k_n a x"},
                             {"angle_deg", 45.0},
                             {"integrator", "gear5"},
                             {"fit", "ln E_k at its local maxima over a window from the linear system's modes"},
                             {"min_r2", kMinR2},
                             {"convergence_tolerance", tol}};
    if (options.writeFiles) {
        std::filesystem::create_directories(options.outDir);
        std::ostringstream csv, ek;
        csv << std::setprecision(10) << "variant,kn,dt_over_tc,t_r,t_r_linear,r2,fit_from,fit_to,steps\n";
        ek << std::setprecision(8) << "variant,dt_over_tc,t_over_tc,ek\n";
        for (const Job& j : jobs) {
            if (j.study != "grid" && j.study != "mu0") continue;
            csv << j.variant << ',' << j.p.kn << ',' << j.dt << ',' << j.tr << ',' << j.linear << ',' << j.r2 << ','
                << j.window.from << ',' << j.window.to << ',' << j.maxima.steps << '\n';
            if ((j.variant == "cundall" || j.variant == "cundall_mu0") && j.p.kn == kns[0])
                for (std::size_t i = 0; i < j.maxima.t.size(); ++i)
                    ek << j.variant << ',' << j.dt << ',' << j.maxima.t[i] << ',' << j.maxima.ek[i] << '\n';
        }
        writeFileAtomically(options.outDir / "relaxation_time.csv", csv.str());
        writeFileAtomically(options.outDir / "relaxation_time_ek.csv", ek.str());
        writeFileAtomically(options.outDir / "relaxation_time_sweeps.csv", sweepCsv.str());
        runPlotScript("relaxation_time", {options.outDir.string(), (options.outDir / "relaxation_time.png").string()},
                      options.quiet);
    }
    return {{"experiment", "relaxation-time"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
