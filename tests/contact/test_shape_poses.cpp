// ShapePoses (every grain's world-frame component balls, a polygon's turned
// vertices and edge normals) against the World's own componentOffset /
// componentRadius and turnPolygon, and the narrow phase that reads them
// (culling components out of the other body's reach) against every pair of
// components tested one by one.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "moreau/contact/shape_poses.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/rng.hpp"
#include "moreau/model/polygon.hpp"

using namespace moreau;

namespace {

/// A random unit quaternion (axis and angle uniform enough for a test).
Quat randomTurn(Rng& rng) {
    Vec3 axis(rng.uniform() - 0.5, rng.uniform() - 0.5, rng.uniform() - 0.5);
    if (axis.norm() < 1e-3) axis = Vec3::UnitZ();
    return Quat(Eigen::AngleAxisd(2.0 * std::numbers::pi * rng.uniform(), axis.normalized()));
}

/// n bodies in [0, L)³, dense enough that many touch: tetras, dimers and
/// spheres in turn, random sizes and turns; a floor at z = 0; with
/// `periodic`, periodic along x and y.
World clumpWorld(std::size_t n, double L, bool periodic, std::uint64_t seed) {
    World w;
    w.dimension = 3;
    w.clumpShapes.push_back(makeClumpShape({{Vec3(0.25, 0.25, 0.25), 0.35},
                                            {Vec3(-0.25, -0.25, 0.25), 0.3},
                                            {Vec3(-0.25, 0.25, -0.25), 0.35},
                                            {Vec3(0.25, -0.25, -0.25), 0.25}},
                                           3));
    w.clumpShapes.push_back(makeClumpShape({{Vec3(-0.3, 0, 0), 0.3}, {Vec3(0.3, 0, 0), 0.4}}, 3));
    if (periodic) {
        w.periodic = {true, true, false};
        w.boxMin = Vec3::Zero();
        w.boxMax = Vec3(L, L, L);
    }
    Rng rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3 x(L * rng.uniform(), L * rng.uniform(), L * rng.uniform());
        const double s = 0.8 + 0.4 * rng.uniform();
        if (i % 3 == 2) w.addGrain(x, 0.4 * s, 1.0, 0.1);
        else w.addClump(x, static_cast<std::uint16_t>(1 + i % 3), s, randomTurn(rng), 1.0);
    }
    WallShape floor;
    floor.kind = ShapeKind::Plane;
    floor.direction = Vec3::UnitZ();
    w.addWall("floor", floor, Vec3::Zero(), false, 0.0, {false, false, false});
    return w;
}

}  // namespace

TEST_SUITE("contact") {
    TEST_CASE("component balls: World::componentOffset and componentRadius, bit for bit, for every grain") {
        const World w = clumpWorld(60, 4.0, false, 3);
        ShapePoses poses;
        poses.update(w);
        REQUIRE(poses.grains() == w.numGrains);
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            REQUIRE(poses.count(i) == w.components(i));
            for (unsigned k = 0; k < poses.count(i); ++k) {
                CHECK(poses.ball(i, k).offset == w.componentOffset(i, k));
                CHECK(poses.ball(i, k).radius == w.componentRadius(i, k));
                CHECK(&poses.ball(i, k) == poses.balls(i) + k);
            }
        }
    }

    TEST_CASE("the culled narrow phase finds what testing every pair of components finds, bit for bit") {
        for (const bool periodic : {false, true}) {
            CAPTURE(periodic);
            const World w = clumpWorld(150, 5.0, periodic, periodic ? 7 : 5);
            for (const double margin : {0.0, 0.05, 0.3}) {
                CAPTURE(margin);
                // Every component pair of every pair of bodies, in key order.
                std::vector<Contact> every;
                Contact c;
                for (std::size_t a = 0; a < w.numGrains; ++a)
                    for (std::size_t b = a + 1; b < w.numBodies(); ++b) {
                        const unsigned nb = w.isWall(static_cast<BodyId>(b)) ? 1u : w.components(b);
                        for (unsigned ca = 0; ca < w.components(a); ++ca)
                            for (unsigned cb = 0; cb < nb; ++cb)
                                if (narrowComponents(w, static_cast<BodyId>(a), static_cast<BodyId>(b), ca, cb, margin,
                                                     c))
                                    every.push_back(c);
                    }
                REQUIRE(every.size() > 50);
                std::vector<Contact> brute, grid, list;
                detectBruteForce(w, margin, brute);
                CellGridDetector().detect(w, margin, grid);
                VerletListDetector(0.2).detect(w, margin, list);
                for (const std::vector<Contact>* found : {&brute, &grid, &list}) {
                    REQUIRE(found->size() == every.size());
                    for (std::size_t k = 0; k < every.size(); ++k) {
                        CHECK((*found)[k].key == every[k].key);
                        CHECK((*found)[k].n == every[k].n);
                        CHECK((*found)[k].gap == every[k].gap);
                    }
                }
                // The geometry refreshed from the balls is the narrow phase's.
                std::vector<Contact> refreshed = brute;
                for (Contact& r : refreshed) r.gap = 1.0;
                refreshContactGeometry(w, refreshed);
                for (std::size_t k = 0; k < brute.size(); ++k) CHECK(refreshed[k].gap == brute[k].gap);
                // Lever arms from the balls are the World's.
                ShapePoses poses;
                poses.update(w);
                for (const Contact& k : brute) {
                    CHECK(leverArm(poses, k, k.a) == leverArm(w, k, k.a));
                    CHECK(leverArm(poses, k, k.b) == leverArm(w, k, k.b));
                }
            }
        }
    }

    TEST_CASE("the Verlet list of pairs of components stays exact while bodies move and turn") {
        for (const bool periodic : {false, true}) {
            CAPTURE(periodic);
            World w = clumpWorld(150, 5.0, periodic, periodic ? 11 : 13);
            VerletListDetector list(0.2);
            Rng rng(17);
            std::size_t most = 0;
            for (int step = 0; step < 30; ++step) {
                CAPTURE(step);
                std::vector<Contact> brute, found;
                detectBruteForce(w, 0.02, brute);
                list.detect(w, 0.02, found);
                REQUIRE(found.size() == brute.size());
                for (std::size_t k = 0; k < brute.size(); ++k) {
                    CHECK(found[k].key == brute[k].key);
                    CHECK(found[k].gap == brute[k].gap);
                    CHECK(found[k].n == brute[k].n);
                }
                most = std::max(most, brute.size());
                // Each grain drifts by up to 0.01 and turns by up to 0.06 rad:
                // a component 0.5 from its centre moves up to 0.04 a step.
                for (std::size_t i = 0; i < w.numGrains; ++i) {
                    w.x[i] += 0.01 * Vec3(rng.uniform() - 0.5, rng.uniform() - 0.5, rng.uniform() - 0.5);
                    const Vec3 axis(rng.uniform() - 0.5, rng.uniform() - 0.5, rng.uniform() - 0.5);
                    w.q[i] = (Quat(Eigen::AngleAxisd(0.06 * rng.uniform(), axis.normalized())) * w.q[i]).normalized();
                }
            }
            CHECK(most > 50);
            CHECK(list.builds() > 3);
            CHECK(list.builds() < 30);
        }
    }

    TEST_CASE("a turn alone, the centres fixed, rebuilds the list of pairs of components") {
        // Two dimers (components ±0.5 along the body's x, radius 0.25), side
        // by side 0.8 apart: 0.3 between components, beyond margin + skin.
        // Turning b about z by 60° brings one component of each into
        // overlap; the centres never move.
        World w;
        w.dimension = 3;
        w.clumpShapes.push_back(makeClumpShape({{Vec3(-0.5, 0, 0), 0.25}, {Vec3(0.5, 0, 0), 0.25}}, 3));
        w.addClump(Vec3::Zero(), 1, 1.0, Quat::Identity(), 1.0);
        w.addClump(Vec3(0.0, 0.8, 0.0), 1, 1.0, Quat::Identity(), 1.0);
        VerletListDetector list(0.2);
        std::vector<Contact> brute, found;
        for (int deg = 0; deg <= 60; deg += 5) {
            CAPTURE(deg);
            w.q[1] = Quat(Eigen::AngleAxisd(deg * std::numbers::pi / 180.0, Vec3::UnitZ()));
            detectBruteForce(w, 0.0, brute);
            list.detect(w, 0.0, found);
            REQUIRE(found.size() == brute.size());
            for (std::size_t k = 0; k < brute.size(); ++k) CHECK(found[k].key == brute[k].key);
        }
        CHECK(brute.size() == 1);
        CHECK(brute[0].gap < 0.0);
        CHECK(list.builds() > 1);
    }
}

TEST_SUITE("contact") {
    TEST_CASE("turned polygons: the poses' vertices and normals, bit for bit as on the spot, the normals unit and outward") {
        World w;
        w.dimension = 2;
        Rng rng(7);
        w.polygonShapes.push_back(randomPolygon(6, 0.5, rng));
        w.polygonShapes.push_back(regularPolygon(4));
        for (int i = 0; i < 20; ++i) {
            const Vec3 x(10.0 * rng.uniform(), 10.0 * rng.uniform(), 0.0);
            w.addPolygon(x, static_cast<std::uint32_t>(1 + i % 2), 0.5 + rng.uniform(), 6.3 * rng.uniform(), 1.0);
        }
        ShapePoses poses;
        poses.update(w);
        for (std::size_t i = 0; i < w.numGrains; ++i) {
            CAPTURE(i);
            double x[kMaxPolygonVertices], y[kMaxPolygonVertices], nx[kMaxPolygonVertices], ny[kMaxPolygonVertices];
            const PlacedPolygon p = poses.polygon(i), q = turnPolygon(w, i, x, y, nx, ny);
            REQUIRE(p.n == w.polygonOf(i)->vertices());
            REQUIRE(q.n == p.n);
            CHECK(p.extent == q.extent);
            CHECK(p.extent == 2.0 * w.size[i] * w.polygonOf(i)->boundingRadius);
            for (std::size_t k = 0; k < p.n; ++k) {
                CHECK(p.x[k] == x[k]);
                CHECK(p.y[k] == y[k]);
                CHECK(p.nx[k] == nx[k]);
                CHECK(p.ny[k] == ny[k]);
                // Unit, perpendicular to its edge, every other vertex behind its line.
                const std::size_t k1 = (k + 1) % p.n;
                const double ex = p.x[k1] - p.x[k], ey = p.y[k1] - p.y[k];
                CHECK(std::abs(std::hypot(p.nx[k], p.ny[k]) - 1.0) < 1e-14);
                CHECK(std::abs(p.nx[k] * ex + p.ny[k] * ey) < 1e-14 * std::hypot(ex, ey));
                for (std::size_t j = 0; j < p.n; ++j)
                    if (j != k && j != k1) CHECK(p.nx[k] * (p.x[j] - p.x[k]) + p.ny[k] * (p.y[j] - p.y[k]) < 0.0);
            }
            // The inscribed circle lies inside: every edge line at least that far from the centre.
            const double inner = w.size[i] * w.polygonOf(i)->inradius;
            for (std::size_t k = 0; k < p.n; ++k) CHECK(p.nx[k] * p.x[k] + p.ny[k] * p.y[k] >= inner * (1.0 - 1e-14));
        }
    }
}
