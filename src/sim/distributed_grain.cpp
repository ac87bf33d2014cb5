#include "distributed_grain.hpp"

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
                         const MdSolver* scheme, std::size_t per) {
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
    g.scheme.resize(scheme ? per : 0);
    if (!g.scheme.empty()) scheme->bodyScheme(i, g.scheme.data());
    return g;
}

void putGrain(ByteWriter& out, const DistributedGrain& g, bool shapes) {
    out.put(static_cast<const GrainState&>(g));
    if (shapes) {
        out.put(g.shape);
        out.put(g.size);
        out.put(g.polygon);
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
