#include "shear_flow.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>

#include "moreau/analysis/cd_iteration.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau::shearflow {

MethodSpec parseMethod(const std::string& name) {
    auto number = [&](const std::string& prefix) {
        const double v = parseNumber(name.substr(prefix.size())).value_or(kNaN);
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

namespace {

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

double meanPairMass(const World& w) {
    double m = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) m += w.mass[i];
    return 0.5 * m / static_cast<double>(w.numGrains);
}

double lightestPairMass(const World& w) {
    double m = kInf;
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
    p.seconds = secondsSince(t0);
}

}  // namespace

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
    run.seconds = secondsSince(t0);
    return run;
}

}  // namespace moreau::shearflow
