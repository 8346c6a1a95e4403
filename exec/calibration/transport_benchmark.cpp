#include "exec/calibration/transport_benchmark.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

constexpr std::int64_t kFloatBytes = 4;

// Warm-up calls, a barrier, then the mean of `calls` timed calls, slowest rank.
template <typename Call>
double time_calls(Transport& transport, int warmup, int calls, Call&& call) {
  for (int w = 0; w < warmup; ++w) call();
  transport.barrier();
  const Stopwatch watch;
  for (int c = 0; c < calls; ++c) call();
  return transport.max_over_ranks(watch.seconds() / calls);
}

}  // namespace

int TransferRepetitions::calls(std::int64_t bytes) const {
  const double fitting = budget_bytes / static_cast<double>(std::max<std::int64_t>(bytes, 1));
  return static_cast<int>(std::clamp(std::floor(fitting), static_cast<double>(min_calls),
                                     static_cast<double>(max_calls)));
}

std::vector<TransferSample> ping_pong(Transport& pair, std::span<const std::int64_t> sizes,
                                      const TransferRepetitions& repetitions) {
  if (pair.size() != 2) {
    throw Error("ping-pong needs a transport of 2 ranks, not " + std::to_string(pair.size()));
  }
  const int rank = pair.rank();
  std::vector<TransferSample> samples;
  for (const std::int64_t bytes : sizes) {
    const std::vector<std::byte> payload(static_cast<std::size_t>(bytes), std::byte{1});
    std::vector<std::span<const std::byte>> ping(2);
    std::vector<std::span<const std::byte>> pong(2);
    if (rank == 0) ping[1] = payload;
    if (rank == 1) pong[0] = payload;
    TransferTiming timing;
    const double round_trip_seconds =
        time_calls(pair, repetitions.warmup, repetitions.calls(bytes), [&] {
          pair.all_to_all(ping, Traffic::features, timing);
          pair.all_to_all(pong, Traffic::features, timing);
        });
    samples.push_back({"ping-pong " + std::to_string(bytes) + " B", static_cast<double>(bytes),
                       round_trip_seconds / 2});
  }
  return samples;
}

std::vector<CollectiveSample> time_all_to_all(Transport& world, std::span<const std::int64_t> sizes,
                                              const TransferRepetitions& repetitions) {
  std::vector<CollectiveSample> samples;
  for (const std::int64_t bytes : sizes) {
    const std::vector<std::byte> payload(static_cast<std::size_t>(bytes), std::byte{1});
    std::vector<std::span<const std::byte>> send(static_cast<std::size_t>(world.size()), payload);
    send[static_cast<std::size_t>(world.rank())] = {};
    TransferTiming timing;
    const double seconds = time_calls(world, repetitions.warmup, repetitions.calls(bytes),
                                      [&] { world.all_to_all(send, Traffic::features, timing); });
    samples.push_back({"all_to_all", bytes, world.size() - 1, bytes, seconds});
  }
  return samples;
}

std::vector<CollectiveSample> time_all_reduce(Transport& world, std::span<const std::int64_t> sizes,
                                              const TransferRepetitions& repetitions) {
  std::vector<CollectiveSample> samples;
  const std::int64_t ranks = world.size();
  for (const std::int64_t bytes : sizes) {
    const std::int64_t elements = bytes / kFloatBytes;
    std::vector<float> buffer(static_cast<std::size_t>(elements), 0.0f);
    TransferTiming timing;
    const double seconds = time_calls(world, repetitions.warmup, repetitions.calls(bytes), [&] {
      world.all_reduce_sum(buffer, Traffic::gradients, timing);
    });
    const std::int64_t largest_chunk = (elements + ranks - 1) / ranks;
    samples.push_back({"all_reduce", elements * kFloatBytes, static_cast<int>(2 * (ranks - 1)),
                       largest_chunk * kFloatBytes, seconds});
  }
  return samples;
}

double predicted_seconds(const CollectiveSample& sample, const NetworkCalibration& network) {
  return sample.steps * (network.latency_seconds + static_cast<double>(sample.step_bytes) /
                                                       network.bandwidth_bytes_per_second);
}

nlohmann::json collectives_json(std::span<const CollectiveSample> samples,
                                const NetworkCalibration& network) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CollectiveSample& sample : samples) {
    const double predicted = predicted_seconds(sample, network);
    rows.push_back({{"collective", sample.collective},
                    {"payload_bytes", sample.payload_bytes},
                    {"steps", sample.steps},
                    {"step_bytes", sample.step_bytes},
                    {"measured_seconds", sample.seconds},
                    {"predicted_seconds", predicted},
                    {"relative_residual", (predicted - sample.seconds) / sample.seconds}});
  }
  return rows;
}

}  // namespace gnnbed
