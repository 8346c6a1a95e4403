#include "sim/simulation.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <span>

#include "sim/probed_costs.hpp"
#include "strategies/batch_schedule.hpp"
#include "strategies/caching.hpp"
#include "strategies/full_graph.hpp"
#include "strategies/inference.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan_memory.hpp"
#include "strategies/roc_partition.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

// Derives the stratified sample's draws from the sampler's seed.
constexpr std::uint64_t kEpochSampleStream = 0xe90c;

std::string gib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1LL << 30));
  return text;
}

// What would not fit, as the real system would fail: a device's tensors (and, with CPU ranks,
// its data) beyond its memory, or a machine's ranks' data beyond its host memory.
std::string memory_problem(const ClusterSpec& cluster, const std::vector<RankMemory>& memory) {
  std::vector<std::int64_t> host_bytes(static_cast<std::size_t>(cluster.machines), 0);
  for (int r = 0; r < cluster.num_ranks(); ++r) {
    const RankMemory& m = memory[static_cast<std::size_t>(r)];
    const std::int64_t resident = cluster.device_kind == DeviceKind::cpu ? m.host_bytes : 0;
    for (const auto& [peak, what] :
         {std::pair{m.device_peak_bytes, ""}, std::pair{m.evaluation_peak_bytes, " to evaluate"}}) {
      if (peak + resident > cluster.device_memory_bytes) {
        return "rank " + std::to_string(r) + " needs " + gib(peak + resident) + what + " on its " +
               (cluster.device_name.empty() ? "device" : cluster.device_name) + " of " +
               gib(cluster.device_memory_bytes);
      }
    }
    host_bytes[static_cast<std::size_t>(cluster.machine_of(r))] += m.host_bytes;
  }
  for (int machine = 0; machine < cluster.machines; ++machine) {
    const std::int64_t bytes = host_bytes[static_cast<std::size_t>(machine)];
    if (cluster.host_memory_bytes > 0 && bytes > cluster.host_memory_bytes) {
      return "machine " + std::to_string(machine) + " needs " + gib(bytes) +
             " of host memory for its ranks' data, it has " + gib(cluster.host_memory_bytes);
    }
  }
  return "";
}

nlohmann::json parts_json(const std::array<double, kNumSimulatedParts>& seconds) {
  nlohmann::json object;
  for (std::size_t p = 0; p < kNumSimulatedParts; ++p)
    object[std::string(simulated_part_name(p))] = seconds[p];
  return object;
}

// Charges one iteration's plans (every rank's, iterations in order) to their ranks' device
// memory, then drops their index data: the replay needs their sizes only.
void charge_device_memory(Plan& plan, std::vector<DeviceMemory>& devices,
                          std::vector<RankMemory>& memory) {
  RankMemory& rank = memory[static_cast<std::size_t>(plan.rank)];
  const std::int64_t peak = devices[static_cast<std::size_t>(plan.rank)].add(plan);
  rank.stash_bytes = pipeline_stash_bytes(plan);
  rank.device_peak_bytes = std::max(rank.device_peak_bytes, peak);
  drop_index_data(plan);
}

// `seconds` weighted by the epoch iterations each replayed iteration stands for.
std::array<double, kNumSimulatedParts> weighted_parts(
    const std::vector<std::array<double, kNumSimulatedParts>>& by_iteration,
    const std::vector<double>& weights) {
  std::array<double, kNumSimulatedParts> total{};
  for (std::size_t i = 0; i < weights.size(); ++i) {
    for (std::size_t p = 0; p < kNumSimulatedParts; ++p)
      total[p] += weights[i] * by_iteration[i][p];
  }
  return total;
}

TrafficBytes weighted_bytes(const std::vector<TrafficBytes>& by_iteration,
                            const std::vector<double>& weights) {
  std::array<double, kNumTrafficKinds> total{};
  for (std::size_t i = 0; i < weights.size(); ++i) {
    for (std::size_t k = 0; k < kNumTrafficKinds; ++k) {
      total[k] += weights[i] * static_cast<double>(by_iteration[i].bytes[k]);
    }
  }
  TrafficBytes bytes;
  for (std::size_t k = 0; k < kNumTrafficKinds; ++k) bytes.bytes[k] = std::llround(total[k]);
  return bytes;
}

// Every rank's evaluation plan (strategies/inference.hpp), each rank's announcements delivered as
// the real run's exchange delivers them. The plans join a replay after the training iterations
// of pipeline depth `depth`: they run in its last stage, after the pipeline has drained, as the
// real run evaluates between epochs. Each rank's `memory` gets its plan's peak on the device.
std::vector<Plan> plan_evaluation(const StrategyContext& context, const Dataset& dataset, int depth,
                                  std::vector<RankMemory>& memory) {
  const auto degrees =
      context.model.gcn_normalised()
          ? std::make_shared<const std::vector<std::int32_t>>(gcn_degrees(dataset.graph))
          : nullptr;
  std::vector<FeaturePlacement> placements;
  for (int q = 0; q < context.num_ranks; ++q)
    placements.push_back(context.strategy->feature_placement(context, q));
  // Every rank's nodes and its validation then test nodes, in one pass over each.
  const auto num_ranks = static_cast<std::size_t>(context.num_ranks);
  std::vector<std::vector<NodeId>> owned(num_ranks);
  std::vector<std::vector<NodeId>> targets(num_ranks);
  for (NodeId v = 0; v < dataset.num_nodes(); ++v)
    owned[static_cast<std::size_t>(context.partition.owner(v))].push_back(v);
  for (const auto* split : {&dataset.split.val, &dataset.split.test}) {
    for (const NodeId v : *split)
      targets[static_cast<std::size_t>(context.partition.owner(v))].push_back(v);
  }
  std::vector<std::unique_ptr<EvaluationPlanner>> planners;
  for (std::size_t r = 0; r < num_ranks; ++r) {
    planners.push_back(std::make_unique<EvaluationPlanner>(
        EvaluationShare{static_cast<int>(r), context.model, context.partition, placements,
                        &dataset.graph, std::move(owned[r]), std::move(targets[r]), degrees}));
  }
  std::vector<Plan> plans;
  for (int r = 0; r < context.num_ranks; ++r) {
    Announcement received(static_cast<std::size_t>(context.num_ranks));
    for (int q = 0; q < context.num_ranks; ++q) {
      if (q != r)
        received.set(static_cast<std::size_t>(q),
                     planners[static_cast<std::size_t>(q)]->announcement().shared(
                         static_cast<std::size_t>(r)));
    }
    Plan plan = planners[static_cast<std::size_t>(r)]->plan(received);
    plan.pipeline_depth = depth;
    for (Op& op : plan.ops) op.stage = depth;
    memory[static_cast<std::size_t>(r)].evaluation_peak_bytes = plan_peak_bytes(plan);
    drop_index_data(plan);
    plans.push_back(std::move(plan));
  }
  return plans;
}

// Replays the planned iterations and fills the result's times, bytes and busy times, each
// replayed iteration weighted by the epoch iterations it stands for (`sample`). An iteration
// beyond the sample's is the evaluation (plan_evaluation).
void replay_into(SimulationResult& result, const ClusterSpec& cluster,
                 const std::vector<std::vector<Plan>>& iterations, const EpochSample& sample,
                 const SimulationOptions& options, std::vector<std::int64_t> feature_bytes = {}) {
  const Stopwatch replaying;
  ReplayOptions replay_options;
  replay_options.feature_bytes = std::move(feature_bytes);
  replay_options.record_trace = options.record_trace;
  replay_options.use_measured_durations = options.use_measured_durations;
  replay_options.all_to_all_block_steps = options.all_to_all_block_steps;
  ReplayResult replay = replay_plans(cluster, iterations, replay_options);
  result.replay_seconds = replaying.seconds();
  result.communications = replay.communications;
  result.simgrid_config = std::move(replay.simgrid_config);
  if (replay.failure) result.failure = replay.failure->to_json();
  if (result.stopped_by_failure()) return;
  const std::size_t trained = sample.iterations.size();
  const std::span<const double> ends(replay.iteration_end_seconds.data(), trained);
  const double training_end = *std::max_element(ends.begin(), ends.end());
  if (iterations.size() > trained) {
    result.evaluation_seconds = replay.makespan_seconds - training_end;
    for (const SimulatedRank& rank : replay.ranks) {
      result.evaluation_sent_per_rank.push_back(rank.sent_by_iteration[trained]);
      result.evaluation_received_per_rank.push_back(rank.received_by_iteration[trained]);
    }
  }
  result.simulated_seconds = training_end;
  result.epoch_estimate = estimate_epoch(sample, iteration_durations(ends, training_end));
  result.epoch_seconds = result.epoch_estimate.seconds;
  result.sampled_iterations = sample.iterations;
  const auto num_ranks = static_cast<double>(replay.ranks.size());
  for (const SimulatedRank& rank : replay.ranks) {
    const auto parts = weighted_parts(rank.seconds_by_iteration, sample.weights);
    double busy = 0;
    for (std::size_t p = 0; p < kNumSimulatedParts; ++p) {
      result.mean_seconds[p] += parts[p] / num_ranks;
      result.max_seconds[p] = std::max(result.max_seconds[p], parts[p]);
      const auto part = static_cast<TimeCategory>(p);
      if (p < kNumTimeCategories && part != TimeCategory::sampling) busy += parts[p];
    }
    result.busy_seconds.push_back(busy);
    result.sent_per_rank.push_back(weighted_bytes(rank.sent_by_iteration, sample.weights));
    result.received_per_rank.push_back(weighted_bytes(rank.received_by_iteration, sample.weights));
  }
  result.trace = std::move(replay.trace);
}

// The experiment on `cluster`'s machines: distribution.ranks_per_machine is the cluster's (0 asks
// for it; another number contradicts the cluster).
ExperimentConfig on_cluster_machines(ExperimentConfig config, const ClusterSpec& cluster) {
  int& ranks_per_machine = config.distribution.ranks_per_machine;
  require(ranks_per_machine == 0 || ranks_per_machine == cluster.ranks_per_machine,
          "distribution.ranks_per_machine",
          std::to_string(ranks_per_machine) + ", but cluster " + cluster.name + " has " +
              std::to_string(cluster.ranks_per_machine) + " ranks per machine (0 takes them)");
  ranks_per_machine = cluster.ranks_per_machine;
  return config;
}

// Plans the epochs before `first_epoch` as the run goes through them, for a strategy whose plans
// depend on those before (Strategy::carries_state): `carried_states` ends as every rank's state
// after them. The plans themselves are dropped.
void plan_earlier_epochs(const StrategyContext& context, const Graph& structure,
                         const BatchSchedule& schedule, int first_epoch,
                         std::vector<std::vector<std::int32_t>>& carried_states) {
  for (int epoch = 1; epoch < first_epoch; ++epoch) {
    for (int iteration = 0; iteration < schedule.iterations_per_epoch(); ++iteration) {
      plan_iteration(*context.strategy, context, structure, schedule,
                     sampler_seed(context.training), epoch, iteration, {}, &carried_states);
    }
  }
}

}  // namespace

SimulationResult simulate_experiment(const ExperimentConfig& requested, const Dataset& dataset,
                                     const ClusterSpec& cluster, const SimulationOptions& options) {
  SimulationResult result;
  const ExperimentConfig config =
      with_probed_costs(on_cluster_machines(requested, cluster), cluster, result.probed_costs);
  const int num_ranks = cluster.num_ranks();
  const Stopwatch planning;
  const StrategyContext context = make_strategy_context(config, dataset, num_ranks);
  const Strategy& strategy = *context.strategy;
  const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                               sampler_seed(config.training));
  result.iterations_per_epoch = schedule.iterations_per_epoch();
  // Strategies whose plans change from epoch to epoch are replayed over a cycle of epochs.
  const EpochSample sample = over_epochs(
      with_pipeline_warmup(
          design_epoch_sample(result.iterations_per_epoch, options.iterations,
                              hash_mix(sampler_seed(config.training), kEpochSampleStream),
                              strategy.pipeline_depth()),
          strategy.pipeline_depth()),
      strategy.epoch_cycle());
  result.iterations_simulated = static_cast<int>(sample.iterations.size());
  // The first epoch run_experiment measures (after its warm-up epochs; epochs count from 1).
  const int epoch = config.training.warmup_epochs + 1;
  result.memory.resize(static_cast<std::size_t>(num_ranks));
  // Every rank's share of the dataset: its structure and the features the strategy places on it,
  // with its copies of other ranks' (caching).
  const PartitionSizes sizes = partition_sizes(dataset.graph, context.partition);
  const std::vector<std::int64_t> resident =
      resident_bytes(strategy, context, dataset.graph, sizes);
  for (std::size_t r = 0; r < resident.size(); ++r) result.memory[r].host_bytes = resident[r];
  result.structure_group_size = context.structure_replicas.group_size(num_ranks);
  result.feature_group_size = context.feature_replicas.group_size(num_ranks);
  std::vector<std::vector<Plan>> iterations;
  std::vector<DeviceMemory> devices(static_cast<std::size_t>(num_ranks));
  const std::size_t per_epoch = sample.iterations.size() / static_cast<std::size_t>(sample.epochs);
  std::vector<std::vector<std::int32_t>> carried_states;
  auto* carried = strategy.carries_state() ? &carried_states : nullptr;
  if (carried) plan_earlier_epochs(context, dataset.graph, schedule, epoch, carried_states);
  for (std::size_t k = 0; k < sample.iterations.size(); ++k) {
    iterations.push_back(plan_iteration(
        strategy, context, dataset.graph, schedule, sampler_seed(config.training),
        epoch + static_cast<int>(k / per_epoch), sample.iterations[k],
        [&](Plan& plan) { charge_device_memory(plan, devices, result.memory); }, carried));
    if (options.progress) options.progress(static_cast<int>(k) + 1, result.iterations_simulated);
  }
  if (options.evaluation) {
    iterations.push_back(
        plan_evaluation(context, dataset, strategy.pipeline_depth(), result.memory));
  }
  result.planning_seconds = planning.seconds();
  result.out_of_memory_reason = memory_problem(cluster, result.memory);
  result.out_of_memory = !result.out_of_memory_reason.empty();
  if (result.out_of_memory) return result;

  replay_into(result, cluster, iterations, sample, options,
              held_feature_bytes(strategy, context, sizes));
  if (strategy.full_graph() && !result.stopped_by_failure()) {
    const std::vector<PartitionShape> shapes = partition_shapes(dataset.graph, context.partition);
    std::vector<PartitionCostSample> samples;
    for (int r = 0; r < num_ranks; ++r) {
      samples.push_back({"simulate " + dataset.name + " on " + cluster.name + " " +
                             config.distribution.partitioner + " rank " + std::to_string(r) + "/" +
                             std::to_string(num_ranks),
                         shapes[static_cast<std::size_t>(r)],
                         result.busy_seconds[static_cast<std::size_t>(r)]});
    }
    result.partition_costs = recorded_partition_costs(config.distribution, samples);
  }
  return result;
}

SimulationResult simulate_recorded_plans(std::vector<Plan> plans, const ClusterSpec& cluster,
                                         int iterations_per_epoch,
                                         const SimulationOptions& options) {
  const int num_ranks = cluster.num_ranks();
  std::map<std::pair<int, int>, std::vector<Plan>> by_iteration;  // (epoch, iteration)
  for (Plan& plan : plans) {
    if (plan.num_ranks != num_ranks) {
      throw ConfigError("replay-plans", "the plan of rank " + std::to_string(plan.rank) +
                                            " was made for " + std::to_string(plan.num_ranks) +
                                            " ranks, the cluster has " + std::to_string(num_ranks));
    }
    by_iteration[{plan.epoch, plan.iteration}].push_back(std::move(plan));
  }
  if (by_iteration.empty()) throw ConfigError("replay-plans", "holds no plans");
  SimulationResult result;
  result.memory.resize(static_cast<std::size_t>(num_ranks));
  std::vector<DeviceMemory> devices(static_cast<std::size_t>(num_ranks));
  std::vector<std::vector<Plan>> iterations;
  for (auto& [when, group] : by_iteration) {
    std::sort(group.begin(), group.end(),
              [](const Plan& a, const Plan& b) { return a.rank < b.rank; });
    for (int r = 0; r < num_ranks; ++r) {
      if (static_cast<int>(group.size()) <= r || group[static_cast<std::size_t>(r)].rank != r) {
        throw ConfigError("replay-plans", "epoch " + std::to_string(when.first) + " iteration " +
                                              std::to_string(when.second) +
                                              " has no plan of rank " + std::to_string(r) +
                                              " (or two of another)");
      }
    }
    if (static_cast<int>(group.size()) != num_ranks) {
      throw ConfigError("replay-plans", "epoch " + std::to_string(when.first) + " iteration " +
                                            std::to_string(when.second) + " has " +
                                            std::to_string(group.size()) + " plans for " +
                                            std::to_string(num_ranks) + " ranks");
    }
    for (Plan& plan : group) {
      plan.validate();
      charge_device_memory(plan, devices, result.memory);
    }
    iterations.push_back(std::move(group));
  }
  result.iterations_simulated = static_cast<int>(iterations.size());
  result.iterations_per_epoch =
      iterations_per_epoch > 0 ? iterations_per_epoch : result.iterations_simulated;
  result.out_of_memory_reason = memory_problem(cluster, result.memory);
  result.out_of_memory = !result.out_of_memory_reason.empty();
  if (result.out_of_memory) return result;
  // A recorded run is a contiguous stretch, not a stratified sample: every iteration stands for
  // an equal share of the epoch, and there is no interval unless the whole epoch was recorded.
  EpochSample sample;
  sample.iterations_per_epoch = result.iterations_per_epoch;
  for (int i = 0; i < result.iterations_simulated; ++i) {
    sample.iterations.push_back(i);
    sample.weights.push_back(static_cast<double>(result.iterations_per_epoch) /
                             static_cast<double>(result.iterations_simulated));
    sample.strata.push_back(-1);
  }
  replay_into(result, cluster, iterations, sample, options);
  return result;
}

nlohmann::json SimulationResult::to_json() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < memory.size(); ++r) {
    nlohmann::json rank = {{"rank", r},
                           {"device_peak_bytes", memory[r].device_peak_bytes},
                           {"evaluation_device_peak_bytes", memory[r].evaluation_peak_bytes},
                           {"stash_bytes", memory[r].stash_bytes},
                           {"host_bytes", memory[r].host_bytes}};
    if (r < sent_per_rank.size()) {
      rank["bytes_sent_per_epoch"] = sent_per_rank[r].to_json();
      rank["bytes_received_per_epoch"] = received_per_rank[r].to_json();
      rank["busy_seconds_per_epoch"] = busy_seconds[r];
    }
    ranks.push_back(std::move(rank));
  }
  nlohmann::json object = {{"out_of_memory", out_of_memory},
                           {"iterations_per_epoch", iterations_per_epoch},
                           {"iterations_simulated", iterations_simulated},
                           {"planning_seconds", planning_seconds},
                           {"replay_seconds", replay_seconds},
                           {"caching",
                            {{"structure_group_size", structure_group_size},
                             {"feature_group_size", feature_group_size}}},
                           {"ranks", std::move(ranks)}};
  if (out_of_memory) {
    object["out_of_memory_reason"] = out_of_memory_reason;
    object["epoch_seconds"] = nullptr;
    return object;
  }
  if (!failure.is_null()) object["failure"] = failure;
  if (stopped_by_failure()) {
    object["epoch_seconds"] = nullptr;
    object["communications"] = communications;
    object["simgrid_config"] = simgrid_config;
    return object;
  }
  object["epoch_seconds"] = epoch_seconds;
  if (!probed_costs.empty()) object["probed_costs"] = probed_costs;
  object["epoch_estimate"] = epoch_estimate.to_json();
  object["sampled_iterations"] = sampled_iterations;
  object["simulated_seconds"] = simulated_seconds;
  object["breakdown_mean_seconds"] = parts_json(mean_seconds);
  object["breakdown_max_seconds"] = parts_json(max_seconds);
  object["communications"] = communications;
  object["simgrid_config"] = simgrid_config;
  if (!partition_costs.is_null()) object["partition_costs"] = partition_costs;
  if (evaluation_seconds >= 0) {
    nlohmann::json sent = nlohmann::json::array();
    nlohmann::json received = nlohmann::json::array();
    for (const TrafficBytes& bytes : evaluation_sent_per_rank) sent.push_back(bytes.to_json());
    for (const TrafficBytes& bytes : evaluation_received_per_rank)
      received.push_back(bytes.to_json());
    object["evaluation"] = {{"seconds", evaluation_seconds},
                            {"bytes_sent_per_rank", std::move(sent)},
                            {"bytes_received_per_rank", std::move(received)}};
  }
  return object;
}

nlohmann::json chrome_trace(const std::vector<SimulatedOp>& ops) {
  nlohmann::json events = nlohmann::json::array();
  int ranks = 0;
  for (const SimulatedOp& op : ops) ranks = std::max(ranks, op.rank + 1);
  for (int r = 0; r < ranks; ++r) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"args", {{"name", "rank " + std::to_string(r) + " (simulated)"}}}});
  }
  for (const SimulatedOp& op : ops) {
    events.push_back(
        {{"name", op.label},
         {"cat", to_string(category_of(op.kind))},
         {"ph", "X"},
         {"pid", op.rank},
         {"tid", to_string(op.stream)},
         {"ts", 1e6 * op.start_seconds},
         {"dur", 1e6 * op.seconds},
         {"args", {{"iteration", op.iteration}, {"waiting_us", 1e6 * op.waiting_seconds}}}});
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace gnnbed
