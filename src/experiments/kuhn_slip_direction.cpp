/// Kuhn, Suzuki & Daouadji, Fig. 4: the direction of the tangential force
/// of a sliding contact after one time step, against the size of the
/// movement, for a movement at right angles to the force (θ_t = −90°) and a
/// constant normal force. The refined algorithm (eqs. 16–20) turns the force
/// part of the way towards the movement; the usual shortcut adds k^t Δξ and
/// scales the sum back onto the friction circle. The reference is the same
/// movement cut into many small steps (the shortcut converges to eq. 16 as
/// the steps shrink) and the closed form tan(θ/2) = tan(θ_t/2) exp(−k|Δξ|/(μf^n)).
#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/md/force_laws.hpp"

namespace moreau {

namespace {

/// Kuhn's θ (degrees): the force's angle from the movement direction +x
/// towards m^⊥ = n × m^Δξ = +y.
double angleDeg(const Vec3& f) { return std::atan2(f.y(), f.x()) * 180.0 / M_PI; }

}  // namespace

nlohmann::json kuhnSlipDirection(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.points", KeyType::Integer, "41", "movements, log-spaced", 3.0, 100000.0, {}},
        {"experiment.min_movement", KeyType::Real, "0.01", "smallest k^t |dxi| / (mu f^n)", 0.0, kInf, {}, true},
        {"experiment.max_movement", KeyType::Real, "10", "largest k^t |dxi| / (mu f^n)", 0.0, kInf, {}, true},
        {"experiment.substeps", KeyType::Integer, "10000", "small steps of the reference", 10.0, 1e7, {}},
    };
    const Scene scene = experimentKeys("kuhn-slip-direction", options.sets, keys);
    const long points = static_cast<long>(sceneInteger(scene, "experiment.points"));
    const double lo = sceneReal(scene, "experiment.min_movement"), hi = sceneReal(scene, "experiment.max_movement");
    const long substeps = static_cast<long>(sceneInteger(scene, "experiment.substeps"));
    if (!(hi > lo)) throw InputError("kuhn-slip-direction: key 'experiment.max_movement' must exceed min_movement");

    // A contact at the friction limit with its force along +y, moved along +x.
    const double kt = 1e5, mu = 0.5, fn = 100.0, limit = mu * fn;
    auto input = [&](const Vec3& f, const Vec3& move) {
        KuhnInput in;
        in.forceStart = f;
        in.normalStart = in.normalEnd = fn;
        in.overlapEnd = 1e-3;
        in.movement = move;
        in.n = Vec3::UnitZ();
        in.twirlAngle = 0.0;
        in.kt = kt;
        in.muStatic = in.mu = mu;
        in.slidingBefore = true;
        return in;
    };
    KuhnSwitches refined, shortcut;
    shortcut.slipRotation = false;
    const Vec3 f0(0.0, -limit, 0.0);  // Kuhn's θ_t = −90°: m^⊥ = n × m^Δξ = +y

    std::vector<double> movement, thetaRefined, thetaShortcut, thetaFine, thetaClosed;
    double worstRefined = 0.0, worstClosed = 0.0, worstShortcut = 0.0;
    for (long i = 0; i < points; ++i) {
        const double m = lo * std::pow(hi / lo, static_cast<double>(i) / static_cast<double>(points - 1));
        const Vec3 move(m * limit / kt, 0.0, 0.0);
        const double r = angleDeg(kuhnStep(input(f0, move), refined).force);
        const double s = angleDeg(kuhnStep(input(f0, move), shortcut).force);
        Vec3 f = f0;
        for (long k = 0; k < substeps; ++k) f = kuhnStep(input(f, move / static_cast<double>(substeps)), shortcut).force;
        const double fine = angleDeg(f);
        const double closed = -2.0 * std::atan(std::exp(-m)) * 180.0 / M_PI;
        movement.push_back(m);
        thetaRefined.push_back(r);
        thetaShortcut.push_back(s);
        thetaFine.push_back(fine);
        thetaClosed.push_back(closed);
        worstRefined = std::max(worstRefined, std::abs(r - fine));
        worstClosed = std::max(worstClosed, std::abs(r - closed));
        worstShortcut = std::max(worstShortcut, std::abs(s - closed));
    }
    // The shortcut lags behind (its angle stays nearer θ_t): Kuhn's "large
    // errors occur when the force increment is larger than 20%".
    auto shortcutError = [&](double m) {
        const Vec3 move(m * limit / kt, 0.0, 0.0);
        return -2.0 * std::atan(std::exp(-m)) * 180.0 / M_PI - angleDeg(kuhnStep(input(f0, move), shortcut).force);
    };
    const double shortcutAt02 = shortcutError(0.2), shortcutAt1 = shortcutError(1.0), shortcutAt3 = shortcutError(3.0);

    nlohmann::json results = {{"movement", movement},       {"theta_refined", thetaRefined},
                              {"theta_shortcut", thetaShortcut}, {"theta_fine_steps", thetaFine},
                              {"theta_closed_form", thetaClosed}, {"max_dev_refined_fine", worstRefined},
                              {"max_dev_refined_closed", worstClosed}, {"shortcut_error_at_0_2", shortcutAt02},
                              {"shortcut_error_at_1", shortcutAt1},
                              {"shortcut_error_at_3", shortcutAt3}, {"max_dev_shortcut_closed", worstShortcut}};
    nlohmann::json checks = nlohmann::json::array();
    checks.push_back(makeCheck("refined vs many small steps: max |d theta| (deg)", worstRefined, 0.0, 0.05, false));
    checks.push_back(makeCheck("refined vs closed form of eq. 18: max |d theta| (deg)", worstClosed, 0.0, 1e-6, false));
    // The shortcut lags: its angle stays further from the movement (larger θ).
    checks.push_back(makeCheck("shortcut: largest deviation from eq. 18 (deg; several degrees: within [5, 85])",
                               worstShortcut, 45.0, 40.0, false));
    nlohmann::json params = {{"k_t", kt}, {"mu", mu}, {"f_n", fn}, {"theta_start_deg", -90.0}, {"points", points},
                             {"substeps", substeps},
                             {"angles", "degrees of the force from the movement direction; -90 at the start"}};
    if (options.writeFiles) {
        auto [csv, out] = openCsv(options, "kuhn_slip_direction.csv", "movement,theta_refined,theta_shortcut,theta_fine_steps,theta_closed_form");
        for (std::size_t i = 0; i < movement.size(); ++i)
            out << movement[i] << ',' << thetaRefined[i] << ',' << thetaShortcut[i] << ',' << thetaFine[i] << ','
                << thetaClosed[i] << '\n';
        out.close();
        runPlotScript("kuhn_slip_direction", {csv.string(), (options.outDir / "kuhn_slip_direction.png").string()},
                      options.quiet);
    }
    return {{"experiment", "kuhn-slip-direction"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
