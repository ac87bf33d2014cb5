#include "moreau/core/parallel.hpp"
#include "moreau/contact/detection.hpp"

#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <cassert>
#include <cmath>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau {

/// Below this many grains the passes run on one thread: a parallel region per
/// pass costs more than it shares out, and far more when cores are busy
/// (measured: a 2-grain test took 150 s instead of 0.2 s under ctest -j2).
constexpr std::size_t kParallelGrains = 2048;

namespace {

/// Cells are made this much (relative) larger than largest diameter + margin.
/// Two grains closer than the cell size must bin into neighbouring cells, but
/// their cell coordinates are computed with rounding; the slack absorbs it for
/// coordinates up to ~10⁹ cells.
constexpr double kCellSlack = 1e-6;
/// Cell coordinates are clamped to this many cells per axis.
constexpr std::int32_t kMaxCellsPerAxis = std::int32_t{1} << 30;
/// The dense grid may have at most this many cells per grain, else we hash.
constexpr double kMaxCellsPerGrain = 4.0;
/// Blocks of grains per thread: small enough for dynamic load balance, large
/// enough that per-block overhead is invisible.
constexpr int kChunksPerThread = 8;

const char* axisName(int k) { return k == 0 ? "x" : (k == 1 ? "y" : "z"); }

std::string wallLabel(const World& world, std::size_t w) {
    return "wall '" + (w < world.wallName.size() ? world.wallName[w] : std::to_string(w)) + "': ";
}

/// Walls the narrow phase can handle: planes and cylinders with unit direction.
/// Runs every call, so it builds no strings unless it throws.
void checkWalls(const World& world) {
    for (std::size_t w = 0; w < world.numWalls(); ++w) {
        const WallShape& s = world.wallShape[w];
        if (s.kind != ShapeKind::Plane && s.kind != ShapeKind::Cylinder)
            throw InputError(wallLabel(world, w) + "contact detection supports plane and cylinder walls only");
        const double len = s.direction.norm();
        if (!(std::abs(len - 1.0) <= 1e-9))
            throw InputError(wallLabel(world, w) + "direction must be a unit vector, has length " +
                             std::to_string(len));
        if (s.kind == ShapeKind::Cylinder && !(s.radius >= 0.0))
            throw InputError(wallLabel(world, w) + "cylinder radius must be >= 0, is " + std::to_string(s.radius));
    }
}

/// Sphere–sphere separation d = x_b − x_a (minimum image), |d| and gap; true
/// when gap < margin. The squared-distance early exit is conservative (a slack
/// far above rounding), so it never rejects a pair the exact test would keep,
/// and every caller (cell grid passes, brute force) takes the same decision.
/// Squared distance below which a pair may be a candidate (the early exit).
inline double sphereSphereBound(double ra, double rb, double margin) {
    const double reach = ra + rb + margin;
    if (!(reach > 0.0)) return -1.0;  // gap ≥ −ra − rb ≥ margin: never
    const double slack = 1e-9 * (ra + rb + std::abs(margin));
    return (reach + slack) * (reach + slack);
}

[[gnu::always_inline]] inline bool sphereSphereGap(const World& world, const Vec3& xa, double ra, const Vec3& xb, double rb,
                            double margin, Vec3& d, double& dist, double& gap) {
    d = xb - xa;
    if (world.anyPeriodic()) d = world.minimumImageNear(d);
    const double d2 = d.squaredNorm();
    if (!(d2 <= sphereSphereBound(ra, rb, margin))) return false;  // also rejects NaN
    dist = std::sqrt(d2);
    gap = dist - ra - rb;
    return gap < margin;
}

/// Grain–wall kernel; with Fill = false only the decision (gap < margin), with
/// the same arithmetic, for the first pass of the cell grid. gap and n depend
/// only on the grain's offset from the plane or axis, so taking the minimum
/// image of the grain (a grain that drifted many periods along a wall parallel
/// to a periodic axis) changes neither.
/// The ball of centre `centre` and radius r is the grain's sphere or one of
/// its clump's components.
template <bool Fill>
inline bool ballWallKernel(const World& world, const Vec3& centre, double r, BodyId grain, BodyId wall, double margin,
                           Contact* c) {
    const auto iw = static_cast<std::size_t>(wall);
    const WallShape& shape = world.wall(wall);
    Vec3 rel = centre - world.x[iw];
    if (world.anyPeriodic()) rel = world.minimumImageNear(rel);
    double gap = 0.0;
    Vec3 n;
    switch (shape.kind) {
        case ShapeKind::Plane: {
            // Infinite plane; a centre behind it (s < 0) is a deep overlap, kept.
            const Vec3& N = shape.direction;
            const double s = rel.dot(N);
            gap = s - r;
            if (!(gap < margin)) return false;
            if constexpr (!Fill) return true;
            n = -N;
            break;
        }
        case ShapeKind::Cylinder: {
            const Vec3& A = shape.direction;
            const double axial = rel.dot(A);
            Vec3 radial = rel - axial * A;
            radial -= radial.dot(A) * A;  // second projection: ⊥ A to rounding of ρ, not of |rel|
            const double rho = radial.norm();
            gap = shape.inside ? shape.radius - rho - r : rho - shape.radius - r;
            if (!(gap < margin)) return false;
            if constexpr (!Fill) return true;
            // A centre on the axis (to rounding of |rel|) has no radial
            // direction; any one ⊥ A will do.
            const Vec3 e = rho > 1e-14 * rel.norm() ? Vec3(radial / rho) : Vec3(A.unitOrthogonal());
            n = shape.inside ? e : -e;
            break;
        }
        default:
            throw InputError(wallLabel(world, iw - world.numGrains) +
                             "contact detection supports plane and cylinder walls only");
    }
    if constexpr (Fill) {
        c->key = makeContactKey(grain, wall);
        c->a = grain;
        c->b = wall;
        c->n = n;
        c->gap = gap;
    }
    return true;
}

template <bool Fill>
inline bool sphereWallKernel(const World& world, BodyId grain, BodyId wall, double margin, Contact* c) {
    const auto ig = static_cast<std::size_t>(grain);
    return ballWallKernel<Fill>(world, world.x[ig], world.radius[ig], grain, wall, margin, c);
}

/// Integer cell coordinate from a floating one, clamped into [0, n); NaN → 0.
inline std::int32_t clampCell(double f, std::int32_t n) {
    if (!(f > 0.0)) return 0;
    if (f >= static_cast<double>(n - 1)) return n - 1;
    return static_cast<std::int32_t>(f);
}

/// Bucket of a cell in the hashed grid (multiply–xorshift on the packed coordinate).
inline std::size_t hashCell(const std::array<std::int32_t, 3>& c, int bits) {
    std::uint64_t h = static_cast<std::uint64_t>(static_cast<std::uint32_t>(c[0])) * 0x9e3779b97f4a7c15ULL;
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(c[1])) * 0xc2b2ae3d27d4eb4fULL;
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(c[2])) * 0x165667b19e3779f9ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return static_cast<std::size_t>(h >> (64 - bits));
}

}  // namespace

// ---------------------------------------------------------------------------
// Narrow phase (CD paper §2.4: n from a to b, gap < 0 an overlap; lever arms
// and the contact point follow from n and the radii, see contact.hpp).

bool narrowSphereSphere(const World& world, BodyId a, BodyId b, double margin, Contact& c) {
    if (b < a) std::swap(a, b);
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    const double ra = world.radius[ia], rb = world.radius[ib];
    Vec3 d;
    double dist = 0.0, gap = 0.0;
    if (!sphereSphereGap(world, world.x[ia], ra, world.x[ib], rb, margin, d, dist, gap)) return false;
    // Coincident centres have no direction; any unit normal is as good.
    const Vec3 n = dist > 0.0 ? Vec3(d * (1.0 / dist)) : Vec3::UnitX();
    c.key = makeContactKey(a, b);
    c.a = a;
    c.b = b;
    c.n = n;
    c.gap = gap;
    return true;
}

bool narrowSphereWall(const World& world, BodyId grain, BodyId wall, double margin, Contact& c) {
    if (wall < grain) std::swap(grain, wall);
    assert(!world.isWall(grain) && world.isWall(wall));
    return sphereWallKernel<true>(world, grain, wall, margin, &c);
}

namespace {
/// The contact of ball A (component ca of grain a) with ball B (component cb
/// of grain b > a) or, B null, with wall b; false when their gap is not
/// below margin. The balls are offsets from their bodies' centres.
[[gnu::always_inline]] inline bool narrowBalls(const World& world, BodyId a, BodyId b, unsigned ca,
                                               const ComponentBall& A, unsigned cb, const ComponentBall* B,
                                               double margin, Contact& c) {
    assert(a < b && !world.isWall(a));
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    const Vec3 xa = world.x[ia] + A.offset;
    if (!B) {
        if (!ballWallKernel<true>(world, xa, A.radius, a, b, margin, &c)) return false;
        c.key = makeContactKey(a, b, componentFeature(ca, 0));
        return true;
    }
    const Vec3 xb = world.x[ib] + B->offset;
    Vec3 d;
    double dist = 0.0, gap = 0.0;
    if (!sphereSphereGap(world, xa, A.radius, xb, B->radius, margin, d, dist, gap)) return false;
    c.key = makeContactKey(a, b, componentFeature(ca, cb));
    c.a = a;
    c.b = b;
    c.n = dist > 0.0 ? Vec3(d * (1.0 / dist)) : Vec3::UnitX();
    c.gap = gap;
    return true;
}

/// Room for polygonContacts' output: two for a pair of polygons, one per
/// vertex for a polygon and a wall (eight on the stack, more only for
/// polygons of more vertices). The eight are not constructed (polygonContacts
/// writes every entry it returns): this runs for every pair of the list at
/// every MD step, where constructing them cost more than the test of most
/// pairs.
static_assert(std::is_trivially_destructible_v<Contact>, "PolygonContactBuffer leaves its Contacts unconstructed");
struct PolygonContactBuffer {
    union {
        Contact few[8];
    };
    std::vector<Contact> many;
    PolygonContactBuffer() {}
    ~PolygonContactBuffer() {}
    Contact* room(const World& world, BodyId a, BodyId b) {
        if (!world.isWall(b)) return few;
        const PolygonShape* p = world.polygonOf(static_cast<std::size_t>(a));
        if (!p || p->vertices() <= 8) return few;
        many.resize(p->vertices());
        return many.data();
    }
};

/// A clump's components at most (4 bits of a contact key's feature each).
constexpr unsigned kMaxComponents = 16;
}  // namespace

bool narrowComponents(const World& world, BodyId a, BodyId b, unsigned ca, unsigned cb, double margin, Contact& c) {
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    const ComponentBall A{world.componentOffset(ia, ca), world.componentRadius(ia, ca)};
    if (world.isWall(b)) return narrowBalls(world, a, b, ca, A, 0, nullptr, margin, c);
    const ComponentBall B{world.componentOffset(ib, cb), world.componentRadius(ib, cb)};
    return narrowBalls(world, a, b, ca, A, cb, &B, margin, c);
}

namespace {
/// Every contact of bodies a < b (a grain; b a grain or a wall) within
/// margin, in key order, to emit(const Contact&): one for two spheres or a
/// sphere and a wall, one per pair of touching components for clumps (none
/// inside a clump: a body is never paired with itself). In a world with
/// clumps the balls come from `poses` (updated at the world's pose).
///
/// Clumps: the bounding spheres first (the components lie inside them),
/// then only the components that reach the other body's bounding sphere
/// take part: |x_a + o_ca − x_b| < r_ca + R_b + margin is necessary for
/// any component of b to lie within margin of component ca. The test
/// takes sphereSphereBound's slack, far above the rounding of the offsets
/// and of R_b, so it never drops a pair the component test would keep: the
/// same contacts, bit for bit.
template <class Emit>
void narrowPair(const World& world, const ShapePoses& poses, BodyId a, BodyId b, double margin, Emit&& emit) {
    Contact c;
    if (world.hasPolygons()) {
        PolygonContactBuffer buffer;
        Contact* found = buffer.room(world, a, b);
        const int k = polygonContacts(world, poses, a, b, margin, found);
        for (int i = 0; i < k; ++i) emit(found[i]);
        return;
    }
    if (!world.hasClumps()) {
        if (world.isWall(b) ? narrowSphereWall(world, a, b, margin, c) : narrowSphereSphere(world, a, b, margin, c))
            emit(c);
        return;
    }
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    const ComponentBall* A = poses.balls(ia);
    const unsigned na = poses.count(ia);
    if (world.isWall(b)) {
        if (!sphereWallKernel<false>(world, a, b, margin, nullptr)) return;
        for (unsigned ca = 0; ca < na; ++ca)
            if (narrowBalls(world, a, b, ca, A[ca], 0, nullptr, margin, c)) emit(c);
        return;
    }
    Vec3 d;  // x_b − x_a (minimum image)
    double dist = 0.0, gap = 0.0;
    const double Ra = world.radius[ia], Rb = world.radius[ib];
    if (!sphereSphereGap(world, world.x[ia], Ra, world.x[ib], Rb, margin, d, dist, gap)) return;
    const ComponentBall* B = poses.balls(ib);
    const unsigned nb = poses.count(ib);
    assert(na <= kMaxComponents && nb <= kMaxComponents);
    unsigned nearA[kMaxComponents], nearB[kMaxComponents], ka = 0, kb = 0;
    for (unsigned ca = 0; ca < na; ++ca)
        if ((A[ca].offset - d).squaredNorm() <= sphereSphereBound(A[ca].radius, Rb, margin)) nearA[ka++] = ca;
    if (ka == 0) return;
    for (unsigned cb = 0; cb < nb; ++cb)
        if ((B[cb].offset + d).squaredNorm() <= sphereSphereBound(B[cb].radius, Ra, margin)) nearB[kb++] = cb;
    for (unsigned i = 0; i < ka; ++i)
        for (unsigned j = 0; j < kb; ++j)
            if (narrowBalls(world, a, b, nearA[i], A[nearA[i]], nearB[j], &B[nearB[j]], margin, c)) emit(c);
}
}  // namespace

namespace {
/// A polygon contact's n and gap at the world's pose, into fresh: the
/// same vertex–edge point (its key) or the pair's overlap; false when the
/// pair no longer yields it.
bool refreshPolygonContact(const World& world, const ShapePoses& poses, const Contact& c, Contact& fresh) {
    if (keyFeature(c.key) == kOverlapFeature) {  // MD: the overlap's normal and equivalent gap
        Contact found[1];
        if (polygonContacts(world, poses, c.a, c.b, HUGE_VAL, found) == 0) return false;
        const PolygonOverlapGeometry g = polygonOverlapGeometry(world, poses, found[0]);
        fresh = found[0];
        fresh.n = g.n;
        fresh.gap = g.gap;
        return true;
    }
    PolygonContactBuffer buffer;
    Contact* found = buffer.room(world, c.a, c.b);
    const int k = polygonContacts(world, poses, c.a, c.b, HUGE_VAL, found);
    for (int i = 0; i < k; ++i)
        if (found[i].key == c.key) {
            fresh = found[i];
            return true;
        }
    return false;
}
}  // namespace

void refreshContactGeometry(const World& world, std::vector<Contact>& contacts) {
    ShapePoses poses;
    if (world.hasShapes()) poses.update(world);
    refreshContactGeometry(world, poses, contacts);
}

void refreshContactGeometry(const World& world, const ShapePoses& poses, std::vector<Contact>& contacts) {
    const std::size_t m = contacts.size();
    const bool clumps = world.hasClumps(), polygons = world.hasPolygons();
    forEachIndex(m, m > kParallelGrains, [&](std::size_t k) {
        Contact& c = contacts[k];
        Contact fresh;
        bool ok = false;
        if (polygons) {
            ok = refreshPolygonContact(world, poses, c, fresh);
        } else if (clumps) {
            const std::uint32_t f = keyFeature(c.key);
            const unsigned ca = f >> 4, cb = f & 0xFu;
            const ComponentBall* B = world.isWall(c.b) ? nullptr : &poses.ball(static_cast<std::size_t>(c.b), cb);
            ok = narrowBalls(world, c.a, c.b, ca, poses.ball(static_cast<std::size_t>(c.a), ca), cb, B, HUGE_VAL, fresh);
        } else {
            ok = world.isWall(c.b) ? narrowSphereWall(world, c.a, c.b, HUGE_VAL, fresh)
                                   : narrowSphereSphere(world, c.a, c.b, HUGE_VAL, fresh);
        }
        if (ok) {
            c.n = fresh.n;
            c.gap = fresh.gap;
        } else {
            c.gap = HUGE_VAL;
        }
    });
}

// ---------------------------------------------------------------------------
// Broad phase: uniform cell grid.

CellGridDetector::CellCoord CellGridDetector::cellCoord(const Vec3& position) const {
    CellCoord c{};
    Vec3 x = position;
    if (grid_.shift != 0.0 && grid_.periodic[1]) {
        // Lees–Edwards: a position beyond the y faces is binned as its image
        // inside, which lies ky δ back along x.
        x[0] -= grid_.shift * std::floor((x[1] - grid_.origin[1]) / grid_.length[1]);
    }
    for (std::size_t k = 0; k < 3; ++k) {
        const double xk = x[static_cast<Eigen::Index>(k)];
        double f;
        if (grid_.periodic[k]) {
            // Positions may lie anywhere: wrap into [0, 1) box lengths first.
            double t = (xk - grid_.origin[k]) / grid_.length[k];
            t -= std::floor(t);
            f = std::floor(t * static_cast<double>(grid_.n[k]));
        } else {
            f = std::floor((xk - grid_.origin[k]) * grid_.invCell[k]);
        }
        c[k] = clampCell(f, grid_.n[k]);
    }
    return c;
}

std::size_t CellGridDetector::cellIndex(const CellCoord& c) const {
    if (grid_.hashed) return hashCell(c, grid_.hashBits);
    return static_cast<std::size_t>(c[0]) +
           static_cast<std::size_t>(grid_.n[0]) *
               (static_cast<std::size_t>(c[1]) + static_cast<std::size_t>(grid_.n[1]) * static_cast<std::size_t>(c[2]));
}

bool CellGridDetector::buildGrid(const World& world, double margin) {
    const std::size_t n = world.numGrains;
    if (n == 0) return false;

    // Largest radius and bounding box of the finite coordinates (a grain at
    // infinity or NaN must not blow the box up; it is clamped into a border
    // cell, and the narrow phase rejects it).
    double rmax = 0.0;
    double lo0 = HUGE_VAL, lo1 = HUGE_VAL, lo2 = HUGE_VAL;
    double hi0 = -HUGE_VAL, hi1 = -HUGE_VAL, hi2 = -HUGE_VAL;
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) reduction(max : rmax, hi0, hi1, hi2) reduction(min : lo0, lo1, lo2) \
    if (n > kParallelGrains)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        const Vec3& x = world.x[ui];
        rmax = std::max(rmax, world.radius[ui]);
        if (std::isfinite(x[0])) {
            lo0 = std::min(lo0, x[0]);
            hi0 = std::max(hi0, x[0]);
        }
        if (std::isfinite(x[1])) {
            lo1 = std::min(lo1, x[1]);
            hi1 = std::max(hi1, x[1]);
        }
        if (std::isfinite(x[2])) {
            lo2 = std::min(lo2, x[2]);
            hi2 = std::max(hi2, x[2]);
        }
    }
    const std::array<double, 3> lo{lo0, lo1, lo2}, hi{hi0, hi1, hi2};

    // A pair is a candidate when |d| < r_a + r_b + margin ≤ 2 rmax + margin.
    const double reach = 2.0 * rmax + margin;
    if (!(reach > 0.0)) return false;
    grid_.reach = reach;
    grid_.shift = world.leesEdwards() ? world.shift : 0.0;
    const double cell = reach * (1.0 + kCellSlack);

    double denseCells = 1.0;
    for (std::size_t k = 0; k < 3; ++k) {
        grid_.periodic[k] = world.periodic[k];
        double cells;
        if (world.periodic[k]) {
            const double L = world.boxMax[static_cast<Eigen::Index>(k)] - world.boxMin[static_cast<Eigen::Index>(k)];
            // Minimum image finds the one image within reach only if L > 2 reach.
            if (!(L > 2.0 * reach))
                throw InputError("periodic box too small along " + std::string(axisName(static_cast<int>(k))) +
                                 ": length " + std::to_string(L) +
                                 ", but minimum image requires length > 2*(largest diameter + margin) = " +
                                 std::to_string(2.0 * reach));
            cells = std::floor(L / cell);
            // With 2 cells the left and right neighbours coincide; 1 cell
            // (all pairs along this axis) is correct and as cheap.
            if (cells < 3.0) cells = 1.0;
            cells = std::min(cells, static_cast<double>(kMaxCellsPerAxis));
            grid_.origin[k] = world.boxMin[static_cast<Eigen::Index>(k)];
            grid_.length[k] = L;
            grid_.invCell[k] = cells / L;
        } else {
            const bool any = lo[k] <= hi[k];
            const double extent = any ? hi[k] - lo[k] : 0.0;
            // Degenerate axes (1D, 2D) get exactly one cell.
            cells = std::min(std::floor(extent / cell) + 1.0, static_cast<double>(kMaxCellsPerAxis));
            grid_.origin[k] = any ? lo[k] : 0.0;
            grid_.length[k] = 0.0;
            grid_.invCell[k] = 1.0 / cell;
        }
        grid_.n[k] = static_cast<std::int32_t>(cells);
        denseCells *= cells;
    }

    // Keep memory O(n): a sparse bounding box (a few grains flown far away)
    // switches to a hashed grid with the same cell size instead of coarser
    // cells, which would put a whole packing into a handful of cells.
    grid_.hashed = denseCells > std::max(kMaxCellsPerGrain * static_cast<double>(n), 64.0);
    if (grid_.hashed) {
        grid_.hashBits = 6;
        while ((std::size_t{1} << grid_.hashBits) < 2 * n) ++grid_.hashBits;
        grid_.numCells = std::size_t{1} << grid_.hashBits;
    } else {
        grid_.numCells = static_cast<std::size_t>(denseCells);
    }

    grainCell_.resize(n);
#pragma omp parallel for schedule(static) if (n > kParallelGrains)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        grainCell_[ui] = cellIndex(cellCoord(world.x[ui]));
    }

    // Count sort, stable: grains of a cell are in ascending id.
    cellStart_.assign(grid_.numCells + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++cellStart_[grainCell_[i] + 1];
    for (std::size_t c = 0; c < grid_.numCells; ++c) cellStart_[c + 1] += cellStart_[c];
    cellGrain_.resize(n);
    cellBody_.resize(n);
    cellCoord_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto p = static_cast<std::size_t>(cellStart_[grainCell_[i]]++);
        cellGrain_[p] = static_cast<std::int32_t>(i);
        cellBody_[p] = {world.x[i], world.radius[i]};
    }
    // The fill advanced each start to the next cell's start: shift back.
    for (std::size_t c = grid_.numCells; c > 0; --c) cellStart_[c] = cellStart_[c - 1];
    cellStart_[0] = 0;
    // Recomputed from the same positions rather than kept per grain as well
    // (12 bytes per grain less at the peak of a list build).
#pragma omp parallel for schedule(static) if (n > kParallelGrains)
    for (std::int64_t p = 0; p < count; ++p) {
        const auto up = static_cast<std::size_t>(p);
        cellCoord_[up] = cellCoord(cellBody_[up].x);
    }
    return true;
}

void CellGridDetector::collectPartners(const World& world, double margin, bool pairs, std::size_t slot,
                                       std::vector<BodyId>& partners) const {
    const std::size_t first = partners.size();
    const BodyId i = pairs ? cellGrain_[slot] : static_cast<BodyId>(slot);
    if (pairs) {
        const Vec3& xi = cellBody_[slot].x;
        const double ri = cellBody_[slot].r;
        const CellCoord& ci = cellCoord_[slot];
        // Neighbouring coordinates along each axis as at most two runs of
        // consecutive cells [lo, hi]: wrapped on periodic axes, cut at the
        // grid's border on the others, the single cell 0 for n = 1.
        std::array<std::array<std::array<std::int32_t, 2>, 2>, 3> runs{};
        std::array<int, 3> numRuns{};
        for (std::size_t k = 0; k < 3; ++k) {
            const std::int32_t nk = grid_.n[k], c = ci[k];
            auto& r = runs[k];
            if (nk == 1) {
                r[0] = {0, 0};
                numRuns[k] = 1;
            } else if (grid_.periodic[k] && c == 0) {  // nk ≥ 3: three distinct cells
                r[0] = {0, 1};
                r[1] = {nk - 1, nk - 1};
                numRuns[k] = 2;
            } else if (grid_.periodic[k] && c == nk - 1) {
                r[0] = {nk - 2, nk - 1};
                r[1] = {0, 0};
                numRuns[k] = 2;
            } else {
                r[0] = {std::max(c - 1, 0), std::min(c + 1, nk - 1)};
                numRuns[k] = 1;
            }
        }
        Vec3 d;
        double dist = 0.0, gap = 0.0;
        // Scan grains p ∈ [begin, end) of the cell-sorted arrays; positions are
        // read from the sorted copy, so a row of cells is one contiguous read.
        const bool hashed = grid_.hashed, periodic = world.anyPeriodic();
        const auto scan = [&](std::size_t begin, std::size_t end, const CellCoord& cell) {
            for (std::size_t p = begin; p < end; ++p) {
                const BodyId j = cellGrain_[p];
                const CellBody& g = cellBody_[p];
                // One rarely taken branch instead of a 50/50 one on j > i (ids
                // are in random order within a neighbourhood once grains mix):
                // the same early exit as sphereSphereGap, evaluated for all.
                Vec3 dj = g.x - xi;
                if (periodic) dj = world.minimumImageNear(dj);
                bool maybe = (j > i) & (dj.squaredNorm() <= sphereSphereBound(ri, g.r, margin));
                if (hashed) maybe &= cellCoord_[p] == cell;  // other cell, same bucket
                if (maybe && sphereSphereGap(world, xi, ri, g.x, g.r, margin, d, dist, gap)) partners.push_back(j);
            }
        };
        // Lees–Edwards: across the y faces the neighbours are the images of
        // the cells δ further along x (from the bottom row) or δ back (from
        // the top row): their runs along x are those around x_i ± δ.
        std::array<std::array<std::int32_t, 2>, 2> shiftedRuns{};
        int numShifted = 0;
        if (world.leesEdwards() && grid_.n[1] == 1) runs[0][0] = {0, grid_.n[0] - 1}, numRuns[0] = 1;  // every image
        const bool sliding = world.leesEdwards() && grid_.periodic[1] && grid_.n[1] > 1 &&
                             (ci[1] == 0 || ci[1] == grid_.n[1] - 1);
        if (sliding) {
            const std::int32_t nx = grid_.n[0];
            if (nx < 3) {
                shiftedRuns[0] = {0, nx - 1};
                numShifted = 1;
            } else {
                const double reach = grid_.reach;
                // x_i of the image inside the box (the one binned), then ± δ.
                const double inside =
                    xi[0] - grid_.shift * std::floor((xi[1] - grid_.origin[1]) / grid_.length[1]);
                const double centre = inside + (ci[1] == 0 ? grid_.shift : -grid_.shift);
                auto column = [&](double x) {
                    double t = (x - grid_.origin[0]) / grid_.length[0];
                    t -= std::floor(t);
                    return clampCell(std::floor(t * static_cast<double>(nx)), nx);
                };
                const std::int32_t c0 = column(centre - reach), c1 = column(centre + reach);
                if (c0 <= c1) {
                    shiftedRuns[0] = {c0, c1};
                    numShifted = 1;
                } else {
                    shiftedRuns[0] = {c0, nx - 1};
                    shiftedRuns[1] = {0, c1};
                    numShifted = 2;
                }
            }
        }
        for (int rz = 0; rz < numRuns[2]; ++rz) {
            for (std::int32_t z = runs[2][rz][0]; z <= runs[2][rz][1]; ++z) {
                for (int ry = 0; ry < numRuns[1]; ++ry) {
                    for (std::int32_t y = runs[1][ry][0]; y <= runs[1][ry][1]; ++y) {
                        // The row across a y face (ci = 0 looking at n − 1, or the reverse).
                        const bool across = sliding && (y - ci[1] > 1 || ci[1] - y > 1);
                        const auto& xRuns = across ? shiftedRuns : runs[0];
                        for (int rx = 0; rx < (across ? numShifted : numRuns[0]); ++rx) {
                            const std::int32_t x0 = xRuns[rx][0], x1 = xRuns[rx][1];
                            if (grid_.hashed) {
                                for (std::int32_t x = x0; x <= x1; ++x) {
                                    const CellCoord cc{x, y, z};
                                    const std::size_t cell = cellIndex(cc);
                                    scan(static_cast<std::size_t>(cellStart_[cell]),
                                         static_cast<std::size_t>(cellStart_[cell + 1]), cc);
                                }
                            } else {
                                // Cells x0..x1 of a row are consecutive in the dense grid.
                                const std::size_t row = cellIndex(CellCoord{0, y, z});
                                scan(static_cast<std::size_t>(cellStart_[row + static_cast<std::size_t>(x0)]),
                                     static_cast<std::size_t>(cellStart_[row + static_cast<std::size_t>(x1) + 1]),
                                     CellCoord{});
                            }
                        }
                    }
                }
            }
        }
        // Usually a handful of partners: insertion sort.
        for (std::size_t p = first + 1; p < partners.size(); ++p) {
            const BodyId v = partners[p];
            std::size_t q = p;
            for (; q > first && partners[q - 1] > v; --q) partners[q] = partners[q - 1];
            partners[q] = v;
        }
    }
    // Walls have the largest ids, so appending them in id order keeps the order.
    for (std::size_t w = world.numGrains; w < world.numBodies(); ++w) {
        if (sphereWallKernel<false>(world, i, static_cast<BodyId>(w), margin, nullptr))
            partners.push_back(static_cast<BodyId>(w));
    }
}

void CellGridDetector::findPartners(const World& world, double margin) {
    checkWalls(world);
    const std::size_t n = world.numGrains;
    const bool pairs = buildGrid(world, margin);

    // Pass 1 walks the grains in cell order, in blocks independent of the
    // thread count, and stores each grain's partners j > i (sorted by j).
    // Cell order keeps neighbouring cells in cache whatever the grain ids:
    // with shuffled ids, walking in id order was ~2x slower. Pass 2 walks the
    // grains in id order and writes full contacts at prefix-sum offsets, which
    // is key order directly: no global sort, and bit-identical output for any
    // number of threads. The narrow phase runs twice for accepted pairs; that
    // is cheaper than storing 80-byte contacts and copying them.
    const std::size_t numChunks =
        std::max<std::size_t>(1, std::min<std::size_t>(n, static_cast<std::size_t>(omp_get_max_threads()) *
                                                              kChunksPerThread));
    if (chunks_.size() < numChunks) chunks_.resize(numChunks);
    grainCount_.resize(n);
    grainPartners_.resize(n);
    grainOffset_.resize(n + 1);
    const auto chunkBegin = [&](std::size_t c) { return n * c / numChunks; };
    const auto numChunksI = static_cast<std::int64_t>(numChunks);

#pragma omp parallel for schedule(dynamic, 1) if (n > kParallelGrains)
    for (std::int64_t ci = 0; ci < numChunksI; ++ci) {
        const auto c = static_cast<std::size_t>(ci);
        std::vector<BodyId>& partners = chunks_[c].partners;
        partners.clear();
        for (std::size_t slot = chunkBegin(c); slot < chunkBegin(c + 1); ++slot) {
            const std::size_t before = partners.size();
            collectPartners(world, margin, pairs, slot, partners);
            const auto i = static_cast<std::size_t>(pairs ? cellGrain_[slot] : static_cast<std::int32_t>(slot));
            grainCount_[i] = static_cast<std::uint32_t>(partners.size() - before);
            grainPartners_[i] = {static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(before)};
        }
    }

    grainOffset_[0] = 0;
    for (std::size_t i = 0; i < n; ++i) grainOffset_[i + 1] = grainOffset_[i] + grainCount_[i];
}

namespace {

/// Resizes `out` to `size` without growth slack: std::vector's resize may
/// double the capacity, which for the Contact arrays of a large packing is
/// hundreds of bytes per grain. A small margin avoids a reallocation per
/// call while the count creeps up.
template <class T>
void resizeTight(std::vector<T>& out, std::size_t size) {
    if (size > out.capacity()) {
        std::vector<T>().swap(out);
        out.reserve(size + size / 32);
    }
    out.resize(size);
}

}  // namespace

void CellGridDetector::releaseBuffers() {
    std::vector<std::int32_t>().swap(cellStart_);
    std::vector<std::int32_t>().swap(cellGrain_);
    std::vector<CellBody>().swap(cellBody_);
    std::vector<CellCoord>().swap(cellCoord_);
    std::vector<std::size_t>().swap(grainCell_);
    std::vector<std::uint32_t>().swap(grainCount_);
    std::vector<std::array<std::uint32_t, 2>>().swap(grainPartners_);
    std::vector<std::size_t>().swap(grainOffset_);
    std::vector<Chunk>().swap(chunks_);
    poses_ = ShapePoses{};
}

template <class Out, class Emit>
void CellGridDetector::eachCandidate(const World& world, double margin, std::vector<Out>& out, Emit emit) {
    findPartners(world, margin);
    const std::size_t n = world.numGrains;
    resizeTight(out, grainOffset_[n]);
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) if (n > kParallelGrains)
    for (std::int64_t ii = 0; ii < count; ++ii) {
        const auto i = static_cast<std::size_t>(ii);
        const BodyId* partners = chunks_[grainPartners_[i][0]].partners.data() + grainPartners_[i][1];
        Out* o = out.data() + grainOffset_[i];
        for (std::uint32_t q = 0; q < grainCount_[i]; ++q) emit(static_cast<BodyId>(i), partners[q], o[q]);
    }
}

void CellGridDetector::detectPairs(const World& world, double margin, std::vector<Pair>& out) {
    eachCandidate(world, margin, out, [](BodyId a, BodyId b, Pair& p) { p = {a, b}; });
}

void CellGridDetector::detect(const World& world, double margin, std::vector<Contact>& out) {
    if (world.hasShapes()) {  // several contacts per pair: the pairs, then their contacts
        std::vector<Pair> pairs;
        detectPairs(world, margin, pairs);
        poses_.update(world);
        out.clear();
        for (const Pair& p : pairs) narrowPair(world, poses_, p.a, p.b, margin, [&](Contact c) { out.push_back(c); });
        return;
    }
    eachCandidate(world, margin, out, [&](BodyId a, BodyId b, Contact& ct) {
        // Same arithmetic as pass 1, so the pair is accepted again.
        [[maybe_unused]] const bool kept = world.isWall(b) ? sphereWallKernel<true>(world, a, b, margin, &ct)
                                                            : narrowSphereSphere(world, a, b, margin, ct);
        assert(kept);
        ct.history = ContactHistory{};
    });
}

// ---------------------------------------------------------------------------

void VerletListDetector::expandComponents(const World& world, double reach) {
    // narrowPair at margin + skin on each pair of bodies, keeping the pairs
    // of components it would test and find within reach: in key order, as
    // narrowPair emits them.
    std::vector<CellGridDetector::Pair> bodies;
    bodies.swap(list_);
    features_.clear();
    for (const CellGridDetector::Pair& p : bodies)
        narrowPair(world, poses_, p.a, p.b, reach, [&](const Contact& found) {
            list_.push_back(p);
            features_.push_back(static_cast<std::uint8_t>(keyFeature(found.key)));
        });
    const std::size_t nb = world.numBodies();
    builtTurn_.assign(world.q.begin(), world.q.begin() + static_cast<std::ptrdiff_t>(nb));
    builtReach_.assign(nb, 0.0);
    for (std::size_t i = 0; i < poses_.grains(); ++i) {
        if (!world.clumpOf(i)) continue;
        double far2 = 0.0;
        for (unsigned k = 0; k < poses_.count(i); ++k) far2 = std::max(far2, poses_.ball(i, k).offset.squaredNorm());
        builtReach_[i] = std::sqrt(far2);
    }
}

bool VerletListDetector::travelled(const World& world, double limit) const {
    const std::size_t nb = world.numBodies();
    const double limit2 = limit * limit;
    if (builtReach_.size() != nb)  // spheres only
        return anyIndex(nb, nb > kParallelGrains, [&](std::size_t i) {
            return world.minimumImage(world.x[i] - builtAt_[i]).squaredNorm() > limit2;
        });
    // A turn by θ moves a component at distance ρ from the centre by the
    // chord 2ρ sin(θ/2) ≤ 2ρ |q − ±q₀| (the quaternions' chord e, with
    // sin²(θ/2) = e² − e⁴/4): no cancellation, so never below the truth.
    return anyIndex(nb, nb > kParallelGrains, [&](std::size_t i) {
        const double d2 = world.minimumImage(world.x[i] - builtAt_[i]).squaredNorm();
        if (builtReach_[i] == 0.0) return d2 > limit2;
        const Quat& q = world.q[i];
        const Quat& q0 = builtTurn_[i];
        const double sign = q.dot(q0) < 0.0 ? -1.0 : 1.0;
        const double chord = (q.coeffs() - sign * q0.coeffs()).norm();
        return std::sqrt(d2) + 2.0 * builtReach_[i] * chord > limit;
    });
}

void VerletListDetector::detect(const World& world, double margin, std::vector<Contact>& out) {
    detectInto(world, margin, out, nullptr);
}

void VerletListDetector::detect(const World& world, double margin, std::vector<Contact>& out,
                                std::vector<ContactMemory>& previous) {
    detectInto(world, margin, out, &previous);
}

void VerletListDetector::detectInto(const World& world, double margin, std::vector<Contact>& out,
                                    std::vector<ContactMemory>* previous) {
    // Remember the old contacts first, in parallel (the narrow phase below
    // overwrites `out` in place).
    const std::size_t old = out.size();
    if (previous) {
        resizeTight(*previous, old);
        std::vector<ContactMemory>& mem = *previous;
        forEachIndex(old, old > kParallelGrains, [&](std::size_t k) { mem[k] = {out[k].key, out[k].history}; });
    }
    const std::size_t nb = world.numBodies();
    const bool clumps = world.hasClumps();
    bool rebuild = skin_ <= 0.0 || builtAt_.size() != nb || margin != builtMargin_;
    if (!rebuild) {
        // Two bodies each moved at most skin/2 (minimum image on periodic
        // axes) cannot have closed a gap of more than the skin; a deforming
        // cell's images move too, and take their share of it.
        const double limit = 0.5 * (skin_ - world.cellChange(builtCell_));
        rebuild = !(limit > 0.0) || travelled(world, limit);
    }
    if (world.hasShapes()) poses_.update(world);
    if (rebuild) {
        std::vector<Contact>().swap(out);  // see the class comment: `out` and the grid take turns
        grid_.detectPairs(world, margin + skin_, list_);
        grid_.releaseBuffers();
        if (clumps) expandComponents(world, margin + skin_);
        builtAt_ = world.x;
        builtCell_ = world.cellState();
        builtMargin_ = margin;
        ++builds_;
    }
    // Narrow phase over the list, which is in key order: so is the output.
    // Fixed chunks (independent of the thread count); each thread fills its
    // scratch buffer with one chunk, and the buffers are copied into `out` in
    // chunk order (omp ordered), so the output is the same for any thread
    // count. `out` keeps its old contacts until each is overwritten.
    constexpr std::size_t kChunk = 8192;
    const std::size_t L = list_.size(), chunks = (L + kChunk - 1) / kChunk;
    const auto threads = static_cast<std::size_t>(chunks > 1 ? omp_get_max_threads() : 1);
    if (scratch_.size() < threads) scratch_.resize(threads);
    // After a build: room for last call's count and a little more, without
    // std::vector's doubling (see resizeTight).
    if (out.empty()) out.reserve(lastSize_ + lastSize_ / 32);
    std::size_t written = 0;
    // The narrow phase of one chunk: keep(k, c) tests entry k into c. One
    // loop per kind of world (each instantiated for its own test).
    auto narrowChunk = [&](std::size_t ch, std::vector<Contact>& part, auto&& keep) {
        part.clear();
        Contact c;
        const std::size_t begin = ch * kChunk;
        for (std::size_t k = begin; k < std::min(L, begin + kChunk); ++k)
            if (keep(k, c)) part.push_back(c);
    };
    // A world with clumps: one pair of components per entry (narrowPair's test on it).
    auto components = [&](std::size_t k, Contact& c) {
        const CellGridDetector::Pair& l = list_[k];
        const unsigned ca = features_[k] >> 4, cb = features_[k] & 0xFu;
        const auto ia = static_cast<std::size_t>(l.a), ib = static_cast<std::size_t>(l.b);
        const ComponentBall* B = world.isWall(l.b) ? nullptr : &poses_.ball(ib, cb);
        return narrowBalls(world, l.a, l.b, ca, poses_.ball(ia, ca), cb, B, margin, c);
    };
    auto spheres = [&](std::size_t k, Contact& c) {
        const CellGridDetector::Pair& l = list_[k];
        const bool kept = world.isWall(l.b) ? narrowSphereWall(world, l.a, l.b, margin, c)
                                            : narrowSphereSphere(world, l.a, l.b, margin, c);
        if (kept) c.history = ContactHistory{};
        return kept;
    };
    auto append = [&](const std::vector<Contact>& part) {
        const std::size_t end = written + part.size();
        if (end > out.size()) {
            // Rare after the first call: more contacts than last time.
            if (end > out.capacity()) {
                const std::size_t grown = lastSize_ > 0 ? out.capacity() + out.capacity() / 8 : 2 * out.capacity();
                out.reserve(std::max(end, grown));
            }
            out.resize(end);
        }
        std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(written));
        written = end;
    };
    // A world of polygons: each entry a pair of bodies, with up to two
    // contacts (one per vertex on a wall).
    auto polygons = [&](std::size_t ch, std::vector<Contact>& part) {
        part.clear();
        const std::size_t begin = ch * kChunk;
        for (std::size_t k = begin; k < std::min(L, begin + kChunk); ++k)
            narrowPair(world, poses_, list_[k].a, list_[k].b, margin, [&](const Contact& c) { part.push_back(c); });
    };
    auto narrow = [&](std::size_t ch, std::vector<Contact>& part) {
        if (world.hasPolygons()) polygons(ch, part);
        else if (clumps) narrowChunk(ch, part, components);
        else narrowChunk(ch, part, spheres);
    };
    if (chunks <= 1) {  // no team for one chunk (see core/parallel.hpp)
        for (std::size_t ch = 0; ch < chunks; ++ch) {
            narrow(ch, scratch_[0].contacts);
            append(scratch_[0].contacts);
        }
    } else {
        const auto chunksI = static_cast<std::int64_t>(chunks);
#pragma omp parallel for ordered schedule(dynamic, 1)
        for (std::int64_t ch = 0; ch < chunksI; ++ch) {
            std::vector<Contact>& part = scratch_[static_cast<std::size_t>(omp_get_thread_num())].contacts;
            narrow(static_cast<std::size_t>(ch), part);
#pragma omp ordered
            append(part);
        }
    }
    out.resize(written);
    // The first call grew by doubling: give the slack back (one copy, once).
    if (out.capacity() - out.size() > out.size() / 8 + kChunk) out.shrink_to_fit();
    lastSize_ = out.size();
}

void detectBruteForce(const World& world, double margin, std::vector<Contact>& out) {
    checkWalls(world);
    out.clear();
    const auto n = static_cast<BodyId>(world.numGrains);
    const auto bodies = static_cast<BodyId>(world.numBodies());
    // i ascending, then j ascending (grains, then walls): already key order.
    ShapePoses poses;
    if (world.hasShapes()) poses.update(world);
    auto keep = [&](const Contact& found) { out.push_back(found); };
    for (BodyId i = 0; i < n; ++i)
        for (BodyId j = i + 1; j < bodies; ++j) narrowPair(world, poses, i, j, margin, keep);
    for (Contact& ct : out) ct.history = ContactHistory{};
}

namespace {

/// The merge-join of matchContacts, for previous records of type P (Contact
/// or ContactMemory: both have key and history); with slots, the laws'
/// record of each contact travels with it.
template <class P>
void mergeHistory(const std::vector<P>& previous, std::vector<Contact>& current, const ContactSlots* previousSlots,
                  ContactSlots* slots) {
    assert(std::is_sorted(previous.begin(), previous.end(), [](const P& l, const P& r) { return l.key < r.key; }));
    assert(std::is_sorted(current.begin(), current.end(),
                          [](const Contact& l, const Contact& r) { return l.key < r.key; }));
    const std::size_t stride = slots && previousSlots ? previousSlots->stride : 0;
    assert(stride == 0 || previousSlots->records() == previous.size());
    if (slots) {
        slots->stride = stride;
        resizeTight(slots->values, current.size() * stride);
    }
    mergeByKey(
        previous.size(), [&](std::size_t p) { return previous[p].key; }, current.size(),
        [&](std::size_t k) { return current[k].key; },
        [&](std::size_t k, std::size_t p) {
            current[k].history = previous[p].history;
            ++current[k].history.age;
            if (stride > 0) std::copy_n(previousSlots->at(p), stride, slots->at(k));
        },
        [&](std::size_t k) {
            current[k].history = ContactHistory{};
            if (stride > 0) std::fill_n(slots->at(k), stride, 0.0);
        });
}

}  // namespace

void matchContacts(const std::vector<Contact>& previous, std::vector<Contact>& current) {
    mergeHistory(previous, current, nullptr, nullptr);
}

void rememberContacts(const std::vector<Contact>& contacts, std::vector<ContactMemory>& memory) {
    resizeTight(memory, contacts.size());
    for (std::size_t k = 0; k < contacts.size(); ++k) memory[k] = {contacts[k].key, contacts[k].history};
}

void matchContactMemory(const std::vector<ContactMemory>& previous, std::vector<Contact>& current) {
    mergeHistory(previous, current, nullptr, nullptr);
}

void matchContactMemory(const std::vector<ContactMemory>& previous, const ContactSlots& previousSlots,
                        std::vector<Contact>& current, ContactSlots& slots) {
    mergeHistory(previous, current, &previousSlots, &slots);
}

}  // namespace moreau
