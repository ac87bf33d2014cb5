#include "distributed_grain.hpp"

#include <array>
#include <stdexcept>

namespace moreau::distributed {

std::vector<std::int32_t> drivenOf(const World& w) {
    std::vector<std::int32_t> d;
    if (w.driven.empty()) return d;
    d.assign(w.numGrains, kNotDriven);
    for (const World::DrivenGrain& g : w.driven)
        d[static_cast<std::size_t>(g.grain)] =
            g.wall < 0 ? kDrivenFree : static_cast<std::int32_t>(static_cast<std::size_t>(g.wall) - w.numGrains);
    return d;
}

DistributedGrain grainOf(const World& w, std::size_t i, std::uint64_t gid, const std::vector<std::int32_t>& driven,
                         const MdSolver* scheme, std::size_t per, bool own) {
    DistributedGrain g;
    g.gid = gid;
    g.x = w.x[i];
    g.v = w.v[i];
    g.w = w.w[i];
    g.q = w.q[i];
    g.invMass = w.invMass[i];
    g.invInertia = w.invInertia[i];
    g.radius = w.radius[i];
    g.mass = w.mass[i];
    g.inertia = w.inertia[i];
    g.prescribed = w.prescribed[i];
    g.scheduled = i < w.force.size();
    if (g.scheduled) g.force = w.force[i];
    if (!driven.empty()) g.driven = driven[i];
    g.shape = i < w.shape.size() ? w.shape[i] : std::uint16_t{0};
    g.size = i < w.size.size() ? w.size[i] : w.radius[i];
    g.polygon = i < w.polygon.size() ? w.polygon[i] : 0u;
    if (own && g.polygon != 0) {
        g.ownShape = std::make_shared<const PolygonShape>(w.polygonShapes[g.polygon - 1u]);
        g.polygon = 0;
    }
    g.scheme.resize(scheme ? per : 0);
    if (!g.scheme.empty()) scheme->bodyScheme(i, g.scheme.data());
    return g;
}

World worldOf(const std::vector<DistributedGrain>& grains, const std::vector<std::size_t>& order, const World& from,
              bool own) {
    World w;
    w.dimension = from.dimension;
    w.gravity = from.gravity;
    w.muGrain = from.muGrain;
    w.periodic = from.periodic;
    w.copyCellAndClock(from);
    // Clumps: every part holds the scene's shapes, and World::shape and size
    // for each of its bodies (set below, after the walls), whether or not a
    // clump is among them: the part takes the serial world's code paths.
    // Own shapes: the grains' own, in their order (a world of polygons, its
    // walls polygon 0, even with no grain).
    const bool clumps = !from.clumpShapes.empty(), polygons = own || !from.polygonShapes.empty();
    w.clumpShapes = from.clumpShapes;
    if (own) {
        w.polygonShapes.reserve(grains.size());
        for (const std::size_t k : order) {
            if (!grains[k].ownShape) throw std::logic_error("distributed run: a grain without its own shape");
            w.polygonShapes.push_back(*grains[k].ownShape);
        }
    } else {
        w.polygonShapes = from.polygonShapes;
    }
    const std::size_t n = grains.size();
    w.reserve(n + from.numWalls());
    bool anySchedule = false;
    for (const DistributedGrain& g : grains) anySchedule = anySchedule || g.scheduled;
    for (std::size_t k = 0; k < n; ++k) {
        const DistributedGrain& g = grains[order[k]];
        w.addGrain(g.x, g.radius, g.mass, g.inertia);
        w.v[k] = g.v;
        w.w[k] = g.w;
        w.q[k] = g.q;
        w.invMass[k] = g.invMass;
        w.invInertia[k] = g.invInertia;
        w.prescribed[k] = g.prescribed;
        if (anySchedule) w.forceSchedule(static_cast<BodyId>(k)) = g.force;
        // Driven grains (the walls follow the n grains).
        if (g.driven != kNotDriven)
            w.driven.push_back({static_cast<BodyId>(k),
                                g.driven < 0 ? -1 : static_cast<BodyId>(n + static_cast<std::size_t>(g.driven))});
    }
    for (std::size_t k = 0; k < from.numWalls(); ++k) {
        const std::size_t i = from.numGrains + k;
        std::array<bool, 3> freeAxes{};
        for (int a = 0; a < 3; ++a) freeAxes[static_cast<std::size_t>(a)] = from.invMass[i][a] > 0.0;
        const BodyId b = w.addWall(from.wallName[k], from.wallShape[k], from.x[i], from.wallMobile[k], from.mass[i],
                                   freeAxes);
        const auto j = static_cast<std::size_t>(b);
        w.v[j] = from.v[i];
        w.w[j] = from.w[i];
        w.q[j] = from.q[i];
        w.invMass[j] = from.invMass[i];
        w.invInertia[j] = from.invInertia[i];
        w.prescribed[j] = from.prescribed[i];
        if (i < from.force.size()) w.forceSchedule(b) = from.force[i];
    }
    if (clumps || polygons) {  // the walls' shape 0 and size 0
        if (clumps) w.shape.assign(w.numBodies(), 0);
        if (polygons) w.polygon.assign(w.numBodies(), 0);
        w.size.assign(w.numBodies(), 0.0);
        for (std::size_t k = 0; k < n; ++k) {
            if (clumps) w.shape[k] = grains[order[k]].shape;
            if (polygons) w.polygon[k] = own ? static_cast<std::uint32_t>(k + 1) : grains[order[k]].polygon;
            w.size[k] = grains[order[k]].size;
        }
    }
    return w;
}

void putPolygonShape(ByteWriter& out, const PolygonShape& p) {
    out.putVector(p.vx);
    out.putVector(p.vy);
    out.put(p.area);
    out.put(p.momentPerMass);
    out.put(p.boundingRadius);
    out.put(p.centroid);
}

PolygonShape getPolygonShape(ByteReader& in, const char* what) {
    PolygonShape p;
    p.vx = in.getVector<double>(what);
    p.vy = in.getVector<double>(what);
    p.area = in.get<double>(what);
    p.momentPerMass = in.get<double>(what);
    p.boundingRadius = in.get<double>(what);
    p.centroid = in.get<Vec3>(what);
    return p;
}

void putGrain(ByteWriter& out, const DistributedGrain& g, bool shapes) {
    out.put(static_cast<const GrainState&>(g));
    if (shapes) {
        out.put(g.shape);
        out.put(g.size);
        out.put(g.polygon);
        out.put(static_cast<std::uint8_t>(g.ownShape ? 1 : 0));
        if (g.ownShape) putPolygonShape(out, *g.ownShape);
    }
    out.put(static_cast<std::uint64_t>(g.scheme.size()));
    for (const MdSolver::Vec6& v : g.scheme) out.put(v);
}

DistributedGrain getGrain(ByteReader& in, bool shapes) {
    DistributedGrain g;
    static_cast<GrainState&>(g) = in.get<GrainState>("grain");
    if (shapes) {
        g.shape = in.get<std::uint16_t>("grain");
        g.size = in.get<double>("grain");
        g.polygon = in.get<std::uint32_t>("grain");
        if (in.get<std::uint8_t>("grain") != 0) {
            // The edges' normals from the vertices, as a checkpoint's shapes
            // get them (the same bits as the sender's).
            auto shape = std::make_shared<PolygonShape>(getPolygonShape(in, "grain"));
            setEdgeNormals(*shape);
            g.ownShape = std::move(shape);
        }
    }
    g.scheme.resize(in.count(sizeof(MdSolver::Vec6), "grain"));
    for (MdSolver::Vec6& v : g.scheme) v = in.get<MdSolver::Vec6>("grain");
    return g;
}

void putMotion(ByteWriter& out, const World& w, std::size_t i) {
    out.put(w.x[i]);
    out.put(w.v[i]);
    out.put(w.w[i]);
    out.put(w.q[i]);
}

}  // namespace moreau::distributed
