#pragma once
/// Peña et al.'s tangential spring from positions and angles (their eqs.
/// 14–15). Memory: the spring (3 slots), then the centre line R = x_b − x_a
/// (3) and both orientations (4 + 4) at the last evaluation.
#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/spring.hpp"

namespace moreau {

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

template <>
struct TangentialKernel<TangentialLaw::Pena> {
    /// The period of a sphere's tangential oscillation on k_t (the run guard's contact duration).
    static double duration(const MdSettings& s, const CollisionProbe& p) { return tangentialSpringPeriod(s, p); }
    static Vec3 force(const ContactState& k, const Constants& c, double Fn, double* mem, bool& sliding,
                      LawOutput& out) {
        const World& world = k.world;
        const Vec3& n = k.n;
        double* aux = mem + 3;
        // Eqs. 14–15: the increment from the change of the centre line and
        // of the orientations since the last evaluation, not from V_t Δt; a
        // contact's first evaluation has no reference yet.
        // Polygons (k.armA): the branch vectors to the overlap's centroid
        // stand for the radii, in eq. 15's rotation part and in the paper's
        // translation weight (the contact point's share of the way between
        // the centres).
        const bool polygon = k.armA != nullptr;
        const Vec3 R = world.minimumImage(world.x[k.ib] - world.x[k.ia]);
        const Quat& qa = world.q[k.ia];
        const Quat& qb = world.q[k.ib];
        Vec3 dxi = k.movement();
        Vec3 spring = rotateIntoPlane(slotVec3(mem), n);
        const Quat qaOld(aux[3], aux[4], aux[5], aux[6]), qbOld(aux[7], aux[8], aux[9], aux[10]);
        if (qaOld.squaredNorm() > 0.0) {
            const double ra = polygon ? k.armA->norm() : k.ra(), rb = polygon ? k.armB->norm() : k.rb();
            const double weight = k.settings.penaTranslation == PenaTranslation::Paper ? ra / (ra + rb) : 1.0;
            dxi = penaIncrement(R - slotVec3(aux), qaOld, qa, qbOld, qb, ra, rb, n, weight);
        }
        const Vec3 Ft = cundallSpring(c, c.kt, k.Vt, dxi, Fn, spring, sliding);
        out.energy = 0.5 * c.kt * spring.squaredNorm();
        setSlotVec3(mem, spring);
        aux[0] = R.x(), aux[1] = R.y(), aux[2] = R.z();
        aux[3] = qa.w(), aux[4] = qa.x(), aux[5] = qa.y(), aux[6] = qa.z();
        aux[7] = qb.w(), aux[8] = qb.x(), aux[9] = qb.y(), aux[10] = qb.z();
        return Ft;
    }
    /// Eqs. 14–15 to first order, w (Δx_b − Δx_a)_t − (r_a Δθ_a + r_b Δθ_b) × n:
    /// the spring's linearisation with the translation weighted by w.
    static void rate(const TangentialRate& r, Vec3& d) {
        Vec3 up = r.ut;
        if (r.displaced && r.settings.penaTranslation == PenaTranslation::Paper) {
            const double w = r.ra / (r.ra + r.rb);
            up -= (1.0 - w) * r.centres;
        }
        d += r.sticks ? Vec3(-r.c.kt * up - r.c.gt * r.vt) : r.slide;
    }
};

}  // namespace moreau
