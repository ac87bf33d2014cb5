/// The local problem's other solver families (cd.solver; cd/local_problem.hpp):
/// a global semi-smooth Newton method on the Alart–Curnier function, and
/// Nesterov's accelerated projected gradient on the cone complementarity
/// problem (APGD). Gauss–Seidel stays solveLocal's.
#include <Eigen/Sparse>
#include <Eigen/SparseLU>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/natural_map.hpp"

namespace moreau {

namespace {

using Vec = Eigen::VectorXd;
using Sparse = Eigen::SparseMatrix<double>;

Vec3 at3(const Vec& v, std::size_t i) { return Vec3(v[3 * i], v[3 * i + 1], v[3 * i + 2]); }
void set3(Vec& v, std::size_t i, const Vec3& x) {
    for (int d = 0; d < 3; ++d) v[static_cast<Eigen::Index>(3 * i) + d] = x[d];
}

/// W as an Eigen sparse matrix (3n × 3n), every entry of every block kept
/// (explicit zeros too: the Jacobians below share its pattern).
Sparse sparseW(const LocalProblem& p) {
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(9 * p.block.size());
    for (std::size_t i = 0; i < p.contacts(); ++i)
        for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k)
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    t.emplace_back(static_cast<int>(3 * i) + a, 3 * p.col[k] + b, p.block[k](a, b));
    const auto n = static_cast<Eigen::Index>(3 * p.contacts());
    Sparse w(n, n);
    w.setFromTriplets(t.begin(), t.end());
    return w;
}

const Vec3 kNormal = Vec3::UnitX();  // the local problems' frames: (n, t1, t2)
constexpr double kMaxLm = 1e6;      // Newton's largest Levenberg–Marquardt weight

/// The Siconos/FCLIB error (cd/natural_map.hpp) of r with u = W r + q given;
/// `deSaxce` false: the cone complementarity problem's own natural map
/// (r ∈ K, u ∈ K*, r ⊥ u), with u in place of De Saxcé's ũ.
double errorOf(const LocalProblem& p, const Vec& r, const Vec& u, bool deSaxce) {
    double sum = 0.0;
    for (std::size_t i = 0; i < p.contacts(); ++i) {
        const Vec3 ri = at3(r, i), ui = at3(u, i);
        sum += deSaxce ? naturalMapResidual2(ri, ui, kNormal, p.mu[i])
                       : (ri - projectOnCone(ri - ui, kNormal, p.mu[i])).squaredNorm();
    }
    const Vec q = Eigen::Map<const Vec>(p.q.data(), static_cast<Eigen::Index>(p.q.size()));
    return naturalError(sum, q.squaredNorm(), r.squaredNorm(), u.squaredNorm());
}

/// What both families start from: the clock, W, q and the given r (resized
/// to the problem, zeros where it was shorter).
struct Start {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    std::size_t nc;
    Eigen::Index n;
    Sparse W;
    Vec q, r;
    Start(const LocalProblem& p, std::vector<double>& rIn)
        : nc(p.contacts()), n(static_cast<Eigen::Index>(3 * nc)), W(sparseW(p)),
          q(Eigen::Map<const Vec>(p.q.data(), n)) {
        rIn.resize(3 * nc, 0.0);
        r = Eigen::Map<const Vec>(rIn.data(), n);
    }
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

/// Alart & Curnier (1991), as Siconos's fc3d_nonsmooth_Newton_AlartCurnier:
/// per contact, with ρ = 3 / tr W_ii (an impulse per velocity),
///     Φ_n = r_n − max(0, r_n − ρ u_n),
///     Φ_t = r_t − P_D(μ max(0, r_n − ρ u_n)) (r_t − ρ u_t),
/// D(s) the disk of radius s; Φ(r) = 0 is Coulomb's law with u = W r + q.
/// Each iteration solves J Δr = −Φ with J = A + B (W + λ D), A and B Φ's
/// generalized derivatives in r and u (block diagonal), D = diag(tr W_ii / 3)
/// and λ a Levenberg–Marquardt weight (0.1 at the start; ÷3 after a full
/// step, ×2 after a shortened one, ×10 after none; the iteration gives up at
/// 10⁶: a stationary point of ½‖Φ‖² that is not a solution), by a sparse LU
/// (Eigen's SparseLU; its pattern analysed once). It takes the longest step
/// of 1, ½, ¼, … (to 2⁻²⁰) that decreases ½‖Φ‖² by Armijo's rule, else the
/// one that decreased it most; the iterate of least natural-map error is the
/// answer. (Without λ, as Siconos's NSN_AC, the 4808-contact flat pile of
/// docs/convergence.md stalls at 1.4·10⁻²; with it, from zero, near 2·10⁻⁵.)
/// A J that still does not factorize is shifted by δI, δ from 10⁻¹² of its
/// largest diagonal entry up, ×100 until it does.
LocalSolveResult solveNewtonAC(const LocalProblem& p, std::vector<double>& rOut, const CdSettings& settings,
                               const IterateObserver& observe) {
    const Start start(p, rOut);
    const auto& [t0, nc, n, W, q, r0] = start;
    LocalSolveResult res;
    Vec r = r0;
    std::vector<double> rho(nc, 1.0);
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k)
            if (static_cast<std::size_t>(p.col[k]) == i && p.block[k].trace() > 0.0) rho[i] = 3.0 / p.block[k].trace();
    // Φ at r (u = W r + q given), and with `blocks` its derivatives A, B.
    std::vector<Mat3> A(nc), B(nc);
    auto phi = [&](const Vec& rv, const Vec& u, Vec& F, bool blocks) {
        for (std::size_t i = 0; i < nc; ++i) {
            const Vec3 ri = at3(rv, i), ui = at3(u, i);
            const double h = rho[i], mu = p.mu[i];
            const double tn = ri.x() - h * ui.x();
            Vec3 f;
            Mat3 a = Mat3::Zero(), b = Mat3::Zero();
            if (tn > 0.0) {  // Φ_n = ρ u_n
                f.x() = h * ui.x();
                b(0, 0) = h;
            } else {  // Φ_n = r_n
                f.x() = ri.x();
                a(0, 0) = 1.0;
            }
            const Eigen::Vector2d tt(ri.y() - h * ui.y(), ri.z() - h * ui.z());
            const double s = mu * std::max(tn, 0.0), norm = tt.norm();
            if (norm <= s) {  // sticking: Φ_t = ρ u_t
                f.y() = h * ui.y();
                f.z() = h * ui.z();
                b(1, 1) = b(2, 2) = h;
            } else if (s > 0.0) {  // sliding: Φ_t = r_t − s τ̂
                const Eigen::Vector2d hat = tt / norm;
                f.y() = ri.y() - s * hat.x();
                f.z() = ri.z() - s * hat.y();
                const Eigen::Matrix2d G = (s / norm) * (Eigen::Matrix2d::Identity() - hat * hat.transpose());
                // dΦ_t = dr_t − μ τ̂ (dr_n − ρ du_n) − Γ (dr_t − ρ du_t)
                a.block<2, 1>(1, 0) = -mu * hat;
                a.block<2, 2>(1, 1) = Eigen::Matrix2d::Identity() - G;
                b.block<2, 1>(1, 0) = (mu * h) * hat;
                b.block<2, 2>(1, 1) = h * G;
            } else {  // open: Φ_t = r_t
                f.y() = ri.y();
                f.z() = ri.z();
                a(1, 1) = a(2, 2) = 1.0;
            }
            set3(F, i, f);
            if (blocks) {
                A[i] = a;
                B[i] = b;
            }
        }
    };
    const bool fixed = settings.criterion == Criterion::Fixed;
    const int maxIterations = fixed ? settings.iterations : settings.maxIterations;
    Eigen::SparseLU<Sparse> lu;
    bool analysed = false;
    Vec u = W * r + q, F(n), trial(n), uTrial(n), Ftrial(n);
    std::vector<Eigen::Triplet<double>> t;
    double lm = 0.1;  // the Levenberg–Marquardt weight λ (relative to each contact's W_ii scale)
    Vec best = r;
    double bestError = HUGE_VAL;
    for (int it = 0; it < maxIterations; ++it) {
        res.error = errorOf(p, r, u, true);
        if (res.error < bestError) bestError = res.error, best = r;
        if (!fixed && res.error <= settings.epsilon) {
            res.converged = true;
            break;
        }
        if (lm >= kMaxLm) break;  // no descent left at the largest weight: a stationary point of ½‖Φ‖², not a solution
        phi(r, u, F, true);
        // J = A + B W, in W's pattern (every entry of every block) plus the diagonal blocks.
        t.clear();
        const double sigmaScale = lm;  // J = A + B (W + λ diag(tr W_ii / 3))
        for (std::size_t i = 0; i < nc; ++i) {
            for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k) {
                Mat3 j = B[i] * p.block[k];
                if (static_cast<std::size_t>(p.col[k]) == i) j += A[i] + (sigmaScale * p.block[k].trace() / 3.0) * B[i];
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) t.emplace_back(static_cast<int>(3 * i) + a, 3 * p.col[k] + b, j(a, b));
            }
        }
        Sparse J(n, n);
        J.setFromTriplets(t.begin(), t.end());
        if (!analysed) {
            lu.analyzePattern(J);
            analysed = true;
        }
        lu.factorize(J);
        if (lu.info() != Eigen::Success) {
            const double diag = n > 0 ? J.diagonal().cwiseAbs().maxCoeff() : 0.0;
            Sparse eye(n, n);
            eye.setIdentity();
            for (double shift = 1e-12 * diag; lu.info() != Eigen::Success && shift > 0.0 && shift < 1e-2 * diag; shift *= 100.0)
                lu.factorize(Sparse(J + shift * eye));
        }
        if (lu.info() != Eigen::Success) break;  // no direction: stops here, not converged
        const Vec d = lu.solve(-F);
        if (!d.allFinite()) break;
        // Armijo on ψ = ½‖Φ‖² along the Newton direction (ψ' = −2ψ).
        const double psi = 0.5 * F.squaredNorm();
        double bestPsi = psi, bestAlpha = 0.0;
        for (double alpha = 1.0; alpha >= 0x1p-20; alpha *= 0.5) {
            trial = r + alpha * d;
            uTrial = W * trial + q;
            phi(trial, uTrial, Ftrial, false);
            const double psiT = 0.5 * Ftrial.squaredNorm();
            if (psiT < bestPsi) bestPsi = psiT, bestAlpha = alpha;
            if (psiT <= (1.0 - 2e-4 * alpha) * psi) break;
        }
        // λ shrinks after a full step (Newton's quadratic convergence near a
        // solution), grows after a shortened one, and much after none.
        if (bestAlpha == 1.0) lm /= 3.0;
        else if (bestAlpha == 0.0) lm = std::min(lm * 10.0, kMaxLm);
        else lm = std::min(lm * 2.0, kMaxLm);
        if (bestAlpha == 0.0) bestAlpha = 0x1p-20;  // no decrease along it: a minimal step, not none
        r += bestAlpha * d;
        u = W * r + q;
        res.sweeps = it + 1;
        if (observe) observe(res.sweeps, {r.data(), static_cast<std::size_t>(n)});
    }
    res.error = errorOf(p, r, u, true);
    if (res.error > bestError) {  // the least error met is the answer
        r = best;
        u = W * r + q;
        res.error = errorOf(p, r, u, true);
    }
    if (fixed) res.converged = true;
    else res.converged = res.error <= settings.epsilon;
    Eigen::Map<Vec>(rOut.data(), n) = r;
    res.seconds = secondsSince(t0);
    return res;
}

/// Mazhar, Heyn, Negrut & Tasora (2015), "Using Nesterov's method to
/// accelerate multibody dynamics with friction and contact", ACM TOG 34(3),
/// Algorithm 2 (the solver behind Chrono): minimises ½ rᵀ W r + qᵀ r over
/// the product of the friction cones K_μ, whose optimality conditions are
/// the cone complementarity problem r ∈ K, u = W r + q ∈ K*, r ⊥ u. That is
/// De Saxcé's convex relaxation of Coulomb's law: a sliding contact gets
/// u_n = μ‖u_t‖ > 0 (it separates as it slides) where Coulomb's has u_n = 0;
/// with no sliding the two coincide. Nesterov's step with the Lipschitz
/// estimate L doubled until the quadratic bound holds and shrunk by 0.9 after
/// each step, the momentum restarted when the gradient points along the
/// last step, the iterate of least residual kept. Its residual is the
/// relaxed problem's natural map (`relaxedError`); `error` is the Siconos
/// error of the same r, which stays at the relaxation's gap where contacts slide.
LocalSolveResult solveApgd(const LocalProblem& p, std::vector<double>& rOut, const CdSettings& settings,
                           const IterateObserver& observe) {
    const Start start(p, rOut);
    const auto& [t0, nc, n, W, q, r0] = start;
    LocalSolveResult res;
    auto project = [&](Vec& z) {
        for (std::size_t i = 0; i < nc; ++i) set3(z, i, projectOnCone(at3(z, i), kNormal, p.mu[i]));
    };
    auto f = [&](const Vec& r, const Vec& g) { return 0.5 * r.dot(g - q) + q.dot(r); };  // g = W r + q
    Vec gamma = r0;
    project(gamma);
    Vec y = gamma, best = gamma, next(n);
    // L from the start and a point one unit away in every component.
    Vec probe = gamma - Vec::Ones(n);
    double L = (W * (gamma - probe)).norm() / std::max((gamma - probe).norm(), 1e-300);
    if (!(L > 0.0)) L = 1.0;
    double theta = 1.0, bestRes = HUGE_VAL;
    const bool fixed = settings.criterion == Criterion::Fixed;
    const int maxIterations = fixed ? settings.iterations : settings.maxIterations;
    Vec gy(n), gNext(n), u = W * gamma + q;
    for (int it = 0; it < maxIterations; ++it) {
        gy = W * y + q;
        const double fy = f(y, gy);
        next = y - gy / L;
        project(next);
        gNext = W * next + q;
        for (int grow = 0; grow < 60 && f(next, gNext) > fy + gy.dot(next - y) + 0.5 * L * (next - y).squaredNorm(); ++grow) {
            L *= 2.0;
            next = y - gy / L;
            project(next);
            gNext = W * next + q;
        }
        const double theta2 = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
        const double beta = theta * (1.0 - theta) / (theta * theta + theta2);
        const Vec step = next - gamma;
        y = next + beta * step;
        theta = theta2;
        if (gy.dot(step) > 0.0) {  // adaptive restart (the gradient at y along the step)
            y = next;
            theta = 1.0;
        }
        gamma = next;
        L *= 0.9;
        res.sweeps = it + 1;
        if (observe) observe(res.sweeps, {gamma.data(), static_cast<std::size_t>(n)});
        const double relaxed = errorOf(p, gamma, gNext, false);
        if (relaxed < bestRes) {
            bestRes = relaxed;
            best = gamma;
        }
        if (!fixed && relaxed <= settings.epsilon) break;
    }
    u = W * best + q;
    res.relaxedError = errorOf(p, best, u, false);
    res.error = errorOf(p, best, u, true);
    res.converged = fixed || res.relaxedError <= settings.epsilon;
    Eigen::Map<Vec>(rOut.data(), n) = best;
    res.seconds = secondsSince(t0);
    return res;
}

double relaxedNaturalError(const LocalProblem& problem, std::span<const double> r) {
    const auto n = static_cast<Eigen::Index>(r.size());
    const Vec rv = Eigen::Map<const Vec>(r.data(), n);
    const std::vector<double> u = problem.velocity(std::vector<double>(r.begin(), r.end()));
    return errorOf(problem, rv, Eigen::Map<const Vec>(u.data(), n), false);
}

LocalSolveResult solveLocalProblem(const LocalProblem& problem, std::vector<double>& r, const CdSettings& settings,
                                   std::uint64_t seed, const IterateObserver& observe) {
    switch (settings.solver) {
        case CdSolverFamily::Newton: return solveNewtonAC(problem, r, settings, observe);
        case CdSolverFamily::Apgd: return solveApgd(problem, r, settings, observe);
        case CdSolverFamily::GaussSeidel: break;
    }
    return solveLocal(problem, r, settings, seed, observe);
}

}  // namespace moreau
