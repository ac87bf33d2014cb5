/// `moreau bench`: throughput of the CD sweeps and of contact detection on a
/// dense 3D packing (a jittered cubic lattice in contact, or a packing file).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <tuple>
#include <ctime>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include <unistd.h>

#include "moreau/core/progress.hpp"
#include "moreau/analysis/observables.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/clump.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/distributed_simulation.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

namespace {


/// A memory field of /proc/self/status ("VmHWM:", "VmRSS:") in bytes, 0 if unknown.
double statusBytes(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) * 1024.0;
    return 0.0;
}

/// Peak resident memory of this process in bytes (VmHWM), 0 if unknown.
double peakRssBytes() { return statusBytes("VmHWM:"); }

/// The clocks a timed part is read with: wall time, this process's CPU time
/// (all threads) and the machine's stolen time (a virtual machine's CPUs
/// running someone else: /proc/stat's steal column, all CPUs; NaN where there
/// is none to read). On a shared machine a run whose CPU use is well below
/// 100 % per thread, or that had time stolen, was slowed by its neighbours.
struct Clocks {
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu = processCpuSeconds();
    double stolen = stolenSeconds();

    static double processCpuSeconds() {
        timespec t{};
        return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0
                   ? static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec)
                   : kNaN;
    }
    static double stolenSeconds() {
        // "cpu  user nice system idle iowait irq softirq steal ...", in clock ticks.
        std::ifstream in("/proc/stat");
        std::string label;
        double field[8];
        if (!(in >> label) || label != "cpu") return kNaN;
        for (double& f : field)
            if (!(in >> f)) return kNaN;
        return field[7] / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
};

/// The noise readings of a part begun at `start`, for the results: its CPU
/// time, CPU use per thread in % of its wall time (of `threadSeconds`, the
/// thread-seconds it had, where given), and the time stolen.
nlohmann::json noiseReadings(const Clocks& start, double threadSeconds = 0.0) {
    const Clocks end;
    const double cpu = end.cpu - start.cpu, stolen = end.stolen - start.stolen;
    const double wall = std::chrono::duration<double>(end.wall - start.wall).count();
    if (!(threadSeconds > 0.0)) threadSeconds = wall * omp_get_max_threads();
    nlohmann::json j;
    j["cpu_seconds"] = cpu;
    j["cpu_use_percent"] = 100.0 * cpu / threadSeconds;
    j["stolen_seconds"] = numberOrNull(stolen);
    return j;
}

/// `bench.alternate`: the timed steps cut into slices run alternately on one
/// thread and on the --threads of the bench, so that a speed-up is measured
/// within the same minute. On a shared machine whose speed drifts by tens of
/// percent between runs, separate runs cannot tell 1.7× from 1.8×; slices a
/// few tenths of a second long, interleaved, see nearly the same machine. The
/// trajectory is the same bits: a result never depends on the thread count.
///
/// `bench.settle` leaves the first S steps of every slice untimed (they are
/// still steps of the trajectory): a core that sat idle through the last
/// slice runs slow for some tens of milliseconds when work resumes (on this
/// machine, measured in session 8: the two ranges of the MD force pass
/// differed by 250–330 µs per step in the first 10 steps of a two-thread
/// slice, 50–110 µs after 150 steps), which the speed-up would otherwise
/// charge to the code.
///
/// `bench.capacity` adds a third slice before each one-thread slice: as many
/// independent copies of the bench as --threads, one thread each, at once
/// (the copies start from the state the timed steps start from and never
/// touch the timed trajectory). Their summed rate over a lone thread's is
/// what the machine gives that many cores of perfectly parallel work at that
/// moment (shared caches, memory bandwidth, a neighbour on a virtual
/// machine's cores): a speed-up is judged against it.
struct Alternation {
    long slice = 0;         ///< steps per slice; 0: no alternation (every step on --threads)
    long settle = 0;        ///< untimed steps at the start of every slice
    int threads = 1;        ///< the bench's --threads
    bool capacity = false;  ///< with the slices of independent copies
    double seconds[2] = {0.0, 0.0};   ///< [0]: one thread, [1]: --threads (the time the rate counts)
    double wall[3] = {0.0, 0.0, 0.0};  ///< all the slices' wall time, likewise ([2]: the copies)
    double done[2] = {0.0, 0.0};       ///< what the rate counts (updates, particle-steps) on each
    std::vector<double> pairRatios;    ///< each slice pair's rate on --threads over its rate on one thread
    std::vector<double> copyRates;     ///< each copies slice's summed rate
    std::vector<double> capacityRatios;  ///< each copies slice's summed rate over the next one-thread slice's
    double pendingRate = 0.0;          ///< the last one-thread slice's rate, until its pair ends
    int copiesRun = 0;                 ///< copies that ran at once (the threads OpenMP gave)

    /// The slices of `steps` timed steps: at least one on each thread count.
    Alternation(const char* bench, long sliceSteps, long settleSteps, bool withCapacity, long steps, int benchThreads)
        : slice(sliceSteps), settle(settleSteps), threads(benchThreads), capacity(withCapacity) {
        if (slice > 0 && steps <= slice)
            throw InputError(std::string("bench ") + bench + ": key 'bench.alternate': " + std::to_string(slice) +
                             " leaves no slice on --threads in bench.steps = " + std::to_string(steps) +
                             " timed steps (allowed: " +
                             (steps > 1 ? "0, or 1 to " + std::to_string(steps - 1) : std::string("0")) + ")");
        if (settle > 0 && settle >= std::max(slice, 1L))
            throw InputError(std::string("bench ") + bench + ": key 'bench.settle': " + std::to_string(settle) +
                             " leaves no timed step in slices of bench.alternate = " + std::to_string(slice) +
                             " steps (allowed: " +
                             (slice > 1 ? "0 to " + std::to_string(slice - 1) : std::string("0 with this bench.alternate")) + ")");
        if (capacity && slice == 0)
            throw InputError(std::string("bench ") + bench +
                             ": key 'bench.capacity': true needs slices (allowed: false, or true with bench.alternate >= 1)");
    }

    /// About how many simulation steps `steps` timed steps take with the
    /// copies slices (the progress line's plan).
    double plannedSteps(long steps) const {
        return static_cast<double>(steps) * (capacity ? 1.0 + 0.5 * threads : 1.0);
    }

    static std::vector<KeySpec> keys() {
        return {{"bench.alternate", KeyType::Integer, "0",
                 "0: every timed step on --threads; N > 0: the timed steps in slices of N steps, alternately on 1 "
                 "thread and on --threads, reporting both rates and the speed-up (same trajectory bits)",
                 0, 1e9, {}},
                {"bench.capacity", KeyType::Bool, "false",
                 "with bench.alternate: before each one-thread slice, --threads independent copies of the bench run N "
                 "steps at once, one thread each; reports what the machine gives that many cores (capacity)",
                 0, 0, {}},
                {"bench.settle", KeyType::Integer, "0",
                 "with bench.alternate: the first S steps of every slice (and of every copy's) run untimed, so that a "
                 "core left idle by the last slice is up to speed when timing starts (0 to bench.alternate - 1)",
                 0, 1e9, {}}};
    }
    /// Runs `steps` steps through run(n, which, timed) (n steps on the
    /// current thread count, `which` 0 for one thread and 1 for --threads,
    /// returning what they did and the seconds the rate counts; `timed`
    /// false for the settling steps, whose return is ignored), in slices
    /// when alternating; with capacity, copyStep(i) runs one step of copy i
    /// (on the calling thread alone) and returns the same pair.
    template <class Run, class CopyStep>
    void time(long steps, Run&& run, CopyStep&& copyStep) {
        for (long s = 0, q = 0; s < steps; ++q) {
            const long n = slice > 0 ? std::min(slice, steps - s) : steps;
            const int which = slice > 0 && q % 2 == 0 ? 0 : 1;
            if (which == 0 && capacity) runCopies(n, copyStep);
            omp_set_num_threads(which == 0 ? 1 : threads);
            s += n;
            const long untimed = std::min(settle, n - 1);  // the last slice may be short
            if (untimed > 0) run(untimed, which, false);
            const auto t0 = std::chrono::steady_clock::now();
            const auto [d, secs] = run(n - untimed, which, true);
            wall[which] += secondsSince(t0);
            seconds[which] += secs;
            done[which] += d;
            if (which == 0) {
                pendingRate = d / secs;
                if (capacity) capacityRatios.push_back(copyRates.back() / pendingRate);
            } else if (pendingRate > 0.0) {
                pairRatios.push_back(d / secs / pendingRate);
                pendingRate = 0.0;
            }
        }
        omp_set_num_threads(threads);
    }
    /// The copies slice: every copy from the same moment, each on its own
    /// thread, until one has run n steps (the others stop after their
    /// current step, so all of them ran side by side). Each copy's rate is
    /// over its own steps; their sum is the slice's rate.
    template <class CopyStep>
    void runCopies(long n, CopyStep& copyStep) {
        std::vector<double> rate(static_cast<std::size_t>(threads), 0.0);
        std::atomic<bool> stop{false};
        int team = 0;
        const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
        {
            const int i = omp_get_thread_num();
#pragma omp single
            team = omp_get_num_threads();
            omp_set_num_threads(1);  // this thread's nested regions: one thread
            double d = 0.0, secs = 0.0;
            const long untimed = std::min(settle, n - 1);
            for (long k = 0; k < untimed; ++k) copyStep(i);
            for (long k = untimed; k < n && !stop.load(std::memory_order_relaxed); ++k) {
                const auto [dk, sk] = copyStep(i);
                d += dk;
                secs += sk;
            }
            stop.store(true, std::memory_order_relaxed);
            rate[static_cast<std::size_t>(i)] = secs > 0.0 ? d / secs : 0.0;
        }
        wall[2] += secondsSince(t0);
        copiesRun = team;
        double sum = 0.0;
        for (double r : rate) sum += r;
        copyRates.push_back(sum);
    }
    /// Thread-seconds the timed steps had (for their CPU use), the copies'
    /// included.
    double threadSeconds() const { return wall[0] + (wall[1] + wall[2]) * threads; }

    static double median(std::vector<double> r) {
        std::sort(r.begin(), r.end());
        if (r.empty()) return kNaN;
        return r.size() % 2 == 1 ? r[r.size() / 2] : 0.5 * (r[r.size() / 2 - 1] + r[r.size() / 2]);
    }
    /// The results' keys of the one-thread slices and the speed-up.
    void report(nlohmann::json& results, const std::string& rateKey) const {
        if (slice == 0) return;
        const double oneThread = done[0] / seconds[0], speedup = (done[1] / seconds[1]) / oneThread;
        results["alternate_slice_steps"] = slice;
        results["alternate_settle_steps"] = settle;
        results["alternate_pairs"] = pairRatios.size();
        results["one_thread_seconds"] = seconds[0];
        results["one_thread_" + rateKey] = oneThread;
        results["speedup"] = speedup;
        results["speedup_median_of_pairs"] = median(pairRatios);
        results["speedup_min_of_pairs"] =
            pairRatios.empty() ? kNaN : *std::min_element(pairRatios.begin(), pairRatios.end());
        results["speedup_max_of_pairs"] =
            pairRatios.empty() ? kNaN : *std::max_element(pairRatios.begin(), pairRatios.end());
        if (!capacity) return;
        double sum = 0.0;
        for (double r : copyRates) sum += r;
        const double concurrent = sum / static_cast<double>(copyRates.size());
        results["capacity_copies"] = copiesRun;
        results["capacity_slices"] = copyRates.size();
        results["concurrent_copies_" + rateKey] = concurrent;
        results["capacity"] = concurrent / oneThread;
        results["capacity_median_of_pairs"] = median(capacityRatios);
        results["speedup_over_capacity"] = speedup / (concurrent / oneThread);
    }
};

struct BenchSetup {
    Scene scene;  ///< settings (cd.*, seed) and the bench.* values
    std::string source;
    std::string clump;               ///< bench.shape = clump: the cluster's name (bench.clump, or "custom"); else empty
    Vec3 spacing = Vec3::Zero();     ///< the clump crystal's lattice spacing (zero otherwise)
    std::string flat;                ///< bench.shape = disk or polygon: that word (a 2D world); else empty
    /// Distributed input (rankBench; the sphere world): the grains, and the
    /// world of some of them with the bench's walls, so that each rank
    /// builds only its part; scene.world then holds the walls alone.
    /// Empty where scene.world holds the whole world.
    std::vector<GrainSpec> grains;
    std::function<World(const std::vector<GrainSpec>&)> worldOf;
};

/// bench.clump's clusters, as clump.spheres (units of the grain size), each
/// made of spheres of radius 0.5, so that a component is the size of the
/// sphere bench's grains: a dimer of two spheres half a diameter apart
/// (aspect ratio 1.5), an equilateral trimer of side 0.5, and the
/// tetrahedron of examples/clumps_3d.ini scaled by 1.25 (centres ±0.3125).
struct BenchCluster {
    const char* name;
    const char* spheres;
};
constexpr BenchCluster kBenchClusters[] = {
    {"dimer", "-0.25 0 0 0.5; 0.25 0 0 0.5"},
    {"trimer", "0 0 0 0.5; 0.5 0 0 0.5; 0.25 0.4330127018922193 0 0.5"},
    {"tetra", "0.3125 0.3125 0.3125 0.5; 0.3125 -0.3125 -0.3125 0.5; -0.3125 0.3125 -0.3125 0.5; "
              "-0.3125 -0.3125 0.3125 0.5"},
};

/// The keys every bench world reads (benchWorld).
std::vector<KeySpec> benchWorldKeys() {
    std::vector<std::string> clusters;
    for (const BenchCluster& c : kBenchClusters) clusters.emplace_back(c.name);
    return {
        {"bench.particles", KeyType::Integer, "100000", "grains of the lattice packing (ignored with bench.packing)", 1, 1e9, {}},
        {"bench.packing", KeyType::Text, "", "packing file (`x y z radius` or `id x y z radius` rows) instead of the lattice", -kInf, kInf, {}},
        {"bench.jitter", KeyType::Real, "0.02", "lattice jitter as a fraction of the radius", 0, 0.5, {}},
        {"bench.mu", KeyType::Real, "0.5", "friction coefficient of all contacts", 0, kInf, {}},
        {"bench.shape", KeyType::Choice, "sphere",
         "sphere: the lattice of spheres; clump: rigid clusters of spheres (bench.clump) on a lattice where each "
         "touches its neighbours (docs/md-performance.md, \"Clumps\"); disk and polygon: a 2D square lattice of "
         "pitch 1 of disks of radius 0.5 or of regular polygons (bench.polygon_vertices) as wide and tall as the "
         "pitch, each touching its four neighbours (docs/md-performance.md, \"Polygons\")",
         0, 0, {"sphere", "clump", "disk", "polygon"}},
        {"bench.polygon_vertices", KeyType::Integer, "4",
         "with bench.shape = polygon: the regular polygon's vertices (4: unit squares face to face)", 3, 64, {}},
        {"bench.clump", KeyType::Choice, "tetra",
         "with bench.shape = clump: the cluster, spheres of radius 0.5 (dimer: 2 spheres 0.5 apart; trimer: 3 at "
         "the corners of a triangle of side 0.5; tetra: 4 at the corners of a tetrahedron of edge 0.88)",
         0, 0, clusters},
        {"bench.clump_spheres", KeyType::Text, "",
         "with bench.shape = clump: the cluster's spheres as clump.spheres ('x y z r; ...') instead of bench.clump, "
         "scaled so that the largest has radius 0.5",
         -kInf, kInf, {}},
    };
}

/// Whether `key` is among the --set values.
bool givenKey(const ExperimentOptions& options, const std::string& key) {
    for (const auto& s : options.sets)
        if (s.rfind(key + "=", 0) == 0) return true;
    return false;
}

/// Component i of a clump of `shape` at `size` turned by q: its centre
/// relative to the body's and its radius.
struct PlacedComponent {
    Vec3 offset;
    double radius;
};
std::vector<PlacedComponent> placedComponents(const ClumpShape& shape, double size, const Quat& q) {
    std::vector<PlacedComponent> c;
    for (std::size_t i = 0; i < shape.centre.size(); ++i)
        c.push_back({turned(q, size * shape.centre[i]), size * shape.radius[i]});
    return c;
}

/// The smallest shift t along the unit vector e at and beyond which two
/// spheres of summed radius R, the second at w from the first, stay apart
/// when the second moves by t e: the larger root of |w + t e| = R (−∞ if the
/// line never comes within R).
double clearShift(const Vec3& w, const Vec3& e, double R) {
    const double b = w.dot(e), disc = b * b - w.squaredNorm() + R * R;
    return disc > 0.0 ? -b + std::sqrt(disc) : -kInf;
}

/// The lattice spacing of clumps made of `parts` (one orientation): the
/// closest along x, then of rows along y, then of layers along z.
Vec3 crystalSpacing(const std::vector<PlacedComponent>& parts, double reach) {
    // The closest spacing along axis `a` of translates offset by `offsets` across it.
    auto closest = [&](int a, const std::vector<Vec3>& offsets) {
        double t = 0.0;
        for (const Vec3& o : offsets)
            for (const PlacedComponent& p : parts)
                for (const PlacedComponent& q : parts)
                    t = std::max(t, clearShift(o + q.offset - p.offset, Vec3::Unit(a), p.radius + q.radius));
        return t;
    };
    auto span = [&](double pitch) { return static_cast<int>(std::ceil(reach / pitch)); };
    Vec3 spacing;
    spacing.x() = closest(0, {Vec3::Zero()});
    std::vector<Vec3> rows;
    for (int m = -span(spacing.x()); m <= span(spacing.x()); ++m) rows.emplace_back(m * spacing.x(), 0.0, 0.0);
    spacing.y() = closest(1, rows);
    std::vector<Vec3> layers;
    for (int m = -span(spacing.x()); m <= span(spacing.x()); ++m)
        for (int l = -span(spacing.y()); l <= span(spacing.y()); ++l)
            layers.emplace_back(m * spacing.x(), l * spacing.y(), 0.0);
    spacing.z() = closest(2, layers);
    return spacing;
}

/// Pairs of components of different clumps within `tolerance` of touching,
/// per clump, in the infinite crystal of `parts` at `spacing`.
double crystalContacts(const std::vector<PlacedComponent>& parts, const Vec3& spacing, double reach, double tolerance) {
    const int sx = static_cast<int>(std::ceil(reach / spacing.x())), sy = static_cast<int>(std::ceil(reach / spacing.y())),
              sz = static_cast<int>(std::ceil(reach / spacing.z()));
    double pairs = 0.0;
    for (int k = -sz; k <= sz; ++k)
        for (int l = -sy; l <= sy; ++l)
            for (int m = -sx; m <= sx; ++m) {
                if (k == 0 && l == 0 && m == 0) continue;
                const Vec3 o = Vec3(m, l, k).cwiseProduct(spacing);
                for (const PlacedComponent& p : parts)
                    for (const PlacedComponent& q : parts)
                        pairs += (o + q.offset - p.offset).norm() - p.radius - q.radius < tolerance ? 1.0 : 0.0;
            }
    return 0.5 * pairs;  // each pair seen from both clumps
}

/// The clump crystal's candidate orientations: the frame the spheres were
/// given in, then this many uniform rotations drawn from the seed.
constexpr std::size_t kCrystalDraws = 16;
/// The gap under which two components count as touching in the choice.
constexpr double kCrystalTolerance = 0.01;

/// The clump crystal of bench.shape = clump: n clumps, all turned alike, on
/// a lattice whose spacing along x, y and z is the closest that keeps the
/// translates apart (crystalSpacing): each clump touches its neighbours
/// along each axis at one pair of components or more, as the bench's spheres
/// touch on theirs (for a sphere the spacing is its diameter). The turn is,
/// of the candidates (kCrystalDraws), the one whose crystal has the most
/// pairs of components touching (within kCrystalTolerance) per clump, the
/// first on ties: the tetra as given touches its six neighbours at four pairs
/// each (12 pairs per clump, 3 per component, as on the spheres' lattice),
/// where its turns at random give 3 per clump. Then each centre is jittered
/// by `jitter` times 0.5 on each axis (the sphere lattice's draws, the same
/// stream): about half the touching pairs overlap. The lattice is the
/// spheres' (x fastest, the side cbrt(n) rounded, the top layer partly
/// filled). `lo`, `hi`: the components' box before the jitter (the walls).
std::vector<GrainSpec> clumpCrystal(const ClumpShape& shape, double size, std::size_t n, double jitter,
                                    std::uint64_t seed, Vec3& spacing, Vec3& lo, Vec3& hi) {
    const double reach = 2.0 * size * shape.boundingRadius;
    std::vector<GrainSpec> draws(kCrystalDraws);
    randomOrientations(draws, 3, seed);
    draws.insert(draws.begin(), GrainSpec{});  // first: as the spheres were given
    Quat turn = Quat::Identity();
    std::vector<PlacedComponent> parts;
    double most = -1.0;
    for (const GrainSpec& d : draws) {
        const std::vector<PlacedComponent> p = placedComponents(shape, size, d.orientation * shape.frame);
        const Vec3 a = crystalSpacing(p, reach);
        const double c = crystalContacts(p, a, reach + kCrystalTolerance, kCrystalTolerance);
        if (c > most) {
            most = c;
            turn = d.orientation;
            parts = p;
            spacing = a;
        }
    }
    Vec3 low = Vec3::Constant(kInf), high = Vec3::Constant(-kInf);
    for (const PlacedComponent& p : parts) {
        low = low.cwiseMin(p.offset - Vec3::Constant(p.radius));
        high = high.cwiseMax(p.offset + Vec3::Constant(p.radius));
    }
    const auto side = static_cast<std::size_t>(std::max(1.0, std::round(std::cbrt(static_cast<double>(n)))));
    std::vector<GrainSpec> grains;
    grains.reserve(n);
    lo = Vec3::Constant(kInf);
    hi = Vec3::Constant(-kInf);
    for (std::size_t k = 0; grains.size() < n; ++k)
        for (std::size_t j = 0; j < side && grains.size() < n; ++j)
            for (std::size_t i = 0; i < side && grains.size() < n; ++i) {
                GrainSpec g;
                g.position = Vec3(static_cast<double>(i), static_cast<double>(j), static_cast<double>(k))
                                 .cwiseProduct(spacing) - low;
                g.radius = size * shape.boundingRadius;
                g.orientation = turn;
                lo = lo.cwiseMin(g.position + low);
                hi = hi.cwiseMax(g.position + high);
                grains.push_back(g);
            }
    Rng rng = Rng::stream(seed, kLatticeJitterStream);
    const double amplitude = 0.5 * jitter;
    for (GrainSpec& g : grains)
        for (int a = 0; a < 3; ++a) g.position[a] += rng.uniform(-amplitude, amplitude);
    return grains;
}

const std::string& benchPacking(const Scene& scene) { return sceneText(scene, "bench.packing"); }

/// The end of every bench world: `w` with frictional planes (name, a point,
/// the normal into the grains) of the bench's μ and gravity `g` becomes the
/// scene's world, and the contact reach scales with the smallest radius
/// `rmin` (margin, skin and inner skin as fractions of it, as scenes do).
using BenchPlane = std::tuple<const char*, Vec3, Vec3>;

/// `w` (its grains in it) with the bench's frictional planes (name, point,
/// normal), friction mu and gravity g.
World withBenchWalls(World w, double mu, const Vec3& g, const std::vector<BenchPlane>& planes) {
    w.muGrain = mu;
    w.gravity = g;
    for (const auto& [name, at, normal] : planes) {
        WallShape s;
        s.kind = ShapeKind::Plane;
        s.direction = normal;
        s.mu = mu;
        w.addWall(name, s, at, false, 0.0, {false, false, false});
    }
    return w;
}

void finishBenchWorld(BenchSetup& b, World w, const Vec3& g, double rmin, const std::vector<BenchPlane>& planes) {
    b.scene.world = withBenchWalls(std::move(w), sceneReal(b.scene, "bench.mu"), g, planes);
    b.scene.simulation.margin = sceneReal(b.scene, "contact.margin") * rmin;
    b.scene.simulation.skin = sceneReal(b.scene, "contact.skin") * rmin;
    b.scene.simulation.innerSkin = sceneReal(b.scene, "contact.inner_skin") * rmin;
}

/// The 2D bench world of bench.shape = disk or polygon: bench.particles
/// grains on a square lattice of pitch 1 (x fastest, the side √n rounded,
/// the top row partly filled), jittered as the spheres' lattice is (the same
/// stream), density 1; disks of radius 0.5 or regular polygons of
/// bench.polygon_vertices at angle 0 scaled to the pitch's width (a square:
/// side 1), so that each grain touches its four neighbours (polygons with
/// more than four vertices: along x at vertices, along y at faces or
/// vertices). Frictional planes x = 0, x = L and a floor y = 0 at the
/// lattice's box, gravity −y.
BenchSetup flatBenchWorld(BenchSetup b, const std::string& shape) {
    b.flat = shape;
    World w;
    w.dimension = 2;
    const auto n = static_cast<std::size_t>(sceneInteger(b.scene, "bench.particles"));
    const auto side = static_cast<std::size_t>(std::max(1.0, std::round(std::sqrt(static_cast<double>(n)))));
    LatticeParams lp;
    lp.type = LatticeType::Square;
    lp.counts = {side, (n + side - 1) / side, 1};
    lp.radius = 0.5;
    lp.origin = Vec3(0.5, 0.5, 0.0);
    lp.jitter = sceneReal(b.scene, "bench.jitter");
    lp.seed = b.scene.simulation.seed;
    std::vector<GrainSpec> grains = makeLattice(lp);
    grains.resize(n);
    double rmin = 0.5;
    if (shape == "disk") {
        addGrains(w, grains, GrainShape::Disk, 1.0);
        b.source = "square lattice of disks";
    } else {
        w.polygonShapes.push_back(regularPolygon(static_cast<int>(sceneInteger(b.scene, "bench.polygon_vertices"))));
        const PolygonShape& p = w.polygonShapes.back();
        const double width = 2.0 * *std::max_element(p.vx.begin(), p.vx.end());
        for (GrainSpec& g : grains) g.radius = 1.0 / width;  // the circumradius: as wide as the pitch
        addPolygons(w, grains, 1, 1.0);
        b.source = "square lattice of polygons";
        rmin = std::sqrt(p.area / M_PI) / width;  // the equivalent radius
    }
    finishBenchWorld(b, std::move(w), Vec3(0, -9.81, 0), rmin,
                     {{"floor", Vec3::Zero(), Vec3::UnitY()},
                      {"x0", Vec3::Zero(), Vec3::UnitX()},
                      {"x1", Vec3(static_cast<double>(side), 0, 0), -Vec3::UnitX()}});
    return b;
}

/// The bench world: grains from bench.packing or a cubic lattice of
/// bench.particles grains (d = 1, density 1), frictional planes x = 0, x = L,
/// y = 0, y = L and a floor z = 0 (the LAMMPS protocol's container; the planes
/// sit at the bounding box rounded to whole diameters), gravity −z. With
/// bench.shape = clump the grains are clumps (clumpCrystal, or the packing
/// file's rows `x y z size [qw qx qy qz]` as grains.source = file reads them)
/// and the planes sit at the box of their components. `bench` names the bench
/// in messages.
BenchSetup benchWorld(const ExperimentOptions& options, const std::vector<KeySpec>& extra, const std::string& bench) {
    std::vector<KeySpec> keys = benchWorldKeys();
    keys.insert(keys.end(), extra.begin(), extra.end());
    BenchSetup b;
    b.scene = loadSceneText("[grains]\nsource = chain\n[chain]\ncount = 1\n", "bench", setsWithSeed(options), keys);
    const bool clumps = sceneText(b.scene, "bench.shape") == "clump";
    auto fail = [&](const std::string& key, const std::string& what, const std::string& allowed) {
        throw InputError("bench " + bench + ": key '" + key + "': " + what + " (allowed: " + allowed + ")");
    };
    const std::string& clumpSpheres = sceneText(b.scene, "bench.clump_spheres");
    if (!clumps && (givenKey(options, "bench.clump") || !clumpSpheres.empty()))
        fail(givenKey(options, "bench.clump") ? "bench.clump" : "bench.clump_spheres", "needs bench.shape = clump",
             "bench.shape=clump with it, or leave it out");
    const std::string& shapeName = sceneText(b.scene, "bench.shape");
    if (shapeName != "polygon" && givenKey(options, "bench.polygon_vertices"))
        fail("bench.polygon_vertices", "needs bench.shape = polygon", "bench.shape=polygon with it, or leave it out");
    if ((shapeName == "disk" || shapeName == "polygon") && !benchPacking(b.scene).empty())
        fail("bench.packing", "is a 3D packing; bench.shape = " + shapeName + " builds its own 2D lattice",
             "bench.shape=sphere or clump with it");
    if (shapeName == "disk" || shapeName == "polygon") return flatBenchWorld(std::move(b), shapeName);
    World w;
    w.dimension = 3;
    std::vector<GrainSpec> grains;
    Vec3 lo = Vec3::Constant(kInf), hi = Vec3::Constant(-kInf);
    double rmin = kInf;  // the smallest sphere (component) radius
    const std::string packing = sceneText(b.scene, "bench.packing");
    if (!clumps) {
        if (!packing.empty()) {
            grains = readPackingFile(packing);
            b.source = packing;
        } else {
            const auto n = static_cast<std::size_t>(sceneInteger(b.scene, "bench.particles"));
            const auto side = static_cast<std::size_t>(std::max(1.0, std::round(std::cbrt(static_cast<double>(n)))));
            LatticeParams lp;
            lp.type = LatticeType::Cubic;
            lp.counts = {side, side, (n + side * side - 1) / (side * side)};
            lp.radius = 0.5;
            lp.origin = Vec3(0.5, 0.5, 0.5);
            lp.jitter = sceneReal(b.scene, "bench.jitter");
            lp.seed = b.scene.simulation.seed;
            grains = makeLattice(lp);
            grains.resize(n);
            b.source = "cubic lattice";
        }
        for (const auto& g : grains) {
            lo = lo.cwiseMin(g.position - Vec3::Constant(g.radius));
            hi = hi.cwiseMax(g.position + Vec3::Constant(g.radius));
            rmin = std::min(rmin, g.radius);
        }
        lo = lo.array().round();
        hi = hi.array().round();
        // Distributed input on ranks (rankBench): the walls here, each
        // rank's grains there.
        const std::vector<BenchPlane> planes = {{"floor", Vec3(0, 0, lo.z()), Vec3::UnitZ()},
                                                {"x0", Vec3(lo.x(), 0, 0), Vec3::UnitX()},
                                                {"x1", Vec3(hi.x(), 0, 0), -Vec3::UnitX()},
                                                {"y0", Vec3(0, lo.y(), 0), Vec3::UnitY()},
                                                {"y1", Vec3(0, hi.y(), 0), -Vec3::UnitY()}};
        b.worldOf = [mu = sceneReal(b.scene, "bench.mu"), planes](const std::vector<GrainSpec>& some) {
            World part;
            part.dimension = 3;
            addGrains(part, some, GrainShape::Sphere, 1.0);
            return withBenchWalls(std::move(part), mu, Vec3(0, 0, -9.81), planes);
        };
        const bool decomposable =
            std::any_of(keys.begin(), keys.end(), [](const KeySpec& k) { return k.key == "bench.decomposed"; });
        const bool parts = decomposable && (comm::ranks() > 1 || sceneBool(b.scene, "bench.decomposed"));
        finishBenchWorld(b, World{}, Vec3(0, 0, -9.81), rmin, {});  // the reach
        b.scene.world = b.worldOf(parts ? std::vector<GrainSpec>{} : grains);
        if (parts) b.grains = std::move(grains);
        else b.worldOf = nullptr;
        return b;
    } else {
        std::string spheres = clumpSpheres;
        b.clump = "custom";
        if (spheres.empty()) {
            b.clump = sceneText(b.scene, "bench.clump");
            for (const BenchCluster& c : kBenchClusters)
                if (b.clump == c.name) spheres = c.spheres;
        }
        try {
            w.clumpShapes.push_back(makeClumpShape(parseClumpSpheres(spheres, 3), 3));
        } catch (const InputError& e) {
            fail("bench.clump_spheres", e.what(), kClumpSpheresAllowed);
        }
        const ClumpShape& shape = w.clumpShapes.back();
        const double size = 0.5 / *std::max_element(shape.radius.begin(), shape.radius.end());
        if (!packing.empty()) {
            // As grains.source = file: rows place the frame the spheres were given in.
            grains = readPackingFile(packing, PackingColumns::Oriented3D);
            for (GrainSpec& g : grains) g.radius *= shape.boundingRadius;
            addClumps(w, grains, 1, 1.0, 0.0, true);
            b.source = packing;
            for (std::size_t i = 0; i < w.numGrains; ++i)
                for (const PlacedComponent& p : placedComponents(shape, w.size[i], w.q[i])) {
                    lo = lo.cwiseMin(w.x[i] + p.offset - Vec3::Constant(p.radius));
                    hi = hi.cwiseMax(w.x[i] + p.offset + Vec3::Constant(p.radius));
                    rmin = std::min(rmin, p.radius);
                }
        } else {
            grains = clumpCrystal(shape, size, static_cast<std::size_t>(sceneInteger(b.scene, "bench.particles")),
                                  sceneReal(b.scene, "bench.jitter"), b.scene.simulation.seed, b.spacing, lo, hi);
            addClumps(w, grains, 1, 1.0);
            b.source = "clump crystal";
            rmin = size * *std::min_element(shape.radius.begin(), shape.radius.end());
        }
    }
    // Margin: 0.1 of the smallest radius, as scenes default to.
    finishBenchWorld(b, std::move(w), Vec3(0, 0, -9.81), rmin,
                     {{"floor", Vec3(0, 0, lo.z()), Vec3::UnitZ()},
                      {"x0", Vec3(lo.x(), 0, 0), Vec3::UnitX()},
                      {"x1", Vec3(hi.x(), 0, 0), -Vec3::UnitX()},
                      {"y0", Vec3(0, lo.y(), 0), Vec3::UnitY()},
                      {"y1", Vec3(0, hi.y(), 0), -Vec3::UnitY()}});
    return b;
}

/// The results that say what the grains are (every bench of the bench world):
/// `shape`, and for clumps `clump` and `lattice_spacing` (the crystal's);
/// `bodies` and `component_spheres` (a sphere's one, a clump's each).
void shapeResults(nlohmann::json& results, const BenchSetup& b, const World& world) {
    std::size_t components = 0;
    for (std::size_t i = 0; i < world.numGrains; ++i) components += world.components(i);
    results["shape"] = !b.flat.empty() ? b.flat : b.clump.empty() ? "sphere" : "clump";
    if (b.flat == "polygon") results["polygon_vertices"] = world.polygonShapes.front().vertices();
    if (!b.clump.empty()) {
        results["clump"] = b.clump;
        if (b.spacing != Vec3::Zero()) results["lattice_spacing"] = {b.spacing.x(), b.spacing.y(), b.spacing.z()};
    }
    results["bodies"] = world.numGrains;
    results["component_spheres"] = components;
}

}  // namespace

/// The CD bench's state: a Simulation (a copy of it is an independent
/// bench), stepped stage by stage so that the solve is timed apart from
/// detection. Last step's contacts are freed before the solve, as in any
/// run, so the peak memory is a run's.
struct CdBenchRun {
    Simulation sim;

    struct Step {
        double updates = 0.0;       ///< contacts × sweeps
        double sweepSeconds = 0.0;  ///< the sweeps alone
        double solveSeconds = 0.0;  ///< solve and integrate (sweeps and their preparation)
        std::size_t contacts = 0;
        long sweeps = 0;
        double levels = 0.0;
    };
    Step step() {
        sim.detect();
        sim.match();
        const auto t0 = std::chrono::steady_clock::now();
        sim.solve();
        sim.integrate();
        const CdStepStats& st = sim.solveStats();
        const CdSolver& solver = sim.cd();
        Step r;
        r.solveSeconds = secondsSince(t0);
        r.sweepSeconds = solver.lastSweepSeconds();
        r.contacts = sim.contacts().size();
        r.updates = static_cast<double>(r.contacts) * static_cast<double>(st.iterations);
        r.sweeps = st.iterations;
        r.levels = solver.levelsPerSweep();
        return r;
    }
};

namespace {

/// md-step's and cd-sweep's key for the one-rank point of a scaling series.
KeySpec decomposedKey() {
    return {"bench.decomposed", KeyType::Bool, "false",
            "step the scene through the domain decomposition (docs/distributed.md) on one rank too, as under "
            "mpirun: the one-rank point of a scaling series (detection and rebuilds timed)",
            0, 0, {}};
}

/// A bench under mpirun: the scene stepped by DistributedSimulation
/// (docs/distributed.md), `warmup` untimed steps then `steps` timed ones,
/// with what the ranks sent each other per rank and step. Oversubscribed
/// ranks give counts, not speed.
nlohmann::json rankBench(const std::string& name, BenchSetup b, long warmup, long steps) {
    progress::expectSteps(static_cast<double>(warmup + steps));
    const int ranks = comm::ranks();
    const Scene& scene = b.scene;
    const std::string mode = scene.simulation.method == Method::MD ? "md"
                             : scene.cd.distributed == CdDistributed::Exact ? "exact"
                                                                            : "domains";
    // Distributed input where the bench world allows it: each rank builds
    // the world of its brick's and halo's grains only.
    std::optional<DistributedSimulation> built;
    const long checkEvery = scene.simulation.rankCheckEvery;
    if (b.worldOf) {
        // The source owns the grains: the constructor releases them once it has built its part.
        auto grains = std::make_shared<const std::vector<GrainSpec>>(std::move(b.grains));
        SceneSource source;
        source.grains = grains->size();
        source.each = [grains](const std::function<void(std::size_t, const Vec3&, double)>& f) {
            for (std::size_t i = 0; i < grains->size(); ++i) f(i, (*grains)[i].position, (*grains)[i].radius);
        };
        source.build = [grains, &b](const std::vector<std::uint64_t>& ids) {
            std::vector<GrainSpec> some;
            some.reserve(ids.size());
            for (const std::uint64_t i : ids) some.push_back((*grains)[static_cast<std::size_t>(i)]);
            Scene part = sceneWithoutWorld(b.scene);
            part.world = b.worldOf(some);
            return part;
        };
        grains.reset();
        built.emplace(std::move(source));
    } else {
        built.emplace(std::move(b.scene));
    }
    DistributedSimulation& run = *built;
    run.setCheckEvery(checkEvery);
    const long start = run.part().world().step;
    run.advanceTo(start + warmup);
    const DistributedTraffic before = run.traffic();
    const long sweeps0 = run.sweeps(), checks0 = run.checks();
    const std::uint64_t collectives0 = comm::collectives();
    const DistributedTimes times0 = run.times();
    const long builds0 = run.listBuilds(), needs0 = run.listNeeds();
    comm::maxOverRanks(0.0);  // a barrier: no rank's clock counts another's late start
    const auto t0 = std::chrono::steady_clock::now();
    run.advanceTo(start + warmup + steps);
    const double seconds = comm::maxOverRanks(secondsSince(t0));
    const std::uint64_t collectives = comm::collectives() - collectives0 - 1;  // less the line above
    const long checks = run.checks() - checks0;
    // The parts' working-list builds in the timed steps (the fused
    // pipeline's; the same on every rank) and the steps at which each part
    // needed one itself, fewest and most over the ranks.
    const auto needs = static_cast<double>(run.listNeeds() - needs0);
    const nlohmann::json innerList = {{"builds", run.listBuilds() - builds0},
                                      {"needed_min", -comm::maxOverRanks(-needs)},
                                      {"needed_max", comm::maxOverRanks(needs)}};
    const DistributedTraffic after = run.traffic();
    // Each part of the timed steps: the slowest rank's seconds and the mean over the ranks.
    nlohmann::json phases;
    const DistributedTimes& times = run.times();
    for (const auto& [name, now, then] : {std::tuple{"rebuild", times.rebuild, times0.rebuild},
                                          std::tuple{"ghosts", times.ghosts, times0.ghosts},
                                          std::tuple{"solve", times.solve, times0.solve},
                                          std::tuple{"wait", times.wait, times0.wait},
                                          std::tuple{"restore", times.restore, times0.restore}}) {
        const double mine = now - then;
        const auto nanoseconds = static_cast<std::uint64_t>(std::llround(mine * 1e9));
        phases[name] = {{"max", comm::maxOverRanks(mine)},
                        {"mean", 1e-9 * static_cast<double>(comm::sumOverRanks(nanoseconds)) / ranks}};
    }
    // Each rank's share of the work, to tell a rank that is slower over the
    // whole run (more ghosts, pairs or walls, or a busier core) from ranks
    // slower in turn: its solve and wait seconds in the timed steps, its
    // owned and ghost grains and its working list's pairs at their end.
    nlohmann::json perRank;
    {
        const World& w = run.part().world();
        const MdPairList* list = run.part().md().pairList();
        const std::vector<double> mine{times.solve - times0.solve,
                                       times.wait - times0.wait,
                                       static_cast<double>(run.ownedGrains()),
                                       static_cast<double>(w.numGrains - run.ownedGrains()),
                                       list ? static_cast<double>(list->size()) : 0.0};
        std::vector<std::uint64_t> all(static_cast<std::size_t>(ranks) * mine.size(), 0);
        for (std::size_t k = 0; k < mine.size(); ++k)  // seconds in nanoseconds: integers sum exactly
            all[static_cast<std::size_t>(comm::rank()) * mine.size() + k] =
                static_cast<std::uint64_t>(std::llround(k < 2 ? mine[k] * 1e9 : mine[k]));
        comm::sumOverRanks(all);
        const char* names[] = {"solve", "wait", "owned", "ghosts", "pairs"};
        for (std::size_t k = 0; k < mine.size(); ++k) {
            nlohmann::json column = nlohmann::json::array();
            for (int r = 0; r < ranks; ++r) {
                const auto v = static_cast<double>(all[static_cast<std::size_t>(r) * mine.size() + k]);
                column.push_back(k < 2 ? 1e-9 * v : v);
            }
            perRank[names[k]] = column;
        }
    }
    // Memory: the largest rank's peak resident size when the timed steps
    // end (the count and the hash below hold no rank's whole world either).
    const auto steppingRss = comm::maxOverRanks(peakRssBytes());
    const std::size_t contacts = run.contactCount();  // the last step's, once each
    const std::size_t grains = run.wholeGrains();
    const std::uint64_t hash = run.stateHash();
    const double n = static_cast<double>(grains);
    const double perRankStep = static_cast<double>(ranks) * static_cast<double>(steps);
    const long sweeps = run.sweeps() - sweeps0;
    nlohmann::json results = {
        {"particles", grains},
        {"ranks", ranks},
        {"grid", run.grid()},
        {"mode", mode},
        {"steps", steps},
        {"seconds", seconds},
        {"particle_steps_per_second", n * static_cast<double>(steps) / seconds},
        {"messages_per_rank_per_step", static_cast<double>(after.messages - before.messages) / perRankStep},
        {"bytes_per_rank_per_step", static_cast<double>(after.bytes - before.bytes) / perRankStep},
        {"ghost_fraction", static_cast<double>(after.ghosts) / n},
        {"rebuilds", run.rebuilds()},
        {"working_list", innerList},
        {"check_every", checkEvery},
        {"checks_per_step", static_cast<double>(checks) / static_cast<double>(steps)},
        {"collectives_per_step", static_cast<double>(collectives) / static_cast<double>(steps)},
        {"rollbacks", run.rollbacks()},
        {"migrations", after.migrations - before.migrations},
        {"state_hash", hex64(hash)},
        {"phase_seconds", phases},
        {"per_rank", perRank},
    };
    // Every rank's peak resident size at the end.
    const auto rss = static_cast<std::uint64_t>(peakRssBytes());
    results["peak_rss_bytes_per_particle"] = static_cast<double>(comm::sumOverRanks(rss)) / n;
    results["peak_rss_bytes_rank0_per_particle"] = static_cast<double>(rss) / n;
    results["max_rank_rss_bytes"] = steppingRss;
    results["distributed_input"] = b.worldOf != nullptr;
    if (mode != "md") {
        results["sweeps"] = sweeps;
        results["contacts"] = contacts;
        results["contact_updates_per_second"] =
            static_cast<double>(contacts) * static_cast<double>(sweeps) / seconds;  // with the last step's contacts
        if (sweeps > 0) {
            const double perSweep = static_cast<double>(ranks) * static_cast<double>(sweeps);
            results["messages_per_rank_per_sweep"] = static_cast<double>(after.messages - before.messages) / perSweep;
            results["bytes_per_rank_per_sweep"] = static_cast<double>(after.bytes - before.bytes) / perSweep;
            if (mode == "exact")
                results["rounds_per_sweep"] =
                    static_cast<double>(after.rounds - before.rounds) / static_cast<double>(after.passes - before.passes);
        }
    }
    return {{"bench", name}, {"threads", omp_get_max_threads()}, {"results", results}};
}

}  // namespace

nlohmann::json benchCdSweep(const ExperimentOptions& options) {
    std::vector<KeySpec> extra = {
        {"bench.steps", KeyType::Integer, "5", "time steps timed (detection excluded)", 1, 1e6, {}},
        {"bench.sweeps", KeyType::Integer, "20", "random sweeps per time step", 1, 1e6, {}},
        {"bench.dt", KeyType::Real, "0.001", "time step", 0, kInf, {}},
    };
    for (KeySpec& k : Alternation::keys()) extra.push_back(std::move(k));
    extra.push_back(decomposedKey());
    BenchSetup b = benchWorld(options, extra, "cd-sweep");
    const long steps = sceneInteger(b.scene, "bench.steps");
    Alternation alt("cd-sweep", sceneInteger(b.scene, "bench.alternate"), sceneInteger(b.scene, "bench.settle"),
                    sceneBool(b.scene, "bench.capacity"), steps, omp_get_max_threads());
    b.scene.simulation.method = Method::CD;
    b.scene.simulation.dt = sceneReal(b.scene, "bench.dt");
    b.scene.cd.criterion = Criterion::Fixed;
    b.scene.cd.iterations = static_cast<int>(sceneInteger(b.scene, "bench.sweeps"));
    if (comm::ranks() > 1 || sceneBool(b.scene, "bench.decomposed"))
        return rankBench("cd-sweep", std::move(b), 0, steps);
    progress::expectSteps(alt.plannedSteps(steps));
    CdBenchRun run{Simulation(std::move(b.scene))};
    std::vector<CdBenchRun> copies(alt.capacity ? static_cast<std::size_t>(alt.threads) : 0, run);
    const World& world = run.sim.world();
    double solveSeconds[2] = {0.0, 0.0};  // as Alternation::seconds
    std::size_t totalContacts = 0;
    long sweeps = 0;
    double levels = 0.0;
    const Clocks start;
    alt.time(
        steps,
        [&](long n, int which, bool timed) {
            double done = 0.0, secs = 0.0;
            for (long s = 0; s < n; ++s) {
                const CdBenchRun::Step st = run.step();
                if (timed) solveSeconds[which] += st.solveSeconds;
                secs += st.sweepSeconds;
                done += st.updates;
                totalContacts += st.contacts;
                sweeps += st.sweeps;
                levels += st.levels;
            }
            return std::pair{done, secs};
        },
        [&](int i) {
            const CdBenchRun::Step st = copies[static_cast<std::size_t>(i)].step();
            return std::pair{st.updates, st.sweepSeconds};
        });
    // The whole loop, detection included.
    const nlohmann::json noise = noiseReadings(start, alt.threadSeconds());
    const double n = static_cast<double>(world.numGrains);
    const double meanContacts = static_cast<double>(totalContacts) / static_cast<double>(steps);
    nlohmann::json results = {
        {"particles", world.numGrains},
        {"source", b.source},
        {"contacts", meanContacts},
        {"contacts_per_particle", meanContacts / n},
        {"contacts_per_body", meanContacts / n},
        {"sweeps", sweeps},
        {"levels_per_sweep", levels / static_cast<double>(steps)},
        {"sweep_split", levels > 0.0 ? "levels" : "serial"},
        {"simd", world.hasShapes() ? run.sim.cd().rowIsa() : "none"},  // cd.simd: the clump and polygon rows
        {"seconds", alt.seconds[1]},
        {"contact_updates_per_second", alt.done[1] / alt.seconds[1]},
        {"solve_seconds", solveSeconds[1]},
        {"contact_updates_per_second_with_prepare", alt.done[1] / solveSeconds[1]},
        {"peak_rss_bytes", peakRssBytes()},
        {"max_rank_rss_bytes", peakRssBytes()},  // one process: its own peak
        {"peak_rss_bytes_per_particle", peakRssBytes() / n},
        {"kinetic_energy", kineticEnergy(world)},
        {"rotational_energy", rotationalEnergy(world)},
        {"state_hash", hex64(stateHash(world))},
    };
    shapeResults(results, b, world);
    results.update(noise);
    alt.report(results, "contact_updates_per_second");
    return {{"bench", "cd-sweep"}, {"threads", omp_get_max_threads()}, {"results", results}};
}

namespace {

/// How unevenly the split force pass's ranges ended, step by step: each
/// step's wait (slowest minus mean range) is what it lost to an uneven
/// split. `seconds`: the wall time of those steps.
void reportSplitWaits(nlohmann::json& results, std::vector<double> waits, double seconds) {
    const double lost = std::accumulate(waits.begin(), waits.end(), 0.0);
    std::sort(waits.begin(), waits.end());
    auto us = [&](double q) {
        return 1e6 * waits[static_cast<std::size_t>(q * static_cast<double>(waits.size() - 1))];
    };
    results["split_wait_us"] = {{"steps", waits.size()},
                                {"mean", 1e6 * lost / static_cast<double>(waits.size())},
                                {"p50", us(0.5)},
                                {"p90", us(0.9)},
                                {"p99", us(0.99)},
                                {"max", us(1.0)}};
    results["split_wait_share"] = seconds > 0.0 ? lost / seconds : 0.0;
}

}  // namespace

/// The MD bench's state: a Simulation (the fused pair schedule, or the
/// staged pipeline); a copy of it is an independent bench.
struct MdBenchRun {
    Simulation sim;
    /// Where set, each split force pass's wait: its slowest range's time
    /// minus its ranges' mean (seconds).
    std::vector<double>* splitWaits = nullptr;
    /// Where set, the contacts that carried force summed over the steps
    /// (one per touching pair of spheres, a clump's components each; walls
    /// included): a count over the list, no detection.
    double* contactSteps = nullptr;

    /// The contacts that carried force in the last step's evaluation.
    std::size_t touching() const {
        if (const MdPairList* pairs = sim.md().pairList())
            return static_cast<std::size_t>(std::count(pairs->touched.begin(), pairs->touched.end(), std::uint8_t{1}));
        std::size_t n = 0;
        for (const Contact& c : sim.contacts()) n += c.gap < 0.0 ? 1 : 0;
        return n;
    }

    void advance(long steps) {
        for (long s = 0; s < steps; ++s) {
            sim.advance();
            if (contactSteps) *contactSteps += static_cast<double>(touching());
            const MdPairList* pairs = sim.md().pairList();
            if (!pairs || !splitWaits) continue;
            const std::vector<double>& r = pairs->split.lastRangeSeconds;
            if (!r.empty())
                splitWaits->push_back(*std::max_element(r.begin(), r.end()) -
                                      std::accumulate(r.begin(), r.end(), 0.0) / static_cast<double>(r.size()));
        }
    }
};

nlohmann::json benchMdStep(const ExperimentOptions& options) {
    // The protocol of ../shared/packings/README.md (LAMMPS gran/hooke/history):
    // k_n = 2e5, k_t = 2/7 k_n, γ_n = 50, γ_t = 25 as rates (F = m_eff γ v),
    // μ = 0.5 for grains and walls, no clipping of the normal force, gravity,
    // Δt = 7.191623e-5, 1000 untimed warm-up steps, 2000 timed ones.
    std::vector<KeySpec> extra = {
        {"bench.warmup", KeyType::Integer, "1000", "untimed warm-up steps", 0, 1e9, {}},
        {"bench.steps", KeyType::Integer, "2000", "timed steps", 1, 1e9, {}},
        {"bench.dt", KeyType::Real, "7.191623e-5", "time step (t_n/50 of the protocol)", 0, kInf, {}},
    };
    for (KeySpec& k : Alternation::keys()) extra.push_back(std::move(k));
    extra.push_back(decomposedKey());
    const double rssAtStart = statusBytes("VmRSS:");  // for bytes_per_body
    // Neighbour reach as LAMMPS's `neighbor 0.1 bin`: a skin of 0.1 d
    // (contact.skin = 0.2 of the radius, the scene default) and no margin (an
    // MD force needs no positive gap; the margin only lists near contacts).
    // The trajectory does not depend on either (the same state_hash for any
    // skin): they set how many pairs the list holds and how often it is built.
    ExperimentOptions o = options;
    if (!givenKey(o, "bench.mu")) o.sets.insert(o.sets.begin(), "bench.mu=0.5");
    if (!givenKey(o, "contact.margin")) o.sets.insert(o.sets.begin(), "contact.margin=0");
    BenchSetup b = benchWorld(o, extra, "md-step");
    MdSettings md;
    md.kn = 2e5;
    md.kt = 2.0 / 7.0 * md.kn;
    md.gammaN = 50.0;
    md.gammaT = 25.0;
    md.meff = EffectiveMass::Damping;
    md.clipAttractive = false;
    // The protocol's integrator is cd; --set md.integrator=NAME times another.
    md.integrator = b.scene.md.integrator;
    md.restartOnContactChange = b.scene.md.restartOnContactChange;
    // md.pipeline: fused (the default for this protocol) or staged.
    md.pipeline = b.scene.md.pipeline;
    md.simdLanes = b.scene.md.simdLanes;  // --set md.simd=off times the scalar pass
    b.scene.md = md;
    b.scene.simulation.method = Method::MD;
    b.scene.simulation.dt = sceneReal(b.scene, "bench.dt");
    b.scene.origin = "bench md-step";
    if (comm::ranks() > 1 || sceneBool(b.scene, "bench.decomposed")) {
        if (!b.clump.empty() || !b.flat.empty())
            throw InputError("bench md-step: key 'bench.shape': '" + (b.clump.empty() ? b.flat : std::string("clump")) +
                             "' cannot run decomposed or on several ranks (allowed: sphere, or this shape with "
                             "bench.decomposed = false on one rank)");
        const long warmup = sceneInteger(b.scene, "bench.warmup"), timedSteps = sceneInteger(b.scene, "bench.steps");
        return rankBench("md-step", std::move(b), warmup, timedSteps);
    }
    MdBenchRun run{Simulation(std::move(b.scene))};
    const Scene& scene = run.sim.scene();
    const long steps = sceneInteger(scene, "bench.steps");
    Alternation alt("md-step", sceneInteger(scene, "bench.alternate"), sceneInteger(scene, "bench.settle"),
                    sceneBool(scene, "bench.capacity"), steps, omp_get_max_threads());
    progress::expectSteps(static_cast<double>(sceneInteger(scene, "bench.warmup")) + alt.plannedSteps(steps));
    run.advance(sceneInteger(scene, "bench.warmup"));
    std::vector<MdBenchRun> copies(alt.capacity ? static_cast<std::size_t>(alt.threads) : 0, run);
    const World& world = run.sim.world();
    const MdPairList* pairs = run.sim.md().pairList();
    auto timed = [](MdBenchRun& r, long n) {
        const auto t0 = std::chrono::steady_clock::now();
        r.advance(n);
        return std::pair{static_cast<double>(r.sim.world().numGrains) * static_cast<double>(n), secondsSince(t0)};
    };
    const Clocks start;
    std::vector<double> splitWaits;  // the timed steps on --threads
    double contactSteps = 0.0;       // likewise
    alt.time(
        steps,
        [&](long n, int which, bool isTimed) {
            run.splitWaits = which == 1 && isTimed ? &splitWaits : nullptr;
            run.contactSteps = which == 1 && isTimed ? &contactSteps : nullptr;
            return timed(run, n);
        },
        [&](int i) { return timed(copies[static_cast<std::size_t>(i)], 1); });
    run.splitWaits = nullptr;
    run.contactSteps = nullptr;
    const nlohmann::json noise = noiseReadings(start, alt.threadSeconds());
    const double steppingRss = peakRssBytes();  // before contacts() lists the pairs (as rankBench)
    const std::vector<Contact>& contacts = run.sim.contacts();  // fused: at the final positions
    std::size_t touching = 0;
    for (const Contact& c : contacts) touching += c.gap < 0.0 ? 1 : 0;
    const double n = static_cast<double>(world.numGrains);
    nlohmann::json results = {
        {"particles", world.numGrains},
        {"source", b.source},
        {"steps", steps},
        {"seconds", alt.seconds[1]},
        {"particle_steps_per_second", alt.done[1] / alt.seconds[1]},
        {"pipeline", pairs ? "fused" : "staged"},
        {"simd", pairs ? run.sim.md().pairIsa(world) : "none"},
        {"list_builds", pairs ? pairs->builds() : run.sim.detector().builds()},
        {"inner_list_builds", pairs ? pairs->innerBuilds() : 0},
        {"list_pairs_per_particle", static_cast<double>(pairs ? pairs->size() : run.sim.detector().listPairs()) / n},
        {"contacts_per_particle", static_cast<double>(touching) / n},
        {"candidates_per_particle", static_cast<double>(contacts.size()) / n},
        {"kinetic_energy", kineticEnergy(world)},
        {"peak_rss_bytes_per_particle", peakRssBytes() / n},
        {"max_rank_rss_bytes", steppingRss},  // one process: its own peak when the timed steps end
        {"state_hash", hex64(stateHash(world))},
    };
    // Per contact: the contacts that carried force, each timed step on
    // --threads (a clump's component pairs each), over the seconds of those
    // steps; per body: the growth of the peak resident memory from the
    // bench's start (the world, its contacts, the solver's buffers).
    const double timedSteps = alt.done[1] / n;
    shapeResults(results, b, world);
    results["contacts"] = contactSteps / timedSteps;
    results["contacts_per_body"] = contactSteps / timedSteps / n;
    results["contact_updates_per_second"] = contactSteps / alt.seconds[1];
    results["seconds_per_contact"] = alt.seconds[1] / contactSteps;
    results["bytes_per_body"] = (peakRssBytes() - rssAtStart) / n;
    results.update(noise);
    alt.report(results, "particle_steps_per_second");
    if (!splitWaits.empty()) reportSplitWaits(results, std::move(splitWaits), alt.seconds[1]);
    return {{"bench", "md-step"}, {"threads", omp_get_max_threads()}, {"results", results}};
}

nlohmann::json benchDetect(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"bench.repeats", KeyType::Integer, "20", "detections timed", 1, 1e6, {}},
    };
    BenchSetup b = benchWorld(options, extra, "detect");
    const long repeats = sceneInteger(b.scene, "bench.repeats");
    CellGridDetector detector;
    std::vector<Contact> out;
    detector.detect(b.scene.world, b.scene.simulation.margin, out);  // warm-up: buffers sized
    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < repeats; ++r) detector.detect(b.scene.world, b.scene.simulation.margin, out);
    const double seconds = secondsSince(t0);
    nlohmann::json results = {{"particles", b.scene.world.numGrains},
                              {"source", b.source},
                              {"candidates", out.size()},
                              {"seconds_per_detection", seconds / static_cast<double>(repeats)}};
    return {{"bench", "detect"}, {"threads", omp_get_max_threads()}, {"results", results}};
}

}  // namespace moreau
