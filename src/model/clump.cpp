#include "moreau/model/clump.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

namespace moreau {

ClumpShape makeClumpShape(const std::vector<SphereComponent>& components, int dimension) {
    const UnionMassProperties props = unionMassProperties(components, dimension);
    ClumpShape shape;
    const Quat toBody = props.principalFrame.conjugate();
    for (const SphereComponent& c : components) {
        shape.centre.push_back(toBody * Vec3(c.centre - props.centroid));
        if (dimension == 2) shape.centre.back().z() = 0.0;
        shape.radius.push_back(c.radius);
    }
    shape.volume = props.volume;
    shape.momentsPerMass = props.principalMoments / props.volume;
    shape.boundingRadius = props.boundingRadius;
    shape.frame = props.principalFrame;
    shape.centroid = props.centroid;
    shape.errorBound = props.errorBound;
    return shape;
}

double lightestContactFraction(const ClumpShape& shape, const Vec3& spins) {
    const Vec3 inverse = spins.cwiseQuotient(shape.momentsPerMass);
    double lambda = 0.0;
    for (const Vec3& centre : shape.centre) {
        const Mat3 arm = crossMatrix(centre);
        const Mat3 m = arm.transpose() * inverse.asDiagonal() * arm;
        lambda = std::max(lambda, Eigen::SelfAdjointEigenSolver<Mat3>(m).eigenvalues().maxCoeff());
    }
    return 1.0 / (1.0 + lambda);
}

void freeRotorDrift(Quat& q, Vec3& w, const Vec3& moments, double dt) {
    Vec3 pi = moments.cwiseProduct(q.conjugate() * w);  // body-frame angular momentum
    // The flow of π_k² / 2I_k over h: the body turns about its axis k by
    // θ = h π_k / I_k (π_k fixed), so q ← q · (cos θ/2, sin θ/2 e_k), and π,
    // seen from the turned body, turns by −θ about e_k (L = R π is fixed).
    auto about = [&](int k, double h) {
        const double half = 0.5 * h * pi[k] / moments[k];
        const double ch = std::cos(half), sh = std::sin(half);
        const double c = 1.0 - 2.0 * sh * sh, s = 2.0 * sh * ch;
        const int a = (k + 1) % 3, b = (k + 2) % 3;
        const double pa = pi[a], pb = pi[b];
        pi[a] = c * pa + s * pb;
        pi[b] = -s * pa + c * pb;
        Quat r(ch, 0.0, 0.0, 0.0);
        r.vec()[k] = sh;
        q = q * r;
    };
    const double h = 0.5 * dt;
    about(0, h);
    about(1, h);
    about(2, dt);
    about(1, h);
    about(0, h);
    q.normalize();
    w = q * Vec3(pi.cwiseQuotient(moments));
}

}  // namespace moreau
