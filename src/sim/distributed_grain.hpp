#pragma once
/// A grain's whole state as it moves between ranks (migration at a rebuild,
/// a ghost's first arrival), its bytes, and the moving part sent to ghosts
/// every step. Internal to src/sim (distributed_simulation.hpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "moreau/core/bytes.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau {

/// A grain's state but its scheme entries: plain values, sent as one block.
struct GrainState {
    std::uint64_t gid = 0;
    Vec3 x, v, w, invMass, invInertia;
    Quat q;
    double radius = 0.0, mass = 0.0, inertia = 0.0;
    bool prescribed = false, scheduled = false;
    ForceSchedule force;
    std::int32_t driven = -2;  ///< kNotDriven, kDrivenFree or the wall it is glued to (body − numGrains)
};

/// A grain's whole state, as it migrates or first arrives as a ghost.
struct DistributedGrain : GrainState {
    /// World::shape and World::size (0 and the radius in a world without
    /// clumps or polygons): a clump's components follow from them and q.
    std::uint16_t shape = 0;
    double size = 0.0;
    /// World::polygon (0 in a world without polygons). Sent, with shape and
    /// size, only in a world with clumps or polygons.
    std::uint32_t polygon = 0;
    /// Its own polygon shape, where each grain has its own (own shapes: no
    /// rank holds the whole world's table; polygon is then unused).
    std::shared_ptr<const PolygonShape> ownShape;
    std::vector<MdSolver::Vec6> scheme;  ///< its entries of the MD scheme's state (owned grains; MdSolver::bodyScheme)
};

namespace distributed {

/// What a message names when it turns out shorter than its contents (a bug).
inline constexpr const char* kMessage = "distributed run: a message between ranks";

/// DistributedGrain::driven of a grain that is not driven, and of one driven on its own.
inline constexpr std::int32_t kNotDriven = -2, kDrivenFree = -1;

/// Per grain of `w`: kNotDriven, kDrivenFree or the wall (body − numGrains)
/// it is glued to (World::DrivenGrain); empty when no grain is driven.
std::vector<std::int32_t> drivenOf(const World& w);

/// Grain i of `w`; `driven`: drivenOf(w); with `scheme`, its `per` entries
/// of that MD scheme's state; with `own`, a copy of its polygon shape.
DistributedGrain grainOf(const World& w, std::size_t i, std::uint64_t gid, const std::vector<std::int32_t>& driven,
                         const MdSolver* scheme = nullptr, std::size_t per = 0, bool own = false);

/// A world of `grains` taken in `order` (grain k is grains[order[k]]), then
/// the walls of `from`, with its settings, cell, clock and shapes; with
/// `own` (own shapes), its polygon table the grains' own shapes in that
/// order (grain k's is entry k), none of `from`'s.
World worldOf(const std::vector<DistributedGrain>& grains, const std::vector<std::size_t>& order, const World& from,
              bool own = false);

/// A polygon shape's vertices and mass properties (its edges' normals
/// follow from the vertices: setEdgeNormals), as checkpoints and grains
/// moving between ranks carry it.
void putPolygonShape(ByteWriter& out, const PolygonShape& p);
PolygonShape getPolygonShape(ByteReader& in, const char* what);

/// `clumps`: the world has clump or polygon shapes, the same on every rank
/// (then a grain's own shape goes with it where it has one).
void putGrain(ByteWriter& out, const DistributedGrain& g, bool clumps);
DistributedGrain getGrain(ByteReader& in, bool clumps);

/// The moving part of a grain's state, sent to its ghosts every step.
void putMotion(ByteWriter& out, const World& w, std::size_t i);

/// Each rank's message in `in`, item by item to its end: f(reader, rank).
template <class F>
void readEach(const std::vector<std::string>& in, F f, const char* what = kMessage) {
    for (std::size_t r = 0; r < in.size(); ++r)
        for (ByteReader u(in[r], what); u.left() > 0;) f(u, r);
}

}  // namespace distributed

}  // namespace moreau
