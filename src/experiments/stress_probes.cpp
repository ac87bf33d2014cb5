/// Kuhn, Suzuki & Daouadji §3, Fig. 5: incremental plastic strains of
/// axisymmetric stress probes in the Rendulic plane, for the conventional
/// linear–frictional algorithm (add the elastic increment, project onto the
/// friction circle) and the paper's refined one.
///
/// The periodic triaxial state at q/p = 0.8 (kuhn_triaxial.hpp; spheres
/// instead of the paper's sphere clusters) is probed many times from the
/// same start. A probe is strain-controlled: the cell is strained by dε of
/// magnitude 6e-6 in 30 steps, in a direction θ of the Rendulic strain plane
/// (e_v = (1,1,1)/√3, e_d = (2,−1,−1)/√6; ε₂₂ = ε₃₃), the grains given the
/// mean flow at the start and relieved of it at the end. The cell is then
/// held while the packing comes to rest, which gives the stress increment
/// dσ; a stress servo brings the stress back to where it started, and the
/// strain left is the irreversible increment dε^p (stress-controlled
/// unloading, as in Kuhn & Daouadji's probes). Each probe is one point of
/// the Rendulic plane (Fig. 5a): along dσ's direction, at the distance
/// |dε^p| / |dσ|. Conventional elasto-plasticity puts the points of the
/// loading directions on a circle through the origin whose diameter is the
/// inverse of the hardening modulus (Fig. 5b); the paper finds the two
/// algorithms' moduli about 5 % apart (Fig. 5c).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include "kuhn_triaxial.hpp"
#include "moreau/core/progress.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

namespace {

using Vec2 = Eigen::Vector2d;

const double kSqrt3 = std::sqrt(3.0), kSqrt6 = std::sqrt(6.0);

/// Rendulic coordinates (volumetric, deviatoric) of an axisymmetric
/// diagonal (the lateral value the mean of axes 2 and 3).
Vec2 rendulic(const Vec3& d) {
    const double lateral = 0.5 * (d[1] + d[2]);
    return Vec2((d[0] + 2.0 * lateral) / kSqrt3, 2.0 * (d[0] - lateral) / kSqrt6);
}

/// The diagonal of Rendulic coordinates (v, s).
Vec3 fromRendulic(const Vec2& r) {
    const double lateral = r[0] / kSqrt3 - r[1] / kSqrt6;
    return Vec3(r[0] / kSqrt3 + 2.0 * r[1] / kSqrt6, lateral, lateral);
}

struct Probe {
    double theta = 0.0;          ///< strain direction in the Rendulic plane (deg)
    Vec3 strain = Vec3::Zero();  ///< applied dε (compression positive)
    Vec3 dsigma = Vec3::Zero();  ///< stress increment after the hold (Pa)
    Vec2 plastic = Vec2::Zero(); ///< irreversible dε in Rendulic coordinates
    Vec2 point = Vec2::Zero();   ///< Fig. 5a point (1/Pa)
};

struct ProbeSettings {
    double magnitude = 6e-6;
    long probeSteps = 30, holdSteps = 200;
    double keep = 1.0;  ///< drag factor per step
};

/// One strain probe from `base`: dε of `magnitude` along θ of the Rendulic
/// strain plane in probeSteps steps (the grains given the mean flow at the
/// start and relieved of it at the end), then the cell held while the
/// packing comes to rest; returns the stress increment. `frozen`: no
/// contact may slide (μ = ∞), which gives the reversible response.
Probe runProbe(const Simulation& base, const Vec3& sigma0, double thetaDeg, double magnitude, const ProbeSettings& ps,
               bool frozen) {
    Simulation sim = base;
    World& w = sim.world();
    if (frozen) w.muGrain = std::numeric_limits<double>::max();
    const double dt = sim.scene().simulation.dt;
    Probe pr;
    pr.theta = thetaDeg;
    const double th = thetaDeg * M_PI / 180.0;
    pr.strain = fromRendulic(magnitude * Vec2(std::cos(th), std::sin(th)));
    sim.setCellServo(CellServo{}, "stress-probes");
    const Vec3 rate = -pr.strain / (static_cast<double>(ps.probeSteps) * dt);  // World rates: extension positive
    sim.setCellRates(rate, 0.0, "stress-probes");
    for (std::size_t i = 0; i < w.numGrains; ++i) w.v[i] += w.meanFlow(w.x[i]);
    for (long k = 0; k < ps.probeSteps; ++k) sim.advance();
    for (std::size_t i = 0; i < w.numGrains; ++i) w.v[i] -= w.meanFlow(w.x[i]);
    sim.setCellRates(Vec3::Zero(), 0.0, "stress-probes");
    for (long k = 0; k < ps.holdSteps; ++k) {
        sim.advance();
        kuhn::drag(w, ps.keep);
    }
    const Mat3 s1 = sim.cellStress();
    pr.dsigma = Vec3(s1(0, 0), s1(1, 1), s1(2, 2)) - sigma0;
    return pr;
}

/// The locus of Fig. 5b, a circle through the origin: conventional
/// elasto-plasticity gives |dε^p| = (n·dσ)/H on the loading side (n·dσ > 0),
/// i.e. the points |dε^p|/|dσ| along dσ lie on the circle of diameter 1/H
/// along n. Fitted to the points as x² + y² = a·(x, y) (a = n/H, linear
/// least squares) over those within 60° of n (three passes, from the
/// farthest point's direction). R² of the radii against D cos(φ − φ_n) over
/// the fitted points.
struct Circle {
    double diameter = 0.0, direction = 0.0, r2 = 0.0;
    long points = 0;
};

Circle fitCircle(const std::vector<Probe>& probes) {
    Circle c;
    std::vector<Vec2> pts;
    for (const Probe& p : probes)
        if (p.point.norm() > 0.0) pts.push_back(p.point);
    Vec2 n = Vec2::UnitX();
    double far = 0.0;
    for (const Vec2& x : pts)
        if (x.norm() > far) far = x.norm(), n = x / x.norm();
    for (int pass = 0; pass < 3; ++pass) {
        Eigen::Matrix2d A = Eigen::Matrix2d::Zero();
        Vec2 rhs = Vec2::Zero();
        std::vector<Vec2> kept;
        for (const Vec2& x : pts) {
            if (x.dot(n) < 0.5 * x.norm()) continue;  // within 60° of n
            A += x * x.transpose();
            rhs += x * x.squaredNorm();
            kept.push_back(x);
        }
        if (kept.size() < 3) break;
        const Vec2 a = A.ldlt().solve(rhs);
        c.diameter = a.norm();
        c.direction = std::atan2(a[1], a[0]) * 180.0 / M_PI;
        c.points = static_cast<long>(kept.size());
        n = a / a.norm();
        double mean = 0.0, ssRes = 0.0, ssTot = 0.0;
        for (const Vec2& x : kept) mean += x.norm() / static_cast<double>(kept.size());
        for (const Vec2& x : kept) {
            const double model = x.dot(a) / x.norm();  // D cos(φ − φ_n)
            ssRes += (x.norm() - model) * (x.norm() - model);
            ssTot += (x.norm() - mean) * (x.norm() - mean);
        }
        c.r2 = ssTot > 0.0 ? 1.0 - ssRes / ssTot : 0.0;
    }
    return c;
}

}  // namespace

nlohmann::json stressProbes(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.particles", KeyType::Integer, "10648", "grains in the periodic cell", 50.0, 1e6},
        {"experiment.grains", KeyType::Choice, "clusters", "Kuhn's non-convex sphere clusters (docs/clumps.md) or spheres",
         0.0, 0.0, {"clusters", "spheres"}},
        {"experiment.prep_mu", KeyType::Text, "auto",
         "friction of the isotropic compression, which sets the porosity (auto: 0 for spheres, kClusterPrepMu for "
         "clusters, calibrated to Kuhn's porosity 0.363)", 0.0, 0.0},
        {"experiment.peak_strain", KeyType::Real, "0.05",
         "after the probes, continue the triaxial compression to the peak of q/p, up to this axial strain (0: not)",
         0.0, 1.0},
        {"experiment.probes", KeyType::Integer, "72", "probe directions per algorithm, evenly spaced", 4.0, 3600.0},
        {"experiment.probe_strain", KeyType::Real, "6e-6", "strain magnitude of a probe", 0.0, kInf, {}, true},
        {"experiment.probe_steps", KeyType::Integer, "30", "MD steps of a probe", 1.0, 1e6},
        {"experiment.hold_steps", KeyType::Integer, "200", "MD steps at rest after a probe", 0.0, 1e7},
        {"experiment.pressure", KeyType::Real, "100", "mean stress p (kPa)", 0.0, kInf, {}, true},
        {"experiment.q_over_p", KeyType::Real, "0.8", "q/p of the probed state", 0.0, 1.5},
        {"experiment.mu", KeyType::Real, "0.55", "grain-grain friction coefficient", 0.0, kInf},
        {"experiment.stiffness", KeyType::Real, "5e4", "contact stiffness k_n = k_t (N/m)", 0.0, kInf, {}, true},
        {"experiment.relax", KeyType::Bool, "false", "relax the packing in a fixed cell before probing", 0.0, 1.0},
        {"experiment.single_refinements", KeyType::Bool, "false",
         "also probe with each of Kuhn's refinements alone (contact onset, slip onset, slip rotation, projection, "
         "twirl): which one carries the difference", 0.0, 1.0},
    };
    const Scene keyScene = experimentKeys("stress-probes", options.sets, keys);
    kuhn::TriaxialOptions prep;
    prep.particles = static_cast<long>(sceneInteger(keyScene, "experiment.particles"));
    prep.pressure = 1e3 * sceneReal(keyScene, "experiment.pressure");
    prep.qOverP = sceneReal(keyScene, "experiment.q_over_p");
    prep.mu = sceneReal(keyScene, "experiment.mu");
    prep.stiffness = sceneReal(keyScene, "experiment.stiffness");
    prep.relax = sceneBool(keyScene, "experiment.relax");
    prep.clusters = sceneText(keyScene, "experiment.grains") == "clusters";
    prep.prepMu = kuhn::prepFriction(keyScene, prep.clusters);
    const double peakStrain = sceneReal(keyScene, "experiment.peak_strain");
    prep.seed = options.seed.value_or(1);
    prep.name = "stress-probes";
    const long count = static_cast<long>(sceneInteger(keyScene, "experiment.probes"));
    ProbeSettings ps;
    ps.magnitude = sceneReal(keyScene, "experiment.probe_strain");
    ps.probeSteps = static_cast<long>(sceneInteger(keyScene, "experiment.probe_steps"));
    ps.holdSteps = static_cast<long>(sceneInteger(keyScene, "experiment.hold_steps"));

    kuhn::TriaxialState st = kuhn::prepareTriaxial(prep);
    const Simulation& prepared = *st.sim;
    ps.keep = 1.0 - st.dragRate * st.dt;
    const Mat3 s0m = prepared.cellStress();
    const Vec3 sigma0(s0m(0, 0), s0m(1, 1), s0m(2, 2));
    const auto t0 = std::chrono::steady_clock::now();
    // The probes' plan: 8 reversible ones, then a zero and `count` probes per algorithm.
    progress::expectUnits(static_cast<double>(8 + (sceneBool(keyScene, "experiment.single_refinements") ? 7 : 2) *
                                                      (count + 1)));
    progress::note("probes");

    // The reversible response: probes in eight directions with no contact
    // sliding, fitted by one 2 × 2 stiffness in the Rendulic plane
    // (dσ = D dε, least squares); its residual measures how linear it is.
    Eigen::Matrix2d se = Eigen::Matrix2d::Zero(), ee = Eigen::Matrix2d::Zero();
    std::vector<Probe> elastic;
    for (int k = 0; k < 8; ++k) {
        elastic.push_back(runProbe(prepared, sigma0, 45.0 * k, ps.magnitude, ps, true));
        progress::advance();
        const Vec2 de = rendulic(elastic.back().strain), ds = rendulic(elastic.back().dsigma);
        se += ds * de.transpose();
        ee += de * de.transpose();
    }
    const Eigen::Matrix2d stiffness = se * ee.inverse();
    double misfit = 0.0, norm = 0.0;
    for (const Probe& p : elastic) {
        const Vec2 de = rendulic(p.strain), ds = rendulic(p.dsigma);
        misfit += (ds - stiffness * de).squaredNorm();
        norm += ds.squaredNorm();
    }
    const double linearity = std::sqrt(misfit / norm);
    const Eigen::Matrix2d compliance = stiffness.inverse();

    struct Series {
        std::string name;
        std::array<bool, 5> switches;  ///< MdSolver::setKuhnSwitches: onset, slip onset, slip rotation, projection, twirl
        std::vector<Probe> probes;
        Circle circle;
        double drift = 0.0;  ///< |dσ| of a probe of zero strain over the mean |dσ|
        double seconds = 0.0;
    };
    std::vector<Series> series = {{"conventional", {false, false, false, false, false}, {}, {}, 0.0, 0.0},
                                  {"refined", {true, true, true, true, true}, {}, {}, 0.0, 0.0}};
    if (sceneBool(keyScene, "experiment.single_refinements")) {
        const char* names[] = {"onset", "slip_onset", "slip_rotation", "projection", "twirl"};
        for (std::size_t k = 0; k < 5; ++k) {
            std::array<bool, 5> one{};
            one[k] = true;
            series.push_back({std::string("only_") + names[k], one, {}, {}, 0.0, 0.0});
        }
    }
    for (Series& s : series) {
        const auto t1 = std::chrono::steady_clock::now();
        Simulation base = prepared;
        const std::array<bool, 5>& r = s.switches;
        base.md().setKuhnSwitches(r[0], r[1], r[2], r[3], r[4]);
        double mean = 0.0;
        // The state's own change over a probe's duration (a probe of zero
        // strain): how far it is from rest.
        const Probe zero = runProbe(base, sigma0, 0.0, 0.0, ps, false);
        progress::advance();
        for (long k = 0; k < count; ++k) {
            // Evenly spaced stress directions φ: the strain direction that
            // gives dσ along φ in the reversible response, C u(φ).
            const double phi = 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(count);
            const Vec2 dir = compliance * Vec2(std::cos(phi), std::sin(phi));
            const double theta = std::atan2(dir[1], dir[0]) * 180.0 / M_PI;
            Probe p = runProbe(base, sigma0, theta, ps.magnitude, ps, false);
            const Vec2 de = rendulic(p.strain), ds = rendulic(p.dsigma);
            p.plastic = de - compliance * ds;
            p.point = p.plastic.norm() / ds.squaredNorm() * ds;
            mean += ds.norm() / static_cast<double>(count);
            s.probes.push_back(p);
            progress::advance();
            progress::notef("%s probe %ld/%ld", s.name.c_str(), k + 1, count);
        }
        s.drift = rendulic(zero.dsigma).norm() / mean;
        s.circle = fitCircle(s.probes);
        s.seconds = secondsSince(t1);
    }
    const double probeSeconds = secondsSince(t0);
    // Kuhn: "the peak stress ratio q/p was about 1.7" in the continued loading.
    const std::optional<kuhn::PeakResult> peak =
        peakStrain > 0.0 ? std::optional(kuhn::continueToPeak(st, prep, peakStrain)) : std::nullopt;

    // Kuhn's refinements correct errors of first order in the movement of a
    // step against the slip distance mu f_n / k_t: the affine tangential
    // movement of a mean contact per step over that distance.
    const double movementRatio =
        ps.magnitude / static_cast<double>(ps.probeSteps) * st.meanDiameter * st.stiffness /
        (prep.mu * st.meanNormalForce);
    const double hConv = 1.0 / series[0].circle.diameter, hRef = 1.0 / series[1].circle.diameter;
    auto matrix = [](const Eigen::Matrix2d& m, double scale) {
        return nlohmann::json::array({{m(0, 0) * scale, m(0, 1) * scale}, {m(1, 0) * scale, m(1, 1) * scale}});
    };
    nlohmann::json results = {
        {"grains", prep.clusters ? "clusters" : "spheres"},
        {"stress_start_kpa", {sigma0[0] / 1e3, sigma0[1] / 1e3, sigma0[2] / 1e3}},
        {"q_over_p", st.qOverP},
        {"porosity_isotropic", st.porosityIsotropic},
        {"porosity", st.porosity},
        {"axial_strain_triaxial", st.axialStrain},
        {"coordination", st.coordination},
        {"sliding_share", st.slidingShare},
        {"kinetic_over_elastic", st.kineticOverElastic},
        {"elastic_stiffness_mpa", matrix(stiffness, 1e-6)},
        {"elastic_linearity_residual", linearity},
        {"prep_steps", st.steps},
        {"prep_steps_isotropic", st.stepsIsotropic},
        {"prep_steps_triaxial", st.stepsTriaxial - st.stepsIsotropic},
        {"prep_steps_relax", st.stepsRelax},
        {"prep_seconds", st.seconds},
        {"probe_seconds", probeSeconds},
        {"probes", count},
        {"hardening_modulus_conventional", hConv},
        {"hardening_modulus_refined", hRef},
        {"modulus_difference", hConv / hRef - 1.0},
        {"hardening_modulus_ratio", hConv / hRef},
        {"mean_normal_force", st.meanNormalForce},
        {"overlap_over_diameter", st.meanNormalForce / st.stiffness / st.meanDiameter},
        {"step_movement_over_slip", movementRatio},
    };
    if (peak) {
        results["peak_q_over_p"] = peak->qOverP;
        results["peak_axial_strain"] = peak->axialStrain;
        results["peak_passed"] = peak->passed;
        results["peak_end_strain"] = peak->endStrain;
        results["peak_steps"] = peak->steps;
        results["peak_seconds"] = peak->seconds;
    }
    for (const Series& s : series) {
        double meanPlastic = 0.0, unloading = 0.0;
        const Vec2 n(std::cos(s.circle.direction * M_PI / 180.0), std::sin(s.circle.direction * M_PI / 180.0));
        for (const Probe& p : s.probes) {
            meanPlastic += p.plastic.norm() / static_cast<double>(s.probes.size());
            if (p.point.dot(n) < 0.0) unloading = std::max(unloading, p.point.norm());
        }
        results[s.name] = {
            {"difference_from_conventional", s.circle.diameter > 0.0 ? hConv * s.circle.diameter - 1.0 : kNaN},
            {"circle_diameter_per_mpa", s.circle.diameter * 1e6},
            {"hardening_modulus_mpa", 1.0 / s.circle.diameter / 1e6},
            {"yield_direction_deg", s.circle.direction},
            {"circle_r2", s.circle.r2},
            {"circle_points", s.circle.points},
            {"unloading_side_max_over_diameter", unloading / s.circle.diameter},
            {"mean_plastic_strain", meanPlastic},
            {"drift", s.drift},
            {"seconds", s.seconds},
        };
    }
    nlohmann::json checks = nlohmann::json::array();
    checks.push_back(makeCheck("prepared state at q/p = target", st.qOverP, prep.qOverP, 0.01));
    checks.push_back(makeCheck("prepared state static: kinetic / elastic energy (< 1e-6)", st.kineticOverElastic, 0.0,
                               1e-6, false));
    checks.push_back(makeCheck("reversible response linear: misfit of one stiffness over 8 directions (< 2 %)",
                               linearity, 0.0, 0.02, false));
    for (const Series& s : series) {
        checks.push_back(makeCheck(s.name + ": state at rest, stress change of a zero probe / mean |dsigma| (< 10 %)",
                                   s.drift, 0.0, 0.1, false));
        checks.push_back(makeCheck(s.name + ": loading-side points on a circle through the origin (R^2 >= 0.9)",
                                   s.circle.r2, 1.0, 0.1, false));
    }
    checks.push_back(makeCheck("contacts at the friction limit within 1e-5 (paper: about 11 %)", st.slidingShare,
                               0.11, 0.04, false));
    checks.push_back(makeCheck("hardening moduli conventional / refined (paper: about 5 % apart)", hConv / hRef, 1.05,
                               0.03, false));
    if (peak)
        checks.push_back(makeCheck("peak q/p of the continued triaxial compression (paper: about 1.7)", peak->qOverP,
                                   1.7, 0.15, false));
    nlohmann::json params = {{"particles", prep.particles}, {"grains", prep.clusters ? "clusters" : "spheres"},
                             {"cluster_spheres", prep.clusters ? kuhn::kClusterSpheres : ""}, {"probes", count}, {"probe_strain", ps.magnitude},
                             {"probe_steps", ps.probeSteps}, {"hold_steps", ps.holdSteps},
                             {"pressure_kpa", prep.pressure / 1e3}, {"q_over_p", prep.qOverP}, {"mu", prep.mu},
                             {"kn", st.stiffness}, {"kt", st.stiffness}, {"dt", st.dt}, {"drag_rate", st.dragRate},
                             {"seed", prep.seed}, {"units", "SI (m, kg, s, Pa); compression positive"}};
    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "stress_probes.csv",
                                  "algorithm,theta_deg,de11,de22,de33,ds11,ds22,ds33,dep_vol,dep_dev,x,y");
        for (const Series& s : series)
            for (const Probe& p : s.probes)
                out << s.name << ',' << p.theta << ',' << p.strain[0] << ',' << p.strain[1] << ',' << p.strain[2] << ','
                    << p.dsigma[0] << ',' << p.dsigma[1] << ',' << p.dsigma[2] << ',' << p.plastic[0] << ','
                    << p.plastic[1] << ',' << p.point[0] << ',' << p.point[1] << '\n';
        out.close();
        auto [fits, fout] = openCsv(options, "stress_probes_circles.csv", "algorithm,diameter,direction_deg,r2", 10);
        for (const Series& s : series)
            fout << s.name << ',' << s.circle.diameter << ',' << s.circle.direction << ',' << s.circle.r2 << '\n';
        fout.close();
        runPlotScript("stress_probes", {csv.string(), fits.string(), (options.outDir / "stress_probes.png").string()},
                      options.quiet);
        if (peak) {
            auto [curve, pout] = openCsv(options, "stress_probes_peak.csv", "axial_strain,q_over_p");
            for (const auto& [e, r] : peak->curve) pout << e << ',' << r << '\n';
            pout.close();
        }
    }
    return {{"experiment", "stress-probes"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
