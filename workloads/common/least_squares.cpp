#include "workloads/common/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// A QR pivot below this (columns have unit norm) means the columns are linearly dependent.
constexpr double kRankTolerance = 1e-10;

double squared_residual(const std::vector<Column>& a, const std::vector<double>& x,
                        const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    double value = -b[i];
    for (std::size_t j = 0; j < a.size(); ++j) value += a[j][i] * x[j];
    sum += value * value;
  }
  return sum;
}

}  // namespace

double norm(const Column& column) {
  double sum = 0;
  for (const double x : column) sum += x * x;
  return std::sqrt(sum);
}

double distance_between_directions(const Column& a, const Column& b) {
  const double norm_a = norm(a);
  const double norm_b = norm(b);
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] / norm_a - b[i] / norm_b;
    sum += d * d;
  }
  return std::sqrt(sum);
}

std::optional<std::vector<double>> least_squares(std::vector<Column> a, std::vector<double> b) {
  const std::size_t m = b.size();
  const std::size_t n = a.size();
  if (n > m) return std::nullopt;
  std::vector<double> diagonal(n);
  for (std::size_t k = 0; k < n; ++k) {
    Column& pivot = a[k];
    double sum = 0;
    for (std::size_t i = k; i < m; ++i) sum += pivot[i] * pivot[i];
    const double length = std::sqrt(sum);
    if (length <= kRankTolerance) return std::nullopt;
    const double alpha = pivot[k] > 0 ? -length : length;
    Column v(pivot.begin() + static_cast<std::ptrdiff_t>(k), pivot.end());
    v[0] -= alpha;
    const double v_squared = sum - pivot[k] * pivot[k] + v[0] * v[0];
    const auto reflect = [&](auto& target) {
      double dot = 0;
      for (std::size_t i = k; i < m; ++i) dot += v[i - k] * target[i];
      const double factor = 2 * dot / v_squared;
      for (std::size_t i = k; i < m; ++i) target[i] -= factor * v[i - k];
    };
    for (std::size_t j = k + 1; j < n; ++j) reflect(a[j]);
    reflect(b);
    diagonal[k] = alpha;
  }
  std::vector<double> x(n);
  for (std::size_t k = n; k-- > 0;) {
    double value = b[k];
    for (std::size_t j = k + 1; j < n; ++j) value -= a[j][k] * x[j];
    x[k] = value / diagonal[k];
  }
  return x;
}

// min ||A x - b|| subject to x >= 0, for a handful of columns: the non-negative least-squares
// optimum is the unconstrained least-squares solution on its positive coefficients, so the best
// feasible one over every subset of columns is it.
std::vector<double> non_negative_least_squares(const std::vector<Column>& a,
                                               const std::vector<double>& b) {
  const std::size_t n = a.size();
  std::vector<double> best(n, 0.0);
  double best_residual = squared_residual(a, best, b);
  for (std::size_t subset = 1; subset < (std::size_t{1} << n); ++subset) {
    std::vector<Column> columns;
    std::vector<std::size_t> chosen;
    for (std::size_t j = 0; j < n; ++j) {
      if ((subset >> j) & 1U) {
        columns.push_back(a[j]);
        chosen.push_back(j);
      }
    }
    const auto solution = least_squares(columns, b);
    if (!solution ||
        std::any_of(solution->begin(), solution->end(), [](double value) { return value < 0; })) {
      continue;
    }
    std::vector<double> x(n, 0.0);
    for (std::size_t c = 0; c < chosen.size(); ++c) x[chosen[c]] = (*solution)[c];
    const double residual = squared_residual(a, x, b);
    if (residual < best_residual) {
      best_residual = residual;
      best = std::move(x);
    }
  }
  return best;
}

std::vector<double> fit_non_negative(std::span<const std::vector<double>> columns,
                                     std::span<const double> targets) {
  std::vector<Column> design;
  std::vector<std::size_t> used;
  std::vector<double> scales;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (columns[j].size() != targets.size()) {
      throw Error("non-negative fit: column " + std::to_string(j) + " has " +
                  std::to_string(columns[j].size()) + " entries for " +
                  std::to_string(targets.size()) + " targets");
    }
    const double scale = norm(columns[j]);
    if (scale == 0) continue;
    Column unit = columns[j];
    for (double& x : unit) x /= scale;
    design.push_back(std::move(unit));
    used.push_back(j);
    scales.push_back(scale);
  }
  std::vector<double> x(columns.size(), 0.0);
  const std::vector<double> solution =
      non_negative_least_squares(design, std::vector<double>(targets.begin(), targets.end()));
  for (std::size_t k = 0; k < used.size(); ++k) x[used[k]] = solution[k] / scales[k];
  return x;
}

}  // namespace gnnbed
