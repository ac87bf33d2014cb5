#pragma once
/// Rigid clusters of spheres (disks in 2D), "clumps": the shape a body of
/// the World refers to, and the rotation of a body whose inertia is not
/// isotropic.
///
/// A clump's shape is stored once per scene, in its principal frame (centre
/// of mass at the origin, axes along the principal axes of inertia) at unit
/// size; body i of shape k is that shape scaled by World::size[i], turned by
/// World::q[i] (body frame to world) and placed at World::x[i].
#include <cstdint>
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/mass_properties.hpp"

namespace moreau {

struct ClumpShape {
    std::vector<Vec3> centre;     ///< component centres, principal frame, unit size
    std::vector<double> radius;   ///< component radii, unit size
    double volume = 0.0;          ///< of the union at unit size (2D: its area)
    /// Principal moments of inertia per unit mass at unit size, ascending
    /// (2D: only z counts, the polar moment about the centre of mass).
    Vec3 momentsPerMass = Vec3::Zero();
    double boundingRadius = 0.0;  ///< farthest component surface from the centre of mass, unit size
    /// The principal frame in the frame the components were given in: a
    /// body given there with orientation q_given has q = q_given · frame.
    Quat frame = Quat::Identity();
    /// The centre of mass in the frame the components were given in, unit
    /// size: a body given there at x_given (a packing file's row) has its
    /// centre at x_given + q_given (size · centroid).
    Vec3 centroid = Vec3::Zero();
    double errorBound = 0.0;  ///< of the mass properties (0: exact; unionMassProperties)
};

/// The clump shape of `components` (given in their own frame): its mass
/// properties (unionMassProperties, `dimension` 2 or 3), the components
/// moved into the principal frame, and that frame. Throws InputError as
/// unionMassProperties does.
ClumpShape makeClumpShape(const std::vector<SphereComponent>& components, int dimension);

/// The lightest mass a contact on one of the shape's spheres moves along its
/// normal, as a fraction of the clump's mass: 1/(1 + λ), λ the largest
/// eigenvalue of [c×]ᵀ diag(spins/J) [c×] over the sphere centres c (J the
/// moments per mass; `spins` masks the locked rotations, 0 or 1 per axis).
/// A contact along n moves 1/(1/m + (c × n)ᵀ I⁻¹ (c × n)); the arm's part
/// along n has no moment. Independent of size and mass.
double lightestContactFraction(const ClumpShape& shape, const Vec3& spins);

/// The torque-free motion of a rigid body over dt at constant world angular
/// momentum L = R diag(I) Rᵀ ω, R the rotation of q: q and the world angular
/// velocity w are updated together. A spherical top (three equal moments)
/// turns at constant ω (World::rotate); a symmetric top (two equal, I_a =
/// I_b = A, the third I_k = C: dimers, planar trimers, any clump with an
/// axis of threefold symmetry or more) in closed form, exact to rounding:
/// a turn about L at |L|/A composed with a turn about its axis k at
/// π_k (1/C − 1/A). An asymmetric body: the free rotor's Hamiltonian
/// Σ π_k² / 2I_k (π = Rᵀ L, the body-frame angular momentum) is split into
/// its three terms, each an exact rotation about one principal axis, and
/// composed symmetrically over the axes 1, 2, 3, 2, 1 (dt/2, dt/2, dt, dt/2,
/// dt/2): symplectic, time-reversible, second order (Dullweber, Leimkuhler
/// and McLachlan, J. Chem. Phys. 107, 5840 (1997); the rotation of Miller et
/// al.'s NO_SQUISH integrator, J. Chem. Phys. 116, 8649 (2002)). |L| and the
/// direction of L are kept to rounding, the energy to O(dt²) without drift
/// (symmetric and spherical tops: to rounding). Moments equal within 10⁻¹²
/// of the largest count as equal. Sines and cosines of half angles below
/// 10⁻² come from their Taylor series (exact to rounding). `moments` are
/// the principal moments (all positive).
void freeRotorDrift(Quat& q, Vec3& w, const Vec3& moments, double dt);

/// The world-frame product I_w⁻¹ t = R diag(inverse) Rᵀ t of a body of
/// orientation q with principal inverse moments `inverse`.
inline Vec3 inverseInertiaTimes(const Quat& q, const Vec3& inverse, const Vec3& t) {
    return turned(q, inverse.cwiseProduct(turned(q.conjugate(), t)));
}

/// The world-frame inverse inertia tensor R diag(inverse) Rᵀ.
inline Mat3 inverseInertiaWorld(const Quat& q, const Vec3& inverse) {
    const Mat3 R = q.toRotationMatrix();
    return R * inverse.asDiagonal() * R.transpose();
}

}  // namespace moreau
