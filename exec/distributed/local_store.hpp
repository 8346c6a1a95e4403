#pragma once
// What one rank keeps of the workload: the graph structure it samples from (all of it, or the
// in-edges of the nodes it owns), the node features its strategy places on it, and the labels of
// the nodes it owns. Built from a loaded Dataset, which the caller may then drop. Reads outside
// what the rank holds throw Error: a plan that needs them is wrong.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strategies/strategy.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

class LocalStore {
 public:
  LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
             const FeaturePlacement& placement);

  int rank() const { return rank_; }
  const Graph& structure() const { return structure_; }
  const FeaturePlacement& placement() const { return placement_; }

  // Features of `nodes`, columns [column_begin, column_end), row-major into `out`.
  void gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                       std::int64_t column_end, float* out) const;
  // Label of a node this rank owns.
  std::int32_t label(NodeId v) const;

  // Bytes of structure and stored features held (generated features count nothing).
  std::int64_t structure_bytes() const;
  std::int64_t feature_bytes() const;

 private:
  int rank_;
  NodePartition partition_;
  FeaturePlacement placement_;
  Graph structure_;
  std::vector<std::int32_t> labels_;  // owned nodes' labels; others -1
  // Stored features: the placed part, row-major; row_of_[v] is v's row (-1 when not held).
  // Generated features: the generator, read on demand for placed rows and columns only.
  std::vector<float> stored_;
  std::vector<std::int32_t> row_of_;
  std::shared_ptr<const FeatureStore> generated_;
};

// The in-edges of the nodes `partition` gives to `rank` (other nodes keep no in-edges).
Graph owned_rows(const Graph& graph, const NodePartition& partition, int rank);

}  // namespace gnnbed
