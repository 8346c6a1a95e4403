#include "strategies/batch_schedule.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

BatchSchedule::BatchSchedule(std::span<const NodeId> train_nodes, const NodePartition& partition,
                             int batch_size, std::uint64_t seed)
    : owned_(static_cast<std::size_t>(partition.num_parts())),
      batch_size_(batch_size),
      seed_(seed) {
  require(batch_size > 0, "training.batch_size", "must be positive for mini-batch training");
  for (const NodeId v : train_nodes)
    owned_[static_cast<std::size_t>(partition.owner(v))].push_back(v);
  std::size_t most = 0;
  for (auto& nodes : owned_) {
    std::sort(nodes.begin(), nodes.end());
    most = std::max(most, nodes.size());
  }
  const auto batch = static_cast<std::size_t>(batch_size);
  iterations_ = static_cast<int>((most + batch - 1) / batch);
}

std::vector<NodeId> BatchSchedule::seeds(int rank, int epoch, int iteration) const {
  std::vector<NodeId> order = owned_[static_cast<std::size_t>(rank)];
  Rng rng(
      hash_mix(seed_, 0x5a3b, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(rank)));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const auto batch = static_cast<std::size_t>(batch_size_);
  const std::size_t begin = std::min(order.size(), static_cast<std::size_t>(iteration) * batch);
  const std::size_t end = std::min(order.size(), begin + batch);
  return {order.begin() + static_cast<std::ptrdiff_t>(begin),
          order.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::int64_t BatchSchedule::seeds_in_iteration(int /*epoch*/, int iteration) const {
  std::int64_t total = 0;
  const auto batch = static_cast<std::int64_t>(batch_size_);
  for (const auto& nodes : owned_) {
    const auto count = static_cast<std::int64_t>(nodes.size());
    total += std::clamp<std::int64_t>(count - iteration * batch, 0, batch);
  }
  return total;
}

std::uint64_t BatchSchedule::batch_key(int epoch, int iteration) const {
  return static_cast<std::uint64_t>(epoch) * static_cast<std::uint64_t>(iterations_) +
         static_cast<std::uint64_t>(iteration);
}

std::uint64_t BatchSchedule::dropout_key(int epoch, int iteration) const {
  return hash_mix(seed_, 0xd0d0, static_cast<std::uint64_t>(epoch),
                  static_cast<std::uint64_t>(iteration));
}

}  // namespace gnnbed
