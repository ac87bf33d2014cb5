#pragma once
/// Mass properties of a clump: the union of its component spheres (3D) or
/// disks (2D), overlaps counted once (docs/clumps.md, "Clump mass properties").
///
/// Everything is at unit density: the caller multiplies volume and inertia by
/// grains.density. Lengths are in the clump's own frame and units (the
/// [clump] spheres key, before scaling by the grain's size; volume scales as
/// s³ (2D: s²), inertia as s⁵ (2D: s⁴)).
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

/// One sphere (disk in 2D) of a clump, in the clump's own frame.
struct SphereComponent {
    Vec3 centre = Vec3::Zero();
    double radius = 0.0;
};

/// Volume, centre of mass and inertia of a union of spheres at unit density.
struct UnionMassProperties {
    /// 3D: volume. 2D: area of the union of the disks (in the x–y plane).
    double volume = 0.0;
    /// Centre of mass in the input frame (2D: z = 0).
    Vec3 centroid = Vec3::Zero();
    /// Inertia tensor about the centroid, input axes, unit density. 2D: the
    /// tensor of a plate of unit areal density, I_zz = ∫(x² + y²) dA the polar
    /// moment (the one a 2D grain spins with; a one-disk clump gets exactly
    /// grainInertia(Disk, πr², r) = πr⁴/2), I_xx = ∫y² dA, I_yy = ∫x² dA, I_xy = −∫xy dA.
    Mat3 inertia = Mat3::Zero();
    /// Eigenvalues of `inertia`, ascending (equal moments may differ by roundoff
    /// in either order); 2D: the in-plane pair, then the polar moment.
    Vec3 principalMoments = Vec3::Zero();
    /// Rotation R from the principal (body) axes to the input axes:
    /// inertia = R diag(principalMoments) Rᵀ. Right-handed; identity when the
    /// tensor is diagonal and already ascending (a single sphere gives identity
    /// exactly); 2D: a rotation about z. Column signs: see mass_properties.cpp.
    Quat principalFrame = Quat::Identity();
    /// max over components of |centre − centroid| + radius (2D: in-plane distance).
    double boundingRadius = 0.0;
    /// Estimated relative error of volume and inertia: 0 on the exact paths
    /// (roundoff aside), the quadrature's a-posteriori estimate otherwise.
    double errorBound = 0.0;
    /// True when a closed form gave the result (every 2D union; 3D unions in
    /// which no point lies inside three spheres).
    bool exact = true;
};

/// How the 3D union is integrated. Automatic takes the exact pairwise
/// inclusion–exclusion where no three spheres share interior points and the
/// slice quadrature otherwise; Slices forces the quadrature (for tests and
/// comparisons). 2D unions are always integrated exactly (Green's theorem on
/// the exposed arcs); the method is ignored there.
enum class UnionMethod { Automatic, Slices };

/// Mass properties of the union of `components` (1 to 16 of them; identical
/// components count once) in `dimension` 2 (disks in the x–y plane, z of the
/// centres ignored) or 3 (spheres). A 2D scene of spheres held in a plane
/// takes dimension 3. Throws InputError (exit 2) on no components, more than
/// 16, a radius that is not positive and finite, a non-finite centre, or a
/// dimension other than 2 or 3.
UnionMassProperties unionMassProperties(const std::vector<SphereComponent>& components, int dimension,
                                        UnionMethod method = UnionMethod::Automatic);

}  // namespace moreau
