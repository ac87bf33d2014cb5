#include "moreau/model/clump.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "moreau/model/world.hpp"

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

namespace {
/// cos a and sin a: below |a| = 10⁻² (every sub-step of a resolved
/// simulation) from their Taylor series in a² to a⁸ (the next terms are
/// below 10⁻²⁰ of the sum: exact to rounding, as World::rotate's), else
/// from the library.
inline void cosSin(double a, double& c, double& s) {
    const double a2 = a * a;
    if (a2 < 1e-4) {
        constexpr double c2 = 1.0 / 2.0, c4 = 1.0 / 12.0, c6 = 1.0 / 30.0, c8 = 1.0 / 56.0;
        constexpr double s3 = 1.0 / 6.0, s5 = 1.0 / 20.0, s7 = 1.0 / 42.0;
        c = 1.0 - a2 * c2 * (1.0 - a2 * c4 * (1.0 - a2 * c6 * (1.0 - a2 * c8)));
        s = a * (1.0 - a2 * s3 * (1.0 - a2 * s5 * (1.0 - a2 * s7)));
    } else {
        c = std::cos(a);
        s = std::sin(a);
    }
}
}  // namespace

namespace {
/// q ← q · (ch, sh e_k): a turn about the body's axis k written out (four of
/// the Hamilton product's sixteen terms are not zero).
inline void turnAboutBodyAxis(double& qw, double (&qv)[3], int k, double ch, double sh) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    const double w0 = qw, vk = qv[k], va = qv[a], vb = qv[b];
    qw = w0 * ch - vk * sh;
    qv[k] = vk * ch + w0 * sh;
    qv[a] = va * ch + vb * sh;
    qv[b] = vb * ch - va * sh;
}

/// The axis whose moment differs when the other two are equal (a symmetric
/// top), 3 when all three are (a spherical top), −1 otherwise. Equal: within
/// 10⁻¹² of the largest, far below what any shape's quadrature resolves.
int symmetryAxis(const Vec3& m) {
    const double tol = 1e-12 * m.maxCoeff();
    const bool e01 = std::abs(m[0] - m[1]) <= tol, e12 = std::abs(m[1] - m[2]) <= tol,
               e02 = std::abs(m[0] - m[2]) <= tol;
    if (e01 && e12 && e02) return 3;
    if (e01) return 2;
    if (e12) return 0;
    if (e02) return 1;
    return -1;
}
}  // namespace

void freeRotorDrift(Quat& q, Vec3& w, const Vec3& moments, double dt) {
    const int axis = symmetryAxis(moments);
    if (axis == 3) return World::rotate(q, w, dt);  // a spherical top: ω is constant
    const Vec3 rate = moments.cwiseInverse();
    Vec3 pi = moments.cwiseProduct(turned(q.conjugate(), w));  // body-frame angular momentum
    double qw = q.w(), qv[3] = {q.x(), q.y(), q.z()};
    if (axis >= 0) {
        // A symmetric top (I_a = I_b = A, I_k = C): exactly, R(t) =
        // exp(t [L×]/A) R₀ exp(t π_k (1/C − 1/A) [e_k×]), the body turning
        // about its axis k at the constant rate π_k (1/C − 1/A) while it
        // turns about the fixed L at |L|/A; ω = L/A + π_k (1/C − 1/A) R e_k.
        const int a = (axis + 1) % 3;
        const double rateA = 1.0 / (0.5 * (moments[a] + moments[(axis + 2) % 3]));
        const double spin = pi[axis] * (rate[axis] - rateA);
        const Vec3 L = turned(q, pi);
        double ch, sh;
        cosSin(0.5 * dt * spin, ch, sh);
        turnAboutBodyAxis(qw, qv, axis, ch, sh);
        q = Quat(qw, qv[0], qv[1], qv[2]);
        World::rotate(q, rateA * L, dt);  // (normalises q)
        w = rateA * L + spin * turned(q, Vec3::Unit(axis));
        return;
    }
    // An asymmetric body: the splitting. The flow of π_k² / 2I_k over h: the
    // body turns about its axis k by θ = h π_k / I_k (π_k fixed), so
    // q ← q · (cos θ/2, sin θ/2 e_k), and π, seen from the turned body, turns
    // by −θ about e_k (L = R π is fixed).
    auto about = [&](int k, double h) {
        double ch, sh;
        cosSin(0.5 * h * pi[k] * rate[k], ch, sh);
        const double c = 1.0 - 2.0 * sh * sh, s = 2.0 * sh * ch;
        const int a = (k + 1) % 3, b = (k + 2) % 3;
        const double pa = pi[a], pb = pi[b];
        pi[a] = c * pa + s * pb;
        pi[b] = -s * pa + c * pb;
        turnAboutBodyAxis(qw, qv, k, ch, sh);
    };
    const double h = 0.5 * dt;
    about(0, h);
    about(1, h);
    about(2, dt);
    about(1, h);
    about(0, h);
    q = Quat(qw, qv[0], qv[1], qv[2]);
    q.normalize();
    w = turned(q, pi.cwiseProduct(rate));
}

}  // namespace moreau
