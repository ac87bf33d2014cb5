#pragma once
/// Contact force kernels of the soft-sphere MD module that carry history:
/// the tangential laws beyond the velocity laws (Walton–Braun/Mindlin
/// variable spring, Brilliantov saw-tooth, Kuhn's refined linear–frictional
/// algorithm, Peña's geometric spring update). The normal laws and the
/// velocity laws live next to MdSolver's contact loop (md_solver.cpp).
///
/// Every kernel is a pure function of the committed per-contact memory at the
/// start of the step, the current kinematics and the time elapsed since the
/// start of the step, so an integrator may evaluate it several times per step
/// from the same committed memory. Vectors are in world coordinates; n points
/// from body a to body b; "movement" Δξ is the tangential displacement of b's
/// contact point relative to a's.
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/core/types.hpp"
#include "moreau/model/law_table.hpp"

namespace moreau {

/// Constants of one contact after the effective-mass convention (force
/// schemes §2, last paragraph) and the friction coefficients of its pair.
struct Constants {
    double kn, gn, s, kt, gt;
    double mu;        ///< dynamic (sliding) friction coefficient μ_d
    double muStatic;  ///< static friction coefficient μ_s ≥ μ_d
};

/// Turns a vector of the old tangent plane into the new one, keeping its
/// length: the contact frame rotates with the pair (what Cundall–Strack
/// springs need so that a rigid rotation does not load them).
[[gnu::always_inline]] inline Vec3 rotateIntoPlane(const Vec3& old, const Vec3& n) {
    // One square root (of the ratio of the squared lengths), not two: this
    // runs for every touching contact of every step.
    const Vec3 inPlane = old - n.dot(old) * n;
    const double len2 = old.squaredNorm(), lenIn2 = inPlane.squaredNorm();
    return lenIn2 > 0.0 ? Vec3(inPlane * std::sqrt(len2 / lenIn2)) : Vec3::Zero();
}

// ---------------------------------------------------------------------------
// Brilliantov saw-tooth (force schemes eq. 22)

/// F_s = −μ F_n (ζ/ζ₀ − ⌊ζ/ζ₀⌋) along ζ̂: a saw-tooth of period ζ₀ in the
/// total tangential displacement ζ = ∫ v_s dt (eq. 17). In 3D the tooth acts
/// along ζ on its length |ζ|. Returns the force on b.
inline Vec3 sawToothForce(const Vec3& zeta, double mu, double Fn, double zeta0) {
    const double len = zeta.norm();
    if (len <= 0.0 || zeta0 <= 0.0) return Vec3::Zero();
    const double x = len / zeta0;
    return -(mu * std::max(Fn, 0.0) * (x - std::floor(x)) / len) * zeta;
}

// ---------------------------------------------------------------------------
// Walton–Braun / Mindlin variable tangential spring (force schemes eqs. 20–21)

/// Memory of the variable spring besides the spring force T itself.
struct MindlinState {
    Vec3 direction = Vec3::Zero();  ///< initial direction of v_s (zero until the first movement)
    double reversalForce = 0.0;     ///< F_s*: T·direction when v_s last reversed (0 initially)
    double lastSign = 1.0;          ///< +1: last movement along `direction`, −1: against it
};

/// One step of eqs. 20–21. T is the spring's force on a (it grows along the
/// movement Δξ; the force on b is −T), already turned into the current
/// tangent plane. Along the initial direction d̂ of v_s the stiffness is
/// k_s = k_s⁰ (1 − (T − T*)/(μF_n − T*))^{1/3} while v_s keeps the initial
/// sense and k_s⁰ (1 − (T* − T)/(μF_n + T*))^{1/3} against it, T* being the
/// value of T·d̂ at the last reversal. In 3D the movement across d̂ (none in
/// the planar impacts of the paper) loads T with the initial stiffness k_s⁰.
/// |T| is kept within μ F_n (Coulomb). Returns the new T.
inline Vec3 mindlinStep(const Vec3& T, const Vec3& dxi, double k0, double mu, double Fn, MindlinState& st) {
    const double muN = mu * std::max(Fn, 0.0);
    if (st.direction.squaredNorm() == 0.0) {
        const double len = dxi.norm();
        if (len == 0.0) return T;
        st.direction = dxi / len;
        st.lastSign = 1.0;
        st.reversalForce = 0.0;
    }
    const Vec3& d = st.direction;
    const double along = dxi.dot(d);
    const Vec3 across = dxi - along * d;
    const double t = T.dot(d);
    if (along != 0.0) {
        const double sign = along > 0.0 ? 1.0 : -1.0;
        if (sign != st.lastSign) {  // v_s reversed: F_s* ← F_s
            st.reversalForce = t;
            st.lastSign = sign;
        }
    }
    const double Ts = st.reversalForce;
    double arg = 0.0;
    if (st.lastSign > 0.0) {
        const double room = muN - Ts;
        arg = room > 0.0 ? 1.0 - (t - Ts) / room : 0.0;
    } else {
        const double room = muN + Ts;
        arg = room > 0.0 ? 1.0 - (Ts - t) / room : 0.0;
    }
    const double ks = k0 * std::cbrt(std::clamp(arg, 0.0, 1.0));
    Vec3 next = T + ks * along * d + k0 * across;
    const double len = next.norm();
    if (len > muN) next *= len > 0.0 ? muN / len : 0.0;
    return next;
}

// ---------------------------------------------------------------------------
// Kuhn, Suzuki & Daouadji: the refined 3D linear–frictional algorithm (Fig. 1)

/// Which of the paper's four refinements are applied (each can be switched
/// off to compare with the conventional "add, then project onto the yield
/// circle" update).
struct KuhnSwitches {
    bool onset = true;        ///< contact starting within the step: only the movement after touching loads (eqs. 7–8)
    bool slipOnset = true;    ///< elastic movement before slip starts within the step (eqs. 9–15)
    bool slipRotation = true; ///< the force direction turning towards the movement while sliding (eqs. 16–21)
    bool projection = true;   ///< projection onto the new tangent plane (eq. 22)
    bool twirl = true;        ///< rotation with the pair's mean spin about n (eq. 23)
};

/// What one step of the algorithm needs.
struct KuhnInput {
    Vec3 forceStart;           ///< f^{t,t}: tangential force on a at the start of the step (memory)
    double normalStart;        ///< f^{n,t} ≥ 0: normal force at the start (0: not touching then)
    double normalEnd;          ///< f^{n,t+Δt} from the normal law
    double overlapEnd;         ///< ζ^{t+Δt} > 0
    Vec3 movement;             ///< Δū: movement of b's contact point relative to a's (eq. 5)
    Vec3 n;                    ///< normal at the end of the step, a → b
    double twirlAngle;         ///< (Δθ^a + Δθ^b)·n
    double kt, muStatic, mu;   ///< k^t, μ_s (onset of slip), μ (= μ_d, sliding)
    bool slidingBefore;        ///< the contact slid in the previous step (its limit is μ_d, not μ_s)
};

struct KuhnOutput {
    Vec3 force;                ///< f^{t,t+Δt}: tangential force on a at the end (force on b: −force)
    double work;               ///< ΔW^t: tangential work delivered to the contact in the step
    double workElastic;        ///< ΔW^{t,rev} (line 52)
    double workDissipated;     ///< ΔW^{t,irrev} (line 53)
    bool sliding;
};

/// The direction of the force at the end of a sliding movement, eqs. 16–20:
/// starting at angle θ^t from the movement direction, the force turns
/// towards it with tan(θ/2) decaying as exp(−E), E = ln(1 + c₂)/(c₁ c₂)
/// (1/c₁ when c₂ → 0), c₁ = μ f^n/(k^t |Δξ|), c₂ = Δf^n/f^n. That closed form
/// of eq. 18 (ln|csc θ − cot θ| = ln|tan(θ/2)|) replaces the paper's look-up
/// tables. Returns the unit direction.
inline Vec3 kuhnSlipDirection(const Vec3& mForce, const Vec3& dxi, const Vec3& n, double mu, double fn, double dfn,
                              double kt) {
    const double len = dxi.norm();
    if (len == 0.0 || fn <= 0.0) return mForce;
    const Vec3 mMove = dxi / len;
    const Vec3 mPerp = n.cross(mMove);
    const double theta = std::atan2(mForce.dot(mPerp), mForce.dot(mMove));
    const double c1 = mu * fn / (kt * len), c2 = dfn / fn;
    double E;
    if (1.0 + c2 <= 0.0) E = std::numeric_limits<double>::infinity();  // the normal force vanishes
    else if (std::abs(c2) < 1e-12) E = 1.0 / c1;
    else E = std::log1p(c2) / (c1 * c2);
    const double thetaEnd = 2.0 * std::atan(std::tan(0.5 * std::abs(theta)) * std::exp(-E));
    const double th = theta < 0.0 ? -thetaEnd : thetaEnd;
    return std::sin(th) * mPerp + std::cos(th) * mMove;
}

/// One step of Fig. 1 for a contact touching at the end of the step. The
/// normal force of the paper is linear (f^n = k^n ζ); here it comes from
/// whatever normal law the run uses and is interpolated linearly between
/// f^{n,t} and f^{n,t+Δt} within the step, which is the paper's k^n Δζ for
/// the linear law. With μ_s > μ_d the slip starts at μ_s f^n and the force
/// drops to μ_d f^n once sliding.
inline KuhnOutput kuhnStep(const KuhnInput& in, const KuhnSwitches& sw) {
    constexpr double eps = 1e-12;
    const Vec3& n = in.n;
    const double fnEnd = std::max(in.normalEnd, 0.0);
    double dzeta = -in.movement.dot(n);
    Vec3 dxi = in.movement + dzeta * n;  // eq. 6
    KuhnOutput out{Vec3::Zero(), 0.0, 0.0, 0.0, false};
    Vec3 f;
    const double fStartSq = in.forceStart.squaredNorm();
    if (in.normalStart <= 0.0) {
        // Not touching at the start (lines 10–18): only the movement after
        // the touch, a fraction 1 − α_o of the step, loads the spring.
        double alphaO = 0.0;
        if (sw.onset && dzeta > in.overlapEnd) alphaO = 1.0 - in.overlapEnd / dzeta;  // eq. 7
        dxi *= 1.0 - alphaO;                                                         // eq. 8
        f = in.kt * dxi;
        const double limit = in.muStatic * fnEnd;
        if (f.norm() > limit) {
            const double len = f.norm();
            f *= in.mu * fnEnd / len;
            out.sliding = true;
        }
        out.work = 0.5 * dxi.dot(f);
    } else {
        // Touching at the start (lines 19–45).
        const Vec3& f0 = in.forceStart;
        const double fn0 = in.normalStart, dfn = fnEnd - fn0;
        f = f0 + in.kt * dxi;  // eqs. 1–2
        const double mu0 = in.slidingBefore ? in.mu : in.muStatic;
        if (f.norm() > mu0 * fnEnd) {
            double alphaS = 0.0;
            if (sw.slipOnset) {
                const double A = std::pow(mu0 * dfn, 2) - (in.kt * dxi).squaredNorm();  // eq. 11
                const double B = mu0 * mu0 * fn0 * dfn - in.kt * f0.dot(dxi);          // eq. 12
                const double C = std::pow(mu0 * fn0, 2) - f0.squaredNorm();              // eq. 13
                const double scale = std::max(std::pow(mu0 * fn0, 2), (in.kt * dxi).squaredNorm());
                if (C <= eps * scale) alphaS = std::abs(A) > 0.0 ? std::max(0.0, -2.0 * B / A) : 0.0;
                else if (std::abs(A) < eps * scale) alphaS = B != 0.0 ? -C / (2.0 * B) : 0.0;  // eq. 14
                else alphaS = (-B - std::sqrt(std::max(0.0, B * B - A * C))) / A;            // eq. 10
                if (!std::isfinite(alphaS)) alphaS = 0.0;
                alphaS = std::clamp(alphaS, 0.0, 1.0);
            }
            out.work = alphaS * dxi.dot(f0 + 0.5 * alphaS * in.kt * dxi);  // line 28
            Vec3 fs = f0 + alphaS * in.kt * dxi;                           // eq. 15
            const double fnS = fn0 + alphaS * dfn;
            dxi *= 1.0 - alphaS;
            const double dfnRest = (1.0 - alphaS) * dfn;
            // Sliding from here on at μ_d (a drop from μ_s when the contact stuck before).
            const double fsLen = fs.norm();
            if (fsLen > 0.0 && fsLen > in.mu * fnS) fs *= in.mu * fnS / fsLen;
            Vec3 m;
            if (sw.slipRotation && fs.norm() > 0.0) {
                m = kuhnSlipDirection(fs / fs.norm(), dxi, n, in.mu, fnS, dfnRest, in.kt);
            } else {
                // The conventional shortcut: add the whole increment, then
                // scale back onto the yield circle.
                const Vec3 trial = fs + in.kt * dxi;
                const double tl = trial.norm();
                m = tl > 0.0 ? Vec3(trial / tl) : Vec3::Zero();
            }
            const Vec3 fEnd = in.mu * fnEnd * m;  // eqs. 20–21
            out.work += 0.5 * dxi.dot(fs + fEnd);  // line 45
            f = fEnd;
            out.sliding = true;
        } else {
            out.work = 0.5 * dxi.dot(f0 + f);  // line 45 without slip
        }
    }
    if (sw.projection) f -= f.dot(n) * n;                              // eq. 22
    if (sw.twirl) f -= 0.5 * in.twirlAngle * f.cross(n);               // eq. 23
    out.force = f;
    out.workElastic = (f.squaredNorm() - fStartSq) / (2.0 * in.kt);  // line 52
    out.workDissipated = out.work - out.workElastic;                  // line 53
    return out;
}

// ---------------------------------------------------------------------------
// Peña et al.: the spring from positions and angles (eqs. 14–15)

/// Increment of the tangential spring from the change of the relative
/// position R = x_b − x_a and of both orientations between the start of the
/// step and now, instead of v_t Δt (eq. 7): eq. 14's translation part
/// (projected onto the tangent plane, weighted by `translationWeight`) plus
/// eq. 15's rotation part −(r_a Δθ_a + r_b Δθ_b) × n, Δθ the rotation vector
/// from the old orientation to the new one.
inline Vec3 penaIncrement(const Vec3& dR, const Quat& qaOld, const Quat& qaNew, const Quat& qbOld, const Quat& qbNew,
                          double ra, double rb, const Vec3& n, double translationWeight) {
    auto rotationVector = [](const Quat& from, const Quat& to) -> Vec3 {
        Quat d = to * from.conjugate();
        if (d.w() < 0.0) d.coeffs() = -d.coeffs();  // the short way round
        const Eigen::AngleAxisd aa(d.normalized());
        return aa.angle() * aa.axis();
    };
    const Vec3 rot = -(ra * rotationVector(qaOld, qaNew) + rb * rotationVector(qbOld, qbNew)).cross(n);
    const Vec3 d = translationWeight * dR + rot;
    return d - n.dot(d) * n;
}

}  // namespace moreau
