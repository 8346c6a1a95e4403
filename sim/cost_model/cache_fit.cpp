#include "sim/cost_model/cache_fit.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// A later candidate is preferred only when its objective is below the best's by this share.
constexpr double kRequiredGain = 1e-3;

bool reads_indexed_rows(std::span<const CostSample> samples) {
  for (const CostSample& sample : samples) {
    if (sample.gathered_rows > 0 && sample.gathered_table_bytes > 0) return true;
  }
  return false;
}

// The mean squared relative residual of the kind's fit with `caches`, or nothing when its samples
// do not determine one.
std::optional<double> fit_residual(std::vector<CostSample> samples, const CacheSizes& caches) {
  set_cache_misses(samples, caches);
  try {
    const CostFit fit = fit_op_cost(samples);
    double sum = 0;
    for (const double r : fit.relative_residuals) sum += r * r;
    return sum / static_cast<double>(samples.size());
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<double> objective(const std::vector<const std::vector<CostSample>*>& kinds,
                                const CacheSizes& caches) {
  double sum = 0;
  for (const std::vector<CostSample>* samples : kinds) {
    const std::optional<double> residual = fit_residual(*samples, caches);
    if (!residual) return std::nullopt;
    sum += *residual;
  }
  return sum;
}

}  // namespace

void set_cache_misses(std::span<CostSample> samples, const CacheSizes& caches) {
  for (CostSample& sample : samples) {
    set_cache_misses(sample.work, sample.gathered_rows, sample.gathered_table_bytes, caches);
  }
}

std::vector<CacheSizes> candidate_caches(double near_bytes) {
  std::vector<double> sizes;
  for (int k = -2; k <= 14; ++k) sizes.push_back(std::ldexp(std::pow(2.0, k / 2.0), 20));
  std::vector<CacheSizes> candidates = {CacheSizes{}};
  if (near_bytes > 0) {
    candidates.push_back({near_bytes, 0});
    for (const double far : sizes) {
      if (far > near_bytes) candidates.push_back({near_bytes, far});
    }
    return candidates;
  }
  for (const double near : sizes) candidates.push_back({near, 0});
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (std::size_t j = i + 1; j < sizes.size(); ++j) candidates.push_back({sizes[i], sizes[j]});
  }
  return candidates;
}

CacheFit fit_caches(std::span<const std::vector<CostSample>> samples_by_kind,
                    std::span<const CacheSizes> candidates) {
  std::vector<const std::vector<CostSample>*> gathering;
  for (const std::vector<CostSample>& samples : samples_by_kind) {
    if (reads_indexed_rows(samples)) gathering.push_back(&samples);
  }
  CacheFit result;
  if (gathering.empty()) return result;
  double best = std::numeric_limits<double>::infinity();
  for (const CacheSizes& caches : candidates) {
    const std::optional<double> value = objective(gathering, caches);
    if (!value) continue;
    result.objective_by_candidate.emplace_back(caches, *value);
    if (*value < best * (1 - kRequiredGain)) {
      best = *value;
      result.per_rank = caches;
    }
  }
  return result;
}

nlohmann::json CacheFit::to_json() const {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& [caches, value] : objective_by_candidate) {
    candidates.push_back({{"near_bytes", caches.near_bytes},
                          {"far_bytes", caches.far_bytes},
                          {"mean_squared_relative_residuals", value}});
  }
  return {{"per_rank", {{"near_bytes", per_rank.near_bytes}, {"far_bytes", per_rank.far_bytes}}},
          {"candidates", candidates}};
}

}  // namespace gnnbed
