#include "moreau/analysis/fit.hpp"

#include <Eigen/Dense>
#include <unsupported/Eigen/NonLinearOptimization>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace moreau {

double DampedSine::operator()(double t) const {
    return x0 + amplitude * std::exp(-t / tau) * std::sin(omega * t + phase);
}

namespace {

/// Parameters p = (x0, a, b, ω, s) with x = x0 + e^{−s t}(a sin ωt + b cos ωt);
/// s = 1/τ keeps the problem smooth when the decay is slow.
struct SineFunctor {
    using Scalar = double;
    enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
    using InputType = Eigen::VectorXd;
    using ValueType = Eigen::VectorXd;
    using JacobianType = Eigen::MatrixXd;
    const std::vector<double>& t;
    const std::vector<double>& x;
    int inputs() const { return 5; }
    int values() const { return static_cast<int>(t.size()); }
    int operator()(const Eigen::VectorXd& p, Eigen::VectorXd& f) const {
        for (std::size_t i = 0; i < t.size(); ++i) {
            const double e = std::exp(-p[4] * t[i]), sn = std::sin(p[3] * t[i]), cs = std::cos(p[3] * t[i]);
            f[static_cast<Eigen::Index>(i)] = p[0] + e * (p[1] * sn + p[2] * cs) - x[i];
        }
        return 0;
    }
    int df(const Eigen::VectorXd& p, Eigen::MatrixXd& J) const {
        for (std::size_t i = 0; i < t.size(); ++i) {
            const auto r = static_cast<Eigen::Index>(i);
            const double ti = t[i];
            const double e = std::exp(-p[4] * ti), sn = std::sin(p[3] * ti), cs = std::cos(p[3] * ti);
            J(r, 0) = 1.0;
            J(r, 1) = e * sn;
            J(r, 2) = e * cs;
            J(r, 3) = e * ti * (p[1] * cs - p[2] * sn);
            J(r, 4) = -ti * e * (p[1] * sn + p[2] * cs);
        }
        return 0;
    }
};

/// Best x0, a, b for fixed ω and s (linear least squares); returns the SSE.
double linearPart(const std::vector<double>& t, const std::vector<double>& x, double omega, double s, Eigen::Vector3d& c) {
    const auto n = static_cast<Eigen::Index>(t.size());
    Eigen::MatrixXd A(n, 3);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double ti = t[static_cast<std::size_t>(i)];
        const double e = std::exp(-s * ti);
        A(i, 0) = 1.0;
        A(i, 1) = e * std::sin(omega * ti);
        A(i, 2) = e * std::cos(omega * ti);
        y[i] = x[static_cast<std::size_t>(i)];
    }
    c = A.colPivHouseholderQr().solve(y);
    return (A * c - y).squaredNorm();
}

DampedSine fromParams(const Eigen::VectorXd& p) {
    DampedSine d;
    d.x0 = p[0];
    d.amplitude = std::hypot(p[1], p[2]);
    d.phase = std::atan2(p[2], p[1]);
    d.omega = p[3];
    d.tau = p[4] != 0.0 ? 1.0 / p[4] : std::numeric_limits<double>::infinity();
    return d;
}

void scoreFit(const std::vector<double>& t, const std::vector<double>& x, DampedSine& d) {
    const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    double sse = 0.0, sst = 0.0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        sse += std::pow(x[i] - d(t[i]), 2);
        sst += std::pow(x[i] - mean, 2);
    }
    d.r2 = sst > 0.0 ? 1.0 - sse / sst : 0.0;
    d.rmsResidual = std::sqrt(sse / static_cast<double>(t.size()));
}

}  // namespace

DampedSine guessDampedSine(const std::vector<double>& t, const std::vector<double>& x) {
    DampedSine g;
    const std::size_t n = t.size();
    if (n < 5) return g;
    // Extrema of the data (strict local maxima/minima of a 3-point average).
    std::vector<double> sm(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t lo = i > 0 ? i - 1 : i, hi = i + 1 < n ? i + 1 : i;
        sm[i] = (x[lo] + x[i] + x[hi]) / 3.0;
    }
    std::vector<std::size_t> ext;
    for (std::size_t i = 1; i + 1 < n; ++i)
        if ((sm[i] > sm[i - 1] && sm[i] >= sm[i + 1]) || (sm[i] < sm[i - 1] && sm[i] <= sm[i + 1])) ext.push_back(i);
    double omega = 2.0 * M_PI / (t.back() - t.front());
    double s = 1.0 / (t.back() - t.front());
    if (ext.size() >= 2) {
        const double halfPeriod = (t[ext.back()] - t[ext.front()]) / static_cast<double>(ext.size() - 1);
        omega = M_PI / halfPeriod;
        if (ext.size() >= 3) {
            // Amplitude of each half swing decays like e^{−s t}.
            std::vector<double> tt, la;
            for (std::size_t k = 1; k < ext.size(); ++k) {
                const double amp = std::abs(x[ext[k]] - x[ext[k - 1]]);
                if (amp > 0) {
                    tt.push_back(0.5 * (t[ext[k]] + t[ext[k - 1]]));
                    la.push_back(std::log(amp));
                }
            }
            if (tt.size() >= 2) s = std::max(-linearFit(tt, la).second, 1e-6 * omega);
        }
    }
    // Refine ω and s on a coarse grid with the linear part solved exactly.
    double best = std::numeric_limits<double>::infinity();
    Eigen::Vector3d bestC = Eigen::Vector3d::Zero();
    double bestW = omega, bestS = s;
    for (int i = -10; i <= 10; ++i) {
        for (int j = -10; j <= 10; ++j) {
            const double w = omega * std::pow(1.05, i), ss = s * std::pow(1.25, j);
            Eigen::Vector3d c;
            const double e = linearPart(t, x, w, ss, c);
            if (e < best) {
                best = e;
                bestC = c;
                bestW = w;
                bestS = ss;
            }
        }
    }
    Eigen::VectorXd p(5);
    p << bestC[0], bestC[1], bestC[2], bestW, bestS;
    g = fromParams(p);
    scoreFit(t, x, g);
    return g;
}

DampedSine fitDampedSine(const std::vector<double>& t, const std::vector<double>& x, const DampedSine& guess) {
    // Fit in time relative to the window start: the amplitude then means the
    // amplitude at the start and the problem is well conditioned.
    const double t0 = t.empty() ? 0.0 : t.front();
    std::vector<double> tr(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) tr[i] = t[i] - t0;
    const double s0 = std::isfinite(guess.tau) && guess.tau != 0.0 ? 1.0 / guess.tau : 0.0;
    const double e0 = std::exp(-s0 * t0);
    const double ph0 = guess.phase + guess.omega * t0;
    Eigen::VectorXd p(5);
    p << guess.x0, guess.amplitude * e0 * std::cos(ph0), guess.amplitude * e0 * std::sin(ph0), guess.omega, s0;
    SineFunctor f{tr, x};
    Eigen::LevenbergMarquardt<SineFunctor> lm(f);
    lm.parameters.xtol = 1e-14;
    lm.parameters.ftol = 1e-14;
    lm.parameters.maxfev = 4000;
    const auto status = lm.minimize(p);
    DampedSine d = fromParams(p);
    // Back to absolute time.
    d.amplitude *= std::exp(t0 / d.tau);
    d.phase -= d.omega * t0;
    d.phase = std::remainder(d.phase, 2.0 * M_PI);
    d.converged = status == Eigen::LevenbergMarquardtSpace::RelativeReductionTooSmall ||
                  status == Eigen::LevenbergMarquardtSpace::RelativeErrorTooSmall ||
                  status == Eigen::LevenbergMarquardtSpace::RelativeErrorAndReductionTooSmall ||
                  status == Eigen::LevenbergMarquardtSpace::CosinusTooSmall ||
                  status == Eigen::LevenbergMarquardtSpace::XtolTooSmall ||
                  status == Eigen::LevenbergMarquardtSpace::FtolTooSmall;
    scoreFit(t, x, d);
    return d;
}

std::pair<double, double> linearFit(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    const double b = sxx > 0.0 ? sxy / sxx : 0.0;
    return {my - b * mx, b};
}

LineFit lineFitR2(const std::vector<double>& x, const std::vector<double>& y) {
    const auto [a, b] = linearFit(x, y);
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
    double residual = 0.0, total = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        residual += (y[i] - a - b * x[i]) * (y[i] - a - b * x[i]);
        total += (y[i] - my) * (y[i] - my);
    }
    return {a, b, total > 0.0 ? 1.0 - residual / total : 0.0};
}

double logSlope(const std::vector<double>& x, const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        if (!(y[i] > 0.0)) continue;
        const double lx = std::log(x[i]), ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        ++n;
    }
    if (n < 2) return std::nan("");
    const double dn = static_cast<double>(n);
    return (dn * sxy - sx * sy) / (dn * sxx - sx * sx);
}

}  // namespace moreau
