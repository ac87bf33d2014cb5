#include "moreau/contact/component_poses.hpp"

#include "moreau/core/parallel.hpp"

namespace moreau {

namespace {
/// Below this many grains one thread fills the balls (a parallel region costs more).
constexpr std::size_t kParallelGrains = 2048;
}  // namespace

void ComponentPoses::update(const World& world) {
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
}

}  // namespace moreau
