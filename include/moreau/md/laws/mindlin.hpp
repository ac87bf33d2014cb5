#pragma once
/// The Hertz–Mindlin tangential spring: Mindlin's (1949) tangential
/// stiffness of a Hertzian contact of radius a = √(R* ξ) under a small
/// tangential displacement, k_t = 8 G* a, G* = G/(2(2 − ν)) for two bodies
/// of one material (shear modulus G, Poisson's ratio ν: md.shear_modulus,
/// md.poisson_ratio). As in LIGGGHTS's default tangential model and LAMMPS's
/// granular "mindlin", the memory is the tangential displacement ζ (3
/// slots), and the force is −k_t(ξ) ζ − γ_t V_t at the current overlap,
/// limited by Coulomb exactly as the Cundall–Strack spring (eqs. 16–17):
/// sticking up to μ_s |F_n|, sliding at μ_d |F_n| with ζ shortened to match.
/// With md.meff = both, G (like k_n) is per unit effective mass.
#include <cmath>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/spring.hpp"

namespace moreau {

/// k_t = 8 G* a with a = √(R* ξ).
inline double mindlinStiffness(double shearModulus, double poisson, double reducedRadius, double overlap) {
    const double gStar = shearModulus / (2.0 * (2.0 - poisson));
    return 8.0 * gStar * std::sqrt(reducedRadius * overlap);
}

template <>
struct TangentialKernel<TangentialLaw::Mindlin> {
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem, bool& sliding,
                      LawOutput& out) {
        constexpr std::size_t kG = lawKeyIndex("md.shear_modulus"), kNu = lawKeyIndex("md.poisson_ratio");
        const LawValues& values = k.settings.lawValues;
        const double kt = c.kScale * mindlinStiffness(values[kG], values[kNu], k.reducedRadius(), k.overlap);
        Vec3 zeta = rotateIntoPlane(slotVec3(mem), k.n);
        const Vec3 Ft = cundallSpring(c, kt, k.Vt, k.movement(), Fn, zeta, sliding);
        setSlotVec3(mem, zeta);
        out.energy = 0.5 * kt * zeta.squaredNorm();
        return Ft;
    }
};

}  // namespace moreau
