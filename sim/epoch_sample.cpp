#include "sim/epoch_sample.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

constexpr std::uint64_t kStratumStream = 0x57a7;

// The epoch's iterations all replayed, each standing for itself.
EpochSample whole_epoch(int iterations_per_epoch) {
  EpochSample sample;
  sample.iterations_per_epoch = iterations_per_epoch;
  for (int i = 0; i < iterations_per_epoch; ++i) {
    sample.iterations.push_back(i);
    sample.weights.push_back(1.0);
    sample.strata.push_back(-1);
  }
  return sample;
}

}  // namespace

EpochSample design_epoch_sample(int iterations_per_epoch, int sample_size, std::uint64_t seed,
                                int drain) {
  require(iterations_per_epoch >= 0, "iterations", "an epoch cannot have negative iterations");
  require(sample_size >= 0, "iterations", "must not be negative");
  require(drain >= 0, "pipeline depth", "must not be negative");
  const int n = iterations_per_epoch;
  // The first always; the last, and the drain before it, from a sample of two on.
  const bool last_fixed = sample_size >= 2;
  const int tail = last_fixed ? 1 + drain : 0;
  if (sample_size == 0 || sample_size >= n || 1 + tail >= n) return whole_epoch(n);
  EpochSample sample;
  sample.iterations_per_epoch = n;
  const int middle_first = 1;
  const int middle_end = n - tail;  // [middle_first, middle_end) is stratified
  const int middle = middle_end - middle_first;
  const int fixed_count = last_fixed ? 2 : 1;
  sample.num_strata = std::min(sample_size - fixed_count, middle);
  sample.stratified_iterations = middle;
  // With no stratum, the first and the last also stand for the unsampled middle, evenly.
  const double fixed_weight =
      sample.num_strata == 0 ? 1.0 + static_cast<double>(middle) / fixed_count : 1.0;
  sample.iterations.push_back(0);
  sample.weights.push_back(fixed_weight);
  sample.strata.push_back(-1);
  for (int h = 0; h < sample.num_strata; ++h) {
    // Stratum h: [begin, end) of the middle, sizes differing by at most one.
    const int begin =
        middle_first + static_cast<int>(static_cast<std::int64_t>(middle) * h / sample.num_strata);
    const int end = middle_first + static_cast<int>(static_cast<std::int64_t>(middle) * (h + 1) /
                                                    sample.num_strata);
    Rng rng(hash_mix(seed, kStratumStream, static_cast<std::uint64_t>(h)));
    sample.iterations.push_back(
        begin + static_cast<int>(rng.below(static_cast<std::uint64_t>(end - begin))));
    sample.weights.push_back(static_cast<double>(end - begin));
    sample.strata.push_back(h);
  }
  for (int i = middle_end; i < n; ++i) {
    sample.iterations.push_back(i);
    sample.weights.push_back(i == n - 1 ? fixed_weight : 1.0);
    sample.strata.push_back(-1);
  }
  return sample;
}

EpochSample with_pipeline_warmup(const EpochSample& sample, int depth) {
  require(depth >= 0, "pipeline depth", "must not be negative");
  if (depth == 0 || sample.whole_epoch()) return sample;
  EpochSample warmed = sample;
  warmed.iterations.clear();
  warmed.weights.clear();
  warmed.strata.clear();
  int next_free = 0;  // the first iteration not replayed yet
  for (std::size_t k = 0; k < sample.iterations.size(); ++k) {
    const int iteration = sample.iterations[k];
    for (int before = std::max(next_free, iteration - depth); before < iteration; ++before) {
      warmed.iterations.push_back(before);
      warmed.weights.push_back(0.0);
      warmed.strata.push_back(-1);
    }
    warmed.iterations.push_back(iteration);
    warmed.weights.push_back(sample.weights[k]);
    warmed.strata.push_back(sample.strata[k]);
    next_free = iteration + 1;
  }
  if (static_cast<int>(warmed.iterations.size()) >= sample.iterations_per_epoch)
    return whole_epoch(sample.iterations_per_epoch);
  return warmed;
}

std::vector<double> iteration_durations(std::span<const double> iteration_end_seconds,
                                        double makespan_seconds) {
  std::vector<double> durations(iteration_end_seconds.size(), 0.0);
  double clock = 0;
  for (std::size_t i = 0; i < iteration_end_seconds.size(); ++i) {
    const double end = i + 1 == iteration_end_seconds.size()
                           ? std::max(makespan_seconds, iteration_end_seconds[i])
                           : iteration_end_seconds[i];
    durations[i] = std::max(0.0, end - clock);
    clock = std::max(clock, end);
  }
  return durations;
}

double student_t_975(int degrees) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  require(degrees >= 1, "degrees", "Student's t needs at least one degree of freedom");
  if (degrees <= 30) return kTable[degrees - 1];
  // Beyond the table: the normal quantile with the first-order correction (within 0.1 %).
  const double z = 1.959964;
  return z + (z * z * z + z) / (4.0 * degrees);
}

EpochSample over_epochs(const EpochSample& sample, int epochs) {
  if (epochs < 1) throw Error("over_epochs: " + std::to_string(epochs) + " epochs");
  if (epochs == 1) return sample;
  if (!sample.whole_epoch()) {
    throw Error("plans that repeat every " + std::to_string(epochs) +
                " epochs are replayed in whole epochs, not a sample of one");
  }
  EpochSample cycle = sample;
  cycle.epochs = epochs;
  cycle.iterations.clear();
  cycle.weights.clear();
  cycle.strata.clear();
  for (int e = 0; e < epochs; ++e) {
    for (std::size_t i = 0; i < sample.iterations.size(); ++i) {
      cycle.iterations.push_back(sample.iterations[i]);
      cycle.weights.push_back(sample.weights[i] / epochs);
      cycle.strata.push_back(-1);
    }
  }
  return cycle;
}

EpochEstimate estimate_epoch(const EpochSample& sample, std::span<const double> seconds) {
  if (seconds.size() != sample.iterations.size()) {
    throw Error("estimate_epoch: " + std::to_string(seconds.size()) + " iteration times for " +
                std::to_string(sample.iterations.size()) + " replayed iterations");
  }
  EpochEstimate estimate;
  estimate.sampled_iterations = static_cast<int>(sample.iterations.size());
  estimate.iterations_per_epoch = sample.iterations_per_epoch;
  std::vector<double> stratum_times;  // one drawn iteration's time per stratum, in order
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    estimate.seconds += sample.weights[i] * seconds[i];
    if (sample.strata[i] >= 0) stratum_times.push_back(seconds[i]);
  }
  estimate.exact = sample.whole_epoch();
  if (estimate.exact) {
    estimate.has_interval = true;
    estimate.low = estimate.high = estimate.seconds;
    return estimate;
  }
  const auto strata = static_cast<int>(stratum_times.size());
  if (strata < 2) return estimate;
  // Successive differences of the per-iteration times (the strata differ in size by at most one
  // iteration, which would dominate differences of their totals): the variance of one iteration,
  // then of the middle's total, m^2 (1 - f) s^2 / strata.
  double squared_differences = 0;
  for (int h = 1; h < strata; ++h) {
    const double difference =
        stratum_times[static_cast<std::size_t>(h)] - stratum_times[static_cast<std::size_t>(h) - 1];
    squared_differences += difference * difference;
  }
  const double iteration_variance = squared_differences / (2.0 * static_cast<double>(strata - 1));
  const auto middle = static_cast<double>(sample.stratified_iterations);
  const double sampled_fraction = static_cast<double>(strata) / middle;
  const double variance =
      middle * middle * (1.0 - sampled_fraction) * iteration_variance / static_cast<double>(strata);
  estimate.has_interval = true;
  estimate.standard_error = std::sqrt(variance);
  const double half_width = student_t_975(strata - 1) * estimate.standard_error;
  estimate.low = estimate.seconds - half_width;
  estimate.high = estimate.seconds + half_width;
  return estimate;
}

nlohmann::json EpochEstimate::to_json() const {
  nlohmann::json object = {{"seconds", seconds},
                           {"exact", exact},
                           {"sampled_iterations", sampled_iterations},
                           {"iterations_per_epoch", iterations_per_epoch}};
  if (has_interval) {
    object["interval_95_seconds"] = {low, high};
    object["standard_error_seconds"] = standard_error;
  } else {
    object["interval_95_seconds"] = nullptr;
    object["interval_note"] = "fewer than 2 strata sampled: no interval (sample 4 or more)";
  }
  return object;
}

}  // namespace gnnbed
