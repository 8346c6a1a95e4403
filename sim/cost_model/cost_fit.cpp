#include "sim/cost_model/cost_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "workloads/common/errors.hpp"
#include "workloads/common/least_squares.hpp"
#include "workloads/common/statistics.hpp"

namespace gnnbed {
namespace {

constexpr std::size_t kNumTerms = 8;
constexpr std::array<const char*, kNumTerms> kTermNames = {
    "dense_flops",   "sparse_flops",   "memory_bytes",      "sampled_edges",
    "planned_nodes", "sparse_entries", "near_cache_misses", "far_cache_misses"};
// Unit columns closer than this are the same direction (exactly proportional work).
constexpr double kProportionalTolerance = 1e-9;

std::array<double, kNumTerms> term_work(const OpWork& work) {
  return {work.dense_flops,   work.sparse_flops,   work.memory_bytes,      work.sampled_edges,
          work.planned_nodes, work.sparse_entries, work.near_cache_misses, work.far_cache_misses};
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
    case 4:
      cost.planned_nodes_per_second = rate;
      return;
    case 5:
      cost.sparse_entries_per_second = rate;
      return;
    case 6:
      cost.near_cache_misses_per_second = rate;
      return;
    default:
      cost.far_cache_misses_per_second = rate;
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
    nlohmann::json row = {{"label", samples[i].label},
                          {"work", work_json(samples[i].work)},
                          {"measured_seconds", samples[i].seconds},
                          {"predicted_seconds", predicted_seconds[i]},
                          {"relative_residual", relative_residuals[i]}};
    if (samples[i].gathered_rows > 0) {
      row["gathered_rows"] = samples[i].gathered_rows;
      row["gathered_table_bytes"] = samples[i].gathered_table_bytes;
    }
    rows.push_back(std::move(row));
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
