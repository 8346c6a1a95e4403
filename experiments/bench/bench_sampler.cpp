// bench_sampler: neighbour-sampling throughput on a workload's training nodes (default: the
// products-like preset at full size, 1000 seeds per batch, fanouts 25,10). Batches are consecutive
// slices of a seeded permutation of the training nodes, as in a training epoch. Prints one
// readable line per thread count, then one JSON line.
#include <omp.h>

#include <cstdio>
#include <iostream>
#include <numeric>

#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/sampler.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

int bench_main(int argc, char** argv) {
  po::options_description options("bench_sampler [options]");
  options.add_options()("help,h", "show this help")(
      "threads", po::value<std::string>()->default_value("1,2"), "OpenMP thread counts to run")(
      "seconds", po::value<double>()->default_value(5.0), "sampling time per thread count");
  add_experiment_options(options);
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const po::parsed_options& parsed = command_line->parsed;
  const ExperimentConfig config =
      experiment_from_options(parsed, {"workload.source=products-like", "workload.features=none",
                                       "training.batch_size=1000", "training.fanouts=25,10"});
  const double seconds = vm["seconds"].as<double>();
  require(seconds > 0, "seconds", "must be positive");
  std::vector<int> thread_counts;
  JsonFieldReader({{"threads", vm["threads"].as<std::string>()}}, "")
      .read("threads", thread_counts);
  for (const int threads : thread_counts) require(threads > 0, "threads", "must be positive");
  require(config.training.batch_size > 0, "training.batch_size", "must be positive");

  const Stopwatch load;
  const Dataset dataset = load_workload(config.workload);
  const double load_seconds = load.seconds();
  std::printf("%s: %lld nodes, %lld CSR entries, %zu training nodes (loaded in %.1f s)\n",
              dataset.name.c_str(), static_cast<long long>(dataset.num_nodes()),
              static_cast<long long>(dataset.graph.num_edges()), dataset.split.train.size(),
              load_seconds);
  const NeighborSampler sampler(dataset.graph, config.training.fanouts, config.training.seed);
  std::vector<NodeId> order = dataset.split.train;
  Rng rng(hash_mix(config.training.seed, 0x5eed));
  shuffle(std::span(order), rng);
  const auto batch_size =
      std::min(order.size(), static_cast<std::size_t>(config.training.batch_size));
  const std::size_t batches_per_epoch = order.size() / batch_size;
  auto seeds_of = [&](std::uint64_t batch) {
    return std::span<const NodeId>(order).subspan((batch % batches_per_epoch) * batch_size,
                                                  batch_size);
  };

  const std::size_t num_layers = config.training.fanouts.size();
  nlohmann::json runs = nlohmann::json::array();
  for (const int threads : thread_counts) {
    omp_set_num_threads(threads);
    sampler.sample(seeds_of(0), 0);  // warm-up: first touch of the scratch arrays
    std::vector<double> layer_nodes(num_layers + 1, 0.0);
    double sampled_edges = 0;
    std::uint64_t batches = 0;
    const Stopwatch clock;
    while (clock.seconds() < seconds) {
      const MiniBatch batch = sampler.sample(seeds_of(batches + 1), batches + 1);
      for (std::size_t l = 0; l < num_layers; ++l) {
        layer_nodes[l] += static_cast<double>(batch.blocks[l].num_src());
        sampled_edges += static_cast<double>(batch.blocks[l].num_edges());
      }
      layer_nodes[num_layers] += static_cast<double>(batch.seeds.size());
      ++batches;
    }
    const double elapsed = clock.seconds();
    for (double& nodes : layer_nodes) nodes /= static_cast<double>(batches);
    std::printf(
        "  %d thread(s): %.1f batches/s, %.1f M sampled edges/s; mean nodes per layer "
        "(layer 0 = inputs):",
        threads, static_cast<double>(batches) / elapsed, sampled_edges / elapsed / 1e6);
    for (const double nodes : layer_nodes) std::printf(" %.0f", nodes);
    std::printf("\n");
    runs.push_back({{"threads", threads},
                    {"batches", batches},
                    {"seconds", elapsed},
                    {"batches_per_second", static_cast<double>(batches) / elapsed},
                    {"sampled_edges_per_second", sampled_edges / elapsed},
                    {"mean_layer_nodes", layer_nodes}});
  }
  std::cout << nlohmann::json{{"benchmark", "sampler"},
                              {"workload", dataset.summary()},
                              {"config", to_json(config)},
                              {"load_seconds", load_seconds},
                              {"runs", runs},
                              {"provenance", provenance_json(argc, argv)}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_sampler", bench_main, argc, argv); }
