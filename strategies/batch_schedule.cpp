#include "strategies/batch_schedule.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"

namespace gnnbed {

BatchSchedule::BatchSchedule(std::span<const NodeId> train_nodes, const NodePartition& partition,
                             int batch_size, std::uint64_t seed)
    : owned_(static_cast<std::size_t>(partition.num_parts())),
      held_(owned_.size(), 1),
      batch_size_(batch_size),
      seed_(seed) {
  for (const NodeId v : train_nodes)
    owned_[static_cast<std::size_t>(partition.owner(v))].push_back(v);
  for (auto& nodes : owned_) {
    std::sort(nodes.begin(), nodes.end());
    counts_.push_back(static_cast<std::int64_t>(nodes.size()));
  }
  count_iterations();
}

BatchSchedule::BatchSchedule(int rank, std::span<const NodeId> own_train_nodes,
                             std::span<const std::int64_t> train_counts, int batch_size,
                             std::uint64_t seed)
    : owned_(train_counts.size()),
      counts_(train_counts.begin(), train_counts.end()),
      held_(train_counts.size(), 0),
      batch_size_(batch_size),
      seed_(seed) {
  require(rank >= 0 && rank < static_cast<int>(train_counts.size()), "rank",
          std::to_string(rank) + " is outside [0, " + std::to_string(train_counts.size()) + ")");
  const auto index = static_cast<std::size_t>(rank);
  require(counts_[index] == static_cast<std::int64_t>(own_train_nodes.size()), "train_counts",
          "rank " + std::to_string(rank) + " is said to have " + std::to_string(counts_[index]) +
              " training nodes but was given " + std::to_string(own_train_nodes.size()));
  owned_[index].assign(own_train_nodes.begin(), own_train_nodes.end());
  std::sort(owned_[index].begin(), owned_[index].end());
  held_[index] = 1;
  count_iterations();
}

void BatchSchedule::count_iterations() {
  require(batch_size_ >= 0, "training.batch_size", "must not be negative (0 = full graph)");
  const std::int64_t most = counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
  if (batch_size_ == 0) {
    // Full graph: one step on every training node, so that every rank's batch is all of its own.
    batch_size_ = static_cast<int>(std::max<std::int64_t>(1, most));
    iterations_ = 1;
    return;
  }
  const auto batch = static_cast<std::int64_t>(batch_size_);
  iterations_ = static_cast<int>((most + batch - 1) / batch);
}

std::vector<NodeId> BatchSchedule::seeds(int rank, int epoch, int iteration) const {
  if (held_.at(static_cast<std::size_t>(rank)) == 0) {
    throw Error("this batch schedule holds the training nodes of one rank only, not rank " +
                std::to_string(rank) + "'s");
  }
  std::vector<NodeId> order = owned_[static_cast<std::size_t>(rank)];
  Rng rng(
      hash_mix(seed_, 0x5a3b, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(rank)));
  shuffle(std::span(order), rng);
  const auto batch = static_cast<std::size_t>(batch_size_);
  const std::size_t begin = std::min(order.size(), static_cast<std::size_t>(iteration) * batch);
  const std::size_t end = std::min(order.size(), begin + batch);
  return {order.begin() + static_cast<std::ptrdiff_t>(begin),
          order.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::int64_t BatchSchedule::seeds_in_iteration(int /*epoch*/, int iteration) const {
  std::int64_t total = 0;
  const auto batch = static_cast<std::int64_t>(batch_size_);
  for (const std::int64_t count : counts_) {
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
