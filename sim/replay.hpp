#pragma once
// Replays per-rank plans in SimGrid on a modelled cluster (docs/design.md: sim/ interprets the
// plans exec/ runs), by the rule PlanExecutor runs them by (docs/plans.md): every rank's ops in
// the static schedule's order, each after its dependencies and once the earlier rounds are
// complete on its rank (but for transfers left in flight to a later stage); a CPU rank is a
// thread actor and a network actor that starts a transfer once the thread has reached it. Compute
// ops are executions on the host or device the cluster says, as long as the cost model (or the
// recorded duration) says; collectives are decomposed into the point-to-point steps of
// strategies/collective_schedule, each a SimGrid communication over the modelled route (a
// mailbox transfer between the two ranks' actors, moved to its end hosts), so that contention on
// PCIe, NICs and the fabric is simulated.
//
// Point-to-point plans (PyTorch-BigGraph's, strategies/pbg.hpp) follow the rule "each stream in
// plan order, each op after its dependencies": a send or receive is one message, matched with its
// peer's in plan order per pair of ranks, moved like a collective's step; the server stream is an
// actor of its own, beside the rank's training.
//
// Which endpoints carry a transfer follows the data: structure, feature, embedding and control
// traffic moves between the machines' CPUs (samplers, feature stores and PBG's training live in
// host memory); activations, gradients and weights move between devices. Host-to-device copies
// cross the device link.
//
// SimGrid allows one engine per process: call replay_plans once per process (simulate forks a
// child per simulated point).
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/plan/traffic.hpp"

namespace gnnbed {

// sampling, copy, compute, communication, waiting: the parts run_experiment reports.
inline constexpr std::size_t kNumSimulatedParts = kNumTimeCategories + 1;
std::string_view simulated_part_name(std::size_t part);

struct ReplayOptions {
  bool use_measured_durations = false;  // ops' measured_seconds where recorded
  bool record_trace = false;
  // A plan's all-to-all posts its pairwise steps in blocks of this many (all_to_all_blocks;
  // distribution.all_to_all_block_steps), as the engines post it.
  int all_to_all_block_steps = kDefaultAllToAllBlockSteps;
  // Per rank, the bytes of features it holds, which its GPU keeps where the cluster says
  // (ClusterSpec::keeps_features); empty: no rank keeps them on its device.
  std::vector<std::int64_t> feature_bytes;

  // Whether the replay takes `op`'s recorded duration instead of the cost model's.
  bool uses_measured(const Op& op) const {
    return use_measured_durations && op.measured_seconds >= 0 && is_costed(op.kind);
  }
};

struct SimulatedOp {
  int rank = 0;
  int iteration = 0;
  Stream stream = Stream::compute;
  OpKind kind = OpKind::sample;
  std::string label;
  double start_seconds = 0;
  double seconds = 0;
  double waiting_seconds = 0;
};

struct SimulatedRank {
  std::array<double, kNumSimulatedParts> seconds{};  // summed over the replayed iterations
  double finish_seconds = 0;
  TrafficBytes sent;
  TrafficBytes received;
  // The same per replayed iteration, so that a sampled epoch can weight each (epoch_sample.hpp).
  std::vector<std::array<double, kNumSimulatedParts>> seconds_by_iteration;
  std::vector<TrafficBytes> sent_by_iteration;
  std::vector<TrafficBytes> received_by_iteration;
};

// Where a rank stood when a failure stopped the job (ClusterSpec::failures).
struct StoppedRank {
  int rank = 0;
  // "finished" (every op done), "failed" (its own part failed), "aborted" (a transfer or op of its
  // failed: it needed a failed part) or "waiting" (blocked on a peer, or still working, when the
  // job was stopped).
  std::string state;
  double last_op_end_seconds = 0;  // when its last finished op ended
  std::string next_op;             // the first op it had not finished ("" when finished)
  int next_op_iteration = -1;      // the replayed iteration of that op
};

// What the cluster's failures did to the replay, when one happened before the replay ended.
struct ReplayFailure {
  std::vector<PartFailure> applied;  // the failures that happened, in time order
  // Whether every rank still finished every op (a part failed after the last use of it).
  bool completed = false;
  // When the job was stopped (the last failure + the detection time), or when its last rank
  // stopped, if sooner (every rank finished, failed or aborted).
  double stopped_seconds = 0;
  int iterations_completed = 0;  // replayed iterations every rank finished, from the first
  std::vector<StoppedRank> ranks;

  nlohmann::json to_json() const;
};

struct ReplayResult {
  double makespan_seconds = 0;                // when the last rank finished its last op
  std::vector<double> iteration_end_seconds;  // when the last rank finished each iteration
  std::vector<SimulatedRank> ranks;
  std::vector<SimulatedOp> trace;        // when ReplayOptions::record_trace
  nlohmann::json simgrid_config;         // the network model and settings the run used
  std::int64_t communications = 0;       // point-to-point transfers simulated
  std::optional<ReplayFailure> failure;  // when a failure stopped the job
};

// `iterations[i][r]` is rank r's plan of iteration i (every iteration has one plan per rank of the
// cluster). Plans need their sizes only: index data may have been dropped. Throws Error when a plan
// does not fit the cluster.
ReplayResult replay_plans(const ClusterSpec& cluster,
                          const std::vector<std::vector<Plan>>& iterations,
                          const ReplayOptions& options);

// Whether each rank's device keeps its features (ClusterSpec::keeps_features of its bytes).
std::vector<char> ranks_keeping_features(const ClusterSpec& cluster, const ReplayOptions& options);

// A host-to-device copy of a plan and the bytes it moves: its input's rows that are in host
// memory. All of them (the op's memory_bytes) unless the rank's device keeps its features: rows
// gathered there from its table are on the device already, and an assembly of rows
// (scatter_rows) is on the host as far as its parts are.
struct DeviceCopy {
  std::size_t op = 0;
  std::int64_t bytes = 0;
};
// Every copy_to_device op of `plan`, in plan order, from one pass over the plan.
std::vector<DeviceCopy> device_copies(const Plan& plan, bool features_on_device);

// Frees the index data (node ids, blocks) a replay does not need.
void drop_index_data(Plan& plan);

}  // namespace gnnbed
