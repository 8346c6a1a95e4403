// Neighbour-sampling throughput: builds a random graph of the requested size (hash-drawn
// undirected edges), then samples mini-batches of random training seeds for a fixed time with
// each requested thread count. Prints one JSON line, then one readable line per thread count.
#include <omp.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/graph.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {
namespace {

struct BenchOptions {
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  std::int64_t batch_size = 1000;
  std::vector<int> fanouts;
  std::vector<int> thread_counts;
  double seconds = 5.0;
  std::uint64_t seed = 1;
};

// "25,10" -> {25, 10}.
std::vector<int> parse_int_list(const std::string& text, const std::string& field) {
  std::vector<int> values;
  const char* cursor = text.data();
  const char* end = text.data() + text.size();
  while (cursor < end) {
    int value = 0;
    const auto [next, error] = std::from_chars(cursor, end, value);
    if (error != std::errc() || (next != end && *next != ',')) {
      throw ConfigError(field, "'" + text + "' is not a comma-separated list of integers");
    }
    values.push_back(value);
    cursor = next == end ? end : next + 1;
  }
  if (values.empty()) throw ConfigError(field, "is empty");
  return values;
}

Graph random_graph(std::int64_t num_nodes, std::int64_t num_edges, std::uint64_t seed) {
  std::vector<NodeId> src(static_cast<std::size_t>(num_edges));
  std::vector<NodeId> dst(static_cast<std::size_t>(num_edges));
  const auto n = static_cast<std::uint64_t>(num_nodes);
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < num_edges; ++e) {
    const auto i = static_cast<std::size_t>(e);
    src[i] = static_cast<NodeId>(hash_mix(seed, i, 0) % n);
    dst[i] = static_cast<NodeId>(hash_mix(seed, i, 1) % n);
  }
  return build_graph(num_nodes, src, dst, EdgeListOptions{}, "random graph");
}

nlohmann::json run_benchmark(const BenchOptions& options) {
  require(options.num_nodes > 0, "nodes", "must be positive");
  require(options.num_edges >= 0, "edges", "must not be negative");
  require(options.batch_size > 0 && options.batch_size <= options.num_nodes, "batch-size",
          "must lie in [1, nodes]");
  require(options.seconds > 0, "seconds", "must be positive");
  for (const int threads : options.thread_counts) {
    require(threads > 0, "threads", "thread counts must be positive");
  }
  check_node_count(options.num_nodes, "--nodes");

  Stopwatch build_clock;
  const Graph graph = random_graph(options.num_nodes, options.num_edges, options.seed);
  const double build_seconds = build_clock.seconds();
  const NeighborSampler sampler(graph, options.fanouts, options.seed);

  // Training seeds come in epochs: consecutive slices of one fixed random permutation.
  std::vector<NodeId> order(static_cast<std::size_t>(options.num_nodes));
  std::iota(order.begin(), order.end(), NodeId{0});
  Rng rng(hash_mix(options.seed, 0x5eed));
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  const auto batch_size = static_cast<std::size_t>(options.batch_size);
  const std::size_t batches_per_epoch = order.size() / batch_size;
  auto seeds_of = [&](std::uint64_t batch) {
    const std::size_t first = (batch % batches_per_epoch) * batch_size;
    return std::span<const NodeId>(order).subspan(first, batch_size);
  };

  nlohmann::json runs = nlohmann::json::array();
  const std::size_t num_layers = options.fanouts.size();
  for (const int threads : options.thread_counts) {
    omp_set_num_threads(threads);
    sampler.sample(seeds_of(0), 0);  // warm-up: first-touch of the scratch arrays
    std::vector<double> src_nodes(num_layers, 0.0);
    std::vector<double> edges(num_layers, 0.0);
    double total_edges = 0;
    std::uint64_t batches = 0;
    Stopwatch clock;
    double elapsed = 0;
    while (elapsed < options.seconds) {
      const MiniBatch batch = sampler.sample(seeds_of(batches + 1), batches + 1);
      for (std::size_t l = 0; l < num_layers; ++l) {
        src_nodes[l] += static_cast<double>(batch.blocks[l].num_src());
        edges[l] += static_cast<double>(batch.blocks[l].num_edges());
        total_edges += static_cast<double>(batch.blocks[l].num_edges());
      }
      ++batches;
      elapsed = clock.seconds();
    }
    for (std::size_t l = 0; l < num_layers; ++l) {
      src_nodes[l] /= static_cast<double>(batches);
      edges[l] /= static_cast<double>(batches);
    }
    runs.push_back({{"threads", threads},
                    {"batches", batches},
                    {"seconds", elapsed},
                    {"batches_per_second", static_cast<double>(batches) / elapsed},
                    {"sampled_edges_per_second", total_edges / elapsed},
                    {"mean_layer_nodes", src_nodes},
                    {"mean_layer_edges", edges}});
  }
  return {{"benchmark", "sampler"},
          {"nodes", graph.num_nodes()},
          {"undirected_edges", options.num_edges},
          {"directed_edges", graph.num_edges()},
          {"batch_size", options.batch_size},
          {"fanouts", options.fanouts},
          {"seed", options.seed},
          {"build_seconds", build_seconds},
          {"runs", runs}};
}

void print_readable(const nlohmann::json& result) {
  std::cout << "graph: " << result["nodes"] << " nodes, " << result["directed_edges"]
            << " directed edges, built in " << result["build_seconds"].get<double>() << " s\n";
  for (const auto& run : result["runs"]) {
    std::cout << run["threads"] << " threads: " << run["batches_per_second"].get<double>()
              << " batches/s, " << run["sampled_edges_per_second"].get<double>() / 1e6
              << " M sampled edges/s, mean nodes per layer (layer 0 = inputs):";
    for (const auto& nodes : run["mean_layer_nodes"]) std::cout << " " << nodes.get<double>();
    std::cout << "\n";
  }
}

}  // namespace
}  // namespace gnnbed

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  gnnbed::BenchOptions options;
  std::string fanouts = "25,10";
  std::string threads = "1,2";
  po::options_description description("bench_sampler options");
  description.add_options()("help", "print this help")(
      "nodes", po::value(&options.num_nodes)->default_value(2449029), "number of nodes")(
      "edges", po::value(&options.num_edges)->default_value(61859140), "undirected edges drawn")(
      "batch-size", po::value(&options.batch_size)->default_value(1000), "seeds per batch")(
      "fanouts", po::value(&fanouts)->default_value(fanouts), "fanouts by hop from the seeds")(
      "threads", po::value(&threads)->default_value(threads), "OpenMP thread counts to run")(
      "seconds", po::value(&options.seconds)->default_value(5.0), "sampling time per thread count")(
      "seed", po::value(&options.seed)->default_value(1), "seed of the graph and the sampler");
  try {
    po::variables_map values;
    po::store(po::parse_command_line(argc, argv, description), values);
    if (values.count("help") != 0) {
      std::cout << description << "\n";
      return 0;
    }
    po::notify(values);
    options.fanouts = gnnbed::parse_int_list(fanouts, "fanouts");
    options.thread_counts = gnnbed::parse_int_list(threads, "threads");
    nlohmann::json result = gnnbed::run_benchmark(options);
    result["provenance"] = gnnbed::provenance_json(argc, argv);
    std::cout << result.dump() << "\n";
    gnnbed::print_readable(result);
  } catch (const po::error& error) {
    std::cerr << "bench_sampler: " << error.what() << "\n";
    return 2;
  } catch (const gnnbed::Error& error) {
    std::cerr << "bench_sampler: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
