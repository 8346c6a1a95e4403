#include "exec/distributed/rank_engine.hpp"

#include <cstdio>

#include "exec/distributed/global_degrees.hpp"
#include "exec/train/trainer.hpp"
#include "strategies/caching.hpp"
#include "strategies/full_graph.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

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

Announcement exchange_announcement(const Announcement& sent, Transport& transport,
                                   TransferTiming& timing, int ranks_per_machine) {
  std::vector<std::span<const std::byte>> views;
  for (std::size_t q = 0; q < sent.size(); ++q) views.push_back(as_bytes_span(sent[q]));
  std::vector<std::vector<std::byte>> received;
  if (ranks_per_machine > 0) {
    transport.all_to_all_within_machine_into(views, received, Traffic::structure, timing,
                                             ranks_per_machine);
  } else {
    transport.all_to_all_into(views, received, Traffic::structure, timing);
  }
  std::vector<std::vector<std::int32_t>> decoded;
  for (const auto& bytes : received) decoded.push_back(from_bytes<std::int32_t>(bytes));
  return Announcement(std::move(decoded));
}

RankEngine::RankEngine(const ExperimentConfig& config, const StrategyContext& context,
                       const Dataset& dataset, Transport& transport, ComputeBackend& backend)
    : RankEngine(config, context,
                 cut_shard(dataset, context.partition, transport.rank(),
                           rank_placement(*context.strategy, context, transport.rank())),
                 transport, backend) {}

RankEngine::RankEngine(const ExperimentConfig& config, const StrategyContext& context,
                       RankShard shard, Transport& transport, ComputeBackend& backend)
    : context_(context),
      transport_(transport),
      store_(fitting(std::move(shard), context, *context.strategy, transport.rank())),
      schedule_(store_.rank(), store_.shard().split.train, train_counts(store_.shard()),
                config.training.batch_size, config.training.seed),
      sampler_(store_, context.partition, config.training.fanouts, sampler_seed(config.training),
               context.structure_partitioned, context.structure_replicas),
      executor_(context, context.strategy->parameters(context, transport.rank()), store_, transport,
                backend),
      device_memory_bytes_(config.distribution.device_memory_bytes) {
  if (context.strategy->full_graph()) {
    gcn_degrees_ =
        std::make_shared<const std::vector<std::int32_t>>(global_gcn_degrees(store_, transport));
    local_block_ = std::make_shared<const Block>(
        local_graph_block(store_.structure(), store_.owned_nodes(), *gcn_degrees_));
  }
}

IterationRun RankEngine::run_iteration(int epoch, int iteration, const Stopwatch& clock) {
  IterationRun run;
  prepare(run, epoch, iteration, clock);
  run.outcome = executor_.run(run.plan, clock);
  return run;
}

std::vector<IterationRun> RankEngine::run_epoch(int epoch, const Stopwatch& clock) {
  const int iterations = schedule_.iterations_per_epoch();
  // Sized up front: the executor keeps pointers to the plans of the mini-batches in flight.
  std::vector<IterationRun> runs(static_cast<std::size_t>(iterations));
  std::size_t finished = 0;
  int prepared = 0;
  const auto prepare_next = [&] {
    prepare(runs[static_cast<std::size_t>(prepared)], epoch, prepared, clock);
    ++prepared;
  };
  for (int round = 0; round < iterations || executor_.in_flight() > 0; ++round) {
    if (round < iterations) {
      if (prepared == round) prepare_next();
      const Plan& plan = runs[static_cast<std::size_t>(round)].plan;
      executor_.admit(plan);
      // A pipelined round starts with the next mini-batch's prologue (plan.hpp: schedule_key).
      if (plan.pipeline_depth > 0 && prepared < iterations) prepare_next();
    }
    for (PlanOutcome& outcome : executor_.run_round(clock)) {
      runs[finished++].outcome = std::move(outcome);
    }
  }
  return runs;
}

void RankEngine::prepare(IterationRun& run, int epoch, int iteration, const Stopwatch& clock) {
  RankIteration it;
  it.rank = transport_.rank();
  it.epoch = epoch;
  it.iteration = iteration;
  it.step = schedule_.global_step(epoch, iteration);
  it.loss_scale = 1.0 / static_cast<double>(std::max<std::int64_t>(
                            1, schedule_.seeds_in_iteration(epoch, iteration)));
  it.dropout_key = schedule_.dropout_key(epoch, iteration);
  it.carried_state = carried_state_;
  it.persistent_values = [this](const std::string& name) {
    return executor_.persistent_values(name);
  };

  run.sample_start = clock.seconds();
  TransferTiming sample_timing;
  const std::vector<NodeId> seeds = schedule_.seeds(it.rank, epoch, iteration);
  if (local_block_) {
    it.batch.seeds = seeds;
    it.local_block = local_block_;
    if (!context_.structure_partitioned) {
      it.structure = &store_.structure();
      it.gcn_degrees = gcn_degrees_;
    }
  } else {
    it.batch = sampler_.sample(seeds, schedule_.batch_key(epoch, iteration), transport_,
                               it.sampling_hops, sample_timing);
  }
  run.sample_seconds = clock.seconds() - run.sample_start;
  run.sample_waiting = sample_timing.waiting_seconds;

  // Deciding what to ask the peers for is planning (host work on the batch); the announcement op
  // is its exchange.
  const Stopwatch requests_clock;
  const Announcement requests = context_.strategy->announce(context_, it);
  const double requests_seconds = requests_clock.seconds();
  const Announcement received = exchange_announcements(requests, clock, run);

  if (context_.strategy->derives_peer_first_layers()) {
    const std::uint64_t batch_key = schedule_.batch_key(epoch, iteration);
    it.derive_first_layer = [this, batch_key](int, std::span<const NodeId> peer_seeds) {
      return derived_first_layer(sampler_.sample_locally(peer_seeds, batch_key));
    };
  }
  // Planning includes sampling the peers' batches again where the plan derives them: the plan's
  // third prologue op, which op_timing charges with this time.
  const Stopwatch planning;
  run.plan = context_.strategy->plan(context_, it, requests, received);
  run.planning_seconds = requests_seconds + planning.seconds();
  carried_state_ = run.plan.carried_state;
  if (device_memory_bytes_ > 0) check_device_memory(run.plan);
}

Announcement RankEngine::exchange_announcements(const Announcement& sent, const Stopwatch& clock,
                                                IterationRun& run) {
  const std::optional<AnnouncementRelays> relays = context_.strategy->announcement_relays(context_);
  const int rank = transport_.rank();
  run.announce_start = clock.seconds();
  TransferTiming announce_timing;
  const Announcement received = exchange_announcement(relays ? relays->across(sent, rank) : sent,
                                                      transport_, announce_timing);
  run.announce_seconds = clock.seconds() - run.announce_start;
  run.announce_waiting = announce_timing.waiting_seconds;
  if (!relays) return received;
  run.relayed = true;
  run.relay_start = clock.seconds();
  TransferTiming relay_timing;
  const Announcement forwarded = exchange_announcement(relays->within(received, rank), transport_,
                                                       relay_timing, relays->ranks_per_machine());
  run.relay_seconds = clock.seconds() - run.relay_start;
  run.relay_waiting = relay_timing.waiting_seconds;
  return relays->delivered(received, forwarded, rank);
}

void RankEngine::check_device_memory(const Plan& plan) {
  // The pipeline drains at the end of every epoch.
  if (plan.iteration == 0) device_memory_ = DeviceMemory{};
  const auto needed = static_cast<double>(device_memory_.add(plan));
  const double most = transport_.max_over_ranks(needed);
  if (most <= static_cast<double>(device_memory_bytes_)) return;
  const int rank = static_cast<int>(
      transport_.max_over_ranks(needed == most ? static_cast<double>(transport_.rank()) : -1.0));
  constexpr double kMiB = 1 << 20;
  char text[200];
  std::snprintf(text, sizeof(text),
                "rank %d needs %.1f MiB of device memory in iteration %d of epoch %d, more than "
                "the %.1f MiB of distribution.device_memory_bytes",
                rank, most / kMiB, plan.iteration, plan.epoch,
                static_cast<double>(device_memory_bytes_) / kMiB);
  throw OutOfMemoryError(text);
}

}  // namespace gnnbed
