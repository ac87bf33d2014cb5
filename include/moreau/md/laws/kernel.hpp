#pragma once
/// What every MD force law kernel sees and returns (md/laws/*.hpp).
///
/// A kernel is stateless: the law's parameters (Constants, the scene's
/// MdSettings), one contact's kinematics at one evaluation (ContactState)
/// and the contact's own memory (the slots its table row declares, handed
/// as the committed values and updated in place) in; the force, its
/// stored energy and the new memory out. One kernel per law, specialised on
/// the law's enumerator; the force stage's schedules (the staged contact
/// loop of MdSolver, the pair schedule, MdForceStage::evaluatePairs) call the same
/// kernel. Vectors are in world coordinates; n points from body a to body
/// b; forces are on b (a feels the opposite).
#include <cmath>
#include <limits>

#include "moreau/core/types.hpp"
#include "moreau/md/laws/arithmetic.hpp"
#include "moreau/model/law_table.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// The scalar arithmetic of the laws: double and Eigen's Vec3.
template <>
struct VecOps<Vec3> {
    using Real = double;
    using Mask = bool;
    static double dot(const Vec3& a, const Vec3& b) { return a.dot(b); }
    static double sqrt(double x) { return std::sqrt(x); }
    static double abs(double x) { return std::abs(x); }
    static double select(bool m, double a, double b) { return m ? a : b; }
    static Vec3 select(bool m, const Vec3& a, const Vec3& b) { return m ? a : b; }
    static bool any(bool m) { return m; }
    static Vec3 zero() { return Vec3::Zero(); }
};

/// One contact at one evaluation of the force stage.
struct ContactState {
    const World& world;
    const MdSettings& settings;
    std::size_t ia, ib;   ///< bodies a (a grain) and b (grain or wall)
    Vec3 n;               ///< unit normal a → b
    double overlap;       ///< ξ = −gap > 0
    Vec3 V;               ///< velocity of b's contact point relative to a's (CD eq. 3)
    double Vn;            ///< n·V (ξ̇ = −V_n)
    Vec3 Vt;              ///< V − V_n n
    double dt;            ///< the step the memory advances over (0 in a stage evaluation)
    /// A stage evaluation of a multi-stage scheme: the memory advances by
    /// `increment` (tangential movement since the step start; Kuhn's Δū) and
    /// `twirl` instead of V_t dt; `atStepStart`: the stage is the step start.
    bool stage = false, atStepStart = false;
    Vec3 increment = Vec3::Zero();
    double twirl = 0.0;
    /// The radii of the touching spheres (a clump's components'; b: 0 for a wall).
    double radiusA = 0.0, radiusB = 0.0;
    /// A polygon contact: each body's arm to the overlap's centroid (the
    /// contact point of Peña et al.'s eqs. 14–15); null otherwise.
    const Vec3* armA = nullptr;
    const Vec3* armB = nullptr;

    /// The tangential movement this evaluation adds to a spring: V_t Δt, or the stage's.
    Vec3 movement() const { return stage ? increment : Vec3(Vt * dt); }
    double ra() const { return radiusA; }
    double rb() const { return radiusB; }
    /// R* of the pair: r_a r_b/(r_a + r_b); r_a against a wall.
    double reducedRadius() const {
        return world.isWall(static_cast<BodyId>(ib)) ? ra() : ra() * rb() / (ra() + rb());
    }
};

/// A collision the run guard sizes the MD step by (sim/guards.cpp): the
/// pair's effective mass, the closing speed, its reduced radius R*, and the
/// wall (index among the walls) for a grain–wall pair, −1 for two grains.
/// Each law's kernel gives the time its contact needs resolved,
/// `duration(settings, probe)` (md/laws/duration.hpp sums them up).
struct CollisionProbe {
    double meff = 0.0;
    double speed = 0.0;
    double reducedRadius = 0.0;
    int wall = -1;
};

/// What multiplies the scene's stiffnesses for a pair of effective mass
/// `meff` (md.meff = both: per unit m_eff).
inline double stiffnessScale(const MdSettings& s, double meff) { return s.meff == EffectiveMass::Both ? meff : 1.0; }

/// The period π √(2/7 m_eff/k_t) of a sphere's tangential oscillation on a
/// spring of stiffness md.kt: the duration the tangential laws with that
/// spring give the guard (infinity for k_t = 0).
inline double tangentialSpringPeriod(const MdSettings& s, const CollisionProbe& p) {
    if (!(s.kt > 0.0)) return std::numeric_limits<double>::infinity();
    return M_PI * std::sqrt(2.0 / 7.0 * p.meff / (stiffnessScale(s, p.meff) * s.kt));
}

/// What a tangential (or rolling) kernel gives besides its force.
struct LawOutput {
    double energy = 0.0;  ///< elastic energy stored in the law's springs
    /// Kuhn: the law counts its own tangential work of the step (`work`,
    /// which the force stage then adds to the normal force's trapezoid
    /// instead of the trapezoid of F·V), and its parts (ΔW^t, rev, irrev).
    bool ownWork = false;
    double work = 0.0;
    Vec3 workParts = Vec3::Zero();
};

/// What a tangential law's linearisation sees (the integrators' da/dt and
/// da/dr, MdSolver::forceDerivative), at the last evaluation. A law that
/// declares derivatives in its row adds its δF_t to `d` in `rate(r, d)`.
struct TangentialRate {
    const Constants& c;
    const MdSettings& settings;
    Vec3 ut, vt;     ///< tangential parts of b's contact point's displacement rate and velocity rate against a's
    bool sticks;     ///< the last force lies inside the friction limit
    Vec3 slide;      ///< the rate of a sliding force: its direction times μ δF_n
    bool displaced;  ///< a displacement rate is given
    Vec3 centres;    ///< the tangential part of δx_b − δx_a (0 without a displacement rate)
    double ra, rb;
};

/// `f` scaled down to length `limit` if longer.
inline Vec3 capped(const Vec3& f, double limit) {
    const double len = f.norm();
    return len > limit ? Vec3(f * (limit / len)) : f;
}

/// A Vec3 kept in three slots.
inline Vec3 slotVec3(const double* p) { return Vec3(p[0], p[1], p[2]); }
inline void setSlotVec3(double* p, const Vec3& v) {
    p[0] = v.x();
    p[1] = v.y();
    p[2] = v.z();
}

}  // namespace moreau
