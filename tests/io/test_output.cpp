#include <doctest/doctest.h>
#include <lz4.h>

#include <cctype>

#include <cstring>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/output.hpp"
#include "support/contacts.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
namespace fs = std::filesystem;

namespace {

using moreau::test::loadedContact;
using moreau::test::readFile;
using moreau::test::TempDir;

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<std::string> splitCommas(const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    return cells;
}

double parseDouble(const std::string& s) {
    char* end = nullptr;
    const double value = std::strtod(s.c_str(), &end);
    REQUIRE_MESSAGE(end == s.c_str() + s.size(), "not a number: '" << s << "'");
    return value;
}

/// The integer value of the first `name="..."` attribute in `xml`.
long attribute(const std::string& xml, const std::string& name) {
    const auto at = xml.find(name + "=\"");
    REQUIRE_MESSAGE(at != std::string::npos, "attribute " << name << " missing");
    return std::stol(xml.substr(at + name.size() + 2));
}

/// The tag of the DataArray named `name` (from '<DataArray' to '>').
std::string arrayTag(const std::string& xml, const std::string& name) {
    const auto at = xml.find("Name=\"" + name + "\"");
    REQUIRE_MESSAGE(at != std::string::npos, "DataArray " << name << " missing");
    const auto begin = xml.rfind("<DataArray", at);
    return xml.substr(begin, xml.find('>', at) - begin + 1);
}

/// Base64 text decoded (RFC 4648; padding ends it).
std::string fromBase64(const std::string& text) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::string out;
    unsigned bits = 0;
    int held = 0;
    for (char c : text) {
        const int v = value(c);
        if (v < 0) continue;  // padding, blanks
        bits = (bits << 6) | static_cast<unsigned>(v);
        held += 6;
        if (held >= 8) {
            held -= 8;
            out += static_cast<char>((bits >> held) & 0xFF);
        }
    }
    return out;
}

/// The bytes of the DataArray named `name`, as the writer stores them:
/// base64 of the LZ4 header (#blocks, block size, last partial size, each
/// block's compressed size: UInt64s), then base64 of the compressed blocks.
std::string arrayBytes(const std::string& xml, const std::string& name) {
    const std::string tag = arrayTag(xml, name);
    REQUIRE_MESSAGE(tag.find("format=\"binary\"") != std::string::npos, "DataArray " << name << " is not binary");
    const auto at = xml.find("Name=\"" + name + "\"");
    const auto begin = xml.find('>', at) + 1;
    std::string text;
    for (char c : xml.substr(begin, xml.find("</DataArray>", begin) - begin))
        if (!std::isspace(static_cast<unsigned char>(c))) text += c;
    const std::string first = fromBase64(text.substr(0, 32));  // 24 bytes: #blocks, sizes
    std::uint64_t head[3];
    std::memcpy(head, first.data(), sizeof head);
    const std::size_t headerBytes = (3 + head[0]) * 8, headerChars = 4 * ((headerBytes + 2) / 3);
    const std::string header = fromBase64(text.substr(0, headerChars));
    const std::string packed = fromBase64(text.substr(headerChars));
    std::string out;
    std::size_t from = 0;
    for (std::uint64_t b = 0; b < head[0]; ++b) {
        std::uint64_t compressed;
        std::memcpy(&compressed, header.data() + 8 * (3 + b), 8);
        const auto size = static_cast<int>(b + 1 == head[0] && head[2] != 0 ? head[2] : head[1]);
        std::string block(static_cast<std::size_t>(size), '\0');
        REQUIRE(LZ4_decompress_safe(packed.data() + from, block.data(), static_cast<int>(compressed), size) == size);
        out += block;
        from += compressed;
    }
    return out;
}

/// The values of the DataArray named `name` (Float64, Int64, UInt8; a
/// String's bytes), as doubles.
std::vector<double> arrayValues(const std::string& xml, const std::string& name) {
    const std::string tag = arrayTag(xml, name), bytes = arrayBytes(xml, name);
    std::vector<double> values;
    auto all = [&]<class T>(T) {
        for (std::size_t k = 0; k + sizeof(T) <= bytes.size(); k += sizeof(T)) {
            T v;
            std::memcpy(&v, bytes.data() + k, sizeof v);
            values.push_back(static_cast<double>(v));
        }
    };
    if (tag.find("\"Float64\"") != std::string::npos) all(double{});
    else if (tag.find("\"Int64\"") != std::string::npos) all(std::int64_t{});
    else all(std::uint8_t{});  // UInt8, String
    return values;
}

long count(const std::string& text, const std::string& what) {
    long n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

/// Three grains and two walls (a fixed floor, a mobile piston).
World smallWorld() {
    World world;
    world.addGrain({0.5, 0.5, 0.5}, 0.5, 1.0, 0.1);
    world.addGrain({1.5, 0.5, 0.5}, 0.25, 2.0, 0.2);
    world.addGrain({2.5, 0.5, 0.5}, 0.5, 1.0, 0.1);
    world.addWall("floor", WallShape{}, {0, 0, 0}, false, 0.0, {false, false, false});
    world.addWall("piston", WallShape{}, {0, 0, 3}, true, 4.0, {false, false, true});
    world.v[1] = {0.1, -0.2, 0.3};
    world.w[2] = {0, 1e-20, 7};
    return world;
}


}  // namespace

TEST_SUITE("io") {
    TEST_CASE("series.csv: header and rows read back exactly") {
        TempDir tmp;
        const World world = smallWorld();
        const fs::path file = tmp.path / "sub" / "series.csv";
        StepRecord r;
        r.step = 42;
        r.time = 0.1 + 0.2;  // not a short decimal: needs all 17 digits
        r.kineticEnergy = 1.0 / 3.0;
        r.rotationalEnergy = 2.5e-310;  // subnormal
        r.contacts = 17;
        r.iterations = 80;
        r.residual = 1e-9;
        r.meanOverlap = 3.14159e-5;
        r.maxOverlap = 0.001;
        r.elasticEnergy = 0.25;
        r.stress << 1, 4, 5, 4, 2, 6, 5, 6, 3;
        r.pressure = 2.0;
        r.deviator = 0.5;
        r.packingFraction = 0.6;
        r.coordination = 4.5;
        r.coordinationNonRattlers = 5.25;
        r.fabric << 0.25, 0.125, 0.0625, 0.125, 0.5, -0.03125, 0.0625, -0.03125, 0.25;
        r.wallForce = {Vec3(0, 0, -7), Vec3(0, 0, 1.0 / 3.0)};
        r.wallTorque = {Vec3(1.5, -2.5, 0), Vec3(0, 0.1, 0)};
        {
            SeriesWriter series(file, world);
            series.write(world, r);
            World moved = world;
            moved.x[4] = {0, 0, 2.9999999999999996};
            StepRecord r2 = r;
            r2.step = 43;
            series.write(moved, r2);
        }
        const auto lines = splitLines(readFile(file));
        REQUIRE(lines.size() == 3);
        CHECK(lines[0] ==
              "step,time,kinetic_energy,rotational_energy,contacts,iterations,residual,mean_overlap,max_overlap,"
              "elastic_energy,stress_xx,stress_yy,stress_zz,stress_xy,stress_xz,stress_yz,pressure,deviator,"
              "packing_fraction,coordination,coordination_nonrattlers,fabric_xx,fabric_yy,fabric_zz,fabric_xy,"
              "fabric_xz,fabric_yz,wall_piston_x,wall_piston_y,wall_piston_z,wall_floor_fx,wall_floor_fy,"
              "wall_floor_fz,wall_floor_tx,wall_floor_ty,wall_floor_tz,wall_piston_fx,wall_piston_fy,"
              "wall_piston_fz,wall_piston_tx,wall_piston_ty,wall_piston_tz");

        const auto row = splitCommas(lines[1]);
        REQUIRE(row.size() == 42);
        CHECK(row[0] == "42");
        CHECK(parseDouble(row[1]) == r.time);
        CHECK(parseDouble(row[2]) == r.kineticEnergy);
        CHECK(parseDouble(row[3]) == r.rotationalEnergy);
        CHECK(row[4] == "17");
        CHECK(row[5] == "80");
        CHECK(parseDouble(row[6]) == r.residual);
        CHECK(parseDouble(row[7]) == r.meanOverlap);
        CHECK(parseDouble(row[8]) == r.maxOverlap);
        CHECK(parseDouble(row[9]) == r.elasticEnergy);
        const double expected[] = {1, 2, 3, 4, 5, 6, 2.0, 0.5, 0.6, 4.5, 5.25};  // xx yy zz xy xz yz p q phi Z Z'
        for (int k = 0; k < 11; ++k) CHECK(parseDouble(row[static_cast<std::size_t>(10 + k)]) == expected[k]);
        const double fabric[] = {0.25, 0.5, 0.25, 0.125, 0.0625, -0.03125};  // xx yy zz xy xz yz
        for (int k = 0; k < 6; ++k) CHECK(parseDouble(row[static_cast<std::size_t>(21 + k)]) == fabric[k]);
        CHECK(parseDouble(row[27]) == 0.0);
        CHECK(parseDouble(row[28]) == 0.0);
        CHECK(parseDouble(row[29]) == 3.0);
        CHECK(parseDouble(row[32]) == -7.0);
        CHECK(parseDouble(row[33]) == 1.5);
        CHECK(parseDouble(row[34]) == -2.5);
        CHECK(parseDouble(row[38]) == 1.0 / 3.0);
        CHECK(parseDouble(row[40]) == 0.1);

        const auto row2 = splitCommas(lines[2]);
        REQUIRE(row2.size() == 42);
        CHECK(row2[0] == "43");
        CHECK(parseDouble(row2[29]) == 2.9999999999999996);
    }

    TEST_CASE("series.csv without mobile walls has the fixed columns and the wall forces only") {
        TempDir tmp;
        World world;
        world.addGrain({0, 0, 0}, 0.5, 1.0, 0.1);
        world.addWall("floor", WallShape{}, {0, 0, -1}, false, 0.0, {false, false, false});
        { SeriesWriter series(tmp.path / "series.csv", world); }
        const auto lines = splitLines(readFile(tmp.path / "series.csv"));
        REQUIRE(lines.size() == 1);
        CHECK(splitCommas(lines[0]).size() == 27 + 6);
    }

    TEST_CASE("an unwritable path is an InputError that names it") {
        TempDir tmp;
        const fs::path blocker = tmp.path / "not_a_folder";
        std::ofstream(blocker) << "x";
        const fs::path file = blocker / "series.csv";
        try {
            SeriesWriter series(file, smallWorld());
            FAIL("no exception");
        } catch (const InputError& e) {
            CHECK(std::string(e.what()).find(file.string()) != std::string::npos);
        }
        CHECK_THROWS_AS(writeJsonFile(blocker / "summary.json", nlohmann::json::object()), InputError);
        CHECK_THROWS_AS(VtkWriter(blocker / "vtk"), InputError);
    }

    TEST_CASE("VTK snapshots of a small world with contacts") {
        TempDir tmp;
        World world = smallWorld();
        const fs::path dir = tmp.path / "vtk";
        std::vector<Contact> contacts{
            loadedContact(0, 1, {3, 1, 0}, 0.0, {1, 0, 0}),      // loaded grain pair
            loadedContact(1, 2, Vec3::Zero(), 0.0, {1, 0, 0}),   // unloaded: not drawn
            loadedContact(2, 3, {0.5, 0, -2}, 0.0, {0, 0, -1}),  // grain on the floor
        };

        VtkWriter vtk(dir);
        vtk.write(world, contacts, 0, 0.0);
        world.x[0][2] = 0.75;
        vtk.write(world, contacts, 10, 0.5);

        for (const char* name : {"grains_000000.vtp", "contacts_000000.vtp", "walls_000000.vtp", "grains_000010.vtp",
                                 "contacts_000010.vtp", "walls_000010.vtp", "run.pvd"})
            CHECK_MESSAGE(fs::exists(dir / name), name);
        for (const auto& entry : fs::directory_iterator(dir))
            CHECK_MESSAGE(entry.path().extension() != ".tmp", entry.path().string());

        SUBCASE("grains: points, vertices and arrays") {
            const std::string xml = readFile(dir / "grains_000010.vtp");
            CHECK(xml.find("type=\"PolyData\"") != std::string::npos);
            CHECK(attribute(xml, "NumberOfPoints") == 3);
            CHECK(attribute(xml, "NumberOfVerts") == 3);
            CHECK(arrayTag(xml, "radius").find("Float64") != std::string::npos);
            CHECK(arrayTag(xml, "velocity").find("NumberOfComponents=\"3\"") != std::string::npos);
            CHECK(arrayTag(xml, "angular_velocity").find("NumberOfComponents=\"3\"") != std::string::npos);
            CHECK(arrayTag(xml, "id").find("Int64") != std::string::npos);
            CHECK(arrayValues(xml, "radius") == std::vector<double>{0.5, 0.25, 0.5});
            CHECK(arrayValues(xml, "velocity") == std::vector<double>{0, 0, 0, 0.1, -0.2, 0.3, 0, 0, 0});
            CHECK(arrayValues(xml, "angular_velocity") == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 1e-20, 7});
            CHECK(arrayValues(xml, "id") == std::vector<double>{0, 1, 2});
            CHECK(arrayValues(xml, "Points") ==
                  std::vector<double>{0.5, 0.5, 0.75, 1.5, 0.5, 0.5, 2.5, 0.5, 0.5});
            CHECK(arrayValues(xml, "connectivity") == std::vector<double>{0, 1, 2});
            CHECK(arrayValues(xml, "offsets") == std::vector<double>{1, 2, 3});
            // Per-grain stress R ⊗ r n / V_grain (compression positive), row-major.
            CHECK(arrayTag(xml, "stress").find("NumberOfComponents=\"9\"") != std::string::npos);
            const auto stress = arrayValues(xml, "stress");
            REQUIRE(stress.size() == 27);
            const double v0 = 4.0 / 3.0 * M_PI * 0.125, v1 = 4.0 / 3.0 * M_PI * 0.015625;
            const double grain0[9] = {3 * 0.5 / v0, 0, 0, 1 * 0.5 / v0, 0, 0, 0, 0, 0};
            const double grain1[9] = {3 * 0.25 / v1, 0, 0, 1 * 0.25 / v1, 0, 0, 0, 0, 0};
            // Grain 2 on the floor: R = (0.5, 0, −2) on the floor, n = −z.
            const double grain2[9] = {0, 0, -0.5 * 0.5 / v0, 0, 0, 0, 0, 0, 2 * 0.5 / v0};
            for (int k = 0; k < 9; ++k) {
                CHECK(stress[static_cast<std::size_t>(k)] == doctest::Approx(grain0[k]).epsilon(1e-14));
                CHECK(stress[static_cast<std::size_t>(9 + k)] == doctest::Approx(grain1[k]).epsilon(1e-14));
                CHECK(stress[static_cast<std::size_t>(18 + k)] == doctest::Approx(grain2[k]).epsilon(1e-14));
            }
        }

        SUBCASE("contacts: one line per loaded contact, forces split along n") {
            const std::string xml = readFile(dir / "contacts_000000.vtp");
            CHECK(attribute(xml, "NumberOfLines") == 2);
            CHECK(attribute(xml, "NumberOfPoints") == 4);
            CHECK(arrayValues(xml, "normal_force") == std::vector<double>{3, 0, 0, 0, 0, -2});
            CHECK(arrayValues(xml, "tangential_force") == std::vector<double>{0, 1, 0, 0.5, 0, 0});
            const auto magnitude = arrayValues(xml, "force_magnitude");
            REQUIRE(magnitude.size() == 2);
            CHECK(magnitude[0] == doctest::Approx(std::sqrt(10.0)).epsilon(1e-15));
            CHECK(magnitude[1] == doctest::Approx(std::sqrt(4.25)).epsilon(1e-15));
            // centre to centre, then grain centre to the contact point on the floor
            CHECK(arrayValues(xml, "Points") ==
                  std::vector<double>{0.5, 0.5, 0.5, 1.5, 0.5, 0.5, 2.5, 0.5, 0.5, 2.5, 0.5, 0});
            CHECK(arrayValues(xml, "connectivity") == std::vector<double>{0, 1, 2, 3});
            CHECK(arrayValues(xml, "offsets") == std::vector<double>{2, 4});
            CHECK(xml.find("<CellData") != std::string::npos);
            CHECK(arrayTag(xml, "a").find("Int64") != std::string::npos);
            CHECK(arrayTag(xml, "periodic").find("UInt8") != std::string::npos);
            CHECK(arrayValues(xml, "a") == std::vector<double>{0, 2});
            CHECK(arrayValues(xml, "b") == std::vector<double>{1, 3});
            CHECK(arrayValues(xml, "periodic") == std::vector<double>{0, 0});
        }

        SUBCASE("walls: a quad each over the grains' extent, with name, index, force and torque") {
            const std::string xml = readFile(dir / "walls_000000.vtp");
            CHECK(attribute(xml, "NumberOfPolys") == 2);
            CHECK(attribute(xml, "NumberOfPoints") == 8);
            // The grains span x 0..3, y 0..1, z 0..1: the floor (z = 0) and
            // the piston (z = 3) cover x 0..3, y 0..1 (basis u = y, v = −x).
            CHECK(arrayValues(xml, "Points") == std::vector<double>{3, 0, 0, 3, 1, 0, 0, 1, 0, 0, 0, 0,  //
                                                                    3, 0, 3, 3, 1, 3, 0, 1, 3, 0, 0, 3});
            CHECK(arrayValues(xml, "offsets") == std::vector<double>{4, 8});
            CHECK(arrayValues(xml, "index") == std::vector<double>{0, 1});
            CHECK(arrayTag(xml, "name").find("type=\"String\"") != std::string::npos);
            // "floor" and "piston" as character codes, each ended by 0.
            CHECK(arrayValues(xml, "name") == std::vector<double>{102, 108, 111, 111, 114, 0,  //
                                                                  112, 105, 115, 116, 111, 110, 0});
            CHECK(arrayValues(xml, "force") == std::vector<double>{0.5, 0, -2, 0, 0, 0});
            // About the floor's point (0, 0, 0): contact point (2.5, 0.5, 0) × (0.5, 0, −2).
            CHECK(arrayValues(xml, "torque") == std::vector<double>{-1, 5, -0.25, 0, 0, 0});
        }

        SUBCASE("run.pvd lists the three series with their times, each part named as its block") {
            const std::string pvd = readFile(dir / "run.pvd");
            CHECK(pvd.find("type=\"Collection\"") != std::string::npos);
            CHECK(count(pvd, "<DataSet ") == 6);
            CHECK(pvd.find("timestep=\"0.5\" group=\"\" part=\"2\" name=\"walls\" file=\"walls_000010.vtp\"") !=
                  std::string::npos);
            CHECK(pvd.find("timestep=\"0\" group=\"\" part=\"0\" name=\"grains\" file=\"grains_000000.vtp\"") != std::string::npos);
            CHECK(pvd.find("timestep=\"0\" group=\"\" part=\"1\" name=\"contacts\" file=\"contacts_000000.vtp\"") !=
                  std::string::npos);
            CHECK(pvd.find("timestep=\"0.5\" group=\"\" part=\"0\" name=\"grains\" file=\"grains_000010.vtp\"") !=
                  std::string::npos);
            CHECK(pvd.find("timestep=\"0.5\" group=\"\" part=\"1\" name=\"contacts\" file=\"contacts_000010.vtp\"") !=
                  std::string::npos);
        }

        SUBCASE("writing a step again replaces its entry") {
            vtk.write(world, contacts, 10, 0.5);
            CHECK(count(readFile(dir / "run.pvd"), "<DataSet ") == 6);
        }

        SUBCASE("steps beyond six digits keep all of them") {
            vtk.write(world, {}, 1234567, 2.0);
            CHECK(fs::exists(dir / "grains_1234567.vtp"));
            const std::string xml = readFile(dir / "contacts_1234567.vtp");
            CHECK(attribute(xml, "NumberOfLines") == 0);
            CHECK(arrayValues(xml, "normal_force").empty());
        }
    }

    TEST_CASE("VTK contact lines across a periodic boundary stay short") {
        TempDir tmp;
        World world;
        world.periodic = {true, false, false};
        world.boxMin = {0, 0, 0};
        world.boxMax = {10, 1, 1};
        world.addGrain({9.7, 0.5, 0.5}, 0.5, 1.0, 0.1);
        world.addGrain({0.2, 0.5, 0.5}, 0.5, 1.0, 0.1);
        VtkWriter vtk(tmp.path);
        vtk.write(world, {loadedContact(0, 1, {1, 0, 0}, 0.0, {1, 0, 0})}, 3, 3.0);
        const auto points = arrayValues(readFile(tmp.path / "contacts_000003.vtp"), "Points");
        REQUIRE(points.size() == 6);
        CHECK(points[0] == 9.7);
        CHECK(points[3] == doctest::Approx(10.2).epsilon(1e-12));
        CHECK(arrayValues(readFile(tmp.path / "contacts_000003.vtp"), "periodic") == std::vector<double>{1});
    }

    TEST_CASE("VTK walls: a cylinder is a band of quads at its radius over the grains' extent along its axis") {
        TempDir tmp;
        World world;
        world.addGrain({0.3, 0, 1}, 0.5, 1.0, 0.1);
        world.addGrain({-0.2, 0.4, 2.5}, 0.25, 1.0, 0.1);
        WallShape drum;
        drum.kind = ShapeKind::Cylinder;
        drum.direction = Vec3::UnitZ();
        drum.radius = 2.0;
        world.addWall("drum", drum, {0, 0, 7}, false, 0.0, {false, false, false});
        VtkWriter vtk(tmp.path);
        vtk.write(world, {}, 0, 0.0);
        const std::string xml = readFile(tmp.path / "walls_000000.vtp");
        CHECK(attribute(xml, "NumberOfPolys") == 48);
        const auto points = arrayValues(xml, "Points");
        REQUIRE(points.size() == 48 * 4 * 3);
        double zMin = 1e9, zMax = -1e9;
        for (std::size_t i = 0; i < points.size(); i += 3) {
            CHECK(std::hypot(points[i], points[i + 1]) == doctest::Approx(2.0).epsilon(1e-14));
            zMin = std::min(zMin, points[i + 2]);
            zMax = std::max(zMax, points[i + 2]);
        }
        CHECK(zMin == doctest::Approx(0.5).epsilon(1e-14));  // the grains span z 0.5 .. 2.75
        CHECK(zMax == doctest::Approx(2.75).epsilon(1e-14));
        CHECK(arrayValues(xml, "force") == std::vector<double>(48 * 3, 0.0));
    }

    TEST_CASE("writeJsonFile: indented, parses back, no temporary left") {
        TempDir tmp;
        const nlohmann::json doc = {{"method", "cd"}, {"steps", 20}, {"wall_seconds", 0.125},
                                    {"particles", 300}, {"mean_iterations", 40.5},
                                    {"nested", {{"list", {1, 2, 3}}}}};
        const fs::path file = tmp.path / "out" / "summary.json";
        writeJsonFile(file, doc);
        const std::string text = readFile(file);
        CHECK(nlohmann::json::parse(text) == doc);
        CHECK(text.find("\n  \"method\": \"cd\"") != std::string::npos);
        CHECK(!fs::exists(tmp.path / "out" / "summary.json.tmp"));

        writeJsonFile(file, nlohmann::json{{"steps", 1}});
        CHECK(nlohmann::json::parse(readFile(file)) == nlohmann::json{{"steps", 1}});
    }
}
