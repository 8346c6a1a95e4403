// workload: inspect, convert and partition workloads.
//   workload info      [workload options]                  counts, degrees, load time
//   workload convert   [workload options] --output F.bin   write gnnbed's binary format
//   workload convert   [workload options] --output DIR --shards N [--partitioner hash|metis]
//                      [--structure replicated|partitioned] [--feature-layout rows|columns]
//                                                          one file per rank, and a manifest
//   workload partition [workload options] --parts N [--partitioner hash|metis]
#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <string_view>
#include <vector>

#include "workloads/binary_format.hpp"
#include "workloads/common/command_line.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/partition.hpp"
#include "workloads/shard_format.hpp"
#include "workloads/workload_config.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

struct DegreeStats {
  std::int64_t max_in_degree = 0;
  double mean_in_degree = 0;
  std::int64_t isolated_nodes = 0;
  // Of the in-edges of evenly spaced nodes, the fraction that repeat a source in their list
  // (a multigraph's parallel edges); sampled, so that it costs the same on a 10 B-edge graph.
  double repeated_source_fraction = 0;
  std::int64_t repeated_source_sample_nodes = 0;
};

constexpr std::int64_t kRepeatSampleNodes = 10000;

DegreeStats degree_stats(const Graph& graph) {
  DegreeStats stats;
  for (std::int64_t v = 0; v < graph.num_nodes(); ++v) {
    const std::int64_t degree = graph.in_degree(static_cast<NodeId>(v));
    stats.max_in_degree = std::max(stats.max_in_degree, degree);
    stats.isolated_nodes += degree == 0 ? 1 : 0;
  }
  const std::int64_t step = std::max<std::int64_t>(1, graph.num_nodes() / kRepeatSampleNodes);
  std::int64_t entries = 0;
  std::int64_t repeats = 0;
  std::vector<NodeId> list;
  for (std::int64_t v = 0; v < graph.num_nodes(); v += step) {
    list.resize(static_cast<std::size_t>(graph.in_degree(static_cast<NodeId>(v))));
    graph.copy_in_neighbors(static_cast<NodeId>(v), list.data());
    std::sort(list.begin(), list.end());
    entries += static_cast<std::int64_t>(list.size());
    repeats += list.end() - std::unique(list.begin(), list.end());
    ++stats.repeated_source_sample_nodes;
  }
  stats.repeated_source_fraction =
      entries > 0 ? static_cast<double>(repeats) / static_cast<double>(entries) : 0.0;
  stats.mean_in_degree = graph.num_nodes() > 0 ? static_cast<double>(graph.num_edges()) /
                                                     static_cast<double>(graph.num_nodes())
                                               : 0.0;
  return stats;
}

po::options_description workload_tool_options() {
  po::options_description options(
      "workload COMMAND [options]\n"
      "  info       print counts, degree statistics and load time\n"
      "  convert    write the workload in gnnbed's binary format (--output), or with --shards N\n"
      "             a directory of one shard per rank for run_experiment\n"
      "  partition  partition the graph and report edge cut, balance, replication, time\n"
      "options");
  options.add_options()("help,h", "show this help")("command", po::value<std::string>(),
                                                    "info, convert or partition")(
      "output,o", po::value<std::string>(), "convert: binary file (or shard directory) to write")(
      "shards", po::value<int>(), "convert: one shard per rank for this many ranks")(
      "structure", po::value<std::string>()->default_value("replicated"),
      "convert --shards: replicated (every shard holds the whole graph) or partitioned (its "
      "nodes' in-edges)")("feature-layout", po::value<std::string>()->default_value("rows"),
                          "convert --shards: rows (dgl-pull: its nodes' feature rows) or columns "
                          "(p3: a slice of every node's feature columns)")(
      "parts", po::value<int>()->default_value(4), "partition: number of parts")(
      "partitioner", po::value<std::string>()->default_value("hash"),
      "partition, convert --shards: hash or metis")("partition-seed",
                                                    po::value<std::uint64_t>()->default_value(1),
                                                    "partition, convert --shards: seed");
  add_config_options(options, workload_options());
  return options;
}

// The command, checked with its output before the workload loads: a binary file, or the folder
// the shards go into.
std::string checked_command(const po::variables_map& vm) {
  if (vm.count("command") == 0) throw ConfigError("command", "missing: info, convert or partition");
  const std::string command = vm["command"].as<std::string>();
  require_one_of("command", command, {"info", "convert", "partition"});
  if (command == "convert" && vm.count("output") == 0) {
    throw ConfigError("output", "convert needs --output FILE");
  }
  if (command == "convert") {
    const std::string output = vm["output"].as<std::string>();
    if (vm.count("shards") == 0) {
      check_output_path(output, "output");
    } else {
      check_output_folder(output, "output");
    }
  }
  return command;
}

// The other sections of an experiment file. This tool reads only the workload's, but takes the
// experiment files the other programs take, and refuses a misspelt section as they do.
constexpr std::array<std::string_view, 3> kOtherExperimentSections = {"model", "training",
                                                                      "distribution"};

// The workload the --config file, the --set assignments and the named workload options describe,
// resolved as the programs that run experiments resolve their workload section.
WorkloadConfig workload_from_options(const po::parsed_options& parsed) {
  const ConfigSources sources = config_sources(parsed, workload_options());
  const nlohmann::json document = resolve_config_document(sources.file, sources.assignments);
  JsonFieldReader reader(document, "");
  WorkloadConfig config;
  if (const auto* workload = reader.child("workload")) {
    config = workload_config_from_json(*workload, config, "workload");
  }
  for (const std::string_view section : kOtherExperimentSections) reader.child(section);
  reader.finish();
  return config;
}

// The partitioner and structure are refused before the workload loads, which can take minutes.
void check_layout_options(const po::variables_map& vm) {
  require_one_of("partitioner", vm["partitioner"].as<std::string>(), partitioner_names());
  require_one_of("structure", vm["structure"].as<std::string>(), {"replicated", "partitioned"});
}

void add_degree_stats(const Graph& graph, nlohmann::json& report) {
  const DegreeStats stats = degree_stats(graph);
  report["max_in_degree"] = stats.max_in_degree;
  report["mean_in_degree"] = stats.mean_in_degree;
  report["isolated_nodes"] = stats.isolated_nodes;
  report["repeated_source_fraction"] = stats.repeated_source_fraction;
  report["repeated_source_sample_nodes"] = stats.repeated_source_sample_nodes;
}

// convert: the binary file, or with --shards one shard per rank and their manifest.
void convert(const Dataset& dataset, const po::variables_map& vm, nlohmann::json& report) {
  const std::string output = vm["output"].as<std::string>();
  const Stopwatch write;
  if (vm.count("shards") != 0) {
    ShardLayout layout;
    layout.num_shards = vm["shards"].as<int>();
    layout.partitioner = vm["partitioner"].as<std::string>();
    layout.partition_seed = vm["partition-seed"].as<std::uint64_t>();
    layout.structure = vm["structure"].as<std::string>();
    layout.features = vm["feature-layout"].as<std::string>();
    report["manifest"] = write_shards(dataset, layout, output).to_json();
  } else {
    const StepProgress progress = stderr_step_progress("workload");
    write_binary_workload(dataset, output, [&](std::int64_t done, std::int64_t total) {
      progress("writing " + output, done, total);
    });
  }
  report["output"] = output;
  report["write_seconds"] = write.seconds();
}

void partition(const Dataset& dataset, const po::variables_map& vm, nlohmann::json& report) {
  const auto partitioner = make_partitioner(vm["partitioner"].as<std::string>());
  const PartitionResult result = run_partitioner(*partitioner, dataset.graph, vm["parts"].as<int>(),
                                                 vm["partition-seed"].as<std::uint64_t>());
  report["partition"] = result.report.to_json();
  if (dataset.feature_dim() > 0) {
    report["feature_split"] = FeatureColumnSplit(dataset.feature_dim(), vm["parts"].as<int>())
                                  .to_json(dataset.num_nodes());
  }
}

int workload_main(int argc, char** argv) {
  const po::options_description options = workload_tool_options();
  po::positional_options_description positional;
  positional.add("command", 1);
  const auto command_line = parse_command_line(argc, argv, options, positional);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const std::string command = checked_command(vm);
  const WorkloadConfig config = workload_from_options(command_line->parsed);
  check_layout_options(vm);

  const Stopwatch load;
  const Dataset dataset = load_workload(config, stderr_step_progress("workload"));
  const double load_seconds = load.seconds();
  nlohmann::json report = dataset.summary();
  report["load_seconds"] = load_seconds;
  std::printf("%s: %lld nodes, %lld CSR entries, %d features, %d classes; loaded in %.3f s\n",
              dataset.name.c_str(), static_cast<long long>(dataset.num_nodes()),
              static_cast<long long>(dataset.graph.num_edges()), dataset.feature_dim(),
              dataset.num_classes, load_seconds);
  if (command == "info") {
    add_degree_stats(dataset.graph, report);
  } else if (command == "convert") {
    convert(dataset, vm, report);
  } else {
    partition(dataset, vm, report);
  }
  std::cout << report.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("workload", workload_main, argc, argv); }
