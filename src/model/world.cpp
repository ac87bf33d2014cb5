#include "moreau/model/world.hpp"

#include <cassert>
#include <cmath>

namespace moreau {

Vec3 World::translationMask() const {
    if (dimension == 1) return {1, 0, 0};
    if (dimension == 2) return {1, 1, 0};
    return {1, 1, 1};
}

Vec3 World::rotationMask() const {
    if (dimension == 1) return {0, 0, 0};
    if (dimension == 2) return {0, 0, 1};
    return {1, 1, 1};
}

void World::reserve(std::size_t bodies) {
    x.reserve(bodies);
    v.reserve(bodies);
    w.reserve(bodies);
    invMass.reserve(bodies);
    invInertia.reserve(bodies);
    radius.reserve(bodies);
    q.reserve(bodies);
    mass.reserve(bodies);
    inertia.reserve(bodies);
    prescribed.reserve(bodies);
    if (!force.empty()) force.reserve(bodies);
    if (hasClumps()) shape.reserve(bodies);
    if (hasPolygons()) polygon.reserve(bodies);
    if (!size.empty()) size.reserve(bodies);
}

BodyId World::addGrain(const Vec3& pos, double r, double m, double I) {
    // Grains are always stored before walls so that ids of walls are stable.
    assert(numWalls() == 0 && "add all grains before walls");
    if (!force.empty()) force.emplace_back();
    x.push_back(pos);
    v.push_back(Vec3::Zero());
    w.push_back(Vec3::Zero());
    invMass.push_back(translationMask() / m);
    invInertia.push_back(rotationMask() / I);
    radius.push_back(r);
    q.push_back(Quat::Identity());
    mass.push_back(m);
    inertia.push_back(I);
    prescribed.push_back(false);
    if (hasClumps()) shape.push_back(0);
    if (hasPolygons()) polygon.push_back(0);
    if (!size.empty()) size.push_back(r);
    ++numGrains;
    return static_cast<BodyId>(x.size() - 1);
}

BodyId World::addClump(const Vec3& pos, std::uint16_t shapeIndex, double s, const Quat& orientation, double m) {
    assert(numWalls() == 0 && "add all grains before walls");
    assert(shapeIndex >= 1 && shapeIndex <= clumpShapes.size());
    const bool first = !hasClumps();
    const ClumpShape& c = clumpShapes[shapeIndex - 1u];
    const Vec3 moments = (m * s * s) * c.momentsPerMass;
    const Vec3 mask = rotationMask();
    Vec3 inverse = Vec3::Zero();
    for (int k = 0; k < 3; ++k)
        if (mask[k] > 0.0) inverse[k] = 1.0 / moments[k];
    const BodyId id = addGrain(pos, s * c.boundingRadius, m, dimension == 3 ? moments.mean() : moments.z());
    const auto i = static_cast<std::size_t>(id);
    if (first) shape.assign(numBodies(), 0);  // the grains so far are spheres or polygons: shape 0
    if (size.empty()) size = radius;         // and spheres their radius as size
    invInertia[i] = inverse;
    q[i] = orientation.normalized();
    shape[i] = shapeIndex;
    size[i] = s;
    return id;
}

BodyId World::addPolygon(const Vec3& pos, std::uint32_t shapeIndex, double s, double angle, double m) {
    assert(numWalls() == 0 && "add all grains before walls");
    assert(dimension == 2 && shapeIndex >= 1 && shapeIndex <= polygonShapes.size());
    const bool first = !hasPolygons();
    const PolygonShape& p = polygonShapes[shapeIndex - 1u];
    const BodyId id = addGrain(pos, s * p.boundingRadius, m, m * s * s * p.momentPerMass);
    const auto i = static_cast<std::size_t>(id);
    if (first) polygon.assign(numBodies(), 0);  // the grains so far are spheres or clumps: shape 0
    if (size.empty()) size = radius;
    q[i] = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
    polygon[i] = shapeIndex;
    size[i] = s;
    return id;
}

Vec3 World::principalInertia(std::size_t i) const {
    if (const ClumpShape* c = clumpOf(i)) return (mass[i] * size[i] * size[i]) * c->momentsPerMass;
    return Vec3::Constant(inertia[i]);
}

double World::rotationalEnergy(std::size_t i) const {
    if (dimension == 3 && clumpOf(i) != nullptr) {
        const Vec3 body = turned(q[i].conjugate(), w[i]);
        return 0.5 * body.dot(principalInertia(i).cwiseProduct(body));
    }
    return 0.5 * inertia[i] * w[i].squaredNorm();
}

void World::advanceCell(double dt) {
    if (!deforming()) return;
    const double Ly = boxMax[1] - boxMin[1];
    for (int k = 0; k < 3; ++k) {
        if (!periodic[k] || strainRate[k] == 0.0) continue;
        const double c = 0.5 * (boxMin[k] + boxMax[k]), L = (boxMax[k] - boxMin[k]) * (1.0 + strainRate[k] * dt);
        boxMin[k] = c - 0.5 * L;
        boxMax[k] = c + 0.5 * L;
    }
    if (leesEdwards()) {
        const double Lx = boxMax[0] - boxMin[0];
        shift += shearRate * Ly * dt;
        shift -= Lx * std::floor(shift / Lx);
        shearStrain += shearRate * dt;
    }
}

void World::wrapDeforming(std::size_t i) {
    Vec3& p = x[i];
    if (periodic[1]) {
        const double Ly = boxMax[1] - boxMin[1], ky = std::floor((p[1] - boxMin[1]) / Ly);
        if (ky != 0.0) {
            p[1] -= ky * Ly;
            p[0] -= ky * shift;
            v[i][0] -= ky * shearRate * Ly;
            v[i][1] -= ky * strainRate[1] * Ly;
        }
    }
    for (int k : {0, 2}) {
        if (!periodic[k]) continue;
        const double L = boxMax[k] - boxMin[k], kk = std::floor((p[k] - boxMin[k]) / L);
        if (kk != 0.0) {
            p[k] -= kk * L;
            v[i][k] -= kk * strainRate[k] * L;
        }
    }
}

void World::drive(BodyId grain, const Vec3& velocity, const Vec3& spin, BodyId wall) {
    const auto i = static_cast<std::size_t>(grain);
    assert(i < numGrains && (driven.empty() || driven.back().grain < grain));
    assert(wall < 0 || isWall(wall));
    invMass[i] = Vec3::Zero();
    invInertia[i] = Vec3::Zero();
    prescribed[i] = true;
    v[i] = wall >= 0 ? v[static_cast<std::size_t>(wall)] : Vec3(velocity.cwiseProduct(translationMask()));
    w[i] = wall >= 0 ? Vec3::Zero() : Vec3(spin.cwiseProduct(rotationMask()));
    driven.push_back({grain, wall});
}

BodyId World::addWall(const std::string& name, const WallShape& shape, const Vec3& pos, bool mobile,
                      double m, const std::array<bool, 3>& freeAxes) {
    x.push_back(pos);
    v.push_back(Vec3::Zero());
    w.push_back(Vec3::Zero());
    Vec3 im = Vec3::Zero();
    if (mobile) {
        const Vec3 dimMask = translationMask();
        for (int k = 0; k < 3; ++k) im[k] = freeAxes[k] ? dimMask[k] / m : 0.0;
    }
    invMass.push_back(im);
    invInertia.push_back(Vec3::Zero());  // walls never rotate (infinite inertia, CD §2.4.2)
    radius.push_back(0.0);
    q.push_back(Quat::Identity());
    mass.push_back(mobile ? m : 0.0);
    inertia.push_back(0.0);
    prescribed.push_back(false);
    if (!force.empty()) force.emplace_back();
    if (hasClumps()) this->shape.push_back(0);
    if (hasPolygons()) polygon.push_back(0);
    if (!size.empty()) size.push_back(0.0);
    wallShape.push_back(shape);
    wallName.push_back(name);
    wallMobile.push_back(mobile);
    return static_cast<BodyId>(x.size() - 1);
}

void World::copyCellAndClock(const World& from) {
    boxMin = from.boxMin;
    boxMax = from.boxMax;
    strainRate = from.strainRate;
    shearRate = from.shearRate;
    shift = from.shift;
    shearStrain = from.shearStrain;
    stressErrorIntegral = from.stressErrorIntegral;
    wallErrorIntegral = from.wallErrorIntegral;
    time = from.time;
    step = from.step;
}

}  // namespace moreau
