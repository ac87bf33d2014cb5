#pragma once
/// CdSolver's rows that touch a clump (ClumpRow, docs/clumps.md "Contact
/// dynamics"): the relative velocity with general lever arms, an impulse's
/// kick through each body's world inverse inertia tensor, and the
/// one-contact law on the whole Delassus block. Spheres never come here.
#include <cmath>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/solver.hpp"

namespace moreau::clump_rows {

inline const ClumpRow& of(const SolverRow& r, const RowTables& t) {
    return t.clump[static_cast<std::size_t>(-r.ra - 1.0)];
}

/// Eq. 3 with general arms: V = v_b + ω_b × l_b − v_a − ω_a × l_a.
inline Vec3 relativeVelocity(const ClumpRow& k, const SolverBody& A, const SolverBody& B) {
    return B.v + B.w.cross(k.lb) - A.v - A.w.cross(k.la);
}

/// Body `id` (arm l) takes the impulse sign·dP: Δv = sign M⁻¹ dP,
/// Δω = I_w⁻¹ (l × sign·dP).
inline void kick(SolverBody& B, BodyId id, const std::vector<BodyMasks>& masks, const RowTables& t, const Vec3& dP,
                 const Vec3& l, double sign) {
    const auto i = static_cast<std::size_t>(id);
    if (B.invMass >= 0.0) B.v += (sign * B.invMass) * dP;
    else B.v += (-sign * B.invMass) * masks[i].linear.cwiseProduct(dP);
    B.w += t.spin[i] * (sign * l.cross(dP));
}

inline void applyImpulse(const SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                         const RowTables& t, const Vec3& dP) {
    const ClumpRow& k = of(r, t);
    kick(bodies[static_cast<std::size_t>(r.a)], r.a, masks, t, dP, k.la, -1.0);
    kick(bodies[static_cast<std::size_t>(r.b)], r.b, masks, t, dP, k.lb, +1.0);
}

/// The one-contact law of a 2D row, u = W r + q on (n, t) (the third
/// direction, z, is locked), in closed form: separation when q_n ≥ 0,
/// sticking when −W⁻¹q lies in the cone, else sliding r = ρ (1, −μ s) with
/// u_n = 0 and s u_t ≥ 0, s = ±1 (first the side the sticking impulse
/// leaves the cone by).
inline Vec3 solvePlanar(const Mat3& W, const Vec3& q, double mu) {
    const double a = W(0, 0), b = W(0, 1), c = W(1, 1);
    if (q.x() >= 0.0 || !(a > 0.0)) return Vec3::Zero();
    if (mu == 0.0) return {-q.x() / a, 0.0, 0.0};
    const double det = a * c - b * b;
    double side = q.y() >= 0.0 ? 1.0 : -1.0;
    if (det > 0.0) {
        const double rn = (b * q.y() - c * q.x()) / det, rt = (b * q.x() - a * q.y()) / det;
        if (rn > 0.0 && std::abs(rt) <= mu * rn) return {rn, rt, 0.0};
        side = rt > 0.0 ? -1.0 : 1.0;
    }
    for (const double s : {side, -side}) {
        const double den = a - mu * s * b;
        if (!(den > 0.0)) continue;
        const double rho = -q.x() / den;
        if (s * (rho * (b - mu * s * c) + q.y()) >= 0.0) return {rho, -mu * s * rho, 0.0};
    }
    return {-q.x() / a, 0.0, 0.0};  // (no sliding root: W far from a rigid body's)
}

/// The impulse of the shock law (eq. 34) on the whole block W (the row's,
/// or the proximal problem's) for a relative velocity V that holds the
/// row's current impulse: u = V + g/Δt n = W P + q in the row's frame.
inline Vec3 impulse(const SolverRow& r, const ClumpRow& k, const Vec3& V, const Mat3& W, const Mat3& Winv,
                    const RowTables& t) {
    if (r.mn == 0.0) return Vec3::Zero();  // solved elsewhere, or within one body
    const Vec3 u = V + r.bias * r.n;
    const Vec3 p(r.n.dot(r.P), k.t1.dot(r.P), k.t2.dot(r.P));
    const Vec3 q = Vec3(r.n.dot(u), k.t1.dot(u), k.t2.dot(u)) - W * p;
    const double mu = t.mu[r.friction];
    const Vec3 x = t.planar ? solvePlanar(W, q, mu) : solveOneContact(W, Winv, q, mu, p);
    return x.x() * r.n + x.y() * k.t1 + x.z() * k.t2;
}

}  // namespace moreau::clump_rows
