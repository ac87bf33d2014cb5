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
#include <array>
#include <chrono>
#include <cmath>
#include <exception>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/analysis/steady_state.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Kind { CdConverged, CdFixed, MdStiff, MdMapped };

struct MethodSpec {
    std::string name;  ///< cd_converged, cd_ni40, md_kappa1e4, md_mapped_ni40
    Kind kind = Kind::CdFixed;
    double value = 0.0;  ///< N_I (cd_ni, md_mapped_ni) or κ (md_kappa)
    bool cd() const { return kind == Kind::CdConverged || kind == Kind::CdFixed; }
};

/// The number `text` spells, whole; NaN when it is not one.
double wholeNumber(const std::string& text) {
    std::size_t used = 0;
    double v = kNaN;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        return kNaN;
    }
    return used == text.size() ? v : kNaN;
}

MethodSpec parseMethod(const std::string& name) {
    auto number = [&](const std::string& prefix) {
        const double v = wholeNumber(name.substr(prefix.size()));
        if (!(v > 0.0))
            throw InputError("mu-of-i: key 'experiment.methods': '" + name +
                             "' is not a method (allowed: cd_converged, cd_ni<N>, md_kappa<k>, md_mapped_ni<N>, "
                             "e.g. cd_ni40 md_kappa1e4 md_mapped_ni40)");
        return v;
    };
    if (name == "cd_converged") return {name, Kind::CdConverged, 0.0};
    if (name.rfind("md_mapped_ni", 0) == 0) return {name, Kind::MdMapped, std::round(number("md_mapped_ni"))};
    if (name.rfind("cd_ni", 0) == 0) return {name, Kind::CdFixed, std::round(number("cd_ni"))};
    if (name.rfind("md_kappa", 0) == 0) return {name, Kind::MdStiff, number("md_kappa")};
    number(" ");  // throws with the list of what is allowed
    return {};
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

struct Options {
    int dimension = 2;
    long particles = 0;
    double mu = 0.4, polydispersity = 0.2;
    double strainPerStep = 2e-3;      ///< CD: γ̇ Δt ...
    double cdDtMax = 0.1;             ///< ... but Δt at most this (units of d √(ρ/P))
    double cdEpsilon = 1e-2;          ///< cd_converged: criterion ε
    bool cdLocal = true;              ///< cd_converged: local criterion (eq. 35), else global (eq. 36)
    double convergedMinI = 0.01;      ///< cd_converged runs at I >= this (cost)
    double restitution = 0.1;         ///< MD stiffness levels: e_n of a mean pair
    double ktOverKn = 0.5;            ///< MD stiffness levels
    double stepsPerContact = 10.0;    ///< MD stiffness levels: t_c / Δt (lightest pair)
    double dampingStep = 0.5;         ///< MD mapped: γ Δt_MD / m_eff
    double maxStepsPerStrain = 2e5;   ///< MD runs needing more are skipped
    double minStrain = 2.0, maxStrain = 8.0, chunkStrain = 0.5;
    double samplesPerStrain = 200.0;
    double servoGain = 0.5;           ///< the servo's strain rate per relative stress error, over γ̇
    double servoFilter = 0.05;        ///< the servo's averaging strain
    double fitMaxI = 0.1;
    std::uint64_t seed = 1;
};

/// One run: a method at one inertial number.
struct FlowPoint {
    double inertial = 0.0;
    bool ran = false;
    std::string note;  ///< why it did not run
    double mu = kNaN, muError = kNaN, phi = kNaN, phiError = kNaN;
    double pressureRatio = kNaN, pressureError = kNaN;  ///< ⟨σ_yy⟩ / P over the steady part
    double coordination = kNaN, overlap = kNaN;  ///< mean; overlap over d
    double strain = 0.0, steadyStrain = 0.0;
    bool steady = false;
    long steps = 0;
    double seconds = 0.0, sweeps = 0.0;  ///< CD: mean sweeps per step
    double kappa = kNaN;                 ///< MD: k_n / P (mapped: for a mean pair)
    double dt = 0.0;                     ///< the method's time step
};

struct MethodRun {
    MethodSpec spec;
    std::vector<FlowPoint> points;
    LineFit muFit, phiFit;
    std::vector<std::array<double, 5>> trace;  ///< I, strain, mu, phi, sigma_yy (samples)
    double seconds = 0.0;
};

double grainArea(const World& w, int dim) {
    double a = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i)
        a += dim == 2 ? M_PI * w.radius[i] * w.radius[i] : 4.0 / 3.0 * M_PI * std::pow(w.radius[i], 3);
    return a;
}

double cellSize(const World& w, int dim) {
    double v = 1.0;
    for (int k = 0; k < dim; ++k) v *= w.boxMax[k] - w.boxMin[k];
    return v;
}

/// The prepared packing: a random gas of the polydisperse grains compressed
/// without friction (CD, 40 sweeps) to a solid fraction just below jamming.
Scene preparePacking(const Options& o) {
    const int dim = o.dimension;
    const double rMin = 0.5 * (1.0 - o.polydispersity), rMax = 0.5 * (1.0 + o.polydispersity);
    // Mean grain area (2D) or volume (3D) for radii uniform in [rMin, rMax].
    auto meanPower = [&](int n) {
        return rMax > rMin ? (std::pow(rMax, n + 1) - std::pow(rMin, n + 1)) / ((n + 1) * (rMax - rMin))
                           : std::pow(rMin, n);
    };
    const double meanR2 = meanPower(2), meanR3 = meanPower(3);
    const double solid = static_cast<double>(o.particles) * (dim == 2 ? M_PI * meanR2 : 4.0 / 3.0 * M_PI * meanR3);
    const double gas = dim == 2 ? 0.35 : 0.2, target = dim == 2 ? 0.76 : 0.56;
    const double side = dim == 2 ? std::sqrt(solid / gas) : std::cbrt(solid / gas);
    std::ostringstream ini;
    ini << std::setprecision(17) << "[simulation]\nmethod = cd\ndimension = " << dim << "\ndt = 0.02\nseed = " << o.seed
        << "\ngravity = 0 0 0\n[contact]\nmu = 0\nmargin = 0.05\n[cd]\niterations = 40\n"
        << "[grains]\nsource = random\ndensity = 1\ninertia = " << (dim == 2 ? "disk" : "sphere") << '\n'
        << "[random]\ncount = " << o.particles << "\nr_min = " << rMin << "\nr_max = " << rMax
        << "\nbox_min = 0 0 0\nbox_max = " << side << ' ' << side << ' ' << (dim == 2 ? 0.0 : side) << '\n'
        << "[periodic]\naxes = " << (dim == 2 ? "xy" : "xyz") << "\nbox_min = 0 0 0\nbox_max = " << side << ' '
        << side << ' ' << (dim == 2 ? 0.0 : side) << '\n';
    Simulation sim(loadSceneText(ini.str(), "mu-of-i", {}, {}));
    World& w = sim.world();
    const double rate = -0.05;  // per unit time: 1/20 of the pressure's time scale
    sim.setCellRates(dim == 2 ? Vec3(rate, rate, 0.0) : Vec3::Constant(rate), 0.0, "mu-of-i");
    for (long k = 0; grainArea(w, dim) / cellSize(w, dim) < target; ++k) {
        sim.advance();
        if (k > 1000000) throw std::runtime_error("mu-of-i: the preparation did not reach its solid fraction");
    }
    Scene scene = sim.scene();
    scene.world = sim.world();
    scene.world.strainRate = Vec3::Zero();
    scene.world.muGrain = o.mu;
    for (std::size_t i = 0; i < scene.world.numGrains; ++i) {
        scene.world.v[i] = Vec3::Zero();
        scene.world.w[i] = Vec3::Zero();
    }
    return scene;
}

double meanPairMass(const World& w) {
    double m = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) m += w.mass[i];
    return 0.5 * m / static_cast<double>(w.numGrains);
}

double lightestPairMass(const World& w) {
    double m = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < w.numGrains; ++i) m = std::min(m, w.mass[i]);
    return 0.5 * m;
}

/// The scene of `method` at inertial number I around `world` (CD: Δt from
/// the strain per step; MD mapped: κ, γ of eqs. 67–68 from that Δt).
Scene methodScene(const Scene& base, const World& world, const MethodSpec& m, double I, const Options& o,
                  FlowPoint& p) {
    Scene s = base;
    s.world = world;
    s.world.shearRate = I;
    s.world.strainRate = Vec3::Zero();
    s.simulation.margin = 0.05;
    s.simulation.skin = 0.2;
    const double dtCd = std::min(o.strainPerStep / I, o.cdDtMax);
    switch (m.kind) {
        case Kind::CdConverged:
            s.simulation.method = Method::CD;
            s.cd.criterion = o.cdLocal ? Criterion::Local : Criterion::Global;
            s.cd.epsilon = o.cdEpsilon;
            s.cd.maxIterations = 100000;
            s.simulation.dt = dtCd;
            break;
        case Kind::CdFixed:
            s.simulation.method = Method::CD;
            s.cd.criterion = Criterion::Fixed;
            s.cd.iterations = static_cast<int>(m.value);
            s.simulation.dt = dtCd;
            break;
        case Kind::MdStiff: {
            s.simulation.method = Method::MD;
            MdSettings& md = s.md;
            md.normal = NormalLaw::Linear;
            md.meff = EffectiveMass::Damping;  // γ a rate: F = −k ξ − m_eff γ ξ̇
            md.kn = m.value;                   // κ P (P = 1; 3D: κ P d, d = 1)
            const double ln = std::log(o.restitution);
            const double zeta = -ln / std::sqrt(M_PI * M_PI + ln * ln);
            md.gammaN = 2.0 * zeta * std::sqrt(md.kn / meanPairMass(world));
            md.tangential = TangentialLaw::Spring;
            md.kt = o.ktOverKn * md.kn;
            md.gammaT = 0.0;
            md.substeps = 1;
            s.simulation.dt = M_PI * std::sqrt(lightestPairMass(world) / md.kn) / o.stepsPerContact;
            p.kappa = m.value;
            break;
        }
        case Kind::MdMapped: {
            s.simulation.method = Method::MD;
            MdSettings& md = s.md;
            const double q = qRandomSweep(), ni = m.value;
            md.normal = NormalLaw::Linear;
            md.meff = EffectiveMass::Both;  // κ_c = 2 q m_eff N_I/Δt², γ_c = 2 q m_eff N_I/Δt
            md.kn = 2.0 * q * ni / (dtCd * dtCd);
            md.gammaN = 2.0 * q * ni / dtCd;
            // CD's sticking friction relaxes with the tangential mass of
            // eq. 18: m_eff/3 for disks (I = m r²/2), 2 m_eff/7 for spheres.
            const double ratio = o.dimension == 2 ? 1.0 / 3.0 : 2.0 / 7.0;
            md.tangential = TangentialLaw::Spring;
            md.kt = ratio * md.kn;
            md.gammaT = ratio * md.gammaN;
            md.substeps = 1;
            s.simulation.dt = dtCd / std::ceil(2.0 * q * ni / o.dampingStep);
            p.kappa = md.kn * meanPairMass(world);
            break;
        }
    }
    if (!m.cd()) s.md.clipAttractive = true;
    p.dt = s.simulation.dt;
    return s;
}

/// Runs `sim` at inertial number I (shear rate I, servo on y holding
/// σ_yy = 1) in chunks of strain until MSER finds the transient over in
/// both −σ_xy and φ with at least minStrain done, or maxStrain is reached.
void runFlow(Simulation& sim, double I, const Options& o, FlowPoint& p, MethodRun& run) {
    const auto t0 = std::chrono::steady_clock::now();
    // The height's servo reads σ_yy averaged over a strain of servo_filter
    // (exponentially): a CD step's stress is impulsive and heavy-tailed, and
    // a servo on the raw value, clipped, holds the wrong mean. Unclipped and
    // linear in the filtered stress, it holds ⟨σ_yy⟩ = P exactly once the
    // height is steady (the mean strain rate is zero).
    const double dt = sim.scene().simulation.dt;
    const double weight = std::min(1.0, I * dt / o.servoFilter);
    // At most the shear rate, and (CD) at most a fifth of the detection
    // margin per step at the cell's faces: contacts the step does not know
    // of cannot stop the grains' approach.
    const World& w = sim.world();
    const double maxRate =
        std::min(I, 0.2 * sim.scene().simulation.margin / ((w.boxMax[1] - w.boxMin[1]) * dt));
    Mat3 stress = sim.cellStress();
    double filtered = stress(1, 1) > 0.0 ? stress(1, 1) : 1.0;
    const long sampleEvery = std::max(1L, std::lround(1.0 / (o.samplesPerStrain * I * dt)));
    const long chunk = std::max(1L, std::lround(o.chunkStrain / (I * dt)));
    // Samples: the stress averaged over the steps since the last sample (a
    // time average, as the servo sees it), the rest at the sample's step.
    std::vector<double> sxy, syy, phi, z, ov;
    Mat3 window = Mat3::Zero();
    long sweeps = 0, inWindow = 0;
    std::size_t start = 0;
    for (;;) {
        for (long k = 0; k < chunk; ++k) {
            filtered += weight * (stress(1, 1) - filtered);
            const double rate = std::clamp(o.servoGain * I * (filtered - 1.0), -maxRate, maxRate);
            sim.setCellRates(Vec3(0.0, rate, 0.0), I, "mu-of-i");
            sweeps += sim.advance().iterations;
            stress = sim.cellStress();
            window += stress;
            ++inWindow;
            if (++p.steps % sampleEvery != 0) continue;
            const StepRecord& r = sim.measuredRecord();
            window /= static_cast<double>(inWindow);
            sxy.push_back(-window(0, 1));
            syy.push_back(window(1, 1));
            window = Mat3::Zero();
            inWindow = 0;
            phi.push_back(r.packingFraction);
            z.push_back(r.coordination);
            ov.push_back(r.meanOverlap);
            p.strain = I * dt * static_cast<double>(p.steps);
            run.trace.push_back({I, p.strain, sxy.back() / syy.back(), phi.back(), syy.back()});
        }
        p.strain = I * dt * static_cast<double>(p.steps);
        if (p.strain + 1e-9 < o.minStrain) continue;
        start = std::max(mserTruncation(sxy), mserTruncation(phi));
        p.steady = mserSettled(start, sxy.size());
        if (p.steady || p.strain + 1e-9 >= o.maxStrain) break;
    }
    const BatchMean bx = batchMean(sxy, start), by = batchMean(syy, start), bp = batchMean(phi, start);
    // μ = ⟨−σ_xy⟩ / ⟨σ_yy⟩, its error from the batch ratios.
    std::vector<double> ratios;
    for (std::size_t b = 0; b < bx.means.size(); ++b) ratios.push_back(bx.means[b] / by.means[b]);
    const BatchMean br = batchMean(ratios, 0, ratios.size());
    p.mu = bx.mean / by.mean;
    p.muError = br.error;
    p.phi = bp.mean;
    p.phiError = bp.error;
    p.pressureRatio = by.mean;
    p.pressureError = by.error;
    p.coordination = batchMean(z, start).mean;
    p.overlap = batchMean(ov, start).mean;  // d = 1
    p.steadyStrain = p.strain * static_cast<double>(sxy.size() - start) / static_cast<double>(sxy.size());
    p.sweeps = static_cast<double>(sweeps) / static_cast<double>(p.steps);
    p.ran = true;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The inertial numbers of one method, largest first, each run from the
/// last one's state (grains' fluctuations scaled with the shear rate).
MethodRun runMethod(const Scene& prepared, const MethodSpec& m, const std::vector<double>& inertial,
                    const Options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    MethodRun run;
    run.spec = m;
    World world = prepared.world;
    double last = 0.0;
    std::optional<Simulation> sim;
    for (double I : inertial) {
        FlowPoint p;
        p.inertial = I;
        Scene s = methodScene(prepared, world, m, I, o, p);
        if (m.kind == Kind::CdConverged && I < o.convergedMinI * (1.0 - 1e-9)) {
            p.note = "skipped: I < experiment.cd_converged_min_i";
            run.points.push_back(p);
            continue;
        }
        // MD cost: steps per unit strain against the budget.
        if (!m.cd() && 1.0 / (I * s.simulation.dt) > o.maxStepsPerStrain) {
            std::ostringstream note;
            note << "skipped: " << std::setprecision(3) << 1.0 / (I * s.simulation.dt)
                 << " MD steps per unit strain > experiment.md_max_steps_per_strain";
            p.note = note.str();
            run.points.push_back(p);
            continue;
        }
        for (std::size_t i = 0; i < s.world.numGrains; ++i) {
            const Vec3 u0 = last > 0.0 ? world.meanFlow(world.x[i]) : Vec3::Zero();
            const double scale = last > 0.0 ? I / last : 0.0;
            s.world.v[i] = s.world.meanFlow(s.world.x[i]) + scale * (world.v[i] - u0);
            s.world.w[i] *= scale;
        }
        if (sim && m.kind != Kind::MdMapped) {
            // Keep the contacts' memory: the same scene at a new rate.
            sim->world() = s.world;
            sim->setTimeStep(s.simulation.dt);
            sim->setCellRates(Vec3::Zero(), I, "mu-of-i");
        } else {
            sim.emplace(std::move(s));
        }
        runFlow(*sim, I, o, p, run);
        world = sim->world();
        last = I;
        run.points.push_back(p);
    }
    std::vector<double> x, ym, yp, em, ep;
    for (const FlowPoint& p : run.points)
        if (p.ran && p.inertial <= o.fitMaxI * (1.0 + 1e-9)) {
            x.push_back(p.inertial);
            ym.push_back(p.mu);
            yp.push_back(p.phi);
            em.push_back(std::max(p.muError, 1e-12));
            ep.push_back(std::max(p.phiError, 1e-12));
        }
    run.muFit = fitLine(x, ym, em);
    run.phiFit = fitLine(x, yp, ep);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return run;
}

}  // namespace

nlohmann::json muOfI(const ExperimentOptions& options) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<KeySpec> keys = {
        {"experiment.dimension", KeyType::Integer, "2", "2: disks (da Cruz et al.), 3: spheres", 2.0, 3.0},
        {"experiment.particles", KeyType::Integer, "0", "grains in the cell (0: 400 in 2D, 500 in 3D)", 0.0, 1e7},
        {"experiment.inertial_numbers", KeyType::Text, "0.316 0.178 0.1 0.0562 0.0316 0.0178 0.01 0.00316 0.001",
         "inertial numbers I = shear rate x d sqrt(rho/P), run from the largest down"},
        {"experiment.methods", KeyType::Text,
         "cd_converged cd_ni10 cd_ni40 cd_ni160 md_kappa1e3 md_kappa1e4 md_kappa1e5 md_mapped_ni10 md_mapped_ni40 "
         "md_mapped_ni160",
         "methods: cd_converged, cd_ni<N>, md_kappa<k_n/P>, md_mapped_ni<N> (kappa, gamma of CD eqs. 67-68)"},
        {"experiment.mu", KeyType::Real, "0.4", "grain friction coefficient", 0.0, inf},
        {"experiment.polydispersity", KeyType::Real, "0.2", "diameters uniform in d (1 -+ this)", 0.0, 0.9},
        {"experiment.strain_per_step", KeyType::Real, "2e-3",
         "CD: shear strain per time step (dt = this / I, at most cd_dt_max)", 0.0,
         0.1, {}, true},
        {"experiment.cd_dt_max", KeyType::Real, "0.1", "CD: time step at most this (unit d sqrt(rho/P))", 0.0, inf,
         {}, true},
        {"experiment.cd_converged_min_i", KeyType::Real, "0.01",
         "cd_converged runs only at I >= this (below, each I costs minutes)", 0.0, inf},
        {"experiment.cd_criterion", KeyType::Choice, "local", "cd_converged: criterion (CD eqs. 35, 36)", 0.0, 0.0,
         {"local", "global"}},
        {"experiment.cd_epsilon", KeyType::Real, "1e-2", "cd_converged: epsilon of the criterion",
         0.0, 1.0, {}, true},
        {"experiment.restitution", KeyType::Real, "0.1", "MD stiffness levels: normal restitution of a mean pair",
         0.0, 1.0, {}, true},
        {"experiment.kt_over_kn", KeyType::Real, "0.5", "MD stiffness levels: k_t / k_n", 0.0, inf},
        {"experiment.md_steps_per_contact", KeyType::Real, "10", "MD stiffness levels: t_c / dt, lightest pair", 1.0,
         inf},
        {"experiment.md_damping_step", KeyType::Real, "0.5", "MD mapped: gamma dt_MD / m_eff", 0.0, 2.0, {}, true},
        {"experiment.md_max_steps_per_strain", KeyType::Real, "2e5",
         "MD runs needing more steps per unit strain are skipped (cost)", 1.0, inf},
        {"experiment.min_strain", KeyType::Real, "2", "shear strain run at least at each I", 0.0, inf, {}, true},
        {"experiment.max_strain", KeyType::Real, "8", "shear strain at most at each I", 0.0, inf, {}, true},
        {"experiment.samples_per_strain", KeyType::Real, "200", "stress and solid fraction samples per unit strain",
         1.0, 1e6},
        {"experiment.servo_gain", KeyType::Real, "0.5",
         "servo: strain rate of the height per relative stress error, over the shear rate", 0.0, inf, {}, true},
        {"experiment.servo_filter", KeyType::Real, "0.05", "servo: shear strain over which it averages sigma_yy",
         0.0, inf, {}, true},
        {"experiment.fit_max_i", KeyType::Real, "0.1", "fit mu = mu_min + b I, phi = phi_max - a I over I <= this",
         0.0, inf, {}, true},
    };
    for (const std::string& set : options.sets)
        if (set.rfind("experiment.", 0) != 0)
            throw InputError("mu-of-i: '" + set.substr(0, set.find('=')) +
                             "': only experiment.* keys can be set (moreau experiment mu-of-i --help lists them)");
    const Scene keyScene =
        loadSceneText("[grains]\nsource = chain\n[chain]\ncount = 1\n", "mu-of-i", options.sets, keys);
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
    for (const std::string& w : words(sceneText(keyScene, "experiment.inertial_numbers"))) {
        const double v = wholeNumber(w);
        if (!(v > 0.0) || !(v <= 10.0))
            throw InputError("mu-of-i: key 'experiment.inertial_numbers': '" + w +
                             "' is not an inertial number (allowed: numbers in (0, 10])");
        inertial.push_back(v);
    }
    if (inertial.empty())
        throw InputError("mu-of-i: key 'experiment.inertial_numbers': empty (allowed: one or more numbers in (0, 10])");
    std::sort(inertial.begin(), inertial.end(), std::greater<>());
    std::vector<MethodSpec> methods;
    for (const std::string& w : words(sceneText(keyScene, "experiment.methods"))) methods.push_back(parseMethod(w));
    if (methods.empty()) throw InputError("mu-of-i: key 'experiment.methods': empty (allowed: cd_converged, ...)");

    const auto t0 = std::chrono::steady_clock::now();
    const Scene prepared = preparePacking(o);
    const double prepSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool progress = !options.quiet && isatty(fileno(stderr));

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
            if (progress)
                std::cerr << "\rmu-of-i: " << done << "/" << methods.size() << " methods done (" << methods[k].name
                          << ")          " << std::flush;
        }
    }
    if (progress) std::cerr << '\n';
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    nlohmann::json results = {{"inertial_number", inertial}};
    nlohmann::json details = nlohmann::json::object();
    auto numberOrNull = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
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
