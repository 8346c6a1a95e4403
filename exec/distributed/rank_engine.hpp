#pragma once
// One rank's side of distributed training, an iteration at a time: sample the rank's mini-batch
// (over the network when the structure is partitioned; a full-graph strategy's share of the graph
// is cut once instead), exchange the strategy's announcements, build the plan, run it.
#include <memory>

#include "exec/distributed/distributed_sampler.hpp"
#include "exec/distributed/local_store.hpp"
#include "exec/distributed/plan_executor.hpp"
#include "strategies/batch_schedule.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/plan_memory.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {

// Every rank throws it at once when an iteration's plan would not fit in the modelled device's
// memory (distribution.device_memory_bytes): the run is out of memory, not broken.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// Collective: every rank's announcement to every other (structure traffic); entry [q] of the
// result is what rank q announced to this one. With `ranks_per_machine` above 0, only among the
// ranks of this rank's machine (Transport::all_to_all_within_machine_into).
Announcement exchange_announcement(const Announcement& sent, Transport& transport,
                                   TransferTiming& timing, int ranks_per_machine = 0);

struct IterationRun {
  Plan plan;
  PlanOutcome outcome;
  // The prologue, as it ran (relative to the clock), with the time spent waiting for peers.
  double sample_start = 0, sample_seconds = 0, sample_waiting = 0;
  double announce_start = 0, announce_seconds = 0, announce_waiting = 0;
  // Where the announcements go through one relay per machine (Strategy::announcement_relays):
  // their second exchange, within machines, the plan's third prologue op.
  bool relayed = false;
  double relay_start = 0, relay_seconds = 0, relay_waiting = 0;
  // Host work on the sampled batch: what to announce, and the plan. Part of the mini-batch's
  // production, so charged to sampling (op_timing.hpp says to which prologue op).
  double planning_seconds = 0;
};

class RankEngine {
 public:
  // Runs on the rank's shard, which must hold what the strategy places on the rank (Error
  // otherwise). Compute ops run on `backend` (which must outlive the engine).
  RankEngine(const ExperimentConfig& config, const StrategyContext& context, RankShard shard,
             Transport& transport, ComputeBackend& backend = cpu_backend());
  // Keeps only what the rank holds of `dataset` (the caller may drop it afterwards).
  RankEngine(const ExperimentConfig& config, const StrategyContext& context, const Dataset& dataset,
             Transport& transport, ComputeBackend& backend = cpu_backend());

  // Collective: every iteration of the epoch in the rounds of the static schedule (plan.hpp),
  // the pipeline filled at the start and drained at the end (plans without pipelining: one
  // iteration per round). A round samples, announces and plans the iteration it admits unless a
  // pipelined round before did (a pipelined round k plans iteration k + 1 before running its
  // stages), then runs a round. Returns the iterations in order.
  std::vector<IterationRun> run_epoch(int epoch, const Stopwatch& clock);
  // Collective: one iteration alone, to completion (every rank runs the same one), as
  // calibration and the tests run them.
  IterationRun run_iteration(int epoch, int iteration, const Stopwatch& clock);

  const BatchSchedule& schedule() const { return schedule_; }
  const LocalStore& store() const { return store_; }
  PlanExecutor& executor() { return executor_; }
  const Strategy& strategy() const { return *context_.strategy; }

 private:
  // Sampling, the announcement and the plan of (epoch, iteration).
  void prepare(IterationRun& run, int epoch, int iteration, const Stopwatch& clock);
  // Collective: throws OutOfMemoryError on every rank when the plan does not fit on some rank.
  // The announcement's exchanges (both, where it is relayed), timed into `run`: what every peer
  // announced to this rank.
  Announcement exchange_announcements(const Announcement& sent, const Stopwatch& clock,
                                      IterationRun& run);
  void check_device_memory(const Plan& plan);

  const StrategyContext& context_;
  Transport& transport_;
  LocalStore store_;
  BatchSchedule schedule_;
  DistributedSampler sampler_;
  PlanExecutor executor_;
  // Full-graph strategies: the rank's share of the graph, cut once (full_graph.hpp).
  std::shared_ptr<const Block> local_block_;
  std::shared_ptr<const std::vector<std::int32_t>> gcn_degrees_;  // full graph only
  std::int64_t device_memory_bytes_ = 0;                          // 0: no limit
  DeviceMemory device_memory_;
  std::vector<std::int32_t> carried_state_;  // the last plan's (Plan::carried_state)
};

}  // namespace gnnbed
