#pragma once
/// CdSolver's rows that touch a clump (ClumpRow, docs/clumps.md "Contact
/// dynamics"): the relative velocity with general lever arms, an impulse's
/// kick through each body's world inverse inertia tensor, and the
/// one-contact law on the whole Delassus block. Spheres never come here.
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#define MOREAU_CLUMP_ROWS_AVX2 1
#else
#define MOREAU_CLUMP_ROWS_AVX2 0
#endif

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
    const SpinTensor& I = t.spin[i];
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

#if MOREAU_CLUMP_ROWS_AVX2
/// solve() four doubles at a time (cd.simd = avx2, where the CPU has it): a
/// Vec3 is one register (lane 3 unused), a 3 × 3 product a sum of columns
/// times broadcast components. Every lane does the scalar code's operations
/// in its order, with no fused multiply-add, so the bits are solve()'s
/// (tests/cd/test_clumps.cpp compares them). Only for the row's own blocks
/// (k.W, k.Winv: their column loads read the member after each); `extra`
/// is null or a deforming cell's image velocity. The law stays scalar: the
/// sticking impulse in vectors, the sliding case one_contact::slide.
namespace avx2 {
#define MOREAU_AVX2 [[gnu::target("avx2"), gnu::always_inline]] inline

/// (y, z, x, ·) and (z, x, y, ·) of (x, y, z, ·).
MOREAU_AVX2 __m256d yzx(__m256d v) { return _mm256_permute4x64_pd(v, 0xC9); }
MOREAU_AVX2 __m256d zxy(__m256d v) { return _mm256_permute4x64_pd(v, 0xD2); }
/// Lane k of v in every lane.
template <int K>
MOREAU_AVX2 __m256d lane(__m256d v) {
    return _mm256_permute4x64_pd(v, K * 0x55);
}
/// l × d, as cross3: l.y d.z − l.z d.y, …
MOREAU_AVX2 __m256d cross(__m256d l, __m256d d) { return yzx(l) * zxy(d) - zxy(l) * yzx(d); }
/// c0 v0 + c1 v1 + c2 v2 (columns c, components v broadcast), summed in that order.
MOREAU_AVX2 __m256d columns(const double* c0, const double* c1, const double* c2, __m256d v) {
    return (_mm256_loadu_pd(c0) * lane<0>(v) + _mm256_loadu_pd(c1) * lane<1>(v)) + _mm256_loadu_pd(c2) * lane<2>(v);
}
MOREAU_AVX2 double at0(__m256d v) { return _mm256_cvtsd_f64(v); }
MOREAU_AVX2 double at1(__m256d v) { return _mm_cvtsd_f64(_mm_unpackhi_pd(_mm256_castpd256_pd128(v), _mm256_castpd256_pd128(v))); }
MOREAU_AVX2 double at2(__m256d v) { return _mm_cvtsd_f64(_mm256_extractf128_pd(v, 1)); }

/// kick() with dP (lane 3 zero) in a register.
MOREAU_AVX2 void kick(SolverBody& B, BodyId id, const std::vector<BodyMasks>& masks, const RowTables& t, __m256d dP,
                      const Vec3& l, double sign) {
    const auto i = static_cast<std::size_t>(id);
    if (B.invMass >= 0.0) {
        _mm256_store_pd(&B.v.x(), _mm256_load_pd(&B.v.x()) + _mm256_set1_pd(sign * B.invMass) * dP);
    } else {
        const Vec3 d(at0(dP), at1(dP), at2(dP));
        B.v += (-sign * B.invMass) * masks[i].linear.cwiseProduct(d);
    }
    const __m256d m = _mm256_set1_pd(sign) * cross(_mm256_loadu_pd(&l.x()), dP);
    const SpinTensor& I = t.spin[i];  // columns padded with zeros: lane 3 (invInertia) gains +0
    _mm256_store_pd(&B.w.x(), _mm256_load_pd(&B.w.x()) + columns(I.col[0], I.col[1], I.col[2], m));
}

MOREAU_AVX2 void solve(SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                       const RowTables& t, const Vec3* extra) {
    const ClumpRow& k = of(r, t);
    const __m256d P = _mm256_loadu_pd(&r.P.x());  // lane 3: r.ra
    double x[3] = {0.0, 0.0, 0.0};
    if (r.mn != 0.0) {  // else solved elsewhere, or within one body
        const SolverBody& A = bodies[static_cast<std::size_t>(r.a)];
        const SolverBody& B = bodies[static_cast<std::size_t>(r.b)];
        const __m256d e = extra ? _mm256_maskload_pd(&extra->x(), _mm256_set_epi64x(0, -1, -1, -1)) : _mm256_setzero_pd();
        // V = v_b + ω_b × l_b − v_a − ω_a × l_a (+ extra): solve()'s sums in its order.
        const __m256d V = (((_mm256_load_pd(&B.v.x()) - _mm256_load_pd(&A.v.x())) + e) -
                           cross(_mm256_loadu_pd(&k.lb.x()), _mm256_load_pd(&B.w.x()))) +
                          cross(_mm256_loadu_pd(&k.la.x()), _mm256_load_pd(&A.w.x()));
        const double* fT = &k.frameT[0][0];
        const __m256d p = columns(fT, fT + 4, fT + 8, P);  // the impulse in the frame
        const double* W = k.W.data();
        const __m256d q4 = columns(fT, fT + 4, fT + 8, V) - columns(W, W + 3, W + 6, p);
        const Vec3 q(at0(q4) + r.bias, at1(q4), at2(q4));
        const double mu = t.mu[r.friction];
        Vec3 sol;
        if (t.planar) {
            sol = solvePlanar(k.W, q, mu);
        } else if (q.x() >= 0.0) {
            sol = Vec3::Zero();
        } else if (mu == 0.0) {
            sol = k.W(0, 0) > 0.0 ? Vec3(-q.x() / k.W(0, 0), 0.0, 0.0) : Vec3::Zero();
        } else {
            const double* Wi = k.Winv.data();
            const __m256d qb = _mm256_blend_pd(q4, _mm256_set1_pd(q.x()), 0x1);  // q with the bias
            const __m256d s4 = -columns(Wi, Wi + 3, Wi + 6, qb);
            const Vec3 stick(at0(s4), at1(s4), at2(s4));
            const double st2 = stick.y() * stick.y() + stick.z() * stick.z();
            if (stick.x() > 0.0 && st2 <= mu * mu * stick.x() * stick.x()) sol = stick;
            else sol = one_contact::slide(k.W, q, mu, Vec3(at0(p), at1(p), at2(p)), stick, st2);
        }
        x[0] = sol.x();
        x[1] = sol.y();
        x[2] = sol.z();
    }
    const __m256d Pnew = (_mm256_loadu_pd(&r.n.x()) * _mm256_set1_pd(x[0]) + _mm256_loadu_pd(&k.t1.x()) * _mm256_set1_pd(x[1])) +
                         _mm256_loadu_pd(&k.t2.x()) * _mm256_set1_pd(x[2]);
    const __m256d dP = _mm256_blend_pd(Pnew - P, _mm256_setzero_pd(), 0x8);
    _mm256_storeu_pd(&r.P.x(), _mm256_blend_pd(Pnew, P, 0x8));  // r.ra kept
    kick(bodies[static_cast<std::size_t>(r.a)], r.a, masks, t, dP, k.la, -1.0);
    kick(bodies[static_cast<std::size_t>(r.b)], r.b, masks, t, dP, k.lb, +1.0);
    const double d0 = at0(dP), d1 = at1(dP), d2 = at2(dP);
    r.dP = static_cast<float>(std::sqrt(d0 * d0 + d1 * d1 + d2 * d2));
}
#undef MOREAU_AVX2
}  // namespace avx2
#endif

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
