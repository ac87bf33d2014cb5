#pragma once
/// Curve fits of the paper reproductions, by Levenberg–Marquardt from Eigen's
/// unsupported module.
#include <vector>

namespace moreau {

/// x(t) = x0 + A exp(−t/τ) sin(ω t + φ)  (CD paper eq. 64).
struct DampedSine {
    double x0 = 0.0, amplitude = 0.0, omega = 0.0, tau = 0.0, phase = 0.0;
    double r2 = 0.0;        ///< coefficient of determination over the fitted points
    double rmsResidual = 0.0;
    bool converged = false;
    double operator()(double t) const;
};

/// A starting point from the data alone: ω from the spacing of extrema, τ
/// from the decay of their amplitudes, then x0, A, φ by linear least squares.
DampedSine guessDampedSine(const std::vector<double>& t, const std::vector<double>& x);

/// Least-squares fit of eq. 64 starting from `guess` (all five parameters free).
DampedSine fitDampedSine(const std::vector<double>& t, const std::vector<double>& x, const DampedSine& guess);

/// Least-squares slope and intercept of y = a + b x; returns {a, b}.
std::pair<double, double> linearFit(const std::vector<double>& x, const std::vector<double>& y);

/// The same line with its coefficient of determination R² (0 when y does
/// not vary).
struct LineFit {
    double intercept = 0.0, slope = 0.0, r2 = 0.0;
};
LineFit lineFitR2(const std::vector<double>& x, const std::vector<double>& y);

/// Least-squares slope of log y against log x (the exponent b of y ∝ x^b)
/// over the points with y > 0 (the others have no logarithm); NaN with fewer
/// than two of them. From plain sums of the logarithms, as the experiments'
/// exponents always were: linearFit's centred sums differ in the last bits.
double logSlope(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace moreau
