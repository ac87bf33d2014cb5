#include "moreau/sim/checkpoint.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/out_dir.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "distributed_grain.hpp"

namespace moreau {

namespace {

constexpr char kMagic[] = "moreau-checkpoint\n";
constexpr std::size_t kMagicLength = sizeof(kMagic) - 1;
constexpr char kPartMagic[] = "moreau-checkpoint-part\n";
constexpr std::size_t kPartMagicLength = sizeof(kPartMagic) - 1;
/// Format 6's layout byte: the whole world and state, or the ranks' parts.
constexpr std::uint8_t kLayoutWhole = 0, kLayoutParts = 1;
/// The most parts (ranks) a checkpoint may name.
constexpr std::int32_t kMaxParts = 1 << 20;

/// The count of `items`, then each as `put` writes it.
template <class T, class Put>
void putEach(ByteWriter& out, const std::vector<T>& items, Put put) {
    out.put(static_cast<std::uint64_t>(items.size()));
    for (const T& item : items) put(item);
}

void writeWorld(ByteWriter& out, const World& w) {
    out.put(static_cast<std::int32_t>(w.dimension));
    out.put(static_cast<std::uint64_t>(w.numGrains));
    for (const auto* a : {&w.x, &w.v, &w.w, &w.invMass, &w.invInertia}) out.putDense(*a);
    out.putVector(w.radius);
    out.putDense(w.q);
    out.putVector(w.mass);
    out.putVector(w.inertia);
    putEach(out, w.force, [&](const ForceSchedule& f) {
        out.put(f.before);
        out.put(f.after);
        out.put(f.switchTime);
    });
    out.putBools(w.prescribed);
    putEach(out, w.wallShape, [&](const WallShape& s) {
        out.put(static_cast<std::uint8_t>(s.kind));
        out.put(s.direction);
        out.put(s.radius);
        out.put(static_cast<std::uint8_t>(s.inside));
        out.put(s.mu);
    });
    putEach(out, w.wallName, [&](const std::string& name) { out.putString(name); });
    out.putBools(w.wallMobile);
    out.put(w.gravity);
    out.put(w.muGrain);
    for (const bool p : w.periodic) out.put(static_cast<std::uint8_t>(p));
    out.put(w.boxMin);
    out.put(w.boxMax);
    out.put(w.time);
    out.put(static_cast<std::int64_t>(w.step));
    out.put(w.strainRate);  // format 2: the deforming cell, the driven grains
    out.put(w.shearRate);
    out.put(w.shift);
    out.put(w.shearStrain);  // format 5
    out.put(w.stressErrorIntegral);
    out.putVector(w.wallErrorIntegral);
    putEach(out, w.driven, [&](const World::DrivenGrain& d) {
        out.put(d.grain);
        out.put(d.wall);
    });
    putEach(out, w.clumpShapes, [&](const ClumpShape& c) {  // format 3: clumps
        out.putDense(c.centre);
        out.putVector(c.radius);
        out.put(c.volume);
        out.put(c.momentsPerMass);
        out.put(c.boundingRadius);
        out.put(Eigen::Vector4d(c.frame.coeffs()));
        out.put(c.centroid);
        out.put(c.errorBound);
    });
    out.putVector(w.shape);
    out.putVector(w.size);
    // format 4: polygons
    putEach(out, w.polygonShapes, [&](const PolygonShape& p) { distributed::putPolygonShape(out, p); });
    out.putVector(w.polygon);
}

World readWorld(ByteReader& in, std::uint32_t format) {
    World w;
    w.dimension = in.get<std::int32_t>("world dimension");
    if (w.dimension < 1 || w.dimension > 3) in.fail("world dimension " + std::to_string(w.dimension));
    const auto grains = in.get<std::uint64_t>("grain count");
    for (auto* a : {&w.x, &w.v, &w.w, &w.invMass, &w.invInertia}) *a = in.getDense<Vec3>("body arrays");
    w.radius = in.getVector<double>("radii");
    w.q = in.getDense<Quat>("orientations");
    w.mass = in.getVector<double>("masses");
    w.inertia = in.getVector<double>("inertias");
    w.force.resize(in.count(7 * sizeof(double), "force schedules"));
    for (ForceSchedule& f : w.force) {
        f.before = in.get<Vec3>("force schedules");
        f.after = in.get<Vec3>("force schedules");
        f.switchTime = in.get<double>("force schedules");
    }
    w.prescribed = in.getBools("prescribed flags");
    w.wallShape.resize(in.count(3 + 5 * sizeof(double), "wall shapes"));
    for (WallShape& s : w.wallShape) {
        const auto kind = in.get<std::uint8_t>("wall shapes");
        if (kind > static_cast<std::uint8_t>(ShapeKind::Cylinder)) in.fail("wall shape kind " + std::to_string(kind));
        s.kind = static_cast<ShapeKind>(kind);
        s.direction = in.get<Vec3>("wall shapes");
        s.radius = in.get<double>("wall shapes");
        s.inside = in.getBool("wall shapes");
        s.mu = in.get<double>("wall shapes");
    }
    w.wallName.resize(in.count(8, "wall names"));
    for (std::string& name : w.wallName) name = in.getString("wall names");
    w.wallMobile = in.getBools("wall mobility");
    w.gravity = in.get<Vec3>("gravity");
    w.muGrain = in.get<double>("grain friction");
    for (bool& p : w.periodic) p = in.getBool("periodic axes");
    w.boxMin = in.get<Vec3>("periodic box");
    w.boxMax = in.get<Vec3>("periodic box");
    w.time = in.get<double>("time");
    w.step = static_cast<long>(in.get<std::int64_t>("step"));
    if (format >= 2) {
        w.strainRate = in.get<Vec3>("cell strain rate");
        w.shearRate = in.get<double>("cell shear rate");
        w.shift = in.get<double>("cell shift");
        if (format >= 5) w.shearStrain = in.get<double>("cell shear strain");
        w.stressErrorIntegral = in.get<Vec3>("cell servo integral");
        w.wallErrorIntegral = in.getVector<double>("wall servo integrals");
        w.driven.resize(in.count(2 * sizeof(BodyId), "driven grains"));
        for (World::DrivenGrain& d : w.driven) {
            d.grain = in.get<BodyId>("driven grains");
            d.wall = in.get<BodyId>("driven grains");
        }
    }
    if (format >= 3) {
        w.clumpShapes.resize(in.count(8, "clump shapes"));
        for (ClumpShape& c : w.clumpShapes) {
            c.centre = in.getDense<Vec3>("clump shapes");
            c.radius = in.getVector<double>("clump shapes");
            c.volume = in.get<double>("clump shapes");
            c.momentsPerMass = in.get<Vec3>("clump shapes");
            c.boundingRadius = in.get<double>("clump shapes");
            c.frame.coeffs() = in.get<Eigen::Vector4d>("clump shapes");
            c.centroid = in.get<Vec3>("clump shapes");
            c.errorBound = in.get<double>("clump shapes");
        }
        w.shape = in.getVector<std::uint16_t>("body shapes");
        w.size = in.getVector<double>("body sizes");
    }
    if (format >= 4) {
        w.polygonShapes.resize(in.count(8, "polygon shapes"));
        for (PolygonShape& p : w.polygonShapes) p = distributed::getPolygonShape(in, "polygon shapes");
        w.polygon = in.getVector<std::uint32_t>("body polygons");
    }

    // One entry per body everywhere, one per wall in the wall arrays.
    const std::size_t n = w.x.size();
    if (grains > n) in.fail(std::to_string(grains) + " grains in a world of " + std::to_string(n) + " bodies");
    w.numGrains = static_cast<std::size_t>(grains);
    const bool bodies = w.v.size() == n && w.w.size() == n && w.invMass.size() == n && w.invInertia.size() == n &&
                        w.radius.size() == n && w.q.size() == n && w.mass.size() == n && w.inertia.size() == n &&
                        w.prescribed.size() == n && (w.force.empty() || w.force.size() == n);
    const std::size_t walls = n - w.numGrains;
    // Clumps: shapes of 1 to 16 finite spheres with positive mass
    // properties; per body a shape index in range (walls 0) and a size.
    for (std::size_t k = 0; k < w.clumpShapes.size(); ++k) {
        const ClumpShape& c = w.clumpShapes[k];
        bool ok = !c.radius.empty() && c.radius.size() <= 16 && c.centre.size() == c.radius.size() &&
                  std::isfinite(c.volume) && c.volume > 0.0 && c.momentsPerMass.allFinite() &&
                  c.momentsPerMass.minCoeff() > 0.0 && std::isfinite(c.boundingRadius) && c.boundingRadius > 0.0 &&
                  c.frame.coeffs().allFinite() && c.centroid.allFinite() && std::isfinite(c.errorBound);
        for (std::size_t j = 0; ok && j < c.radius.size(); ++j)
            ok = c.centre[j].allFinite() && std::isfinite(c.radius[j]) && c.radius[j] > 0.0;
        if (!ok) in.fail("clump shape " + std::to_string(k) + " is not 1 to 16 finite spheres of positive size");
    }
    if ((!w.shape.empty() && (w.shape.size() != n || w.clumpShapes.empty())) ||
        (!w.polygon.empty() &&
         (w.polygon.size() != n || (w.polygonShapes.empty() && w.numGrains > 0) || w.dimension != 2)) ||
        w.size.size() != (w.hasShapes() ? n : 0))
        in.fail("the clumps' or polygons' arrays disagree on the number of bodies");
    // Polygons: 3 to 64 finite vertices with positive mass properties; per
    // body a shape index in range (walls 0) and a positive size.
    for (std::size_t k = 0; k < w.polygonShapes.size(); ++k) {
        PolygonShape& p = w.polygonShapes[k];
        bool ok = p.vx.size() >= 3 && p.vx.size() <= static_cast<std::size_t>(kMaxPolygonVertices) &&
                  p.vy.size() == p.vx.size() && std::isfinite(p.area) && p.area > 0.0 &&
                  std::isfinite(p.momentPerMass) && p.momentPerMass > 0.0 && std::isfinite(p.boundingRadius) &&
                  p.boundingRadius > 0.0 && p.centroid.allFinite();
        for (std::size_t j = 0; ok && j < p.vx.size(); ++j) ok = std::isfinite(p.vx[j]) && std::isfinite(p.vy[j]);
        if (ok) try {  // convex and simple, as the geometry needs (contact/polygon_geometry.hpp)
                std::vector<double> xy;
                for (std::size_t j = 0; j < p.vx.size(); ++j) xy.insert(xy.end(), {p.vx[j], p.vy[j]});
                makePolygonShape(xy);
                double twice = 0.0;  // counter-clockwise: positive signed area
                for (std::size_t j = 0, m = p.vx.size(); j < m; ++j)
                    twice += p.vx[j] * p.vy[(j + 1) % m] - p.vx[(j + 1) % m] * p.vy[j];
                ok = twice > 0.0;
            } catch (const InputError&) {
                ok = false;
            }
        if (!ok) in.fail("polygon shape " + std::to_string(k) + " is not 3 to 64 finite vertices of positive area");
        setEdgeNormals(p);  // not in the file: they follow from the vertices
    }
    for (std::size_t i = 0; i < w.polygon.size(); ++i)
        if (w.polygon[i] > w.polygonShapes.size() || (i >= grains && w.polygon[i] != 0) ||
            (w.polygon[i] != 0 && (!(std::isfinite(w.size[i]) && w.size[i] > 0.0) || (i < w.shape.size() && w.shape[i] != 0))))
            in.fail("body " + std::to_string(i) + ": polygon shape " + std::to_string(w.polygon[i]) + " or size " +
                    std::to_string(w.size[i]) + " out of range");
    for (std::size_t i = 0; i < w.shape.size(); ++i)
        if (w.shape[i] > w.clumpShapes.size() || (i >= grains && w.shape[i] != 0) ||
            (w.shape[i] != 0 && !(std::isfinite(w.size[i]) && w.size[i] > 0.0)))
            in.fail("body " + std::to_string(i) + ": clump shape " + std::to_string(w.shape[i]) + " or size " +
                    std::to_string(w.size[i]) + " out of range");
    if (!bodies || w.wallShape.size() != walls || w.wallName.size() != walls || w.wallMobile.size() != walls ||
        !(w.wallErrorIntegral.empty() || w.wallErrorIntegral.size() == walls))
        in.fail("the world's arrays disagree on the number of bodies");
    if (w.step < 0) in.fail("negative step " + std::to_string(w.step));
    for (std::size_t k = 0; k < w.driven.size(); ++k) {
        const World::DrivenGrain& d = w.driven[k];
        const bool grain = d.grain >= 0 && static_cast<std::size_t>(d.grain) < w.numGrains &&
                           (k == 0 || w.driven[k - 1].grain < d.grain);
        const bool wall = d.wall == -1 || (d.wall >= 0 && w.isWall(d.wall) && static_cast<std::size_t>(d.wall) < n);
        if (!grain || !wall) in.fail("driven grain " + std::to_string(k) + ": grain " + std::to_string(d.grain) +
                                     " or wall " + std::to_string(d.wall) + " out of order or range");
        const auto i = static_cast<std::size_t>(d.grain);
        if (w.invMass[i] != Vec3::Zero() || w.invInertia[i] != Vec3::Zero() || !w.prescribed[i])
            in.fail("driven grain " + std::to_string(d.grain) + " has a mass or is not prescribed");
    }

    // Values a run can have written: finite, grains of positive radius,
    // masses and inertias (and their inverses) >= 0, walls of a valid shape.
    auto body = [&](std::size_t i) {
        return (i < w.numGrains ? "grain " : "wall body ") + std::to_string(i) + ": ";
    };
    auto nonNegative = [](const Vec3& a) { return a.allFinite() && a.minCoeff() >= 0.0; };
    for (std::size_t i = 0; i < n; ++i) {
        if (!w.x[i].allFinite() || !w.v[i].allFinite() || !w.w[i].allFinite() || !w.q[i].coeffs().allFinite())
            in.fail(body(i) + "a position, velocity or orientation is not finite");
        if (!nonNegative(w.invMass[i]) || !nonNegative(w.invInertia[i]) || !std::isfinite(w.mass[i]) ||
            !(w.mass[i] >= 0.0) || !std::isfinite(w.inertia[i]) || !(w.inertia[i] >= 0.0))
            in.fail(body(i) + "a mass or inertia (or its inverse) is not finite and >= 0");
        const bool grain = i < w.numGrains;
        if (grain ? !(std::isfinite(w.radius[i]) && w.radius[i] > 0.0) : w.radius[i] != 0.0)
            in.fail(body(i) + "radius " + std::to_string(w.radius[i]) + (grain ? " is not finite and > 0" : " is not 0"));
    }
    for (const ForceSchedule& f : w.force)
        if (!f.before.allFinite() || !f.after.allFinite() || std::isnan(f.switchTime))
            in.fail("an applied force is not finite");
    for (std::size_t k = 0; k < walls; ++k) {
        const WallShape& s = w.wallShape[k];
        if (!s.direction.allFinite() || !(std::isfinite(s.radius) && s.radius >= 0.0) ||
            !(std::isfinite(s.mu) && s.mu >= 0.0))
            in.fail("wall '" + w.wallName[k] + "': its direction, radius or friction is not finite (and >= 0)");
    }
    if (!w.gravity.allFinite() || !(std::isfinite(w.muGrain) && w.muGrain >= 0.0) || !w.boxMin.allFinite() ||
        !w.boxMax.allFinite() || !std::isfinite(w.time) || !w.strainRate.allFinite() || !std::isfinite(w.shearRate) ||
        !std::isfinite(w.shift) || !std::isfinite(w.shearStrain) || !w.stressErrorIntegral.allFinite() ||
        !std::all_of(w.wallErrorIntegral.begin(), w.wallErrorIntegral.end(), [](double x) { return std::isfinite(x); }))
        in.fail("the gravity, grain friction, periodic box or time is not finite (or the friction < 0)");
    return w;
}

/// Removes the part files in `dir` that are not of step `keep` (-1: all):
/// once `dir`/checkpoint is written, they belong to no checkpoint.
void removeOtherParts(const std::filesystem::path& dir, long keep) {
    const std::string mine = checkpointPartName(keep, 0);
    const std::string stem = mine.substr(0, mine.size() - 1);  // "checkpoint.000400.p"
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        std::size_t digits = 0;  // "checkpoint." then the step's digits, then ".p" and the rank's
        while (11 + digits < name.size() && std::isdigit(static_cast<unsigned char>(name[11 + digits]))) ++digits;
        const bool part = name.rfind("checkpoint.", 0) == 0 && digits >= 6 && name.compare(11 + digits, 2, ".p") == 0 &&
                          name.size() > 13 + digits &&
                          std::all_of(name.begin() + static_cast<std::ptrdiff_t>(13 + digits), name.end(),
                                      [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; });
        if (part && (keep < 0 || name.rfind(stem, 0) != 0)) std::filesystem::remove(entry.path(), ec);
    }
}

std::string readFile(const std::filesystem::path& file, const std::string& origin) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw InputError(origin + ": " + (std::filesystem::exists(file, ec) ? "not a regular file" : "no such file"));
    std::ifstream f(file, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    if (!f) throw InputError(origin + ": cannot be read");
    return ss.str();
}

void putCarry(ByteWriter& out, const MdSolver::SchemeCarry& c) {
    out.put(static_cast<std::int64_t>(c.history));
    out.put(c.pendingKick);
    out.put(static_cast<std::uint8_t>(c.haveSignature));
    out.put(c.signature);
    out.put(c.fields);
    out.put(static_cast<std::uint8_t>(c.past));
}

MdSolver::SchemeCarry getCarry(ByteReader& in) {
    MdSolver::SchemeCarry c;
    c.history = static_cast<long>(in.get<std::int64_t>("MD scheme"));
    c.pendingKick = in.get<double>("MD scheme");
    c.haveSignature = in.getBool("MD scheme");
    c.signature = in.get<std::uint64_t>("MD scheme");
    c.fields = in.get<std::uint32_t>("MD scheme");
    c.past = in.getBool("MD scheme");
    if (!c.fits()) in.fail("MD scheme fields " + std::to_string(c.fields) + " out of range");
    return c;
}

/// The index of the parts in a format-6 checkpoint of layout "parts".
CheckpointParts readPartsIndex(const World& walls, ByteReader& in) {
    if (walls.numGrains != 0) in.fail("the parts' world holds grains");
    CheckpointParts p;
    p.grains = in.get<std::uint64_t>("grains");
    const auto ranks = in.get<std::int32_t>("parts");
    if (ranks < 1 || ranks > kMaxParts) in.fail(std::to_string(ranks) + " parts");
    p.held = in.getBool("MD scheme");
    p.carry = getCarry(in);
    const std::size_t per = p.held ? p.carry.perBody() : 0;
    p.wallScheme.resize(in.count(sizeof(MdSolver::Vec6), "MD scheme of the walls"));
    for (MdSolver::Vec6& e : p.wallScheme) e = in.get<MdSolver::Vec6>("MD scheme of the walls");
    if (p.wallScheme.size() != walls.numWalls() * per) in.fail("the walls' MD scheme entries do not match the walls");
    p.listed.resize(static_cast<std::size_t>(ranks));
    for (auto& [size, digest] : p.listed) {
        size = in.get<std::uint64_t>("part size");
        digest = in.get<std::uint64_t>("part checksum");
    }
    if (in.left() != 0) in.fail(std::to_string(in.left()) + " bytes after the parts");
    return p;
}

/// readCheckpoint without the merge: every part read and checked, its
/// grains' ids each once from 0 to grains − 1 (counted, then marked in a
/// bitmap), and the smallest radius.
void checkParts(Checkpoint& c) {
    CheckpointParts& index = *c.parts;
    std::uint64_t count = 0;
    index.rMin = std::numeric_limits<double>::infinity();
    eachCheckpointPart(c, c.world, [&](const World& part, const std::vector<std::uint64_t>& ids, const ContactStore&,
                                       const std::vector<MdSolver::Vec6>&) {
        count += ids.size();
        for (std::size_t k = 0; k < part.numGrains; ++k) index.rMin = std::min(index.rMin, part.radius[k]);
    });
    const std::string where = "checkpoint '" + c.path.string() + "'";
    if (count != index.grains)
        throw InputError(where + ": its parts hold " + std::to_string(count) + " of its " + std::to_string(index.grains) +
                         " grains");
    std::vector<bool> seen(index.grains, false);
    eachCheckpointPart(c, c.world, [&](const World&, const std::vector<std::uint64_t>& ids, const ContactStore&,
                                       const std::vector<MdSolver::Vec6>&) {
        for (const std::uint64_t id : ids) {
            if (seen[id]) throw InputError(where + ": grain id " + std::to_string(id) + " is in two parts");
            seen[id] = true;
        }
    });
}

/// The merge of readCheckpoint: the parts' grains by id into the whole
/// world, their contact memory in key order, and the state a serial run
/// would have saved from them (Simulation::saveState).
void mergeParts(Checkpoint& c, const std::string& origin) {
    const CheckpointParts& index = *c.parts;
    const std::size_t per = index.held ? index.carry.perBody() : 0;
    auto fail = [&](const std::string& what) { throw InputError("checkpoint '" + c.path.string() + "': " + what); };
    CheckpointPick all = pickCheckpointGrains(c, nullptr);
    c.world = std::move(all.world);
    const std::vector<MdSolver::Vec6>& entries = all.entries;
    ContactStore& store = all.store;
    // The contact memory in key order, each record once.
    std::vector<std::size_t> byKey(store.records.size());
    for (std::size_t k = 0; k < byKey.size(); ++k) byKey[k] = k;
    std::sort(byKey.begin(), byKey.end(), [&](std::size_t a, std::size_t b) { return store.records[a].key < store.records[b].key; });
    ContactStore sorted;
    sorted.slots.stride = store.slots.stride;
    for (std::size_t k = 0; k < byKey.size(); ++k) {
        const std::size_t r = byKey[k];
        if (k > 0 && store.records[r].key == sorted.records.back().key) fail("a contact's memory in two parts");
        sorted.records.push_back(store.records[r]);
        sorted.slots.values.insert(sorted.slots.values.end(), store.slots.at(r), store.slots.at(r) + store.slots.stride);
    }
    // The state a serial run of the whole world would save (as a serial
    // checkpoint has it): its Simulation, this memory, the scheme's state.
    Scene scene = loadSceneWithWorld(c.sceneText, origin, {}, c.world);
    Simulation sim(std::move(scene));
    sim.restoreContacts(sorted);
    if (index.held) {
        if (sim.scene().simulation.method != Method::MD || sim.fused())
            fail("an MD scheme's state for a scene whose solver keeps none");
        sim.md().adoptScheme(index.carry, c.world.numBodies(), [&](std::size_t i, MdSolver::Vec6* e) {
            std::copy_n(entries.data() + i * per, per, e);
        });
    }
    ByteWriter state;
    sim.saveState(state);
    c.state = std::move(state.bytes());
    c.parts.reset();
}

}  // namespace

std::string checkpointPartName(long step, int rank) {
    char name[64];
    std::snprintf(name, sizeof name, "checkpoint.%06ld.p%d", step, rank);
    return name;
}

void eachCheckpointPart(const Checkpoint& c, const World& walls,
                        const std::function<void(const World&, const std::vector<std::uint64_t>&, const ContactStore&,
                                                 const std::vector<MdSolver::Vec6>&)>& f) {
    const CheckpointParts& index = *c.parts;
    const std::size_t per = index.held ? index.carry.perBody() : 0;
    const auto ranks = static_cast<std::int32_t>(index.listed.size());
    std::size_t stride = 0;
    for (std::int32_t r = 0; r < ranks; ++r) {
        const std::filesystem::path file = c.path.parent_path() / checkpointPartName(walls.step, r);
        const std::string name = "checkpoint part '" + file.string() + "'";
        const std::string bytes = readFile(file, name);
        const auto& [size, digest] = index.listed[static_cast<std::size_t>(r)];
        if (bytes.size() != size || fnv1a64(bytes) != digest)
            throw InputError(name + ": not the part '" + c.path.string() + "' lists (its size or checksum differs: " +
                             "another run's, or damaged)");
        if (bytes.compare(0, kPartMagicLength, kPartMagic) != 0)
            throw InputError(name + ": not a part of a Moreau checkpoint");
        ByteReader u(std::string_view(bytes).substr(kPartMagicLength), name);
        if (u.get<std::uint32_t>("format version") != kCheckpointFormat || u.get<std::int64_t>("step") != walls.step ||
            u.get<std::int32_t>("rank") != r || u.get<std::int32_t>("parts") != ranks)
            u.fail("not part " + std::to_string(r) + " of " + std::to_string(ranks) + " of step " +
                   std::to_string(walls.step));
        const World part = readWorld(u, kCheckpointFormat);
        if (part.numWalls() != walls.numWalls()) u.fail("its walls are not the checkpoint's");
        const std::vector<std::uint64_t> ids = u.getVector<std::uint64_t>("grain ids");
        if (ids.size() != part.numGrains) u.fail("its grain ids do not match its grains");
        for (std::size_t k = 0; k < ids.size(); ++k)
            if (ids[k] >= index.grains || (k > 0 && ids[k] <= ids[k - 1]))
                u.fail("its grain ids are not ascending below " + std::to_string(index.grains));
        std::istringstream records(u.getString("contact store"));
        const ContactStore mine = readContactStore(records, name);
        if (r > 0 && mine.slots.stride != stride) u.fail("its contact memory has another stride");
        stride = mine.slots.stride;
        if (u.count(sizeof(MdSolver::Vec6), "MD scheme") != ids.size() * per)
            u.fail("its MD scheme entries do not match its grains");
        std::vector<MdSolver::Vec6> entries(ids.size() * per);
        for (MdSolver::Vec6& e : entries) e = u.get<MdSolver::Vec6>("MD scheme");
        if (u.left() != 0) u.fail(std::to_string(u.left()) + " bytes after the part");
        f(part, ids, mine, entries);
    }
}

CheckpointPick pickCheckpointGrains(const Checkpoint& c, const std::vector<std::uint64_t>* ids) {
    const CheckpointParts& index = *c.parts;
    const std::size_t per = index.held ? index.carry.perBody() : 0;
    auto picked = [&](std::uint64_t id) { return !ids || std::binary_search(ids->begin(), ids->end(), id); };
    std::vector<DistributedGrain> grains;
    CheckpointPick pick;
    // Own shapes (DistributedSimulation) leave the main file's world without
    // a polygon table, and each part holds its grains' shapes alone: each
    // grain takes its own (the parts written before own shapes hold the
    // whole world's table, as the main file does, and index into it).
    bool own = false;
    eachCheckpointPart(c, c.world, [&](const World& part, const std::vector<std::uint64_t>& pids,
                                       const ContactStore& store, const std::vector<MdSolver::Vec6>& entries) {
        const std::vector<std::int32_t> driven = distributed::drivenOf(part);
        own = own || (c.world.polygonShapes.empty() && !part.polygonShapes.empty());
        for (std::size_t k = 0; k < pids.size(); ++k) {
            if (!picked(pids[k])) continue;
            grains.push_back(distributed::grainOf(part, k, pids[k], driven, nullptr, 0,
                                                  c.world.polygonShapes.empty() && !part.polygonShapes.empty()));
            grains.back().scheme.assign(entries.begin() + static_cast<std::ptrdiff_t>(k * per),
                                        entries.begin() + static_cast<std::ptrdiff_t>((k + 1) * per));
        }
        pick.store.slots.stride = store.slots.stride;
        for (std::size_t r = 0; r < store.records.size(); ++r) {
            const ContactKey key = store.records[r].key;
            if (!picked(static_cast<std::uint64_t>(keyBodyA(key))) && !picked(static_cast<std::uint64_t>(keyBodyB(key))))
                continue;
            pick.store.records.push_back(store.records[r]);
            pick.store.slots.values.insert(pick.store.slots.values.end(), store.slots.at(r),
                                           store.slots.at(r) + store.slots.stride);
        }
    });
    std::vector<std::size_t> order(grains.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return grains[a].gid < grains[b].gid; });
    if (!ids) {  // every grain once, by id 0 to grains − 1
        auto fail = [&](const std::string& what) { throw InputError("checkpoint '" + c.path.string() + "': " + what); };
        if (grains.size() != index.grains)
            fail("its parts hold " + std::to_string(grains.size()) + " of its " + std::to_string(index.grains) +
                 " grains");
        for (std::size_t k = 0; k < order.size(); ++k)
            if (grains[order[k]].gid != k) fail("its parts do not hold each grain id once (id " + std::to_string(k) + ")");
    }
    pick.world = distributed::worldOf(grains, order, c.world, own);
    pick.entries.reserve(per * grains.size() + index.wallScheme.size());
    for (const std::size_t k : order)
        pick.entries.insert(pick.entries.end(), grains[k].scheme.begin(), grains[k].scheme.end());
    pick.entries.insert(pick.entries.end(), index.wallScheme.begin(), index.wallScheme.end());
    return pick;
}

namespace {

/// The bytes `write(out)` puts, counted first and then written into a
/// string of that size: a large file's bytes held once, not grown by doubling.
template <class Write>
std::string sizedBytes(Write&& write) {
    ByteWriter count = ByteWriter::counting(), out;
    write(count);
    out.reserve(count.size());
    write(out);
    return std::move(out.bytes());
}

/// A whole checkpoint's header, up to its layout byte.
void putHeader(ByteWriter& out, CheckpointKind kind, const std::string& sceneText, const std::string& origin,
               std::uint8_t layout) {
    out.putRaw({kMagic, kMagicLength});
    out.put(kCheckpointFormat);
    out.putString(MOREAU_VERSION);
    out.put(static_cast<std::uint8_t>(kind));
    out.putString(sceneText);
    out.put(fnv1a64(sceneText));
    out.putString(origin);
    out.put(layout);
}

}  // namespace

std::string writeCheckpointPart(const std::filesystem::path& dir, const CheckpointShare& share, int rank, int ranks) {
    std::string records;
    {
        std::ostringstream text;
        writeContactStore(text, share.store);
        records = std::move(text).str();
    }
    const std::string bytes = sizedBytes([&](ByteWriter& out) {
        out.putRaw({kPartMagic, kPartMagicLength});
        out.put(kCheckpointFormat);
        out.put(static_cast<std::int64_t>(share.step));
        out.put(static_cast<std::int32_t>(rank));
        out.put(static_cast<std::int32_t>(ranks));
        writeWorld(out, share.part);
        putEach(out, share.ids, [&](std::uint64_t id) { out.put(id); });
        out.putString(records);
        putEach(out, share.entries, [&](const MdSolver::Vec6& e) { out.put(e); });
    });
    writeFileAtomically(dir / checkpointPartName(share.step, rank), bytes, true);
    ByteWriter listed;
    listed.put(static_cast<std::uint64_t>(bytes.size()));
    listed.put(fnv1a64(bytes));
    return std::move(listed.bytes());
}

void writeCheckpointMain(const std::filesystem::path& dir, const CheckpointShare& share, std::size_t grains,
                         const std::vector<std::string>& parts, const RunTotals& totals, CheckpointKind kind,
                         const std::string& sceneText, const std::string& origin) {
    ByteWriter out;
    putHeader(out, kind, sceneText, origin, kLayoutParts);
    writeWorld(out, distributed::worldOf({}, {}, share.part, share.ownShapes));  // its walls, cell and clock
    out.put(totals);
    out.put(static_cast<std::uint64_t>(grains));
    out.put(static_cast<std::int32_t>(parts.size()));
    out.put(static_cast<std::uint8_t>(share.held));
    putCarry(out, share.carry);
    putEach(out, share.wallScheme, [&](const MdSolver::Vec6& e) { out.put(e); });
    for (const std::string& p : parts) out.putRaw(p);
    out.put(fnv1a64(out.bytes()));
    writeFileAtomically(dir / "checkpoint", out.bytes(), true);
    removeOtherParts(dir, share.step);
}

void writeCheckpoint(const std::filesystem::path& file, const Simulation& sim, const RunTotals& totals,
                     CheckpointKind kind) {
    writeCheckpointBytes(file, checkpointBytes(sim, totals, kind));
}

void writeCheckpointBytes(const std::filesystem::path& file, const std::string& bytes) {
    writeFileAtomically(file, bytes, true);
    removeOtherParts(file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path(), -1);
}

std::string checkpointBytes(const Simulation& sim, const RunTotals& totals, CheckpointKind kind,
                            const std::string* sceneText) {
    const std::string text = sceneText ? *sceneText : canonicalSceneText(sim.scene());
    // The simulation's state straight after its length, put when known.
    return sizedBytes([&](ByteWriter& out) {
        putHeader(out, kind, text, sim.scene().origin, kLayoutWhole);
        writeWorld(out, sim.world());
        out.put(totals);
        const std::size_t at = out.size();
        out.put(std::uint64_t{0});
        sim.saveState(out);
        out.putAt(at, static_cast<std::uint64_t>(out.size() - at - sizeof(std::uint64_t)));
        out.put(fnv1a64(out.bytes()));
    });
}

Checkpoint readCheckpoint(const std::filesystem::path& file, bool merge) {
    const std::string origin = "checkpoint '" + file.string() + "'";
    const std::string bytes = readFile(file, origin);
    if (bytes.compare(0, kMagicLength, kMagic) != 0)
        throw InputError(origin + ": not a Moreau checkpoint (it does not start with 'moreau-checkpoint')");
    Checkpoint c;
    c.path = file;
    ByteReader header(std::string_view(bytes).substr(kMagicLength), origin);
    c.format = header.get<std::uint32_t>("format version");
    if (c.format < 1 || c.format > kCheckpointFormat)
        throw InputError(origin + ": format version " + std::to_string(c.format) + "; this build of Moreau reads 1 to " +
                         std::to_string(kCheckpointFormat));
    if (bytes.size() < kMagicLength + 12 ||
        fnv1a64(std::string_view(bytes).substr(0, bytes.size() - 8)) !=
            ByteReader(std::string_view(bytes).substr(bytes.size() - 8), origin).get<std::uint64_t>("checksum"))
        throw InputError(origin + ": damaged or truncated (its checksum does not match its " +
                         std::to_string(bytes.size()) + " bytes)");
    ByteReader in(std::string_view(bytes).substr(kMagicLength, bytes.size() - kMagicLength - 8), origin);
    in.get<std::uint32_t>("format version");
    c.version = in.getString("Moreau version");
    const auto kind = in.get<std::uint8_t>("kind");
    if (kind > static_cast<std::uint8_t>(CheckpointKind::Diverged)) in.fail("kind " + std::to_string(kind));
    c.kind = static_cast<CheckpointKind>(kind);
    c.sceneText = in.getString("scene text");
    if (in.get<std::uint64_t>("scene hash") != fnv1a64(c.sceneText)) in.fail("the scene text does not match its hash");
    c.origin = in.getString("scene name");
    const std::uint8_t layout = c.format >= 6 ? in.get<std::uint8_t>("layout") : kLayoutWhole;
    if (layout > kLayoutParts) in.fail("layout " + std::to_string(layout));
    c.world = readWorld(in, c.format);
    c.totals = in.get<RunTotals>("run totals");
    if (layout == kLayoutParts) {
        c.parts = readPartsIndex(c.world, in);
        if (merge)
            mergeParts(c, origin);
        else
            checkParts(c);
        return c;
    }
    c.state = in.getString("simulation state");
    if (in.left() != 0) in.fail(std::to_string(in.left()) + " bytes after the simulation state");
    return c;
}

}  // namespace moreau
