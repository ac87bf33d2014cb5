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
    g.scheme.resize(scheme ? per : 0);
    if (!g.scheme.empty()) scheme->bodyScheme(i, g.scheme.data());
    return g;
}

void putGrain(ByteWriter& out, const DistributedGrain& g) {
    out.put(g.gid);
    out.put(g.x);
    out.put(g.v);
    out.put(g.w);
    out.put(g.q);
    out.put(g.invMass);
    out.put(g.invInertia);
    out.put(g.radius);
    out.put(g.mass);
    out.put(g.inertia);
    out.put(static_cast<std::uint8_t>(g.prescribed));
    out.put(static_cast<std::uint8_t>(g.scheduled));
    if (g.scheduled) out.put(g.force);
    out.put(g.driven);
    out.put(static_cast<std::uint64_t>(g.scheme.size()));
    for (const MdSolver::Vec6& v : g.scheme) out.put(v);
}

DistributedGrain getGrain(ByteReader& in) {
    DistributedGrain g;
    g.gid = in.get<std::uint64_t>("grain");
    g.x = in.get<Vec3>("grain");
    g.v = in.get<Vec3>("grain");
    g.w = in.get<Vec3>("grain");
    g.q = in.get<Quat>("grain");
    g.invMass = in.get<Vec3>("grain");
    g.invInertia = in.get<Vec3>("grain");
    g.radius = in.get<double>("grain");
    g.mass = in.get<double>("grain");
    g.inertia = in.get<double>("grain");
    g.prescribed = in.get<std::uint8_t>("grain") != 0;
    g.scheduled = in.get<std::uint8_t>("grain") != 0;
    if (g.scheduled) g.force = in.get<ForceSchedule>("grain");
    g.driven = in.get<std::int32_t>("grain");
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
