#include "moreau/cd/local_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <numbers>

#include <Eigen/Cholesky>

#include "moreau/cd/natural_map.hpp"
#include "moreau/cd/sweep_schedule.hpp"
#include "moreau/core/rng.hpp"

namespace moreau {

namespace {

Vec3 get3(const std::vector<double>& v, std::size_t c) { return {v[3 * c], v[3 * c + 1], v[3 * c + 2]}; }
void put3(std::vector<double>& v, std::size_t c, const Vec3& x) {
    for (int k = 0; k < 3; ++k) v[3 * c + static_cast<std::size_t>(k)] = x[k];
}

}  // namespace

double naturalError(const LocalProblem& p, const std::vector<double>& r) {
    const std::vector<double> u = p.velocity(r);
    double e2 = 0.0;
    for (std::size_t c = 0; c < p.contacts(); ++c) e2 += naturalMapResidual2(get3(r, c), get3(u, c), Vec3::UnitX(), p.mu[c]);
    auto norm2 = [](const std::vector<double>& v) { return std::inner_product(v.begin(), v.end(), v.begin(), 0.0); };
    return naturalError(e2, norm2(p.q), norm2(r), norm2(u));
}

Vec3 one_contact::slideByScan(const Mat3& W, const Vec3& q, double mu, double c0, double s0) {
    // f(θ) = u_t × d along d = (cos θ, sin θ), ρ from u_n = 0.
    struct Slide {
        Vec3 r;
        double cross, along;
        bool valid;
    };
    auto at = [&](double th) {
        const double c = std::cos(th), s = std::sin(th);
        const Vec3 dir(1.0, -mu * c, -mu * s);
        const double den = W.row(0).dot(dir);
        Slide sl{Vec3::Zero(), 0.0, 0.0, den > 0.0};
        if (!sl.valid) return sl;
        sl.r = (-q.x() / den) * dir;
        const Vec3 u = W * sl.r + q;
        sl.cross = u.y() * s - u.z() * c;
        sl.along = u.y() * c + u.z() * s;
        return sl;
    };
    // The directions from θ0 with bisection on each sign change.
    const double th0 = std::atan2(s0, c0);
    constexpr int kScan = 72;
    const double h = 2.0 * std::numbers::pi / kScan;
    Slide prev = at(th0);
    for (int k = 1; k <= kScan; ++k) {
        double lo = th0 + (k - 1) * h, hi = th0 + k * h;
        const Slide cur = at(hi);
        if (prev.valid && cur.valid && (prev.cross <= 0.0) != (cur.cross <= 0.0)) {
            const bool loNeg = prev.cross <= 0.0;
            for (int it = 0; it < 60 && hi - lo > 1e-15; ++it) {
                const double mid = 0.5 * (lo + hi);
                ((at(mid).cross <= 0.0) == loNeg ? lo : hi) = mid;
            }
            const Slide s = at(0.5 * (lo + hi));
            if (s.valid && s.along >= 0.0) return s.r;
        }
        prev = cur;
    }
    // No sliding root found (a degenerate W): projected fixed point on the cone.
    Vec3 r = Vec3::Zero();
    const double rho = 1.0 / std::max(W.norm(), 1e-300);
    for (int it = 0; it < 1000; ++it) {
        const Vec3 u = W * r + q;
        r = projectOnCone(r - rho * (u + Vec3(mu * std::hypot(u.y(), u.z()), 0.0, 0.0)), Vec3::UnitX(), mu);
    }
    return r;
}

Vec3 solveOneContact(const Mat3& W, const Vec3& q, double mu) {
    return solveOneContact(W, W.inverse(), q, mu, Vec3::Zero());
}

LocalSolveResult solveLocal(const LocalProblem& p, std::vector<double>& r, const CdSettings& settings,
                            std::uint64_t seed, const IterateObserver& observe) {
    const std::size_t nc = p.contacts();
    r.resize(3 * nc, 0.0);
    constexpr std::size_t kNone = ~std::size_t{0};
    std::vector<std::size_t> diag(nc, kNone);  // a row without one (W_ii = 0) keeps r_i = 0
    std::vector<Mat3> inv(nc, Mat3::Zero());
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k)
            if (static_cast<std::size_t>(p.col[k]) == i && p.block[k].determinant() > 0.0) {
                diag[i] = k;
                inv[i] = p.block[k].inverse();
            }
    const bool fixed = settings.criterion == Criterion::Fixed;
    const int maxSweeps = fixed ? settings.iterations : settings.maxIterations;
    const int every = std::max(1, settings.checkEvery);
    std::vector<std::uint32_t> order(nc);
    std::iota(order.begin(), order.end(), 0u);
    LocalSolveResult res;
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < maxSweeps; ++s) {
        if (settings.order == SweepOrder::RandomSweep || (settings.order == SweepOrder::ShuffleOnce && s == 0)) {
            std::iota(order.begin(), order.end(), 0u);
            Rng rng = Rng::stream(seed, 0, static_cast<std::uint64_t>(s), 1);
            rng.shuffle(std::span<std::uint32_t>(order));
        } else if (settings.order == SweepOrder::RandomKeys) {  // the row index as the key
            std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(nc);
            for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(nc); ++i) keyed[i] = {sweepPriority(seed, 0, s, i), i};
            std::sort(keyed.begin(), keyed.end());
            for (std::size_t i = 0; i < nc; ++i) order[i] = keyed[i].second;
        }
        const std::vector<double> start = settings.order == SweepOrder::Jacobi ? r : std::vector<double>{};
        const std::vector<double>& from = start.empty() ? r : start;  // Jacobi: the sweep's starting impulses
        Rng draws = Rng::stream(seed, 0, static_cast<std::uint64_t>(s), 2);
        const bool drawn = settings.order == SweepOrder::RandomSequential;
        for (std::size_t k = 0; k < nc; ++k) {
            const std::size_t i = drawn ? draws.below(static_cast<std::uint32_t>(nc)) : order[k];
            if (diag[i] == kNone) continue;
            Vec3 qi = get3(p.q, i);
            for (std::size_t b = p.rowStart[i]; b < p.rowStart[i + 1]; ++b)
                if (b != diag[i]) qi += p.block[b] * get3(from, static_cast<std::size_t>(p.col[b]));
            put3(r, i, solveOneContact(p.block[diag[i]], inv[i], qi, p.mu[i], get3(from, i)));
        }
        res.sweeps = s + 1;
        if (observe) observe(res.sweeps, r);
        if (!fixed && (res.sweeps % every == 0 || res.sweeps == maxSweeps)) {
            res.error = naturalError(p, r);
            if (res.error <= settings.epsilon) {
                res.converged = true;
                break;
            }
        }
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (fixed) {
        res.error = naturalError(p, r);
        res.converged = true;
    }
    return res;
}

}  // namespace moreau
