#pragma once
/// The head-on collision of two grains that the MD tests measure the normal
/// laws and the integrators on.
#include <algorithm>
#include <cmath>
#include <utility>

#include "moreau/md/md_solver.hpp"
#include "support/cd_steps.hpp"

namespace moreau::test {

/// Two grains of radius 0.5 and masses ma, mb (inertia 0.1) on the x axis of
/// a 1D world, `gap` apart and approaching at relative speed `speed` with no
/// total momentum.
inline World headOnPair(double ma = 1.0, double mb = 1.0, double gap = 0.0, double speed = 1.0) {
    World w;
    w.dimension = 1;
    w.addGrain(Vec3(0, 0, 0), 0.5, ma, 0.1);
    w.addGrain(Vec3(1.0 + gap, 0, 0), 0.5, mb, 0.1);
    w.v[0] = Vec3(speed * mb / (ma + mb), 0, 0);
    w.v[1] = Vec3(-speed * ma / (ma + mb), 0, 0);
    return w;
}

/// The normal law `law` of stiffness kn alone: no tangential force.
inline MdSettings normalLawOnly(NormalLaw law, double kn) {
    MdSettings s;
    s.normal = law;
    s.kn = kn;
    s.tangential = TangentialLaw::None;
    return s;
}

struct Collision {
    double restitution, duration, kineticLoss, dissipated, maxOverlap;
};

/// The headOnPair of masses ma, mb at relative speed `speed`, started 0.3
/// steps before touching, on the staged MD solver with time step dt:
/// restitution and duration (gap interpolated at both ends), the kinetic
/// energy lost and the solver's dissipated-work diagnostic.
inline Collision collide(const MdSettings& s, double ma, double mb, double dt, double speed = 1.0) {
    Simulation sim = stagedMdSimulation(headOnPair(ma, mb, 0.3 * speed * dt, speed), dt, s);
    const World& now = sim.world();
    auto kinetic = [&] { return 0.5 * (ma * now.v[0].squaredNorm() + mb * now.v[1].squaredNorm()); };
    const double k0 = kinetic();
    double tStart = -1.0, prevGap = 0.3 * speed * dt, prevT = 0.0, maxOverlap = 0.0;
    for (int k = 0; k < 10000000; ++k) {
        sim.advance();
        const double gap = now.x[1].x() - now.x[0].x() - 1.0;
        maxOverlap = std::max(maxOverlap, -gap);
        if (tStart < 0.0 && gap < 0.0) tStart = prevT + dt * prevGap / (prevGap - gap);
        if (tStart >= 0.0 && gap >= 0.0 && prevGap < 0.0) {
            // Walton–Braun leaves a permanent set: the grains part at gap 0
            // only after the force ended.
            const double tEnd = prevT + dt * (-prevGap) / (gap - prevGap);
            sim.advance();  // the contact's last work (its force falls to zero)
            return {(now.v[1].x() - now.v[0].x()) / speed, tEnd - tStart, k0 - kinetic(), sim.md().dissipatedWork(),
                    maxOverlap};
        }
        prevGap = gap;
        prevT = now.time;
    }
    return {0, 0, 0, 0, 0};
}

/// The contact time of a Hertz law of stiffness kn between unit masses
/// (m_eff = 1/2) at impact speed v (force schemes eq. 7).
inline double hertzContactTime(double kn, double v) {
    return 3.21 * std::pow(0.5 / kn, 0.4) * std::pow(v, -0.2);
}

/// The restitution of unit masses colliding at speed v with `stepsPerContact`
/// steps per hertzContactTime.
inline double hertzRestitution(const MdSettings& s, double v, double stepsPerContact) {
    return collide(s, 1.0, 1.0, hertzContactTime(s.kn, v) / stepsPerContact, v).restitution;
}

}  // namespace moreau::test
