#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unistd.h>

#include "moreau/core/error.hpp"
#include "moreau/io/embedded_scenes.hpp"
#include "moreau/io/scene_file.hpp"
#include "support/input_error.hpp"
#include "support/temp_dir.hpp"

using namespace moreau;
using moreau::test::errorOf;
using moreau::test::TempDir;

namespace {

/// The error of loading `text` (origin "t.ini") with `sets`.
std::string loadError(const std::string& text, const std::vector<std::string>& sets = {},
                      const std::vector<KeySpec>& extra = {}) {
    return errorOf([&] { loadSceneText(text, "t.ini", sets, extra); });
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }


const char* kSmallChain =
    "[simulation]\n"
    "dimension = 1\n"
    "[chain]\n"
    "count = 5\n";

}  // namespace

TEST_SUITE("io") {

TEST_CASE("an empty scene takes every default and stores every key") {
    const Scene s = loadSceneText("", "empty.ini", {});
    CHECK(s.origin == "empty.ini");
    CHECK(s.simulation.method == Method::CD);
    CHECK(s.simulation.dt == 1.0);
    CHECK(s.simulation.steps == 1000);
    CHECK(s.simulation.seed == 1);
    CHECK(s.cd.iterations == 40);
    CHECK(s.cd.criterion == Criterion::Fixed);
    CHECK(s.cd.epsilon == 1e-4);
    CHECK(s.cd.delta == 1e-9);
    CHECK(s.cd.maxIterations == 10000);
    CHECK(s.cd.order == SweepOrder::RandomSweep);
    CHECK(s.cd.warmStart);
    CHECK(s.cd.gapPositive);
    CHECK(s.output.every == 1);
    CHECK(s.output.vtkEvery == 0);
    CHECK(s.world.dimension == 3);
    CHECK(s.world.numGrains == 50);  // default chain
    CHECK(s.world.numWalls() == 0);
    CHECK(s.simulation.margin == doctest::Approx(0.1 * 0.5).epsilon(1e-15));
    CHECK(s.values.at("cd.iterations") == "40");
    CHECK(s.values.at("simulation.gravity") == "0 0 0");
    CHECK(s.values.at("packing.file").empty());
    // Every key of the reference is in values.
    const std::string ref = sceneReference();
    std::size_t keys = 0;
    std::istringstream lines(ref);
    for (std::string line; std::getline(lines, line);) {
        const auto eq = line.find(" = ");
        if (eq == std::string::npos || line.substr(0, eq).find(' ') != std::string::npos || contains(line, "NAME"))
            continue;
        ++keys;
        CHECK_MESSAGE(s.values.count(line.substr(0, eq)) == 1, line);
    }
    CHECK(keys == s.values.size());
    CHECK(keys > 40);
}

TEST_CASE("file values, quotes, inline comments, and --set wins over the file") {
    const std::string text =
        "# comment\n"
        "[simulation]\n"
        "dt = 0.5   # inline comment\n"
        "steps = 10\n"
        "gravity = \"0, 0, -9.81\"\n"
        "[cd]\n"
        "iterations = 20\n"
        "warm_start = off\n"
        "order = fixed\n"
        "criterion = local\n"
        "gap = plain\n";
    const Scene a = loadSceneText(text, "t.ini", {});
    CHECK(a.simulation.dt == 0.5);
    CHECK(a.simulation.steps == 10);
    CHECK(a.world.gravity.isApprox(Vec3(0, 0, -9.81)));
    CHECK(a.values.at("simulation.gravity") == "0 0 -9.81");
    CHECK(a.cd.iterations == 20);
    CHECK_FALSE(a.cd.warmStart);
    CHECK(a.values.at("cd.warm_start") == "false");
    CHECK(a.cd.order == SweepOrder::Fixed);
    CHECK(a.cd.criterion == Criterion::Local);
    CHECK_FALSE(a.cd.gapPositive);

    const Scene b = loadSceneText(text, "t.ini",
                                  {"cd.iterations=80", "simulation.dt = 2", "cd.warm_start=YES",
                                   "cd.order=shuffle-once", "cd.criterion=global", "simulation.method=md",
                                   "cd.iterations=90"});
    CHECK(b.cd.iterations == 90);  // the last --set wins
    CHECK(b.values.at("cd.iterations") == "90");
    CHECK(b.simulation.dt == 2.0);
    CHECK(b.cd.warmStart);
    CHECK(b.cd.order == SweepOrder::ShuffleOnce);
    CHECK(b.cd.criterion == Criterion::Global);
    CHECK(b.simulation.method == Method::MD);
    CHECK(b.simulation.steps == 10);  // untouched file value

    const Scene c = loadSceneText("", "t.ini", {"cd.order=random-sequential", "simulation.seed=18446744073709551615"});
    CHECK(c.cd.order == SweepOrder::RandomSequential);
    CHECK(c.simulation.seed == 18446744073709551615ULL);
}

TEST_CASE("unknown keys are named with a suggestion") {
    CHECK(loadError("[cd]\niteratons = 3\n") ==
          "t.ini:2: unknown key 'cd.iteratons' (did you mean 'cd.iterations'?)");
    CHECK(loadError("", {"cd.iteratons=3"}) == "--set: unknown key 'cd.iteratons' (did you mean 'cd.iterations'?)");
    CHECK(loadError("[chian]\ncount = 3\n") == "t.ini:1: unknown section [chian] (did you mean [chain]?)");
    CHECK(loadError("[chian]\n") == "t.ini:1: unknown section [chian] (did you mean [chain]?)");
    CHECK(loadError("", {"chian.count=3"}) == "--set: unknown key 'chian.count' (did you mean 'chain.count'?)");
    CHECK(loadError("iterations = 3\n") == "t.ini:1: unknown key 'iterations' (did you mean 'cd.iterations'?)");
    CHECK(loadError("[wall.lid]\nmobil = true\n") ==
          "t.ini:2: unknown key 'wall.lid.mobil' (did you mean 'wall.lid.mobile'?)");
    CHECK(loadError("[foo]\nbar = 1\n") == "t.ini:1: unknown section [foo] (see 'moreau run --help' for the sections)");
    CHECK(loadError("", {"foo.bar=1"}) == "--set: unknown key 'foo.bar' (see 'moreau run --help' for the keys)");
    CHECK(loadError("[force]\ngrains = last\n") ==
          "t.ini:1: section [force] needs a named section: [force.NAME] (e.g. [force.push]), NAME of letters, digits "
          "and '_'");
    CHECK(contains(loadError("", {"force.grains=last"}), "--set: key 'force.grains' needs a named section"));
    CHECK(contains(loadError("[wall.a-b]\ntype = plane\n"), "t.ini:1: bad section name 'wall.a-b'"));
    CHECK(contains(loadError("", {"wall.a-b.type=plane"}), "--set: key 'wall.a-b.type': bad section name 'wall.a-b'"));
}

TEST_CASE("bad values name origin, key, value and what is allowed") {
    CHECK(loadError("[cd]\niterations = abc\n") ==
          "t.ini:2: key 'cd.iterations': 'abc' is not an integer (allowed: integer >= 1)");
    CHECK(loadError("", {"cd.iterations=0"}) ==
          "--set: key 'cd.iterations': '0' is out of range (allowed: integer >= 1)");
    CHECK(loadError("", {"cd.iterations=1.5"}) ==
          "--set: key 'cd.iterations': '1.5' is not an integer (allowed: integer >= 1)");
    CHECK(loadError("", {"simulation.dimension=4"}) ==
          "--set: key 'simulation.dimension': '4' is out of range (allowed: integer in [1, 3])");
    CHECK(loadError("", {"simulation.seed=-1"}) ==
          "--set: key 'simulation.seed': '-1' is out of range (allowed: integer >= 0)");
    CHECK(loadError("", {"simulation.seed=18446744073709551616"}) ==
          "--set: key 'simulation.seed': '18446744073709551616' is out of range (allowed: integer >= 0)");
    CHECK(loadError("", {"simulation.dt=0"}) == "--set: key 'simulation.dt': '0' is out of range (allowed: real > 0)");
    CHECK(loadError("", {"simulation.dt=fast"}) ==
          "--set: key 'simulation.dt': 'fast' is not a number (allowed: real > 0)");
    CHECK(loadError("", {"simulation.dt=inf"}) ==
          "--set: key 'simulation.dt': 'inf' is not a finite number (allowed: real > 0)");
    CHECK(loadError("", {"simulation.dt=nan"}) ==
          "--set: key 'simulation.dt': 'nan' is not a number (allowed: real > 0)");
    CHECK(loadError("", {"contact.mu=-0.1"}) ==
          "--set: key 'contact.mu': '-0.1' is out of range (allowed: real >= 0)");
    CHECK(loadError("", {"cd.warm_start=maybe"}) ==
          "--set: key 'cd.warm_start': 'maybe' is not a boolean (allowed: true or false (also 1/0, yes/no, on/off))");
    CHECK(loadError("", {"cd.criterion=loose"}) ==
          "--set: key 'cd.criterion': 'loose' is not allowed (allowed: fixed|local|global|natural)");
    CHECK(loadError("", {"simulation.gravity=0 -9.81"}) ==
          "--set: key 'simulation.gravity': '0 -9.81' is not a vector of three numbers (allowed: three numbers 'x y z')");
    CHECK(loadError("", {"simulation.gravity=0 0 g"}) ==
          "--set: key 'simulation.gravity': '0 0 g' is not a vector of three numbers (allowed: three numbers 'x y z')");
    CHECK(loadError("", {"periodic.axes=xq"}) ==
          "--set: key 'periodic.axes': 'xq' is not a subset of xyz (allowed: a subset of xyz)");
    CHECK(contains(loadError("", {"periodic.axes=xx"}), "'xx' is not a subset of xyz"));
    CHECK(contains(loadError("", {"lattice.counts=3 0 3"}), "key 'lattice.counts': '3 0 3'"));
    CHECK(contains(loadError("[force.a]\ngrains = 1, two\n"), "key 'force.a.grains': '1, two' is not a grain selection"));
    CHECK(contains(loadError("[force.a]\nchange_time = soon\n"), "(allowed: real, or inf/never)"));
    CHECK(contains(loadError("[wall.a]\nmu = -1\n"), "key 'wall.a.mu': '-1' is out of range (allowed: real >= 0, or empty)"));
    // A bad file value is an error even when --set overrides it.
    CHECK(contains(loadError("[cd]\niterations = abc\n", {"cd.iterations=3"}), "t.ini:2: key 'cd.iterations'"));
}

TEST_CASE("malformed --set, duplicate keys, syntax errors, missing files") {
    CHECK(loadError("", {"cd.iterations"}) ==
          "--set: malformed 'cd.iterations' (expected section.key=value, e.g. cd.iterations=80)");
    CHECK(contains(loadError("", {"=3"}), "--set: malformed '=3'"));
    CHECK(loadError("[cd]\niterations = 3\niterations = 4\n") == "t.ini:3: key 'cd.iterations' is given twice (first on line 2)");
    CHECK(contains(loadError("[cd]\njust words\n"), "t.ini:2: 'just words' is neither"));
    CHECK(contains(loadError("[]\nx = 1\n"), "t.ini:1: empty section header"));
    CHECK(contains(loadError("[cd\n"), "t.ini:1: '[cd' is not a section header"));
    CHECK(contains(loadError("\n\n[cd]\n = 3\n"), "t.ini:4: '= 3' has no key"));
    // A UTF-8 byte order mark is not part of the first line.
    CHECK(loadSceneText("\xEF\xBB\xBF[cd]\niterations = 7\n", "t.ini", {}).cd.iterations == 7);

    TempDir dir;
    const std::string missing = (dir.path / "x.ini").string();
    CHECK(errorOf([&] { loadSceneFile(missing, {}); }) == "cannot read scene file '" + missing + "'");
    CHECK(errorOf([&] { loadSceneFile(dir.path.string(), {}); }) ==
          "cannot read scene file '" + dir.path.string() + "': a directory");
    CHECK(contains(errorOf([&] { loadBuiltinScene("nope.ini", {}); }), "no built-in scene 'nope.ini' (available: "));
}

TEST_CASE("scene files on disk name themselves in errors") {
    TempDir dir;
    const std::string path = dir.write("bad.ini", "[cd]\niterations = abc\n");
    CHECK(errorOf([&] { loadSceneFile(path, {}); }) ==
          path + ":2: key 'cd.iterations': 'abc' is not an integer (allowed: integer >= 1)");
    const std::string good = dir.write("good.ini", kSmallChain);
    const Scene s = loadSceneFile(good, {"chain.count=7"});
    CHECK(s.origin == good);
    CHECK(s.world.numGrains == 7);
}

TEST_CASE("grain sources: chain, lattice, random, file") {
    SUBCASE("chain with velocity masked to the dimension") {
        const Scene s = loadSceneText(kSmallChain, "t.ini", {"chain.origin=1.5 0 0", "grains.velocity=1 2 3"});
        REQUIRE(s.world.numGrains == 5);
        CHECK(s.world.x[0].isApprox(Vec3(1.5, 0, 0)));
        CHECK(s.world.x[4].isApprox(Vec3(5.5, 0, 0)));
        CHECK(s.world.v[3].isApprox(Vec3(1, 0, 0)));
        CHECK(s.world.invMass[0].isApprox(Vec3(1.0 / s.world.mass[0], 0, 0)));
    }
    SUBCASE("lattice in 2D and 3D, with type checked against the dimension") {
        const Scene sq = loadSceneText("[simulation]\ndimension=2\n[grains]\nsource=lattice\n[lattice]\ntype=hex\ncounts=4 3\n",
                                       "t.ini", {});
        CHECK(sq.world.numGrains == 12);
        const Scene cu = loadSceneText("[grains]\nsource=lattice\n[lattice]\ncounts=2,3,4\nradius=0.25\n", "t.ini", {});
        CHECK(cu.world.numGrains == 24);
        CHECK(cu.simulation.margin == doctest::Approx(0.025).epsilon(1e-15));
        CHECK(loadError("[grains]\nsource=lattice\n", {"simulation.dimension=2"}) ==
              "t.ini: key 'lattice.type': 'cubic' needs simulation.dimension = 3 (allowed: square|hex in 2D)");
        CHECK(contains(loadError("[grains]\nsource=lattice\n[lattice]\ntype=square\n"),
                       "key 'lattice.type': 'square' needs simulation.dimension = 2"));
        CHECK(contains(loadError("[grains]\nsource=lattice\n[lattice]\ncounts=2 2\n"), "gives no z count"));
    }
    SUBCASE("random packing seeded by simulation.seed") {
        const std::string text =
            "[simulation]\ndimension = 2\n[grains]\nsource = random\n"
            "[random]\ncount = 60\nr_min = 0.25\nr_max = 0.5\nbox_max = 10 10 10\n";
        const Scene a = loadSceneText(text, "t.ini", {});
        const Scene b = loadSceneText(text, "t.ini", {});
        const Scene c = loadSceneText(text, "t.ini", {"simulation.seed=2"});
        REQUIRE(a.world.numGrains == 60);
        CHECK(a.world.x == b.world.x);
        CHECK(a.world.x != c.world.x);
        double rMin = 1;
        for (std::size_t i = 0; i < 60; ++i) {
            CHECK(a.world.x[i][2] == 0.0);
            rMin = std::min(rMin, a.world.radius[i]);
        }
        CHECK(a.simulation.margin == doctest::Approx(0.1 * rMin).epsilon(1e-15));
        CHECK(loadError(text, {"random.r_max=0.2"}) ==
              "--set: key 'random.r_max': '0.2' is below random.r_min = 0.25 (allowed: real >= random.r_min)");
        CHECK(contains(loadError(text, {"random.count=1000"}), "key 'random.count': '1000' is too many: only "));
        CHECK(contains(loadError(text, {"random.count=1000"}), "larger box"));
        CHECK(contains(loadError(text, {"random.box_max=0.8 10 10"}), "key 'random.box_max'"));
    }
    SUBCASE("packing file relative to the scene file, or to the working directory from --set") {
        TempDir dir;
        dir.write("data/pack.txt", "# x y z r\n0 0 0 0.5\n1 0 0 0.5\n");
        const std::string scene =
            dir.write("scene.ini", "[grains]\nsource = file\n[packing]\nfile = data/pack.txt\n");
        const Scene s = loadSceneFile(scene, {});
        CHECK(s.world.numGrains == 2);
        CHECK(s.values.at("packing.file") == "data/pack.txt");
        // From --set, a relative path is taken from the working directory.
        CHECK(contains(errorOf([&] { loadSceneFile(scene, {"packing.file=data/pack.txt"}); }),
                       "cannot read packing file 'data/pack.txt'"));
        const Scene abs = loadSceneFile(scene, {"packing.file=" + (dir.path / "data/pack.txt").string()});
        CHECK(abs.world.numGrains == 2);
        CHECK(loadError("[grains]\nsource = file\n") ==
              "t.ini: key 'packing.file': '' is empty (allowed: a packing file path (required when grains.source = file))");
        dir.write("data/bad.txt", "0 0 0 0.5\n0 0 0\n");
        CHECK(contains(errorOf([&] { loadSceneFile(scene, {"packing.file=" + (dir.path / "data/bad.txt").string()}); }),
                       "bad.txt', line 2"));
    }
}

TEST_CASE("grain masses: density, fixed mass, disk and sphere inertia") {
    const double pi = std::acos(-1.0);
    const Scene sph = loadSceneText("[chain]\ncount=2\nradius=0.5\n[grains]\ndensity=2\n", "t.ini", {});
    CHECK(sph.world.mass[0] == doctest::Approx(2 * 4.0 / 3.0 * pi * 0.125).epsilon(1e-14));
    CHECK(sph.world.inertia[0] == doctest::Approx(0.4 * sph.world.mass[0] * 0.25).epsilon(1e-14));
    const Scene disk = loadSceneText("[simulation]\ndimension=2\n[chain]\ncount=2\n", "t.ini", {});
    CHECK(disk.world.mass[0] == doctest::Approx(pi * 0.25).epsilon(1e-14));
    CHECK(disk.world.inertia[0] == doctest::Approx(0.5 * disk.world.mass[0] * 0.25).epsilon(1e-14));
    CHECK(disk.world.invInertia[0].isApprox(Vec3(0, 0, 1.0 / disk.world.inertia[0])));
    const Scene sph2 = loadSceneText("[simulation]\ndimension=2\n[grains]\ninertia=sphere\nmass=3\n", "t.ini", {});
    CHECK(sph2.world.mass[0] == 3.0);
    CHECK(sph2.world.inertia[0] == doctest::Approx(0.4 * 3.0 * 0.25).epsilon(1e-14));
    CHECK(loadError("[grains]\ninertia=disk\n") ==
          "t.ini:2: key 'grains.inertia': 'disk' is not possible in 3D (allowed: auto|sphere in 3D)");
}

TEST_CASE("force sections choose grains and sum") {
    const std::string text = std::string(kSmallChain) +
                             "[force.push]\n"
                             "grains = last\n"
                             "value = -0.05 0 0\n"
                             "[force.kick]\n"
                             "grains = 0, -1\n"
                             "value = 1 0 0\n"
                             "change_time = 10\n"
                             "value_after = 2 0 0\n"
                             "[force.all]\n"
                             "grains = all\n"
                             "value = 0 0 -1\n"
                             "change_time = never\n";
    const Scene s = loadSceneText(text, "t.ini", {});
    const World& w = s.world;
    REQUIRE(w.numGrains == 5);
    CHECK(w.appliedForce(4, 0.0).isApprox(Vec3(0.95, 0, -1)));
    CHECK(w.appliedForce(4, 10.0).isApprox(Vec3(1.95, 0, -1)));
    CHECK(w.appliedForce(0, 0.0).isApprox(Vec3(1, 0, -1)));
    CHECK(w.appliedForce(0, 20.0).isApprox(Vec3(2, 0, -1)));
    CHECK(w.force[2].at(0.0).isApprox(Vec3(0, 0, -1)));
    CHECK(w.force[2].at(1e9).isApprox(Vec3(0, 0, -1)));
    CHECK(std::isinf(w.force[2].switchTime));
    CHECK(s.values.at("force.push.grains") == "last");
    CHECK(s.values.at("force.push.value_after") == "-0.05 0 0");  // derived default
    CHECK(s.values.at("force.all.change_time") == "inf");

    CHECK(loadError(std::string(kSmallChain) + "[force.a]\ngrains = 5\n") ==
          "t.ini:6: key 'force.a.grains': '5' selects a grain out of range (allowed: first, last, all, indices or "
          "ranges i..j in [-5, 4] for 5 grains)");
    CHECK(contains(loadError(std::string(kSmallChain) + "[force.a]\ngrains = -6\n"), "out of range"));
    {
        // Ranges i..j, both ends included, negative ends from the end.
        const Scene r = loadSceneText(std::string(kSmallChain) + "[force.a]\ngrains = 0..1, -2..-1\nvalue = 1 0 0\n",
                                      "t.ini", {});
        for (std::size_t i = 0; i < 5; ++i) CHECK(r.world.force[i].before.x() == (i == 2 ? 0.0 : 1.0));
    }
    CHECK(contains(loadError(std::string(kSmallChain) + "[force.a]\ngrains = 3..1\n"), "with i after j"));
    CHECK(contains(loadError(std::string(kSmallChain) + "[force.a]\ngrains =\n"), "'' selects no grain"));
    CHECK(contains(loadError(std::string(kSmallChain) +
                                 "[force.a]\ngrains=1\nchange_time=3\n[force.b]\ngrains=1\nchange_time=4\n"),
                   "key 'force.b.change_time': '4' differs from that of [force.a] on grain 1"));
    // --set creates and edits dynamic sections too.
    const Scene t = loadSceneText(kSmallChain, "t.ini", {"force.push.value=-1 0 0"});
    CHECK(t.world.force[4].at(0).isApprox(Vec3(-1, 0, 0)));
}

TEST_CASE("wall sections: planes, cylinders, mobile piston, prescribed velocity, name order") {
    const std::string text =
        "[simulation]\ndimension = 2\n"
        "[contact]\nmu = 0.05\n"
        "[grains]\nsource = lattice\n[lattice]\ntype = square\ncounts = 3 3\n"
        "[wall.piston]\n"
        "point = 0 10 0\n"
        "normal = 0 -2 0\n"
        "mobile = true\n"
        "mass = 4\n"
        "free = y\n"
        "force = 0 -0.05 0\n"
        "change_time = 1000\n"
        "force_after = 0 -0.075 0\n"
        "[wall.base]\n"
        "normal = 0 1 0\n"
        "mu = 0.5\n"
        "[wall.drum]\n"
        "type = cylinder\n"
        "point = 1 1 0\n"
        "axis = 0 0 3\n"
        "radius = 20\n"
        "side = inside\n"
        "velocity = 1 0 0\n";
    const Scene s = loadSceneText(text, "t.ini", {});
    const World& w = s.world;
    REQUIRE(w.numGrains == 9);
    REQUIRE(w.numWalls() == 3);
    // Sorted by name: base, drum, piston.
    CHECK(w.wallName == std::vector<std::string>{"base", "drum", "piston"});
    const std::size_t base = 9, drum = 10, piston = 11;
    CHECK(w.wallShape[0].kind == ShapeKind::Plane);
    CHECK(w.wallShape[0].mu == 0.5);
    CHECK(w.invMass[base] == Vec3::Zero());

    CHECK(w.wallShape[1].kind == ShapeKind::Cylinder);
    CHECK(w.wallShape[1].direction.isApprox(Vec3(0, 0, 1)));
    CHECK(w.wallShape[1].radius == 20.0);
    CHECK(w.wallShape[1].inside);
    CHECK(w.wallShape[1].mu == 0.05);  // contact.mu
    CHECK(w.prescribed[drum]);
    CHECK(w.v[drum].isApprox(Vec3(1, 0, 0)));
    CHECK(w.invMass[drum] == Vec3::Zero());

    CHECK(w.wallMobile[2]);
    CHECK(w.x[piston].isApprox(Vec3(0, 10, 0)));
    CHECK(w.wallShape[2].direction.isApprox(Vec3(0, -1, 0)));  // normalised
    CHECK(w.invMass[piston].isApprox(Vec3(0, 0.25, 0)));
    CHECK(w.invMass[piston][0] == 0.0);
    CHECK(w.invMass[piston][2] == 0.0);
    CHECK(w.mass[piston] == 4.0);
    CHECK_FALSE(w.prescribed[piston]);
    CHECK(w.force[piston].at(999).isApprox(Vec3(0, -0.05, 0)));
    CHECK(w.force[piston].at(1000).isApprox(Vec3(0, -0.075, 0)));
    CHECK(s.values.at("wall.drum.mu") == "0.05");
    CHECK(s.values.at("wall.base.force_after") == "0 0 0");

    CHECK(loadError(text, {"wall.piston.mass=0"}) ==
          "--set: key 'wall.piston.mass': '0' is not > 0 for a mobile wall (allowed: real > 0 when mobile = true)");
    CHECK(contains(loadError(text, {"wall.piston.free=z"}), "key 'wall.piston.free': 'z' leaves a mobile wall no axis"));
    CHECK(contains(loadError(text, {"wall.base.normal=0 0 0"}), "key 'wall.base.normal': '0 0 0' is the zero vector"));
    CHECK(contains(loadError(text, {"wall.drum.axis=0,0,0"}), "key 'wall.drum.axis': '0 0 0' is the zero vector"));
    CHECK(contains(loadError(text, {"wall.base.force=0 1 0"}), "key 'wall.base.force': '0 1 0' acts on a fixed wall"));
    CHECK(contains(loadError(text, {"wall.drum.radius=0"}), "key 'wall.drum.radius': '0' is out of range (allowed: real > 0)"));
    CHECK(contains(loadError(text, {"wall.drum.side=above"}), "(allowed: inside|outside)"));
}

TEST_CASE("a key-less [wall.NAME] makes a default wall, and blanks in headers are ignored") {
    const Scene s = loadSceneText(std::string(kSmallChain) + "[wall.floor]\n[ wall.side ]\nnormal = 1 0 0\n", "t.ini",
                                  {"simulation.dimension=3"});
    REQUIRE(s.world.numWalls() == 2);
    CHECK(s.world.wallName == std::vector<std::string>{"floor", "side"});
    CHECK(s.world.wallShape[0].direction == Vec3(0, 0, 1));
    CHECK(s.world.wallShape[1].direction == Vec3(1, 0, 0));
    CHECK(s.values.at("wall.floor.type") == "plane");
    CHECK(s.values.at("wall.side.normal") == "1 0 0");
}

TEST_CASE("walls face the grains within their axes, and a mobile wall is driven along the axes it is not free on") {
    const std::string chain = std::string(kSmallChain) + "[wall.w]\n";
    CHECK(contains(loadError(chain + "normal = 0 0 1\n"),
                   "key 'wall.w.normal': '0 0 1' has a component along the locked axis z (allowed: a normal along x"));
    CHECK(contains(loadError(chain + "type = cylinder\nradius = 5\n"), "key 'wall.w.type': 'cylinder' is a cylinder in 1D"));
    CHECK(contains(loadError(chain + "type = cylinder\nradius = 5\naxis = 1 0 0\n", {"simulation.dimension=2"}),
                   "key 'wall.w.axis': '1 0 0' is not along z"));
    const std::string piston = chain + "normal = -1 0 0\npoint = 10 0 0\nmobile = true\nmass = 1\nfree = x\n";
    CHECK(loadSceneText(piston + "velocity = -1 0 0\n", "t.ini", {}).world.v.back() == Vec3(-1, 0, 0));
    // Free along x (its force acts there), driven along y at 1.
    const Scene driven = loadSceneText(piston + "velocity = -1 1 0\n", "t.ini", {"simulation.dimension=2"});
    CHECK(driven.world.v.back() == Vec3(-1, 1, 0));
    CHECK(driven.world.invMass.back() == Vec3(1, 0, 0));
    CHECK(driven.world.prescribed.back());
    CHECK(!loadSceneText(piston + "velocity = -1 0 0\n", "t.ini", {}).world.prescribed.back());
    CHECK(contains(loadError(piston + "velocity = -1 1 1\n", {"simulation.dimension=2"}),
                   "key 'wall.w.velocity': '-1 1 1' moves the wall along the locked axis z"));
    CHECK(contains(loadError(piston, {"wall.w.free=xz", "simulation.dimension=2"}),
                   "key 'wall.w.free': 'xz' frees the locked axis z"));
}

TEST_CASE("periodic keys") {
    const Scene s = loadSceneText("[periodic]\naxes = xy\nbox_min = 0 0 0\nbox_max = 10 20 0\n", "t.ini", {});
    CHECK(s.world.periodic == std::array<bool, 3>{true, true, false});
    CHECK(s.world.boxMin == Vec3(0, 0, 0));
    CHECK(s.world.boxMax == Vec3(10, 20, 0));
    const Scene none = loadSceneText("", "t.ini", {});
    CHECK_FALSE(none.world.anyPeriodic());
    CHECK(loadError("[periodic]\naxes = x\n") ==
          "t.ini: key 'periodic.box_min': '' is empty (allowed: three numbers 'x y z' (required when periodic.axes is "
          "set))");
    CHECK(contains(loadError("[periodic]\naxes = y\nbox_min = 0 0 0\nbox_max = 10 0 10\n"),
                   "key 'periodic.box_max': '10 0 10' is not above periodic.box_min along y"));
    CHECK(contains(loadError("[simulation]\ndimension=2\n[periodic]\naxes = z\nbox_min=0 0 0\nbox_max=1 1 1\n"),
                   "key 'periodic.axes': 'z' names an axis outside the dimension"));
}

TEST_CASE("output.stress_region: six finite numbers, min < max on the dimension's axes, one period at most") {
    CHECK_FALSE(loadSceneText(kSmallChain, "t.ini", {}).output.stressRegion);
    const Scene s = loadSceneText(std::string(kSmallChain) + "[output]\nstress_region = -1 5 0, 4.5 1 0\n", "t.ini", {});
    REQUIRE(s.output.stressRegion);
    CHECK((*s.output.stressRegion)[0] == Vec3(-1, 5, 0));  // y and z lie outside 1D's axes: not checked
    CHECK((*s.output.stressRegion)[1] == Vec3(4.5, 1, 0));
    const std::string allowed = "(allowed: six numbers 'xmin ymin zmin xmax ymax zmax' with min < max on the "
                                "dimension's axes and at most one period on a periodic axis, or empty)";
    CHECK(loadError("", {"output.stress_region=0 0 0 1 1"}) ==
          "--set: key 'output.stress_region': '0 0 0 1 1' is not six numbers " + allowed);
    CHECK(loadError("[output]\nstress_region = 0 0 0 1 1 inf\n") ==
          "t.ini:2: key 'output.stress_region': '0 0 0 1 1 inf' is not six finite numbers " + allowed);
    CHECK(loadError("[output]\nstress_region = 0 0 0 1 x 1\n") ==
          "t.ini:2: key 'output.stress_region': '0 0 0 1 x 1' is not six finite numbers " + allowed);
    CHECK(loadError("[output]\nstress_region = 0 2 0 1 2 1\n") ==
          "t.ini:2: key 'output.stress_region': '0 2 0 1 2 1' does not have min < max along y " + allowed);
    CHECK(contains(loadError(std::string(kSmallChain) + "[periodic]\naxes = x\nbox_min = 0 0 0\nbox_max = 10 1 1\n"
                                                        "[output]\nstress_region = -1 0 0 9.5 1 1\n"),
                   "key 'output.stress_region': '-1 0 0 9.5 1 1' is longer than the periodic box along x"));
}

TEST_CASE("extraKeys are accepted, validated, stored and readable") {
    std::vector<KeySpec> extra;
    extra.push_back({"experiment.fit_start", KeyType::Real, "100", "First step of the fit.", 0.0});
    extra.push_back({"experiment.lengths", KeyType::Text, "10,20", "Chain lengths."});
    extra.push_back({"experiment.plot", KeyType::Bool, "true", "Write a plot."});
    extra.push_back({"experiment.modes", KeyType::Integer, "2", "Modes.", 1, 5});
    KeySpec law{"experiment.law", KeyType::Choice, "hertz", "Force law."};
    law.choices = {"linear", "hertz"};
    extra.push_back(law);
    extra.push_back({"experiment.axis", KeyType::Vector, "1 0 0", "Axis."});
    KeySpec positive{"experiment.kappa", KeyType::Real, "1", "Stiffness.", 0.0};
    positive.minExclusive = true;
    extra.push_back(positive);

    const Scene s = loadSceneText("[experiment]\nfit_start = 50\n", "t.ini", {"experiment.plot=no"}, extra);
    CHECK(sceneReal(s, "experiment.fit_start") == 50.0);
    CHECK(sceneText(s, "experiment.lengths") == "10,20");
    CHECK_FALSE(sceneBool(s, "experiment.plot"));
    CHECK(sceneInteger(s, "experiment.modes") == 2);
    CHECK(sceneText(s, "experiment.law") == "hertz");
    CHECK(sceneVector(s, "experiment.axis") == Vec3(1, 0, 0));
    CHECK(sceneReal(s, "cd.epsilon") == 1e-4);
    CHECK_THROWS_AS(sceneReal(s, "experiment.nothing"), std::logic_error);
    CHECK_THROWS_AS(sceneInteger(s, "experiment.law"), std::logic_error);

    CHECK(loadError("", {"experiment.fit_start=-1"}, extra) ==
          "--set: key 'experiment.fit_start': '-1' is out of range (allowed: real >= 0)");
    CHECK(loadError("", {"experiment.modes=6"}, extra) ==
          "--set: key 'experiment.modes': '6' is out of range (allowed: integer in [1, 5])");
    CHECK(loadError("", {"experiment.kappa=0"}, extra) ==
          "--set: key 'experiment.kappa': '0' is out of range (allowed: real > 0)");
    CHECK(loadError("", {"experiment.law=spring"}, extra) ==
          "--set: key 'experiment.law': 'spring' is not allowed (allowed: linear|hertz)");
    CHECK(loadError("", {"experiment.fit_strat=3"}, extra) ==
          "--set: unknown key 'experiment.fit_strat' (did you mean 'experiment.fit_start'?)");
    // Far from every key: the experiment's own keys are listed.
    CHECK(loadError("", {"experiment.zzzzzzzzzz=3"}, extra) ==
          "--set: unknown key 'experiment.zzzzzzzzzz' (allowed: experiment.fit_start, experiment.lengths, "
          "experiment.plot, experiment.modes, experiment.law, experiment.axis, experiment.kappa)");
    // Without the declaration the key is unknown.
    CHECK(contains(loadError("", {"experiment.fit_start=50"}), "unknown key 'experiment.fit_start'"));
    CHECK(contains(loadError("", {"experiment.fit_start=50"}), "takes no experiment.* keys"));
    // Declaration mistakes are programming errors.
    CHECK_THROWS_AS(loadSceneText("", "t.ini", {}, {{"cd.iterations", KeyType::Integer, "1", "dup"}}), std::logic_error);
    CHECK_THROWS_AS(loadSceneText("", "t.ini", {}, {{"nosection", KeyType::Integer, "1", "x"}}), std::logic_error);
    CHECK_THROWS_AS(loadSceneText("", "t.ini", {}, {{"a.b", KeyType::Integer, "x", "bad default"}}), std::logic_error);
    // The reference lists them.
    CHECK(contains(sceneReference(extra), "experiment.fit_start = 100\n    allowed: real >= 0\n"));
    CHECK_FALSE(contains(sceneReference(), "experiment.fit_start"));
}

TEST_CASE("every embedded example loads") {
    const auto& scenes = embeddedScenes();
    for (const char* name : {"chain_1d.ini", "piston_2d.ini", "box_3d.ini", "head_on_pair_1d.ini", "grazing_pair_2d.ini",
                             "column_wall_1d.ini", "sphere_plate_2d.ini"}) {
        CAPTURE(name);
        REQUIRE(scenes.count(name) == 1);
    }
    for (const auto& [name, text] : scenes) {
        CAPTURE(name);
        CHECK_NOTHROW(loadBuiltinScene(name, {}));
    }

    const Scene chain = loadBuiltinScene("chain_1d.ini", {});
    CHECK(chain.origin == "chain_1d.ini");
    CHECK(chain.world.dimension == 1);
    REQUIRE(chain.world.numGrains == 50);
    REQUIRE(chain.world.numWalls() == 1);
    CHECK(chain.world.x[0].isApprox(Vec3(1.5, 0, 0)));
    CHECK(chain.world.mass[0] == 1.0);
    CHECK(chain.world.wallShape[0].direction.isApprox(Vec3(1, 0, 0)));
    CHECK(chain.world.force[49].at(0).isApprox(Vec3(-0.05, 0, 0)));
    CHECK(chain.world.force[48].at(0) == Vec3::Zero());
    CHECK(chain.cd.iterations == 40);
    CHECK(chain.simulation.dt == 1.0);
    CHECK(chain.simulation.steps == 600);

    const Scene piston = loadBuiltinScene("piston_2d.ini", {});
    CHECK(piston.world.dimension == 2);
    CHECK(piston.world.numGrains == 300);
    REQUIRE(piston.world.numWalls() == 4);
    const auto p = static_cast<std::size_t>(piston.world.numGrains + 2);  // base, left, piston, right
    CHECK(piston.world.wallName[2] == "piston");
    CHECK(piston.world.invMass[p][1] > 0.0);
    CHECK(piston.world.invMass[p][0] == 0.0);

    const Scene box = loadBuiltinScene("box_3d.ini", {"random.count=200"});
    CHECK(box.world.numGrains == 200);
    CHECK(box.world.numWalls() == 5);
    CHECK(box.output.vtkEvery == 100);
    CHECK(box.world.gravity.isApprox(Vec3(0, 0, -9.81)));
}

TEST_CASE("docs/scenes.md carries the current key reference") {
    std::ifstream in(std::string(MOREAU_SOURCE_DIR) + "/docs/scenes.md");
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    const std::string begin = "<!-- BEGIN KEY REFERENCE (generated: sceneReference()) -->\n```text\n";
    const std::string end = "```\n<!-- END KEY REFERENCE -->";
    const auto b = doc.find(begin);
    const auto e = doc.find(end);
    REQUIRE(b != std::string::npos);
    REQUIRE(e != std::string::npos);
    const std::string inDoc = doc.substr(b + begin.size(), e - b - begin.size());
    CHECK_MESSAGE(inDoc == sceneReference(), "docs/scenes.md is out of date; paste sceneReference() between the markers");
}

}  // TEST_SUITE
