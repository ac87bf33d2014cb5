#pragma once
/// Solving local frictional contact problems (model/local_problem.hpp; read
/// and written by io/fclib.hpp): their error, and a Gauss–Seidel solver for
/// any 3×3 blocks and any μ per contact, with an exact one-contact solver.
/// The engine's own sweep (cd/solver.hpp) is the fast path for spheres and
/// disks; CdSolver::localProblem() poses its step as a local problem.
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/local_problem.hpp"
#include "moreau/model/scene.hpp"

namespace moreau {

/// The Siconos/FCLIB error of impulses r (3 per contact): natural map with
/// De Saxcé's velocity over max(‖q‖, ‖r‖, ‖u‖) (cd/natural_map.hpp).
double naturalError(const LocalProblem& problem, const std::vector<double>& r);
/// The same measure for the cone complementarity problem r ∈ K, u ∈ K*,
/// r ⊥ u (De Saxcé's convex relaxation, which APGD solves): u in place of ũ.
double relaxedNaturalError(const LocalProblem& problem, std::span<const double> r);

/// One contact: the r of Coulomb's law for u = W r + q (W positive definite).
/// Separation (r = 0) when q_n ≥ 0, else sticking if −W⁻¹q lies in the cone,
/// else sliding: r = ρ (1, −μ d) with u_n = 0 and u_t ∥ d, found by Newton
/// steps on the slip direction d (a unit vector: no trigonometry), else a
/// scan of d with bisection (the root nearest the starting direction when
/// several exist).
Vec3 solveOneContact(const Mat3& W, const Vec3& q, double mu);
/// The same with W⁻¹ given, the root search starting from the slip direction
/// of `guess` (the contact's previous impulse): the Gauss–Seidel's form.
[[gnu::always_inline]] inline Vec3 solveOneContact(const Mat3& W, const Mat3& Winv, const Vec3& q, double mu, const Vec3& guess);

namespace one_contact {
/// solveOneContact's sliding case when Newton's steps from d0 fail (a
/// degenerate W, a root with u_t · d < 0): a scan of d with bisection, else a
/// projected fixed point on the cone.
Vec3 slideByScan(const Mat3& W, const Vec3& q, double mu, double c0, double s0);

/// solveOneContact's sliding case, q_n < 0 and μ > 0 with the sticking
/// impulse `stick` = −W⁻¹q outside the cone (st2 its tangential norm²):
/// Newton's steps from the slip direction of `guess`, else of `stick`, else
/// the scan. (Also the AVX2 clump rows' sliding case, cd/clump_rows.hpp.)
[[gnu::always_inline]] inline Vec3 slide(const Mat3& W, const Vec3& q, double mu, const Vec3& guess, const Vec3& stick,
                                         double st2);

/// The sliding impulse r = ρ (1, −μ d) with u_n = 0 and u_t = W_t r + q_t
/// parallel to d, u_t · d ≥ 0: Newton's method on f(θ) = u_t × d in the
/// angle θ of d = (c, s), each step a turn by 2 atan(δθ/2) (rational in δθ,
/// exact on the unit circle to rounding), from d0 = (c, s), until |f| is
/// 10⁻¹⁵ of |q|₁ or a step is below 10⁻⁹ (the error after it, quadratic,
/// far below rounding's). False when a step fails (ρ's denominator not
/// positive, f' = 0, no convergence in 16 steps) or the root has u_t · d < 0.
[[gnu::always_inline]] inline bool slideByNewton(const Mat3& W, const Vec3& q, double mu, double c, double s,
                                                 Vec3& r) {
    const double scale = 1e-15 * (std::abs(q.x()) + std::abs(q.y()) + std::abs(q.z()));
    for (int it = 0; it < 16; ++it) {
        const double den = W(0, 0) - mu * (W(0, 1) * c + W(0, 2) * s);
        if (!(den > 0.0)) return false;
        const double rho = -q.x() / den;
        // u_t = ρ g + q_t with g = W_tn − μ W_tt d.
        const double g1 = W(1, 0) - mu * (W(1, 1) * c + W(1, 2) * s);
        const double g2 = W(2, 0) - mu * (W(2, 1) * c + W(2, 2) * s);
        const double u1 = rho * g1 + q.y(), u2 = rho * g2 + q.z();
        const double f = u1 * s - u2 * c, along = u1 * c + u2 * s;
        // d' = (−s, c): ρ' = −ρ den'/den with den' = −μ W_nt d', g' = −μ W_tt d'.
        const double dden = -mu * (W(0, 2) * c - W(0, 1) * s);
        const double drho = -rho * dden / den;
        const double du1 = drho * g1 - rho * mu * (W(1, 2) * c - W(1, 1) * s);
        const double du2 = drho * g2 - rho * mu * (W(2, 2) * c - W(2, 1) * s);
        const double df = du1 * s - du2 * c + along;
        if (std::abs(f) <= scale) {
            if (along < 0.0) return false;
            r = Vec3(rho, -mu * rho * c, -mu * rho * s);
            return true;
        }
        if (df == 0.0) return false;
        const double step = -f / df;
        const double t = 0.5 * step, t2 = t * t, inv = 1.0 / (1.0 + t2);
        const double cn = ((1.0 - t2) * c - 2.0 * t * s) * inv;
        s = ((1.0 - t2) * s + 2.0 * t * c) * inv;
        c = cn;
        if (std::abs(step) <= 1e-9) {  // converging quadratically: the turned d is within ~step² of the root
            if (along < 0.0) return false;
            const double den2 = W(0, 0) - mu * (W(0, 1) * c + W(0, 2) * s);
            if (!(den2 > 0.0)) return false;
            const double rho2 = -q.x() / den2;
            r = Vec3(rho2, -mu * rho2 * c, -mu * rho2 * s);
            return true;
        }
    }
    return false;
}
}  // namespace one_contact

[[gnu::always_inline]] inline Vec3 solveOneContact(const Mat3& W, const Mat3& Winv, const Vec3& q, double mu,
                                                 const Vec3& guess) {
    if (q.x() >= 0.0) return Vec3::Zero();  // u = q separates or rests: r = 0 satisfies the law
    if (mu == 0.0) return W(0, 0) > 0.0 ? Vec3(-q.x() / W(0, 0), 0.0, 0.0) : Vec3::Zero();  // u_n = 0, r_t = 0
    const Vec3 stick(-(Winv(0, 0) * q.x() + Winv(0, 1) * q.y() + Winv(0, 2) * q.z()),
                     -(Winv(1, 0) * q.x() + Winv(1, 1) * q.y() + Winv(1, 2) * q.z()),
                     -(Winv(2, 0) * q.x() + Winv(2, 1) * q.y() + Winv(2, 2) * q.z()));
    const double st2 = stick.y() * stick.y() + stick.z() * stick.z();
    if (stick.x() > 0.0 && st2 <= mu * mu * stick.x() * stick.x()) return stick;
    return one_contact::slide(W, q, mu, guess, stick, st2);
}

[[gnu::always_inline]] inline Vec3 one_contact::slide(const Mat3& W, const Vec3& q, double mu, const Vec3& guess,
                                                      const Vec3& stick, double st2) {
    // Sliding: from the previous impulse's slip direction (−r_t), else the
    // sticking impulse's, which is the answer's when the contact slid the
    // same way last sweep.
    const double g2 = guess.y() * guess.y() + guess.z() * guess.z();
    double c = 1.0, s = 0.0;
    if (g2 > 0.0) {
        const double inv = -1.0 / std::sqrt(g2);
        c = guess.y() * inv;
        s = guess.z() * inv;
    } else if (st2 > 0.0) {
        const double inv = -1.0 / std::sqrt(st2);
        c = stick.y() * inv;
        s = stick.z() * inv;
    }
    Vec3 r;
    if (one_contact::slideByNewton(W, q, mu, c, s, r)) return r;
    return one_contact::slideByScan(W, q, mu, c, s);
}

struct LocalSolveResult {
    int sweeps = 0;         ///< sweeps (Gauss–Seidel) or iterations (the other families)
    double error = 0.0;     ///< natural-map error of the returned r
    /// APGD: the natural-map error of the cone complementarity problem it
    /// solves (De Saxcé's relaxation: u in place of ũ); −1 for the others.
    double relaxedError = -1.0;
    double seconds = 0.0;   ///< the sweeps and their error checks
    bool converged = false;
};
/// Called by the local solvers after each iteration with the iterations done
/// and the current iterate r (3 per contact, in the contact frames): for
/// experiments that follow a solve (solver-convergence). It only reads and
/// runs serially between iterations; unset (the default) it costs one test
/// per iteration.
using IterateObserver = std::function<void(int iterations, std::span<const double> r)>;

/// Gauss–Seidel over the contacts with solveOneContact, from the r given: the
/// order, criterion (fixed or natural; local and global read as natural),
/// epsilon, check_every and max_iterations of `settings`, random orders drawn
/// from `seed`.
LocalSolveResult solveLocal(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                            std::uint64_t seed, const IterateObserver& observe = {});

/// A global semi-smooth Newton method on the Alart–Curnier function (sparse
/// LU, Armijo line search), from the r given: cd.solver = newton
/// (src/cd/global_solvers.cpp). Its iterations count as sweeps; the natural
/// criterion stops it at settings.epsilon, the fixed one after
/// settings.iterations.
LocalSolveResult solveNewtonAC(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                               const IterateObserver& observe = {});
/// Nesterov's accelerated projected gradient on the cone complementarity
/// problem (Mazhar et al. 2015), from the r given: cd.solver = apgd. It
/// solves De Saxcé's convex relaxation of Coulomb's law (relaxedError).
LocalSolveResult solveApgd(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                           const IterateObserver& observe = {});
/// The family settings.solver names (cd.solver).
LocalSolveResult solveLocalProblem(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                                   std::uint64_t seed, const IterateObserver& observe = {});

}  // namespace moreau
