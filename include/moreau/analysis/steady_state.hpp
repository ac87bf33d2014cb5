#pragma once
/// The steady part of a time series and its mean with an error bar: for
/// runs driven to a statistically steady state (a sheared flow), where the
/// start-up transient must be cut off from the data, not by hand.
#include <cstddef>
#include <vector>

namespace moreau {

/// MSER truncation (White, Simulation 69, 323, 1997; "MSER-5" with batch =
/// 5): the samples are averaged in batches of `batch`, and the start d (in
/// batches) minimising the squared standard error of the mean of what
/// remains, Σ_{j≥d} (z_j − z̄_d)² / (m − d)², over d in the first half of the
/// m batches, is returned as a sample index (d · batch). A minimum at the
/// end of that half means the series has not settled (mserSettled()).
std::size_t mserTruncation(const std::vector<double>& x, std::size_t batch = 5);

/// Whether an MSER start of `start` samples out of `n` lies inside the
/// first half (strictly before its last batch): the transient has ended in
/// the data and at least half of it is steady.
bool mserSettled(std::size_t start, std::size_t n, std::size_t batch = 5);

/// Mean of x[start..] and its standard error from `batches` contiguous batch
/// means (each at least one sample; the last takes the remainder): the error
/// bar of a correlated series when a batch is longer than its correlation.
struct BatchMean {
    double mean = 0.0, error = 0.0;
    std::size_t batches = 0;
    std::vector<double> means;  ///< the batch means
};
BatchMean batchMean(const std::vector<double>& x, std::size_t start, std::size_t batches = 10);

/// Straight line y = a + b x fitted by weighted least squares (weights
/// 1/σ², or all 1 when `sigma` is empty), with the parameters' standard
/// errors (from the weights; scaled by √(χ²/dof) when the σ are not given)
/// and the coefficient of determination R² of the weighted fit.
struct LineFit {
    double intercept = 0.0, slope = 0.0;
    double interceptError = 0.0, slopeError = 0.0;
    double r2 = 0.0, chi2 = 0.0;
    std::size_t points = 0;
};
LineFit fitLine(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& sigma = {});

}  // namespace moreau
