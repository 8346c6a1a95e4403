// traffic_example: the P3 paper's traffic example (section 3.2.2), computed from our plans. On the
// products-like preset, 4 ranks, one mini-batch of 1000 seeds per rank, fanouts (25, 10), 100
// features, hidden 16: the layer-0 and layer-1 node counts of a mini-batch, the features DGL-style
// pull would move for it (all its input nodes, as the paper counts, and the remote ones our
// dgl-pull plan actually pulls) and the partial activations P3 moves, beside the paper's
// 188,339 / 24,703 nodes, 71.84 MB and ~5 MB. Structure only: features are generated on demand
// and never read.
#include <cstdio>
#include <iostream>

#include "strategies/config/experiment_cli.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/workload_config.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

int example_main(int argc, char** argv) {
  po::options_description options("traffic_example [options]");
  options.add_options()("help,h", "show this help")("ranks", po::value<int>()->default_value(4),
                                                    "machines (ranks)");
  add_experiment_options(options);
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const ExperimentConfig config = experiment_from_options(
      command_line->parsed, {"workload.source=products-like", "model.kind=sage", "model.hidden=16",
                             "training.batch_size=1000", "training.fanouts=25,10"});
  const int num_ranks = command_line->values["ranks"].as<int>();
  require(num_ranks >= 1, "ranks", "must be at least 1");

  const Stopwatch load;
  const Dataset dataset = load_workload(config.workload);
  std::printf("%s: %lld nodes, %lld CSR entries (generated in %.1f s)\n", dataset.name.c_str(),
              static_cast<long long>(dataset.num_nodes()),
              static_cast<long long>(dataset.graph.num_edges()), load.seconds());
  const StrategyContext context = make_strategy_context(config, dataset, num_ranks);
  const ModelSpec& spec = context.model;
  const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                               config.training.seed);
  const auto dgl = plan_iteration(*make_strategy("dgl-pull"), context, dataset.graph, schedule,
                                  sampler_seed(config.training), 1, 0);
  const auto p3 = plan_iteration(*make_strategy("p3"), context, dataset.graph, schedule,
                                 sampler_seed(config.training), 1, 0);

  const int dim = dataset.feature_dim();
  const int hidden = spec.layer(0).out_dim;
  nlohmann::json rows = nlohmann::json::array();
  std::printf("\n%-5s %10s %10s %22s %22s %20s\n", "rank", "layer 0", "layer 1",
              "DGL features, all (MiB)", "dgl-pull pulls (MiB)", "P3 activations (MiB)");
  for (int r = 0; r < num_ranks; ++r) {
    const Plan& plan = dgl[static_cast<std::size_t>(r)];
    const Block& first = *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
    const std::int64_t layer0 = first.num_src();
    const std::int64_t layer1 = first.num_dst;
    const double all_features = static_cast<double>(layer0) * dim * 4;
    const double pulled = static_cast<double>(plan.bytes_received()[Traffic::features]);
    const double activations = static_cast<double>(
        p3[static_cast<std::size_t>(r)].op_labelled("pull partial activations").total_bytes_from());
    std::printf("%-5d %10lld %10lld %22.2f %22.2f %20.2f\n", r, static_cast<long long>(layer0),
                static_cast<long long>(layer1), all_features / kMiB, pulled / kMiB,
                activations / kMiB);
    rows.push_back({{"rank", r},
                    {"layer0_nodes", layer0},
                    {"layer1_nodes", layer1},
                    {"dgl_all_input_feature_bytes", all_features},
                    {"dgl_pull_feature_bytes", pulled},
                    {"p3_partial_activation_bytes", activations},
                    {"p3_feature_bytes",
                     p3[static_cast<std::size_t>(r)].bytes_received()[Traffic::features]}});
  }
  const double paper_features = 188339.0 * 100 * 4;
  const double paper_activations = 3.0 * 24703 * 16 * 4;
  std::printf("%-5s %10d %10d %22.2f %22s %20.2f\n", "paper", 188339, 24703, paper_features / kMiB,
              "-", paper_activations / kMiB);
  std::printf(
      "(P3 moves no feature bytes; its activations are (N-1) x n1 x hidden x 4 = %d x n1 x "
      "%d x 4 bytes per batch owner.)\n",
      num_ranks - 1, hidden);
  std::cout << nlohmann::json{{"experiment", "p3_traffic_example"},
                              {"workload", dataset.summary()},
                              {"config", to_json(config)},
                              {"ranks", rows},
                              {"paper",
                               {{"layer0_nodes", 188339},
                                {"layer1_nodes", 24703},
                                {"dgl_feature_bytes", paper_features},
                                {"p3_activation_bytes", paper_activations}}},
                              {"provenance", provenance_json(argc, argv)}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("traffic_example", example_main, argc, argv); }
