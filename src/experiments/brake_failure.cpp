/// Force schemes paper §4, Fig. 8 and eq. 25: brake failure. Two
/// cellulose-acetate spheres meet at the impact angle ϑ = 87.4° (sin ϑ =
/// 0.999); Δv_x, the change of the relative velocity along its initial
/// direction, is measured against the impact speed v^i. Stiff grains reflect
/// (|Δv_x| ∝ v^i); above v_bf the grains cross each other in less than t_n and
/// the braking fails (|Δv_x| ∝ 1/v^i). Eq. 25 estimates the transition:
/// v_bf = (2R/π) cos ϑ sqrt(k_n/m_eff). Two stiffnesses: t_n = 1e-5 s (the
/// paper's k_n, γ_n) and t_n ten times longer (k_n/100, γ_n/10, same e_n).
///
/// Choices where the paper is silent: sphere–sphere (m_eff = m/2, which
/// gives its 27 m/s), the linear law of §2 (e_n = 0.87) as written (no
/// clipping of attractive forces), no friction: eq. 25 is about the normal
/// stiffness alone. (`--set md.tangential=coulomb --set contact.mu=0.25` gives
/// the §3 set with friction; see docs/experiments-md.md for its numbers.) The
/// measured v_bf is where |Δv_x| peaks (a parabola through the largest point
/// and its neighbours on the log–log curve).
///
/// Beyond the paper: far above v_bf the grains cross on a nearly straight
/// path; the elastic impulse along x then cancels between entry and exit, and
/// what remains is the dashpot's, γ_n ∫ n_x dξ = (γ_n/m_eff) 2 (c − b atan(c/b))
/// with b = 2R sin ϑ, c = sqrt(4R² − b²): a plateau independent of v^i, not the
/// paper's 1/v^i. The experiment checks the plateau against this value.
///
/// The scene: examples/grazing_pair_2d.ini (built in); each collision sets
/// k_n, γ_n, time step, positions and velocities on a copy of it.
#include <algorithm>
#include <cmath>

#include "moreau/analysis/fit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/sim/simulation.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

namespace {


/// Change of the relative velocity along its initial direction in one
/// oblique collision at speed v and impact angle theta (negative: braking).
/// The spheres touch at t = 0 with centre line at theta to the relative velocity.
double obliqueDeltaVx(const Scene& base, double v, double theta, double dt, long& steps) {
    Scene scene = base;
    scene.simulation.dt = dt;
    World& w = scene.world;
    const double ra = w.radius[0], rb = w.radius[1];
    w.x[0] = Vec3(0, 0, 0);
    w.x[1] = (ra + rb) * Vec3(std::cos(theta), std::sin(theta), 0);
    w.v[0] = Vec3(0.5 * v, 0, 0);
    w.v[1] = Vec3(-0.5 * v, 0, 0);
    const Vec3 vRel0 = w.v[1] - w.v[0];
    const Vec3 dir = vRel0.normalized();
    Simulation sim(std::move(scene));
    bool touched = false;
    for (long k = 0; k < 100000000; ++k) {
        sim.step();
        ++steps;
        const World& s = sim.world();
        const double gap = (s.x[1] - s.x[0]).norm() - ra - rb;
        if (gap < 0.0) {
            touched = true;
        } else if (touched || k > 10) {
            return (s.v[1] - s.v[0] - vRel0).dot(dir);
        }
    }
    throw InputError("brake-failure: a collision did not end; check the stiffness keys");
}

/// Peak of |y| on a log–log curve: a parabola through the largest point and
/// its neighbours (the end point itself if the peak is at an end).
double peakLocation(const std::vector<double>& x, const std::vector<double>& y) {
    std::size_t i = 0;
    for (std::size_t k = 1; k < y.size(); ++k)
        if (std::abs(y[k]) > std::abs(y[i])) i = k;
    if (i == 0 || i + 1 == y.size()) return x[i];
    const double x0 = std::log(x[i - 1]), x1 = std::log(x[i]), x2 = std::log(x[i + 1]);
    const double y0 = std::log(std::abs(y[i - 1])), y1 = std::log(std::abs(y[i])), y2 = std::log(std::abs(y[i + 1]));
    const double d01 = (y1 - y0) / (x1 - x0), d12 = (y2 - y1) / (x2 - x1);
    const double a = (d12 - d01) / (x2 - x0);
    if (!(a < 0.0)) return x[i];
    // p(x) = y0 + d01 (x - x0) + a (x - x0)(x - x1); p'(x) = 0 at the vertex:
    return std::exp(0.5 * (x0 + x1) - d01 / (2.0 * a));
}

}  // namespace

nlohmann::json brakeFailure(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"experiment.theta", KeyType::Real, "87.4", "impact angle (degrees) between centre line and relative velocity",
         0.0, 90.0, {}, true},
        {"experiment.v_min", KeyType::Real, "0.1", "smallest impact speed (m/s)", 0.0, kInf, {}, true},
        {"experiment.v_max", KeyType::Real, "1000", "largest impact speed (m/s)", 0.0, kInf, {}, true},
        {"experiment.points", KeyType::Integer, "41", "impact speeds, log-spaced from v_min to v_max", 5, 10000},
        {"experiment.kn", KeyType::Real, "7.32e6", "k_n of the stiff grains, t_n = 1e-5 s (N/m)", 0.0, kInf, {}, true},
        {"experiment.gamma_n", KeyType::Real, "2.06", "gamma_n of the stiff grains (kg/s)", 0.0, kInf},
        {"experiment.soft_factor", KeyType::Real, "10",
         "t_n of the soft grains over t_n of the stiff ones (k_n / factor^2, gamma_n / factor: same e_n)", 1.0, kInf,
         {}, true},
        {"experiment.steps_per_collision", KeyType::Real, "100",
         "time step = min(t_n, crossing time 4 R cos(theta)/v) / this", 10, 1e6},
    };
    const Scene base = loadBuiltinScene("grazing_pair_2d.ini", setsWithSeed(options), extra);
    if (base.world.numGrains != 2 || base.world.dimension != 2)
        throw InputError("brake-failure: needs chain.count = 2 and simulation.dimension = 2");
    const double theta = sceneReal(base, "experiment.theta") * M_PI / 180.0;
    const double vMin = sceneReal(base, "experiment.v_min"), vMax = sceneReal(base, "experiment.v_max");
    if (!(vMax > vMin)) throw InputError("brake-failure: key 'experiment.v_max' must be above experiment.v_min");
    const auto points = static_cast<int>(sceneInteger(base, "experiment.points"));
    const double perCollision = sceneReal(base, "experiment.steps_per_collision");
    const double factor = sceneReal(base, "experiment.soft_factor");
    const double m0 = base.world.mass[0], m1 = base.world.mass[1];
    const double meff = m0 * m1 / (m0 + m1);
    const double R = base.world.radius[0];
    if (base.world.radius[1] != R) throw InputError("brake-failure: both grains need the same radius");

    std::vector<double> velocities;
    for (int i = 0; i < points; ++i)
        velocities.push_back(vMin * std::pow(vMax / vMin, static_cast<double>(i) / (points - 1)));

    struct Case {
        double kn, gamma, tn, vbfPredicted, vbfMeasured = 0, slopeLow = 0, slopeHigh = 0, plateau = 0;
        std::vector<double> dvx;
    };
    const double kn = sceneReal(base, "experiment.kn"), gn = sceneReal(base, "experiment.gamma_n");
    std::vector<Case> cases = {{kn, gn, 0, 0, 0, 0, 0, 0, {}}, {kn / (factor * factor), gn / factor, 0, 0, 0, 0, 0, 0, {}}};
    long steps = 0;
    for (Case& c : cases) {
        const double under = c.kn / meff - std::pow(c.gamma / (2 * meff), 2);
        if (!(under > 0)) throw InputError("brake-failure: overdamped: experiment.gamma_n too large for experiment.kn");
        c.tn = M_PI / std::sqrt(under);                                                // eq. 4
        c.vbfPredicted = 2.0 * R / M_PI * std::cos(theta) * std::sqrt(c.kn / meff);  // eq. 25
        Scene scene = base;
        scene.md.kn = c.kn;
        scene.md.gammaN = c.gamma;
        for (double v : velocities) {
            const double cross = 4.0 * R * std::cos(theta) / v;  // time the relative path spends inside 2R
            const double dt = std::min(c.tn, cross) / perCollision;
            c.dvx.push_back(obliqueDeltaVx(scene, v, theta, dt, steps));
        }
        c.vbfMeasured = peakLocation(velocities, c.dvx);
        // Slopes of log|Δv_x| (Δv_x < 0: braking): the hard-sphere regime from
        // v_min to v_bf/5, the decline from 2 v_bf to 20 v_bf.
        std::vector<double> vl, dl, vh, dh;
        for (std::size_t i = 0; i < velocities.size(); ++i) {
            if (velocities[i] <= c.vbfMeasured / 5.0) {
                vl.push_back(velocities[i]);
                dl.push_back(std::abs(c.dvx[i]));
            }
            if (velocities[i] >= 2.0 * c.vbfMeasured && velocities[i] <= 20.0 * c.vbfMeasured) {
                vh.push_back(velocities[i]);
                dh.push_back(std::abs(c.dvx[i]));
            }
        }
        c.slopeLow = logSlope(vl, dl);  // NaN with fewer than two points
        c.slopeHigh = logSlope(vh, dh);
        // The dashpot's plateau far above v_bf (straight crossing).
        const double b = 2.0 * R * std::sin(theta), cc = 2.0 * R * std::cos(theta);
        c.plateau = -c.gamma / meff * 2.0 * (cc - b * std::atan(cc / b));
    }
    const Case& stiff = cases[0];
    const Case& soft = cases[1];

    nlohmann::json params = {{"theta_deg", theta * 180.0 / M_PI}, {"radius", R}, {"mass", m0}, {"m_eff", meff},
                             {"kn", stiff.kn}, {"gamma_n", stiff.gamma}, {"t_n", stiff.tn},
                             {"kn_soft", soft.kn}, {"gamma_n_soft", soft.gamma}, {"t_n_soft", soft.tn},
                             {"tangential", base.values.at("md.tangential")}, {"mu", base.world.muGrain},
                             {"steps_per_collision", perCollision},
                             {"geometry", "sphere-sphere, relative velocity along x, m_eff = m/2"}};
    nlohmann::json results = {{"velocities", velocities}, {"delta_vx", stiff.dvx},
                              {"v_bf_measured", stiff.vbfMeasured}, {"v_bf_predicted", stiff.vbfPredicted},
                              {"delta_vx_soft", soft.dvx}, {"v_bf_measured_soft", soft.vbfMeasured},
                              {"v_bf_predicted_soft", soft.vbfPredicted},
                              {"slope_low_v", stiff.slopeLow}, {"slope_high_v", stiff.slopeHigh},
                              {"slope_low_v_soft", soft.slopeLow}, {"slope_high_v_soft", soft.slopeHigh},
                              {"dashpot_plateau", stiff.plateau}, {"dashpot_plateau_soft", soft.plateau},
                              {"v_bf_ratio_measured", stiff.vbfMeasured / soft.vbfMeasured}, {"md_steps", steps}};
    nlohmann::json checks = nlohmann::json::array();
    // Paper: 35 m/s measured against 27 m/s from eq. 25 (an estimate, "good agreement").
    checks.push_back(makeCheck("v_bf measured vs paper's 35 m/s (t_n = 1e-5 s)", stiff.vbfMeasured, 35.0, 0.25));
    checks.push_back(makeCheck("v_bf measured vs eq. 25", stiff.vbfMeasured, stiff.vbfPredicted, 0.25));
    checks.push_back(makeCheck("v_bf stiff / v_bf soft (paper: tenfold drop)", stiff.vbfMeasured / soft.vbfMeasured,
                               factor, 0.15));
    checks.push_back(makeCheck("hard-sphere regime: slope of log|dv_x| vs log v below v_bf/5 (theory +1)",
                               stiff.slopeLow, 1.0, 0.1, false));
    checks.push_back(makeCheck("soft grains: hard-sphere slope (theory +1)", soft.slopeLow, 1.0, 0.1, false));
    // Above v_bf the paper's 1/v (slope -1) holds for an undamped spring
    // only: the dashpot leaves a plateau (checked below), so the slope over
    // 2-20 v_bf is bounded by departures.md's -0.53 (at the default 41
    // points; -0.59 at 21: ±0.1 for the sampling), not by the paper's -1.
    checks.push_back(makeCheck("brake failure: slope of log|dv_x| from 2 to 20 v_bf vs departures.md's -0.53 "
                               "(paper: -1, undamped spring only)",
                               stiff.slopeHigh, -0.53, 0.1, false));
    checks.push_back(makeCheck("soft grains: slope from 2 to 20 v_bf vs departures.md's -0.53 (paper: -1)",
                               soft.slopeHigh, -0.53, 0.1, false));
    if (vMax >= 30.0 * stiff.vbfMeasured)
        checks.push_back(makeCheck("dv_x at v_max vs the dashpot plateau (gamma/m_eff) 2(c - b atan(c/b))",
                                   stiff.dvx.back(), stiff.plateau, 0.05));
    if (vMax >= 30.0 * soft.vbfMeasured)
        checks.push_back(makeCheck("soft grains: dv_x at v_max vs the dashpot plateau", soft.dvx.back(), soft.plateau,
                                   0.05));

    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "brake_failure.csv", "velocity,delta_vx,delta_vx_soft");
        for (std::size_t i = 0; i < velocities.size(); ++i)
            out << velocities[i] << ',' << stiff.dvx[i] << ',' << soft.dvx[i] << '\n';
        out.close();
        runPlotScript("brake_failure",
                      {csv.string(), (options.outDir / "brake_failure.png").string(), std::to_string(stiff.tn),
                       std::to_string(soft.tn), std::to_string(stiff.vbfMeasured), std::to_string(stiff.vbfPredicted),
                       std::to_string(soft.vbfMeasured), std::to_string(soft.vbfPredicted),
                       std::to_string(theta * 180.0 / M_PI)},
                      options.quiet);
    }
    return {{"experiment", "brake-failure"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
