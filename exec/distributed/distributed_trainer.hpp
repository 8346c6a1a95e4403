#pragma once
// Distributed mini-batch training on the ranks of a Transport: every iteration, every rank
// samples its own mini-batch, announces what its peers need, builds its plan with the strategy
// and runs it. Reports epoch time (the slowest rank's) with its breakdown, bytes moved per rank
// by traffic kind (as counted by the transport and as the plans predicted), peak memory, loss
// and accuracy.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/kernels/compute_backend.hpp"
#include "exec/transport.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/partition_costs.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

// The breakdown of a rank's time: the plan's categories, with the time communication ops spent
// waiting for late peers split off as "waiting".
inline constexpr std::size_t kNumBreakdownParts = kNumTimeCategories + 1;
std::string_view breakdown_part_name(
    std::size_t part);  // sampling, copy, compute, communication, waiting

struct DistributedEpoch {
  int epoch = 0;
  double seconds = 0;         // slowest rank's wall time
  double loss = 0;            // mean over the epoch's iterations of the global mean loss
  double train_accuracy = 0;  // over every seed of the epoch
  double val_accuracy = -1;   // -1 when not evaluated
  int iterations = 0;
  std::array<double, kNumBreakdownParts> mean_seconds{};  // per part, mean over ranks
  std::array<double, kNumBreakdownParts> max_seconds{};   // per part, slowest rank
  double planning_seconds = 0;  // building plans (mean over ranks; counted in "sampling")
  // Page faults taken during the epoch, mean and largest over ranks: memory touched for the first
  // time (buffers that outgrow what earlier epochs allocated) slows the epoch that touches it.
  double page_faults_mean = 0;
  double page_faults_max = 0;
};

struct RankReport {
  int rank = 0;
  TrafficBytes sent;  // counted by the transport
  TrafficBytes received;
  TrafficBytes planned_sent;  // what the plans said
  TrafficBytes planned_received;
  std::int64_t peak_memory_bytes = 0;
  // Pipelining: the most bytes of stashed weight versions (with in-flight gradients) held at
  // once beyond the current weights (PlanExecutor::stash_peak_bytes); 0 without.
  std::int64_t stash_peak_bytes = 0;
  std::int64_t structure_bytes = 0;
  std::int64_t feature_bytes = 0;
  // Feature rows a GPU rank keeps on its device to gather mini-batch inputs there
  // (PlanExecutor::device_feature_bytes); 0 when it gathers on the host.
  std::int64_t device_feature_bytes = 0;
  TrafficBytes evaluation_sent;  // evaluation's, counted apart from training's (not in plans)
  TrafficBytes evaluation_received;
  // The rank's part of the graph and the time it was busy per measured epoch (copy, compute and
  // communication, waiting left out): a sample of ROC's partition cost model.
  PartitionShape partition;
  double busy_seconds = 0;
};

struct DistributedReport {
  std::vector<DistributedEpoch> epochs;
  std::vector<RankReport> ranks;  // every rank's (rank 0 only)
  double val_accuracy = -1;       // after the last epoch (-1 when not evaluated)
  double test_accuracy = -1;
  // The last evaluation's wall time on the slowest rank (its plan built before, not counted);
  // -1 when not evaluated.
  double evaluation_seconds = -1;
  // The last evaluation's ops per kind (rank 0), as op_kinds for one epoch; null when not
  // evaluated.
  nlohmann::json evaluation_op_kinds;
  double epoch_seconds = 0;  // slowest rank, mean over epochs after the warm-up ones
  bool bytes_match = true;   // transport counts == plans' on every rank (rank 0)
  nlohmann::json trace;      // Chrome trace events of every rank (rank 0), when requested
  // Per op kind over the measured epochs (rank 0): count, seconds (mean and max over ranks) and
  // work per epoch (op_timing.hpp).
  int measured_epochs = 0;
  nlohmann::json op_kinds;
  // Every rank's plan of the first iteration after the warm-up epochs, each op that ran with its
  // measured_seconds (rank 0), when requested.
  std::vector<Plan> first_plans;

  nlohmann::json to_json() const;
};

struct DistributedOptions {
  bool record_trace = false;  // Chrome trace of the first epoch
  bool keep_first_plans = false;
  bool quiet = false;  // no per-epoch progress line on rank 0
  // Where the plan's compute ops run; null: the CPU. Must outlive the call.
  ComputeBackend* backend = nullptr;
};

// Collective. Every rank passes the same config and context (make_strategy_context) and its own
// shard of the workload (what the strategy places on it). Evaluation runs on every rank with full
// neighbourhoods (DistributedEvaluator), so no rank needs the whole workload.
DistributedReport train_distributed(const ExperimentConfig& config, const StrategyContext& context,
                                    RankShard shard, Transport& transport,
                                    const DistributedOptions& options);
// The same, each rank cutting its shard from its own copy of the whole dataset.
DistributedReport train_distributed(const ExperimentConfig& config, const StrategyContext& context,
                                    const Dataset& dataset, Transport& transport,
                                    const DistributedOptions& options);

}  // namespace gnnbed
