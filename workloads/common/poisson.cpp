#include "workloads/common/poisson.hpp"

#include <cmath>

#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// Below this mean, multiplying uniforms (Knuth) takes about mean + 1 draws; above it,
// transformed rejection takes about 1.2 draws whatever the mean.
constexpr double kRejectionFromMean = 10.0;

std::int64_t poisson_by_multiplication(double mean, Rng& rng) {
  const double limit = std::exp(-mean);
  double product = rng.uniform();
  std::int64_t count = 0;
  while (product > limit) {
    ++count;
    product *= rng.uniform();
  }
  return count;
}

double log_factorial(std::int64_t k) {
  int sign = 0;
  // The reentrant variant: lgamma() writes the global signgam, a race between threads.
  return lgamma_r(static_cast<double>(k) + 1.0, &sign);
}

// Hoermann's PTRS ("The transformed rejection method for generating Poisson random variables",
// 1993), with the constants of the paper.
std::int64_t poisson_by_rejection(double mean, Rng& rng) {
  const double root = std::sqrt(mean);
  const double log_mean = std::log(mean);
  const double b = 0.931 + 2.53 * root;
  const double a = -0.059 + 0.02483 * b;
  const double inverse_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = rng.uniform() - 0.5;
    const double v = rng.uniform();
    const double us = 0.5 - std::fabs(u);
    const auto k = static_cast<std::int64_t>(std::floor((2 * a / us + b) * u + mean + 0.43));
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inverse_alpha) - std::log(a / (us * us) + b) <=
        -mean + static_cast<double>(k) * log_mean - log_factorial(k)) {
      return k;
    }
  }
}

}  // namespace

std::int64_t poisson(double mean, std::uint64_t seed) {
  if (!(mean > 0)) return 0;
  Rng rng(seed);
  return mean < kRejectionFromMean ? poisson_by_multiplication(mean, rng)
                                   : poisson_by_rejection(mean, rng);
}

}  // namespace gnnbed
