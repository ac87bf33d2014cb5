// The fused MD pipeline (MdSolver's force stage over its pair list) against
// the staged one (over the contact list):
// the same trajectory bits, for every law pair it runs, with walls, periodic
// axes and list rebuilds, for 1 and 2 threads.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "moreau/analysis/observables.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/md/force_stage.hpp"
#include "moreau/sim/simulation.hpp"
#include "moreau/io/scene_file.hpp"

using namespace moreau;

namespace {

/// A loose polydisperse packing falling into a cylinder on a floor, with a
/// sideways push, so that contacts open, close, slide and the list rebuilds.
std::string cylinderScene(int count, bool push = true) {
    return "[simulation]\nmethod = md\ndimension = 3\ndt = 2e-4\nsteps = 1\nseed = 3\ngravity = 0 0 -60\n"
           "[contact]\nmu = 0.4\nmargin = 0.1\nskin = 0.2\n"
           "[md]\nkn = 2e4\ngamma_n = 20\nkt = 6e3\ngamma_t = 10\n"
           "[grains]\nsource = random\ndensity = 1\ninertia = sphere\n"
           "[random]\ncount = " + std::to_string(count) +
           "\nr_min = 0.3\nr_max = 0.5\nbox_min = -3 -3 0\nbox_max = 3 3 8\n"
           "[wall.floor]\npoint = 0 0 0\nnormal = 0 0 1\nmu = 0.25\n"
           "[wall.can]\ntype = cylinder\npoint = 0 0 0\naxis = 0 0 1\nradius = 4.4\nside = inside\n" +
           std::string(push ? "[force.push]\ngrains = first\nvalue = 3 0 0\n" : "");
}

/// A jittered cubic column of 2560 grains in contact on a floor, under
/// gravity and a sideways push: loaded contacts at every height, so every
/// cut of the list between threads runs through forces.
std::string latticeColumnScene() {
    return "[simulation]\nmethod = md\ndimension = 3\ndt = 2e-4\nsteps = 1\nseed = 3\ngravity = 0 0 -60\n"
           "[contact]\nmu = 0.4\nmargin = 0.1\nskin = 0.2\n"
           "[md]\nkn = 2e4\ngamma_n = 20\nkt = 6e3\ngamma_t = 10\n"
           "[grains]\nsource = lattice\ndensity = 1\ninertia = sphere\n"
           "[lattice]\ntype = cubic\ncounts = 8 8 40\nradius = 0.4\norigin = 0.4 0.4 0.4\njitter = 0.05\n"
           "[wall.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
           "[force.push]\ngrains = first\nvalue = 3 0 0\n";
}

/// The column between four side walls that touch it at every height, one
/// of them mobile (free along x, pushed in): a wall's pairs run through the
/// whole list, so its sum has terms in every range of the split pass, and
/// the mobile wall's sum moves it.
std::string boxedColumnScene() {
    return latticeColumnScene() +
           "[wall.x0]\npoint = 0 0 0\nnormal = 1 0 0\n"
           "[wall.x1]\npoint = 6.42 0 0\nnormal = -1 0 0\nmobile = true\nmass = 20\nfree = x\nforce = -200 0 0\n"
           "[wall.y0]\npoint = 0 0 0\nnormal = 0 1 0\n[wall.y1]\npoint = 0 6.42 0\nnormal = 0 -1 0\n";
}

/// A slab periodic in x and y on a floor.
std::string periodicScene() {
    return "[simulation]\nmethod = md\ndimension = 3\ndt = 2e-4\nsteps = 1\nseed = 5\ngravity = 0 0 -60\n"
           "[contact]\nmu = 0.4\nmargin = 0.1\nskin = 0.2\n"
           "[md]\nkn = 2e4\ngamma_n = 20\nkt = 6e3\ngamma_t = 10\n"
           "[grains]\nsource = random\ndensity = 1\ninertia = sphere\n"
           "[random]\ncount = 150\nr_min = 0.3\nr_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 5 6\n"
           "[periodic]\naxes = xy\nbox_min = 0 0 0\nbox_max = 5 5 10\n"
           "[wall.floor]\npoint = 0 0 0\nnormal = 0 0 1\n";
}

struct RunResult {
    std::uint64_t hash = 0;
    double elastic = 0.0;
    std::size_t contacts = 0;
    double meanOverlap = 0.0;
    double work = 0.0;  ///< work delivered to the contacts (tracked in the fused pipeline)
    bool fused = false;
    std::size_t pairs = 0;  ///< the fused pipeline's list length at the end
};

RunResult run(const std::string& text, std::vector<std::string> sets, const std::string& pipeline, int steps) {
    sets.push_back("md.pipeline=" + pipeline);
    Simulation sim(loadSceneText(text, "<pair-engine test>", sets));
    sim.md().trackWork(true);
    for (int k = 0; k < steps; ++k) sim.step();
    RunResult r;
    r.work = sim.md().contactWork();
    r.hash = stateHash(sim.world());
    r.elastic = sim.record().elasticEnergy;
    r.contacts = sim.record().contacts;
    r.meanOverlap = sim.record().meanOverlap;
    r.fused = sim.fused();
    r.pairs = sim.fused() ? sim.md().pairList()->size() : 0;
    return r;
}

void checkSame(const RunResult& fused, const RunResult& staged) {
    CHECK(fused.fused);
    CHECK_FALSE(staged.fused);
    CHECK(fused.hash == staged.hash);
    CHECK(fused.contacts == staged.contacts);
    CHECK(fused.contacts > 0);
    // Energy sums are grouped differently (per chunk of pairs, not of contacts).
    CHECK(fused.elastic == doctest::Approx(staged.elastic).epsilon(1e-12));
    CHECK(fused.meanOverlap == doctest::Approx(staged.meanOverlap).epsilon(1e-12));
}

/// Calls f(sets) with md.normal and md.tangential set, for every law pair
/// the fused pipeline runs (20).
template <class F>
void forEachFusedLawPair(F f) {
    for (const char* normal : {"linear", "hertz", "hertz-damped", "hkk"}) {
        for (const char* tangential : {"spring", "none", "coulomb", "viscous", "viscous-coulomb"}) {
            INFO(normal);
            INFO(tangential);
            f(std::vector<std::string>{std::string("md.normal=") + normal, std::string("md.tangential=") + tangential});
        }
    }
}

}  // namespace

TEST_SUITE("md pair engine") {
    TEST_CASE("fused and staged pipelines give the same bits for every law pair the fused one runs") {
        const std::string text = cylinderScene(300);
        forEachFusedLawPair([&](const std::vector<std::string>& sets) {
            checkSame(run(text, sets, "fused", 1500), run(text, sets, "staged", 1500));
        });
    }

    TEST_CASE("fused and staged agree with the meff conventions, clipping off and substeps") {
        const std::string text = cylinderScene(300);
        for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
                 {"md.meff=damping"}, {"md.meff=both", "md.kn=40", "md.kt=12"}, {"md.clip_attractive=false"},
                 {"md.substeps=3"}, {"contact.skin=0"}}) {
            INFO(sets.front());
            checkSame(run(text, sets, "fused", 1200), run(text, sets, "staged", 1200));
        }
    }

    TEST_CASE("every vector width of the contact kernel gives the scalar pass's bits") {
        // Walls (floor, cylinder), sliding, opening and closing contacts; the
        // widths this CPU lacks fall back to narrower ones (still checked).
        const std::string text = cylinderScene(300);
        forEachFusedLawPair([&](std::vector<std::string> sets) {
            sets.push_back("md.simd=off");
            const RunResult scalar = run(text, sets, "fused", 1500);
            for (const char* width : {"sse2", "avx2", "avx512"}) {
                INFO(width);
                sets.back() = std::string("md.simd=") + width;
                const RunResult vector = run(text, sets, "fused", 1500);
                CHECK(vector.hash == scalar.hash);
                CHECK(vector.contacts == scalar.contacts);
                CHECK(vector.elastic == scalar.elastic);
                CHECK(vector.meanOverlap == scalar.meanOverlap);
                CHECK(vector.work == scalar.work);
            }
        });
        // The kernel is in use (every x86-64 has at least SSE2) and honours the cap.
        Simulation sim(loadSceneText(text, "<pair-engine test>", {"md.simd=sse2"}));
        REQUIRE(sim.fused());
#if defined(__x86_64__)
        CHECK(sim.md().pairLanes() == 2);
        CHECK(std::string(sim.md().pairIsa(sim.world())) == "sse2");
#endif
        Simulation off(loadSceneText(text, "<pair-engine test>", {"md.simd=off"}));
        CHECK(off.md().pairLanes() == 0);
        // auto starts on the widest of the 8- and 4-lane kernels the CPU has
        // (the scalar pass where it has neither) and, on a small list, stays.
        Simulation autoWidth(loadSceneText(text, "<pair-engine test>", {}));
#if defined(__x86_64__)
        const int widest = __builtin_cpu_supports("avx512f") ? 8 : __builtin_cpu_supports("avx2") ? 4 : 0;
#else
        const int widest = 0;
#endif
        CHECK(autoWidth.md().pairLanes() == widest);
        for (int k = 0; k < 20; ++k) autoWidth.step();
        CHECK(autoWidth.md().pairLanes() == widest);
    }

    TEST_CASE("every vector width gives the scalar bits in periodic cells: seams, Lees-Edwards shear, a stretching cell") {
        // Pairs that may cross a seam go to the scalar pass (minimum image);
        // the kernel takes the rest, with the image velocity (+0 there) of a
        // deforming cell. The kick-drift kernel wraps the grains that left
        // the fixed cell (the slab thrown sideways crosses every seam many
        // times). Both law families with memory and without.
        for (const std::vector<std::string>& cell : std::vector<std::vector<std::string>>{
                 {}, {"grains.velocity=20 -15 0"}, {"periodic.shear_rate=4"},
                 {"periodic.shear_rate=-3", "periodic.strain_rate=0.5 -0.4 0"}}) {
            for (const char* tangential : {"spring", "viscous-coulomb"}) {
                std::vector<std::string> sets = cell;
                sets.push_back(std::string("md.tangential=") + tangential);
                INFO(tangential);
                const std::string cellName = cell.empty() ? std::string("fixed cell") : cell.back();
                INFO(cellName);
                sets.push_back("md.simd=off");
                const RunResult scalar = run(periodicScene(), sets, "fused", 1500);
                CHECK(scalar.contacts > 0);
                for (const char* width : {"sse2", "avx2", "avx512"}) {
                    INFO(width);
                    sets.back() = std::string("md.simd=") + width;
                    const RunResult vector = run(periodicScene(), sets, "fused", 1500);
                    CHECK(vector.hash == scalar.hash);
                    CHECK(vector.contacts == scalar.contacts);
                    CHECK(vector.elastic == scalar.elastic);
                    CHECK(vector.work == scalar.work);
                }
            }
        }
        Simulation sim(loadSceneText(periodicScene(), "<pair-engine test>", {"md.simd=sse2"}));
#if defined(__x86_64__)
        CHECK(std::string(sim.md().pairIsa(sim.world())) == "sse2");  // the kernel steps periodic worlds too
#endif
    }

    TEST_CASE("md.simd = auto times its candidate kernels on the run's pairs, keeps the fastest, and the bits") {
        // 2560 grains in contact: a list of more than MdForceStage::kTunePairs
        // pairs, so every pass from the first is timed until the choice.
        const std::string text = latticeColumnScene();
        Simulation off(loadSceneText(text, "<pair-engine test>", {"md.simd=off"}));
        Simulation tuned(loadSceneText(text, "<pair-engine test>", {}));
        REQUIRE(tuned.fused());
        REQUIRE(tuned.md().pairList() != nullptr);
        std::vector<int> seen;
        int steps = 0;
        for (; steps < 40; ++steps) {
            seen.push_back(tuned.md().pairLanes());
            off.step();
            tuned.step();
        }
        CHECK(tuned.md().pairList()->size() >= MdForceStage::kTunePairs);
        CHECK(stateHash(tuned.world()) == stateHash(off.world()));
        const int lanes = tuned.md().pairLanes();
        CHECK_FALSE(tuned.md().pairLanesTuning());
        CHECK((lanes == 8 || lanes == 4 || lanes == 0));
#if defined(__x86_64__)
        // Each candidate ran kTuneRounds passes, widest first, and the
        // scalar pass among them, where the CPU has a lane kernel at all.
        if (__builtin_cpu_supports("avx2")) {
            const int candidates = __builtin_cpu_supports("avx512f") ? 3 : 2;
            CHECK(seen.front() == (candidates == 3 ? 8 : 4));
            CHECK(std::count(seen.begin(), seen.end(), 0) >= MdForceStage::kTuneRounds);
            const std::vector<int> settled(seen.begin() + MdForceStage::kTuneRounds * candidates, seen.end());
            CHECK(std::count(settled.begin(), settled.end(), lanes) == static_cast<long>(settled.size()));
        }
#endif
    }

    TEST_CASE("every vector width of the kick-drift gives the scalar bits: fast spins, locked axes, a fixed grain") {
        // No applied force (with one the scalar kick-drift runs). Spins from
        // zero to beyond the series cut-off of World::rotate (half-angle
        // |w| dt / 2 >= 1e-2 takes sin and cos), a grain locked along z and
        // a grain fixed in place.
        const std::string text = cylinderScene(300, false);
        struct State {
            std::vector<Vec3> x, v, w;
            std::vector<Quat> q;
            int lanes = 0;
            Vec3 fixedFrom;  ///< where the fixed grain started
        };
        auto runWidth = [&](const std::string& width) {
            Simulation sim(loadSceneText(text, "<pair-engine test>", {"md.simd=" + width}));
            World& world = sim.world();
            const double dt = 2e-4;
            int fast = 0;
            for (std::size_t i = 0; i < world.numGrains; ++i) {
                const double scale = std::array{0.0, 1.0, 60.0, 250.0}[i % 4];
                const auto di = static_cast<double>(i);
                world.w[i] = scale * Vec3(std::sin(di), std::cos(3.0 * di), std::sin(7.0 * di));
                fast += 0.5 * world.w[i].norm() * dt >= 1e-2 ? 1 : 0;
            }
            CHECK(fast > 20);
            world.invMass[5] = world.invInertia[5] = Vec3::Zero();
            world.invMass[6].z() = 0.0;
            const Vec3 fixedFrom = world.x[5];
            for (int k = 0; k < 400; ++k) sim.step();
            return State{world.x, world.v, world.w, world.q, sim.md().pairLanes(), fixedFrom};
        };
        const State scalar = runWidth("off");
        CHECK(scalar.lanes == 0);
        CHECK(scalar.x[5] == scalar.fixedFrom);
        CHECK(scalar.v[6].z() == 0.0);
        for (const char* width : {"sse2", "avx2", "avx512"}) {
            INFO(width);
            const State vector = runWidth(width);
#if defined(__x86_64__)
            CHECK(vector.lanes >= 2);
#endif
            bool same = true;
            for (std::size_t i = 0; i < scalar.x.size(); ++i)
                same = same && vector.x[i] == scalar.x[i] && vector.v[i] == scalar.v[i] && vector.w[i] == scalar.w[i] &&
                       vector.q[i].coeffs() == scalar.q[i].coeffs();
            CHECK(same);
        }
    }

    TEST_CASE("the working list's inner skin changes the list, never the trajectory") {
        // Falling, sliding, rebuilding; periodic seams too. One list
        // (inner_skin 0), a thin working list, and one as wide as the skin.
        for (const std::string& text : {cylinderScene(300), periodicScene()}) {
            const RunResult one = run(text, {"contact.inner_skin=0"}, "fused", 1500);
            for (const char* inner : {"0.02", "0.1", "0.2"}) {
                INFO(inner);
                const RunResult filtered = run(text, {std::string("contact.inner_skin=") + inner}, "fused", 1500);
                CHECK(filtered.hash == one.hash);
                CHECK(filtered.contacts == one.contacts);
                CHECK(filtered.elastic == doctest::Approx(one.elastic).epsilon(1e-12));
            }
        }
        // The filtered list is shorter and rebuilt (without the cell grid) more often.
        Simulation wide(loadSceneText(cylinderScene(300), "<pair-engine test>", {"contact.inner_skin=0"}));
        Simulation thin(loadSceneText(cylinderScene(300), "<pair-engine test>", {"contact.inner_skin=0.02"}));
        for (int k = 0; k < 800; ++k) wide.step(), thin.step();
        CHECK(thin.md().pairList()->size() < wide.md().pairList()->size());
        CHECK(thin.md().pairList()->innerBuilds() > wide.md().pairList()->innerBuilds());
        CHECK(thin.md().pairList()->builds() >= wide.md().pairList()->builds());
        CHECK(stateHash(thin.world()) == stateHash(wide.world()));
    }

    TEST_CASE("a non-finite force stops the step with the lowest body named, the world unchanged") {
        // An infinite velocity makes the damping force of its contacts
        // infinite. Every pipeline, width and thread count names the same body.
        auto report = [&](const std::vector<std::string>& sets, int threads) {
            omp_set_num_threads(threads);
            Simulation sim(loadSceneText(latticeColumnScene(), "<pair-engine test>", sets));
            for (int k = 0; k < 5; ++k) sim.step();
            sim.world().v[1000].x() = HUGE_VAL;
            const std::vector<Vec3> before = sim.world().x;
            std::string message;
            try {
                sim.step();
            } catch (const DivergenceError& e) {
                message = e.what();
            }
            omp_set_num_threads(omp_get_num_procs());
            CHECK(sim.world().x == before);
            return message;
        };
        const std::string expected = report({"md.simd=off"}, 1);
        REQUIRE(expected.find("the contact force on body ") != std::string::npos);
        CHECK(std::stoul(expected.substr(expected.find("on body ") + 8)) <= 1000);
        CHECK(report({}, 1) == expected);
        CHECK(report({}, 2) == expected);
        CHECK(report({"md.simd=sse2"}, 2) == expected);
        CHECK(report({"md.pipeline=staged"}, 1) == expected);
    }

    TEST_CASE("fused and staged agree across periodic boundaries") {
        checkSame(run(periodicScene(), {}, "fused", 2000), run(periodicScene(), {}, "staged", 2000));
    }

    TEST_CASE("the fused pipeline gives the same bits for 1, 2 and 3 threads") {
        // Enough pairs (> 4096) for the split force pass: each range sums in
        // place the bodies whose first pair it holds and spills its terms for
        // the others (3 threads: two cuts, and a range may hold a whole run
        // of a body's pairs). The side walls have terms in every range, and
        // one of them moves, so the order of the spills shows in the grains.
        const std::string text = boxedColumnScene();
        const std::vector<std::string> sets;
        auto hashWith = [&](int threads) {
            omp_set_num_threads(threads);
            const RunResult r = run(text, sets, "fused", 150);
            CHECK(r.pairs > 4096);
            CHECK(r.contacts > 1000);  // loaded contacts at the cuts too (jitter overlaps)
            return r.hash;
        };
        const auto h1 = hashWith(1), h2 = hashWith(2), h3 = hashWith(3);
        omp_set_num_threads(omp_get_num_procs());
        CHECK(h1 == h2);
        CHECK(h1 == h3);
        omp_set_num_threads(1);
        CHECK(run(text, sets, "staged", 150).hash == h1);
        omp_set_num_threads(omp_get_num_procs());
    }

    TEST_CASE("auto picks the fused pipeline only where it applies") {
        const std::string text = cylinderScene(20);
        CHECK(run(text, {}, "auto", 1).fused);
        CHECK_FALSE(run(text, {"md.integrator=rk"}, "auto", 1).fused);
        CHECK_FALSE(run(text, {"md.tangential=kuhn"}, "auto", 1).fused);
        CHECK_FALSE(run(text, {"md.normal=walton-braun", "md.s=1"}, "auto", 1).fused);
        CHECK_FALSE(run(text, {"md.mu_static_ratio=1.5"}, "auto", 1).fused);
    }

    TEST_CASE("md.pipeline = fused is refused, naming the key, where it cannot run") {
        const std::string text = cylinderScene(20);
        for (const char* set : {"md.integrator=rk", "md.tangential=pena", "md.mu_static_ratio=2"}) {
            INFO(set);
            try {
                Simulation sim(loadSceneText(text, "scene.ini", {set, "md.pipeline=fused"}));
                FAIL("accepted");
            } catch (const InputError& e) {
                const std::string what = e.what();
                CHECK(what.find("scene.ini") != std::string::npos);
                CHECK(what.find("md.pipeline") != std::string::npos);
                CHECK(what.find("staged") != std::string::npos);
            }
        }
    }

    TEST_CASE("the fused pipeline's work, when tracked, is the staged solver's") {
        const std::string text = cylinderScene(300);
        forEachFusedLawPair([&](std::vector<std::string> sets) {
            sets.push_back("md.pipeline=fused");
            Simulation fused(loadSceneText(text, "<pair-engine test>", sets));
            sets.back() = "md.pipeline=staged";
            Simulation staged(loadSceneText(text, "<pair-engine test>", sets));
            REQUIRE(fused.fused());
            CHECK(std::isnan(fused.md().contactWork()));  // not tracked unless asked for
            fused.md().trackWork(true);
            for (int k = 0; k < 1200; ++k) fused.advance(), staged.advance();
            const MdSolver& engine = fused.md();
            CHECK(stateHash(fused.world()) == stateHash(staged.world()));
            CHECK(staged.md().contactWork() > 0.0);
            // The same terms, summed by chunk of pairs instead of by contact.
            CHECK(engine.contactWork() == doctest::Approx(staged.md().contactWork()).epsilon(1e-11));
            CHECK(engine.dissipatedWork() == doctest::Approx(staged.md().dissipatedWork()).epsilon(1e-11));
        });
    }

    TEST_CASE("observables made when asked for after unobserved steps are those observed every step") {
        // Simulation::advance() leaves the record, and the fused pipeline its
        // energy and overlap sums, to the next record(): a run writing every
        // n-th step must get what observing every step would have given.
        const std::string text = cylinderScene(300);
        for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
                 {"md.pipeline=fused"},
                 {"md.pipeline=fused", "md.normal=hertz", "md.tangential=coulomb"},
                 {"md.pipeline=fused", "md.meff=both", "md.kn=40", "md.kt=12"},
                 {"md.pipeline=staged"},
                 {"simulation.method=cd"}}) {
            INFO(sets.back());
            Simulation every(loadSceneText(text, "<pair-engine test>", sets));
            Simulation lazy(loadSceneText(text, "<pair-engine test>", sets));
            for (int k = 1; k <= 600; ++k) {
                const StepRecord& e = every.step();
                const CdStepStats stats = lazy.advance();
                CHECK(stats.iterations == e.iterations);
                if (k % 150 != 0) continue;
                const StepRecord& l = lazy.record();
                CHECK(l.step == e.step);
                CHECK(l.time == e.time);
                CHECK(l.kineticEnergy == e.kineticEnergy);
                CHECK(l.rotationalEnergy == e.rotationalEnergy);
                CHECK(l.contacts == e.contacts);
                CHECK(l.meanOverlap == e.meanOverlap);
                CHECK(l.maxOverlap == e.maxOverlap);
                CHECK(l.elasticEnergy == e.elasticEnergy);
                CHECK(l.iterations == e.iterations);
                CHECK(l.residual == e.residual);
                CHECK(l.contacts > 0);
                if (sets.back() != "simulation.method=cd") {  // rigid grains may end with no overlap at all
                    CHECK(l.maxOverlap > 0.0);
                    CHECK(l.elasticEnergy > 0.0);
                }
            }
        }
    }

    TEST_CASE("the fused pipeline's contacts are the narrow phase's at the current positions") {
        Simulation sim(loadSceneText(cylinderScene(300), "<pair-engine test>", {"md.pipeline=fused"}));
        for (int k = 0; k < 800; ++k) sim.step();
        std::vector<Contact> reference;
        detectBruteForce(sim.world(), sim.scene().simulation.margin, reference);
        const std::vector<Contact>& got = sim.contacts();
        REQUIRE(got.size() == reference.size());
        std::size_t loaded = 0;
        for (std::size_t k = 0; k < got.size(); ++k) {
            CHECK(got[k].key == reference[k].key);
            CHECK(got[k].gap == reference[k].gap);
            loaded += got[k].history.reaction.squaredNorm() > 0.0 ? 1 : 0;
        }
        CHECK(loaded > got.size() / 4);
    }
}
