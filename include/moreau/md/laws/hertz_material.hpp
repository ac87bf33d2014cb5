#pragma once
/// Hertz from material constants with Tsuji's damping, per pair:
///   F = 4/3 E* √R* ξ^{3/2} + η_n ξ̇,   η_n = α(e) √(2 m_eff k_n),  k_n = 4/3 E* a,  a = √(R* ξ),
/// with 1/E* = (1 − ν_a²)/E_a + (1 − ν_b²)/E_b over the pair's two
/// materials (Johnson, Contact Mechanics, 1985, §4.2: the
/// grains' md.youngs_modulus and md.poisson_ratio; a wall's
/// wall.NAME.youngs_modulus and wall.NAME.poisson_ratio), R* = r_a r_b/(r_a +
/// r_b) (r_a against a wall) and m_eff of the pair (a fixed wall counts as
/// infinitely heavy). So grain–grain and grain–wall contacts both follow
/// Hertz with their own k̃ = 4/3 E* √R*, which one md.kn per run cannot give.
///
/// Damping: Tsuji, Tanaka & Ishida, Powder Technology 71 (1992) 239–250,
/// η = α √(m k) ξ^{1/4}, with e independent of the impact speed. α(e) is the
/// polynomial fit LAMMPS's pair granular "damping tsuji" uses,
///   α = 1.2728 − 4.2783 e + 11.087 e² − 22.348 e³ + 27.467 e⁴ − 18.022 e⁵ + 4.8218 e⁶,
/// which fits the exact restitution of this law (the dimensionless
/// ẍ = −x^{3/2} − α √2 x^{1/4} ẋ, solved numerically) to 1.2e-3 in e for
/// 0.1 ≤ e ≤ 0.99 with the mass 2 m_eff (Tsuji's particle mass of an equal
/// pair) under the root. LAMMPS puts m_eff there, so its collisions come
/// out more elastic than the e it is given (0.616 for e = 0.5, 0.853 for
/// 0.8); tools/compare/lammps/hertz_material.py maps one onto the other.
/// md.meff does not apply: the constants are physical. No memory.
#include <cmath>
#include <vector>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/normal.hpp"

namespace moreau {

/// The grains' material (md.youngs_modulus, md.poisson_ratio).
inline ElasticMaterial grainMaterial(const MdSettings& s) {
    return {s.lawValues[lawKeyIndex("md.youngs_modulus")], s.lawValues[lawKeyIndex("md.poisson_ratio")]};
}
/// Wall k's material (wall.NAME.*; the grains' where the scene gives none).
inline ElasticMaterial wallMaterial(const MdSettings& s, std::size_t k) {
    return k < s.wallMaterials.size() ? s.wallMaterials[k] : grainMaterial(s);
}
/// E* of two materials (Johnson §4.2).
inline double effectiveModulus(const ElasticMaterial& a, const ElasticMaterial& b) {
    return 1.0 / ((1.0 - a.poissonRatio * a.poissonRatio) / a.youngsModulus +
                  (1.0 - b.poissonRatio * b.poissonRatio) / b.youngsModulus);
}
/// Tsuji's α for the restitution e (LAMMPS's fit, above).
inline double tsujiAlpha(double e) {
    return 1.2728 + e * (-4.2783 + e * (11.087 + e * (-22.348 + e * (27.467 + e * (-18.022 + e * 4.8218)))));
}
/// k̃/√R* = 4/3 E* of a grain against a grain (wall < 0) or against wall `wall`.
inline double hertzMaterialFactor(const MdSettings& s, long wall) {
    const ElasticMaterial grain = grainMaterial(s);
    return 4.0 / 3.0 * effectiveModulus(grain, wall >= 0 ? wallMaterial(s, static_cast<std::size_t>(wall)) : grain);
}

template <>
struct NormalKernel<NormalLaw::HertzMaterial> : HertzElastic {
    /// Once per run (MdSettings::normalRunConstants, as LAMMPS mixes its
    /// coefficients per pair of types once): Tsuji's α(e), then 4/3 E* of a
    /// grain against a grain and against each listed wall.
    static std::vector<double> runConstants(const MdSettings& s) {
        std::vector<double> run{tsujiAlpha(s.lawValues[lawKeyIndex("md.tsuji_en")]), hertzMaterialFactor(s, -1)};
        for (long k = 0; k < static_cast<long>(s.wallMaterials.size()); ++k) run.push_back(hertzMaterialFactor(s, k));
        return run;
    }
    /// The pair's k̃ = 4/3 E* √R* into c.kn and Tsuji's α √(2 m_eff k̃)
    /// into c.gn (what multiplies ξ^{1/4} ξ̇), from the run's constants and
    /// the two bodies (ra, rb: the radii of their touching spheres).
    static void pairConstants(Constants& c, const MdSettings& s, const World& world, std::size_t ia, std::size_t ib,
                              double ra, double rb) {
        const std::vector<double>& run = s.normalRunConstants;
        const bool wall = world.isWall(static_cast<BodyId>(ib));
        const std::size_t material = wall ? 2 + (ib - world.numGrains) : 1;  // a wall beyond the list: the grains'
        const double rStar = wall ? ra : ra * rb / (ra + rb);
        const double inverseMass = 1.0 / world.mass[ia] + (world.mass[ib] > 0.0 ? 1.0 / world.mass[ib] : 0.0);
        c.kn = run[material < run.size() ? material : 1] * std::sqrt(rStar);
        c.gn = run[0] * std::sqrt(2.0 * c.kn / inverseMass);
    }
    static double force(const Constants& c, double xi, double xiDot, double*) {
        const double r = std::sqrt(xi);
        return c.kn * xi * r + c.gn * std::sqrt(r) * xiDot;
    }
    static void rates(const Constants& c, double xi, double xiDot, const double*, double& kU, double& kV) {
        const double q = std::sqrt(std::sqrt(xi));
        kU = 1.5 * c.kn * q * q + (q > 0.0 ? 0.25 * c.gn * xiDot / (q * q * q) : 0.0);  // ∝ ξ^{-3/4}: singular at first touch
        kV = c.gn * q;
    }
    /// The undamped Hertz duration (eq. 7) with the probe's k̃ = 4/3 E* √R*.
    static double duration(const MdSettings& s, const CollisionProbe& p) {
        return hertzDuration(p.meff, hertzMaterialFactor(s, p.wall) * std::sqrt(p.reducedRadius), p.speed);
    }
};

}  // namespace moreau
