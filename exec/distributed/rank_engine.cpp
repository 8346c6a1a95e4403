#include "exec/distributed/rank_engine.hpp"

#include "exec/distributed/global_degrees.hpp"
#include "exec/train/trainer.hpp"
#include "strategies/caching.hpp"
#include "strategies/full_graph.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

Announcement exchange_announcement(const Announcement& sent, Transport& transport,
                                   TransferTiming& timing) {
  std::vector<std::span<const std::byte>> views;
  for (const auto& payload : sent) views.push_back(as_bytes_span(payload));
  const auto received = transport.all_to_all(views, Traffic::structure, timing);
  Announcement decoded;
  for (const auto& bytes : received) decoded.push_back(from_bytes<std::int32_t>(bytes));
  return decoded;
}

// The shard, once it is known to hold what the strategy needs on its rank.
RankShard fitting(RankShard shard, const StrategyContext& context, const Strategy& strategy,
                  int rank) {
  if (shard.rank != rank) {
    throw Error("rank " + std::to_string(rank) + " was given rank " + std::to_string(shard.rank) +
                "'s shard");
  }
  const ShardPlacement wanted = rank_placement(strategy, context, shard.rank);
  const FeaturePlacement& held = shard.placement.features;
  if (shard.partition.num_parts() != context.num_ranks || shard.placement != wanted) {
    throw Error("rank " + std::to_string(shard.rank) + "'s shard (" +
                std::to_string(shard.partition.num_parts()) + " parts, " +
                (held.owned_rows_only ? "feature rows" : "feature columns") + " [" +
                std::to_string(held.column_begin) + ", " + std::to_string(held.column_end) +
                "), structure " +
                (shard.placement.structure_partitioned ? "partitioned" : "replicated") + ", " +
                std::to_string(shard.placement.structure_replicas.size()) + " structure and " +
                std::to_string(shard.placement.feature_replicas.size()) +
                " feature replicas) does not hold what " + strategy.name() + " on " +
                std::to_string(context.num_ranks) + " ranks places on it");
  }
  return shard;
}

std::vector<std::int64_t> train_counts(const RankShard& shard) {
  std::vector<std::int64_t> counts;
  for (const SplitCounts& c : shard.split_counts) counts.push_back(c.train);
  return counts;
}

}  // namespace

RankEngine::RankEngine(const ExperimentConfig& config, const StrategyContext& context,
                       const Dataset& dataset, Transport& transport, ComputeBackend& backend)
    : RankEngine(config, context,
                 cut_shard(dataset, context.partition, transport.rank(),
                           rank_placement(*make_strategy(config.distribution.strategy), context,
                                          transport.rank())),
                 transport, backend) {}

RankEngine::RankEngine(const ExperimentConfig& config, const StrategyContext& context,
                       RankShard shard, Transport& transport, ComputeBackend& backend)
    : context_(context),
      transport_(transport),
      strategy_(make_strategy(config.distribution.strategy)),
      store_(fitting(std::move(shard), context, *strategy_, transport.rank())),
      schedule_(store_.rank(), store_.shard().split.train, train_counts(store_.shard()),
                config.training.batch_size, config.training.seed),
      sampler_(store_, context.partition, config.training.fanouts, sampler_seed(config.training),
               context.structure_partitioned, context.structure_replicas),
      executor_(context, strategy_->parameters(context, transport.rank()), store_, transport,
                backend) {
  if (strategy_->full_graph()) {
    local_block_ = std::make_shared<const Block>(local_graph_block(
        store_.structure(), store_.owned_nodes(), global_gcn_degrees(store_, transport)));
  }
}

IterationRun RankEngine::run_iteration(int epoch, int iteration, const Stopwatch& clock) {
  IterationRun run;
  RankIteration it;
  it.rank = transport_.rank();
  it.epoch = epoch;
  it.iteration = iteration;
  it.loss_scale = 1.0 / static_cast<double>(std::max<std::int64_t>(
                            1, schedule_.seeds_in_iteration(epoch, iteration)));
  it.dropout_key = schedule_.dropout_key(epoch, iteration);

  run.sample_start = clock.seconds();
  TransferTiming sample_timing;
  const std::vector<NodeId> seeds = schedule_.seeds(it.rank, epoch, iteration);
  if (local_block_) {
    it.batch.seeds = seeds;
    it.local_block = local_block_;
  } else {
    it.batch = sampler_.sample(seeds, schedule_.batch_key(epoch, iteration), transport_,
                               it.sampling_hops, sample_timing);
  }
  run.sample_seconds = clock.seconds() - run.sample_start;
  run.sample_waiting = sample_timing.waiting_seconds;

  run.announce_start = clock.seconds();
  TransferTiming announce_timing;
  const Announcement received =
      exchange_announcement(strategy_->announce(context_, it), transport_, announce_timing);
  run.announce_seconds = clock.seconds() - run.announce_start;
  run.announce_waiting = announce_timing.waiting_seconds;

  const Stopwatch planning;
  run.plan = strategy_->plan(context_, it, received);
  run.planning_seconds = planning.seconds();
  run.outcome = executor_.run(run.plan, clock);
  return run;
}

}  // namespace gnnbed
