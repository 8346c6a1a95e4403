#include "strategies/cost_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "workloads/common/errors.hpp"
#include "workloads/common/statistics.hpp"

namespace gnnbed {
namespace {

constexpr std::size_t kNumTerms = 5;
constexpr std::array<const char*, kNumTerms> kTermNames = {
    "dense_flops", "sparse_flops", "memory_bytes", "sampled_edges", "planned_nodes"};
// Unit columns closer than this are the same direction (exactly proportional work).
constexpr double kProportionalTolerance = 1e-9;
// A QR pivot below this (columns have unit norm) means the columns are linearly dependent.
constexpr double kRankTolerance = 1e-10;

using Column = std::vector<double>;

std::array<double, kNumTerms> term_work(const OpWork& work) {
  return {work.dense_flops, work.sparse_flops, work.memory_bytes, work.sampled_edges,
          work.planned_nodes};
}

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

// min ||A x - b|| by Householder QR, A given by columns of unit norm; nothing when the columns are
// linearly dependent.
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

void check_samples(std::span<const CostSample> samples) {
  if (samples.empty()) throw Error("cost fit: no samples");
  for (const CostSample& sample : samples) {
    if (!std::isfinite(sample.seconds) || sample.seconds <= 0) {
      throw Error("cost fit: sample '" + sample.label + "' has a measured time of " +
                  std::to_string(sample.seconds) + " s (must be positive and finite)");
    }
    const auto work = term_work(sample.work);
    for (std::size_t t = 0; t < kNumTerms; ++t) {
      if (!std::isfinite(work[t]) || work[t] < 0) {
        throw Error("cost fit: sample '" + sample.label + "' has " + kTermNames[t] + " " +
                    std::to_string(work[t]) + " (must be non-negative and finite)");
      }
    }
  }
}

void set_rate(OpCost& cost, std::size_t term, double rate) {
  switch (term) {
    case 0:
      cost.dense_flops_per_second = rate;
      return;
    case 1:
      cost.sparse_flops_per_second = rate;
      return;
    case 2:
      cost.memory_bytes_per_second = rate;
      return;
    case 3:
      cost.sampled_edges_per_second = rate;
      return;
    default:
      cost.planned_nodes_per_second = rate;
  }
}

// Work terms grouped by direction: members of a group are proportional to its first.
struct TermGroup {
  std::vector<std::size_t> terms;
  std::vector<double> ratios;  // member's work / first member's work
};

std::vector<TermGroup> group_terms(const std::array<Column, kNumTerms>& work, const Column& ones) {
  std::vector<TermGroup> groups;
  for (std::size_t t = 0; t < kNumTerms; ++t) {
    if (norm(work[t]) == 0) continue;
    if (distance_between_directions(work[t], ones) < kProportionalTolerance) {
      throw Error(std::string("cost fit: every sample has the same ") + kTermNames[t] + " (" +
                  std::to_string(work[t][0]) + "), so the fixed cost and the " + kTermNames[t] +
                  " rate cannot be told apart: measure more sizes");
    }
    bool placed = false;
    for (TermGroup& group : groups) {
      const Column& first = work[group.terms.front()];
      if (distance_between_directions(work[t], first) < kProportionalTolerance) {
        group.terms.push_back(t);
        group.ratios.push_back(norm(work[t]) / norm(first));
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({{t}, {1.0}});
  }
  return groups;
}

std::string join_terms(const TermGroup& group) {
  std::string names;
  for (const std::size_t t : group.terms)
    names += (names.empty() ? "" : ", ") + std::string(kTermNames[t]);
  return names;
}

nlohmann::json work_json(const OpWork& work) {
  nlohmann::json object = nlohmann::json::object();
  const auto values = term_work(work);
  for (std::size_t t = 0; t < kNumTerms; ++t) {
    if (values[t] != 0) object[kTermNames[t]] = values[t];
  }
  return object;
}

}  // namespace

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

FitSummary summarize_residuals(std::span<const double> residuals) {
  FitSummary summary;
  if (residuals.empty()) return summary;
  std::vector<double> magnitudes;
  for (const double r : residuals) magnitudes.push_back(std::abs(r));
  summary.median_abs_relative_residual = median(magnitudes);
  summary.max_abs_relative_residual = *std::max_element(magnitudes.begin(), magnitudes.end());
  return summary;
}

CostFit fit_op_cost(std::span<const CostSample> samples) {
  check_samples(samples);
  const std::size_t m = samples.size();
  Column ones(m, 1.0);
  std::array<Column, kNumTerms> work;
  for (std::size_t t = 0; t < kNumTerms; ++t) {
    for (const CostSample& sample : samples) work[t].push_back(term_work(sample.work)[t]);
  }
  const std::vector<TermGroup> groups = group_terms(work, ones);

  // Relative error: row i is divided by the measured time, so the target is 1 everywhere. Columns
  // are scaled to unit norm for the solver and the scale undone afterwards.
  std::vector<Column> design;
  design.push_back(ones);
  for (const TermGroup& group : groups) design.push_back(work[group.terms.front()]);
  std::vector<double> scales;
  for (Column& column : design) {
    for (std::size_t i = 0; i < m; ++i) column[i] /= samples[i].seconds;
    scales.push_back(norm(column));
    for (double& x : column) x /= scales.back();
  }
  if (m < design.size() || !least_squares(design, Column(m, 1.0))) {
    std::string names = "fixed cost";
    for (const TermGroup& group : groups) names += ", " + join_terms(group);
    throw Error("cost fit: " + std::to_string(m) + " samples do not determine " +
                std::to_string(design.size()) + " coefficients (" + names +
                "): measure more varied sizes");
  }
  const std::vector<double> solution = non_negative_least_squares(design, Column(m, 1.0));

  CostFit fit;
  fit.cost.fixed_seconds = solution[0] / scales[0];
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TermGroup& group = groups[g];
    const double seconds_per_unit = solution[g + 1] / scales[g + 1];
    if (group.terms.size() > 1) {
      fit.notes.push_back(join_terms(group) +
                          " are proportional in every sample: their joint cost is split evenly");
    }
    for (std::size_t k = 0; k < group.terms.size(); ++k) {
      const std::size_t t = group.terms[k];
      const double share =
          seconds_per_unit / (static_cast<double>(group.terms.size()) * group.ratios[k]);
      if (share > 0) {
        set_rate(fit.cost, t, 1 / share);
      } else {
        set_rate(fit.cost, t, kUnresolvedRate);
        fit.notes.push_back(
            std::string(kTermNames[t]) +
            ": no measurable cost in these samples (rate set to the largest double)");
      }
    }
  }
  for (const CostSample& sample : samples) {
    const double predicted = fit.cost.seconds(sample.work);
    fit.predicted_seconds.push_back(predicted);
    fit.relative_residuals.push_back((predicted - sample.seconds) / sample.seconds);
  }
  fit.summary = summarize_residuals(fit.relative_residuals);
  return fit;
}

nlohmann::json CostFit::to_json(std::span<const CostSample> samples) const {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    rows.push_back({{"label", samples[i].label},
                    {"work", work_json(samples[i].work)},
                    {"measured_seconds", samples[i].seconds},
                    {"predicted_seconds", predicted_seconds[i]},
                    {"relative_residual", relative_residuals[i]}});
  }
  return {{"cost", cost.to_json()},
          {"median_abs_relative_residual", summary.median_abs_relative_residual},
          {"max_abs_relative_residual", summary.max_abs_relative_residual},
          {"notes", notes},
          {"samples", rows}};
}

NetworkFit fit_network(std::span<const TransferSample> samples) {
  std::vector<CostSample> transfers;
  for (const TransferSample& sample : samples) {
    OpWork work;
    work.memory_bytes = sample.bytes;
    transfers.push_back({sample.label, work, sample.seconds});
  }
  const CostFit fit = fit_op_cost(transfers);
  const double bandwidth = fit.cost.memory_bytes_per_second;
  if (bandwidth <= 0) throw Error("network fit: every message is empty, so no bandwidth");
  if (bandwidth == kUnresolvedRate) {
    throw Error("network fit: transfer time does not grow with message size, so no bandwidth");
  }
  NetworkFit network;
  network.network.latency_seconds = fit.cost.fixed_seconds;
  network.network.bandwidth_bytes_per_second = bandwidth;
  network.predicted_seconds = fit.predicted_seconds;
  network.relative_residuals = fit.relative_residuals;
  network.summary = fit.summary;
  return network;
}

nlohmann::json NetworkFit::to_json(std::span<const TransferSample> samples) const {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    rows.push_back({{"label", samples[i].label},
                    {"bytes", samples[i].bytes},
                    {"measured_seconds", samples[i].seconds},
                    {"predicted_seconds", predicted_seconds[i]},
                    {"relative_residual", relative_residuals[i]}});
  }
  return {{"network", network.to_json()},
          {"median_abs_relative_residual", summary.median_abs_relative_residual},
          {"max_abs_relative_residual", summary.max_abs_relative_residual},
          {"samples", rows}};
}

}  // namespace gnnbed
