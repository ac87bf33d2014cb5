#pragma once
/// The world-frame shape of every grain at one pose of the world: for a
/// clump, each component's centre offset from the body's centre and its
/// radius; for a sphere (disk), one ball at offset 0 with its radius; for a
/// polygon, also its vertices turned about its centre and its edges' unit
/// outward normals (turnPolygon).
///
/// A clump's component k sits at x_i + q_i (s_i c_k) with radius s_i r_k
/// (model/clump.hpp). World::componentOffset turns c_k by q_i at every call;
/// the narrow phase, the lever arms and the MD force stage ask for the same
/// offsets many times per step (each pair of bodies tests up to 16 pairs of
/// components, each contact needs its arms in the force loop and again in
/// the gather), so they read them from here instead, computed once.
///
/// Ownership and invalidation: whoever reads the offsets owns a
/// ShapePoses and calls update() at the pose it works on (a detector at
/// each detect, the MD force stage at each evaluation). The offsets stay
/// valid until a body turns or changes size; positions x_i are not stored,
/// so a translation alone keeps them valid. The arithmetic is
/// World::componentOffset's and componentRadius's, and turnPolygon's, so
/// reading here gives the same bits as computing on the spot.
///
/// Hot record: ComponentBall is 32 bytes, one per component of every grain
/// (a tetra clump: 128 bytes), plus 4 bytes per grain of index; walls have
/// none. A polygon adds 32 bytes per vertex and 12 per grain; every grain
/// up to 54 for the record current() compares.
#include <cassert>
#include <cstdint>
#include <vector>

#include "moreau/contact/polygon_geometry.hpp"
#include "moreau/core/types.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// One component's sphere in the world frame, relative to its body's centre.
struct ComponentBall {
    Vec3 offset = Vec3::Zero();  ///< centre − body centre (world frame): q_i (s_i c_k)
    double radius = 0.0;         ///< s_i r_k (a sphere's own radius)
};
static_assert(sizeof(ComponentBall) == 32, "ComponentBall is a hot record: keep it at 32 bytes");

/// Polygon i of the world turned to its orientation about its centre:
/// vertices (World::size · the shape's, turned by the body's angle) into
/// x, y, the unit outward normal of each edge (the shape's, turned) into
/// nx, ny, each with room for the shape's vertices. The view's extent is
/// the circumscribed circle's diameter (2 · size · boundingRadius), which
/// does not change as the polygon turns. The narrow phase and the MD force
/// stage place the other polygon of a pair at the separation d by adding d
/// to its vertices (its normals do not change), so a pair's geometry is
/// computed in the frame of a's centre.
PlacedPolygon turnPolygon(const World& world, std::size_t i, double* x, double* y, double* nx, double* ny);

class ShapePoses {
public:
    /// Computes every grain's balls from the world's orientations, sizes and
    /// radii now (one rotation per component; parallel over grains in large
    /// worlds, each grain written by one thread: the same bits for any
    /// thread count).
    void update(const World& world);
    /// Whether the shapes are those of `world` now: the same grains, each
    /// with the orientation, size (a sphere: radius) and shape of the last
    /// update, bit for bit. Then they are what update() would compute, and
    /// another reader at the same pose may use them instead of its own (the
    /// MD force stage reads the detector's: MdSolver::forces).
    bool current(const World& world) const;
    /// The grains covered (those of the world at the last update).
    std::size_t grains() const { return first_.empty() ? 0 : first_.size() - 1; }
    /// Grain i's number of components.
    unsigned count(std::size_t i) const {
        assert(i < grains());
        return first_[i + 1] - first_[i];
    }
    /// Grain i's balls, count(i) of them, in component order.
    const ComponentBall* balls(std::size_t i) const {
        assert(i < grains());
        return balls_.data() + first_[i];
    }
    /// Component k of grain i.
    const ComponentBall& ball(std::size_t i, unsigned k) const {
        assert(k < count(i));
        return balls_[first_[i] + k];
    }

    /// Polygon i turned about its centre (turnPolygon's, computed at the
    /// last update); only in a world with polygons, for its grains.
    PlacedPolygon polygon(std::size_t i) const {
        assert(i + 1 < vertexFirst_.size());
        const std::uint32_t k = vertexFirst_[i];
        return {vx_.data() + k, vy_.data() + k, vertexFirst_[i + 1] - k, nx_.data() + k, ny_.data() + k, extent_[i]};
    }

private:
    std::vector<std::uint32_t> first_;  ///< grain i's balls are [first_[i], first_[i + 1])
    std::vector<ComponentBall> balls_;
    /// The grains' orientations, sizes, radii and shape indices at the last
    /// update: what current() compares.
    std::vector<Quat> turn_;
    std::vector<double> size_, radius_;
    std::vector<std::uint16_t> shape_;
    std::vector<std::uint32_t> polygon_;
    std::vector<std::uint32_t> vertexFirst_;      ///< polygon i's vertices are [vertexFirst_[i], vertexFirst_[i + 1])
    std::vector<double> vx_, vy_, nx_, ny_;       ///< turned vertices and edge normals
    std::vector<double> extent_;                  ///< per polygon: PlacedPolygon::extent
};

}  // namespace moreau
