#pragma once
// What one rank keeps of the workload, read through the interfaces the executor, the sampler and
// the evaluator use: the graph structure it samples from (all of it, or the in-edges of the nodes
// it owns), the node features its strategy places on it, and the labels and split of the nodes it
// owns. Built from the rank's shard (loaded from a sharded workload, or cut from a whole Dataset,
// which the caller may then drop). Reads outside what the rank holds throw Error: a plan that
// needs them is wrong.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strategies/strategy.hpp"
#include "workloads/dataset.hpp"
#include "workloads/rank_shard.hpp"

namespace gnnbed {

class LocalStore {
 public:
  explicit LocalStore(RankShard shard);
  // Cuts `rank`'s shard from the whole dataset.
  LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
             const FeaturePlacement& placement);

  int rank() const { return shard_.rank; }
  const Graph& structure() const { return shard_.structure; }
  const FeaturePlacement& placement() const { return shard_.placement.features; }
  const NodePartition& partition() const { return shard_.partition; }
  const RankShard& shard() const { return shard_; }

  // The nodes this rank owns, in increasing id order, and v's place among them (-1 when another
  // rank owns v).
  std::span<const NodeId> owned_nodes() const { return owned_; }
  std::int32_t owned_position(NodeId v) const { return position_[static_cast<std::size_t>(v)]; }

  // Features of `nodes`, columns [column_begin, column_end), row-major into `out`.
  void gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                       std::int64_t column_end, float* out) const;
  // Label of a node this rank owns.
  std::int32_t label(NodeId v) const;

  // Bytes of structure and stored features held (generated features count nothing).
  std::int64_t structure_bytes() const;
  std::int64_t feature_bytes() const;

 private:
  RankShard shard_;
  std::vector<NodeId> owned_;
  std::vector<std::int32_t> position_;
};

}  // namespace gnnbed
