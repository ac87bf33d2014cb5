/// The Siconos harness's sphere piles as Moreau worlds (sphere_pile.hpp).
#include "sphere_pile.hpp"

#include <cmath>

#include "moreau/model/generators.hpp"

namespace moreau {

Pile pileOf(const std::vector<Vec3>& positions, double radius, double mass, double dt, double g, double muGrain) {
    Pile p;
    p.dt = dt;
    World& w = p.world;
    w.dimension = 3;
    w.gravity = Vec3(0, 0, -g);
    std::vector<GrainSpec> grains(positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) {
        grains[i].position = positions[i];
        grains[i].radius = radius;
    }
    addGrains(w, grains, GrainShape::Sphere, 1.0, mass);
    w.muGrain = muGrain;
    return p;
}

void addPileContact(Pile& p, long A, long B, const Vec3& n, double muFloor) {
    if (B < 0 && p.floor < 0) {
        WallShape s;
        s.kind = ShapeKind::Plane;
        s.direction = Vec3::UnitZ();
        p.floor = p.world.addWall("floor", s, Vec3::Zero(), false, 0.0, {false, false, false});
        p.world.wallShape[0].mu = muFloor;
    }
    Contact k;
    k.a = static_cast<BodyId>(B < 0 ? A : std::min(A, B));
    k.b = B < 0 ? p.floor : static_cast<BodyId>(std::max(A, B));
    const bool aIsB = B >= 0 && k.b == static_cast<BodyId>(A);
    k.n = aIsB ? n : Vec3(-n);
    k.key = makeContactKey(k.a, k.b);
    k.gap = 0.0;
    p.contacts.push_back(k);
    p.aIsB.push_back(aIsB ? 1 : 0);
}

Pile harnessPile(int kx, int ky, int layers, double muFloor, double muGrain) {
    constexpr double R = 0.05, mass = 1.0, dt = 0.005, g = 9.81;
    std::vector<Vec3> x;
    for (int j = 0; j < layers && kx - j > 0 && ky - j > 0; ++j)
        for (int a = 0; a < kx - j; ++a)
            for (int b = 0; b < ky - j; ++b)
                x.emplace_back((a + 0.5 * j) * 2 * R, (b + 0.5 * j) * 2 * R, R + j * std::sqrt(2.0) * R);
    Pile p = pileOf(x, R, mass, dt, g, muGrain);
    const double tol = 1e-9 * R;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i].z() - R <= tol) addPileContact(p, static_cast<long>(i), -1, Vec3::UnitZ(), muFloor);
    // The harness's A is the sphere of larger (z, y, x), n from B to A.
    auto above = [&](std::size_t i, std::size_t j) {
        for (int d = 2; d >= 0; --d)
            if (x[i][d] != x[j][d]) return x[i][d] > x[j][d];
        return false;
    };
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = i + 1; j < x.size(); ++j) {
            const Vec3 d = x[i] - x[j];
            if (std::abs(d.norm() - 2 * R) > 2 * tol) continue;
            const auto [A, B] = above(i, j) ? std::pair{i, j} : std::pair{j, i};
            addPileContact(p, static_cast<long>(A), static_cast<long>(B), (x[A] - x[B]).normalized(), muFloor);
        }
    return p;
}

}  // namespace moreau
