// The rotation of a body whose inertia is not isotropic (a 3D clump):
// freeRotorDrift against the closed-form solutions of Euler's equations.
#include <doctest/doctest.h>

#include <boost/math/special_functions/jacobi_elliptic.hpp>
#include <cmath>

#include "moreau/model/world.hpp"

using namespace moreau;

namespace {

/// A world with one free clump of principal moments `moments` (mass 1, size 1).
World oneClump(const Vec3& moments, const Quat& q0, const Vec3& bodySpin) {
    World w;
    w.dimension = 3;
    ClumpShape shape;
    shape.centre = {Vec3::Zero()};
    shape.radius = {1.0};
    shape.volume = 1.0;
    shape.momentsPerMass = moments;
    shape.boundingRadius = 1.0;
    w.clumpShapes.push_back(shape);
    w.addClump(Vec3::Zero(), 1, 1.0, q0, 1.0);
    w.w[0] = q0 * bodySpin;
    return w;
}

/// Body-frame spin after `steps` drifts of dt.
struct Run {
    Vec3 bodySpin;
    Quat q;
    double worstL = 0.0;       ///< largest |L − L₀| / |L₀| on the way
    double worstEnergy = 0.0;  ///< largest |E − E₀| / E₀ on the way
};
Run drift(const Vec3& moments, const Quat& q0, const Vec3& spin0, double dt, int steps) {
    World w = oneClump(moments, q0, spin0);
    const auto L = [&] { return Vec3(w.q[0] * Vec3(moments.cwiseProduct(w.q[0].conjugate() * w.w[0]))); };
    const Vec3 L0 = L();
    const double E0 = w.rotationalEnergy(0);
    Run r;
    for (int s = 0; s < steps; ++s) {
        w.advancePose(0, dt);
        r.worstL = std::max(r.worstL, (L() - L0).norm() / L0.norm());
        r.worstEnergy = std::max(r.worstEnergy, std::abs(w.rotationalEnergy(0) - E0) / E0);
    }
    r.bodySpin = w.q[0].conjugate() * w.w[0];
    r.q = w.q[0];
    return r;
}

/// What rounding may add to the world angular momentum per step, relative
/// (a few units in the last place: q's renormalisation, π from ω and back).
constexpr double kRounding = 1e-15;

const Quat kStart = Quat(Eigen::AngleAxisd(0.9, Vec3(1, -2, 0.5).normalized())).normalized();

}  // namespace

TEST_SUITE("clump rotation") {
    TEST_CASE("a symmetric top precesses as the closed form says, exactly for any dt") {
        // I₁ = I₂ = A, I₃ = C. Body frame: ω₃ constant, (ω₁, ω₂) turns at
        // Ω = (C − A) ω₃ / A. World frame: R(t) = exp(t |L|/A [L̂×]) R₀
        // exp(−t Ω [e₃×]) (the body axis precesses about L at |L|/A).
        // freeRotorDrift steps that closed form, so the error is rounding's
        // at any step (0.05 turns it by 3° a step), with the symmetric axis
        // first, second or third.
        const double A = 2.0, C = 5.0, a = 0.7, c = 1.3, T = 4.0;
        for (int axis = 0; axis < 3; ++axis) {
            CAPTURE(axis);
            Vec3 moments = Vec3::Constant(A), spin0 = Vec3::Zero();
            moments[axis] = C;
            spin0[axis] = c;
            spin0[(axis + 1) % 3] = a;
            const double Omega = (C - A) * c / A;
            const Vec3 L0 = kStart * Vec3(moments.cwiseProduct(spin0));
            Vec3 exactSpin = spin0;
            exactSpin[(axis + 1) % 3] = a * std::cos(Omega * T);
            exactSpin[(axis + 2) % 3] = a * std::sin(Omega * T);
            const Quat exactQ = (Quat(Eigen::AngleAxisd(L0.norm() / A * T, L0.normalized())) * kStart *
                                 Quat(Eigen::AngleAxisd(-Omega * T, Vec3::Unit(axis))))
                                    .normalized();
            for (const double dt : {1e-3, 1e-2, 5e-2}) {
                const int steps = static_cast<int>(std::lround(T / dt));
                const Run r = drift(moments, kStart, spin0, dt, steps);
                const double spinError = (r.bodySpin - exactSpin).norm() / spin0.norm();
                const double angleError = r.q.angularDistance(exactQ);
                INFO("dt " << dt << " spin error " << spinError << " angle error " << angleError);
                CHECK(spinError < 1e-12);
                CHECK(angleError < 1e-12);
                CHECK(r.worstL < kRounding * steps);
                CHECK(r.worstEnergy < kRounding * steps);
            }
        }
    }

    TEST_CASE("a spherical top turns at constant spin") {
        const Vec3 moments = Vec3::Constant(3.0), spin0(0.4, -1.1, 0.9);
        const double T = 2.0, dt = 0.01;
        const Run r = drift(moments, kStart, spin0, dt, 200);
        const Quat exactQ = (Quat(Eigen::AngleAxisd(spin0.norm() * T, (kStart * spin0).normalized())) * kStart).normalized();
        CHECK(r.q.angularDistance(exactQ) < 1e-12);
        CHECK((r.q * r.bodySpin - kStart * spin0).norm() < 1e-14);
    }

    TEST_CASE("an asymmetric body follows Euler's equations' elliptic-function solution") {
        // I = (1, 2, 3), ω₀ = (1, 0, 2) in the body frame: M² = 37 > 2E I₂ = 26,
        // so (Landau & Lifshitz, Mechanics §37) ω₁ = cn τ, ω₂ = sn τ,
        // ω₃ = 2 dn τ with τ = 2t and modulus k² = 1/12.
        const Vec3 moments(1.0, 2.0, 3.0), spin0(1.0, 0.0, 2.0);
        const double T = 3.0, k = std::sqrt(1.0 / 12.0);
        double cn = 0.0, dn = 0.0;
        const double sn = boost::math::jacobi_elliptic(k, 2.0 * T, &cn, &dn);
        const Vec3 exact(cn, sn, 2.0 * dn);
        double errors[2];
        for (int refine = 0; refine < 2; ++refine) {
            const double dt = 2e-3 / (1 << refine);
            const Run r = drift(moments, kStart, spin0, dt, static_cast<int>(std::lround(T / dt)));
            const double error = (r.bodySpin - exact).norm() / spin0.norm();
            INFO("dt " << dt << " spin error " << error << " energy " << r.worstEnergy << " L " << r.worstL);
            CHECK(error < 1e-4 / (1 << (2 * refine)));
            CHECK(r.worstL < kRounding * T / dt);
            CHECK(r.worstEnergy < 1e-5 / (1 << (2 * refine)));  // bounded, O(dt²)
            errors[refine] = error;
        }
        CHECK(errors[0] / errors[1] == doctest::Approx(4.0).epsilon(0.1));
    }

    TEST_CASE("the energy of a tumbling body does not drift over many periods") {
        // Near the unstable middle axis (the body flips over and over): a
        // symplectic drift keeps E within its O(dt²) band, with no trend.
        const Vec3 moments(1.0, 2.0, 3.0), spin0(1e-3, 1.0, 1e-3);
        const Run shortRun = drift(moments, kStart, spin0, 1e-2, 2000);
        const Run longRun = drift(moments, kStart, spin0, 1e-2, 40000);
        INFO("energy band " << shortRun.worstEnergy << " over 20 s, " << longRun.worstEnergy << " over 400 s");
        CHECK(longRun.worstEnergy < 1e-4);
        CHECK(longRun.worstEnergy < 3.0 * shortRun.worstEnergy + 1e-12);
        CHECK(longRun.worstL < kRounding * 40000);
    }

    TEST_CASE("spinChange is the world-frame inverse inertia, and spheres and 2D clumps keep the per-axis form") {
        const Vec3 moments(1.5, 2.5, 4.0);
        World w = oneClump(moments, kStart, Vec3::Zero());
        const Vec3 t(0.3, -1.1, 0.7);
        const Mat3 R = kStart.toRotationMatrix();
        const Mat3 Iw = R * moments.asDiagonal() * R.transpose();
        CHECK((w.spinChange(0, t) - Iw.inverse() * t).norm() < 1e-14 * t.norm());
        CHECK(w.tumbles(0));
        CHECK(w.rotationalEnergy(0) == 0.0);
        // A sphere added beside it: per axis, untouched by the clump machinery.
        World s;
        s.addGrain(Vec3::Zero(), 0.5, 2.0, 0.2);
        CHECK_FALSE(s.hasClumps());
        CHECK(s.spinChange(0, t) == t.cwiseProduct(s.invInertia[0]));
        // In 2D a clump spins about z only: a constant spin between kicks.
        World p;
        p.dimension = 2;
        p.clumpShapes.push_back(w.clumpShapes[0]);
        p.addGrain(Vec3(5, 0, 0), 0.5, 2.0, 0.2);
        const BodyId id = p.addClump(Vec3::Zero(), 1, 2.0, Quat::Identity(), 3.0);
        CHECK_FALSE(p.tumbles(static_cast<std::size_t>(id)));
        CHECK(p.invInertia[1] == Vec3(0.0, 0.0, 1.0 / (3.0 * 4.0 * 4.0)));
        CHECK(p.inertia[1] == 3.0 * 4.0 * 4.0);
        CHECK(p.size[0] == 0.5);  // the sphere added before: its radius
        CHECK(p.shape[0] == 0);
        CHECK(p.radius[1] == 2.0);  // the bounding radius at size 2
    }
}
