#pragma once
// Micro-benchmarks of the transport for calibration, through the Transport's data-plane calls
// (the ones plans' communication ops run): a ping-pong between two ranks for latency and
// bandwidth, and the collectives plans use (pairwise all-to-all, ring all-reduce) to check the
// fitted per-step model latency + bytes / bandwidth against what they take. Warm-up calls, a
// barrier, a timed loop, the mean, the maximum over ranks.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "exec/transport.hpp"
#include "sim/cost_model/cost_fit.hpp"

namespace gnnbed {

// How many calls to time for a message size: enough to move `budget_bytes`, within
// [min_calls, max_calls].
struct TransferRepetitions {
  int warmup = 2;
  int min_calls = 3;
  int max_calls = 200;
  double budget_bytes = 256.0 * (1 << 20);

  int calls(std::int64_t bytes) const;
};

// Collective over `pair`, a transport of exactly two ranks: rank 0 sends `bytes` to rank 1
// through all_to_all (rank 1 sending nothing back in the same call), then rank 1 sends them back;
// a sample is half the round trip. Every rank gets the samples.
std::vector<TransferSample> ping_pong(Transport& pair, std::span<const std::int64_t> sizes,
                                      const TransferRepetitions& repetitions);

// One collective call, as timed: `steps` schedule steps, each moving at most `step_bytes` to one
// peer and from another.
struct CollectiveSample {
  std::string collective;  // "all_to_all" or "all_reduce"
  std::int64_t payload_bytes = 0;
  int steps = 0;
  std::int64_t step_bytes = 0;
  double seconds = 0;  // per call, slowest rank
};

// Collective over `world` (two ranks or more): all_to_all with `bytes` to every peer.
std::vector<CollectiveSample> time_all_to_all(Transport& world, std::span<const std::int64_t> sizes,
                                              const TransferRepetitions& repetitions);
// Collective over `world`: ring all-reduce of buffers of `bytes` (floats).
std::vector<CollectiveSample> time_all_reduce(Transport& world, std::span<const std::int64_t> sizes,
                                              const TransferRepetitions& repetitions);

// The per-step model's prediction: steps * (latency + step_bytes / bandwidth).
double predicted_seconds(const CollectiveSample& sample, const NetworkCalibration& network);

// Rows of {collective, payload_bytes, steps, step_bytes, measured_seconds, predicted_seconds,
// relative_residual}.
nlohmann::json collectives_json(std::span<const CollectiveSample> samples,
                                const NetworkCalibration& network);

}  // namespace gnnbed
