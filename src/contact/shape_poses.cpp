#include "moreau/contact/shape_poses.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "moreau/core/parallel.hpp"
#include "moreau/model/polygon.hpp"

namespace moreau {

namespace {
/// Below this many grains one thread fills the balls (a parallel region costs more).
constexpr std::size_t kParallelGrains = 2048;
}  // namespace

PlacedPolygon turnPolygon(const World& world, std::size_t i, double* x, double* y, double* nx, double* ny) {
    const PolygonShape& p = *world.polygonOf(i);
    double c, sn;
    angleCosSin(world.q[i], c, sn);
    const std::size_t n = p.vertices();
    const double s = world.size[i];
    placePolygon(p.vx.data(), p.vy.data(), n, s, c, sn, 0.0, 0.0, x, y);
    for (std::size_t k = 0; k < n; ++k) {
        nx[k] = c * p.nx[k] - sn * p.ny[k];
        ny[k] = sn * p.nx[k] + c * p.ny[k];
    }
    return {x, y, n, nx, ny, 2.0 * s * p.boundingRadius};
}

namespace {
/// The first n entries of v (all of it when shorter: an empty array stays empty).
template <class T>
std::span<const T> head(const std::vector<T>& v, std::size_t n) {
    return {v.data(), std::min(n, v.size())};
}
template <class T>
bool sameBits(const std::vector<T>& kept, std::span<const T> now) {
    return kept.size() == now.size() &&
           (now.empty() || std::memcmp(kept.data(), now.data(), now.size_bytes()) == 0);
}
template <class T>
void keep(std::vector<T>& kept, std::span<const T> now) {
    kept.assign(now.begin(), now.end());
}
}  // namespace

bool ShapePoses::current(const World& world) const {
    // Bits, not values (memcmp): what update() read, read again.
    const std::size_t n = world.numGrains;
    return grains() == n && sameBits(turn_, head(world.q, n)) && sameBits(size_, head(world.size, n)) &&
           sameBits(radius_, head(world.radius, n)) && sameBits(shape_, head(world.shape, n)) &&
           sameBits(polygon_, head(world.polygon, n));
}

void ShapePoses::update(const World& world) {
    const std::size_t n = world.numGrains;
    keep(turn_, head(world.q, n));
    keep(size_, head(world.size, n));
    keep(radius_, head(world.radius, n));
    keep(shape_, head(world.shape, n));
    keep(polygon_, head(world.polygon, n));
    first_.resize(n + 1);
    first_[0] = 0;
    for (std::size_t i = 0; i < n; ++i) first_[i + 1] = first_[i] + world.components(i);
    balls_.resize(first_[n]);
    forEachIndex(n, n > kParallelGrains, [&](std::size_t i) {
        ComponentBall* out = balls_.data() + first_[i];
        const ClumpShape* c = world.clumpOf(i);
        if (!c) {
            out[0] = {Vec3::Zero(), world.radius[i]};
            return;
        }
        // World::componentOffset and componentRadius, term for term.
        const double s = world.size[i];
        for (std::size_t k = 0; k < c->radius.size(); ++k)
            out[k] = {turned(world.q[i], s * c->centre[k]), s * c->radius[k]};
    });
    if (!world.hasPolygons()) return;
    vertexFirst_.resize(n + 1);
    vertexFirst_[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const PolygonShape* p = world.polygonOf(i);
        vertexFirst_[i + 1] = vertexFirst_[i] + static_cast<std::uint32_t>(p ? p->vertices() : 0);
    }
    const std::size_t vertices = vertexFirst_[n];
    vx_.resize(vertices);
    vy_.resize(vertices);
    nx_.resize(vertices);
    ny_.resize(vertices);
    extent_.resize(n);
    forEachIndex(n, n > kParallelGrains, [&](std::size_t i) {
        if (!world.polygonOf(i)) {
            extent_[i] = 0.0;
            return;
        }
        const std::uint32_t k = vertexFirst_[i];
        extent_[i] = turnPolygon(world, i, &vx_[k], &vy_[k], &nx_[k], &ny_[k]).extent;
    });
}

}  // namespace moreau
