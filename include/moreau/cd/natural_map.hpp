#pragma once
/// The error measure of the non-smooth contact community (Siconos
/// `fc3d_compute_error`, FCLIB's merit function): for each contact the
/// natural map of Coulomb's law written with De Saxcé's modified velocity,
///
///     ũ = u + μ‖u_t‖ n,      K_μ ∋ r ⊥ ũ ∈ K_μ*      (Coulomb's law)
///     e_α = r − P_K(r − ũ)                               (zero iff the law holds)
///     error = sqrt(Σ_α ‖e_α‖²) / max(‖q‖, ‖r‖, ‖u‖)
///
/// with K_μ = {‖r_t‖ ≤ μ r_n}, r the contact impulse, u = W r + q the
/// relative velocity (normal component positive when the bodies separate) and
/// q the velocity the bodies would have without contact impulses. It mixes
/// impulses and velocities as the field's measure does: docs/convergence.md.
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/core/types.hpp"

namespace moreau {

/// The contact frame (n, t1, t2) of the local problems: t1 ⟂ n and the axis
/// least aligned with n, t2 = n × t1 (right-handed); in 2D (n in the x–y
/// plane) t2 is ±z exactly.
inline void contactFrame(const Vec3& n, Vec3& t1, Vec3& t2) {
    int k = 0;
    for (int i = 1; i < 3; ++i)
        if (std::abs(n[i]) < std::abs(n[k])) k = i;
    t1 = n.cross(Vec3::Unit(k)).normalized();
    t2 = n.cross(t1);
}

/// The contact frame as the columns (n, t1, t2) of a matrix: local
/// components of a world vector v are frameᵀ v, and back frame r.
inline Mat3 contactFrameMatrix(const Vec3& n) {
    Vec3 t1, t2;
    contactFrame(n, t1, t2);
    Mat3 f;
    f.col(0) = n;
    f.col(1) = t1;
    f.col(2) = t2;
    return f;
}

/// Projection of z onto the cone K_μ with axis n (unit): z itself inside,
/// 0 inside the polar cone, else the nearest point of the cone's surface.
inline Vec3 projectOnCone(const Vec3& z, const Vec3& n, double mu) {
    const double zn = z.dot(n);
    const Vec3 zt = z - zn * n;
    const double nt = zt.norm();
    if (nt <= mu * zn) return z;
    if (mu * nt <= -zn) return Vec3::Zero();
    const double a = (zn + mu * nt) / (1.0 + mu * mu);
    return a * n + (nt > 0.0 ? Vec3((mu * a / nt) * zt) : Vec3::Zero());
}

/// ‖r − P_K(r − ũ)‖² of one contact: r the impulse, u the relative velocity
/// (both in any frame), n the contact normal in that frame.
inline double naturalMapResidual2(const Vec3& r, const Vec3& u, const Vec3& n, double mu) {
    const double un = u.dot(n);
    const Vec3 uTilde = u + (mu * (u - un * n).norm()) * n;
    return (r - projectOnCone(r - uTilde, n, mu)).squaredNorm();
}

/// The relative error from its parts: sqrt(Σ‖e_α‖²) over the largest of
/// ‖q‖, ‖r‖, ‖u‖ (the absolute error where all three vanish; +∞ where any
/// part is not finite).
inline double naturalError(double sumResidual2, double q2, double r2, double u2) {
    // A diverged iterate (non-finite impulses or velocities) is infinitely far
    // from the law, never "converged".
    if (!std::isfinite(sumResidual2) || !std::isfinite(q2) || !std::isfinite(r2) || !std::isfinite(u2))
        return std::numeric_limits<double>::infinity();
    const double scale = std::sqrt(std::max({q2, r2, u2}));
    const double abs = std::sqrt(sumResidual2);
    return scale > 2.220446049250313e-16 ? abs / scale : abs;
}

}  // namespace moreau
