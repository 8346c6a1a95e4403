#pragma once
// P3's caching applied to a run: which partitions every rank copies (replication.hpp), as the
// experiment's `distribution.cache_budget_bytes` and `distribution.cache` ask, and what every rank
// then holds and how many bytes that is.
#include <cstdint>
#include <vector>

#include "strategies/config/experiment_config.hpp"
#include "strategies/replication.hpp"
#include "strategies/strategy.hpp"
#include "workloads/rank_shard.hpp"

namespace gnnbed {

// Bytes of every rank's feature partition, as `strategy` places features: the rows of its nodes,
// or its column slice of every node's row (float32).
std::vector<std::int64_t> feature_partition_bytes(const Strategy& strategy,
                                                  const StrategyContext& context,
                                                  const PartitionSizes& sizes);

// Sets `context`'s replicas within each rank's budget: of structure partitions (`cache`
// "structure"; partitioned structure that the strategy samples from), of feature partitions
// ("features"; strategies whose plans read copies), or of both ("both": each rank's structure and
// features as one partition, so that both are copied onto the same groups). Throws ConfigError
// naming distribution.cache when it asks for what cannot be cached (structure that every rank
// holds already or that is not sampled, features of a strategy that does not read copies).
void add_replicas(StrategyContext& context, const DistributionConfig& distribution,
                  const Strategy& strategy, const PartitionSizes& sizes);

// What `rank` holds: its own structure and feature partitions and its replicas.
ShardPlacement rank_placement(const Strategy& strategy, const StrategyContext& context, int rank);

// The bytes of features every rank holds, replicas included.
std::vector<std::int64_t> held_feature_bytes(const Strategy& strategy,
                                             const StrategyContext& context,
                                             const PartitionSizes& sizes);

// The bytes of workload every rank holds: its structure (the whole graph when the structure is
// replicated) and its features, replicas included (a machine's shared store counted once, each
// partition on its owner).
std::vector<std::int64_t> resident_bytes(const Strategy& strategy, const StrategyContext& context,
                                         const Graph& graph, const PartitionSizes& sizes);

}  // namespace gnnbed
