#pragma once
// One simulated point: an experiment on a cluster. Plans every iteration of one epoch (or the
// first `iterations` of it) with the strategy's own planner (the sampler the real run uses),
// checks that every rank's data and tensors fit in its memory, replays the plans in SimGrid and
// reports what run_experiment reports: epoch time with the same breakdown, bytes per rank by kind,
// peak memory.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/cluster.hpp"
#include "sim/epoch_sample.hpp"
#include "sim/replay.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/plan_memory.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

struct SimulationOptions {
  // 0: the whole epoch; k: a stratified sample of k iterations spread over the epoch (the first,
  // the last, one per stratum between), extrapolated with a 95 % interval (epoch_sample.hpp).
  int iterations = 0;
  bool record_trace = false;
  // Compute ops that carry a recorded duration (Op::measured_seconds) take it instead of the cost
  // model's time: replaying what a real run measured under another cluster's network.
  bool use_measured_durations = false;
  // Also predicts one evaluation after the epoch: every rank's full-neighbourhood inference plan
  // (strategies/inference.hpp, the plan run_experiment runs), replayed once the epoch's pipeline
  // has drained. Its blocks hold every edge of the graph once.
  bool evaluation = false;
  // distribution.all_to_all_block_steps of the run the plans are replayed as (ReplayOptions).
  int all_to_all_block_steps = kDefaultAllToAllBlockSteps;
  // Called after each planned iteration (done, total): progress for long runs.
  std::function<void(int, int)> progress;
};

struct RankMemory {
  std::int64_t device_peak_bytes = 0;  // largest over the iterations
  // SimulationOptions::evaluation: the peak of the rank's evaluation plan, on the same device
  // (its tensors after their last use dropped, as the executor drops transient ones); 0 otherwise.
  std::int64_t evaluation_peak_bytes = 0;
  std::int64_t stash_bytes = 0;  // pipelining: weight versions (pipeline_stash_bytes)
  std::int64_t host_bytes = 0;   // the rank's share of the graph and features
};

struct SimulationResult {
  bool out_of_memory = false;
  std::string out_of_memory_reason;
  // A part of the cluster failed (ClusterSpec::failures) during the replayed iterations: where
  // the ranks stood (ReplayFailure::to_json); null when none did. When the failure stopped the
  // job before every rank finished, the epoch has no time.
  nlohmann::json failure;
  // The options the configuration left unset that the cluster's probe set (sim/probed_costs.hpp),
  // by field; empty when none.
  nlohmann::json probed_costs = nlohmann::json::object();
  bool stopped_by_failure() const {
    return !failure.is_null() && !failure["completed"].get<bool>();
  }
  int iterations_per_epoch = 0;
  int iterations_simulated = 0;
  double epoch_seconds = 0;  // predicted: epoch_estimate.seconds
  EpochEstimate epoch_estimate;
  std::vector<int> sampled_iterations;  // the epoch's iterations replayed, in order
  double simulated_seconds = 0;
  std::array<double, kNumSimulatedParts> mean_seconds{};  // per epoch, mean over ranks
  std::array<double, kNumSimulatedParts> max_seconds{};   // per epoch, slowest rank
  std::vector<TrafficBytes> sent_per_rank;                // per epoch
  std::vector<TrafficBytes> received_per_rank;
  // SimulationOptions::evaluation: one evaluation's time (from the end of the epoch's last
  // iteration to the last rank's logits) and bytes per rank; -1 and empty otherwise.
  double evaluation_seconds = -1;
  std::vector<TrafficBytes> evaluation_sent_per_rank;
  std::vector<TrafficBytes> evaluation_received_per_rank;
  std::vector<RankMemory> memory;
  // P3's caching: ranks per group that hold every structure and every feature partition (the
  // number of ranks when nothing is copied).
  int structure_group_size = 0;
  int feature_group_size = 0;
  // Per rank, per epoch: copy, compute and communication, waiting left out.
  std::vector<double> busy_seconds;
  // Full-graph strategies: every rank's part with its busy time, samples of ROC's partition cost
  // model (roc_partition.hpp: recorded_partition_costs); null otherwise.
  nlohmann::json partition_costs;
  std::int64_t communications = 0;
  double planning_seconds = 0;  // wall time: sampling and planning
  double replay_seconds = 0;    // wall time: SimGrid
  nlohmann::json simgrid_config;
  std::vector<SimulatedOp> trace;

  nlohmann::json to_json() const;  // without the trace
};

// Call once per process (SimGrid: one engine per process).
SimulationResult simulate_experiment(const ExperimentConfig& config, const Dataset& dataset,
                                     const ClusterSpec& cluster, const SimulationOptions& options);

// Replays plans a real run recorded (run_experiment --plans): every rank's plan of one or more
// iterations, grouped by (epoch, iteration). The recorded iterations are scaled to an epoch of
// `iterations_per_epoch` (run_experiment's result gives it per epoch). Memory is the plans' peak
// tensors (host data is not recorded). Throws ConfigError (field "replay-plans") when an
// iteration lacks a rank's plan or the plans were made for another number of ranks than the
// cluster has. Call once per process.
SimulationResult simulate_recorded_plans(std::vector<Plan> plans, const ClusterSpec& cluster,
                                         int iterations_per_epoch,
                                         const SimulationOptions& options);

// Chrome trace (chrome://tracing, Perfetto) of simulated ops: one process per rank, one thread
// per stream, as run_experiment writes its measured trace.
nlohmann::json chrome_trace(const std::vector<SimulatedOp>& ops);

}  // namespace gnnbed
