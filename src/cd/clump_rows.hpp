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
[[gnu::always_inline]] inline void kick(SolverBody& B, BodyId id, const std::vector<BodyMasks>& masks,
                                        const RowTables& t, const Vec3& dP, const Vec3& l, double sign) {
    const auto i = static_cast<std::size_t>(id);
    if (B.invMass >= 0.0) B.v += (sign * B.invMass) * dP;
    else B.v += (-sign * B.invMass) * masks[i].linear.cwiseProduct(dP);
    const double m[3] = {sign * (l.y() * dP.z() - l.z() * dP.y()), sign * (l.z() * dP.x() - l.x() * dP.z()),
                         sign * (l.x() * dP.y() - l.y() * dP.x())};
    const Mat3& I = t.spin[i];
    for (int c = 0; c < 3; ++c) B.w[c] += I(c, 0) * m[0] + I(c, 1) * m[1] + I(c, 2) * m[2];
}

[[gnu::always_inline]] inline void applyImpulse(const SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
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

/// a · (x, y, z), written out: on Vec3 (three doubles, unaligned) Eigen's
/// SSE2 packets cost more instructions than the scalar products.
[[gnu::always_inline]] inline double dot3(const Vec3& a, double x, double y, double z) {
    return a.x() * x + a.y() * y + a.z() * z;
}

/// l × (x, y, z) into out.
[[gnu::always_inline]] inline void cross3(const Vec3& l, double x, double y, double z, double* out) {
    out[0] = l.y() * z - l.z() * y;
    out[1] = l.z() * x - l.x() * z;
    out[2] = l.x() * y - l.y() * x;
}

/// The shock law (eq. 34) in the row's frame (n, t1, t2) on the block W
/// (the row's, or the proximal problem's, with its inverse), for a relative
/// velocity V (world frame) that holds the row's current impulse:
/// u = V + g/Δt n = W p + q. Gives p, the current impulse in the frame, and
/// x, the new one. Scalar arithmetic: on Vec3 (three unaligned doubles)
/// Eigen's SSE2 packets cost more instructions than scalar products.
[[gnu::always_inline]] inline void lawInFrame(const SolverRow& r, const ClumpRow& k, double Vx, double Vy, double Vz,
                                              const Mat3& W, const Mat3& Winv, const RowTables& t, double* p,
                                              double* x) {
    const Vec3* e[3] = {&r.n, &k.t1, &k.t2};
    for (int i = 0; i < 3; ++i) p[i] = dot3(*e[i], r.P.x(), r.P.y(), r.P.z());
    Vec3 q;
    for (int i = 0; i < 3; ++i) q[i] = dot3(*e[i], Vx, Vy, Vz) - (W(i, 0) * p[0] + W(i, 1) * p[1] + W(i, 2) * p[2]);
    q.x() += r.bias;
    const double mu = t.mu[r.friction];
    const Vec3 sol = t.planar ? solvePlanar(W, q, mu) : solveOneContact(W, Winv, q, mu, Vec3(p[0], p[1], p[2]));
    x[0] = sol.x();
    x[1] = sol.y();
    x[2] = sol.z();
}

/// A clump row's whole update in the sweep: lawInFrame for the relative
/// velocity plus `extra` (world frame: a deforming cell's image velocity,
/// the proximal term), the change applied to both bodies (applyImpulse).
/// What impulse() and setImpulse do, with the velocity and the new impulse
/// in scalars.
[[gnu::always_inline]] inline void solve(SolverRow& r, std::vector<SolverBody>& bodies,
                                         const std::vector<BodyMasks>& masks, const RowTables& t, const Mat3& W,
                                         const Mat3& Winv, const Vec3& extra) {
    const ClumpRow& k = of(r, t);
    const SolverBody& A = bodies[static_cast<std::size_t>(r.a)];
    const SolverBody& B = bodies[static_cast<std::size_t>(r.b)];
    double p[3], x[3] = {0.0, 0.0, 0.0};
    if (r.mn != 0.0) {  // else solved elsewhere, or within one body
        // V = v_b + ω_b × l_b − v_a − ω_a × l_a (+ extra); l × ω = −ω × l.
        double wa[3], wb[3];
        cross3(k.la, A.w.x(), A.w.y(), A.w.z(), wa);
        cross3(k.lb, B.w.x(), B.w.y(), B.w.z(), wb);
        lawInFrame(r, k, B.v.x() - A.v.x() + extra.x() - wb[0] + wa[0], B.v.y() - A.v.y() + extra.y() - wb[1] + wa[1],
                   B.v.z() - A.v.z() + extra.z() - wb[2] + wa[2], W, Winv, t, p, x);
    }
    double dP[3];
    for (int c = 0; c < 3; ++c) {
        const double Pnew = x[0] * r.n[c] + x[1] * k.t1[c] + x[2] * k.t2[c];
        dP[c] = Pnew - r.P[c];
        r.P[c] = Pnew;
    }
    applyImpulse(r, bodies, masks, t, Vec3(dP[0], dP[1], dP[2]));
    r.dP = static_cast<float>(std::sqrt(dP[0] * dP[0] + dP[1] * dP[1] + dP[2] * dP[2]));
}

/// The impulse of the shock law (eq. 34) on the whole block W (the row's,
/// or the proximal problem's) for a relative velocity V that holds the
/// row's current impulse: u = V + g/Δt n = W P + q in the row's frame.
inline Vec3 impulse(const SolverRow& r, const ClumpRow& k, const Vec3& V, const Mat3& W, const Mat3& Winv,
                    const RowTables& t) {
    if (r.mn == 0.0) return Vec3::Zero();  // solved elsewhere, or within one body
    double p[3], x[3];
    lawInFrame(r, k, V.x(), V.y(), V.z(), W, Winv, t, p, x);
    return x[0] * r.n + x[1] * k.t1 + x[2] * k.t2;
}

}  // namespace moreau::clump_rows
