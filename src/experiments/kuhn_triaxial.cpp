#include "kuhn_triaxial.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "moreau/core/progress.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/clump.hpp"

namespace moreau::kuhn {

namespace {

constexpr double kRmin = 0.4e-3, kRmax = 0.6e-3;  ///< sphere radii (m)
constexpr double kDensity = 2650.0;               ///< quartz (kg/m³)

double cellVolume(const World& w) { return (w.boxMax - w.boxMin).prod(); }

double grainVolume(const World& w) {
    double v = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i)
        v += w.clumpOf(i) ? solidVolume(w, i) : 4.0 / 3.0 * M_PI * std::pow(w.radius[i], 3);
    return v;
}

Vec3 stressDiagonal(const Simulation& sim) {
    const Mat3 m = sim.cellStress();
    return {m(0, 0), m(1, 1), m(2, 2)};
}

/// q/p of a stress diagonal under triaxial loading along x₁.
double deviatorRatio(const Vec3& s) {
    const double lateral = 0.5 * (s[1] + s[2]);
    return (s[0] - lateral) / ((s[0] + 2.0 * lateral) / 3.0);
}

/// Stage 2's step: the lateral servo's target keeps p as σ₁₁ grows.
/// Returns the stress diagonal the target was set from (before the step).
Vec3 loadingStep(Simulation& sim, CellServo& servo, double p, double keep, const char* name) {
    const Vec3 s = stressDiagonal(sim);
    servo.stress = Vec3(0.0, 0.5 * (3.0 * p - s[0]), 0.5 * (3.0 * p - s[0]));
    sim.setCellServo(servo, name);
    sim.advance();
    drag(sim.world(), keep);
    return s;
}

}  // namespace

void drag(World& world, double keep) {
    for (std::size_t i = 0; i < world.numGrains; ++i) {
        const Vec3 u = world.meanFlow(world.x[i]);
        world.v[i] = u + keep * (world.v[i] - u);
        world.w[i] *= keep;
    }
}

double slidingShare(const Simulation& sim, double mu) {
    const World& w = sim.world();
    long all = 0, sliding = 0;
    for (const Contact& c : sim.contacts()) {
        if (w.isWall(c.b) || c.history.reaction == Vec3::Zero()) continue;
        const double fn = std::abs(c.history.reaction.dot(c.n));
        const double ft = (c.history.reaction - c.history.reaction.dot(c.n) * c.n).norm();
        ++all;
        if (ft >= (1.0 - 1e-5) * mu * fn) ++sliding;
    }
    return all > 0 ? static_cast<double>(sliding) / static_cast<double>(all) : 0.0;
}

double prepFriction(const Scene& keys, bool clusters) {
    const std::string text = sceneText(keys, "experiment.prep_mu");
    if (text == "auto") return clusters ? kClusterPrepMu : 0.0;
    char* end = nullptr;
    const double mu = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(mu >= 0.0) || !std::isfinite(mu))
        throw InputError("key 'experiment.prep_mu': '" + text + "' is not a friction coefficient (allowed: auto or a "
                         "number >= 0)");
    return mu;
}

TriaxialState prepareTriaxial(const TriaxialOptions& o) {
    const double kStiffness = o.stiffness;
    const auto t0 = std::chrono::steady_clock::now();
    const double meanR3 = (std::pow(kRmax, 4) - std::pow(kRmin, 4)) / (4.0 * (kRmax - kRmin));
    const double solid = static_cast<double>(o.particles) * 4.0 / 3.0 * M_PI * meanR3;
    double side = std::cbrt(solid / 0.33);  // loose random packing, solid fraction 0.33
    double mMin = kDensity * 4.0 / 3.0 * M_PI * std::pow(kRmin, 3);
    // Clusters: a grain's size s scales kClusterSpheres; its volume-equivalent
    // radius is s·(3V/4π)^⅓ (V the union's at size 1), drawn in [0.4, 0.6] mm
    // as the spheres'. They are placed by their bounding spheres at a
    // bounding-volume fraction of 0.3; the lightest contact moves a fraction of
    // the lightest mass (lightestContactFraction).
    double sizeOfRadius = 1.0;
    if (o.clusters) {
        const ClumpShape shape = makeClumpShape(parseClumpSpheres(kClusterSpheres, 3), 3);
        sizeOfRadius = 1.0 / std::cbrt(3.0 * shape.volume / (4.0 * M_PI));
        side = std::cbrt(solid * std::pow(shape.boundingRadius * sizeOfRadius, 3) / 0.3);
        mMin *= lightestContactFraction(shape, Vec3::Ones());
    }
    const double tn = M_PI * std::sqrt(0.5 * mMin / kStiffness);  // shortest contact duration
    const double dt = tn / 25.0;
    const double meanMass = kDensity * solid / static_cast<double>(o.particles);
    // Contact damping as rates (md.meff = damping): 40 % of critical for a
    // mean pair normally, half that tangentially (sticking contacts only).
    const double gammaN = 0.4 * 2.0 * std::sqrt(kStiffness / (0.5 * meanMass));
    const double gammaT = 0.5 * gammaN;
    const double d = kRmin + kRmax;  // mean diameter

    // The cell's stiffness per unit strain, about z φ k_n / (3π d) for
    // linear springs (z ≈ 6, φ ≈ 0.64): sets the servo gains. The slowest
    // mode of the cell, ω ≈ π c / L with c = √(K/ρφ), sets the drag: half of
    // its critical value 2ω.
    const double bulk = 6.0 * 0.64 * kStiffness / (3.0 * M_PI * d);
    const double omega = M_PI * std::sqrt(bulk / (kDensity * 0.64)) / (side * std::cbrt(0.33 / 0.64));
    const double dragRate = omega;
    const double keep = 1.0 - dragRate * dt;

    std::ostringstream ini;
    ini << std::setprecision(17) << "[simulation]\nmethod = md\ndimension = 3\ndt = " << dt
        << "\nseed = " << o.seed << "\ngravity = 0 0 0\n"
        << "[contact]\nmu = 0\nmargin = 0.1\nskin = 0.3\n"
        << "[md]\nnormal = linear\nkn = " << kStiffness << "\nkt = " << kStiffness << "\ngamma_n = " << gammaN
        << "\ngamma_t = " << gammaT << "\nmeff = damping\ntangential = kuhn\n"
        << "[grains]\nsource = random\ndensity = " << kDensity << "\ninertia = sphere\n"
        << (o.clusters ? std::string("shape = clump\n[clump]\nspheres = \"") + kClusterSpheres + "\"\n" : "")
        << "[random]\ncount = " << o.particles << "\nr_min = " << kRmin * sizeOfRadius
        << "\nr_max = " << kRmax * sizeOfRadius
        << "\nbox_min = 0 0 0\nbox_max = " << side << ' ' << side << ' ' << side << '\n'
        << "[periodic]\naxes = xyz\nbox_min = 0 0 0\nbox_max = " << side << ' ' << side << ' ' << side << '\n';
    TriaxialState st;
    st.sim.emplace(loadSceneText(ini.str(), o.name, {}, {}));
    Simulation& sim = *st.sim;
    World& world = sim.world();
    world.muGrain = 0.0;
    const double p = o.pressure;
    auto diag = [](const Mat3& m) { return Vec3(m(0, 0), m(1, 1), m(2, 2)); };
    auto status = [&](const char* stage) {
        if (progress::open()) progress::notef("%s, step %ld, p = %.4g kPa", stage, st.steps, sim.cellStress().trace() / 3e3);
    };
    auto atRest = [&](double tolerance) {
        const double elastic = sim.md().elasticEnergy();
        const double kinetic = kineticEnergy(world) + rotationalEnergy(world);
        return elastic > 0.0 && kinetic < tolerance * elastic;
    };
    const long chunk = 200, maxSteps = 2000000;

    // 0. The gas: an isotropic compression by 2e-5 per step (50/s at
    // k = 5e4 N/m) to a solid fraction of 0.58, below frictionless jamming
    // (about 0.64). Clusters start looser (placed by their bounding
    // spheres): 1e-4 per step up to 0.45, then 2e-5 to 0.5, below where
    // they jam with the preparation's friction.
    const double gasEnd = o.clusters ? 0.5 : 0.58;
    for (const auto& [rateStep, upTo] : {std::pair{1e-4, o.clusters ? 0.45 : 0.0}, std::pair{2e-5, gasEnd}}) {
        if (upTo == 0.0) continue;  // (spheres: one stage)
        sim.setCellRates(Vec3::Constant(-rateStep / dt), 0.0, o.name);
        while (grainVolume(world) / cellVolume(world) < upTo) {
            sim.advance();
            drag(world, keep);
            ++st.steps;
        }
    }
    // 1. Isotropic, with the preparation's friction (none for spheres; its
    // value sets the porosity): a proportional servo (no offset to remove:
    // the rate ends at zero) with a time constant of 300 steps at the
    // packing's stiffness, at most at an inertial number I = ε̇ d √(ρ/p)
    // of 1e-2.
    const double gain = 1.0 / (bulk * 300.0 * dt);
    CellServo servo;
    servo.axes = {true, true, true};
    servo.stress = Vec3::Constant(p);
    servo.gain = gain;
    servo.maxRate = 1e-2 / (d * std::sqrt(kDensity / p));
    sim.setCellServo(servo, o.name);
    world.muGrain = o.prepMu;
    for (;;) {
        for (long k = 0; k < chunk; ++k, ++st.steps) {
            sim.advance();
            drag(world, keep);
        }
        status("isotropic compression");
        const Vec3 s = diag(sim.cellStress());
        // Near enough: the frictionless packing creeps on for long near
        // jamming, and the triaxial stage starts slowly anyway.
        if (std::abs(s.sum() / (3.0 * p) - 1.0) < 2e-2 && (s / p - Vec3::Ones()).cwiseAbs().maxCoeff() < 5e-2 &&
            atRest(1e-2))
            break;
        if (st.steps > maxSteps)
            throw std::runtime_error(std::string(o.name) + ": the isotropic compression did not settle");
    }
    st.porosityIsotropic = 1.0 - grainVolume(world) / cellVolume(world);
    st.stepsIsotropic = st.steps;

    // 2. Drained isobaric triaxial compression along x₁ with friction:
    // ε̇₁ at an inertial number I = ε̇ d √(ρ/p) of 2e-4; x₂ and x₃ under a
    // servo (with an integral: the cell dilates) whose target keeps p.
    world.muGrain = o.mu;
    const double rate = 2e-4 / (d * std::sqrt(kDensity / p));
    servo.axes = {false, true, true};
    servo.time = 3000.0 * dt;
    st.servo = servo;
    st.strainRate = rate;
    sim.setCellRates(Vec3(-rate, world.strainRate[1], world.strainRate[2]), 0.0, o.name);
    const double length0 = world.boxMax[0] - world.boxMin[0];
    st.lengthStart = length0;
    for (;;) {
        const double ratio = deviatorRatio(loadingStep(sim, servo, p, keep, o.name));  // (before the step)
        ++st.steps;
        if (ratio >= o.qOverP) break;
        if (st.steps % 2000 == 0) status("triaxial compression");
        if (st.steps > maxSteps) throw std::runtime_error(std::string(o.name) + ": q/p did not reach its target");
    }
    st.axialStrain = 1.0 - (world.boxMax[0] - world.boxMin[0]) / length0;
    st.stepsTriaxial = st.steps;

    // 3. Hold: the servo keeps the reached stresses on all axes (q/p at the
    // target, p) while the packing comes to rest.
    const double q = o.qOverP * p;
    servo.axes = {true, true, true};
    servo.stress = Vec3(p + 2.0 * q / 3.0, p - q / 3.0, p - q / 3.0);
    sim.setCellRates(Vec3::Zero(), 0.0, o.name);
    sim.setCellServo(servo, o.name);
    world.stressErrorIntegral = Vec3::Zero();
    for (;;) {
        for (long k = 0; k < chunk; ++k, ++st.steps) {
            sim.advance();
            drag(world, keep);
        }
        status("holding");
        const Vec3 s = diag(sim.cellStress());
        if ((s - servo.stress).cwiseAbs().maxCoeff() < 1e-3 * p && atRest(1e-6)) break;
        if (st.steps > maxSteps) throw std::runtime_error(std::string(o.name) + ": the triaxial state did not settle");
    }
    // 4. The cell stops: the packing relaxes at fixed strain until its
    // stress changes by less than 1e-5 p per 1000 steps (slow sliding at the
    // contacts at the friction limit dies out).
    sim.setCellServo(CellServo{}, o.name);
    sim.setCellRates(Vec3::Zero(), 0.0, o.name);
    for (std::size_t i = 0; i < world.numGrains; ++i) world.v[i] -= world.meanFlow(world.x[i]);
    const long relaxStart = st.steps;
    for (Vec3 before = diag(sim.cellStress()); o.relax;) {
        for (long k = 0; k < 1000; ++k, ++st.steps) {
            sim.advance();
            drag(world, keep);
        }
        status("relaxing");
        const Vec3 now = diag(sim.cellStress());
        if ((now - before).cwiseAbs().maxCoeff() < 1e-5 * p) break;
        before = now;
        if (st.steps - relaxStart > 200000)
            throw std::runtime_error(std::string(o.name) + ": the packing did not relax");
    }
    st.stepsRelax = st.steps - relaxStart;
    const Vec3 s = diag(sim.cellStress());
    const double lateral = 0.5 * (s[1] + s[2]);
    st.stress = s;
    st.qOverP = (s[0] - lateral) / ((s[0] + 2.0 * lateral) / 3.0);
    st.porosity = 1.0 - grainVolume(world) / cellVolume(world);
    st.kineticOverElastic = (kineticEnergy(world) + rotationalEnergy(world)) / sim.md().elasticEnergy();
    long carrying = 0;
    double normalSum = 0.0;
    for (const Contact& c : sim.contacts())
        if (!world.isWall(c.b) && c.history.reaction != Vec3::Zero()) {
            ++carrying;
            normalSum += std::abs(c.history.reaction.dot(c.n));
        }
    st.meanNormalForce = carrying > 0 ? normalSum / static_cast<double>(carrying) : 0.0;
    st.coordination = 2.0 * static_cast<double>(carrying) / static_cast<double>(world.numGrains);
    st.slidingShare = slidingShare(sim, o.mu);
    st.dt = dt;
    st.dragRate = dragRate;
    st.stiffness = kStiffness;
    st.meanDiameter = d;
    st.seconds = secondsSince(t0);
    return st;
}

PeakResult continueToPeak(const TriaxialState& st, const TriaxialOptions& o, double maxStrain) {
    const auto t0 = std::chrono::steady_clock::now();
    Simulation sim = *st.sim;
    World& world = sim.world();
    const double keep = 1.0 - st.dragRate * st.dt;
    CellServo servo = st.servo;
    sim.setCellRates(Vec3(-st.strainRate, 0.0, 0.0), 0.0, o.name);
    PeakResult r;
    double nextPoint = 0.0;
    for (;;) {
        const double ratio = deviatorRatio(loadingStep(sim, servo, o.pressure, keep, o.name));
        ++r.steps;
        const double strain = 1.0 - (world.boxMax[0] - world.boxMin[0]) / st.lengthStart;
        if (ratio > r.qOverP) {
            r.qOverP = ratio;
            r.axialStrain = strain;
        }
        if (strain >= nextPoint) {
            r.curve.push_back({strain, ratio});
            nextPoint += 1e-4;
            progress::notef("to the peak: strain %.3g, q/p = %.3g, peak %.3g", strain, ratio, r.qOverP);
        }
        r.endStrain = strain;
        // Past the peak: 2 % below it and 0.5 % of strain beyond it.
        if (ratio < 0.98 * r.qOverP && strain > r.axialStrain + 5e-3) {
            r.passed = true;
            break;
        }
        if (strain >= maxStrain) break;
    }
    r.seconds = secondsSince(t0);
    return r;
}

}  // namespace moreau::kuhn
