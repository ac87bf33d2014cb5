/// Peña, Lind & Herrmann, "Modeling of the time integration step for
/// frictional contacts" (geometrical friction), §3, Figs. 2–3: the kinetic
/// energy E_k(t) (eq. 11) of a slowly sheared packing integrated with Gear's
/// 5th-order predictor–corrector at two time steps, Δt/t_c = 13/2500 and
/// 13/500 (t_c of eq. 10), frictionless (μ = 0) and frictional (μ = 0.5).
/// The paper's claim: without friction E_k does not depend on Δt, with
/// μ = 0.5 it does (Fig. 3e: the cumulative difference ΔE_k between the two
/// steps is much larger with friction).
///
/// Setup (Fig. 2): N free disks between two rough plates, periodic along x.
/// Each plate is a row of touching disks of radius r_p (kinematic: no
/// rotation, no motion against each other); the bottom row moves at −U, the
/// top row at +U along x, at fixed heights (no dilation), U = γ̇ H / 2 with H
/// the gap between the plates' contact layers (the rows' centre lines less
/// 2 r_p), so that the mean shear rate is γ̇. Contact law: the linear
/// spring–dashpot (eq. 1) with ν_n from ε_n by eq. 8, Cundall's tangential
/// spring with k_t/k_n = ν_t/ν_n = 1/3 (so ε_t/ε_n = 1.0053 by eq. 8), the
/// spring advanced by V_t Δt at the predictor (Peña eq. 7,
/// md.spring_increment = velocity), Coulomb limit μ |F_n|.
///
/// Our choices where the paper is silent: disks (the paper: polygons) of
/// radius uniform in [0.8, 1.2] mm; an areal density such that two disks of
/// the mean radius 1 mm have t_c = 1 ms (eq. 10 with m_r = m/2), which also
/// fixes the one ν_n of the packing; plates of disks of radius 1 mm. The
/// initial state: the disks on a loose grid, compressed without friction
/// (central-difference MD, strong damping, a drag on the free disks) by the
/// top plate glued to a servo wall that holds the normal stress p (2D: force
/// per length) until the packing is at rest; then the lid is fixed and the
/// four shear runs start from this one state with the free disks at rest.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {

constexpr double kRmin = 0.8e-3, kRmax = 1.2e-3;  ///< free disks' radii (m)
constexpr double kRmean = 1.0e-3;                 ///< mean radius; plate disks' radius (m)
constexpr double kTc = 1e-3;                      ///< t_c (eq. 10) of two mean disks (s)
constexpr double kKn = 400.0;                     ///< k_n (N/m), Peña §3
constexpr double kEpsN = 0.9875;                  ///< ε_n, Peña §3
constexpr double kKtRatio = 1.0 / 3.0;            ///< k_t/k_n = ν_t/ν_n, Peña §3

/// The packing prepared once and sheared four times.
struct Packing {
    std::vector<Vec3> x;
    std::vector<double> radius, mass;
    std::size_t free = 0;            ///< grains [0, free) are free, then the bottom row, then the top row
    std::size_t plate = 0;           ///< disks per plate row
    double width = 0.0;              ///< periodic length L along x
    double yBottom = 0.0, yTop = 0.0;  ///< plate rows' centre lines
    double lidStress = 0.0;          ///< normal stress on the lid at the end of the preparation
    double prepTime = 0.0;           ///< simulated time of the preparation (s)
    long prepSteps = 0;
    double packingFraction = 0.0;    ///< free disks' area over the gap's area
};

/// ω₀² and η of eq. 8 for restitution ε at contact time t_c (eq. 10):
/// ω = π/t_c, η = −ln ε ω/π, ω₀² = ω² + η².
void oscillator(double eps, double tc, double& w0sq, double& eta) {
    const double w = M_PI / tc;
    eta = -std::log(eps) * w / M_PI;
    w0sq = w * w + eta * eta;
}

/// Areal density (kg/m²) such that two disks of the mean radius have t_c = kTc.
double arealDensity() {
    double w0sq = 0.0, eta = 0.0;
    oscillator(kEpsN, kTc, w0sq, eta);
    const double mr = kKn / w0sq;  // ω₀ = √(k_n/m_r)
    return 2.0 * mr / (M_PI * kRmean * kRmean);
}

/// ν_n of eq. 8 for the mean pair: ν_n = 2 m_r η.
double normalDamping(double eps) {
    double w0sq = 0.0, eta = 0.0;
    oscillator(kEpsN, kTc, w0sq, eta);
    const double mr = kKn / w0sq;
    // The same m_r with another ε (the preparation's stronger damping).
    const double le = std::log(eps);
    const double etaE = -le * std::sqrt(w0sq) / std::sqrt(M_PI * M_PI + le * le);
    return 2.0 * mr * etaE;
}

World emptyWorld(double width) {
    World w;
    w.dimension = 2;
    w.periodic = {true, false, false};
    w.boxMin = Vec3(0.0, -1.0, 0.0);
    w.boxMax = Vec3(width, 1.0, 0.0);
    return w;
}

/// The dense state: free disks on a loose grid, compressed by the top plate
/// (glued to a servo wall at stress p) onto the bottom plate (fixed), without
/// friction, until the lid's stress is p within 0.1 % and the free disks are
/// at rest.
Packing prepare(std::size_t n, double pressure, std::uint64_t seed) {
    Packing pk;
    pk.free = n;
    // Width: the disks' area at a packing fraction ~0.82 in a square cell,
    // rounded to whole plate disks.
    const double meanArea = M_PI * (kRmean * kRmean + (kRmax - kRmin) * (kRmax - kRmin) / 12.0);
    const double side = std::sqrt(static_cast<double>(n) * meanArea / 0.82);
    pk.plate = std::max<std::size_t>(4, static_cast<std::size_t>(std::lround(side / (2.0 * kRmean))));
    pk.width = 2.0 * kRmean * static_cast<double>(pk.plate);
    const double rho = arealDensity();
    Rng rng = Rng::stream(seed, 0x5107);
    // Loose grid: cells of 2.5 mm (> the largest diameter), rows offset by half a cell.
    const double cell = 2.5e-3;
    const auto cols = static_cast<std::size_t>(std::floor(pk.width / cell));
    const double dx = pk.width / static_cast<double>(cols);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = i / cols, col = i % cols;
        const double r = rng.uniform(kRmin, kRmax);
        pk.x.emplace_back(dx * (static_cast<double>(col) + 0.5 * static_cast<double>(row % 2)),
                          kRmean + cell * static_cast<double>(row + 1), 0.0);
        pk.radius.push_back(r);
        pk.mass.push_back(rho * M_PI * r * r);
    }
    const std::size_t rows = (n + cols - 1) / cols;
    pk.yBottom = 0.0;
    const double yTop0 = kRmean + cell * static_cast<double>(rows + 1);
    for (int side2 = 0; side2 < 2; ++side2)
        for (std::size_t j = 0; j < pk.plate; ++j) {
            pk.x.emplace_back(2.0 * kRmean * (static_cast<double>(j) + 0.5), side2 == 0 ? pk.yBottom : yTop0, 0.0);
            pk.radius.push_back(kRmean);
            pk.mass.push_back(rho * M_PI * kRmean * kRmean);
        }

    World w = emptyWorld(pk.width);
    w.boxMin.y() = -2.0 * kRmax;
    w.boxMax.y() = yTop0 + 2.0 * kRmax;
    w.muGrain = 0.0;  // frictionless compression: the densest state
    Rng kick = Rng::stream(seed, 0x5108);
    for (std::size_t i = 0; i < pk.x.size(); ++i) {
        const BodyId b = w.addGrain(pk.x[i], pk.radius[i], pk.mass[i], 0.5 * pk.mass[i] * pk.radius[i] * pk.radius[i]);
        // Small random velocities break the grid's symmetry.
        if (i < n) w.v[i] = Vec3(kick.uniform(-1.0, 1.0), kick.uniform(-1.0, 1.0), 0.0) * 1e-3;
        (void)b;
    }
    WallShape plane;
    plane.kind = ShapeKind::Plane;
    plane.direction = Vec3(0.0, -1.0, 0.0);
    const BodyId lid = w.addWall("lid", plane, Vec3(0.0, yTop0 + kRmean, 0.0), false, 0.0, {false, false, false});
    w.prescribed[static_cast<std::size_t>(lid)] = true;
    for (std::size_t j = 0; j < pk.plate; ++j) w.drive(static_cast<BodyId>(n + j), Vec3::Zero(), Vec3::Zero());
    for (std::size_t j = 0; j < pk.plate; ++j) w.drive(static_cast<BodyId>(n + pk.plate + j), Vec3::Zero(), Vec3::Zero(), lid);

    MdSettings md;
    md.normal = NormalLaw::Linear;
    md.kn = kKn;
    md.gammaN = normalDamping(0.3);  // strong damping while preparing
    md.kt = kKtRatio * kKn;
    md.gammaT = kKtRatio * md.gammaN;
    md.integrator = Integrator::CD;
    const double dt = kTc / 25.0;
    Scene scene = sceneFromWorld(std::move(w), Method::MD, dt, {}, md, 0.1 * kRmin, seed, "slow-shear (preparation)");
    scene.simulation.skin = 0.2 * kRmin;
    // Servo (docs/mechanics.md): stable for gain < L/(k Δt). At the step's
    // time scale the lid feels only its own contacts, about two per plate
    // disk (k ≈ 2 k_n × plate disks), not the packing's series stiffness:
    // a fifth of that limit, and a lid speed of at most 5 mm/s (≈ 0.1 of a
    // stress-carrying overlap per step).
    WallServo servo;
    servo.wall = lid;
    servo.stress = pressure;
    servo.area = pk.width;
    servo.gain = 0.2 * pk.width / (2.0 * kKn * static_cast<double>(pk.plate) * dt);
    servo.maxSpeed = 0.005;
    scene.servos.push_back(servo);
    Simulation sim(std::move(scene));
    World& world = sim.world();
    // A drag on the free disks' velocities, rate 0.002/Δt = 50/s (ω₀ ≈
    // 3140/s): weak enough not to hold up the compression, it brings the
    // packing's slow collective modes, which the contacts' damping hardly
    // reaches, to rest.
    const double keep = 1.0 - 0.002;
    const long maxSteps = 400000, chunk = 500;
    const std::size_t wallIndex = static_cast<std::size_t>(lid) - world.numGrains;
    long steps = 0;
    for (; steps < maxSteps; ++steps) {
        sim.advance();
        for (std::size_t i = 0; i < n; ++i) {
            world.v[i] *= keep;
            world.w[i] *= keep;
        }
        if ((steps + 1) % chunk == 0) {
            const double sigma = -sim.wallLoads()[wallIndex].dot(plane.direction) / pk.width;
            double vmax = 0.0;
            for (std::size_t i = 0; i < n; ++i) vmax = std::max(vmax, world.v[i].norm() + world.w[i].norm() * pk.radius[i]);
            // At rest: stress within 0.1 % and no disk faster than 10⁻⁹ m/s
            // (the plates' speed U is ~10⁻⁷ m/s).
            if (std::abs(sigma / pressure - 1.0) < 1e-3 && vmax < 1e-9) {
                ++steps;
                break;
            }
        }
    }
    pk.prepSteps = steps;
    pk.prepTime = world.time;
    pk.lidStress = -sim.wallLoads()[wallIndex].dot(plane.direction) / pk.width;
    for (std::size_t i = 0; i < pk.x.size(); ++i) pk.x[i] = world.x[i];
    pk.yTop = world.x[n + pk.plate].y();
    double area = 0.0;
    for (std::size_t i = 0; i < n; ++i) area += M_PI * pk.radius[i] * pk.radius[i];
    pk.packingFraction = area / (pk.width * (pk.yTop - pk.yBottom - 2.0 * kRmean));
    return pk;
}

struct Run {
    std::vector<double> ek;  ///< E_k of the free disks at the common sample times
    std::vector<double> ee;  ///< elastic energy of the contacts at the same times
    double bottomShift = 0.0, topShift = 0.0;  ///< plates' x displacement at the end
    long steps = 0;
};

/// One shear run from the prepared state: plates at ∓U, Gear 5, E_k every
/// `every` steps, `samples` times.
Run shear(const Packing& pk, double mu, double dt, double speed, long every, long samples, std::uint64_t seed) {
    World w = emptyWorld(pk.width);
    w.boxMin.y() = pk.yBottom - 2.0 * kRmax;
    w.boxMax.y() = pk.yTop + 2.0 * kRmax;
    w.muGrain = mu;
    for (std::size_t i = 0; i < pk.x.size(); ++i)
        w.addGrain(pk.x[i], pk.radius[i], pk.mass[i], 0.5 * pk.mass[i] * pk.radius[i] * pk.radius[i]);
    // The free disks start at rest; the plates move at ∓U along x, no spin.
    for (std::size_t j = 0; j < pk.plate; ++j) w.drive(static_cast<BodyId>(pk.free + j), Vec3(-speed, 0.0, 0.0), Vec3::Zero());
    for (std::size_t j = 0; j < pk.plate; ++j)
        w.drive(static_cast<BodyId>(pk.free + pk.plate + j), Vec3(speed, 0.0, 0.0), Vec3::Zero());
    MdSettings md;
    md.normal = NormalLaw::Linear;
    md.kn = kKn;
    md.gammaN = normalDamping(kEpsN);  // eq. 8
    md.kt = kKtRatio * kKn;
    md.gammaT = kKtRatio * md.gammaN;  // ν_t/ν_n = k_t/k_n
    md.tangential = TangentialLaw::Spring;
    md.springVelocityIncrement = true;  // Cundall's update, Peña eq. 7
    md.integrator = Integrator::Gear5;
    md.pipeline = MdPipeline::Staged;
    Scene scene = sceneFromWorld(std::move(w), Method::MD, dt, {}, md, 0.1 * kRmin, seed, "slow-shear");
    scene.simulation.skin = 0.2 * kRmin;
    Simulation sim(std::move(scene));
    const World& world = sim.world();
    Run run;
    const double x0b = world.x[pk.free].x(), x0t = world.x[pk.free + pk.plate].x();
    for (long s = 0; s < samples; ++s) {
        for (long k = 0; k < every; ++k) sim.advance();
        // Eq. 11 summed over the free disks (the plates' E_k is constant).
        double ek = 0.0;
        for (std::size_t i = 0; i < pk.free; ++i)
            ek += 0.5 * (world.mass[i] * world.v[i].squaredNorm() + world.inertia[i] * world.w[i].squaredNorm());
        run.ek.push_back(ek);
        run.ee.push_back(sim.record().elasticEnergy);
    }
    run.steps = every * samples;
    // Displacements unwrapped with the minimum image (they are ≪ L).
    run.bottomShift = world.minimumImage(world.x[pk.free] - Vec3(x0b, world.x[pk.free].y(), 0.0)).x();
    run.topShift = world.minimumImage(world.x[pk.free + pk.plate] - Vec3(x0t, world.x[pk.free + pk.plate].y(), 0.0)).x();
    return run;
}

}  // namespace

nlohmann::json slowShear(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"experiment.grains", KeyType::Integer, "256", "free disks between the plates (Pena: 256)", 8.0, 1e5},
        {"experiment.duration", KeyType::Real, "1000", "sheared time in t_c (t_c = 1 ms)", 0.0, kInf, {}, true},
        {"experiment.samples", KeyType::Integer, "2000", "E_k records per run, at times common to both steps", 2.0,
         1e6},
        {"experiment.shear_rate", KeyType::Real, "1.25e-5", "shear rate in 1/s (Pena: 1.25e-5)", 0.0, kInf, {}, true},
        {"experiment.pressure", KeyType::Real, "0.4", "normal stress of the preparation in N/m (2D)", 0.0, kInf, {},
         true},
        {"experiment.max_rel_diff_mu0", KeyType::Real, "0.05",
         "check: largest relative E_k difference between the steps without friction", 0.0, kInf, {}, true},
        {"experiment.min_ratio", KeyType::Real, "10",
         "check: smallest ratio of the relative differences mu = 0.5 over mu = 0", 0.0, kInf, {}, true},
    };
    const Scene keyScene = experimentKeys("slow-shear", options.sets, keys);
    const auto n = static_cast<std::size_t>(sceneInteger(keyScene, "experiment.grains"));
    const double durationTc = sceneReal(keyScene, "experiment.duration");
    const long samples = static_cast<long>(sceneInteger(keyScene, "experiment.samples"));
    const double rate = sceneReal(keyScene, "experiment.shear_rate");
    const double pressure = sceneReal(keyScene, "experiment.pressure");
    const double maxRel0 = sceneReal(keyScene, "experiment.max_rel_diff_mu0");
    const double minRatio = sceneReal(keyScene, "experiment.min_ratio");
    const std::uint64_t seed = options.seed.value_or(1);
    const auto start = std::chrono::steady_clock::now();

    const Packing pk = prepare(n, pressure, seed);
    const double prepSeconds = secondsSince(start);
    // H: the gap between the plates' contact layers; U = γ̇ H / 2 each way.
    const double gap = pk.yTop - pk.yBottom - 2.0 * kRmean;
    const double speed = 0.5 * rate * gap;

    // Peña's two steps (Fig. 3): Δt₁/t_c = 13/2500, Δt₂/t_c = 13/500 = 5 Δt₁.
    const double dtOverTc[2] = {13.0 / 2500.0, 13.0 / 500.0};
    const double mus[2] = {0.0, 0.5};
    // Records every `every2` large steps = 5 every2 small ones: common times.
    const long stepsLarge = std::max(samples, static_cast<long>(std::ceil(durationTc / dtOverTc[1])));
    const long every2 = std::max(1L, stepsLarge / samples);
    const long every[2] = {5 * every2, every2};
    Run runs[2][2];  // [mu][dt]
    long totalSteps = 0;
    for (int m = 0; m < 2; ++m)
        for (int d = 0; d < 2; ++d) {
            runs[m][d] = shear(pk, mus[m], dtOverTc[d] * kTc, speed, every[d], samples, seed);
            totalSteps += runs[m][d].steps;
        }
    std::vector<double> time;
    for (long s = 0; s < samples; ++s) time.push_back(static_cast<double>((s + 1) * every2) * dtOverTc[1] * kTc);

    // ΔE_k (Fig. 3e): the cumulative |E_k(Δt₁) − E_k(Δt₂)| over the common
    // times; the relative measure divides its total by the cumulative mean E_k.
    std::vector<double> delta[2];
    double rel[2] = {0.0, 0.0};
    for (int m = 0; m < 2; ++m) {
        double cum = 0.0, base = 0.0;
        for (long s = 0; s < samples; ++s) {
            const double a = runs[m][0].ek[static_cast<std::size_t>(s)], b = runs[m][1].ek[static_cast<std::size_t>(s)];
            cum += std::abs(a - b);
            base += 0.5 * (a + b);
            delta[m].push_back(cum);
        }
        rel[m] = base > 0.0 ? cum / base : kNaN;
    }
    const double ratio = rel[1] / rel[0];

    nlohmann::json results;
    // INTERFACE.md: the two steps larger first; dt1 is the larger step
    // (runs[m][1]), dt2 the smaller (runs[m][0]).
    results["dt_over_tc"] = {dtOverTc[1], dtOverTc[0]};
    results["mu"] = {mus[0], mus[1]};
    results["time"] = time;
    results["ek_dt1_mu0"] = runs[0][1].ek;
    results["ek_dt2_mu0"] = runs[0][0].ek;
    results["ek_dt1_mu05"] = runs[1][1].ek;
    results["ek_dt2_mu05"] = runs[1][0].ek;
    results["ee_dt2_mu0"] = runs[0][0].ee;
    results["ee_dt2_mu05"] = runs[1][0].ee;
    results["delta_ek_mu0"] = delta[0];
    results["delta_ek_mu05"] = delta[1];
    results["rel_diff_mu0"] = rel[0];
    results["rel_diff_mu05"] = rel[1];
    results["rel_diff_ratio"] = ratio;
    // §3's "E_k of the same order as the elastic energy": the means over
    // the second half of the run (the smaller step), and their ratio.
    for (std::size_t m = 0; m < 2; ++m) {
        double ek = 0.0, ee = 0.0;
        const std::size_t half = static_cast<std::size_t>(samples) / 2;
        for (std::size_t s = half; s < static_cast<std::size_t>(samples); ++s) {
            ek += runs[m][0].ek[s];
            ee += runs[m][0].ee[s];
        }
        results[m == 0 ? "ek_over_ee_second_half_mu0" : "ek_over_ee_second_half_mu05"] = ee > 0.0 ? ek / ee : kNaN;
    }
    results["plate_speed"] = speed;
    results["gap"] = gap;
    results["width"] = pk.width;
    results["plate_disks"] = pk.plate;
    results["packing_fraction"] = pk.packingFraction;
    results["prep_lid_stress"] = pk.lidStress;
    results["prep_time"] = pk.prepTime;
    results["prep_steps"] = pk.prepSteps;
    results["total_steps"] = totalSteps;
    // The plates' measured shear rate (their relative displacement over H and time).
    double rateMeasured[2][2];
    for (int m = 0; m < 2; ++m)
        for (int d = 0; d < 2; ++d)
            rateMeasured[m][d] = (runs[m][d].topShift - runs[m][d].bottomShift) / (gap * time.back());
    results["plate_shift_bottom"] = runs[0][0].bottomShift;
    results["plate_shift_top"] = runs[0][0].topShift;

    nlohmann::json checks = nlohmann::json::array();
    double worstRate = 0.0;
    for (auto& rm : rateMeasured)
        for (double r : rm) worstRate = std::max(worstRate, std::abs(r / rate - 1.0));
    checks.push_back(makeCheck("plates' shear rate (relative displacement / H t) vs gamma-dot, worst of 4 runs",
                               rate * (1.0 + worstRate), rate, 1e-6));
    checks.push_back(makeCheck("preparation: lid stress vs p (at rest, no dilation after)", pk.lidStress, pressure, 2e-3));
    bool finite = true;
    for (auto& rm : runs)
        for (auto& r : rm)
            for (double e : r.ek) finite = finite && std::isfinite(e) && e > 0.0;
    checks.push_back(makeCheck("E_k finite and > 0 in every record of the 4 runs", finite ? 1.0 : 0.0, 1.0, 0.0, false));
    // Fig. 3a, c: "frictionless particles have an E_k that does not change
    // for different integration steps".
    checks.push_back(makeCheck("consistency (follows from the setup): mu = 0: sum|E_k(dt1) - E_k(dt2)| / sum E_k "
                               "(Fig. 3a,c: no dependence on dt)", rel[0],
                               0.0, maxRel0, false));
    // Fig. 3b, d, e: with μ = 0.5 E_k "strongly depends on Δt", ΔE_k
    // "significantly lower" without friction: the ratio at least minRatio.
    checks.push_back(makeCheck("relative E_k difference mu = 0.5 / mu = 0 (Fig. 3e: >> 1, here >= min_ratio)", ratio,
                               1e12, 1e12 - minRatio, false));

    const double seconds = secondsSince(start);
    results["seconds"] = seconds;
    results["prep_seconds"] = prepSeconds;
    const nlohmann::json params = {
        {"grains", n},
        {"shape", "disks (Pena: polygons)"},
        {"radius_min", kRmin},
        {"radius_max", kRmax},
        {"radius_distribution", "uniform"},
        {"plates", "one row each of touching disks of radius 1 mm, kinematic, no spin"},
        {"areal_density", arealDensity()},
        {"mass_mean_disk", arealDensity() * M_PI * kRmean * kRmean},
        {"inertia", "m r^2/2"},
        {"tc", kTc},
        {"tc_definition", "eq. 10 for two disks of radius 1 mm (m_r = m/2)"},
        {"kn", kKn},
        {"eps_n", kEpsN},
        {"nu_n", normalDamping(kEpsN)},
        {"kt_over_kn", kKtRatio},
        {"nu_t_over_nu_n", kKtRatio},
        {"eps_t_over_eps_n", "1.0053 (eq. 8)"},
        {"tangential", "Cundall spring, increment V_t dt at the predictor (eq. 7)"},
        {"integrator", "gear5 (restart with RK4 when a contact opens or closes)"},
        {"shear_rate", rate},
        {"plate_speed", speed},
        {"duration_tc", durationTc},
        {"duration_s", time.back()},
        {"samples", samples},
        {"pressure", pressure},
        {"preparation",
         "grid of disks compressed without friction by the top plate glued to a servo wall (stress p), central-"
         "difference MD, eps_n = 0.3, drag 0.2 %/step on free disks, dt = t_c/25, until at rest; then lid fixed, free "
         "disks at rest"},
        {"ek", "eq. 11 summed over the free disks"},
        {"rel_diff", "sum_t |E_k(dt1) - E_k(dt2)| / sum_t (E_k(dt1) + E_k(dt2))/2 over the common times"},
        {"max_rel_diff_mu0", maxRel0},
        {"min_ratio", minRatio},
        {"seed", seed}};
    if (options.writeFiles) {
        CsvFile csv = openCsv(options, "slow_shear.csv",
                              "time,ek_dt1_mu0,ek_dt2_mu0,ek_dt1_mu05,ek_dt2_mu05,delta_ek_mu0,delta_ek_mu05");
        for (long s = 0; s < samples; ++s) {
            const auto i = static_cast<std::size_t>(s);
            csv.out << time[i] << ',' << runs[0][1].ek[i] << ',' << runs[0][0].ek[i] << ',' << runs[1][1].ek[i] << ','
                    << runs[1][0].ek[i] << ',' << delta[0][i] << ',' << delta[1][i] << '\n';
        }
        csv.out.close();
        runPlotScript("slow_shear", {csv.path.string(), (options.outDir / "slow_shear.png").string()}, options.quiet);
    }
    return {{"experiment", "slow-shear"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
