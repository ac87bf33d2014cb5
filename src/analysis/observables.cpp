#include "moreau/analysis/observables.hpp"

#include <algorithm>
#include <bit>
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

}  // namespace moreau
