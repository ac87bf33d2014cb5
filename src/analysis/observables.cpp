#include "moreau/analysis/observables.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>

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

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
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

double kineticEnergy(const World& world) {
    double e = 0.0;
    forEachMassiveBody(world, [&](std::size_t i) { e += 0.5 * world.mass[i] * world.v[i].squaredNorm(); });
    return e;
}

double rotationalEnergy(const World& world) {
    double e = 0.0;
    for (std::size_t i = 0; i < world.numGrains; ++i) e += 0.5 * world.inertia[i] * world.w[i].squaredNorm();
    return e;
}

Vec3 totalMomentum(const World& world) {
    Vec3 p = Vec3::Zero();
    forEachMassiveBody(world, [&](std::size_t i) { p += world.mass[i] * world.v[i]; });
    return p;
}

OverlapStats overlapStats(const std::vector<Contact>& contacts) {
    OverlapStats s;
    double sum = 0.0;
    for (const Contact& c : contacts) {
        if (!carriesForce(c)) continue;
        const double overlap = std::max(-c.gap, 0.0);
        ++s.contacts;
        sum += overlap;
        s.max = std::max(s.max, overlap);
    }
    if (s.contacts > 0) s.mean = sum / static_cast<double>(s.contacts);
    return s;
}

std::uint64_t stateHash(const World& world) {
    std::uint64_t h = kFnvOffset;
    for (std::size_t i = 0; i < world.numGrains; ++i) {
        for (int k = 0; k < 3; ++k) h = fnvDouble(h, world.x[i][k]);
        for (int k = 0; k < 3; ++k) h = fnvDouble(h, world.v[i][k]);
    }
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

Measurements measure(const World& world, const std::vector<Contact>& contacts) {
    Measurements m;
    m.wallForce.assign(world.numWalls(), Vec3::Zero());
    const std::size_t n = world.numGrains;
    const int dim = world.dimension;
    if (n == 0) return m;
    // The region: the periodic box, or the grains' extent.
    m.volume = 1.0;
    for (int k = 0; k < dim; ++k) {
        double lo = world.x[0][k] - world.radius[0], hi = world.x[0][k] + world.radius[0];
        for (std::size_t i = 1; i < n; ++i) {
            lo = std::min(lo, world.x[i][k] - world.radius[i]);
            hi = std::max(hi, world.x[i][k] + world.radius[i]);
        }
        m.volume *= world.periodic[k] ? world.boxMax[k] - world.boxMin[k] : hi - lo;
    }
    // Kinetic part about the grains' mean velocity; the grains' volumes.
    double mass = 0.0, solid = 0.0;
    Vec3 momentum = Vec3::Zero();
    for (std::size_t i = 0; i < n; ++i) {
        mass += world.mass[i];
        momentum += world.mass[i] * world.v[i];
        const double r = world.radius[i];
        solid += dim == 3 ? 4.0 / 3.0 * M_PI * r * r * r : dim == 2 ? M_PI * r * r : 2.0 * r;
    }
    const Vec3 mean = mass > 0.0 ? Vec3(momentum / mass) : Vec3::Zero();
    Mat3 kinetic = Mat3::Zero();
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3 u = world.v[i] - mean;
        kinetic += world.mass[i] * u * u.transpose();
    }
    m.stress = loveStress(world, contacts, m.volume) + kinetic / m.volume;
    m.packingFraction = solid / m.volume;
    // Invariants on the dimension's axes.
    const Eigen::MatrixXd s = m.stress.topLeftCorner(dim, dim);
    m.pressure = s.trace() / dim;
    const Eigen::MatrixXd dev = s - m.pressure * Eigen::MatrixXd::Identity(dim, dim);
    const double j2 = 0.5 * dev.squaredNorm();
    m.deviator = dim == 3 ? std::sqrt(3.0 * j2) : dim == 2 ? 2.0 * std::sqrt(j2) : 0.0;
    // Walls and coordination.
    std::vector<int> count(n, 0);
    std::size_t pairs = 0;
    for (const Contact& c : contacts) {
        if (!carriesForce(c)) continue;
        ++count[static_cast<std::size_t>(c.a)];
        if (world.isWall(c.b)) {
            m.wallForce[static_cast<std::size_t>(c.b) - n] += c.history.reaction;
        } else {
            ++count[static_cast<std::size_t>(c.b)];
            ++pairs;
        }
    }
    m.coordination = 2.0 * static_cast<double>(pairs) / static_cast<double>(n);
    auto rattler = [&](BodyId b) { return count[static_cast<std::size_t>(b)] < dim + 1; };
    std::size_t kept = 0, keptPairs = 0;
    for (std::size_t i = 0; i < n; ++i) kept += rattler(static_cast<BodyId>(i)) ? 0 : 1;
    for (const Contact& c : contacts)
        if (carriesForce(c) && !world.isWall(c.b) && !rattler(c.a) && !rattler(c.b)) ++keptPairs;
    m.coordinationNonRattlers = kept > 0 ? 2.0 * static_cast<double>(keptPairs) / static_cast<double>(kept) : 0.0;
    return m;
}

}  // namespace moreau
