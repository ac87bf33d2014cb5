#pragma once
/// The Brilliantov saw-tooth tangential law (force schemes eq. 22). Memory:
/// the total tangential displacement ζ (3 slots).
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/spring.hpp"

namespace moreau {

/// F_s = −μ F_n (ζ/ζ₀ − ⌊ζ/ζ₀⌋) along ζ̂: a saw-tooth of period ζ₀ in the
/// total tangential displacement ζ = ∫ v_s dt (eq. 17). In 3D the tooth acts
/// along ζ on its length |ζ|. Returns the force on b.
inline Vec3 sawToothForce(const Vec3& zeta, double mu, double Fn, double zeta0) {
    const double len = zeta.norm();
    if (len <= 0.0 || zeta0 <= 0.0) return Vec3::Zero();
    const double x = len / zeta0;
    return -(mu * std::max(Fn, 0.0) * (x - std::floor(x)) / len) * zeta;
}

template <>
struct TangentialKernel<TangentialLaw::SawTooth> {
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem, bool&, LawOutput& out) {
        Vec3 zeta = rotateIntoPlane(slotVec3(mem), k.n);
        zeta += k.movement();  // ζ of eq. 17, never truncated
        setSlotVec3(mem, zeta);
        const double zeta0 = k.settings.zeta0;
        const Vec3 Ft = sawToothForce(zeta, c.mu, Fn, zeta0);
        // The current tooth stores |F|²/(2 k_tooth), k_tooth = μ F_n/ζ₀.
        const double muFn = c.mu * Fn;
        out.energy = muFn > 0.0 ? Ft.squaredNorm() * zeta0 / (2.0 * muFn) : 0.0;
        return Ft;
    }
};

}  // namespace moreau
