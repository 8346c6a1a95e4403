#include "exec/distributed/local_store.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"

namespace gnnbed {

LocalStore::LocalStore(RankShard shard) : shard_(std::move(shard)) {
  const auto n = static_cast<std::size_t>(shard_.num_nodes());
  position_.assign(n, -1);
  for (std::size_t v = 0; v < n; ++v) {
    if (shard_.partition.owner(static_cast<NodeId>(v)) == shard_.rank) {
      position_[v] = static_cast<std::int32_t>(owned_.size());
      owned_.push_back(static_cast<NodeId>(v));
    }
  }
  if (static_cast<std::int64_t>(owned_.size()) != shard_.num_owned) {
    throw Error("rank " + std::to_string(shard_.rank) + "'s shard says it owns " +
                std::to_string(shard_.num_owned) + " nodes, its partition gives it " +
                std::to_string(owned_.size()));
  }
}

LocalStore::LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
                       const FeaturePlacement& placement)
    : LocalStore(cut_shard(dataset, context.partition, rank,
                           {context.structure_partitioned, placement})) {}

void LocalStore::gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                                 std::int64_t column_end, float* out) const {
  const FeaturePlacement& held = placement();
  const int rank = shard_.rank;
  if (column_begin < held.column_begin || column_end > held.column_end ||
      column_begin > column_end) {
    throw Error("rank " + std::to_string(rank) + " holds feature columns [" +
                std::to_string(held.column_begin) + ", " + std::to_string(held.column_end) +
                "), not [" + std::to_string(column_begin) + ", " + std::to_string(column_end) +
                ")");
  }
  for (const NodeId v : nodes) {
    if (held.owned_rows_only && owned_position(v) < 0) {
      throw Error("rank " + std::to_string(rank) + " does not hold the features of node " +
                  std::to_string(v) + " (owned by rank " +
                  std::to_string(shard_.partition.owner(v)) + ")");
    }
  }
  if (shard_.generated_features) {
    shard_.generated_features->gather(nodes, static_cast<int>(column_begin),
                                      static_cast<int>(column_end), out);
    return;
  }
  const std::int64_t width = held.column_end - held.column_begin;
  const std::int64_t out_width = column_end - column_begin;
  const float* stored = shard_.stored_features.data();
  const auto count = static_cast<std::int64_t>(nodes.size());
#pragma omp parallel for schedule(static) if (count > 4096)
  for (std::int64_t i = 0; i < count; ++i) {
    const NodeId v = nodes[static_cast<std::size_t>(i)];
    const std::int64_t row = held.owned_rows_only ? owned_position(v) : v;
    const float* source = stored + row * width + (column_begin - held.column_begin);
    std::copy_n(source, out_width, out + i * out_width);
  }
}

std::int32_t LocalStore::label(NodeId v) const {
  const std::int32_t position = owned_position(v);
  if (position < 0) {
    throw Error("rank " + std::to_string(shard_.rank) + " asked for the label of node " +
                std::to_string(v) + ", which rank " + std::to_string(shard_.partition.owner(v)) +
                " owns");
  }
  return shard_.labels.empty() ? -1 : shard_.labels[static_cast<std::size_t>(position)];
}

std::int64_t LocalStore::structure_bytes() const {
  return static_cast<std::int64_t>(shard_.structure.offsets().size_bytes() +
                                   shard_.structure.sources().size_bytes());
}

std::int64_t LocalStore::feature_bytes() const {
  return static_cast<std::int64_t>(shard_.stored_features.size() * sizeof(float));
}

}  // namespace gnnbed
