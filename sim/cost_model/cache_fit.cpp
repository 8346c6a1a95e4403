#include "sim/cost_model/cache_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

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
    sample.work.near_cache_misses =
        sample.gathered_rows * uncached_fraction(sample.gathered_table_bytes, caches.near_bytes);
    sample.work.far_cache_misses =
        sample.gathered_rows * uncached_fraction(sample.gathered_table_bytes, caches.far_bytes);
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

double private_cache_bytes() {
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  double largest = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(caches, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    std::ifstream type_file(entry.path() / "type");
    std::ifstream size_file(entry.path() / "size");
    std::ifstream shared_file(entry.path() / "shared_cpu_list");
    std::string type, size, shared;
    if (!(type_file >> type) || !(size_file >> size) || !(shared_file >> shared)) continue;
    // One core only ("0"), holding data; sizes are written as "1024K" or "32M".
    if (type == "Instruction" || shared.find_first_of(",-") != std::string::npos) continue;
    char* end = nullptr;
    double bytes = std::strtod(size.c_str(), &end);
    if (*end == 'K') bytes *= 1024;
    if (*end == 'M') bytes *= 1024 * 1024;
    largest = std::max(largest, bytes);
  }
  return largest;
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
