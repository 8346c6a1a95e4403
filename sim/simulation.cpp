#include "sim/simulation.hpp"

#include <algorithm>
#include <deque>

#include "strategies/batch_schedule.hpp"
#include "strategies/caching.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/roc_partition.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

// Value, gradient and Adam's two moments per parameter element.
constexpr std::int64_t kParameterCopies = 4;

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
    const std::int64_t device_bytes =
        m.device_peak_bytes + (cluster.device_kind == DeviceKind::cpu ? m.host_bytes : 0);
    if (device_bytes > cluster.device_memory_bytes) {
      return "rank " + std::to_string(r) + " needs " + gib(device_bytes) + " on its " +
             (cluster.device_name.empty() ? "device" : cluster.device_name) + " of " +
             gib(cluster.device_memory_bytes);
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

// A plan's parameters with their gradients and Adam's two moments.
std::int64_t parameter_state_bytes(const Plan& plan) {
  std::int64_t bytes = 0;
  for (const ParameterSpec& p : plan.parameters)
    bytes += kParameterCopies * kFloatBytes * p.local_elements();
  return bytes;
}

}  // namespace

std::int64_t plan_peak_bytes(const Plan& plan) {
  const std::size_t num_tensors = plan.tensors.size();
  std::vector<int> first_write(num_tensors, -1);
  std::vector<int> last_use(num_tensors, -1);
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    const Op& op = plan.ops[j];
    for (const auto* ids : {&op.inputs, &op.outputs}) {
      for (const int t : *ids) {
        if (t < 0) continue;
        const auto slot = static_cast<std::size_t>(t);
        last_use[slot] = static_cast<int>(j);
        if (ids == &op.outputs && first_write[slot] < 0) first_write[slot] = static_cast<int>(j);
      }
    }
  }
  std::int64_t live = parameter_state_bytes(plan);
  std::vector<std::vector<std::size_t>> freed_after(plan.ops.size());
  std::vector<std::vector<std::size_t>> allocated_at(plan.ops.size());
  for (std::size_t t = 0; t < num_tensors; ++t) {
    if (last_use[t] < 0) continue;
    if (first_write[t] < 0) {
      live += plan.tensors[t].bytes();  // carried by the plan: there from the start
    } else {
      allocated_at[static_cast<std::size_t>(first_write[t])].push_back(t);
    }
    freed_after[static_cast<std::size_t>(last_use[t])].push_back(t);
  }
  std::int64_t peak = live;
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    for (const std::size_t t : allocated_at[j]) live += plan.tensors[t].bytes();
    peak = std::max(peak, live);
    for (const std::size_t t : freed_after[j]) live -= plan.tensors[t].bytes();
  }
  return peak;
}

std::int64_t pipeline_stash_bytes(const Plan& plan) {
  if (plan.pipeline_depth == 0) return 0;
  std::int64_t values = 0;
  for (const ParameterSpec& p : plan.parameters) values += kFloatBytes * p.local_elements();
  return (2 * (plan.pipeline_depth + 1) + 1) * values;
}

SimulationResult simulate_experiment(const ExperimentConfig& config, const Dataset& dataset,
                                     const ClusterSpec& cluster, const SimulationOptions& options) {
  SimulationResult result;
  const int num_ranks = cluster.num_ranks();
  const Stopwatch planning;
  const StrategyContext context = make_strategy_context(config, dataset, num_ranks);
  const std::unique_ptr<Strategy> strategy = make_strategy(config.distribution.strategy);
  const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                               sampler_seed(config.training));
  result.iterations_per_epoch = schedule.iterations_per_epoch();
  result.iterations_simulated = options.iterations > 0
                                    ? std::min(options.iterations, result.iterations_per_epoch)
                                    : result.iterations_per_epoch;
  // The first epoch run_experiment measures (after its warm-up epochs; epochs count from 1).
  const int epoch = config.training.warmup_epochs + 1;
  result.memory.resize(static_cast<std::size_t>(num_ranks));
  // Every rank's share of the dataset: its structure and the features the strategy places on it,
  // with its copies of other ranks' (caching).
  const std::vector<std::int64_t> resident = resident_bytes(
      *strategy, context, dataset.graph, partition_sizes(dataset.graph, context.partition));
  for (std::size_t r = 0; r < resident.size(); ++r) result.memory[r].host_bytes = resident[r];
  result.structure_group_size = context.structure_replicas.group_size(num_ranks);
  result.feature_group_size = context.feature_replicas.group_size(num_ranks);
  std::vector<std::vector<Plan>> iterations;
  // Pipelining: the tensors of the mini-batches in flight are alive together (an upper bound:
  // the sum of their plans' peaks), per rank the last depth + 1 plans' peaks without parameters.
  std::vector<std::deque<std::int64_t>> in_flight(static_cast<std::size_t>(num_ranks));
  for (int i = 0; i < result.iterations_simulated; ++i) {
    std::vector<Plan> plans = plan_iteration(*strategy, context, dataset.graph, schedule,
                                             sampler_seed(config.training), epoch, i);
    for (Plan& plan : plans) {
      RankMemory& memory = result.memory[static_cast<std::size_t>(plan.rank)];
      std::int64_t peak = plan_peak_bytes(plan);
      if (plan.pipeline_depth > 0) {
        const std::int64_t parameters = parameter_state_bytes(plan);
        std::deque<std::int64_t>& window = in_flight[static_cast<std::size_t>(plan.rank)];
        window.push_back(peak - parameters);
        if (static_cast<int>(window.size()) > plan.pipeline_depth + 1) window.pop_front();
        memory.stash_bytes = pipeline_stash_bytes(plan);
        peak = parameters + memory.stash_bytes;
        for (const std::int64_t tensors : window) peak += tensors;
      }
      memory.device_peak_bytes = std::max(memory.device_peak_bytes, peak);
      drop_index_data(plan);
    }
    iterations.push_back(std::move(plans));
    if (options.progress) options.progress(i + 1, result.iterations_simulated);
  }
  result.planning_seconds = planning.seconds();
  result.out_of_memory_reason = memory_problem(cluster, result.memory);
  result.out_of_memory = !result.out_of_memory_reason.empty();
  if (result.out_of_memory) return result;

  const Stopwatch replaying;
  ReplayOptions replay_options;
  replay_options.record_trace = options.record_trace;
  ReplayResult replay = replay_plans(cluster, iterations, replay_options);
  result.replay_seconds = replaying.seconds();
  result.simulated_seconds = replay.makespan_seconds;
  const double scale = static_cast<double>(result.iterations_per_epoch) /
                       static_cast<double>(result.iterations_simulated);
  result.epoch_seconds = replay.makespan_seconds * scale;
  for (const SimulatedRank& rank : replay.ranks) {
    double busy = 0;
    for (std::size_t p = 0; p < kNumSimulatedParts; ++p) {
      const double seconds = rank.seconds[p] * scale;
      result.mean_seconds[p] += seconds / num_ranks;
      result.max_seconds[p] = std::max(result.max_seconds[p], seconds);
      const auto part = static_cast<TimeCategory>(p);
      if (p < kNumTimeCategories && part != TimeCategory::sampling) busy += seconds;
    }
    result.busy_seconds.push_back(busy);
    TrafficBytes sent;
    TrafficBytes received;
    for (std::size_t k = 0; k < kNumTrafficKinds; ++k) {
      sent.bytes[k] = static_cast<std::int64_t>(static_cast<double>(rank.sent.bytes[k]) * scale);
      received.bytes[k] =
          static_cast<std::int64_t>(static_cast<double>(rank.received.bytes[k]) * scale);
    }
    result.sent_per_rank.push_back(sent);
    result.received_per_rank.push_back(received);
  }
  if (strategy->full_graph()) {
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
  result.communications = replay.communications;
  result.simgrid_config = std::move(replay.simgrid_config);
  result.trace = std::move(replay.trace);
  return result;
}

nlohmann::json SimulationResult::to_json() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < memory.size(); ++r) {
    nlohmann::json rank = {{"rank", r},
                           {"device_peak_bytes", memory[r].device_peak_bytes},
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
  object["epoch_seconds"] = epoch_seconds;
  object["simulated_seconds"] = simulated_seconds;
  object["breakdown_mean_seconds"] = parts_json(mean_seconds);
  object["breakdown_max_seconds"] = parts_json(max_seconds);
  object["communications"] = communications;
  object["simgrid_config"] = simgrid_config;
  if (!partition_costs.is_null()) object["partition_costs"] = partition_costs;
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
