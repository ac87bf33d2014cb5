#include "load_step.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/sim/simulation.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/generators.hpp"

namespace moreau::loadstep {

std::string orderName(SweepOrder order) { return std::string(lawName(kSweepOrderNames, order)); }

LoadedSystem loadedChain(std::size_t length, double force) {
    if (length < 2) throw InputError("force-relaxation: a chain needs at least 2 grains");
    LoadedSystem s;
    World world;
    world.dimension = 1;
    addGrains(world, makeChain(length, 0.5), GrainShape::Disk, 1.0, 1.0);
    world.forceSchedule(0).before = Vec3(force, 0.0, 0.0);
    world.forceSchedule(static_cast<BodyId>(length - 1)).before = Vec3(-force, 0.0, 0.0);
    s.run.emplace(sceneFromWorld(std::move(world), Method::CD, 1.0, {}, {}, 0.05, 1, "force-relaxation chain"));
    s.run->detect();  // touching neighbours only (gap 0)
    s.run->match();
    if (s.contacts().size() != length - 1) throw std::logic_error("loadedChain: expected L-1 contacts");
    s.grains = length;
    s.depth = static_cast<double>(length);
    s.meanDiameter = 1.0;
    // Statics: every contact carries F (reaction on the right grain along +n).
    for (const Contact& c : s.contacts()) s.exact.push_back(force * c.n);
    return s;
}

namespace {

struct PackingGeometry {
    double width, height, rMin, rMax, meanVolume, phi;
};

PackingGeometry geometryOf(const PackingSpec& spec) {
    PackingGeometry g;
    const double n = static_cast<double>(spec.grains);
    if (spec.dimension == 2) {
        g.rMin = 0.25;
        g.rMax = 0.5;
        // ⟨πr²⟩ for r uniform in [a, b]: π (a² + ab + b²)/3.
        g.meanVolume = M_PI * (g.rMin * g.rMin + g.rMin * g.rMax + g.rMax * g.rMax) / 3.0;
        g.phi = 0.82;  // random close packing of these bidisperse-like disks, roughly
        g.width = std::sqrt(n * g.meanVolume / g.phi);
        g.height = 1.5 * g.width;  // loose start at φ ≈ 0.55, below the RSA jamming
    } else {
        g.rMin = 0.4;
        g.rMax = 0.5;
        // ⟨4/3 π r³⟩ for r uniform in [a, b]: π (b⁴ − a⁴)/(3 (b − a)).
        g.meanVolume = M_PI * (std::pow(g.rMax, 4) - std::pow(g.rMin, 4)) / (3.0 * (g.rMax - g.rMin));
        g.phi = 0.62;
        g.width = std::cbrt(n * g.meanVolume / g.phi);
        g.height = 1.9 * g.width;  // loose start at φ ≈ 0.33, below the RSA jamming (0.38)
    }
    return g;
}

}  // namespace

std::string packingSceneText(const PackingSpec& spec) {
    if (spec.dimension != 2 && spec.dimension != 3)
        throw InputError("packing: dimension must be 2 or 3");
    const PackingGeometry g = geometryOf(spec);
    const double W = g.width, H = g.height;
    const double area = spec.dimension == 2 ? W : W * W;
    const double force = spec.pressure * area;
    const double mass = 0.5 * static_cast<double>(spec.grains) * g.meanVolume;  // half the packing's mass
    const long steps = spec.prepSteps > 0 ? spec.prepSteps : std::max<long>(600, std::lround(40.0 * W));
    std::ostringstream s;
    s.precision(17);
    const char* up = spec.dimension == 2 ? "0 1 0" : "0 0 1";
    const char* down = spec.dimension == 2 ? "0 -1 0" : "0 0 -1";
    s << "[simulation]\nmethod = cd\ndimension = " << spec.dimension << "\ndt = 1\nsteps = " << steps
      << "\nseed = " << spec.seed << "\ngravity = 0 0 0\n"
      << "[contact]\nmu = " << spec.mu << "\nmargin = 0.5\n"
      << "[cd]\niterations = " << spec.prepIterations << "\ncriterion = fixed\norder = random-sweep\n"
      << "[output]\nevery = 1\nvtk_every = 0\n"
      << "[grains]\nsource = random\ndensity = 1\ninertia = " << (spec.dimension == 2 ? "disk" : "sphere") << "\n"
      << "[random]\ncount = " << spec.grains << "\nr_min = " << g.rMin << "\nr_max = " << g.rMax
      << "\nbox_min = 0 0 0\nbox_max = " << W << ' ' << (spec.dimension == 2 ? H : W) << ' '
      << (spec.dimension == 2 ? 0.0 : H) << "\n"
      << "[wall.base]\ntype = plane\npoint = 0 0 0\nnormal = " << up << "\n"
      << "[wall.x_min]\ntype = plane\npoint = 0 0 0\nnormal = 1 0 0\n"
      << "[wall.x_max]\ntype = plane\npoint = " << W << " 0 0\nnormal = -1 0 0\n";
    if (spec.dimension == 3)
        s << "[wall.y_min]\ntype = plane\npoint = 0 0 0\nnormal = 0 1 0\n"
          << "[wall.y_max]\ntype = plane\npoint = 0 " << W << " 0\nnormal = 0 -1 0\n";
    s << "[wall.piston]\ntype = plane\npoint = " << (spec.dimension == 2 ? "0 " : "0 0 ") << H
      << (spec.dimension == 2 ? " 0" : "") << "\nnormal = " << down << "\nmobile = true\nmass = " << mass
      << "\nfree = " << (spec.dimension == 2 ? "y" : "z") << "\nforce = "
      << (spec.dimension == 2 ? "0 " : "0 0 ") << -force << (spec.dimension == 2 ? " 0" : "") << "\n";
    return s.str();
}

LoadedSystem loadedPacking(const PackingSpec& spec) {
    const std::string text = packingSceneText(spec);
    Simulation sim(loadSceneText(text, "<packing " + std::to_string(spec.dimension) + "D>", {}));
    // 40 steps per box width compress most packings to rest; larger ones may
    // still creep (the load step then moves a loose region and never
    // settles), so the run goes on in chunks of a quarter of that until the
    // piston is still (speed < 2e-5 d/Δt), for at most four times as long.
    const long steps = sim.scene().simulation.steps;
    for (long k = 0; k < steps; ++k) sim.step();
    std::size_t pistonId = sim.world().numBodies();
    for (std::size_t k = 0; k < sim.world().numWalls(); ++k)
        if (sim.world().wallName[k] == "piston") pistonId = sim.world().numGrains + k;
    if (pistonId == sim.world().numBodies()) throw std::logic_error("loadedPacking: no piston");
    const long chunk = std::max<long>(50, steps / 4);
    double vmax = sim.world().v[pistonId].norm();
    for (long extra = 0; extra < 3 * steps && vmax >= 2e-5; extra += chunk) {
        vmax = 0.0;  // the piston rings: its largest speed over a chunk, not one sample
        for (long k = 0; k < chunk; ++k) {
            sim.step();
            vmax = std::max(vmax, sim.world().v[pistonId].norm());
        }
    }

    // The piston may be still while grains inside still move (a deep 3D
    // packing at N_I = 40 is artificially soft and rings). Quench: every step
    // starts from rest, so no kinetic energy builds up and the warm-started
    // reactions converge over the steps; until the fastest grain of a step
    // moves slower than 2e-5 d/Δt (at most eight times the compression).
    auto grainSpeed = [&] {
        double v = 0.0;
        for (std::size_t i = 0; i < sim.world().numGrains; ++i) v = std::max(v, sim.world().v[i].norm());
        return v;
    };
    long quenched = 0;
    sim.cd().settings().iterations = std::max(sim.cd().settings().iterations, 10 * spec.prepIterations);
    for (double v = grainSpeed(); v >= 2e-5 && quenched < steps; ++quenched) {
        for (std::size_t i = 0; i < sim.world().numBodies(); ++i) {
            sim.world().v[i].setZero();
            sim.world().w[i].setZero();
        }
        sim.step();
        v = std::max(grainSpeed(), sim.world().v[pistonId].norm());
    }

    LoadedSystem s;
    s.quenchSteps = quenched;
    s.grainSpeed = grainSpeed();
    World w = sim.world();
    double ke = 0.0;
    for (std::size_t i = 0; i < w.numBodies(); ++i) {
        ke += 0.5 * w.mass[i] * w.v[i].squaredNorm();
        w.v[i].setZero();
        w.w[i].setZero();
    }
    s.prepKinetic = ke;
    std::size_t piston = w.numBodies();
    for (std::size_t k = 0; k < w.numWalls(); ++k)
        if (w.wallName[k] == "piston") piston = w.numGrains + k;
    if (piston == w.numBodies()) throw std::logic_error("loadedPacking: no piston");
    s.pistonSpeed = sim.world().v[piston].norm();
    s.load = sim.world().appliedForce(static_cast<BodyId>(piston), sim.world().time).norm();
    s.grains = w.numGrains;
    const int up = spec.dimension == 2 ? 1 : 2;
    s.depth = w.x[piston][up];  // base at 0, d_max = 1
    double sumD = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) sumD += 2.0 * w.radius[i];
    s.meanDiameter = sumD / static_cast<double>(w.numGrains);
    // A fresh run of the state at rest: its contacts carry no reactions.
    s.run.emplace(sceneFromWorld(std::move(w), Method::CD, 1.0, {}, {}, sim.scene().simulation.margin, 1,
                                 "load-step packing"));
    s.run->detect();
    s.run->match();
    const World& at = s.run->world();
    const std::vector<Contact>& contacts = s.contacts();
    for (std::size_t k = 0; k < at.numWalls(); ++k)
        if (at.wallName[k] == "base") {
            const auto base = static_cast<BodyId>(at.numGrains + k);
            for (std::size_t c = 0; c < contacts.size(); ++c)
                if (contacts[c].a == base || contacts[c].b == base) s.probe.push_back(c);
        }
    s.probeAxis = Vec3::Unit(up);
    return s;
}

namespace {

/// max_c |R_c − R*_c| / scale.
double maxError(const std::vector<SolverRow>& rows, const std::vector<Vec3>& ref, double dt, double scale) {
    double e = 0.0;
    for (std::size_t c = 0; c < rows.size(); ++c) e = std::max(e, (rows[c].P / dt - ref[c]).norm());
    return e / scale;
}

}  // namespace

Convergence sweepsToEpsilon(const LoadedSystem& system, CdSettings settings, std::uint64_t seed, double epsilon,
                            int maxSweeps, bool keepHistory) {
    Convergence out;
    settings.warmStart = false;  // reactions start from zero
    settings.criterion = Criterion::Fixed;
    settings.iterations = maxSweeps;
    Simulation sim = *system.run;
    sim.setSeed(seed);
    CdSolver& solver = sim.cd();
    solver.settings() = settings;
    if (!system.exact.empty()) {
        const std::vector<Vec3>& ref = system.exact;
        double sum = 0.0;
        for (const Vec3& r : ref) sum += r.norm();
        out.scale = sum / static_cast<double>(ref.size());
        const double scale = out.scale;
        solver.setSweepObserver([&](int sweeps, const std::vector<SolverRow>& rows) {
            const double e = maxError(rows, ref, 1.0, scale);
            if (keepHistory) out.error.push_back(e);
            out.sweeps = sweeps;
            out.reached = e <= epsilon;
            return out.reached;
        });
        sim.solve();
        return out;
    }
    if (system.probe.empty()) throw std::runtime_error("load step: a packing without base contacts");
    // The force on the base (contacts act on b; the base is a wall, so a
    // grain–base contact has the base as b and its reaction pushes the base).
    std::vector<double> force;
    solver.setSweepObserver([&](int sweeps, const std::vector<SolverRow>& rows) {
        double f = 0.0;
        for (std::size_t c : system.probe) f += std::abs(rows[c].P.dot(system.probeAxis));
        force.push_back(f);
        const int half = sweeps / 2;
        return sweeps >= 20 && f > 0.0 &&
               std::abs(f - force[static_cast<std::size_t>(half - 1)]) <= 1e-2 * epsilon * f;
    });
    sim.solve();
    const double limit = force.empty() ? 0.0 : force.back();
    out.scale = limit;
    out.referenceSweeps = static_cast<int>(force.size());
    if (limit <= 0.0) return out;
    const int n = static_cast<int>(force.size());
    const bool settled = n < maxSweeps;
    int first = n;
    for (int k = n - 1; k >= 0; --k) {
        if (std::abs(force[static_cast<std::size_t>(k)] - limit) > epsilon * limit) break;
        first = k;
    }
    out.sweeps = first + 1;
    out.reached = settled && first < n;
    if (keepHistory)
        for (double f : force) out.error.push_back(std::abs(f - limit) / limit);
    return out;
}

std::vector<long> parseCounts(const std::string& key, const std::string& text, long minValue) {
    std::string t = text;
    std::replace(t.begin(), t.end(), ',', ' ');
    std::istringstream in(t);
    std::vector<long> out;
    std::string word;
    while (in >> word) {
        const std::optional<long> v = parseInteger(word);
        if (!v || *v < minValue)
            throw InputError("key '" + key + "': '" + text + "' is not a list of integers >= " +
                             std::to_string(minValue) + " (e.g. \"100 200 400\"; empty to skip)");
        out.push_back(*v);
    }
    return out;
}

}  // namespace moreau::loadstep
