#include "moreau/model/generators.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <istream>
#include <numbers>
#include <sstream>
#include <string_view>

#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

namespace {

std::string fmt(double x) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

std::string fmtVec(const Vec3& v) { return fmt(v[0]) + " " + fmt(v[1]) + " " + fmt(v[2]); }

}  // namespace

std::vector<GrainSpec> makeChain(std::size_t count, double radius, double spacing, const Vec3& origin) {
    if (count == 0) throw InputError("chain: count must be >= 1");
    if (!(radius > 0.0)) throw InputError("chain: radius must be > 0, got " + fmt(radius));
    if (!(spacing >= 0.0)) throw InputError("chain: spacing must be >= 0, got " + fmt(spacing));
    std::vector<GrainSpec> grains(count);
    for (std::size_t i = 0; i < count; ++i) grains[i] = chainGrain(radius, spacing, origin, i);
    return grains;
}

GrainSpec chainGrain(double radius, double spacing, const Vec3& origin, std::size_t i) {
    const double pitch = 2.0 * radius + spacing;
    return GrainSpec{origin + Vec3(pitch * static_cast<double>(i), 0.0, 0.0), radius};
}

std::size_t latticeCount(const LatticeParams& p) {
    return p.counts[0] * p.counts[1] * (p.type != LatticeType::Cubic ? 1 : p.counts[2]);
}

GrainSpec latticeGrain(const LatticeParams& p, std::size_t n) {
    const bool planar = p.type != LatticeType::Cubic;
    const std::size_t nx = p.counts[0], ny = p.counts[1];
    const std::size_t i = n % nx, j = n / nx % ny, k = n / (nx * ny);
    const double pitch = 2.0 * p.radius + p.spacing;
    // Hexagonal rows touch their neighbours above and below: distance between
    // row centres √3/2 pitch, odd rows shifted by half a pitch.
    const double rowPitch = p.type == LatticeType::Hex ? pitch * std::sqrt(3.0) / 2.0 : pitch;
    const Vec3 origin = planar ? Vec3(p.origin[0], p.origin[1], 0.0) : p.origin;
    double x = pitch * static_cast<double>(i);
    if (p.type == LatticeType::Hex && j % 2 == 1) x += 0.5 * pitch;
    const Vec3 offset(x, rowPitch * static_cast<double>(j), pitch * static_cast<double>(k));
    GrainSpec g{origin + offset, p.radius};
    if (p.jitter > 0.0) {
        // Grain n's draws of the one jitter stream: those after the n grains
        // before it, each with a draw per free axis.
        const int freeAxes = planar ? 2 : 3;
        const double amplitude = p.jitter * p.radius;
        Rng rng = Rng::stream(p.seed, kLatticeJitterStream);
        rng.skip(static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(freeAxes));
        for (int a = 0; a < freeAxes; ++a) g.position[a] += rng.uniform(-amplitude, amplitude);
    }
    return g;
}

std::vector<GrainSpec> makeLattice(const LatticeParams& p) {
    if (!(p.radius > 0.0)) throw InputError("lattice: radius must be > 0, got " + fmt(p.radius));
    if (!(p.spacing >= 0.0)) throw InputError("lattice: spacing must be >= 0, got " + fmt(p.spacing));
    if (!(p.jitter >= 0.0)) throw InputError("lattice: jitter must be >= 0, got " + fmt(p.jitter));
    const bool planar = p.type != LatticeType::Cubic;
    const std::size_t nx = p.counts[0], ny = p.counts[1], nz = planar ? 1 : p.counts[2];
    if (nx == 0 || ny == 0 || nz == 0) throw InputError("lattice: counts must be positive");

    std::vector<GrainSpec> grains;
    grains.reserve(nx * ny * nz);
    for (std::size_t i = 0; i < nx * ny * nz; ++i) grains.push_back(latticeGrain(p, i));
    return grains;
}

namespace {

/// Uniform grid over the box with a head/next linked list per cell; cells are
/// at least 2 rMax wide, so a grain can only overlap grains of the 3^d cells
/// around its own.
class CellGrid {
public:
    CellGrid(const Vec3& lo, const Vec3& hi, int dimension, double minCell, std::size_t expected)
        : lo_(lo), dimension_(dimension) {
        for (int a = 0; a < 3; ++a) {
            n_[a] = 1;
            size_[a] = 1.0;
            if (a < dimension) {
                const double length = hi[a] - lo[a];
                n_[a] = std::max<long>(1, static_cast<long>(std::floor(length / minCell)));
                size_[a] = length / static_cast<double>(n_[a]);
            }
        }
        // A huge box of small grains would make a grid larger than the packing:
        // coarsen until there are at most a few cells per grain.
        const double limit = 4.0 * static_cast<double>(expected) + 1024.0;
        while (static_cast<double>(n_[0]) * static_cast<double>(n_[1]) * static_cast<double>(n_[2]) > limit) {
            for (int a = 0; a < dimension; ++a) {
                if (n_[a] > 1) {
                    n_[a] = (n_[a] + 1) / 2;
                    size_[a] = (hi[a] - lo[a]) / static_cast<double>(n_[a]);
                }
            }
        }
        head_.assign(static_cast<std::size_t>(n_[0] * n_[1] * n_[2]), -1);
    }

    std::array<long, 3> cellOf(const Vec3& x) const {
        std::array<long, 3> c{0, 0, 0};
        for (int a = 0; a < dimension_; ++a) {
            const long i = static_cast<long>(std::floor((x[a] - lo_[a]) / size_[a]));
            c[a] = std::clamp(i, 0L, n_[a] - 1);
        }
        return c;
    }

    void insert(const Vec3& x, std::int32_t id) {
        const std::size_t cell = index(cellOf(x));
        if (next_.size() <= static_cast<std::size_t>(id)) next_.resize(static_cast<std::size_t>(id) + 1, -1);
        next_[static_cast<std::size_t>(id)] = head_[cell];
        head_[cell] = id;
    }

    /// Calls f(id) for every grain in the cells around x; stops early if f returns true.
    template <class F>
    bool anyNear(const Vec3& x, F&& f) const {
        const auto c = cellOf(x);
        const long r0 = dimension_ > 0 ? 1 : 0, r1 = dimension_ > 1 ? 1 : 0, r2 = dimension_ > 2 ? 1 : 0;
        for (long dz = -r2; dz <= r2; ++dz)
            for (long dy = -r1; dy <= r1; ++dy)
                for (long dx = -r0; dx <= r0; ++dx) {
                    const std::array<long, 3> n{c[0] + dx, c[1] + dy, c[2] + dz};
                    if (n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= n_[0] || n[1] >= n_[1] || n[2] >= n_[2])
                        continue;
                    for (std::int32_t id = head_[index(n)]; id >= 0; id = next_[static_cast<std::size_t>(id)])
                        if (f(id)) return true;
                }
        return false;
    }

private:
    std::size_t index(const std::array<long, 3>& c) const {
        return static_cast<std::size_t>((c[2] * n_[1] + c[1]) * n_[0] + c[0]);
    }

    Vec3 lo_;
    int dimension_;
    std::array<long, 3> n_{};
    std::array<double, 3> size_{};
    std::vector<std::int32_t> head_;
    std::vector<std::int32_t> next_;
};

}  // namespace

std::vector<std::array<double, 4>> randomLoosePackingCentres(const RandomPackingParams& p) {
    if (p.dimension < 1 || p.dimension > 3) throw InputError("random packing: dimension must be 1, 2 or 3");
    if (p.count == 0) throw InputError("random packing: count must be >= 1");
    if (p.count > static_cast<std::size_t>(INT32_MAX)) throw InputError("random packing: count too large");
    if (!(p.rMin > 0.0) || !(p.rMax >= p.rMin) || !std::isfinite(p.rMax))
        throw InputError("random packing: radii must satisfy 0 < r_min <= r_max, got " + fmt(p.rMin) + ", " +
                         fmt(p.rMax));
    for (int a = 0; a < p.dimension; ++a) {
        if (!(p.boxMax[a] - p.boxMin[a] >= 2.0 * p.rMax) || !std::isfinite(p.boxMax[a] - p.boxMin[a]))
            throw InputError("random packing: the box from (" + fmtVec(p.boxMin) + ") to (" + fmtVec(p.boxMax) +
                             ") is narrower than one grain diameter (" + fmt(2.0 * p.rMax) + ") along " +
                             std::string(1, static_cast<char>('x' + a)));
    }

    Rng rng = Rng::stream(p.seed, kRandomPackingStream);
    CellGrid grid(p.boxMin, p.boxMax, p.dimension, 2.0 * p.rMax, p.count);
    std::vector<std::array<double, 4>> grains;  // x, y, z, radius
    grains.reserve(p.count);
    // All radii first, placed largest first: small grains then fill the holes
    // between large ones, and polydisperse packings get much denser before
    // jamming than in draw order (3D, radii in [0.25, 0.5], 10^5 grains: jams
    // at packing fraction 0.27 in draw order; largest first reaches 0.40 in 2 s).
    std::vector<double> radii(p.count, p.rMin);
    if (p.rMax > p.rMin)
        for (double& r : radii) r = rng.uniform(p.rMin, p.rMax);
    std::sort(radii.begin(), radii.end(), std::greater<>());
    for (std::size_t i = 0; i < p.count; ++i) {
        const double r = radii[i];
        bool placed = false;
        for (std::size_t attempt = 0; attempt < p.maxAttemptsPerGrain && !placed; ++attempt) {
            Vec3 x = Vec3::Zero();
            for (int a = 0; a < p.dimension; ++a) x[a] = rng.uniform(p.boxMin[a] + r, p.boxMax[a] - r);
            const bool overlaps = grid.anyNear(x, [&](std::int32_t j) {
                const std::array<double, 4>& g = grains[static_cast<std::size_t>(j)];
                const double reach = r + g[3];
                return (Vec3(g[0], g[1], g[2]) - x).squaredNorm() < reach * reach;
            });
            if (!overlaps) {
                grid.insert(x, static_cast<std::int32_t>(grains.size()));
                grains.push_back({x[0], x[1], x[2], r});
                placed = true;
            }
        }
        if (!placed) {
            // Packing fraction reached, to tell the user how far off the box is.
            double filled = 0.0, box = 1.0;
            for (const std::array<double, 4>& g : grains)
                filled += p.dimension == 1   ? 2.0 * g[3]
                          : p.dimension == 2 ? std::numbers::pi * g[3] * g[3]
                                             : 4.0 / 3.0 * std::numbers::pi * g[3] * g[3] * g[3];
            for (int a = 0; a < p.dimension; ++a) box *= p.boxMax[a] - p.boxMin[a];
            char fraction[32];
            std::snprintf(fraction, sizeof fraction, "%.2f", filled / box);
            throw InputError("random packing: only " + std::to_string(grains.size()) + " of " +
                             std::to_string(p.count) + " grains fit in the box from (" + fmtVec(p.boxMin) + ") to (" +
                             fmtVec(p.boxMax) + ") (packing fraction " + fraction + ", " +
                             std::to_string(p.maxAttemptsPerGrain) +
                             " attempts for the next grain); use a larger box or fewer grains");
        }
    }
    return grains;
}

std::vector<GrainSpec> makeRandomLoosePacking(const RandomPackingParams& p) {
    const std::vector<std::array<double, 4>> centres = randomLoosePackingCentres(p);
    std::vector<GrainSpec> grains(centres.size());
    for (std::size_t i = 0; i < centres.size(); ++i)
        grains[i] = GrainSpec{Vec3(centres[i][0], centres[i][1], centres[i][2]), centres[i][3]};
    return grains;
}

std::string PackingReader::noGrainsMessage(const std::string& origin) {
    return "packing file '" + origin + "' has no grains";
}

PackingReader::PackingReader(std::istream& in, std::string origin, PackingColumns columns)
    : in_(in), origin_(std::move(origin)), columns_(columns) {}

PackingReader::PackingReader(std::istream& in, std::string origin, PackingColumns columns, long linesBefore)
    : in_(in), origin_(std::move(origin)), columns_(columns), lineNumber_(linesBefore), share_(true) {}

bool PackingReader::next(GrainSpec& g) {
    auto bad = [&](const std::string& what) {
        throw InputError("packing file '" + origin_ + "', line " + std::to_string(lineNumber_) + ": " + what);
    };
    auto text = [](std::string_view f) { return std::string(f); };
    auto quoted = [](std::string_view f, const char* after) {
        std::string out = "'";
        out.append(f.begin(), f.end());
        return out + "'" + after;
    };
    while (std::getline(in_, line_)) {
        ++lineNumber_;
        if (const auto hash = line_.find('#'); hash != std::string::npos) line_.erase(hash);
        // Words between white space (what `>>` into strings splits at).
        fields_.clear();
        const std::string_view row(line_);
        for (std::size_t k = 0; k < row.size();) {
            while (k < row.size() && std::isspace(static_cast<unsigned char>(row[k]))) ++k;
            const std::size_t start = k;
            while (k < row.size() && !std::isspace(static_cast<unsigned char>(row[k]))) ++k;
            if (k > start) fields_.push_back(row.substr(start, k - start));
        }
        if (fields_.empty()) continue;
        // Orientation columns after the size: 3D four, 2D one, or none.
        const std::size_t extra = columns_ == PackingColumns::Oriented3D   ? 4
                                  : columns_ == PackingColumns::Oriented2D ? 1
                                                                           : 0;
        const std::size_t n = fields_.size();
        std::size_t oriented = 0;  // orientation columns this row has
        if (extra > 0 && (n == 4 + extra || n == 5 + extra)) oriented = extra;
        if (columns_ == PackingColumns::Oriented2D && n == 5) oriented = 1;  // x y z size angle
        if (n - oriented != 4 && n - oriented != 5) {
            const std::string size = columns_ == PackingColumns::Plain ? "radius" : "size";
            const std::string tail = columns_ == PackingColumns::Oriented3D   ? " [qw qx qy qz]"
                                     : columns_ == PackingColumns::Oriented2D ? " [angle]"
                                                                              : "";
            bad("expected '[id] x y z " + size + tail + "', found " + std::to_string(n) + " fields");
        }
        const std::size_t first = n - oriented - 4;
        if (first == 1) {
            long long id = 0;
            const std::string_view f = fields_[0];
            const auto r = std::from_chars(f.data(), f.data() + f.size(), id);
            if (r.ec != std::errc() || r.ptr != f.data() + f.size()) bad("id '" + text(f) + "' is not an integer");
        }
        double v[4];
        for (std::size_t k = 0; k < 4; ++k) {
            std::string_view f = fields_[first + k];
            if (!f.empty() && f.front() == '+') f.remove_prefix(1);
            const auto r = std::from_chars(f.data(), f.data() + f.size(), v[k]);
            if (r.ec != std::errc() || r.ptr != f.data() + f.size() || !std::isfinite(v[k]))
                bad(quoted(fields_[first + k], " is not a finite number"));
        }
        if (!(v[3] > 0.0)) bad("radius " + text(fields_[first + 3]) + " is not > 0");
        g = GrainSpec{Vec3(v[0], v[1], v[2]), v[3]};
        double o[4] = {0.0, 0.0, 0.0, 0.0};
        for (std::size_t k = 0; k < oriented; ++k) {
            std::string_view f = fields_[first + 4 + k];
            if (!f.empty() && f.front() == '+') f.remove_prefix(1);
            const auto r = std::from_chars(f.data(), f.data() + f.size(), o[k]);
            if (r.ec != std::errc() || r.ptr != f.data() + f.size() || !std::isfinite(o[k]))
                bad(quoted(fields_[first + 4 + k], " is not a finite number"));
        }
        if (oriented == 1) g.orientation = Quat(Eigen::AngleAxisd(o[0], Vec3::UnitZ()));
        if (oriented == 4) {
            const Quat q(o[0], o[1], o[2], o[3]);
            if (!(std::abs(q.norm() - 1.0) <= 1e-6))
                bad("quaternion '" + text(fields_[first + 4]) + " " + text(fields_[first + 5]) + " " +
                    text(fields_[first + 6]) + " " + text(fields_[first + 7]) + "' has length " +
                    std::to_string(q.norm()) + " (allowed: 1 within 1e-6)");
            g.orientation = q.normalized();
        }
        ++grains_;
        return true;
    }
    if (in_.bad()) throw InputError("cannot read packing file '" + origin_ + "'");
    if (grains_ == 0 && !share_) throw InputError(noGrainsMessage(origin_));
    return false;
}

std::vector<GrainSpec> parsePacking(std::istream& in, const std::string& origin, PackingColumns columns) {
    std::vector<GrainSpec> grains;
    PackingReader reader(in, origin, columns);
    for (GrainSpec g; reader.next(g);) grains.push_back(g);
    return grains;
}

std::vector<GrainSpec> parsePacking(std::istream& in, const std::string& origin) {
    return parsePacking(in, origin, PackingColumns::Plain);
}

std::vector<GrainSpec> readPackingFile(const std::string& path, PackingColumns columns) {
    std::ifstream in(path);
    if (!in) throw InputError("cannot read packing file '" + path + "'");
    return parsePacking(in, path, columns);
}

std::vector<GrainSpec> readPackingFile(const std::string& path) { return readPackingFile(path, PackingColumns::Plain); }

Quat randomOrientation(int dimension, std::uint64_t seed, std::size_t i) {
    Rng rng = Rng::stream(seed, kOrientationStream, i);
    if (dimension == 3) {
        // Shoemake's uniform unit quaternion from three uniforms.
        const double u1 = rng.uniform(), u2 = 2.0 * std::numbers::pi * rng.uniform(),
                     u3 = 2.0 * std::numbers::pi * rng.uniform();
        const double a = std::sqrt(1.0 - u1), b = std::sqrt(u1);
        return Quat(b * std::cos(u3), a * std::sin(u2), a * std::cos(u2), b * std::sin(u3));
    }
    return Quat(Eigen::AngleAxisd(2.0 * std::numbers::pi * rng.uniform(), Vec3::UnitZ()));
}

void randomOrientations(std::vector<GrainSpec>& grains, int dimension, std::uint64_t seed) {
    for (std::size_t i = 0; i < grains.size(); ++i) grains[i].orientation = randomOrientation(dimension, seed, i);
}

void addClumps(World& world, const std::vector<GrainSpec>& grains, std::uint16_t shapeIndex, double density,
               double fixedMass, bool frameOrigins) {
    constexpr std::size_t kWallRoom = 16;
    world.reserve(world.numBodies() + grains.size() + kWallRoom);
    const ClumpShape& shape = world.clumpShapes[shapeIndex - 1u];
    for (const GrainSpec& g : grains) {
        const double size = g.radius / shape.boundingRadius;
        const double m =
            fixedMass > 0.0 ? fixedMass : density * shape.volume * (world.dimension == 3 ? size * size * size : size * size);
        world.addClump(clumpCentre(g, shape, frameOrigins), shapeIndex, size, g.orientation * shape.frame, m);
    }
}

Vec3 clumpCentre(const GrainSpec& g, const ClumpShape& shape, bool frameOrigin) {
    const double size = g.radius / shape.boundingRadius;
    return frameOrigin ? Vec3(g.position + g.orientation * Vec3(size * shape.centroid)) : g.position;
}

double polygonReach(const PolygonShape& shape) {
    double r2 = 0.0;
    for (std::size_t k = 0; k < shape.vertices(); ++k)
        r2 = std::max(r2, Vec3(shape.vx[k] + shape.centroid.x(), shape.vy[k] + shape.centroid.y(), 0.0).squaredNorm());
    return std::sqrt(r2);
}

PolygonPlace placePolygon(const GrainSpec& g, const PolygonShape& shape) {
    PolygonPlace p;
    p.size = g.radius / polygonReach(shape);
    p.angle = 2.0 * std::atan2(g.orientation.z(), g.orientation.w());
    const double c = std::cos(p.angle), s = std::sin(p.angle);
    const Vec3 offset(p.size * (c * shape.centroid.x() - s * shape.centroid.y()),
                      p.size * (s * shape.centroid.x() + c * shape.centroid.y()), 0.0);
    p.centre = g.position + offset;
    return p;
}

void addPolygons(World& world, const std::vector<GrainSpec>& grains, const std::vector<std::uint32_t>& shapeIndices,
                 double density, double fixedMass) {
    constexpr std::size_t kWallRoom = 16;
    world.reserve(world.numBodies() + grains.size() + kWallRoom);
    for (std::size_t i = 0; i < grains.size(); ++i) {
        const std::uint32_t index = shapeIndices[i];
        const PolygonShape& shape = world.polygonShapes[index - 1u];
        const PolygonPlace p = placePolygon(grains[i], shape);
        const double m = fixedMass > 0.0 ? fixedMass : density * shape.area * p.size * p.size;
        world.addPolygon(p.centre, index, p.size, p.angle, m);
    }
}

void addPolygons(World& world, const std::vector<GrainSpec>& grains, std::uint32_t shapeIndex, double density,
                 double fixedMass) {
    const std::size_t first = world.polygonShapes.size() - (shapeIndex == 0 ? grains.size() : 0);
    std::vector<std::uint32_t> indices(grains.size(), shapeIndex);
    if (shapeIndex == 0)
        for (std::size_t i = 0; i < grains.size(); ++i) indices[i] = static_cast<std::uint32_t>(first + i + 1);
    addPolygons(world, grains, indices, density, fixedMass);
}

void writePackingFile(const std::string& path, const std::vector<GrainSpec>& grains) {
    std::ofstream out(path);
    if (!out) throw InputError("cannot write packing file '" + path + "'");
    out << "# id x y z radius\n";
    char buf[160];
    for (std::size_t i = 0; i < grains.size(); ++i) {
        const GrainSpec& g = grains[i];
        std::snprintf(buf, sizeof buf, "%zu %.17g %.17g %.17g %.17g\n", i + 1, g.position[0], g.position[1],
                      g.position[2], g.radius);
        out << buf;
    }
    out.flush();
    if (!out) throw InputError("cannot write packing file '" + path + "'");
}

double grainMass(GrainShape shape, double radius, double density) {
    const double r2 = radius * radius;
    return shape == GrainShape::Disk ? density * std::numbers::pi * r2
                                     : density * (4.0 / 3.0) * std::numbers::pi * r2 * radius;
}

double grainInertia(GrainShape shape, double mass, double radius) {
    return (shape == GrainShape::Disk ? 0.5 : 0.4) * mass * radius * radius;
}

void addGrains(World& world, const std::vector<GrainSpec>& grains, GrainShape shape, double density,
               double fixedMass) {
    // Exact room for these grains plus a few walls (walls come after the grains).
    constexpr std::size_t kWallRoom = 16;
    world.reserve(world.numBodies() + grains.size() + kWallRoom);
    for (const GrainSpec& g : grains) {
        const double m = fixedMass > 0.0 ? fixedMass : grainMass(shape, g.radius, density);
        world.addGrain(g.position, g.radius, m, grainInertia(shape, m, g.radius));
    }
}

}  // namespace moreau
