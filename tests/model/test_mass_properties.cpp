// unionMassProperties: volume, centroid and inertia of a union of spheres
// (disks), checked against closed forms derived here independently of the code
// under test (docs/clumps.md, "Clump mass properties").
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/model/mass_properties.hpp"
#include "support/input_error.hpp"

using namespace moreau;
using moreau::test::errorOf;

namespace {

constexpr double kPi = std::numbers::pi;

/// Largest |entry| of a − b relative to the largest |entry| of b.
double relativeDifference(const Mat3& a, const Mat3& b) {
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

/// The frame is a rotation, the moments ascend, and R diag Rᵀ gives the tensor back.
void checkPrincipalFrame(const UnionMassProperties& p) {
    const Mat3 r = p.principalFrame.toRotationMatrix();
    CHECK(std::abs(p.principalFrame.norm() - 1.0) < 1e-15);
    CHECK(r.determinant() == doctest::Approx(1.0).epsilon(1e-14));
    const double scale = p.principalMoments.maxCoeff();
    CHECK(p.principalMoments[0] <= p.principalMoments[1] + 1e-12 * scale);
    CHECK(p.principalMoments[1] <= p.principalMoments[2] + 1e-12 * scale);
    const Mat3 rebuilt = r * p.principalMoments.asDiagonal() * r.transpose();
    CHECK(relativeDifference(rebuilt, p.inertia) < 1e-12);
}

/// Exact mass properties of spheres (dimension 3) or disks (2) whose centres lie
/// on the x axis at `at`, radii `r`, derived independently of the code under
/// test: the union is a solid of revolution (3D) or the region |y| < h(x) (2D)
/// with ρ(x)² = max_i (r_i² − (x − x_i)²). Between the ends of the spheres and
/// the x's where two of these parabolas cross, one sphere i gives the max, and
/// the slab integrals are closed forms in z = x − x_i:
///   3D: ∫πρ² dx, ∫πxρ², ∫πx²ρ², and ∫y² dA = πρ⁴/4 per slice;
///   2D: strips of one disk, with S = √(r² − z²):
///       ∫2S dz = zS + r² asin(z/r),   ∫2zS dz = −⅔S³,
///       ∫2z²S dz = (z(2z² − r²)S + r⁴ asin(z/r))/4,
///       ∫⅔S³ dz = (z(5r² − 2z²)S + 3r⁴ asin(z/r))/12   (∫y² dA of the strip).
/// Returns volume, centroid x, the moment about the axis (3D ∫(y² + z²); 2D the
/// plate's ∫y²) and about a perpendicular axis through the centroid (3D ∫(x−x̄)² + ∫z²;
/// 2D the plate's ∫(x−x̄)²).
struct AxialReference {
    double volume = 0, centroid = 0, axial = 0, transverse = 0;
};

AxialReference axialUnion(const std::vector<double>& at, const std::vector<double>& r, int dimension) {
    std::vector<double> cuts;
    for (std::size_t i = 0; i < at.size(); ++i) {
        cuts.push_back(at[i] - r[i]);
        cuts.push_back(at[i] + r[i]);
        for (std::size_t j = i + 1; j < at.size(); ++j)
            if (at[i] != at[j])
                cuts.push_back((r[j] * r[j] - r[i] * r[i] + at[i] * at[i] - at[j] * at[j]) / (2.0 * (at[i] - at[j])));
    }
    std::sort(cuts.begin(), cuts.end());
    double v = 0, x1 = 0, x2 = 0, yy = 0;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const double a = cuts[k], b = cuts[k + 1];
        if (!(b > a)) continue;
        const double mid = 0.5 * (a + b);
        std::size_t best = 0;
        for (std::size_t i = 1; i < at.size(); ++i)
            if (r[i] * r[i] - (mid - at[i]) * (mid - at[i]) > r[best] * r[best] - (mid - at[best]) * (mid - at[best]))
                best = i;
        const double c = at[best], R = r[best];
        if (R * R - (mid - c) * (mid - c) <= 0.0) continue;
        const double z0 = std::max(a - c, -R), z1 = std::min(b - c, R);
        double f0, f1, f2, fy;  // ∫1, ∫z, ∫z², ∫y² over the slab, in z
        if (dimension == 3) {
            const auto p = [&](double z) { return kPi * (R * R * z - z * z * z / 3.0); };
            const auto p1 = [&](double z) { return kPi * (R * R * z * z / 2.0 - z * z * z * z / 4.0); };
            const auto p2 = [&](double z) { return kPi * (R * R * z * z * z / 3.0 - std::pow(z, 5) / 5.0); };
            const auto py = [&](double z) {
                return 0.25 * kPi * (R * R * R * R * z - 2.0 * R * R * z * z * z / 3.0 + std::pow(z, 5) / 5.0);
            };
            f0 = p(z1) - p(z0), f1 = p1(z1) - p1(z0), f2 = p2(z1) - p2(z0), fy = py(z1) - py(z0);
        } else {
            const auto s = [&](double z) { return std::sqrt(std::max(0.0, R * R - z * z)); };
            const auto as = [&](double z) { return std::asin(std::clamp(z / R, -1.0, 1.0)); };
            const auto p = [&](double z) { return z * s(z) + R * R * as(z); };
            const auto p1 = [&](double z) { return -2.0 / 3.0 * std::pow(s(z), 3); };
            const auto p2 = [&](double z) { return (z * (2 * z * z - R * R) * s(z) + std::pow(R, 4) * as(z)) / 4.0; };
            const auto py = [&](double z) {
                return (z * (5 * R * R - 2 * z * z) * s(z) + 3 * std::pow(R, 4) * as(z)) / 12.0;
            };
            f0 = p(z1) - p(z0), f1 = p1(z1) - p1(z0), f2 = p2(z1) - p2(z0), fy = py(z1) - py(z0);
        }
        v += f0;
        x1 += c * f0 + f1;
        x2 += c * c * f0 + 2.0 * c * f1 + f2;
        yy += fy;
    }
    AxialReference ref;
    ref.volume = v;
    ref.centroid = x1 / v;
    const double xx = x2 - v * ref.centroid * ref.centroid;
    ref.axial = dimension == 3 ? 2.0 * yy : yy;
    ref.transverse = xx + (dimension == 3 ? yy : 0.0);
    return ref;
}

/// The spheres of `ref` laid along the unit vector `axis` through `origin`.
std::vector<SphereComponent> alongAxis(const std::vector<double>& at, const std::vector<double>& r, const Vec3& origin,
                                       const Vec3& axis) {
    std::vector<SphereComponent> s;
    for (std::size_t i = 0; i < at.size(); ++i) s.push_back({origin + at[i] * axis, r[i]});
    return s;
}

/// Checks p against the axial reference for spheres along `axis`: volume,
/// centroid and I = I_t·1 + (I_a − I_t) n nᵀ, to `tolerance` relative.
void checkAxial(const UnionMassProperties& p, const AxialReference& ref, const Vec3& origin, const Vec3& axis,
                double tolerance) {
    CHECK(p.volume == doctest::Approx(ref.volume).epsilon(tolerance));
    const double extent = std::cbrt(ref.volume);
    CHECK((p.centroid - (origin + ref.centroid * axis)).norm() < tolerance * extent);
    const Mat3 expected = ref.transverse * Mat3::Identity() + (ref.axial - ref.transverse) * axis * axis.transpose();
    CHECK(relativeDifference(p.inertia, expected) < tolerance);
}

/// Lens of two spheres (radii R, r) at centre distance d: the sum of two caps,
/// πh²(3ρ − h)/3 each, heights from the radical plane; for R = r it is
/// π(4r + d)(2r − d)²/12.
double lensVolume(double R, double r, double d) {
    const double a = (d * d + R * R - r * r) / (2.0 * d);
    const double h1 = R - a, h2 = r - (d - a);
    return kPi * h1 * h1 * (3 * R - h1) / 3.0 + kPi * h2 * h2 * (3 * r - h2) / 3.0;
}

/// Area of the lens of two disks (radii R, r) at centre distance d.
double lensArea(double R, double r, double d) {
    return R * R * std::acos((d * d + R * R - r * r) / (2 * d * R)) +
           r * r * std::acos((d * d + r * r - R * R) / (2 * d * r)) -
           0.5 * std::sqrt((-d + R + r) * (d + R - r) * (d - R + r) * (d + R + r));
}

/// Kuhn-like cluster: a sphere of radius 1 at the origin and six of radius
/// `small` at ±d on each axis.
std::vector<SphereComponent> octahedralCluster(double small, double d) {
    std::vector<SphereComponent> s{{Vec3::Zero(), 1.0}};
    for (int axis = 0; axis < 3; ++axis)
        for (double sign : {1.0, -1.0}) s.push_back({sign * d * Vec3::Unit(axis), small});
    return s;
}

/// The slice quadrature of `s` against the exact result p: within its
/// own error bound (below 1e-9), reported under `label`.
void checkSlices(const std::vector<SphereComponent>& s, const UnionMassProperties& p, const char* label) {
    const UnionMassProperties q = unionMassProperties(s, 3, UnionMethod::Slices);
    MESSAGE(label << ", slices: errorBound " << q.errorBound << ", volume error " << std::abs(q.volume / p.volume - 1)
                  << ", inertia error " << relativeDifference(q.inertia, p.inertia));
    CHECK(q.errorBound < 1e-9);
    CHECK(std::abs(q.volume / p.volume - 1.0) <= q.errorBound + 1e-14);
    CHECK(relativeDifference(q.inertia, p.inertia) <= q.errorBound + 1e-14);
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("mass properties of one sphere and one disk equal grainMass and grainInertia") {
    const double r = 0.37;
    const Vec3 c(0.3, -0.2, 1.1);
    const UnionMassProperties s = unionMassProperties({{c, r}}, 3);
    CHECK(s.volume == grainMass(GrainShape::Sphere, r, 1.0));  // same bits
    CHECK(s.volume == doctest::Approx(4.0 / 3.0 * kPi * r * r * r).epsilon(1e-15));
    const double i = grainInertia(GrainShape::Sphere, s.volume, r);
    CHECK(s.inertia == Mat3(Vec3::Constant(i).asDiagonal()));
    CHECK(s.principalMoments == Vec3::Constant(i));
    CHECK(s.centroid == c);
    CHECK(s.principalFrame.coeffs() == Quat::Identity().coeffs());
    CHECK(s.boundingRadius == r);
    CHECK(s.exact);
    CHECK(s.errorBound == 0.0);

    const UnionMassProperties d = unionMassProperties({{c, r}}, 2);
    CHECK(d.volume == grainMass(GrainShape::Disk, r, 1.0));
    CHECK(d.volume == doctest::Approx(kPi * r * r).epsilon(1e-15));
    CHECK(d.inertia(2, 2) == grainInertia(GrainShape::Disk, d.volume, r));
    CHECK(d.inertia(0, 0) == doctest::Approx(0.25 * d.volume * r * r).epsilon(1e-15));
    CHECK(d.inertia(1, 1) == d.inertia(0, 0));
    CHECK(d.centroid == Vec3(c.x(), c.y(), 0.0));
    CHECK(d.principalFrame.coeffs() == Quat::Identity().coeffs());
    CHECK(d.exact);

    // A repeated sphere counts once.
    const UnionMassProperties twice = unionMassProperties({{c, r}, {c, r}}, 3);
    CHECK(twice.volume == s.volume);
}

TEST_CASE("two touching spheres: the parallel-axis dimer, principal moments ascending") {
    const double r = 0.5, d = 0.5;  // centres at ±d: touching
    const double m = 4.0 / 3.0 * kPi * r * r * r;
    const UnionMassProperties p = unionMassProperties({{Vec3(-d, 0, 0), r}, {Vec3(d, 0, 0), r}}, 3);
    CHECK(p.exact);
    CHECK(p.volume == doctest::Approx(2 * m).epsilon(1e-15));
    CHECK(p.centroid.norm() < 1e-16);
    const double ixx = 2 * 0.4 * m * r * r, iyy = 2 * (0.4 * m * r * r + m * d * d);
    CHECK(relativeDifference(p.inertia, Mat3(Vec3(ixx, iyy, iyy).asDiagonal())) < 1e-15);
    CHECK(p.principalMoments[0] == doctest::Approx(ixx).epsilon(1e-15));
    CHECK(p.principalMoments[2] == doctest::Approx(iyy).epsilon(1e-15));
    CHECK(p.principalFrame.coeffs() == Quat::Identity().coeffs());
    CHECK(p.boundingRadius == doctest::Approx(2 * r).epsilon(1e-15));
    checkPrincipalFrame(p);

    SUBCASE("along a slanted axis, the body x axis is the dimer's") {
        const Vec3 n = Vec3(1, 2, -2).normalized(), o(0.3, 0.1, -0.4);
        const UnionMassProperties q = unionMassProperties({{o - d * n, r}, {o + d * n, r}}, 3);
        CHECK((q.centroid - o).norm() < 1e-15);
        CHECK(q.principalMoments[0] == doctest::Approx(ixx).epsilon(1e-14));
        CHECK(q.principalMoments[1] == doctest::Approx(iyy).epsilon(1e-14));
        CHECK(q.principalMoments[2] == doctest::Approx(iyy).epsilon(1e-14));
        CHECK(std::abs((q.principalFrame * Vec3::UnitX()).dot(n)) == doctest::Approx(1.0).epsilon(1e-14));
        checkPrincipalFrame(q);
    }
}

TEST_CASE("two overlapping spheres: the closed-form lens, and the slice quadrature within its bound") {
    SUBCASE("equal spheres") {
        const double r = 1.0, d = 1.2;
        const std::vector<SphereComponent> s{{Vec3(-0.6, 0, 0), r}, {Vec3(0.6, 0, 0), r}};
        const UnionMassProperties p = unionMassProperties(s, 3);
        CHECK(p.exact);
        const double sphere = 4.0 / 3.0 * kPi * r * r * r;
        CHECK(p.volume == doctest::Approx(2 * sphere - kPi * (4 * r + d) * (2 * r - d) * (2 * r - d) / 12.0).epsilon(1e-15));
        checkAxial(p, axialUnion({-0.6, 0.6}, {r, r}, 3), Vec3::Zero(), Vec3::UnitX(), 1e-14);
        checkPrincipalFrame(p);

        const UnionMassProperties q = unionMassProperties(s, 3, UnionMethod::Slices);
        CHECK_FALSE(q.exact);
        CHECK(q.errorBound > 0.0);
        CHECK(q.errorBound < 1e-9);
        MESSAGE("equal pair, slices: errorBound " << q.errorBound << ", volume error "
                                                  << std::abs(q.volume / p.volume - 1) << ", inertia error "
                                                  << relativeDifference(q.inertia, p.inertia));
        CHECK(std::abs(q.volume / p.volume - 1.0) <= q.errorBound + 1e-14);
        CHECK(relativeDifference(q.inertia, p.inertia) <= q.errorBound + 1e-14);
    }
    SUBCASE("unequal spheres on a slanted axis: the centroid leans to the bigger") {
        const Vec3 n = Vec3(0.3, -0.5, 0.8).normalized(), o(1.0, 2.0, -1.0);
        const std::vector<double> at{0.0, 1.1}, r{1.0, 0.5};
        const std::vector<SphereComponent> s = alongAxis(at, r, o, n);
        const UnionMassProperties p = unionMassProperties(s, 3);
        CHECK(p.exact);
        CHECK(p.volume ==
              doctest::Approx(4.0 / 3.0 * kPi * (1.0 + 0.125) - lensVolume(1.0, 0.5, 1.1)).epsilon(1e-15));
        const AxialReference ref = axialUnion(at, r, 3);
        CHECK(ref.centroid > 0.0);
        CHECK(ref.centroid < 0.2);  // far nearer the big sphere than the midpoint 0.55
        checkAxial(p, ref, o, n, 1e-14);
        checkPrincipalFrame(p);

        checkSlices(s, p, "unequal pair");
    }
    SUBCASE("a sphere inside another counts as the bigger one") {
        const UnionMassProperties p = unionMassProperties({{Vec3::Zero(), 1.0}, {Vec3(0.3, 0.2, 0), 0.5}}, 3);
        CHECK(p.exact);
        CHECK(p.volume == doctest::Approx(4.0 / 3.0 * kPi).epsilon(1e-15));
        CHECK(p.centroid.norm() < 1e-15);
        CHECK(relativeDifference(p.inertia, Mat3::Identity() * (0.4 * 4.0 / 3.0 * kPi)) < 1e-15);
    }
}

TEST_CASE("a triple overlap takes the slice quadrature, exact against the collinear closed form") {
    // Three spheres on a line, each overlapping both others: no pairwise formula holds.
    const std::vector<double> at{0.0, 0.9, 1.7}, r{1.0, 0.8, 0.9};
    const AxialReference ref = axialUnion(at, r, 3);
    for (const Vec3& n : {Vec3(1, 0, 0), Vec3(Vec3(1, 1, 1).normalized()), Vec3(Vec3(-0.2, 0.9, 0.4).normalized())}) {
        CAPTURE(n.transpose());
        const UnionMassProperties p = unionMassProperties(alongAxis(at, r, Vec3(0.5, -1, 2), n), 3);
        CHECK_FALSE(p.exact);
        CHECK(p.errorBound < 1e-9);
        const double volumeError = std::abs(p.volume / ref.volume - 1.0);
        MESSAGE("collinear triple: errorBound " << p.errorBound << ", volume error " << volumeError);
        CHECK(volumeError <= p.errorBound + 1e-14);
        checkAxial(p, ref, Vec3(0.5, -1, 2), n, p.errorBound + 1e-14);
        checkPrincipalFrame(p);
    }
}

TEST_CASE("the exact path is taken exactly when no point lies inside three spheres") {
    // Three unit spheres on an equilateral triangle of side a overlap pairwise
    // for a < 2 and share a point for a < √3 (the circumradius a/√3 < 1).
    const auto triangle = [](double a) {
        std::vector<SphereComponent> s;
        for (int k = 0; k < 3; ++k)
            s.push_back({a / std::sqrt(3.0) * Vec3(std::cos(2 * kPi * k / 3), std::sin(2 * kPi * k / 3), 0.3), 1.0});
        return s;
    };
    for (double a : {1.74, 1.8, 1.95}) {
        CAPTURE(a);
        const UnionMassProperties p = unionMassProperties(triangle(a), 3);
        CHECK(p.exact);
        CHECK(p.volume == doctest::Approx(4 * kPi - 3 * lensVolume(1.0, 1.0, a)).epsilon(1e-15));
        const UnionMassProperties q = unionMassProperties(triangle(a), 3, UnionMethod::Slices);
        CHECK(std::abs(q.volume / p.volume - 1.0) <= q.errorBound + 1e-14);
        CHECK(relativeDifference(q.inertia, p.inertia) <= q.errorBound + 1e-14);
    }
    for (double a : {1.72, 1.5}) {
        CAPTURE(a);
        const UnionMassProperties p = unionMassProperties(triangle(a), 3);
        CHECK_FALSE(p.exact);
        CHECK(p.volume > 4 * kPi - 3 * lensVolume(1.0, 1.0, a));  // the triple region is counted back
    }
    // A sphere inside another, and a third across both: a triple region.
    const UnionMassProperties nested =
        unionMassProperties({{Vec3::Zero(), 1.0}, {Vec3(0.4, 0, 0), 0.5}, {Vec3(1.5, 0, 0), 0.7}}, 3);
    CHECK_FALSE(nested.exact);
    const AxialReference ref = axialUnion({0.0, 0.4, 1.5}, {1.0, 0.5, 0.7}, 3);
    checkAxial(nested, ref, Vec3::Zero(), Vec3::UnitX(), nested.errorBound + 1e-14);
}

TEST_CASE("Kuhn-like octahedral cluster: isotropic, exact pairwise and slices agree") {
    SUBCASE("small spheres touch only the centre: exact pairwise path") {
        const double small = 0.5, d = 1.2;  // neighbours 1.2·√2 = 1.70 apart > 2·0.5
        const auto s = octahedralCluster(small, d);
        const UnionMassProperties p = unionMassProperties(s, 3);
        CHECK(p.exact);
        const double expected = 4.0 / 3.0 * kPi * (1.0 + 6 * small * small * small) - 6 * lensVolume(1.0, small, d);
        CHECK(p.volume == doctest::Approx(expected).epsilon(1e-14));
        CHECK(p.centroid.norm() < 1e-15);
        const double i = p.inertia.trace() / 3.0;
        CHECK(relativeDifference(p.inertia, Mat3::Identity() * i) < 1e-14);
        CHECK(p.principalFrame.coeffs() == Quat::Identity().coeffs());
        CHECK(p.boundingRadius == doctest::Approx(d + small).epsilon(1e-15));

        checkSlices(s, p, "octahedral");
    }
    SUBCASE("small spheres overlap each other: slices, still isotropic") {
        const auto s = octahedralCluster(0.8, 1.0);  // neighbours √2 apart < 1.6
        const UnionMassProperties p = unionMassProperties(s, 3);
        CHECK_FALSE(p.exact);
        CHECK(p.errorBound < 1e-9);
        MESSAGE("octahedral with triple overlaps: errorBound " << p.errorBound);
        // Bonferroni: at most the centre plus each small sphere's part outside it,
        // at least that less every small–small lens (12 neighbour pairs, √2 apart).
        const double upper = 4.0 / 3.0 * kPi * (1.0 + 6 * 0.512) - 6 * lensVolume(1.0, 0.8, 1.0);
        const double lower = upper - 12 * lensVolume(0.8, 0.8, std::sqrt(2.0));
        CHECK(p.volume < upper);
        CHECK(p.volume > lower);
        CHECK(p.centroid.norm() < 1e-12);
        const double i = p.inertia.trace() / 3.0;
        CHECK(relativeDifference(p.inertia, Mat3::Identity() * i) <= p.errorBound + 1e-13);
        checkPrincipalFrame(p);
    }
}

TEST_CASE("moving the input moves the centroid and the frame, and leaves the moments") {
    // An asymmetric cluster, once with pairwise overlaps only, once with a triple.
    const std::vector<SphereComponent> pairwise{
        {Vec3(0, 0, 0), 1.0}, {Vec3(1.5, 0, 0), 0.7}, {Vec3(-0.2, 1.4, 0.1), 0.6}, {Vec3(0.3, 0.2, -1.3), 0.5}};
    std::vector<SphereComponent> triple = pairwise;
    triple.push_back({Vec3(0.8, 0.7, 0), 0.5});
    const Quat turn = Quat(Eigen::AngleAxisd(1.1, Vec3(0.3, -0.7, 0.2).normalized()));
    const Vec3 shift(3.0, -2.0, 0.5);
    for (const std::vector<SphereComponent>* s : {&pairwise, &std::as_const(triple)}) {
        std::vector<SphereComponent> moved;
        for (const SphereComponent& c : *s) moved.push_back({turn * c.centre + shift, c.radius});
        const UnionMassProperties a = unionMassProperties(*s, 3), b = unionMassProperties(moved, 3);
        CHECK(a.exact == (s == &pairwise));
        const double tol = 1e-13 + 2 * std::max(a.errorBound, b.errorBound);
        CHECK(b.volume == doctest::Approx(a.volume).epsilon(tol));
        CHECK((b.centroid - (turn * a.centroid + shift)).norm() < tol);
        const Mat3 r = turn.toRotationMatrix();
        CHECK(relativeDifference(b.inertia, r * a.inertia * r.transpose()) < tol);
        CHECK(relativeDifference(Mat3(b.principalMoments.asDiagonal()), Mat3(a.principalMoments.asDiagonal())) < tol);
        // Distinct moments: each body axis turns with the input, up to its sign.
        CHECK(a.principalMoments[1] - a.principalMoments[0] > 0.01 * a.principalMoments[2]);
        CHECK(a.principalMoments[2] - a.principalMoments[1] > 0.01 * a.principalMoments[2]);
        const Mat3 alignment = b.principalFrame.toRotationMatrix().transpose() * r * a.principalFrame.toRotationMatrix();
        for (int k = 0; k < 3; ++k) CHECK(std::abs(alignment(k, k)) == doctest::Approx(1.0).epsilon(1e-9));
        checkPrincipalFrame(a);
        checkPrincipalFrame(b);
    }
}

TEST_CASE("disks: the dimer, the closed-form lens and a triple overlap, all exact") {
    SUBCASE("touching disks") {
        const double r = 0.5, d = 0.5, m = kPi * r * r;
        const UnionMassProperties p = unionMassProperties({{Vec3(-d, 0, 0.7), r}, {Vec3(d, 0, -0.3), r}}, 2);
        CHECK(p.exact);
        CHECK(p.volume == doctest::Approx(2 * m).epsilon(1e-15));
        CHECK(p.centroid.norm() < 1e-16);
        const Vec3 expected(2 * 0.25 * m * r * r, 2 * (0.25 * m * r * r + m * d * d), 2 * (0.5 * m * r * r + m * d * d));
        CHECK(relativeDifference(p.inertia, Mat3(expected.asDiagonal())) < 1e-15);
        CHECK(relativeDifference(Mat3(p.principalMoments.asDiagonal()), Mat3(expected.asDiagonal())) < 1e-15);
        CHECK(p.principalFrame.coeffs() == Quat::Identity().coeffs());
        checkPrincipalFrame(p);
    }
    SUBCASE("overlapping equal and unequal disks, on a turned axis") {
        for (const auto& [r1, r2, d] : {std::array<double, 3>{1.0, 1.0, 1.2}, std::array<double, 3>{1.0, 0.6, 1.1},
                                        std::array<double, 3>{0.4, 1.0, 0.9}}) {
            CAPTURE(r1);
            CAPTURE(r2);
            const double angle = 0.7;
            const Vec3 n(std::cos(angle), std::sin(angle), 0), o(0.2, -0.3, 0);
            const UnionMassProperties p = unionMassProperties(alongAxis({0.0, d}, {r1, r2}, o, n), 2);
            CHECK(p.exact);
            CHECK(p.volume == doctest::Approx(kPi * (r1 * r1 + r2 * r2) - lensArea(r1, r2, d)).epsilon(1e-14));
            const AxialReference ref = axialUnion({0.0, d}, {r1, r2}, 2);
            CHECK(p.volume == doctest::Approx(ref.volume).epsilon(1e-14));
            CHECK((p.centroid - (o + ref.centroid * n)).norm() < 1e-14);
            // Plate tensor: in-plane ∫y'² along n, ∫x'² across it; polar the sum.
            const Vec3 t(-n.y(), n.x(), 0);
            Mat3 expected = ref.axial * n * n.transpose() + ref.transverse * t * t.transpose();
            expected(2, 2) = ref.axial + ref.transverse;
            CHECK(relativeDifference(p.inertia, expected) < 1e-14);
            // Body x along the dimer: a turn about z by 0.7.
            CHECK(p.principalFrame.angularDistance(Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()))) < 1e-14);
            checkPrincipalFrame(p);
        }
    }
    SUBCASE("three disks overlapping pairwise and together") {
        const std::vector<double> at{0.0, 0.9, 1.7}, r{1.0, 0.8, 0.9};
        const UnionMassProperties p = unionMassProperties(alongAxis(at, r, Vec3::Zero(), Vec3::UnitX()), 2);
        CHECK(p.exact);
        const AxialReference ref = axialUnion(at, r, 2);
        CHECK(p.volume == doctest::Approx(ref.volume).epsilon(1e-14));
        CHECK(p.centroid.x() == doctest::Approx(ref.centroid).epsilon(1e-14));
        CHECK(p.inertia(0, 0) == doctest::Approx(ref.axial).epsilon(1e-14));
        CHECK(p.inertia(1, 1) == doctest::Approx(ref.transverse).epsilon(1e-14));
        CHECK(p.inertia(2, 2) == doctest::Approx(ref.axial + ref.transverse).epsilon(1e-14));
        CHECK(std::abs(p.inertia(0, 1)) < 1e-14 * p.inertia(2, 2));
    }
    SUBCASE("a ring of disks around a hole") {
        // Six disks of radius 0.6 on a circle of radius 1: neighbours overlap,
        // the centre stays uncovered (1 > 0.6): the hole's arcs are subtracted.
        std::vector<SphereComponent> s;
        for (int k = 0; k < 6; ++k) s.push_back({Vec3(std::cos(k * kPi / 3), std::sin(k * kPi / 3), 0), 0.6});
        const UnionMassProperties p = unionMassProperties(s, 2);
        CHECK(p.volume == doctest::Approx(6 * kPi * 0.36 - 6 * lensArea(0.6, 0.6, 1.0)).epsilon(1e-14));
        CHECK(p.centroid.norm() < 1e-15);
        CHECK(p.inertia(0, 0) == doctest::Approx(p.inertia(1, 1)).epsilon(1e-14));
        CHECK(p.principalFrame.coeffs() == Quat::Identity().coeffs());
    }
}

TEST_CASE("mass properties refuse a clump that is not one") {
    const SphereComponent ok{Vec3::Zero(), 1.0};
    CHECK(errorOf([] { unionMassProperties({}, 3); }).find("no spheres") != std::string::npos);
    CHECK(errorOf([&] { unionMassProperties(std::vector<SphereComponent>(17, ok), 3); }).find("at most 16") !=
          std::string::npos);
    CHECK_NOTHROW(unionMassProperties(std::vector<SphereComponent>(16, ok), 3));
    for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
        CAPTURE(bad);
        CHECK(errorOf([&] { unionMassProperties({ok, {Vec3(1, 0, 0), bad}}, 3); }).find("sphere 2 has radius") !=
              std::string::npos);
    }
    CHECK(errorOf([&] { unionMassProperties({{Vec3(0, NAN, 0), 1.0}}, 2); }).find("not finite") != std::string::npos);
    CHECK(errorOf([&] { unionMassProperties({ok}, 1); }).find("dimension") != std::string::npos);
}

}  // TEST_SUITE
