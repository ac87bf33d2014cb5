// World::rotate: the orientation update of every integrator, q ← exp(ω dt) q.
#include <doctest/doctest.h>

#include <cmath>

#include "moreau/model/world.hpp"

using namespace moreau;

TEST_SUITE("world") {
    TEST_CASE("rotate equals the exact rotation about omega, on both sides of the series cut-off") {
        const Quat q0 = Quat(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized())).normalized();
        const Vec3 axis = Vec3(-2, 1, 0.5).normalized();
        // Half angles from 1e-9 to 0.5: below and above h = 1e-2.
        for (double halfAngle : {1e-9, 1e-5, 3e-3, 9.99e-3, 1.001e-2, 0.1, 0.5}) {
            INFO(halfAngle);
            for (double dt : {1e-3, -1e-3}) {
                const Vec3 w = axis * (2.0 * halfAngle / std::abs(dt));
                Quat q = q0;
                World::rotate(q, w, dt);
                const Quat exact = (Quat(Eigen::AngleAxisd(w.norm() * dt, axis)) * q0).normalized();
                CHECK(std::abs(q.angularDistance(exact)) < 1e-15);
                CHECK(std::abs(q.norm() - 1.0) < 1e-15);
            }
        }
    }

    TEST_CASE("rotate leaves q alone for zero spin or zero dt, and turns a vector by |omega| dt") {
        const Quat q0(0.5, 0.5, 0.5, 0.5);
        Quat q = q0;
        World::rotate(q, Vec3::Zero(), 1e-3);
        CHECK(q.coeffs() == q0.coeffs());
        World::rotate(q, Vec3(1, 2, 3), 0.0);
        CHECK(q.coeffs() == q0.coeffs());
        // 1000 steps of ω = 2 about z with dt = π/4000: a quarter turn of x̂ into ŷ.
        Quat r = Quat::Identity();
        for (int k = 0; k < 1000; ++k) World::rotate(r, Vec3(0, 0, 2), M_PI / 4000.0);
        const Vec3 x = r * Vec3::UnitX();
        CHECK(x.x() == doctest::Approx(0.0).epsilon(1e-12));
        CHECK(std::abs(x.x()) < 1e-12);
        CHECK(x.y() == doctest::Approx(1.0).epsilon(1e-12));
    }

    TEST_CASE("rotate renormalises: an orientation off unit length, and a million steps") {
        // Given off unit length (beyond the Newton step's range): back to unit length.
        for (double scale : {2.0, 1.0 + 1e-6, 0.5}) {
            INFO(scale);
            Quat q(0.5 * scale, 0.5 * scale, -0.5 * scale, 0.5 * scale);
            World::rotate(q, Vec3(0.3, -1.0, 2.0), 1e-3);
            CHECK(std::abs(q.norm() - 1.0) < 1e-15);
        }
        // 10⁶ small steps about a fixed axis: the norm stays at 1 to rounding
        // (no drift from the Newton renormalisation) and the angle adds up.
        const Vec3 axis = Vec3(1, -2, 2) / 3.0;
        const double omega = 3.0, dt = 1e-6;
        Quat q = Quat::Identity();
        for (int k = 0; k < 1000000; ++k) World::rotate(q, omega * axis, dt);
        CHECK(std::abs(q.norm() - 1.0) < 1e-15);
        const Quat exact(Eigen::AngleAxisd(omega * 1e6 * dt, axis));
        CHECK(q.angularDistance(exact) < 1e-9);
    }
}
