#include "moreau/io/output.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <system_error>

#include "moreau/analysis/observables.hpp"
#include "moreau/contact/polygon_geometry.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/out_dir.hpp"

#include <lz4.h>

namespace moreau {

namespace {

/// Appends the shortest decimal form that reads back to the same double
/// (std::to_chars without precision): exact like %.17g, but "0.1" stays "0.1".
void appendNumber(std::string& s, double value) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    s.append(buf, res.ptr);
}

template <class Int>
void appendInt(std::string& s, Int value) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    s.append(buf, res.ptr);
}

/// "grains_000042.vtp": the step, zero-padded to at least 6 digits.
std::string snapshotName(const char* prefix, long step) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s_%06ld.vtp", prefix, step);
    return buf;
}

// --- VTK XML PolyData (inline binary) -------------------------------------------
// Format version 1.0: offsets list the end of each cell (no leading 0), the
// layout every VTK reader since 5.x accepts. Each DataArray is "binary": the
// values as they lie in memory, little-endian (byte_order), LZ4-compressed
// in blocks (binaryArray), base64: no text conversion.
static_assert(std::endian::native == std::endian::little, "the VTK files declare LittleEndian");

/// Base64 (RFC 4648, with padding) of n bytes appended to s.
void appendBase64(std::string& s, const unsigned char* data, std::size_t n) {
    static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::size_t at = s.size();
    s.resize(at + 4 * ((n + 2) / 3));
    char* out = s.data() + at;
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3, out += 4) {
        const unsigned v = (unsigned{data[i]} << 16) | (unsigned{data[i + 1]} << 8) | data[i + 2];
        out[0] = kDigits[(v >> 18) & 63];
        out[1] = kDigits[(v >> 12) & 63];
        out[2] = kDigits[(v >> 6) & 63];
        out[3] = kDigits[v & 63];
    }
    if (i < n) {
        const unsigned v = (unsigned{data[i]} << 16) | (i + 1 < n ? unsigned{data[i + 1]} << 8 : 0u);
        out[0] = kDigits[(v >> 18) & 63];
        out[1] = kDigits[(v >> 12) & 63];
        out[2] = i + 1 < n ? kDigits[(v >> 6) & 63] : '=';
        out[3] = '=';
    }
}

/// VTK's compressed blocks: arrays are cut into blocks of this many bytes,
/// each compressed on its own (VTK's own writer's default size).
constexpr std::size_t kVtkBlock = 32768;

/// A DataArray of VTK type `type` (Float64, Int64, UInt8, String) whose
/// values are the `bytes` bytes at `data`; `extra`: more attributes. The
/// values are LZ4-compressed in blocks (compressor vtkLZ4DataCompressor: a
/// fifth larger than zlib's fastest level on these arrays, a fifth of its
/// compression time; docs/scenes.md): the header [#blocks, block size, last partial block's
/// size (0: none), each block's compressed size] as UInt64s in one base64
/// run, the compressed blocks in another, as VTK's reader takes them.
void binaryArray(std::string& s, const char* type, const char* name, int components, const void* data,
                 std::size_t bytes, const std::string& extra = {}) {
    s += "        <DataArray type=\"";
    s += type;
    s += "\" Name=\"";
    s += name;
    s += '"';
    if (components > 1) {
        s += " NumberOfComponents=\"";
        appendInt(s, components);
        s += '"';
    }
    s += extra;
    s += " format=\"binary\">\n          ";
    const std::size_t blocks = (bytes + kVtkBlock - 1) / kVtkBlock;
    std::vector<std::uint64_t> header{blocks, kVtkBlock, bytes % kVtkBlock};
    thread_local std::string packed;
    packed.clear();
    const auto* in = static_cast<const char*>(data);
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t size = std::min(kVtkBlock, bytes - b * kVtkBlock);
        const int room = LZ4_compressBound(static_cast<int>(size));
        const std::size_t at = packed.size();
        if (packed.capacity() < at + static_cast<std::size_t>(room)) packed.reserve(2 * (at + static_cast<std::size_t>(room)));
        packed.resize(at + static_cast<std::size_t>(room));  // within capacity: no reallocation
        const int done = LZ4_compress_default(in + b * kVtkBlock, packed.data() + at, static_cast<int>(size), room);
        if (done <= 0) throw std::runtime_error("LZ4 could not compress a VTK array");
        packed.resize(at + static_cast<std::size_t>(done));
        header.push_back(static_cast<std::uint64_t>(done));
    }
    appendBase64(s, reinterpret_cast<const unsigned char*>(header.data()), header.size() * sizeof(std::uint64_t));
    appendBase64(s, reinterpret_cast<const unsigned char*>(packed.data()), packed.size());
    s += "\n        </DataArray>\n";
}

template <class T>
void typedArray(std::string& s, const char* type, const char* name, int components, std::span<const T> values) {
    binaryArray(s, type, name, components, values.data(), values.size_bytes());
}

void scalarArray(std::string& s, const char* name, std::span<const double> values) {
    typedArray(s, "Float64", name, 1, values);
}

void vectorArray(std::string& s, const char* name, std::span<const Vec3> values) {
    static_assert(sizeof(Vec3) == 3 * sizeof(double));
    binaryArray(s, "Float64", name, 3, values.data(), values.size_bytes());
}

/// 3 × 3 tensors as 9 components, row-major (xx xy xz yx … zz): the order
/// ParaView reads a 9-component array in as a tensor.
void tensorArray(std::string& s, const char* name, std::span<const Mat3> values) {
    std::vector<double> rows;
    rows.reserve(9 * values.size());
    for (const Mat3& m : values)
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) rows.push_back(m(r, c));
    typedArray(s, "Float64", name, 9, std::span<const double>(rows));
}

/// An integer array of VTK type `type` (Int64, UInt8, ...), which must be Int's.
template <class Int>
void integerArray(std::string& s, const char* type, const char* name, std::span<const Int> values) {
    typedArray(s, type, name, 1, values);
}

/// A string array: each string's characters and a 0, as VTK reads them.
void stringArray(std::string& s, const char* name, std::span<const std::string> values) {
    std::string chars;
    for (const std::string& v : values) {
        chars += v;
        chars += '\0';
    }
    std::string tuples = " NumberOfTuples=\"";
    appendInt(tuples, values.size());
    tuples += '"';
    binaryArray(s, "String", name, 1, chars.data(), chars.size(), tuples);
}

/// An Int64 array of the `count` values first, first + step, first + 2 step, ...
void rampArray(std::string& s, const char* name, std::size_t count, std::size_t first, std::size_t step) {
    std::vector<std::int64_t> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<std::int64_t>(first + i * step);
    typedArray(s, "Int64", name, 1, std::span<const std::int64_t>(values));
}

void polyDataHeader(std::string& s, std::size_t points, std::size_t verts, std::size_t lines, std::size_t polys = 0) {
    s += "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\" compressor=\"vtkLZ4DataCompressor\">\n"
         "  <PolyData>\n"
         "    <Piece NumberOfPoints=\"";
    appendInt(s, points);
    s += "\" NumberOfVerts=\"";
    appendInt(s, verts);
    s += "\" NumberOfLines=\"";
    appendInt(s, lines);
    s += "\" NumberOfStrips=\"0\" NumberOfPolys=\"";
    appendInt(s, polys);
    s += "\">\n";
}

/// The rest of the document: the points, then `cells` cells of the kind
/// `cellTag` (Verts, Lines, Polys), their connectivity 0..n−1 grouped
/// `perCell` at a time, with end offsets.
void pointsCellsAndFooter(std::string& s, std::span<const Vec3> points, const std::string& cellTag,
                          std::size_t cells, std::size_t perCell) {
    s += "      <Points>\n";
    vectorArray(s, "Points", points);
    s += "      </Points>\n";
    s += "      <" + cellTag + ">\n";
    rampArray(s, "connectivity", cells * perCell, 0, 1);
    rampArray(s, "offsets", cells, perCell, perCell);
    s += "      </" + cellTag + ">\n";
    s += "    </Piece>\n"
         "  </PolyData>\n"
         "</VTKFile>\n";
}

/// The grains `which` (local indices) with their global `ids` (by local
/// body) and `stress` (by local grain).
std::string grainsDocument(const World& world, std::span<const std::size_t> which, std::span<const std::uint64_t> ids,
                           std::span<const Mat3> stress) {
    const std::size_t n = which.size();  // walls are not drawn
    std::vector<Vec3> points(n), velocity(n), spin(n);
    std::vector<double> radius(n);
    std::vector<std::int64_t> id(n);
    std::vector<Mat3> tensor(n);
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = which[k];
        points[k] = world.x[i];
        velocity[k] = world.v[i];
        spin[k] = world.w[i];
        radius[k] = world.radius[i];
        id[k] = static_cast<std::int64_t>(ids[i]);
        tensor[k] = stress[i];
    }
    std::string s;
    s.reserve(256 + n * 180);
    polyDataHeader(s, n, n, 0);
    s += "      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n";
    scalarArray(s, "radius", radius);
    vectorArray(s, "velocity", velocity);
    vectorArray(s, "angular_velocity", spin);
    integerArray<std::int64_t>(s, "Int64", "id", id);
    tensorArray(s, "stress", tensor);
    if (world.hasShapes()) {  // w, x, y, z: the principal frame to world
        std::vector<double> wxyz;
        wxyz.reserve(4 * n);
        for (std::size_t k = 0; k < n; ++k) {
            const Quat& q = world.q[which[k]];
            wxyz.insert(wxyz.end(), {q.w(), q.x(), q.y(), q.z()});
        }
        typedArray(s, "Float64", "orientation", 4, std::span<const double>(wxyz));
    }
    s += "      </PointData>\n";
    // One vertex cell per grain: without cells ParaView draws nothing.
    pointsCellsAndFooter(s, points, "Verts", n, 1);
    return s;
}

/// The polygons' outlines (a world of polygons): one filled polygon cell
/// per grain, its vertices in order, with the grain's id (ParaView draws
/// them as they are, no glyph needed).
std::string polygonsDocument(const World& world, std::span<const std::size_t> which,
                             std::span<const std::uint64_t> ids) {
    std::vector<Vec3> points;
    std::vector<std::int64_t> id, offsets;
    for (const std::size_t i : which) {
        const PolygonShape* p = world.polygonOf(i);
        if (!p) continue;
        double c, sn, x[kMaxPolygonVertices], y[kMaxPolygonVertices];
        angleCosSin(world.q[i], c, sn);
        placePolygon(p->vx.data(), p->vy.data(), p->vertices(), world.size[i], c, sn, world.x[i].x(), world.x[i].y(), x, y);
        for (std::size_t k = 0; k < p->vertices(); ++k) points.emplace_back(x[k], y[k], 0.0);
        id.push_back(static_cast<std::int64_t>(ids[i]));
        offsets.push_back(static_cast<std::int64_t>(points.size()));
    }
    std::string s;
    s.reserve(256 + points.size() * 80);
    polyDataHeader(s, points.size(), 0, 0, id.size());
    s += "      <CellData>\n";
    integerArray<std::int64_t>(s, "Int64", "id", id);
    s += "      </CellData>\n";
    s += "      <Points>\n";
    vectorArray(s, "Points", points);
    s += "      </Points>\n";
    s += "      <Polys>\n";
    rampArray(s, "connectivity", points.size(), 0, 1);
    integerArray<std::int64_t>(s, "Int64", "offsets", offsets);
    s += "      </Polys>\n";
    s += "    </Piece>\n"
         "  </PolyData>\n"
         "</VTKFile>\n";
    return s;
}

/// The clumps' component spheres (a world with clumps): one point each at
/// its centre, with its radius and its grain's id, for ParaView's sphere
/// glyphs (scaled by radius); or the polygons' outlines. Grains `which`
/// (local indices), the local bodies' global `ids`.
std::string shapesDocument(const World& world, VtkShapes shapes, std::span<const std::size_t> which,
                           std::span<const std::uint64_t> ids) {
    if (shapes == VtkShapes::Polygons) return polygonsDocument(world, which, ids);
    std::vector<Vec3> points;
    std::vector<double> radius;
    std::vector<std::int64_t> id;
    for (const std::size_t i : which)
        for (unsigned k = 0; k < world.components(i); ++k) {
            points.push_back(world.x[i] + world.componentOffset(i, k));
            radius.push_back(world.componentRadius(i, k));
            id.push_back(static_cast<std::int64_t>(ids[i]));
        }
    const std::size_t n = points.size();
    std::string s;
    s.reserve(256 + n * 80);
    polyDataHeader(s, n, n, 0);
    s += "      <PointData Scalars=\"radius\">\n";
    scalarArray(s, "radius", radius);
    integerArray<std::int64_t>(s, "Int64", "id", id);
    s += "      </PointData>\n";
    pointsCellsAndFooter(s, points, "Verts", n, 1);
    return s;
}

/// Local bodies 0 .. n−1 as their own ids (a serial world).
std::vector<std::uint64_t> identity(std::size_t n) {
    std::vector<std::uint64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::uint64_t{0});
    return ids;
}

std::string contactsDocument(const World& world, const std::vector<Contact>& contacts,
                             std::span<const std::uint64_t> ids) {
    std::vector<Vec3> points, normal, tangential, touch;
    std::vector<double> magnitude;
    std::vector<std::int64_t> bodyA, bodyB;
    std::vector<std::uint8_t> periodic;
    for (const Contact& c : contacts) {
        const Vec3& R = c.history.reaction;
        if (R == Vec3::Zero()) continue;
        const auto a = static_cast<std::size_t>(c.a);
        const auto b = static_cast<std::size_t>(c.b);
        Vec3 from, to;
        bool crosses = false;
        if (!world.isWall(c.a) && !world.isWall(c.b)) {
            const Vec3 raw = world.x[b] - world.x[a], branch = world.minimumImage(raw);
            from = world.x[a];
            to = world.x[a] + branch;
            crosses = branch != raw;
        } else {
            // Grain–wall (a is the grain): to the contact point on the grain's
            // surface, x_a + r_a n, which stays next to the grain when
            // positions wrap.
            from = world.x[a];
            to = contactPoint(world, c);
        }
        points.push_back(from);
        points.push_back(to);
        const Vec3 Rn = R.dot(c.n) * c.n;
        normal.push_back(Rn);
        tangential.push_back(R - Rn);
        magnitude.push_back(R.norm());
        bodyA.push_back(static_cast<std::int64_t>(ids[a]));
        bodyB.push_back(static_cast<std::int64_t>(ids[b]));
        periodic.push_back(crosses ? 1 : 0);
        if (world.hasShapes()) touch.push_back(contactPoint(world, c));
    }
    const std::size_t lines = normal.size();

    std::string s;
    s.reserve(256 + lines * 300);
    polyDataHeader(s, points.size(), 0, lines);
    s += "      <CellData Scalars=\"force_magnitude\" Vectors=\"normal_force\">\n";
    vectorArray(s, "normal_force", normal);
    vectorArray(s, "tangential_force", tangential);
    scalarArray(s, "force_magnitude", magnitude);
    integerArray<std::int64_t>(s, "Int64", "a", bodyA);
    integerArray<std::int64_t>(s, "Int64", "b", bodyB);
    integerArray<std::uint8_t>(s, "UInt8", "periodic", periodic);
    if (world.hasShapes()) vectorArray(s, "contact_point", touch);  // on a's surface: the lines join centres
    s += "      </CellData>\n";
    pointsCellsAndFooter(s, points, "Lines", lines, 2);
    return s;
}

/// A unit vector u ⟂ d and v = d × u: a basis of the plane normal to d,
/// from the coordinate axis least aligned with d (axis-aligned walls get
/// axis-aligned quads).
std::pair<Vec3, Vec3> planeBasis(const Vec3& d) {
    int k = 0;
    for (int e = 1; e < 3; ++e)
        if (std::abs(d[e]) < std::abs(d[k])) k = e;
    const Vec3 u = d.cross(Vec3::Unit(k)).normalized();
    return {u, d.cross(u)};
}

}  // namespace

WallsView wallsView(const World& world, const std::vector<Contact>& contacts) {
    WallsView view;
    view.grains = world.numGrains > 0;
    if (view.grains) view.lo = view.hi = world.x[0];
    for (std::size_t i = 0; i < world.numGrains; ++i) {
        view.lo = view.lo.cwiseMin(world.x[i] - Vec3::Constant(world.radius[i]));
        view.hi = view.hi.cwiseMax(world.x[i] + Vec3::Constant(world.radius[i]));
    }
    wallLoads(world, contacts, view.force, view.torque);
    return view;
}

namespace {

std::string wallsDocument(const World& world, const WallsView& view) {
    // The box the walls are drawn across: the grains' extent (centres ±
    // radii), the periodic box on periodic axes; without grains, ±1 about
    // each wall's point.
    const std::size_t n = world.numGrains;
    const bool grains = view.grains;
    Vec3 lo = view.lo, hi = view.hi;
    for (int k = 0; k < 3 && grains; ++k)
        if (world.periodic[static_cast<std::size_t>(k)]) {
            lo[k] = world.boxMin[k];
            hi[k] = world.boxMax[k];
        }
    // Range of (corner − p) · e over the 8 corners of that box.
    auto span = [&](const Vec3& p, const Vec3& e) {
        const Vec3 l = grains ? lo : Vec3(p - Vec3::Ones()), h = grains ? hi : Vec3(p + Vec3::Ones());
        double a = std::numeric_limits<double>::infinity(), b = -a;
        for (int c = 0; c < 8; ++c) {
            const Vec3 corner(c & 1 ? h[0] : l[0], c & 2 ? h[1] : l[1], c & 4 ? h[2] : l[2]);
            const double t = (corner - p).dot(e);
            a = std::min(a, t);
            b = std::max(b, t);
        }
        return std::pair<double, double>(a, b);
    };
    const std::vector<Vec3>& force = view.force;
    const std::vector<Vec3>& torque = view.torque;
    std::vector<Vec3> points, cellForce, cellTorque;
    std::vector<std::int64_t> index;
    std::vector<std::string> name;
    constexpr int kSides = 48;  // quads around a cylinder
    for (std::size_t k = 0; k < world.numWalls(); ++k) {
        const WallShape& shape = world.wallShape[k];
        const Vec3& p = world.x[n + k];
        const auto [u, v] = planeBasis(shape.direction);
        int cells = 0;
        if (shape.kind == ShapeKind::Plane) {
            // One quad of the plane over the box's shadow on it.
            const auto [u0, u1] = span(p, u);
            const auto [v0, v1] = span(p, v);
            for (const auto& [s, t] : {std::pair(u0, v0), std::pair(u1, v0), std::pair(u1, v1), std::pair(u0, v1)})
                points.push_back(p + s * u + t * v);
            cells = 1;
        } else {
            // A band of quads at the cylinder's radius along the box's extent on the axis.
            const auto [t0, t1] = span(p, shape.direction);
            for (int j = 0; j < kSides; ++j) {
                const double a0 = 2.0 * M_PI * j / kSides, a1 = 2.0 * M_PI * (j + 1) / kSides;
                const Vec3 r0 = shape.radius * (std::cos(a0) * u + std::sin(a0) * v);
                const Vec3 r1 = shape.radius * (std::cos(a1) * u + std::sin(a1) * v);
                for (const Vec3& q : {Vec3(t0 * shape.direction + r0), Vec3(t0 * shape.direction + r1),
                                      Vec3(t1 * shape.direction + r1), Vec3(t1 * shape.direction + r0)})
                    points.push_back(p + q);
            }
            cells = kSides;
        }
        for (int c = 0; c < cells; ++c) {
            index.push_back(static_cast<std::int64_t>(k));
            name.push_back(world.wallName[k]);
            cellForce.push_back(force[k]);
            cellTorque.push_back(torque[k]);
        }
    }
    const std::size_t quads = index.size();

    std::string s;
    s.reserve(512 + quads * 300);
    polyDataHeader(s, points.size(), 0, 0, quads);
    s += "      <CellData Scalars=\"index\" Vectors=\"force\">\n";
    integerArray<std::int64_t>(s, "Int64", "index", index);
    stringArray(s, "name", name);
    vectorArray(s, "force", cellForce);
    vectorArray(s, "torque", cellTorque);
    s += "      </CellData>\n";
    pointsCellsAndFooter(s, points, "Polys", quads, 4);
    return s;
}

/// "grains_000042_p3.vtp": rank 3's piece of step 42.
std::string pieceName(const char* prefix, long step, int rank) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%s_%06ld_p%d.vtp", prefix, step, rank);
    return buf;
}

/// A parallel PolyData file over the `pieces` piece files of `step`
/// (ranks 0 .. pieces−1), declaring the arrays of `kind` ("grains": point
/// data; "contacts": cell data), with `clumps` their orientation and
/// contact_point.
std::string parallelDocument(const std::string& kind, long step, int pieces, bool clumps) {
    std::string s =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
        "  <PPolyData GhostLevel=\"0\">\n";
    auto array = [&s](const char* type, const char* name, int components) {
        s += "      <PDataArray type=\"";
        s += type;
        s += "\" Name=\"";
        s += name;
        s += "\" NumberOfComponents=\"";
        appendInt(s, components);
        s += "\"/>\n";
    };
    // The arrays of grainsDocument (point data) and contactsDocument (cell data).
    struct Array {
        const char* type;
        const char* name;
        int components;
    };
    const bool grains = kind == "grains";
    std::vector<Array> arrays =
        grains ? std::vector<Array>{{"Float64", "radius", 1}, {"Float64", "velocity", 3},
                                    {"Float64", "angular_velocity", 3}, {"Int64", "id", 1}, {"Float64", "stress", 9}}
               : std::vector<Array>{{"Float64", "normal_force", 3}, {"Float64", "tangential_force", 3},
                                    {"Float64", "force_magnitude", 1}, {"Int64", "a", 1}, {"Int64", "b", 1},
                                    {"UInt8", "periodic", 1}};
    if (clumps) arrays.push_back(grains ? Array{"Float64", "orientation", 4} : Array{"Float64", "contact_point", 3});
    s += grains ? "    <PPointData Scalars=\"radius\" Vectors=\"velocity\">\n"
                : "    <PCellData Scalars=\"force_magnitude\" Vectors=\"normal_force\">\n";
    for (const Array& a : arrays) array(a.type, a.name, a.components);
    s += grains ? "    </PPointData>\n" : "    </PCellData>\n";
    s += "    <PPoints>\n";
    array("Float64", "Points", 3);
    s += "    </PPoints>\n";
    for (int r = 0; r < pieces; ++r) s += "    <Piece Source=\"" + pieceName(kind.c_str(), step, r) + "\"/>\n";
    s += "  </PPolyData>\n"
         "</VTKFile>\n";
    return s;
}

/// A parallel PolyData file over the ranks' shapes pieces of `step`: the
/// component spheres' point data (radius, id) or the outlines' cell data (id).
std::string parallelShapesDocument(long step, int pieces, VtkShapes shapes) {
    const bool polygons = shapes == VtkShapes::Polygons;
    std::string s =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
        "  <PPolyData GhostLevel=\"0\">\n";
    s += polygons ? "    <PCellData>\n"
                    "      <PDataArray type=\"Int64\" Name=\"id\" NumberOfComponents=\"1\"/>\n"
                    "    </PCellData>\n"
                  : "    <PPointData Scalars=\"radius\">\n"
                    "      <PDataArray type=\"Float64\" Name=\"radius\" NumberOfComponents=\"1\"/>\n"
                    "      <PDataArray type=\"Int64\" Name=\"id\" NumberOfComponents=\"1\"/>\n"
                    "    </PPointData>\n";
    s += "    <PPoints>\n"
         "      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n"
         "    </PPoints>\n";
    for (int r = 0; r < pieces; ++r) s += "    <Piece Source=\"" + pieceName("shapes", step, r) + "\"/>\n";
    s += "  </PPolyData>\n"
         "</VTKFile>\n";
    return s;
}

/// Replaces the entry of the same file (a step written twice) or appends.
void recordSnapshot(std::vector<std::pair<double, std::string>>& files, double time, const std::string& name) {
    for (auto& entry : files)
        if (entry.second == name) {
            entry.first = time;
            return;
        }
    files.emplace_back(time, name);
}

}  // namespace

// --- SeriesWriter ---------------------------------------------------------------

SeriesWriter::SeriesWriter(const std::filesystem::path& file, const World& world, long resumeAfter,
                           bool naturalError, bool stageColumn)
    : naturalColumn_(naturalError), stageColumn_(stageColumn) {
    std::string header =
        "step,time,kinetic_energy,rotational_energy,contacts,iterations,residual,mean_overlap,max_overlap,"
        "elastic_energy,stress_xx,stress_yy,stress_zz,stress_xy,stress_xz,stress_yz,pressure,deviator,"
        "packing_fraction,coordination,coordination_nonrattlers,fabric_xx,fabric_yy,fabric_zz,fabric_xy,fabric_xz,"
        "fabric_yz";
    if (naturalColumn_) header += ",natural_error";
    cellColumns_ = world.anyPeriodic();
    // Wherever Lees–Edwards shear can run (x and y periodic), whether or not
    // it runs at the start: a shear started later (Python's set_cell_rates)
    // keeps the columns, and a resumed run's header is the first part's.
    shiftColumn_ = world.periodic[0] && world.periodic[1];
    if (cellColumns_) header += ",cell_lx,cell_ly,cell_lz";
    if (shiftColumn_) header += ",cell_shift,shear_strain";
    for (std::size_t k = 0; k < world.numWalls(); ++k) {
        if (!world.wallMobile[k]) continue;
        mobileWalls_.push_back(k);
        for (const char* axis : {"_x", "_y", "_z"}) header += ",wall_" + world.wallName[k] + axis;
    }
    for (std::size_t k = 0; k < world.numWalls(); ++k)
        for (const char* axis : {"_fx", "_fy", "_fz", "_tx", "_ty", "_tz"})
            header += ",wall_" + world.wallName[k] + axis;
    if (stageColumn_) header += ",stage";
    header += '\n';
    if (resumeAfter < 0) {
        out_ = OutputStream(file, false);
        out_.write(header);
    } else {
        // Keep the header and the whole rows up to step resumeAfter; what a
        // stopped run wrote after it (a row cut mid-way too) goes.
        std::ifstream in(file, std::ios::binary);
        if (!in) throw InputError("cannot resume: '" + file.string() + "' is missing");
        std::string line;
        std::size_t keep = 0;
        if (!std::getline(in, line) || line + '\n' != header)
            throw InputError("cannot resume: '" + file.string() + "' does not start with this run's header");
        keep = header.size();
        while (std::getline(in, line) && !in.eof()) {
            long step = -1;
            const auto res = std::from_chars(line.data(), line.data() + line.size(), step);
            if (res.ec != std::errc() || *res.ptr != ',' || step > resumeAfter) break;
            keep += line.size() + 1;
        }
        in.close();
        std::error_code ec;
        std::filesystem::resize_file(file, keep, ec);
        if (ec) throw InputError("cannot resume: cannot cut '" + file.string() + "': " + ec.message());
        out_ = OutputStream(file, true);
    }
}

void SeriesWriter::flush() { out_.flush(); }

void SeriesWriter::write(const World& world, const StepRecord& r, const std::string& stage) {
    std::string row;
    row.reserve(256);
    appendInt(row, r.step);
    auto put = [&row](double value) {
        row += ',';
        appendNumber(row, value);
    };
    for (double value : {r.time, r.kineticEnergy, r.rotationalEnergy}) put(value);
    row += ',';
    appendInt(row, r.contacts);
    row += ',';
    appendInt(row, r.iterations);
    const Mat3& s = r.stress;
    const Mat3& f = r.fabric;
    for (double value : {r.residual, r.meanOverlap, r.maxOverlap, r.elasticEnergy, s(0, 0), s(1, 1), s(2, 2), s(0, 1),
                         s(0, 2), s(1, 2), r.pressure, r.deviator, r.packingFraction, r.coordination,
                         r.coordinationNonRattlers, f(0, 0), f(1, 1), f(2, 2), f(0, 1), f(0, 2), f(1, 2)})
        put(value);
    if (naturalColumn_) put(r.naturalError);
    if (cellColumns_)
        for (int k = 0; k < 3; ++k)
            put(world.periodic[static_cast<std::size_t>(k)] ? world.boxMax[k] - world.boxMin[k] : 0.0);
    if (shiftColumn_) {
        put(world.shift);
        put(world.shearStrain);
    }
    for (std::size_t w : mobileWalls_)  // by wall: a rank's part of the world has the walls, not every grain
        for (int k = 0; k < 3; ++k) put(world.x[world.numGrains + w][k]);
    for (std::size_t k = 0; k < world.numWalls(); ++k) {
        for (int e = 0; e < 3; ++e) put(k < r.wallForce.size() ? r.wallForce[k][e] : 0.0);
        for (int e = 0; e < 3; ++e) put(k < r.wallTorque.size() ? r.wallTorque[k][e] : 0.0);
    }
    if (stageColumn_) {
        row += ',';
        row += stage;
    }
    row += '\n';
    out_.write(row);
}

// --- VtkWriter ------------------------------------------------------------------

VtkWriter::VtkWriter(const std::filesystem::path& dir, long resumeAfter) : dir_(dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
        throw InputError("cannot create output folder '" + dir_.string() + "'");
    if (resumeAfter < 0) return;
    // The snapshots up to step resumeAfter stay in run.pvd; later ones go.
    std::ifstream in(dir_ / "run.pvd");
    std::string line;
    while (std::getline(in, line)) {
        const auto t = line.find("timestep=\""), f = line.find("file=\""), p = line.find("part=\"");
        if (t == std::string::npos || f == std::string::npos || p == std::string::npos) continue;
        const std::string name = line.substr(f + 6, line.find('"', f + 6) - f - 6);
        const auto underscore = name.find('_');
        long step = -1;
        double time = 0.0;
        std::from_chars(name.data() + underscore + 1, name.data() + name.size(), step);
        std::from_chars(line.data() + t + 10, line.data() + line.size(), time);
        if (underscore == std::string::npos || step < 0 || step > resumeAfter) {
            // Only a snapshot file of this folder goes: never a path out of
            // it, a link or a special file that run.pvd happens to name.
            if (name.find('/') == std::string::npos && std::filesystem::is_regular_file(
                                                           std::filesystem::symlink_status(dir_ / name, ec)))
                std::filesystem::remove(dir_ / name, ec);
            continue;
        }
        const char part = line[p + 6];
        recordSnapshot(part == '0'   ? grainFiles_
                       : part == '1' ? contactFiles_
                       : part == '2' ? wallFiles_
                                     : shapeFiles_,
                       time, name);
    }
    writePvd();
}

void VtkWriter::write(const World& world, const std::vector<Contact>& contacts, long step, double time, int pieces) {
    std::string grains = snapshotName("grains", step);
    std::string network = snapshotName("contacts", step);
    if (pieces > 0) {  // the ranks wrote their pieces (writeVtkPiece)
        grains.replace(grains.size() - 3, 3, "pvtp");
        network.replace(network.size() - 3, 3, "pvtp");
        writeFileAtomically(dir_ / grains, parallelDocument("grains", step, pieces, world.hasShapes()));
        writeFileAtomically(dir_ / network, parallelDocument("contacts", step, pieces, world.hasShapes()));
    } else {
        const std::vector<std::uint64_t> ids = identity(world.numBodies());
        std::vector<std::size_t> all(world.numGrains);
        std::iota(all.begin(), all.end(), std::size_t{0});
        writeFileAtomically(dir_ / grains, grainsDocument(world, all, ids, grainStress(world, contacts)));
        writeFileAtomically(dir_ / network, contactsDocument(world, contacts, ids));
    }
    recordSnapshot(grainFiles_, time, grains);
    recordSnapshot(contactFiles_, time, network);
    if (world.numWalls() > 0) {
        const std::string walls = snapshotName("walls", step);
        writeFileAtomically(dir_ / walls, wallsDocument(world, wallsView(world, contacts)));
        recordSnapshot(wallFiles_, time, walls);
    }
    if (const VtkShapes kind = vtkShapesOf(world); kind != VtkShapes::None) {
        const std::string shapes = snapshotName("shapes", step);
        std::vector<std::size_t> all(world.numGrains);
        std::iota(all.begin(), all.end(), std::size_t{0});
        writeFileAtomically(dir_ / shapes, shapesDocument(world, kind, all, identity(world.numBodies())));
        recordSnapshot(shapeFiles_, time, shapes);
    }
    writePvd();
}

void VtkWriter::writeParallel(const World& world, const WallsView& walls, long step, double time, int pieces,
                              VtkShapes shapes) {
    std::string grains = snapshotName("grains", step), network = snapshotName("contacts", step);
    grains.replace(grains.size() - 3, 3, "pvtp");
    network.replace(network.size() - 3, 3, "pvtp");
    writeFileAtomically(dir_ / grains, parallelDocument("grains", step, pieces, world.hasShapes()));
    writeFileAtomically(dir_ / network, parallelDocument("contacts", step, pieces, world.hasShapes()));
    recordSnapshot(grainFiles_, time, grains);
    recordSnapshot(contactFiles_, time, network);
    if (world.numWalls() > 0) {
        const std::string name = snapshotName("walls", step);
        writeFileAtomically(dir_ / name, wallsDocument(world, walls));
        recordSnapshot(wallFiles_, time, name);
    }
    if (shapes != VtkShapes::None) {
        std::string name = snapshotName("shapes", step);
        name.replace(name.size() - 3, 3, "pvtp");
        writeFileAtomically(dir_ / name, parallelShapesDocument(step, pieces, shapes));
        recordSnapshot(shapeFiles_, time, name);
    }
    writePvd();
}

void writeVtkPiece(const std::filesystem::path& dir, const World& world, std::span<const std::size_t> grains,
                   std::span<const std::uint64_t> ids, std::span<const Mat3> stress,
                   const std::vector<Contact>& contacts, long step, int rank, VtkShapes shapes) {
    writeFileAtomically(dir / pieceName("grains", step, rank), grainsDocument(world, grains, ids, stress));
    writeFileAtomically(dir / pieceName("contacts", step, rank), contactsDocument(world, contacts, ids));
    if (shapes != VtkShapes::None)
        writeFileAtomically(dir / pieceName("shapes", step, rank), shapesDocument(world, shapes, grains, ids));
}

VtkShapes vtkShapesOf(const World& world) {
    return world.hasPolygons() ? VtkShapes::Polygons : world.hasClumps() ? VtkShapes::Spheres : VtkShapes::None;
}

void VtkWriter::writePvd() const {
    // Two to four parts per time step: ParaView's PVD reader groups them
    // into one multiblock data set (block 0 grains, block 1 contact network,
    // block 2 walls, block 3 the clumps' component spheres).
    std::string s =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        "  <Collection>\n";
    // Each part carries its block's name (ParaView's PVD reader names the
    // blocks by it: grains, contacts, walls, shapes, not Block0 … Block3).
    auto entry = [&s](double time, int part, const std::string& file) {
        static const char* const kNames[] = {"grains", "contacts", "walls", "shapes"};
        s += "    <DataSet timestep=\"";
        appendNumber(s, time);
        s += "\" group=\"\" part=\"";
        appendInt(s, part);
        s += "\" name=\"";
        s += kNames[part];
        s += "\" file=\"" + file + "\"/>\n";
    };
    for (std::size_t i = 0; i < grainFiles_.size(); ++i) {
        entry(grainFiles_[i].first, 0, grainFiles_[i].second);
        if (i < contactFiles_.size()) entry(contactFiles_[i].first, 1, contactFiles_[i].second);
        if (i < wallFiles_.size()) entry(wallFiles_[i].first, 2, wallFiles_[i].second);
        if (i < shapeFiles_.size()) entry(shapeFiles_[i].first, 3, shapeFiles_[i].second);
    }
    s += "  </Collection>\n"
         "</VTKFile>\n";
    writeFileAtomically(dir_ / "run.pvd", s);
}

// --- JSON -------------------------------------------------------------------------

void writeJsonFile(const std::filesystem::path& file, const nlohmann::json& doc) {
    writeFileAtomically(file, doc.dump(2) + "\n");
}

nlohmann::json phaseSeconds(const StepProfile& p, bool cd) {
    nlohmann::json s = {{"controls", p.controls}, {"detect", p.detect},       {"match", p.match},
                        {"solve", p.solve},       {"integrate", p.integrate}, {"observe", p.observe}};
    if (!cd) s["integrate_forces"] = p.integrateForces;
    if (cd) {
        s["solve_prepare"] = p.cdPrepare;
        s["solve_warm_start"] = p.cdWarmStart;
        s["solve_sweeps"] = p.cdSweeps;
        s["solve_store"] = p.cdStore;
    }
    return s;
}

}  // namespace moreau
