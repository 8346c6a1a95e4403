#include "strategies/caching.hpp"

#include "strategies/model_ops.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {

std::vector<std::int64_t> feature_partition_bytes(const Strategy& strategy,
                                                  const StrategyContext& context,
                                                  const PartitionSizes& sizes) {
  std::vector<std::int64_t> bytes;
  for (int q = 0; q < context.num_ranks; ++q) {
    const FeaturePlacement placement = strategy.feature_placement(context, q);
    const std::int64_t rows = placement.owned_rows_only ? sizes.nodes[static_cast<std::size_t>(q)]
                                                        : context.partition.num_nodes();
    bytes.push_back(rows * (placement.column_end - placement.column_begin) * kFloatBytes);
  }
  return bytes;
}

void add_replicas(StrategyContext& context, const DistributionConfig& distribution,
                  const Strategy& strategy, const PartitionSizes& sizes) {
  const std::string& cache = distribution.cache;
  const bool samples = context.structure_partitioned && !strategy.full_graph();
  require(!(cache == "structure" && !samples), "distribution.cache",
          "'structure' copies the structure partitions that sampling reads over the network, but " +
              (strategy.full_graph() ? strategy.name() + " does not sample"
                                     : "with distribution.structure=replicated every rank holds "
                                       "the whole structure already"));
  require(!(cache == "features" && !strategy.uses_feature_replicas()), "distribution.cache",
          "'features': " + strategy.name() + " does not read copies of other ranks' features");
  const bool structure = (cache == "structure" || cache == "both") && samples;
  const bool features =
      (cache == "features" || cache == "both") && strategy.uses_feature_replicas();
  // With both, a rank's structure and feature partitions travel together: the whole input fits
  // into the fewest ranks, and sampling and the features then stay within the same groups.
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(context.num_ranks), 0);
  const auto add = [&](const std::vector<std::int64_t>& part_bytes) {
    for (std::size_t q = 0; q < bytes.size(); ++q) bytes[q] += part_bytes[q];
  };
  if (structure) add(structure_partition_bytes(sizes));
  if (features) add(feature_partition_bytes(strategy, context, sizes));
  const Replication replicas = replicate_partitions(
      bytes, std::vector<std::int64_t>(bytes.size(), distribution.cache_budget_bytes));
  context.structure_replicas = structure ? replicas : Replication();
  context.feature_replicas = features ? replicas : Replication();
}

ShardPlacement rank_placement(const Strategy& strategy, const StrategyContext& context, int rank) {
  ShardPlacement placement;
  placement.structure_partitioned = context.structure_partitioned;
  placement.features = strategy.feature_placement(context, rank);
  if (context.structure_partitioned) {
    placement.structure_replicas = context.structure_replicas.cached(rank);
  }
  for (const int q : context.feature_replicas.cached(rank)) {
    placement.feature_replicas.push_back({q, strategy.feature_placement(context, q)});
  }
  return placement;
}

std::vector<std::int64_t> held_feature_bytes(const Strategy& strategy,
                                             const StrategyContext& context,
                                             const PartitionSizes& sizes) {
  const std::vector<std::int64_t> features = feature_partition_bytes(strategy, context, sizes);
  std::vector<std::int64_t> bytes;
  for (int r = 0; r < context.num_ranks; ++r) {
    bytes.push_back(context.feature_replicas.held_bytes(r, features));
  }
  return bytes;
}

std::vector<std::int64_t> resident_bytes(const Strategy& strategy, const StrategyContext& context,
                                         const Graph& graph, const PartitionSizes& sizes) {
  const std::vector<std::int64_t> structure = structure_partition_bytes(sizes);
  // A machine's shared store is counted once, each partition on its owner.
  const std::vector<std::int64_t> features = context.feature_replicas.shared_within_machine()
                                                 ? feature_partition_bytes(strategy, context, sizes)
                                                 : held_feature_bytes(strategy, context, sizes);
  const std::int64_t whole_structure =
      (graph.num_nodes() + 1) * static_cast<std::int64_t>(sizeof(std::int64_t)) +
      graph.num_edges() * static_cast<std::int64_t>(sizeof(NodeId));
  std::vector<std::int64_t> bytes;
  for (int r = 0; r < context.num_ranks; ++r) {
    bytes.push_back((context.structure_partitioned
                         ? context.structure_replicas.held_bytes(r, structure)
                         : whole_structure) +
                    features[static_cast<std::size_t>(r)]);
  }
  return bytes;
}

}  // namespace gnnbed
