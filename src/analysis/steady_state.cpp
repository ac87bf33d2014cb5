#include "moreau/analysis/steady_state.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace moreau {

std::size_t mserTruncation(const std::vector<double>& x, std::size_t batch) {
    if (batch == 0) throw std::invalid_argument("mserTruncation: batch must be >= 1");
    const std::size_t m = x.size() / batch;
    if (m < 4) return 0;
    std::vector<double> z(m, 0.0);
    for (std::size_t j = 0; j < m; ++j) {
        for (std::size_t i = 0; i < batch; ++i) z[j] += x[j * batch + i];
        z[j] /= static_cast<double>(batch);
    }
    // Suffix sums give each candidate's mean and spread in one pass.
    std::vector<double> s(m + 1, 0.0), s2(m + 1, 0.0);
    for (std::size_t j = m; j-- > 0;) {
        s[j] = s[j + 1] + z[j];
        s2[j] = s2[j + 1] + z[j] * z[j];
    }
    std::size_t best = 0;
    double bestValue = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d <= m / 2; ++d) {
        const double k = static_cast<double>(m - d);
        const double value = std::max(0.0, s2[d] - s[d] * s[d] / k) / (k * k);
        if (value < bestValue) {
            bestValue = value;
            best = d;
        }
    }
    return best * batch;
}

bool mserSettled(std::size_t start, std::size_t n, std::size_t batch) {
    const std::size_t m = n / batch;
    return m >= 4 && start / batch < m / 2;
}

BatchMean batchMean(const std::vector<double>& x, std::size_t start, std::size_t batches) {
    BatchMean r;
    if (start >= x.size() || batches == 0) return r;
    const std::size_t n = x.size() - start;
    const std::size_t nb = std::min(batches, n), size = n / nb;
    double sum = 0.0;
    for (std::size_t b = 0; b < nb; ++b) {
        const std::size_t from = start + b * size, to = b + 1 == nb ? x.size() : from + size;
        double m = 0.0;
        for (std::size_t i = from; i < to; ++i) m += x[i];
        m /= static_cast<double>(to - from);
        r.means.push_back(m);
        sum += m * static_cast<double>(to - from);
    }
    r.mean = sum / static_cast<double>(n);
    r.batches = nb;
    if (nb > 1) {
        double var = 0.0, mean = 0.0;
        for (double m : r.means) mean += m / static_cast<double>(nb);
        for (double m : r.means) var += (m - mean) * (m - mean);
        r.error = std::sqrt(var / static_cast<double>(nb - 1) / static_cast<double>(nb));
    }
    return r;
}

LineFit fitLine(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& sigma) {
    if (x.size() != y.size() || (!sigma.empty() && sigma.size() != x.size()))
        throw std::invalid_argument("fitLine: x, y (and sigma) must have the same length");
    LineFit f;
    f.points = x.size();
    if (x.size() < 2) return f;
    double sw = 0.0, sx = 0.0, sy = 0.0;
    std::vector<double> w(x.size(), 1.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!sigma.empty()) w[i] = 1.0 / (sigma[i] * sigma[i]);
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
    }
    const double mx = sx / sw, my = sy / sw;
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxx += w[i] * (x[i] - mx) * (x[i] - mx);
        sxy += w[i] * (x[i] - mx) * (y[i] - my);
        syy += w[i] * (y[i] - my) * (y[i] - my);
    }
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double r = y[i] - f.intercept - f.slope * x[i];
        f.chi2 += w[i] * r * r;
    }
    f.r2 = syy > 0.0 ? 1.0 - f.chi2 / syy : 1.0;
    // Parameter variances from the weights; without given σ the scatter
    // about the line stands in for them.
    double scale = 1.0;
    if (sigma.empty()) scale = x.size() > 2 ? f.chi2 / static_cast<double>(x.size() - 2) : 0.0;
    f.slopeError = std::sqrt(scale / sxx);
    f.interceptError = std::sqrt(scale * (1.0 / sw + mx * mx / sxx));
    return f;
}

}  // namespace moreau
