#include "moreau/contact/shape_poses.hpp"

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

void ShapePoses::update(const World& world) {
    const std::size_t n = world.numGrains;
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
