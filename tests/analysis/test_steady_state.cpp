/// The steady part of a time series (MSER), its batch-mean error bar and the
/// weighted straight-line fit, on series whose answers are known.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "moreau/analysis/steady_state.hpp"

using namespace moreau;

namespace {

/// AR(1): x_i = φ x_{i−1} + e_i with unit-variance Gaussian e (fixed seed).
std::vector<double> ar1(std::size_t n, double phi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> e(0.0, 1.0);
    std::vector<double> x(n);
    double v = 0.0;
    for (std::size_t i = 0; i < n; ++i) x[i] = v = phi * v + e(rng);
    return x;
}

}  // namespace

TEST_SUITE("analysis") {
    TEST_CASE("MSER cuts an exponential transient off a noisy steady series") {
        // 1 + 2 e^{−i/50} plus white noise of 0.1: the transient is below
        // the noise after about 50 ln 20 ≈ 150 samples.
        std::mt19937_64 rng(7);
        std::normal_distribution<double> e(0.0, 0.1);
        std::vector<double> x(2000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + 2.0 * std::exp(-static_cast<double>(i) / 50.0) + e(rng);
        const std::size_t start = mserTruncation(x);
        CHECK(start >= 100);
        CHECK(start <= 400);
        CHECK(mserSettled(start, x.size()));
        const BatchMean m = batchMean(x, start);
        CHECK(std::abs(m.mean - 1.0) < 4.0 * m.error + 1e-3);
    }

    TEST_CASE("MSER finds no steady part in a series that drifts throughout") {
        std::mt19937_64 rng(3);
        std::normal_distribution<double> e(0.0, 0.05);
        std::vector<double> x(1000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) / 1000.0 + e(rng);
        const std::size_t start = mserTruncation(x);
        CHECK_FALSE(mserSettled(start, x.size()));
    }

    TEST_CASE("batch means give the standard error of a correlated series") {
        // AR(1) with φ = 0.9: the mean's variance is 1/((1−φ)² n) for large n.
        const double phi = 0.9;
        const std::size_t n = 200000;
        const std::vector<double> x = ar1(n, phi, 11);
        const BatchMean m = batchMean(x, 0, 20);
        const double theory = 1.0 / ((1.0 - phi) * std::sqrt(static_cast<double>(n)));
        CHECK(m.batches == 20);
        // 20 batches: the error estimate itself scatters by about 1/√(2·19) ≈ 16 %.
        CHECK(m.error == doctest::Approx(theory).epsilon(0.4));
        CHECK(std::abs(m.mean) < 4.0 * theory);
        // White noise taken as independent: the naive error is ~4.4 times too small.
        double var = 0.0;
        for (double v : x) var += v * v;
        const double naive = std::sqrt(var / static_cast<double>(n) / static_cast<double>(n));
        CHECK(m.error > 3.0 * naive);
    }

    TEST_CASE("weighted line fit: exact data, weights and parameter errors") {
        const std::vector<double> x = {0.0, 1.0, 2.0, 3.0};
        const std::vector<double> y = {1.0, 3.0, 5.0, 7.0};
        const LineFit f = fitLine(x, y);
        CHECK(f.intercept == doctest::Approx(1.0));
        CHECK(f.slope == doctest::Approx(2.0));
        CHECK(f.r2 == doctest::Approx(1.0));
        CHECK(f.slopeError == doctest::Approx(0.0).epsilon(1e-12));
        // One point off the line with a large σ barely moves the fit; with a
        // small σ it pulls the line to itself.
        const std::vector<double> y2 = {1.0, 3.0, 5.0, 9.0};
        const LineFit loose = fitLine(x, y2, {0.1, 0.1, 0.1, 100.0});
        CHECK(loose.slope == doctest::Approx(2.0).epsilon(1e-3));
        const LineFit tight = fitLine(x, y2, {100.0, 0.1, 0.1, 0.1});
        CHECK(tight.slope == doctest::Approx(3.0).epsilon(1e-3));
        // Given σ: the slope's error of n equally weighted points is σ/√Σ(x−x̄)².
        const LineFit e = fitLine(x, y, {0.5, 0.5, 0.5, 0.5});
        CHECK(e.slopeError == doctest::Approx(0.5 / std::sqrt(5.0)));
        CHECK(e.interceptError == doctest::Approx(0.5 * std::sqrt(1.0 / 4.0 + 1.5 * 1.5 / 5.0)));
    }
}
