// bench_sage_layer: forward + backward GFLOP/s of GraphSAGE layers on a sampled mini-batch of a
// workload (default: products-like at scale 0.1, 1000 seeds, fanouts 25,10, hidden 32), next to
// the GFLOP/s the same BLAS reaches on a square matrix product.
#include <cblas.h>

#include <cstdio>
#include <iostream>

#include "exec/nn/aggregation.hpp"
#include "exec/nn/layers.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/sampler.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

// Repeats `body` until `seconds` have passed (at least 3 times, after one warm-up call) and
// returns the mean seconds per call.
template <typename Body>
double time_per_call(double seconds, Body body) {
  body();
  int calls = 0;
  const Stopwatch watch;
  while (calls < 3 || watch.seconds() < seconds) {
    body();
    ++calls;
  }
  return watch.seconds() / calls;
}

int bench_main(int argc, char** argv) {
  po::options_description options("bench_sage_layer [options]");
  options.add_options()("help,h", "show this help")("batch", po::value<int>()->default_value(1000),
                                                    "seeds per mini-batch")(
      "seconds", po::value<double>()->default_value(2.0), "measuring time per kernel");
  add_experiment_options(options);
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const po::parsed_options& parsed = command_line->parsed;
  const ExperimentConfig config = experiment_from_options(
      parsed, {"workload.source=products-like", "workload.scale=0.1", "model.kind=sage",
               "model.hidden=32", "training.fanouts=25,10"});
  require(config.model.kind == "sage", "model.kind", "this benchmark measures GraphSAGE layers");
  const double seconds = vm["seconds"].as<double>();
  const Dataset dataset = load_workload(config.workload);
  const ModelSpec spec(config.model, dataset.feature_dim(), dataset.num_classes);
  const NeighborSampler sampler(dataset.graph, config.training.fanouts, 7);
  const auto count = std::min<std::size_t>(static_cast<std::size_t>(vm["batch"].as<int>()),
                                           dataset.split.train.size());
  const MiniBatch batch =
      sampler.sample(std::span<const NodeId>(dataset.split.train).first(count), 0);

  nlohmann::json results = nlohmann::json::array();
  std::printf("%s, GraphSAGE hidden %d, %zu seeds, fanouts %s\n", dataset.name.c_str(),
              config.model.hidden, count, nlohmann::json(config.training.fanouts).dump().c_str());
  for (int l = 0; l < spec.num_layers(); ++l) {
    const Block& block = batch.blocks[static_cast<std::size_t>(l)];
    std::vector<Parameter> parameters = initial_parameters(spec, l, 3);
    std::vector<Parameter*> pointers;
    for (Parameter& p : parameters) pointers.push_back(&p);
    auto layer = make_layer(spec, l, pointers);
    const Matrix input = uniform_matrix(block.num_src(), spec.layer(l).in_dim, -1.0f, 1.0f, 5);
    const Matrix grad_out = uniform_matrix(block.num_dst, spec.layer(l).out_dim, -1.0f, 1.0f, 6);
    const bool input_grad = l > 0;
    const double forward_seconds = time_per_call(seconds, [&] { layer->forward(block, input); });
    const double total_seconds = time_per_call(seconds, [&] {
      layer->forward(block, input);
      layer->backward(grad_out, input_grad);
    });
    // Host work inside the layer on a backend that multiplies by stored weights (CUDA): building
    // the block's mean-aggregation matrix (forward) and its transpose (backward). The CPU backend
    // reads the block in place and builds neither.
    const cpu::SparseMatrix aggregation = mean_aggregation(block).materialized();
    const double aggregation_seconds =
        time_per_call(seconds, [&] { mean_aggregation(block).materialized(); });
    const double transpose_seconds = time_per_call(seconds, [&] { aggregation.transposed(); });
    const auto forward = spec.forward_work(l, block.num_dst, block.num_src(), block.num_edges());
    const auto backward =
        spec.backward_work(l, block.num_dst, block.num_src(), block.num_edges(), input_grad);
    const double gflops = (forward.total_flops() + backward.total_flops()) / total_seconds / 1e9;
    std::printf(
        "  layer %d (%d -> %d): %lld dst, %lld src, %lld edges: forward %.3f ms, "
        "forward+backward %.3f ms, %.2f GFLOP/s; of it on the host: aggregation matrix %.3f ms, "
        "its transpose %.3f ms\n",
        l, spec.layer(l).in_dim, spec.layer(l).out_dim, static_cast<long long>(block.num_dst),
        static_cast<long long>(block.num_src()), static_cast<long long>(block.num_edges()),
        1e3 * forward_seconds, 1e3 * total_seconds, gflops, 1e3 * aggregation_seconds,
        1e3 * transpose_seconds);
    results.push_back({{"layer", l},
                       {"in_dim", spec.layer(l).in_dim},
                       {"out_dim", spec.layer(l).out_dim},
                       {"num_dst", block.num_dst},
                       {"num_src", block.num_src()},
                       {"num_edges", block.num_edges()},
                       {"forward_seconds", forward_seconds},
                       {"forward_backward_seconds", total_seconds},
                       {"flops", forward.total_flops() + backward.total_flops()},
                       {"gflops_per_second", gflops},
                       {"aggregation_matrix_seconds", aggregation_seconds},
                       {"transpose_seconds", transpose_seconds}});
  }
  const Matrix a = uniform_matrix(1024, 1024, -1.0f, 1.0f, 1);
  const Matrix b = uniform_matrix(1024, 1024, -1.0f, 1.0f, 2);
  Matrix c;
  const double gemm_seconds = time_per_call(seconds, [&] { cpu::gemm(a, false, b, false, c); });
  const double gemm_gflops = 2.0 * 1024 * 1024 * 1024 / gemm_seconds / 1e9;
  std::printf("  reference: 1024^3 sgemm %.2f GFLOP/s (%s)\n", gemm_gflops, openblas_get_config());
  std::cout << nlohmann::json{{"benchmark", "sage_layer"},
                              {"workload", dataset.name},
                              {"layers", results},
                              {"sgemm_1024_gflops_per_second", gemm_gflops}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_sage_layer", bench_main, argc, argv); }
