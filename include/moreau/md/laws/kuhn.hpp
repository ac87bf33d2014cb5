#pragma once
/// Kuhn, Suzuki & Daouadji's refined 3D linear–frictional algorithm (their
/// Fig. 1) with its work increments. Memory: the tangential force on a,
/// f^{t,t} (3 slots), the normal force at the last evaluation f^{n,t} and
/// the dissipated work accumulated over the contact's life.
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/spring.hpp"

namespace moreau {

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

template <>
struct TangentialKernel<TangentialLaw::Kuhn> {
    /// The period of a sphere's tangential oscillation on k_t (the run guard's contact duration).
    static double duration(const MdSettings& s, const CollisionProbe& p) { return tangentialSpringPeriod(s, p); }
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem, bool& sliding,
                      LawOutput& out) {
        const MdSettings& s = k.settings;
        const Vec3& n = k.n;
        const World& world = k.world;
        double* aux = mem + 3;
        KuhnInput in;
        in.forceStart = slotVec3(mem);
        in.normalStart = aux[0];
        in.normalEnd = Fn;
        in.overlapEnd = k.overlap;
        // Δū of eq. 5 with Kuhn's contact vectors, which end at the contact
        // point in the middle of the overlap (r − ξ/2): then a rigid
        // rotation of an overlapping pair moves nothing.
        const Vec3 spin = world.w[k.ia] + world.w[k.ib];
        in.movement = k.stage ? k.increment : Vec3((k.V + 0.5 * k.overlap * spin.cross(n)) * k.dt);
        in.n = n;
        in.twirlAngle = k.stage ? k.twirl : k.dt * spin.dot(n);
        in.kt = c.kt;
        in.muStatic = c.muStatic;
        in.mu = c.mu;
        in.slidingBefore = sliding;
        KuhnOutput step = kuhnStep(in, KuhnSwitches{s.kuhnOnset, s.kuhnSlipOnset, s.kuhnSlipRotation,
                                                    s.kuhnProjection, s.kuhnTwirl});
        if (k.stage && k.atStepStart && in.normalStart > 0.0 && sliding && !step.sliding) {
            // At the step start (τ → 0⁺) the yield circle has not shrunk
            // with the normal force yet, so a contact that the committed
            // step found sliding would read as sticking: keep it sliding.
            step.sliding = true;
        }
        setSlotVec3(mem, step.force);
        sliding = step.sliding;
        aux[0] = std::max(Fn, 0.0);
        aux[1] += step.workDissipated;
        // Contact damping (Kuhn §2, last paragraph: −γ_t ΔU/Δt, here its
        // tangential part) while the contact sticks; a sliding contact feels
        // μ_d F_n only, as with the spring law.
        const double damping = step.sliding ? 0.0 : c.gt;
        Vec3 Ft = -step.force - damping * k.Vt;
        if (!step.sliding) Ft = capped(Ft, c.muStatic * std::max(Fn, 0.0));
        out.energy = c.kt > 0.0 ? 0.5 * step.force.squaredNorm() / c.kt : 0.0;
        out.ownWork = true;
        out.work = step.work + damping * k.Vt.squaredNorm() * k.dt;
        out.workParts = Vec3(step.work, step.workElastic, step.workDissipated);
        return Ft;
    }
};

}  // namespace moreau
