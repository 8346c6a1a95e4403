// train: single-process GNN training (full-graph or sampled mini-batch) on one workload, with a
// JSON result (provenance, resolved config, per-epoch records, accuracy) and a short summary.
#include <cblas.h>

#include <cstdio>
#include <iostream>

#include "exec/train/trainer.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

std::string default_output(const ExperimentConfig& config) {
  return "results/train-" + config.workload.source + "-" + config.model.kind + ".json";
}

void print_progress(const EpochRecord& record, int epochs) {
  const int every = std::max(1, epochs / 10);
  if (record.epoch % every != 0 && record.epoch != 1 && record.epoch != epochs) return;
  std::printf("epoch %4d/%d  loss %.4f  train acc %5.1f %%", record.epoch, epochs, record.loss,
              100 * record.train_accuracy);
  if (record.val_accuracy >= 0) std::printf("  val acc %5.1f %%", 100 * record.val_accuracy);
  std::printf("  %.1f ms\n", 1e3 * record.seconds);
  std::fflush(stdout);
}

int train_main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  po::options_description options("train [options]");
  options.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>(),
      "result file (JSON); default results/train-<workload>-<model>.json")("quiet,q",
                                                                           "no per-epoch progress");
  add_experiment_options(options);
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const po::parsed_options& parsed = command_line->parsed;
  const ExperimentConfig config = experiment_from_options(parsed);
  const std::string output =
      vm.count("output") != 0 ? vm["output"].as<std::string>() : default_output(config);
  check_output_path(output, "--output");

  const Stopwatch load;
  const Dataset dataset = load_workload(config.workload);
  const double load_seconds = load.seconds();
  const ModelSpec spec(config.model, dataset.feature_dim(), dataset.num_classes);
  std::printf(
      "%s: %lld nodes, %lld edges, %d features, %d classes, %zu/%zu/%zu train/val/test "
      "(loaded in %.2f s)\n",
      dataset.name.c_str(), static_cast<long long>(dataset.num_nodes()),
      static_cast<long long>(dataset.graph.num_edges()), dataset.feature_dim(), dataset.num_classes,
      dataset.split.train.size(), dataset.split.val.size(), dataset.split.test.size(),
      load_seconds);
  const bool quiet = vm.count("quiet") != 0;
  const TrainingReport report =
      train_model(dataset, spec, config.training, [&](const EpochRecord& record) {
        if (!quiet) print_progress(record, config.training.epochs);
      });

  nlohmann::json result = report.to_json();
  result["provenance"] = provenance_json(argc, argv);
  result["provenance"]["versions"]["openblas"] = openblas_get_config();
  result["config"] = to_json(config);
  result["dataset"] = dataset.summary();
  result["load_seconds"] = load_seconds;
  write_text_file_atomically(output, result.dump(2) + "\n");

  const EpochRecord& last = report.epochs.back();
  std::printf("\n%s, %s: %d layers, hidden %d, %s, %d epochs\n", dataset.name.c_str(),
              config.model.kind.c_str(), spec.num_layers(), config.model.hidden,
              config.training.batch_size > 0
                  ? ("mini-batch " + std::to_string(config.training.batch_size)).c_str()
                  : "full-graph",
              config.training.epochs);
  std::printf("  test accuracy %.1f %%  (validation %.1f %%, final training loss %.4f)\n",
              100 * report.test_accuracy, 100 * report.val_accuracy, last.loss);
  std::printf("  epoch time %.2f ms (last epoch: sampling %.2f, features %.2f, compute %.2f ms)\n",
              1e3 * report.epoch_seconds, 1e3 * last.sampling_seconds, 1e3 * last.gather_seconds,
              1e3 * last.compute_seconds);
  std::printf("  peak memory %.1f MiB; result written to %s\n",
              static_cast<double>(report.peak_memory_bytes) / (1 << 20), output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("train", train_main, argc, argv); }
