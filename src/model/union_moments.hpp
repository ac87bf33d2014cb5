#pragma once
// The pieces of unionMassProperties (mass_properties.cpp; docs/clumps.md):
// raw moments ∫1, ∫x, ∫x xᵀ of a union of balls or disks about a reference
// point, by three methods, one file each.
//   union_balls.cpp   3D, no point inside three balls: Σ balls − Σ lenses, exact
//   union_disks.cpp   a union of disks in a plane: Green's theorem, exact
//   union_slices.cpp  3D otherwise: slices of disk unions, Gauss–Legendre in x
#include <numbers>
#include <vector>

#include "moreau/model/mass_properties.hpp"

namespace moreau::union_moments {

inline constexpr double kPi = std::numbers::pi;

/// ∫1, ∫x and ∫x xᵀ over a body, about the reference point.
struct Moments {
    double m0 = 0.0;
    Vec3 m1 = Vec3::Zero();
    Mat3 m2 = Mat3::Zero();
    void add(const Moments& o, double sign) {
        m0 += sign * o.m0;
        m1 += sign * o.m1;
        m2 += sign * o.m2;
    }
};

/// A disk of the plane (u, v), radius ρ.
struct Disk {
    double u, v, rho;
};

/// ∫1, ∫u, ∫v, ∫u², ∫v², ∫uv over a plane region.
struct PlaneMoments {
    double a = 0, u = 0, v = 0, uu = 0, vv = 0, uv = 0;
};

/// The ten slice integrals as one vector: ∫1, ∫x, ∫y, ∫z, ∫x², ∫xy, ∫xz, ∫y², ∫z², ∫yz.
using SliceVector = Eigen::Matrix<double, 10, 1>;

/// Whether some point lies inside three of the balls (decided exactly, near-ties counted as yes).
bool anyTripleOverlap(const std::vector<SphereComponent>& s);
/// Σ balls − Σ pairwise lenses: exact when no point lies inside three balls.
Moments pairwiseMoments(const std::vector<SphereComponent>& s);
/// The union of `disks`, exact; `kept` and `angles` are scratch (reused by the slices).
PlaneMoments diskUnionMoments(const std::vector<Disk>& disks, std::vector<Disk>& kept, std::vector<double>& angles);
/// The union of balls by slices, with the error estimate of each raw integral.
Moments sliceMoments(const std::vector<SphereComponent>& s, SliceVector& error);
/// The relative error of volume and inertia that errors `e` of the raw moments imply.
double relativeInertiaError(const Moments& m, const Mat3& inertia, const SliceVector& e);

}  // namespace moreau::union_moments
