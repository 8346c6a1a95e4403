// simulate --strategy pbg (simulate_pbg.hpp): plans one epoch with the strategy, replays it and
// reports what run_experiment --strategy pbg measures: epoch time, the trainers' time training
// and not (waiting for grants and partitions), bytes by kind per rank.
#include "sim/tools/simulate_pbg.hpp"

#include <cstdio>
#include <memory>
#include <string_view>

#include "sim/cluster.hpp"
#include "sim/replay.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/command_line.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;

namespace gnnbed {
namespace {

struct PbgSimulation {
  std::string cluster_source;
  std::vector<std::string> cluster_settings;
  EmbeddingExperimentConfig config;
  std::string output;
  bool quiet = false;
};

std::optional<PbgSimulation> parse(int argc, char** argv) {
  po::options_description options("simulate --strategy pbg [options]");
  options.add_options()("help,h", "show this help")("strategy", po::value<std::string>(), "pbg")(
      "cluster", po::value<std::string>()->default_value("emulated-cluster"),
      "cluster preset (sim/presets/<name>.json) or JSON file: one trainer per rank")(
      "cluster-set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field: FIELD=VALUE (nic.bandwidth_gbps=25, machines=8)")(
      "output,o", po::value<std::string>()->default_value("results/simulate-pbg.json"),
      "result file (JSON)")("quiet,q", "no progress");
  add_config_options(options, embedding_config_options());
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return std::nullopt;
  const po::variables_map& vm = command_line->values;
  PbgSimulation simulation;
  simulation.cluster_source = vm["cluster"].as<std::string>();
  if (vm.count("cluster-set") != 0)
    simulation.cluster_settings = vm["cluster-set"].as<std::vector<std::string>>();
  const ConfigSources sources = config_sources(command_line->parsed, embedding_config_options());
  simulation.config =
      embedding_experiment_from_json(resolve_config_document(sources.file, sources.assignments));
  simulation.output = vm["output"].as<std::string>();
  simulation.quiet = vm.count("quiet") != 0;
  check_output_path(simulation.output, "--output");
  return simulation;
}

// What the simulator needs of the graph: its partitioning and bucket sizes. A planted graph is
// counted as it is generated, never held, so that graphs of PBG's published sizes fit.
struct BucketedGraph {
  std::unique_ptr<EntityPartitioning> partitioning;
  std::vector<std::int64_t> counts;
  int num_relations = 1;
  nlohmann::json summary;
};

BucketedGraph bucketed_graph(const EmbeddingExperimentConfig& config) {
  const LinkPredictionSource& source = config.workload;
  const int partitions = config.training.partitions;
  BucketedGraph graph;
  if (source.source == "planted") {
    graph.partitioning = std::make_unique<EntityPartitioning>(source.entities, partitions,
                                                              partition_seed(config.training));
    graph.counts = planted_bucket_counts(source, *graph.partitioning);
    std::int64_t edges = 0;
    for (const std::int64_t count : graph.counts) edges += count;
    graph.summary = {{"name", "planted"}, {"entities", source.entities}, {"train_edges", edges}};
    return graph;
  }
  const LinkPredictionData data = load_link_prediction(source);
  graph.partitioning = std::make_unique<EntityPartitioning>(data.num_entities, partitions,
                                                            partition_seed(config.training));
  graph.counts = bucket_counts(data.train, *graph.partitioning);
  graph.num_relations = data.num_relations();
  graph.summary = data.summary();
  return graph;
}

nlohmann::json rank_json(int rank, const SimulatedRank& simulated, const Plan& plan) {
  nlohmann::json seconds = nlohmann::json::object();
  for (std::size_t p = 0; p < kNumSimulatedParts; ++p)
    seconds[std::string(simulated_part_name(p))] = simulated.seconds[p];
  return {{"rank", rank},
          {"seconds", seconds},
          {"bytes_sent", simulated.sent.to_json()},
          {"bytes_received", simulated.received.to_json()},
          {"planned_bytes_sent", plan.bytes_sent().to_json()},
          {"planned_bytes_received", plan.bytes_received().to_json()}};
}

// The result document of the replay of `plans`.
nlohmann::json result_json(const PbgSimulation& simulation, const ClusterSpec& cluster,
                           const std::vector<Plan>& plans, const ReplayResult& replay) {
  nlohmann::json ranks = nlohmann::json::array();
  bool as_planned = true;
  double training = 0;
  constexpr auto kCompute = static_cast<std::size_t>(TimeCategory::compute);
  for (std::size_t r = 0; r < plans.size(); ++r) {
    const SimulatedRank& rank = replay.ranks[r];
    ranks.push_back(rank_json(static_cast<int>(r), rank, plans[r]));
    as_planned = as_planned && rank.sent == plans[r].bytes_sent() &&
                 rank.received == plans[r].bytes_received();
    training += rank.seconds[kCompute];
  }
  const double epoch = replay.makespan_seconds;
  const double mean_training = training / static_cast<double>(plans.size());
  return {{"strategy", kPbgStrategyName},
          {"cluster", cluster.name},
          {"num_ranks", plans.size()},
          {"config", to_json(simulation.config)},
          {"epoch_seconds", epoch},
          {"train_seconds_mean", mean_training},
          // The share of a trainer's epoch spent not training: waiting for grants and for
          // partitions to arrive from their servers (PBG's swaps).
          {"not_training_share", epoch > 0 ? 1.0 - mean_training / epoch : 0.0},
          {"bytes_match_plans", as_planned},
          {"communications", replay.communications},
          {"ranks", ranks}};
}

}  // namespace

int simulate_pbg(int argc, char** argv) {
  const std::optional<PbgSimulation> simulation = parse(argc, argv);
  if (!simulation) return 0;
  const ClusterSpec cluster =
      load_cluster(simulation->cluster_source, simulation->cluster_settings);
  PbgStrategy::check(simulation->config, cluster.num_ranks());
  const Stopwatch clock;
  const BucketedGraph graph = bucketed_graph(simulation->config);
  const PbgStrategy strategy(*graph.partitioning, graph.counts, graph.num_relations,
                             simulation->config, cluster.num_ranks());
  const std::vector<Plan> plans = strategy.epoch_plans(1);
  const std::string name = graph.summary.at("name").get<std::string>();
  if (!simulation->quiet) {
    std::fprintf(stderr, "simulate: %s, %s, planned in %.1f s\n", name.c_str(),
                 graph.summary.dump().c_str(), clock.seconds());
  }
  const ReplayResult replay = replay_plans(cluster, {plans}, ReplayOptions{});
  nlohmann::json result = result_json(*simulation, cluster, plans, replay);
  result["dataset"] = graph.summary;
  result["provenance"] = provenance_json(argc, argv);
  write_text_file_atomically(simulation->output, result.dump(2) + "\n");
  std::printf(
      "pbg on %s, %s, %d ranks, %d partitions: epoch %.3f s simulated, trainers not "
      "training %.1f %% of it; bytes by kind %s the plans'\n",
      name.c_str(), cluster.name.c_str(), cluster.num_ranks(),
      simulation->config.training.partitions, result["epoch_seconds"].get<double>(),
      100 * result["not_training_share"].get<double>(),
      result["bytes_match_plans"].get<bool>() ? "equal" : "DIFFER FROM");
  std::printf("  result written to %s\n", simulation->output.c_str());
  return 0;
}

}  // namespace gnnbed
