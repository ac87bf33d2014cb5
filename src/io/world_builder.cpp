#include "world_builder.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/generators.hpp"

namespace moreau::scene_io {

namespace {

/// Values as bytes for PlanShare's gather, and back.
template <class T>
std::string bytesOf(const std::vector<T>& values) {
    std::string out(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

template <class T>
std::vector<T> valuesOf(const std::string& bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

/// Each rank's `x` (one per rank, in rank order) on every rank.
template <class T>
std::vector<T> everyRanks(const PlanShare& share, T x) {
    return valuesOf<T>(share.gather(bytesOf(std::vector<T>{x})));
}

/// Runs `f` on every rank; where it throws InputError on any, every rank
/// throws the message of the lowest rank that threw: for shares of a file
/// in rank order, the refusal a serial reading meets first.
template <class F>
void together(const PlanShare& share, F&& f) {
    std::string message;
    try {
        f();
    } catch (const InputError& e) {
        message = e.what();
    }
    const std::string all = share.gather(bytesOf(std::vector<std::uint64_t>{message.size()}) + message);
    for (std::size_t at = 0; at + sizeof(std::uint64_t) <= all.size();) {
        std::uint64_t n = 0;
        std::memcpy(&n, all.data() + at, sizeof n);
        at += sizeof n;
        if (n > 0) throw InputError(all.substr(at, static_cast<std::size_t>(n)));
        at += static_cast<std::size_t>(n);
    }
}

/// A group region's box 'xmin ymin zmin xmax ymax zmax' (the schema checked its six numbers).
std::array<double, 6> regionBox(const Values& v, const std::string& key) {
    std::array<double, 6> box{};
    std::size_t k = 0;
    for (const std::string& w : splitWords(v.text(key), true))
        if (k < box.size()) box[k++] = *parseDouble(w);
    return box;
}

/// Whether x lies in `box` on the dimension's axes.
bool inRegion(const Vec3& x, const std::array<double, 6>& box, int dimension) {
    bool inside = true;
    for (int a = 0; a < dimension; ++a)
        inside = inside && x[a] >= box[static_cast<std::size_t>(a)] && x[a] <= box[static_cast<std::size_t>(a) + 3];
    return inside;
}

/// Adds schedule b to a; both must switch at the same time unless one is constant.
bool addSchedule(ForceSchedule& a, const ForceSchedule& b) {
    if (std::isinf(b.switchTime)) {
        a.before += b.before;
        a.after += b.before;
    } else if (std::isinf(a.switchTime)) {
        a.after = a.before + b.after;
        a.before += b.before;
        a.switchTime = b.switchTime;
    } else if (a.switchTime == b.switchTime) {
        a.before += b.before;
        a.after += b.after;
    } else {
        return false;
    }
    return true;
}

std::vector<std::size_t> pickGrains(const Values& v, const std::string& key, std::size_t n) {
    std::vector<std::size_t> picked;
    if (trim(v.text(key)).empty()) return picked;
    const auto count = static_cast<long long>(n);
    auto index = [&](const std::string& text) {
        long long i = *parseInteger(text)->exact;
        if (i < 0) i += count;
        if (i < 0 || i >= count)
            v.fail(key, "selects a grain out of range",
                   "first, last, all, indices or ranges i..j in [" + std::to_string(-count) + ", " +
                       std::to_string(count - 1) + "] for " + std::to_string(n) + " grains");
        return static_cast<std::size_t>(i);
    };
    for (const std::string& item : splitList(v.text(key))) {
        if (item == "all") {
            for (std::size_t i = 0; i < n; ++i) picked.push_back(i);
        } else if (item == "first") {
            picked.push_back(0);
        } else if (item == "last") {
            picked.push_back(n - 1);
        } else if (const auto range = item.find(".."); range != std::string::npos) {
            const std::size_t lo = index(trim(item.substr(0, range))), hi = index(trim(item.substr(range + 2)));
            if (lo > hi) v.fail(key, "has a range i..j with i after j", "ranges i..j with i <= j (both included)");
            for (std::size_t i = lo; i <= hi; ++i) picked.push_back(i);
        } else {
            picked.push_back(index(item));
        }
    }
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    return picked;
}

/// The machine's physical memory in bytes (0 if unknown).
double machineBytes() {
    return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

/// Refuses (on `key`) a grain count whose run would not fit in this
/// machine's memory: about 1.5 KiB per grain (measured: 1.1-1.2 KiB at 10^5
/// grains in CD, docs/md-performance.md), against the physical memory.
void checkGrainMemory(const Values& v, const std::string& key, double grains) {
    constexpr double kBytesPerGrain = 1536.0;
    const double machine = machineBytes();
    const double need = grains * kBytesPerGrain;
    if (machine > 0.0 && need > 0.8 * machine) {
        char text[160];
        std::snprintf(text, sizeof text, "needs about %.3g GB for %.3g grains, more than this machine's %.3g GB allow",
                      need / 1e9, grains, machine / 1e9);
        v.fail(key, text, "fewer grains");
    }
}

/// The key that sets the grains' places: their count, or the packing file.
std::string grainCountKey(const Values& v) {
    const std::string& source = v.text("grains.source");
    return source == "file" ? "packing.file" : source == "chain" ? "chain.count" : source == "lattice" ? "lattice.counts" : "random.count";
}

/// Refuses grains whose radius lies outside [kMinRadius, kMaxRadius] (packing
/// files; the radius keys have that range) or whose mass or moment of inertia
/// (1D: mass only) is not a normal positive double: mass 0 would be an
/// infinite inverse mass, and the first step's NaN would be reported as a
/// divergence. The allowed density (or mass) follows from the radius.
void checkGrainMasses(const Values& v, const World& world, GrainShape shape, std::size_t first = 0) {
    const bool rotates = world.dimension > 1;
    for (std::size_t i = 0; i < world.numGrains; ++i) {
        const double r = world.radius[i];
        if (!(r >= kMinRadius && r <= kMaxRadius)) {
            char what[120];
            std::snprintf(what, sizeof what, "gives grain %zu a radius of %g", first + i, r);
            v.fail(grainCountKey(v), what,
                   "radii in [" + formatNumber(kMinRadius) + ", " + formatNumber(kMaxRadius) + "]");
        }
        const double m = world.mass[i], inertia = world.inertia[i];
        const bool massOk = std::isnormal(m) && m > 0.0;
        if (massOk && (!rotates || (std::isnormal(inertia) && inertia > 0.0))) continue;
        // m = rho c r^p (or fixed) and I = k m r^2 between the smallest and the largest normal double.
        const double tiny = std::numeric_limits<double>::min(), huge = std::numeric_limits<double>::max();
        const bool disk = shape == GrainShape::Disk;
        const double c = disk ? M_PI : 4.0 / 3.0 * M_PI, k = disk ? 0.5 : 0.4;
        const bool fixed = v.real("grains.mass") > 0.0;
        const double perUnit = fixed ? 1.0 : c * std::pow(r, disk ? 2.0 : 3.0);  // mass per unit of the key
        double lo = tiny / perUnit, hi = std::min(huge, huge / perUnit);
        if (rotates) {
            lo = std::max(lo, tiny / (perUnit * k * r * r));
            hi = std::min(hi, huge / (perUnit * k * r * r));
        }
        const std::string key = fixed ? "grains.mass" : "grains.density";
        char what[160], allowed[200];
        std::snprintf(what, sizeof what, "gives grain %zu (radius %g) a %s of %g", first + i, r,
                      massOk ? "moment of inertia" : "mass", massOk ? inertia : m);
        std::snprintf(allowed, sizeof allowed,
                      "%s in about [%.3g, %.3g] for this radius, so that mass%s are normal positive numbers",
                      key.c_str(), lo, hi, rotates ? " and moment of inertia" : "");
        v.fail(key, what, allowed);
    }
}

/// A contact costs at least its Contact (80 bytes) and its pair in the
/// Verlet list (8 bytes) while it is detected.
constexpr double kBytesPerContact = 88.0;

/// Whether `pairs` overlapping pairs' contacts fit in this machine's memory.
bool crowdingFits(double pairs) {
    const double machine = machineBytes();
    return !(machine > 0.0 && pairs * kBytesPerContact > 0.8 * machine);
}

/// Refuses, before anything detects contacts, grains piled so densely that
/// their contacts cannot be held: 10^6 grains at one point are 5e11 pairs,
/// which the cell grid would try to store (an uncaught std::bad_alloc after a
/// minute). Counted from below in O(n log n): two grains whose centres lie in
/// one cube of side 2 r_min / sqrt(3) are closer than 2 r_min, so they
/// overlap, a contact whatever the margin. A packing that is not piled up
/// has next to none such pairs.
/// `at(i)`: grain i's (position, radius), i < n.
/// With `share`, each rank counts the cells a hash of theirs gives it (a
/// share of the grains' cells, not all of them) and the counts are summed:
/// the same count on any number of ranks.
/// `planned` (a plan): its grains `at(i)` for i of this rank's share
/// (every grain unless the plan is spread; then each rank sends its
/// grains' cells to the ranks the hash gives them) and its rMin.
template <class At>
void checkCrowding(const Values& v, std::size_t n, At&& at, const PlanShare& share = {}, double rMin = kInf,
                   const PlannedGrains* planned = nullptr) {
    if (n < 2) return;
    if (rMin == kInf)
        for (std::size_t i = 0; i < n; ++i) rMin = std::min(rMin, at(i).second);
    // 0.999: the cells' coordinates below 2^40 are rounded by less than 2^-12 of a cell.
    const double side = 0.999 * 2.0 * rMin / std::sqrt(3.0);
    if (!(side > 0.0) || !std::isfinite(side)) return;
    std::vector<std::array<double, 3>> cells;
    cells.reserve(share.ranks > 1 ? n / static_cast<std::size_t>(share.ranks) : n);
    const bool spread = planned && planned->spread;
    std::vector<std::string> out(spread ? static_cast<std::size_t>(share.ranks) : 0);
    for (std::size_t i = planned ? planned->from : 0; i < (planned ? planned->to : n); ++i) {
        std::array<double, 3> c{};
        bool ok = true;
        const Vec3 x = at(i).first;
        for (int a = 0; a < 3; ++a) {
            c[static_cast<std::size_t>(a)] = std::floor(x[a] / side);
            ok = ok && std::abs(c[static_cast<std::size_t>(a)]) < 0x1p40;
        }
        if (ok && share.ranks > 1) {
            const std::uint64_t hash = Rng::stream(std::bit_cast<std::uint64_t>(c[0]), std::bit_cast<std::uint64_t>(c[1]),
                                                   std::bit_cast<std::uint64_t>(c[2]))
                                           .next();
            const std::uint64_t to = hash % static_cast<std::uint64_t>(share.ranks);
            if (spread) out[to].append(reinterpret_cast<const char*>(c.data()), sizeof c);
            ok = ok && !spread && to == static_cast<std::uint64_t>(share.rank);
        }
        if (ok) cells.push_back(c);
    }
    if (spread)
        for (const std::string& part : share.exchange(std::move(out))) {
            const std::vector<std::array<double, 3>> some = valuesOf<std::array<double, 3>>(part);
            cells.insert(cells.end(), some.begin(), some.end());
        }
    std::sort(cells.begin(), cells.end());
    std::uint64_t shared = 0;
    for (std::size_t b = 0, e = 0; b < cells.size(); b = e) {
        for (e = b + 1; e < cells.size() && cells[e] == cells[b]; ++e) {
        }
        const std::uint64_t k = e - b;
        shared += k * (k - 1) / 2;
    }
    std::vector<std::array<double, 3>>().swap(cells);
    const auto pairs = static_cast<double>(share.sum(shared));
    if (!crowdingFits(pairs)) {
        const double machine = machineBytes();
        char what[240], allowed[160];
        std::snprintf(what, sizeof what,
                      "piles up %zu grains so that at least %.3g pairs overlap: their contacts need about %.3g GB, "
                      "more than this machine's %.3g GB allow",
                      n, pairs, pairs * kBytesPerContact / 1e9, machine / 1e9);
        std::snprintf(allowed, sizeof allowed, "grains that overlap little, here at most about %.3g overlapping pairs",
                      0.8 * machine / kBytesPerContact);
        v.fail(grainCountKey(v), what, allowed);
    }
}

/// An upper bound on checkCrowding's count of pairs for lattice `p`: a grain's
/// jitter moves it at most A = jitter radius along each axis, so the grains
/// in one of its cubes (side s) come from lattice sites in a box of side
/// s + 2 A, at most floor((s + 2 A) / pitch) + 1 of them along each axis
/// (the row pitch along y in a hexagonal lattice); each grain shares its
/// cube with at most k - 1 others.
double latticeCrowdingBound(const LatticeParams& p) {
    const double side = 0.999 * 2.0 * p.radius / std::sqrt(3.0), reach = side + 2.0 * p.jitter * p.radius;
    const double pitch = 2.0 * p.radius + p.spacing;
    const double along[3] = {pitch, p.type == LatticeType::Hex ? pitch * std::sqrt(3.0) / 2.0 : pitch, pitch};
    double k = 1.0;
    for (int a = 0; a < (p.type == LatticeType::Cubic ? 3 : 2); ++a) k *= std::floor(reach / along[a]) + 1.0;
    return 0.5 * static_cast<double>(latticeCount(p)) * (k - 1.0);
}

/// lattice.* as LatticeParams (radius times `reach`), refused naming the key.
LatticeParams latticeParams(const Values& v, int dimension, std::uint64_t seed, double reach) {
    LatticeParams p;
    const std::string& type = v.text("lattice.type");
    p.type = type == "square" ? LatticeType::Square : type == "hex" ? LatticeType::Hex : LatticeType::Cubic;
    if (p.type == LatticeType::Cubic && dimension != 3)
        v.fail("lattice.type", "needs simulation.dimension = 3",
               dimension == 2 ? "square|hex in 2D" : "none in 1D; use grains.source = chain");
    if (p.type != LatticeType::Cubic && dimension != 2)
        v.fail("lattice.type", "needs simulation.dimension = 2",
               dimension == 3 ? "cubic in 3D" : "none in 1D; use grains.source = chain");
    const auto words = splitWords(v.text("lattice.counts"), true);
    p.counts = {1, 1, 1};
    for (std::size_t k = 0; k < words.size(); ++k)
        p.counts[k] = static_cast<std::size_t>(*parseInteger(words[k])->exact);
    if (p.type == LatticeType::Cubic && words.size() < 3)
        v.fail("lattice.counts", "gives no z count", "three positive integers 'nx ny nz' for cubic");
    double total = static_cast<double>(p.counts[0]) * static_cast<double>(p.counts[1]) *
                   (p.type == LatticeType::Cubic ? static_cast<double>(p.counts[2]) : 1.0);
    if (total > kMaxGrains) v.fail("lattice.counts", "gives too many grains", "at most 1e8 grains");
    checkGrainMemory(v, "lattice.counts", total);
    p.radius = reach * v.real("lattice.radius");
    p.spacing = v.real("lattice.spacing");
    p.origin = v.vec("lattice.origin");
    p.jitter = v.real("lattice.jitter");
    p.seed = seed;
    return p;
}

/// packing.file's path: relative to the scene's folder when the scene file
/// gives it, to the working directory when --set does.
std::string packingPath(const Values& v, const std::filesystem::path& sceneDir) {
    const std::string& file = v.text("packing.file");
    if (file.empty())
        v.fail("packing.file", "is empty", "a packing file path (required when grains.source = file)");
    std::filesystem::path path(file);
    if (path.is_relative() && v.at("packing.file").origin != "--set") path = sceneDir / path;
    return path.lexically_normal().string();
}

/// The random loose packing of random.* (radii times `reach`) as centres
/// and radii {x, y, z, r}; refused naming the key.
std::vector<std::array<double, 4>> randomCentres(const Values& v, int dimension, std::uint64_t seed, double reach) {
    checkGrainMemory(v, "random.count", static_cast<double>(v.integer("random.count")));
    RandomPackingParams p;
    p.count = static_cast<std::size_t>(v.integer("random.count"));
    p.rMin = reach * v.real("random.r_min");
    p.rMax = reach * v.real("random.r_max");
    if (p.rMax < p.rMin)
        v.fail("random.r_max", "is below random.r_min = " + v.text("random.r_min"), "real >= random.r_min");
    p.boxMin = v.vec("random.box_min");
    p.boxMax = v.vec("random.box_max");
    for (int a = 0; a < dimension; ++a)
        if (!(p.boxMax[a] - p.boxMin[a] >= 2.0 * p.rMax))
            v.fail("random.box_max",
                   std::string("leaves the box narrower than a grain diameter along ") + static_cast<char>('x' + a),
                   "box_max >= box_min + 2 r_max on the axes of the dimension");
    p.dimension = dimension;
    p.seed = seed;
    try {
        return randomLoosePackingCentres(p);
    } catch (const InputError& e) {
        std::string why = e.what();
        const std::string prefix = "random packing: ";
        if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        v.fail("random.count", "is too many: " + why, "fewer grains, or a larger random.box_min/box_max");
    }
}

/// The grains of grains.source; their radius is their size times `reach`
/// (a clump's bounding radius at size 1; 1 for spheres), so that generators
/// place clumps by their bounding spheres. A chain's first `chainFirst`
/// grains alone (its count checked all the same).
std::vector<GrainSpec> generateGrains(const Values& v, int dimension, std::uint64_t seed,
                                      const std::filesystem::path& sceneDir, double reach, PackingColumns columns,
                                      std::size_t chainFirst = std::numeric_limits<std::size_t>::max()) {
    const std::string& source = v.text("grains.source");
    if (source == "chain") {
        checkGrainMemory(v, "chain.count", static_cast<double>(v.integer("chain.count")));
        const auto count = static_cast<std::size_t>(v.integer("chain.count"));
        return makeChain(std::min(count, chainFirst), reach * v.real("chain.radius"), v.real("chain.spacing"),
                         v.vec("chain.origin"));
    }
    if (source == "lattice") return makeLattice(latticeParams(v, dimension, seed, reach));
    if (source == "random") {
        const std::vector<std::array<double, 4>> centres = randomCentres(v, dimension, seed, reach);
        std::vector<GrainSpec> grains(centres.size());
        for (std::size_t i = 0; i < centres.size(); ++i)
            grains[i] = GrainSpec{Vec3(centres[i][0], centres[i][1], centres[i][2]), centres[i][3]};
        return grains;
    }
    // source == "file"
    std::vector<GrainSpec> grains = readPackingFile(packingPath(v, sceneDir), columns);
    for (GrainSpec& g : grains) g.radius *= reach;
    return grains;
}

/// The polygon of polygon.shape or a regular one of polygon.vertices (the
/// shape irregular polygons are placed by), with the keys that allow
/// polygons: a dimension of 2, disks' inertia, no polygon.irregularity
/// with polygon.shape. Refused with exit 2 naming the key.
PolygonShape polygonBase(const Values& v, int dimension) {
    if (dimension != 2) v.fail("grains.shape", "is polygon, which needs simulation.dimension = 2", "sphere|clump in 1D and 3D");
    if (v.text("grains.inertia") == "sphere")
        v.fail("grains.inertia", "is not possible with grains.shape = polygon (plates in the plane)", "auto|disk");
    const bool given = !v.text("polygon.shape").empty();
    if (given && v.real("polygon.irregularity") > 0.0)
        v.fail("polygon.irregularity", "is set with polygon.shape, which gives the one shape",
               "0 with polygon.shape (irregular polygons come from polygon.vertices)");
    try {
        return given ? makePolygonShape(parsePolygonVertices(v.text("polygon.shape")))
                     : regularPolygon(static_cast<int>(v.integer("polygon.vertices")));
    } catch (const InputError& e) {
        const std::string key = given ? "polygon.shape" : "polygon.vertices";
        std::string why = e.what();
        if (why.rfind(key + ": ", 0) == 0) why.erase(0, key.size() + 2);
        v.fail(key, why, "a convex polygon of 3 to 64 vertices 'x y; x y; ...' with positive area");
    }
}

/// Irregular polygon i's shape (`irregularity` > 0, `vertices` of them): its own stream.
PolygonShape irregularPolygon(int vertices, double irregularity, std::uint64_t seed, std::size_t i) {
    Rng rng = Rng::stream(seed, kPolygonStream, i);
    return randomPolygon(vertices, irregularity, rng);
}

/// The keys that allow clumps: a dimension of 2 or 3, disks' inertia in 2D.
void checkClumpKeys(const Values& v, int dimension) {
    if (dimension == 1) v.fail("grains.shape", "needs simulation.dimension = 2 or 3", "sphere in 1D");
    if (dimension == 2 && v.text("grains.inertia") == "sphere")
        v.fail("grains.inertia", "is not possible with grains.shape = clump in 2D (clumps of disks)", "auto|disk");
}

/// The clump of clump.spheres, refused with exit 2 naming the key.
ClumpShape readClumpShape(const Values& v, int dimension) {
    try {
        return makeClumpShape(parseClumpSpheres(v.text("clump.spheres"), dimension), dimension);
    } catch (const InputError& e) {
        v.fail("clump.spheres", e.what(), kClumpSpheresAllowed);
    }
}

}  // namespace

}  // namespace moreau::scene_io

namespace moreau::scene_io {
namespace {
/// Each row of a list value 'a b ...; a b ...' (empty rows skipped) as
/// `width` finite numbers, to each(row, values, words). Throws InputError
/// "has the WHAT 'row', not COUNT finite numbers" otherwise.
template <class Each>
void eachRow(const std::string& text, std::size_t width, const char* what, const char* count, Each&& each) {
    std::size_t start = 0;
    double x[4];
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(';', start), text.size());
        const std::string row = trim(text.substr(start, end - start));
        start = end + 1;
        const std::vector<std::string> words = splitWords(row, false);
        if (words.empty()) continue;
        bool ok = words.size() == width;
        for (std::size_t k = 0; ok && k < width; ++k) {
            const auto value = parseDouble(words[k]);
            ok = value && std::isfinite(*value);
            if (ok) x[k] = *value;
        }
        if (!ok) throw InputError("has the " + std::string(what) + " '" + shown(row) + "', not " + count + " finite numbers");
        each(row, x, words);
    }
}
}  // namespace
}  // namespace moreau::scene_io

std::vector<moreau::SphereComponent> moreau::parseClumpSpheres(const std::string& text, int dimension) {
    using namespace scene_io;
    std::vector<SphereComponent> spheres;
    eachRow(text, 4, "sphere", "four", [&](const std::string& row, const double* x, const std::vector<std::string>& words) {
        if (!(x[3] > 0.0)) throw InputError("has the sphere '" + shown(row) + "' of radius " + words[3]);
        spheres.push_back({Vec3(x[0], x[1], dimension == 3 ? x[2] : 0.0), x[3]});
    });
    if (spheres.empty()) throw InputError("holds no sphere (grains.shape = clump needs them)");
    if (spheres.size() > 16) throw InputError("holds " + std::to_string(spheres.size()) + " spheres");
    return spheres;
}

std::vector<double> moreau::parsePolygonVertices(const std::string& text) {
    using namespace scene_io;
    std::vector<double> xy;
    eachRow(text, 2, "vertex", "two",
            [&](const std::string&, const double* x, const std::vector<std::string>&) { xy.insert(xy.end(), {x[0], x[1]}); });
    return xy;
}

namespace moreau::scene_io {

namespace {

/// The inertia of round grains (grains.inertia), refused in 3D for disks.
GrainShape roundShape(const Values& v, int dimension) {
    const std::string& inertia = v.text("grains.inertia");
    if (inertia == "disk") {
        if (dimension == 3) v.fail("grains.inertia", "is not possible in 3D", "auto|sphere in 3D");
        return GrainShape::Disk;
    }
    if (inertia == "sphere") return GrainShape::Sphere;
    return dimension == 3 ? GrainShape::Sphere : GrainShape::Disk;
}

/// A rank's share of a packing file's rows: those whose line starts in its
/// share of the file's bytes (the ranks' shares in order make the file),
/// read once and held (64 bytes a grain of the share), sizes times `reach`
/// (generateGrains' sizes). Their ids follow the rows of the ranks before;
/// a bad row's refusal names its line in the file, the first one in the
/// file on every rank.
struct PackingShare {
    std::size_t first = 0, total = 0;  ///< the id of its first row; the file's rows
    std::vector<GrainSpec> rows;
};

PackingShare readPackingShare(const std::string& path, PackingColumns columns, double reach, const PlanShare& share) {
    PackingShare held;
    std::string text;
    together(share, [&] {
        std::error_code error;
        const std::uint64_t size = std::filesystem::file_size(path, error);
        std::ifstream in(path, std::ios::binary);
        if (!in || error) throw InputError("cannot read packing file '" + path + "'");
        // The first line that starts at or after byte `at`.
        auto lineStart = [&](std::uint64_t at) {
            if (at == 0 || at >= size) return std::min(at, size);
            in.seekg(static_cast<std::streamoff>(at - 1));
            for (char c; in.get(c); ++at)
                if (c == '\n') return at;
            in.clear();
            return size;
        };
        const auto r = static_cast<std::uint64_t>(share.rank), n = static_cast<std::uint64_t>(share.ranks);
        const std::uint64_t begin = lineStart(size / n * r + size % n * r / n),
                            end = lineStart(size / n * (r + 1) + size % n * (r + 1) / n);
        text.resize(static_cast<std::size_t>(end - begin));
        in.seekg(static_cast<std::streamoff>(begin));
        if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
            throw InputError("cannot read packing file '" + path + "'");
    });
    // The file's lines before this share: every share but the last ends a line.
    const std::vector<std::uint64_t> lines =
        everyRanks(share, static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n')));
    const auto before = std::accumulate(lines.begin(), lines.begin() + share.rank, std::uint64_t{0});
    together(share, [&] {
        std::istringstream in(std::move(text));
        PackingReader reader(in, path, columns, static_cast<long>(before));
        for (GrainSpec g; reader.next(g);) {
            g.radius *= reach;
            held.rows.push_back(g);
        }
    });
    held.rows.shrink_to_fit();
    const std::vector<std::uint64_t> rows = everyRanks(share, static_cast<std::uint64_t>(held.rows.size()));
    held.first = std::accumulate(rows.begin(), rows.begin() + share.rank, std::size_t{0});
    held.total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
    if (held.total == 0) throw InputError(PackingReader::noGrainsMessage(path));
    return held;
}

}  // namespace

PlannedGrains planGrains(const Values& v, const std::filesystem::path& sceneDir, const PlanShare& share,
                         const std::set<std::string>& groupNames) {
    const int dimension = v.smallInteger("simulation.dimension");
    const std::uint64_t seed = v.unsignedInteger("simulation.seed");
    const std::string& source = v.text("grains.source");
    const bool clumps = v.text("grains.shape") == "clump", polygons = v.text("grains.shape") == "polygon",
               file = source == "file";
    PlannedGrains planned;
    // Clumps and polygons: their specs at their size (their reach),
    // oriented from the file or at random from their index; placed in the
    // world at their centre of mass with their bounding radius, as
    // addClumps and addPolygons place them (a clump file's frame origin
    // moved to the centroid; an irregular polygon by its own shape).
    double reach = 1.0;
    PackingColumns columns = PackingColumns::Plain;
    if (clumps) {
        checkClumpKeys(v, dimension);
        auto clump = std::make_shared<const ClumpShape>(readClumpShape(v, dimension));
        reach = clump->boundingRadius;
        columns = dimension == 3 ? PackingColumns::Oriented3D : PackingColumns::Oriented2D;
        planned.placing = [clump, file](const GrainSpec& g, std::size_t) {
            return GrainSpec{clumpCentre(g, *clump, file), g.radius / clump->boundingRadius * clump->boundingRadius};
        };
    } else if (polygons) {
        auto base = std::make_shared<const PolygonShape>(polygonBase(v, dimension));
        reach = polygonReach(*base);
        columns = PackingColumns::Oriented2D;
        const double irregularity = v.real("polygon.irregularity");
        const auto vertices = static_cast<int>(v.integer("polygon.vertices"));
        planned.ownShapes = irregularity > 0.0;
        planned.placing = [base, irregularity, vertices, seed](const GrainSpec& g, std::size_t i) {
            const bool irregular = irregularity > 0.0;
            const PolygonShape own = irregular ? irregularPolygon(vertices, irregularity, seed, i) : PolygonShape{};
            const PolygonShape& shape = irregular ? own : *base;
            const PolygonPlace p = placePolygon(g, shape);
            return GrainSpec{p.centre, p.size * shape.boundingRadius};
        };
    }
    auto oriented = [shaped = clumps || polygons, file, dimension, seed](GrainSpec g, std::size_t i) {
        if (shaped && !file) g.orientation = randomOrientation(dimension, seed, i);
        return g;
    };
    // A lattice: each grain made on demand from its index (its jitter
    // too), none held. The crowding test only where a bound on its count
    // of pairs does not show it passes (none for round grains without
    // jitter: centres a pitch >= 2 r apart).
    bool made = false, crowded = true;
    if (source == "lattice") {
        const LatticeParams p = latticeParams(v, dimension, seed, reach);
        if (p.jitter >= 0.0 && p.radius > 0.0 && p.spacing >= 0.0 && latticeCount(p) > 0) {
            planned.count = latticeCount(p);
            planned.at = [p, oriented](std::size_t i) { return oriented(latticeGrain(p, i), i); };
            made = true;
            crowded = clumps || polygons || !crowdingFits(latticeCrowdingBound(p));
        }
    }
    // A chain: each grain from its index (makeChain's checks on its first).
    if (source == "chain") {
        const std::vector<GrainSpec> first = generateGrains(v, dimension, seed, sceneDir, reach, columns, 1);
        planned.count = static_cast<std::size_t>(v.integer("chain.count"));
        planned.at = [radius = first.front().radius, spacing = v.real("chain.spacing"), origin = v.vec("chain.origin"),
                      oriented](std::size_t i) { return oriented(chainGrain(radius, spacing, origin, i), i); };
        made = true;
        crowded = clumps || polygons;  // round grains a pitch >= 2 r apart
    }
    // A packing file: each rank reads its share of the rows, which go to
    // the ranks that build them (ScenePlan::spread).
    if (!made && file) {
        auto held = std::make_shared<const PackingShare>(readPackingShare(packingPath(v, sceneDir), columns, reach, share));
        planned.count = held->total;
        planned.spread = true;
        planned.from = held->first;
        planned.to = held->first + held->rows.size();
        planned.at = [held](std::size_t i) {
            if (!(i >= held->first && i - held->first < held->rows.size()))
                throw std::logic_error("packing file: grain " + std::to_string(i) + " is another rank's to read");
            return held->rows[i - held->first];
        };
        made = true;
    }
    if (!made) {
        // The random packing (and a lattice that makeLattice refuses, for
        // its message): a centre and a radius each, as it places them (32
        // bytes, where a GrainSpec with its orientation takes 64). It
        // places each grain among those placed before, from one stream: on
        // ranks, rank 0 places them all and sends the others theirs (a
        // spread plan whose shares are rank 0's all and the others' none).
        // No two of its grains overlap: no crowding test.
        auto kept = std::make_shared<std::vector<std::array<double, 4>>>();
        if (source == "random" && share.ranks > 1) {
            together(share, [&] {
                if (share.rank == 0) *kept = randomCentres(v, dimension, seed, reach);
            });
            planned.spread = true;
            planned.to = kept->size();
            crowded = false;
        } else if (source == "random") {
            *kept = randomCentres(v, dimension, seed, reach);
            crowded = false;
        } else {
            const std::vector<GrainSpec> all = generateGrains(v, dimension, seed, sceneDir, reach, columns);
            for (const GrainSpec& g : all) kept->push_back({g.position[0], g.position[1], g.position[2], g.radius});
        }
        planned.count = planned.spread ? everyRanks(share, static_cast<std::uint64_t>(kept->size())).front() : kept->size();
        planned.at = [kept = std::shared_ptr<const std::vector<std::array<double, 4>>>(std::move(kept)),
                      oriented](std::size_t i) {
            if (i >= kept->size()) throw std::logic_error("random packing: grain " + std::to_string(i) + " is rank 0's");
            const std::array<double, 4>& g = (*kept)[i];
            return oriented(GrainSpec{Vec3(g[0], g[1], g[2]), g[3]}, i);
        };
    }
    if (!planned.spread) planned.to = planned.count;
    if (planned.spread) {
        // Grain 0 on every rank (the scene of one grain: a run's check of
        // its shapes), from the rank whose share begins with it.
        const bool mine = planned.from == 0 && planned.to > 0;
        std::vector<double> values;
        if (mine) {
            const std::array<double, kSpecValues> spec = specValues(planned.at(0));
            values.assign(spec.begin(), spec.end());
        }
        const GrainSpec zero = specOf(valuesOf<double>(share.gather(bytesOf(values))).data());
        if (!mine)
            planned.at = [at = std::move(planned.at), zero](std::size_t i) { return i == 0 ? zero : at(i); };
        // The grains in each group's region, from every share (buildWorld
        // checks the regions and what they pick).
        auto regions = std::make_shared<std::map<std::string, std::vector<std::size_t>>>();
        for (const std::string& name : groupNames) {
            const std::string key = "group." + name + ".region";
            if (v.empty(key)) continue;
            const std::array<double, 6> box = regionBox(v, key);
            std::vector<std::uint64_t> inside;
            for (std::size_t i = planned.from; i < planned.to; ++i)
                if (inRegion(planned.placed(i).position, box, dimension)) inside.push_back(i);
            for (const std::uint64_t i : valuesOf<std::uint64_t>(share.gather(bytesOf(inside))))
                (*regions)[name].push_back(static_cast<std::size_t>(i));
        }
        planned.inRegion = std::move(regions);
    }
    // The masses as buildWorld's whole world has them (round grains), a few
    // grains at a time; the radii in the world. A spread plan's ranks
    // check their shares (the first refusal in grain order on every rank).
    const bool round = !clumps && !polygons;
    const GrainShape shape = round ? roundShape(v, dimension) : GrainShape::Disk;
    together(share, [&] {
        constexpr std::size_t kChunk = 4096;
        std::vector<GrainSpec> some;
        for (std::size_t first = planned.from; first < planned.to; first += kChunk) {
            some.clear();
            for (std::size_t i = first; i < std::min(planned.to, first + kChunk); ++i) {
                some.push_back(planned.placed(i));
                planned.rMin = std::min(planned.rMin, some.back().radius);
                planned.rMax = std::max(planned.rMax, some.back().radius);
            }
            if (!round) continue;
            World w;
            w.dimension = dimension;
            addGrains(w, some, shape, v.real("grains.density"), v.real("grains.mass"));
            checkGrainMasses(v, w, shape, first);
        }
    });
    if (planned.spread)
        for (const std::array<double, 2> r : everyRanks(share, std::array<double, 2>{planned.rMin, planned.rMax})) {
            planned.rMin = std::min(planned.rMin, r[0]);
            planned.rMax = std::max(planned.rMax, r[1]);
        }
    if (crowded)
        checkCrowding(
            v, planned.count,
            [&](std::size_t i) {
                const GrainSpec g = planned.placed(i);
                return std::pair(g.position, g.radius);
            },
            share, planned.rMin, &planned);
    return planned;
}

void buildWorld(Scene& scene, const Values& v, const std::set<std::string>& forceNames,
                const std::set<std::string>& wallNames, const std::set<std::string>& groupNames,
                const std::filesystem::path& sceneDir, const GrainPart* part) {
    World& world = scene.world;
    const int dimension = v.smallInteger("simulation.dimension");
    world.dimension = dimension;
    world.gravity = v.vec("simulation.gravity");
    world.muGrain = v.real("contact.mu");

    // Periodic box.
    const std::array<bool, 3> periodic = axesOf(v.text("periodic.axes"));
    for (int a = dimension; a < 3; ++a)
        if (periodic[a])
            v.fail("periodic.axes", "names an axis outside the dimension",
                   dimension == 1 ? "x" : "a subset of xy in 2D");
    if (periodic[0] || periodic[1] || periodic[2]) {
        for (const char* key : {"periodic.box_min", "periodic.box_max"})
            if (v.empty(key)) v.fail(key, "is empty", "three numbers 'x y z' (required when periodic.axes is set)");
        world.boxMin = v.vec("periodic.box_min");
        world.boxMax = v.vec("periodic.box_max");
        for (int a = 0; a < 3; ++a)
            if (periodic[a] && !(world.boxMax[a] > world.boxMin[a]))
                v.fail("periodic.box_max", std::string("is not above periodic.box_min along ") + static_cast<char>('x' + a),
                       "box_max > box_min on the periodic axes");
        world.periodic = periodic;
    }
    // A deforming cell.
    world.shearRate = v.real("periodic.shear_rate");
    world.strainRate = v.vec("periodic.strain_rate");
    if (world.shearRate != 0.0 && !(periodic[0] && periodic[1]))
        v.fail("periodic.shear_rate", "shears a cell that is not periodic along x and y",
               "0 unless periodic.axes holds x and y");
    for (int a = 0; a < 3; ++a)
        if (world.strainRate[a] != 0.0 && !periodic[static_cast<std::size_t>(a)])
            v.fail("periodic.strain_rate", std::string("deforms the axis ") + static_cast<char>('x' + a) + ", which is not periodic",
                   "rates on the periodic axes only");

    // Grains.
    const GrainShape shape = roundShape(v, dimension);
    const bool clumps = v.text("grains.shape") == "clump", polygons = v.text("grains.shape") == "polygon";
    const std::uint64_t seed = v.unsignedInteger("simulation.seed");
    if (polygons) {
        world.polygonShapes.push_back(polygonBase(v, dimension));
        const bool irregular = v.real("polygon.irregularity") > 0.0;
        std::vector<GrainSpec> grains;
        if (part) {
            for (const std::uint64_t i : *part->ids) grains.push_back(part->grains->at(static_cast<std::size_t>(i)));
        } else {
            grains = generateGrains(v, dimension, seed, sceneDir, polygonReach(world.polygonShapes.back()),
                                    PackingColumns::Oriented2D);
            if (v.text("grains.source") != "file") randomOrientations(grains, dimension, seed);
        }
        // Irregular polygons: every grain's own shape, in grain order (a
        // part: its grains' alone, grain k's entry k; their shapes go with
        // them between ranks); a part without grains keeps the one shape.
        std::vector<std::uint32_t> indices(grains.size(), 1);
        if (irregular && !(part && part->ids->empty())) {
            world.polygonShapes.clear();
            world.polygonShapes.reserve(grains.size());
            const auto vertices = static_cast<int>(v.integer("polygon.vertices"));
            for (std::size_t k = 0; k < grains.size(); ++k) {
                const std::size_t i = part ? static_cast<std::size_t>((*part->ids)[k]) : k;
                world.polygonShapes.push_back(irregularPolygon(vertices, v.real("polygon.irregularity"), seed, i));
                indices[k] = static_cast<std::uint32_t>(k + 1);
            }
        }
        addPolygons(world, grains, indices, v.real("grains.density"), v.real("grains.mass"));
    } else if (clumps) {
        checkClumpKeys(v, dimension);
        world.clumpShapes.push_back(readClumpShape(v, dimension));
        const bool file = v.text("grains.source") == "file";
        std::vector<GrainSpec> grains;
        if (part) {
            for (const std::uint64_t i : *part->ids) grains.push_back(part->grains->at(static_cast<std::size_t>(i)));
        } else {
            const double reach = world.clumpShapes.back().boundingRadius;
            const PackingColumns columns = dimension == 3 ? PackingColumns::Oriented3D : PackingColumns::Oriented2D;
            grains = generateGrains(v, dimension, seed, sceneDir, reach, columns);
            if (!file) randomOrientations(grains, dimension, seed);
        }
        addClumps(world, grains, 1, v.real("grains.density"), v.real("grains.mass"), file);
    } else if (part) {
        // Grains part->ids of the planned ones (planGrains checked them all).
        std::vector<GrainSpec> some;
        some.reserve(part->ids->size());
        for (const std::uint64_t i : *part->ids) some.push_back(part->grains->at(static_cast<std::size_t>(i)));
        addGrains(world, some, shape, v.real("grains.density"), v.real("grains.mass"));
    } else {
        const std::vector<GrainSpec> grains = generateGrains(v, dimension, seed, sceneDir, 1.0, PackingColumns::Plain);
        addGrains(world, grains, shape, v.real("grains.density"), v.real("grains.mass"));
        checkGrainMasses(v, world, shape);
    }
    if (!part)
        checkCrowding(v, world.numGrains, [&](std::size_t i) { return std::pair(world.x[i], world.radius[i]); });
    // The grains by their index in the whole world (n of them): the forces'
    // and groups' selections and checks run over all of them, on every
    // part alike; local(i) is grain i's index in this world (npos: not here).
    const std::size_t n = part ? part->grains->count : world.numGrains;
    constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
    auto local = [&](std::size_t i) {
        if (!part) return i;
        const auto it = std::lower_bound(part->ids->begin(), part->ids->end(), static_cast<std::uint64_t>(i));
        return it != part->ids->end() && *it == i ? static_cast<std::size_t>(it - part->ids->begin()) : npos;
    };
    auto position = [&](std::size_t i) { return part ? part->grains->placed(i).position : world.x[i]; };
    const Vec3 velocity = cwise(v.vec("grains.velocity"), world.translationMask());
    for (std::size_t i = 0; i < world.numGrains; ++i) world.v[i] = velocity;
    if (world.deforming() && v.boolean("periodic.affine_start")) {
        // The mean flow about the box centre (World::strainRate, shearRate).
        const Vec3 c = 0.5 * (world.boxMin + world.boxMax);
        for (std::size_t i = 0; i < world.numGrains; ++i) {
            const Vec3 r = world.x[i] - c;
            world.v[i] += world.strainRate.cwiseProduct(r) + Vec3(world.shearRate * r[1], 0.0, 0.0);
        }
    }

    // Forces on grains: each grain's schedule summed over the forces on it,
    // in name order. A grain holds the index of its sum among the few the
    // scene makes (`sums`: 0 none; the sum of sum c and force f made once),
    // 4 bytes a grain of the whole world (a part checks them all, then
    // gives its grains theirs).
    const std::vector<std::string> forceList(forceNames.begin(), forceNames.end());
    struct ForceSum {
        ForceSchedule schedule;
        std::uint32_t owner = 0;  ///< 1 + the index of the force that names its change_time; 0: none
    };
    std::vector<ForceSum> sums(1);
    std::map<std::pair<std::uint32_t, std::size_t>, std::uint32_t> summed;  // (sum, force): their sum
    std::vector<std::uint32_t> sumOf(forceList.empty() ? 0 : n);
    for (std::size_t f = 0; f < forceList.size(); ++f) {
        const std::string& name = forceList[f];
        const std::string p = "force." + name + ".";
        ForceSchedule s;
        s.before = v.vec(p + "value");
        s.after = v.vec(p + "value_after");
        s.switchTime = v.real(p + "change_time");
        const std::vector<std::size_t> pushed = pickGrains(v, p + "grains", n);
        if (pushed.empty()) v.fail(p + "grains", "selects no grain", "first, last, all, indices or ranges i..j");
        for (std::size_t i : pushed) {
            const std::uint32_t c = sumOf[i];
            if (const auto it = summed.find({c, f}); it != summed.end()) {
                sumOf[i] = it->second;
                continue;
            }
            ForceSum next = sums[c];
            if (!addSchedule(next.schedule, s))
                v.fail(p + "change_time",
                       "differs from that of [force." + forceList[sums[c].owner - 1u] + "] on grain " + std::to_string(i),
                       "one change_time per grain (or inf)");
            if (!std::isinf(s.switchTime) || next.owner == 0) next.owner = static_cast<std::uint32_t>(f + 1);
            sums.push_back(next);
            sumOf[i] = summed[{c, f}] = static_cast<std::uint32_t>(sums.size() - 1);
        }
    }
    for (std::size_t i = 0; i < sumOf.size(); ++i)
        if (const std::size_t k = sumOf[i] != 0 ? local(i) : npos; k != npos)
            world.forceSchedule(static_cast<BodyId>(k)) = sums[sumOf[i]].schedule;
    auto pushes = [&](std::size_t i) {  // whether a force acts on grain i
        if (sumOf.empty() || sumOf[i] == 0) return false;
        const ForceSchedule& f = sums[sumOf[i]].schedule;
        return f.before.norm() > 0.0 || f.after.norm() > 0.0;
    };

    // Walls, after all grains, in name order.
    for (const std::string& name : wallNames) {
        const std::string p = "wall." + name + ".";
        WallShape shape;
        const bool plane = v.text(p + "type") == "plane";
        shape.kind = plane ? ShapeKind::Plane : ShapeKind::Cylinder;
        const std::string dirKey = p + (plane ? "normal" : "axis");
        const Vec3 direction = v.vec(dirKey);
        if (!(direction.norm() > 0.0)) v.fail(dirKey, "is the zero vector", "a non-zero direction");
        // A wall must face the grains within their axes: a plane's normal in
        // them, a 2D cylinder's axis along z (its section is a circle).
        const char* axesText = dimension == 1 ? "x" : "the x-y plane";
        if (plane) {
            for (int a = dimension; a < 3; ++a)
                if (direction[a] != 0.0)
                    v.fail(dirKey, std::string("has a component along the locked axis ") + static_cast<char>('x' + a),
                           std::string("a normal along ") + axesText + " for simulation.dimension = " +
                               std::to_string(dimension));
        } else if (dimension == 1) {
            v.fail(p + "type", "is a cylinder in 1D", "plane in 1D");
        } else if (dimension == 2 && (direction[0] != 0.0 || direction[1] != 0.0)) {
            v.fail(dirKey, "is not along z", "0 0 1 in 2D: the cylinder's section in the x-y plane is a circle");
        }
        shape.direction = direction.normalized();
        shape.radius = plane ? 0.0 : v.real(p + "radius");
        shape.inside = v.text(p + "side") == "inside";
        shape.mu = v.real(p + "mu");

        const bool mobile = v.boolean(p + "mobile");
        const double mass = v.real(p + "mass");
        const std::array<bool, 3> free = axesOf(v.text(p + "free"));
        const Vec3 wallVelocity = v.vec(p + "velocity");
        if (mobile) {
            if (!(mass > 0.0)) v.fail(p + "mass", "is not > 0 for a mobile wall", "real > 0 when mobile = true");
            bool anyFree = false;
            for (int a = 0; a < dimension; ++a) anyFree = anyFree || free[a];
            const char* freeText =
                dimension == 1 ? "x" : dimension == 2 ? "a non-empty subset of xy" : "a non-empty subset of xyz";
            if (!anyFree) v.fail(p + "free", "leaves a mobile wall no axis to move along", freeText);
            for (int a = dimension; a < 3; ++a)
                if (free[a])
                    v.fail(p + "free", std::string("frees the locked axis ") + static_cast<char>('x' + a), freeText);
        }
        for (int a = dimension; a < 3; ++a)
            if (wallVelocity[a] != 0.0)
                v.fail(p + "velocity",
                       std::string("moves the wall along the locked axis ") + static_cast<char>('x' + a),
                       std::string("a velocity along ") + axesText);
        ForceSchedule force;
        force.before = v.vec(p + "force");
        force.after = v.vec(p + "force_after");
        force.switchTime = v.real(p + "change_time");
        if (!mobile && (force.before.norm() > 0.0 || (!std::isinf(force.switchTime) && force.after.norm() > 0.0)))
            v.fail(p + "force", "acts on a fixed wall", "0 0 0 unless mobile = true");

        const BodyId id = world.addWall(name, shape, v.vec(p + "point"), mobile, mass, free);
        const auto b = static_cast<std::size_t>(id);
        if (force.before.norm() > 0.0 || force.after.norm() > 0.0) world.forceSchedule(static_cast<BodyId>(b)) = force;
        if (mobile) {
            // Free axes: the initial velocity; the others: driven at it.
            world.v[b] = cwise(wallVelocity, world.translationMask());
            for (int a = 0; a < 3; ++a)
                if (world.invMass[b][a] == 0.0 && world.v[b][a] != 0.0) world.prescribed[b] = true;
        } else if (wallVelocity.norm() > 0.0) {
            world.v[b] = cwise(wallVelocity, world.translationMask());
            world.prescribed[b] = true;
        }
    }

    // Grain groups: kinematic grains, on their own or glued to a wall.
    const std::vector<std::string> groupList(groupNames.begin(), groupNames.end());
    std::vector<std::uint32_t> groupOf(groupList.empty() ? 0 : n);  // 1 + the group's index; 0: none
    std::vector<std::pair<std::size_t, std::pair<std::string, BodyId>>> members;  // grain here, (group, wall)
    for (std::size_t g = 0; g < groupList.size(); ++g) {
        const std::string& name = groupList[g];
        const std::string p = "group." + name + ".";
        std::vector<std::size_t> picked = pickGrains(v, p + "grains", n);
        if (!v.empty(p + "region")) {
            const std::array<double, 6> box = regionBox(v, p + "region");
            for (int a = 0; a < dimension; ++a)
                if (!(box[static_cast<std::size_t>(a)] < box[static_cast<std::size_t>(a) + 3]))
                    v.fail(p + "region", std::string("is empty along ") + static_cast<char>('x' + a),
                           "'xmin ymin zmin xmax ymax zmax' with min < max on the dimension's axes");
            if (part && part->grains->spread) {  // a part of a spread plan: the plan found them
                const auto& found = *part->grains->inRegion;
                if (const auto it = found.find(name); it != found.end())
                    picked.insert(picked.end(), it->second.begin(), it->second.end());
            } else {
                for (std::size_t i = 0; i < n; ++i)
                    if (inRegion(position(i), box, dimension)) picked.push_back(i);
            }
        }
        std::sort(picked.begin(), picked.end());
        picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
        if (picked.empty())
            v.fail(p + (v.empty(p + "region") ? "grains" : "region"), "selects no grain",
                   "a grain list (" + p + "grains) or a box holding grain centres (" + p + "region)");
        BodyId wall = -1;
        if (const std::string& glue = v.text(p + "wall"); !glue.empty()) {
            if (!wallNames.count(glue))
                v.fail(p + "wall", "names no wall",
                       wallNames.empty() ? std::string("the name of a [wall.NAME] section (the scene has none)")
                                         : "one of the scene's walls: " + [&] {
                                               std::string all;
                                               for (const std::string& w : wallNames) all += (all.empty() ? "" : ", ") + w;
                                               return all;
                                           }());
            wall = static_cast<BodyId>(world.numGrains +
                                       static_cast<std::size_t>(std::distance(wallNames.begin(), wallNames.find(glue))));
            if (world.wall(wall).kind != ShapeKind::Plane)
                v.fail(p + "wall", "names a cylinder", "a plane wall (grains glue to plane walls only)");
            for (const char* key : {"velocity", "spin"})
                if (v.vec(p + key).norm() > 0.0)
                    v.fail(p + key, "is given to grains glued to a wall", "0 0 0 with wall = " + glue + " (they move with it)");
        } else {
            const Vec3 vel = v.vec(p + "velocity"), spin = v.vec(p + "spin");
            for (int a = dimension; a < 3; ++a)
                if (vel[a] != 0.0)
                    v.fail(p + "velocity", std::string("moves the group along the locked axis ") + static_cast<char>('x' + a),
                           dimension == 1 ? "x only in 1D" : "a velocity in the x-y plane in 2D");
            if (dimension < 3 && (spin[0] != 0.0 || spin[1] != 0.0 || (dimension == 1 && spin[2] != 0.0)))
                v.fail(p + "spin", "turns the group about a locked axis", dimension == 1 ? "0 0 0 in 1D" : "0 0 wz in 2D");
        }
        for (std::size_t i : picked) {
            if (groupOf[i] != 0)
                v.fail(p + "grains",
                       "takes grain " + std::to_string(i) + ", already in [group." + groupList[groupOf[i] - 1u] + "]",
                       "each grain in one group at most");
            if (pushes(i))
                v.fail(p + "grains",
                       "takes grain " + std::to_string(i) + ", which [force." + forceList[sums[sumOf[i]].owner - 1u] +
                           "] pushes",
                       "grains without a force (a group's grains move as prescribed)");
            groupOf[i] = static_cast<std::uint32_t>(g + 1);
            if (const std::size_t k = local(i); k != npos) members.push_back({k, {name, wall}});
        }
    }
    std::sort(members.begin(), members.end());
    for (const auto& [i, group] : members) {
        const std::string p = "group." + group.first + ".";
        world.drive(static_cast<BodyId>(i), v.vec(p + "velocity"), v.vec(p + "spin"), group.second);
    }
}

}  // namespace moreau::scene_io
