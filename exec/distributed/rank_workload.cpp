#include "exec/distributed/rank_workload.hpp"

#include "strategies/caching.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/shard_format.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {
namespace {

std::string describe(const FeaturePlacement& placement) {
  return std::string(placement.owned_rows_only ? "the feature rows of its own nodes"
                                               : "every node's feature columns") +
         " [" + std::to_string(placement.column_begin) + ", " +
         std::to_string(placement.column_end) + ")";
}

// Every way the shard set can be at odds with the run, each naming the field to change.
void check_layout(const ShardManifest& manifest, const ExperimentConfig& config, int num_ranks) {
  const ShardLayout& layout = manifest.layout;
  const std::string where = "the shards in " + manifest.directory.string();
  require(layout.num_shards == num_ranks, "ranks",
          where + " were cut for " + std::to_string(layout.num_shards) + " ranks, this run has " +
              std::to_string(num_ranks) + " (convert again with --shards " +
              std::to_string(num_ranks) + ")");
  const DistributionConfig& distribution = config.distribution;
  require(layout.partitioner == distribution.partitioner, "distribution.partitioner",
          where + " were partitioned with '" + layout.partitioner + "', this run asks for '" +
              distribution.partitioner + "'");
  require(layout.partition_seed == distribution.partition_seed, "distribution.partition_seed",
          where + " were partitioned with seed " + std::to_string(layout.partition_seed) +
              ", this run asks for " + std::to_string(distribution.partition_seed));
  require(layout.structure == distribution.structure, "distribution.structure",
          where + " hold " + layout.structure + " structure, this run asks for " +
              distribution.structure + " (convert again with --structure " +
              distribution.structure + ")");
}

RankWorkload load_from_shards(const ExperimentConfig& config, int num_ranks, int rank) {
  if (config.workload.path.empty()) {
    throw ConfigError("workload.path", "source 'shards' reads a directory: set path");
  }
  require(config.distribution.cache_budget_bytes == 0, "distribution.cache_budget_bytes",
          "caching copies other ranks' partitions, which the rank files of a sharded workload do "
          "not hold: set it to 0, or run on the workload itself");
  require(config.distribution.feature_store == "rank", "distribution.feature_store",
          "'machine' reads the rows of a machine's ranks, which the rank files of a sharded "
          "workload do not hold: set it to rank, or run on the workload itself");
  const ShardManifest manifest = read_shard_manifest(config.workload.path);
  check_layout(manifest, config, num_ranks);
  RankShard shard = load_shard(manifest, rank);
  StrategyContext context = make_shard_context(config, shard);
  const FeaturePlacement wanted = context.strategy->feature_placement(context, rank);
  require(wanted == shard.placement.features, "distribution.strategy",
          config.distribution.strategy + " places " + describe(wanted) + " on rank " +
              std::to_string(rank) + ", but the shards in " + manifest.directory.string() +
              " hold " + describe(shard.placement.features) +
              " (convert again with --feature-layout " +
              (wanted.owned_rows_only ? "rows" : "columns") + ")");
  return {std::move(context), std::move(shard), manifest.dataset};
}

}  // namespace

StrategyContext make_shard_context(const ExperimentConfig& config, const RankShard& shard) {
  StrategyContext context =
      make_strategy_context(config, shard.partition, shard.feature_dim, shard.num_classes);
  if (shard.sparse_features) use_sparse_feature_rows(context, shard.feature_row_entries);
  return context;
}

RankWorkload load_rank_workload(const ExperimentConfig& config, int num_ranks, int rank) {
  if (config.workload.source == "shards") return load_from_shards(config, num_ranks, rank);
  const Dataset dataset = load_workload(config.workload);
  StrategyContext context = make_strategy_context(config, dataset, num_ranks);
  RankShard shard =
      cut_shard(dataset, context.partition, rank, rank_placement(*context.strategy, context, rank));
  return {std::move(context), std::move(shard), dataset.summary()};
}

}  // namespace gnnbed
