#pragma once
/// The coarse-grained theory of the CD chain (CD paper §3.1–3.2), shared by
/// the chain experiments. Internal to src/experiments.
#include <cmath>

#include "moreau/analysis/cd_iteration.hpp"

namespace moreau {

struct ChainTheory {
    double q, c, D, k, omega, tau;
};

/// Eqs. 54, 57, 58, 60 for the lowest mode of a fixed–free chain of length L
/// whose iteration relaxes forces with diffusion constant q d²/Δt* per sweep.
inline ChainTheory chainTheory(double q, int iterations, double d, double dt, double L) {
    ChainTheory th;
    th.q = q;
    const double qN = th.q * iterations;
    th.c = std::sqrt(qN) * d / dt;  // eq. 57
    th.D = qN * d * d / dt;         // eq. 54
    th.k = 2.0 * M_PI / (4.0 * L);  // λ = 4L
    const double under = th.c * th.c - th.D * th.D * th.k * th.k / 4.0;
    th.omega = under > 0.0 ? th.k * std::sqrt(under) : 0.0;  // eq. 58 (0: overdamped)
    th.tau = 2.0 / (th.D * th.k * th.k);                      // eq. 60
    return th;
}

/// The same for the random sweep (q: qRandomSweep).
inline ChainTheory chainTheory(int iterations, double d, double dt, double L) {
    return chainTheory(qRandomSweep(), iterations, d, dt, L);
}

}  // namespace moreau
