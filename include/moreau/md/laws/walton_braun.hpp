#pragma once
/// The Walton–Braun / Mindlin variable tangential spring (force schemes
/// eqs. 20–21). Memory: the spring force T on a (3 slots), then the initial
/// direction of v_s (3), the force at the last reversal and the sign of the
/// last movement.
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/spring.hpp"

namespace moreau {

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

template <>
struct TangentialKernel<TangentialLaw::WaltonBraun> {
    /// The period of a sphere's tangential oscillation on k_s⁰ (the run guard's contact duration).
    static double duration(const MdSettings& s, const CollisionProbe& p) { return tangentialSpringPeriod(s, p); }
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem, bool& sliding,
                      LawOutput& out) {
        const Vec3& n = k.n;
        double* aux = mem + 3;
        // The spring force T on a (b feels −T) with its Mindlin memory.
        Vec3 spring = rotateIntoPlane(slotVec3(mem), n);
        MindlinState st;
        const Vec3 d = slotVec3(aux);
        const Vec3 dIn = d - n.dot(d) * n;
        if (dIn.squaredNorm() > 0.0) st.direction = dIn.normalized();
        st.reversalForce = aux[3];
        st.lastSign = aux[4] < 0.0 ? -1.0 : 1.0;
        // A sliding contact (at μ_d) slides on while it keeps moving along
        // its force; a sticking one starts to slide at μ_s.
        const Vec3 dxi = k.movement();
        const bool forward = dxi.dot(spring) > 0.0;
        spring = mindlinStep(spring, dxi, c.kt, sliding ? c.mu : c.muStatic, Fn, st);
        const double len = spring.norm(), limitD = c.mu * std::max(Fn, 0.0);
        if (sliding) sliding = forward && len >= limitD * (1.0 - 1e-3);
        else sliding = Fn > 0.0 && len >= c.muStatic * Fn * (1.0 - 1e-9);
        if (sliding && len > limitD) spring *= limitD / len;
        // Contact damping while the contact sticks, the total within μ_s
        // F_n; a sliding contact feels μ_d F_n only.
        const Vec3 Ft =
            sliding ? Vec3(-spring) : capped(Vec3(-spring - c.gt * k.Vt), c.muStatic * std::max(Fn, 0.0));
        out.energy = c.kt > 0.0 ? 0.5 * spring.squaredNorm() / c.kt : 0.0;
        setSlotVec3(mem, spring);
        setSlotVec3(aux, st.direction);
        aux[3] = st.reversalForce;
        aux[4] = st.lastSign;
        return Ft;
    }
};

}  // namespace moreau
