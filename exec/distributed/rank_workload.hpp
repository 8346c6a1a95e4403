#pragma once
// What one rank of a distributed run loads: its shard of the workload, the strategy context (node
// owners and sizes, never the graph itself) and the whole workload's summary for results.
#include <nlohmann/json.hpp>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"
#include "workloads/rank_shard.hpp"

namespace gnnbed {

struct RankWorkload {
  StrategyContext context;
  RankShard shard;
  nlohmann::json dataset_summary;  // Dataset::summary() of the whole workload
};

// For workload.source "shards" (a directory written by `workload convert --shards`): reads the
// manifest, checks that the shards were cut for this run (ConfigError naming the field at odds:
// ranks, distribution.partitioner, distribution.partition_seed, distribution.structure, and
// distribution.strategy for the feature layout) and loads this rank's shard only. For every other
// source: loads or generates the whole workload, partitions it and cuts this rank's shard, and
// drops the rest before returning.
RankWorkload load_rank_workload(const ExperimentConfig& config, int num_ranks, int rank);

// The strategy context of a run from one rank's shard: its owners and sizes, and its features'
// entries per node where they are sparse rows.
StrategyContext make_shard_context(const ExperimentConfig& config, const RankShard& shard);

}  // namespace gnnbed
