#include "moreau/analysis/observables.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>

namespace moreau {

namespace {

/// Bodies with a finite mass that moves: grains and mobile walls.
template <class F>
void forEachMassiveBody(const World& world, F&& f) {
    for (std::size_t i = 0; i < world.numGrains; ++i) f(i);
    for (std::size_t k = 0; k < world.numWalls(); ++k)
        if (world.wallMobile[k]) f(world.numGrains + k);
}

bool carriesForce(const Contact& c) { return c.history.reaction != Vec3::Zero(); }

constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

std::uint64_t fnvDouble(std::uint64_t h, double value) {
    const auto bits = std::bit_cast<std::uint64_t>(value);
    for (int byte = 0; byte < 8; ++byte) {
        h ^= (bits >> (8 * byte)) & 0xffu;
        h *= kFnvPrime;
    }
    return h;
}

}  // namespace

namespace {

bool counted(const std::vector<char>* mask, std::size_t i) { return !mask || (*mask)[i] != 0; }

void addKinetic(const World& world, const WorldPart& part, ExactSum& e) {
    forEachMassiveBody(world, [&](std::size_t i) {
        if (i < world.numGrains ? counted(part.grains, i) : part.walls)
            e.add(0.5 * world.mass[i] * world.v[i].squaredNorm());
    });
}

void addRotational(const World& world, const WorldPart& part, ExactSum& e) {
    for (std::size_t i = 0; i < world.numGrains; ++i)
        if (counted(part.grains, i)) e.add(world.rotationalEnergy(i));
}

/// overlapStats' count, sum and maximum over the contacts counted here.
void addOverlaps(const std::vector<Contact>& contacts, const WorldPart& part, std::uint64_t& count, ExactSum& sum,
                 double& max) {
    for (std::size_t k = 0; k < contacts.size(); ++k) {
        const Contact& c = contacts[k];
        if (!counted(part.rows, k) || !carriesForce(c)) continue;
        const double overlap = std::max(-c.gap, 0.0);
        ++count;
        sum.add(overlap);
        max = std::max(max, overlap);
    }
}

OverlapStats overlapsOf(std::uint64_t count, const ExactSum& sum, double max) {
    OverlapStats s;
    s.contacts = count;
    s.max = max;
    if (count > 0) s.mean = sum.value() / static_cast<double>(count);
    return s;
}

}  // namespace

void PartTally::reduce(const WorldPart& part) {
    if (!part.reduce) return;
    constexpr std::size_t kWords = ExactSum::kWords;
    std::vector<std::uint64_t> words;
    words.reserve(sums.size() * kWords + counts.size());
    for (const ExactSum& s : sums) {
        const auto w = s.words();
        words.insert(words.end(), w.begin(), w.end());
    }
    words.insert(words.end(), counts.begin(), counts.end());
    part.reduce(words, maxima);
    for (std::size_t k = 0; k < sums.size(); ++k) sums[k] = ExactSum::fromWords(words.data() + k * kWords);
    std::copy(words.begin() + static_cast<std::ptrdiff_t>(sums.size() * kWords), words.end(), counts.begin());
}

void PartTally::reduce(const WorldPart& part, PartTally* more) {
    if (!more) return reduce(part);
    const std::size_t ns = sums.size(), nm = maxima.size(), nc = counts.size();
    sums.insert(sums.end(), more->sums.begin(), more->sums.end());
    maxima.insert(maxima.end(), more->maxima.begin(), more->maxima.end());
    counts.insert(counts.end(), more->counts.begin(), more->counts.end());
    reduce(part);
    std::copy(sums.begin() + static_cast<std::ptrdiff_t>(ns), sums.end(), more->sums.begin());
    std::copy(maxima.begin() + static_cast<std::ptrdiff_t>(nm), maxima.end(), more->maxima.begin());
    std::copy(counts.begin() + static_cast<std::ptrdiff_t>(nc), counts.end(), more->counts.begin());
    sums.resize(ns);
    maxima.resize(nm);
    counts.resize(nc);
}

double kineticEnergy(const World& world) {
    ExactSum e;
    addKinetic(world, WorldPart{}, e);
    return e.value();
}

double rotationalEnergy(const World& world) {
    ExactSum e;
    addRotational(world, WorldPart{}, e);
    return e.value();
}

PartTally energyTerms(const World& world, const std::vector<Contact>& contacts, const WorldPart& part) {
    PartTally t;
    t.sums.resize(3);
    t.maxima.assign(1, 0.0);
    t.counts.assign(1, 0);
    addKinetic(world, part, t.sums[0]);
    addRotational(world, part, t.sums[1]);
    addOverlaps(contacts, part, t.counts[0], t.sums[2], t.maxima[0]);
    return t;
}

PartEnergies energiesOf(const PartTally& t) {
    return PartEnergies{t.sums[0].value(), t.sums[1].value(), overlapsOf(t.counts[0], t.sums[2], t.maxima[0])};
}

PartEnergies energies(const World& world, const std::vector<Contact>& contacts, const WorldPart& part) {
    PartTally t = energyTerms(world, contacts, part);
    t.reduce(part);
    return energiesOf(t);
}

Vec3 totalMomentum(const World& world) {
    Vec3 p = Vec3::Zero();
    forEachMassiveBody(world, [&](std::size_t i) { p += world.mass[i] * world.v[i]; });
    return p;
}

OverlapStats overlapStats(const std::vector<Contact>& contacts) {
    std::uint64_t count = 0;
    ExactSum sum;
    double max = 0.0;
    addOverlaps(contacts, WorldPart{}, count, sum, max);
    return overlapsOf(count, sum, max);
}

std::uint64_t stateHashStep(std::uint64_t h, const Vec3& x, const Vec3& v) {
    for (int k = 0; k < 3; ++k) h = fnvDouble(h, x[k]);
    for (int k = 0; k < 3; ++k) h = fnvDouble(h, v[k]);
    return h;
}

std::uint64_t stateHash(const World& world) {
    std::uint64_t h = kStateHashStart;
    for (std::size_t i = 0; i < world.numGrains; ++i) h = stateHashStep(h, world.x[i], world.v[i]);
    return h;
}

std::string hex64(std::uint64_t value) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, value >>= 4) s[static_cast<std::size_t>(i)] = digits[value & 0xfu];
    return s;
}

Mat3 loveStress(const World& world, const std::vector<Contact>& contacts, double volume) {
    Mat3 sum = Mat3::Zero();
    for (const Contact& c : contacts) {
        if (!carriesForce(c)) continue;
        // Grain–wall: the grain's centre to the contact point, r_a n (see the header).
        const Vec3 branch = world.isWall(c.b) ? Vec3(contactPoint(world, c) - world.x[static_cast<std::size_t>(c.a)])
                                              : world.minimumImage(world.x[static_cast<std::size_t>(c.b)] -
                                                                   world.x[static_cast<std::size_t>(c.a)]);
        sum += c.history.reaction * branch.transpose();
    }
    return sum / volume;
}

namespace {

double grainVolume(double r, int dim) {
    return dim == 3 ? 4.0 / 3.0 * M_PI * r * r * r : dim == 2 ? M_PI * r * r : 2.0 * r;
}

}  // namespace

double solidVolume(const World& world, std::size_t i) {
    if (const PolygonShape* p = world.polygonOf(i)) return p->area * world.size[i] * world.size[i];
    const ClumpShape* c = world.clumpOf(i);
    if (!c) return grainVolume(world.radius[i], world.dimension);
    const double s = world.size[i];
    return c->volume * (world.dimension == 3 ? s * s * s : s * s);
}

namespace {

/// Insertion sort of a few cut points (std::sort on so short an array
/// draws a false -Warray-bounds from GCC 12's unrolled insertion stage).
void sortCuts(double* cuts, int m) {
    for (int i = 1; i < m; ++i)
        for (int j = i; j > 0 && cuts[j] < cuts[j - 1]; --j) std::swap(cuts[j], cuts[j - 1]);
}

/// ∫₀^u √(r² − t²) dt = ½ (u √(r² − u²) + r² asin(u/r)), |u| ≤ r.
double chordIntegral(double u, double r) {
    const double s = std::clamp(u / r, -1.0, 1.0);
    return 0.5 * r * r * (s * std::sqrt(std::max(0.0, 1.0 - s * s)) + std::asin(s));
}

/// Area of the disk of radius r centred at the origin inside the rectangle
/// [x0, x1] × [y0, y1]: ∫ over u of the chord [−h, h] clipped to [y0, y1],
/// h(u) = √(r² − u²). Where the chord meets y0 or y1 (h = |y0|, |y1|) the
/// integrand changes form; between those points it is h, a constant or a sum
/// of both on either end, integrated exactly.
double diskRectangleArea(double r, double x0, double x1, double y0, double y1) {
    const double ua = std::max(x0, -r), ub = std::min(x1, r);
    if (!(ua < ub) || !(y0 < y1) || y1 <= -r || y0 >= r) return 0.0;
    double cuts[6] = {ua, ub};
    int m = 2;
    for (double y : {y0, y1})
        if (std::abs(y) < r) {
            const double u = std::sqrt(r * r - y * y);
            for (double c : {-u, u})
                if (c > ua && c < ub) cuts[m++] = c;
        }
    sortCuts(cuts, m);
    double area = 0.0;
    for (int k = 0; k + 1 < m; ++k) {
        const double u1 = cuts[k], u2 = cuts[k + 1];
        if (!(u1 < u2)) continue;
        const double um = 0.5 * (u1 + u2), hm = std::sqrt(std::max(0.0, r * r - um * um));
        const bool topIsChord = hm <= y1, bottomIsChord = -hm >= y0;
        if ((topIsChord ? hm : y1) <= (bottomIsChord ? -hm : y0)) continue;  // the chord misses the band here
        const double chord = chordIntegral(u2, r) - chordIntegral(u1, r);
        area += (topIsChord ? chord : y1 * (u2 - u1)) - (bottomIsChord ? -chord : y0 * (u2 - u1));
    }
    return area;
}

/// Fraction of the segment p + t ℓ, t ∈ [0, 1], inside the box lo..hi on the
/// first `dim` axes (slab clipping).
double segmentFraction(const Vec3& p, const Vec3& l, const Vec3& lo, const Vec3& hi, int dim) {
    double t0 = 0.0, t1 = 1.0;
    for (int k = 0; k < dim; ++k) {
        if (l[k] == 0.0) {
            if (p[k] < lo[k] || p[k] > hi[k]) return 0.0;
            continue;
        }
        double ta = (lo[k] - p[k]) / l[k], tb = (hi[k] - p[k]) / l[k];
        if (ta > tb) std::swap(ta, tb);
        t0 = std::max(t0, ta);
        t1 = std::min(t1, tb);
        if (t1 <= t0) return 0.0;
    }
    return t1 - t0;
}

/// The measurement region and the periodic images it stands for: on a
/// periodic axis a point is first moved by whole periods to lie in
/// [lo, lo + L); a segment or grain there may reach into the region through
/// its images at ±L, so sums run over the shifts {0, −L, +L} of every
/// periodic axis (each point of a segment shorter than L lands once in the
/// window [lo, lo + L), so nothing counts twice).
struct RegionGeometry {
    Vec3 lo, hi;
    int dim;
    std::array<bool, 3> periodic{};
    Vec3 period = Vec3::Zero();

    RegionGeometry(const World& world, const MeasureRegion& r) : lo(r.lo), hi(r.hi), dim(world.dimension) {
        for (int k = 0; k < dim; ++k) {
            periodic[static_cast<std::size_t>(k)] = world.periodic[static_cast<std::size_t>(k)];
            period[k] = world.boxMax[k] - world.boxMin[k];
        }
    }
    double volume() const {
        double v = 1.0;
        for (int k = 0; k < dim; ++k) v *= hi[k] - lo[k];
        return v;
    }
    /// p moved by whole periods into [lo, lo + L) on the periodic axes.
    Vec3 window(Vec3 p) const {
        for (int k = 0; k < dim; ++k)
            if (periodic[static_cast<std::size_t>(k)]) p[k] -= period[k] * std::floor((p[k] - lo[k]) / period[k]);
        return p;
    }
    bool contains(const Vec3& x) const {
        const Vec3 p = window(x);
        for (int k = 0; k < dim; ++k)
            if (p[k] < lo[k] || p[k] > hi[k]) return false;
        return true;
    }
    /// Σ f(p + s) over the shifts s of the periodic images (s = 0 alone
    /// without periodic axes).
    template <class F>
    double sumOverImages(const Vec3& x, F&& f) const {
        const Vec3 p = window(x);
        double sum = 0.0;
        for (int i = -1; i <= 1; ++i)
            for (int j = -1; j <= 1; ++j)
                for (int k = -1; k <= 1; ++k) {
                    const int shift[3] = {i, j, k};
                    bool used = true;
                    for (int e = 0; e < 3; ++e)
                        used = used && (shift[e] == 0 || (e < dim && periodic[static_cast<std::size_t>(e)]));
                    if (!used) continue;
                    sum += f(Vec3(p + Vec3(i * period[0], j * period[1], k * period[2])));
                }
        return sum;
    }
    double branchFraction(const Vec3& from, const Vec3& branch) const {
        return sumOverImages(from, [&](const Vec3& p) { return segmentFraction(p, branch, lo, hi, dim); });
    }
    double grainVolumeInside(const Vec3& x, double r) const {
        return sumOverImages(x, [&](const Vec3& c) { return volumeInBox(c, r, lo, hi, dim); });
    }
    /// Grain i's solid volume inside the box. A clump's union volume is
    /// shared in proportion to its spheres' volumes inside (exact for a clump
    /// wholly inside or outside; overlaps are not located), a polygon's area
    /// in proportion to its bounding disk's.
    double solidVolumeInside(const World& world, std::size_t i) const {
        if (world.polygonOf(i))  // shared as its bounding disk is (exact wholly inside or outside)
            return solidVolume(world, i) * grainVolumeInside(world.x[i], world.radius[i]) /
                   grainVolume(world.radius[i], dim);
        if (!world.clumpOf(i)) return grainVolumeInside(world.x[i], world.radius[i]);
        double inside = 0.0, whole = 0.0;
        for (unsigned k = 0; k < world.components(i); ++k) {
            const double r = world.componentRadius(i, k);
            inside += grainVolumeInside(world.x[i] + world.componentOffset(i, k), r);
            whole += grainVolume(r, dim);
        }
        return solidVolume(world, i) * inside / whole;
    }
};

}  // namespace

double volumeInBox(const Vec3& c, double r, const Vec3& lo, const Vec3& hi, int dimension) {
    if (dimension == 1) return std::max(0.0, std::min(hi[0], c[0] + r) - std::max(lo[0], c[0] - r));
    const double x0 = lo[0] - c[0], x1 = hi[0] - c[0], y0 = lo[1] - c[1], y1 = hi[1] - c[1];
    if (dimension == 2) return diskRectangleArea(r, x0, x1, y0, y1);
    // 3D: V = ∫ A(ρ(w)) dw over w = z − c_z, A the disk–rectangle area of the
    // slice of radius ρ = √(r² − w²). A is smooth in w except where the
    // slice's circle reaches a side (ρ = distance to it) or a corner of the
    // rectangle; there it has a (w − w*)^{3/2}-type kink. Cut there, and map
    // each piece by w = w₁ + (w₂ − w₁) s² (3 − 2s), which makes such end
    // behaviour smooth in s, then 16-point Gauss–Legendre in s.
    const double wa = std::max(lo[2] - c[2], -r), wb = std::min(hi[2] - c[2], r);
    if (!(wa < wb)) return 0.0;
    if (x1 <= -r || x0 >= r || y1 <= -r || y0 >= r) return 0.0;
    double cuts[2 + 2 * 8] = {wa, wb};
    int m = 2;
    auto cutAt = [&](double d2) {
        if (!(d2 < r * r)) return;
        const double w = std::sqrt(r * r - d2);
        for (double c : {-w, w})
            if (c > wa && c < wb) cuts[m++] = c;
    };
    for (double d : {x0, x1, y0, y1}) cutAt(d * d);
    for (double dx : {x0, x1})
        for (double dy : {y0, y1}) cutAt(dx * dx + dy * dy);
    sortCuts(cuts, m);
    // Gauss–Legendre nodes and weights on [−1, 1] (positive half; symmetric).
    static constexpr double node[8] = {0.095012509837637454, 0.28160355077925892, 0.45801677765722737,
                                       0.61787624440264377,  0.755404408355003,   0.86563120238783176,
                                       0.9445750230732326,   0.98940093499164994};
    static constexpr double weight[8] = {0.18945061045506859, 0.18260341504492361,  0.16915651939500262,
                                         0.14959598881657676, 0.12462897125553403,  0.095158511682492591,
                                         0.062253523938647706, 0.027152459411754037};
    double volume = 0.0;
    for (int k = 0; k + 1 < m; ++k) {
        const double w1 = cuts[k], dw = cuts[k + 1] - w1;
        if (!(dw > 0.0)) continue;
        double piece = 0.0;
        for (int i = 0; i < 8; ++i)
            for (double sign : {-1.0, 1.0}) {
                const double s = 0.5 * (1.0 + sign * node[i]);
                const double w = w1 + dw * s * s * (3.0 - 2.0 * s), jac = 6.0 * s * (1.0 - s) * dw;
                const double rho = std::sqrt(std::max(0.0, r * r - w * w));
                piece += 0.5 * weight[i] * jac * diskRectangleArea(rho, x0, x1, y0, y1);
            }
        volume += piece;
    }
    return volume;
}

namespace {

/// Per wall, the sums of its force's then its torque's components (six
/// each, body − numGrains in order) from the contacts counted here.
void addWallLoads(const World& world, const std::vector<Contact>& contacts, const WorldPart& part, ExactSum* sums) {
    // A grain glued to a wall is part of it (World::DrivenGrain): the forces
    // on it load the wall, at their contact points.
    const std::vector<BodyId> carrier = world.carriers();
    auto load = [&](BodyId body, const Vec3& point, const Vec3& f) {
        ExactSum* s = sums + 6 * (static_cast<std::size_t>(body) - world.numGrains);
        const Vec3 torque = (point - world.x[static_cast<std::size_t>(body)]).cross(f);
        for (int k = 0; k < 3; ++k) {
            s[k].add(f[k]);
            s[3 + k].add(torque[k]);
        }
    };
    for (std::size_t k = 0; k < contacts.size(); ++k) {
        const Contact& c = contacts[k];
        if (!counted(part.rows, k) || !carriesForce(c)) continue;
        const BodyId a = carrier.empty() ? c.a : carrier[static_cast<std::size_t>(c.a)];
        const BodyId b = carrier.empty() ? c.b : carrier[static_cast<std::size_t>(c.b)];
        if (a == b) continue;  // within one plate
        if (world.isWall(b)) load(b, contactPoint(world, c), c.history.reaction);
        if (world.isWall(a)) load(a, contactPoint(world, c), -c.history.reaction);
    }
}

void wallLoadsOf(const ExactSum* sums, std::size_t walls, std::vector<Vec3>& force, std::vector<Vec3>& torque) {
    force.assign(walls, Vec3::Zero());
    torque.assign(walls, Vec3::Zero());
    for (std::size_t w = 0; w < walls; ++w)
        for (int k = 0; k < 3; ++k) {
            force[w][k] = sums[6 * w + static_cast<std::size_t>(k)].value();
            torque[w][k] = sums[6 * w + 3 + static_cast<std::size_t>(k)].value();
        }
}

Mat3 tensorOf(const ExactSum* sums) {
    Mat3 m;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m(i, j) = sums[3 * i + j].value();
    return m;
}

/// sums[3i + j] += (s a_i) b_j
void addOuter(ExactSum* sums, double s, const Vec3& a, const Vec3& b) {
    for (int i = 0; i < 3; ++i) {
        const double si = s * a[i];
        for (int j = 0; j < 3; ++j) sums[3 * i + j].add(si * b[j]);
    }
}

/// The upper triangle of s a ⊗ a, row by row (6 sums: xx xy xz yy yz zz).
void addSymmetric(ExactSum* sums, double s, const Vec3& a) {
    for (int i = 0, k = 0; i < 3; ++i) {
        const double si = s * a[i];
        for (int j = i; j < 3; ++j) sums[k++].add(si * a[j]);
    }
}

Mat3 symmetricOf(const ExactSum* sums) {
    Mat3 m;
    for (int i = 0, k = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) m(i, j) = m(j, i) = sums[k++].value();
    return m;
}

}  // namespace

void wallLoads(const World& world, const std::vector<Contact>& contacts, std::vector<Vec3>& force,
               std::vector<Vec3>& torque) {
    std::vector<ExactSum> sums(6 * world.numWalls());
    addWallLoads(world, contacts, WorldPart{}, sums.data());
    wallLoadsOf(sums.data(), world.numWalls(), force, torque);
}

Measurements measure(const World& world, const std::vector<Contact>& contacts, const MeasureRegion* region) {
    return measure(world, contacts, region, WorldPart{});
}

Measurements measure(const World& world, const std::vector<Contact>& contacts, const MeasureRegion* region,
                     const WorldPart& part) {
    Measurements m;
    const std::size_t n = world.numGrains, walls = world.numWalls();
    const std::size_t whole = part.reduce ? part.wholeGrains : n;
    const int dim = world.dimension;
    auto mine = [&](std::size_t i) { return counted(part.grains, i); };
    auto row = [&](std::size_t k) { return counted(part.rows, k); };
    // The first pass: mass, momentum and solid volume of the grains, the
    // Love–Weber and fabric sums and the walls' loads over the contacts;
    // the grains' extent; the coordination's counts.
    enum : std::size_t { kMass, kSolid, kMomentum, kLove = kMomentum + 3, kFabric = kLove + 9, kWalls = kFabric + 6 };
    enum : std::size_t { kGrains, kKept, kEnds, kKeptEnds, kNormals };
    PartTally t;
    t.sums.resize(kWalls + 6 * walls);
    t.maxima.assign(6, -std::numeric_limits<double>::infinity());  // the extent's hi, then −lo
    t.counts.assign(5, 0);
    addWallLoads(world, contacts, part, t.sums.data() + kWalls);  // every contact, whatever the region
    std::optional<RegionGeometry> box;
    if (region && whole > 0) box.emplace(world, *region);
    // The grains whose centre lies in the region (all without one).
    std::vector<char> inside(n, 1);
    if (box)
        for (std::size_t i = 0; i < n; ++i) inside[i] = box->contains(world.x[i]) ? 1 : 0;
    for (std::size_t i = 0; i < n && whole > 0; ++i) {
        if (!mine(i)) continue;
        t.sums[kSolid].add(box ? box->solidVolumeInside(world, i) : solidVolume(world, i));
        for (int k = 0; k < dim; ++k) {
            t.maxima[static_cast<std::size_t>(k)] = std::max(t.maxima[static_cast<std::size_t>(k)], world.x[i][k] + world.radius[i]);
            t.maxima[3 + static_cast<std::size_t>(k)] =
                std::max(t.maxima[3 + static_cast<std::size_t>(k)], -(world.x[i][k] - world.radius[i]));
        }
        if (!inside[i]) continue;
        t.sums[kMass].add(world.mass[i]);
        const Vec3 p = world.mass[i] * (world.v[i] - world.meanFlow(world.x[i]));
        for (int k = 0; k < 3; ++k) t.sums[kMomentum + static_cast<std::size_t>(k)].add(p[k]);
    }
    // Love–Weber part: each contact's f ⊗ ℓ, over a region weighted by the
    // fraction of its branch inside (see the header).
    for (std::size_t k = 0; k < contacts.size() && whole > 0; ++k) {
        const Contact& c = contacts[k];
        if (!row(k) || !carriesForce(c)) continue;
        const Vec3& xa = world.x[static_cast<std::size_t>(c.a)];
        const Vec3 branch = world.isWall(c.b) ? Vec3(contactPoint(world, c) - xa)
                                              : world.minimumImage(world.x[static_cast<std::size_t>(c.b)] - xa);
        const double weight = box ? box->branchFraction(xa, branch) : 1.0;
        if (weight > 0.0) addOuter(t.sums.data() + kLove, weight, c.history.reaction, branch);
    }
    // Coordination over the grains inside: their neighbours that carry a
    // force on them (a pair of clumps touching at several spheres counts
    // once; its contacts are consecutive in key order); fabric over the
    // contacts' normals.
    std::vector<int> count(n, 0);
    auto samePair = [&](std::size_t k) {
        return k > 0 && contacts[k].a == contacts[k - 1].a && contacts[k].b == contacts[k - 1].b &&
               carriesForce(contacts[k - 1]);
    };
    if (whole > 0) {
        for (std::size_t k = 0; k < contacts.size(); ++k) {
            const Contact& c = contacts[k];
            if (!carriesForce(c) || samePair(k)) continue;
            ++count[static_cast<std::size_t>(c.a)];
            if (!world.isWall(c.b)) ++count[static_cast<std::size_t>(c.b)];
        }
        if (part.completeCounts) part.completeCounts(count);
    }
    auto rattler = [&](BodyId b) { return count[static_cast<std::size_t>(b)] < dim + 1; };
    auto in = [&](BodyId b) { return static_cast<std::size_t>(inside[static_cast<std::size_t>(b)]); };
    for (std::size_t i = 0; i < n && whole > 0; ++i) {
        if (!mine(i)) continue;
        t.counts[kGrains] += inside[i] ? 1 : 0;
        t.counts[kKept] += inside[i] && !rattler(static_cast<BodyId>(i)) ? 1 : 0;
    }
    for (std::size_t k = 0; k < contacts.size() && whole > 0; ++k) {
        const Contact& c = contacts[k];
        if (!row(k) || !carriesForce(c) || world.isWall(c.b)) continue;
        const std::size_t e = in(c.a) + in(c.b);
        t.counts[kNormals] += e;
        if (e > 0) addSymmetric(t.sums.data() + kFabric, static_cast<double>(e), c.n);
        if (samePair(k)) continue;
        t.counts[kEnds] += e;
        if (!rattler(c.a) && !rattler(c.b)) t.counts[kKeptEnds] += e;
    }
    t.reduce(part, part.with);
    wallLoadsOf(t.sums.data() + kWalls, walls, m.wallForce, m.wallTorque);
    if (whole == 0) return m;
    // The volume: the region's, or the periodic box on periodic axes and the
    // grains' extent on the others.
    if (box) {
        m.volume = box->volume();
    } else {
        m.volume = 1.0;
        for (int k = 0; k < dim; ++k) {
            const double lo = -t.maxima[3 + static_cast<std::size_t>(k)], hi = t.maxima[static_cast<std::size_t>(k)];
            m.volume *= world.periodic[static_cast<std::size_t>(k)] ? world.boxMax[k] - world.boxMin[k] : hi - lo;
        }
    }
    // Kinetic part about the mean velocity of the grains inside.
    const double mass = t.sums[kMass].value();
    const Vec3 momentum(t.sums[kMomentum].value(), t.sums[kMomentum + 1].value(), t.sums[kMomentum + 2].value());
    const Vec3 mean = mass > 0.0 ? Vec3(momentum / mass) : Vec3::Zero();
    PartTally kinetic;
    kinetic.sums.resize(6);
    for (std::size_t i = 0; i < n; ++i) {
        if (!mine(i) || !inside[i]) continue;
        // The velocity fluctuation: about the deforming cell's mean flow too.
        const Vec3 u = world.v[i] - world.meanFlow(world.x[i]) - mean;
        addSymmetric(kinetic.sums.data(), world.mass[i], u);
    }
    kinetic.reduce(part);
    m.stress = tensorOf(t.sums.data() + kLove) / m.volume + symmetricOf(kinetic.sums.data()) / m.volume;
    m.packingFraction = t.sums[kSolid].value() / m.volume;
    // Invariants on the dimension's axes.
    const Eigen::MatrixXd s = m.stress.topLeftCorner(dim, dim);
    m.pressure = s.trace() / dim;
    const Eigen::MatrixXd dev = s - m.pressure * Eigen::MatrixXd::Identity(dim, dim);
    const double j2 = 0.5 * dev.squaredNorm();
    m.deviator = dim == 3 ? std::sqrt(3.0 * j2) : dim == 2 ? 2.0 * std::sqrt(j2) : 0.0;
    const auto ratio = [](std::uint64_t a, std::uint64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
    m.coordination = ratio(t.counts[kEnds], t.counts[kGrains]);
    m.coordinationNonRattlers = ratio(t.counts[kKeptEnds], t.counts[kKept]);
    if (t.counts[kNormals] > 0) m.fabric = symmetricOf(t.sums.data() + kFabric) / static_cast<double>(t.counts[kNormals]);
    return m;
}

std::vector<Mat3> grainStress(const World& world, const std::vector<Contact>& contacts) {
    std::vector<Mat3> sigma(world.numGrains, Mat3::Zero());
    for (const Contact& c : contacts) {
        if (!carriesForce(c)) continue;
        // On a: force −R, arm r_a n; on b: force R, arm −r_b n. Both give
        // +R ⊗ r n under −f ⊗ arm: compression positive.
        sigma[static_cast<std::size_t>(c.a)] -= (-c.history.reaction) * leverArm(world, c, c.a).transpose();
        if (!world.isWall(c.b))
            sigma[static_cast<std::size_t>(c.b)] -= c.history.reaction * leverArm(world, c, c.b).transpose();
    }
    for (std::size_t i = 0; i < world.numGrains; ++i) sigma[i] /= solidVolume(world, i);
    return sigma;
}

}  // namespace moreau
