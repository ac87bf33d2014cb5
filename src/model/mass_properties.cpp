// Mass properties of a union of spheres (3D) or disks (2D); docs/clumps.md.
//
// Every path accumulates the raw moments ∫1, ∫x, ∫x xᵀ of the union about a
// reference point (the mean of the centres, to keep the shift to the centroid
// free of cancellation), then shifts to the centroid and takes the inertia
// I = tr(S)·1 − S of the centred second moment S.
//
// 3D, no point inside three spheres: inclusion–exclusion, exact. The union is
// Σ balls − Σ pairwise lenses (every triple intersection has zero volume, so
// every higher term vanishes too); a lens is two spherical caps.
// 3D otherwise: slices normal to x. Each slice is a union of disks whose
// moments are exact (below); the 1D integral over x is Gauss–Legendre between
// the x's where the slice's arrangement of circles changes, with an
// a-posteriori error estimate.
// 2D: the union of disks is exact by Green's theorem on its exposed arcs.
#include "moreau/model/mass_properties.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"
#include "union_moments.hpp"

namespace moreau {
namespace {

using namespace union_moments;

constexpr std::size_t kMaxComponents = 16;

// --- principal frame -----------------------------------------------------------

/// Principal moments, ascending, and the rotation R (body → input) with
/// inertia = R diag Rᵀ. A tensor whose off-diagonal terms are roundoff (1e-14 of
/// the largest diagonal) gets a frame of coordinate axes, moments taken from
/// the diagonal and ordered by an insertion sort that leaves entries within
/// 1e-12 in input order, so a sphere or a cubic cluster gets identity. Otherwise
/// the symmetric eigensolver's columns, each signed so its largest component is
/// positive; a left-handed result flips the third column.
void principalAxes3(const Mat3& inertia, Vec3& moments, Mat3& frame) {
    const double scale = inertia.diagonal().cwiseAbs().maxCoeff();
    const double off = std::max({std::abs(inertia(0, 1)), std::abs(inertia(0, 2)), std::abs(inertia(1, 2))});
    if (off <= 1e-14 * scale) {
        std::array<int, 3> order{0, 1, 2};
        for (int i = 1; i < 3; ++i)
            for (int j = i; j > 0 && inertia(order[j - 1], order[j - 1]) > inertia(order[j], order[j]) + 1e-12 * scale;
                 --j)
                std::swap(order[j - 1], order[j]);
        frame.setZero();
        for (int k = 0; k < 3; ++k) {
            frame(order[k], k) = 1.0;
            moments[k] = inertia(order[k], order[k]);
        }
    } else {
        const Eigen::SelfAdjointEigenSolver<Mat3> solver(inertia);
        moments = solver.eigenvalues();
        frame = solver.eigenvectors();
        for (int k = 0; k < 3; ++k) {
            Eigen::Index big = 0;
            frame.col(k).cwiseAbs().maxCoeff(&big);
            if (frame(big, k) < 0.0) frame.col(k) = -frame.col(k);
        }
    }
    if (frame.determinant() < 0.0) frame.col(2) = -frame.col(2);
}

/// 2D: the plate tensor has z as the axis of its largest moment (I_zz = I_xx +
/// I_yy); the in-plane pair comes in closed form, the frame turns about z by
/// the angle of the smaller moment's axis, in (−π/2, π/2]; 0 when the in-plane
/// moments are equal to roundoff.
void principalAxes2(const Mat3& inertia, Vec3& moments, Quat& frame) {
    const double a = inertia(0, 0), c = inertia(1, 1), b = inertia(0, 1);
    const double half = 0.5 * (a - c);
    const double radius = std::hypot(half, b);
    double angle = 0.0;
    if (radius <= 1e-14 * (a + c)) {
        moments << a, c, inertia(2, 2);
    } else {
        const double large = 0.5 * (a + c) + radius;
        moments << (a * c - b * b) / large, large, inertia(2, 2);
        angle = 0.5 * std::atan2(2.0 * b, a - c) + 0.5 * kPi;
        if (angle > 0.5 * kPi) angle -= kPi;
    }
    frame = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
}

void checkComponents(const std::vector<SphereComponent>& components, int dimension) {
    if (dimension != 2 && dimension != 3)
        throw InputError("clump: dimension must be 2 or 3, got " + std::to_string(dimension));
    if (components.empty()) throw InputError("clump: no spheres (clump.spheres needs at least one 'x y z r')");
    if (components.size() > kMaxComponents)
        throw InputError("clump: " + std::to_string(components.size()) + " spheres, at most " +
                         std::to_string(kMaxComponents) + " allowed");
    for (std::size_t i = 0; i < components.size(); ++i) {
        const SphereComponent& s = components[i];
        if (!std::isfinite(s.radius) || !(s.radius > 0.0))
            throw InputError("clump: sphere " + std::to_string(i + 1) + " has radius " + std::to_string(s.radius) +
                             ", it must be positive and finite");
        if (!s.centre.allFinite())
            throw InputError("clump: sphere " + std::to_string(i + 1) + " has a centre that is not finite");
    }
}

}  // namespace

UnionMassProperties unionMassProperties(const std::vector<SphereComponent>& components, int dimension,
                                        UnionMethod method) {
    checkComponents(components, dimension);
    // Identical components count once; 2D works on the x–y projection.
    std::vector<SphereComponent> unique;
    for (const SphereComponent& s : components) {
        SphereComponent t = s;
        if (dimension == 2) t.centre.z() = 0.0;
        const bool seen = std::any_of(unique.begin(), unique.end(), [&](const SphereComponent& o) {
            return o.centre == t.centre && o.radius == t.radius;
        });
        if (!seen) unique.push_back(t);
    }

    UnionMassProperties out;
    if (unique.size() == 1) {
        // Closed form, in the operation order of grainMass and grainInertia.
        const double r = unique[0].radius;
        out.centroid = unique[0].centre;
        if (dimension == 3) {
            out.volume = (4.0 / 3.0) * kPi * (r * r) * r;
            out.inertia = Mat3::Identity() * (0.4 * out.volume * r * r);
            out.principalMoments = Vec3::Constant(0.4 * out.volume * r * r);
        } else {
            out.volume = kPi * (r * r);
            const double polar = 0.5 * out.volume * r * r;
            out.inertia = Vec3(0.25 * out.volume * r * r, 0.25 * out.volume * r * r, polar).asDiagonal();
            out.principalMoments = out.inertia.diagonal();
        }
        out.boundingRadius = r;
        return out;
    }

    Vec3 reference = Vec3::Zero();
    for (const SphereComponent& s : unique) reference += s.centre;
    reference /= static_cast<double>(unique.size());
    std::vector<SphereComponent> local = unique;
    for (SphereComponent& s : local) s.centre -= reference;

    Moments m;
    SliceVector sliceError = SliceVector::Zero();
    if (dimension == 2) {
        std::vector<Disk> disks, kept;
        std::vector<double> angles;
        for (const SphereComponent& s : local) disks.push_back({s.centre.x(), s.centre.y(), s.radius});
        const PlaneMoments p = diskUnionMoments(disks, kept, angles);
        m.m0 = p.a;
        m.m1 << p.u, p.v, 0.0;
        m.m2 << p.uu, p.uv, 0.0, p.uv, p.vv, 0.0, 0.0, 0.0, 0.0;
    } else if (method == UnionMethod::Automatic && !anyTripleOverlap(local)) {
        m = pairwiseMoments(local);
    } else {
        m = sliceMoments(local, sliceError);
        out.exact = false;
    }

    const Vec3 g = m.m1 / m.m0;
    const Mat3 centred = m.m2 - m.m1 * g.transpose();
    Mat3 inertia = centred.trace() * Mat3::Identity() - centred;
    inertia = 0.5 * (inertia + inertia.transpose()).eval();
    out.volume = m.m0;
    out.centroid = reference + g;
    out.inertia = inertia;
    if (!out.exact) out.errorBound = relativeInertiaError(m, inertia, sliceError);

    if (dimension == 2) {
        principalAxes2(inertia, out.principalMoments, out.principalFrame);
    } else {
        Mat3 frame;
        principalAxes3(inertia, out.principalMoments, frame);
        out.principalFrame = Quat(frame).normalized();
    }
    for (const SphereComponent& s : unique)
        out.boundingRadius = std::max(out.boundingRadius, (s.centre - out.centroid).norm() + s.radius);
    return out;
}

}  // namespace moreau
