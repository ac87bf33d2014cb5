#pragma once
/// The Cundall–Strack tangential spring (force schemes eqs. 16–17), kept in
/// the tangent plane and limited by Coulomb. Memory: the spring ζ (3 slots).
/// Any number type (arithmetic.hpp).
#include "moreau/md/laws/arithmetic.hpp"

namespace moreau {

template <>
struct TangentialKernel<TangentialLaw::Spring> {
    /// The period of a sphere's tangential oscillation on the spring (the
    /// run guard's contact duration, kernel.hpp); a template, as normal.hpp's.
    template <class Settings, class Probe>
    static double duration(const Settings& s, const Probe& p) {
        return tangentialSpringPeriod(s, p);
    }
    /// The force on b; `spring` in: the committed ζ, out: the new one.
    template <class V, class R, class M>
    [[gnu::always_inline]] static V apply(const ConstantsOf<R>& c, const V& n, const V& Vt, R, R Fn,
                                          const V& movement, V& spring, M& sliding) {
        // Carried over, turned into the new tangent plane with its length
        // kept (the contact frame rotates with the pair).
        spring = rotateIntoPlane(spring, n);
        return cundallSpring(c, c.kt, Vt, movement, Fn, spring, sliding);
    }
    /// Its linearisation: the spring and dashpot while it sticks, Coulomb's
    /// rate while it slides.
    template <class Rate, class V>
    static void rate(const Rate& r, V& d) {
        d += r.sticks ? V(-r.c.kt * r.ut - r.c.gt * r.vt) : r.slide;
    }
};

}  // namespace moreau
