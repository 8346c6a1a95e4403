// train_embeddings: PyTorch-BigGraph-style link-prediction training on one machine (entity
// partitions, bucketed edges, partitions swapped to disk on request), with a JSON result
// (provenance, resolved config, per-epoch records, MRR and Hits@k on held-out edges) and a short
// summary.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "exec/embedding/embedding_trainer.hpp"
#include "workloads/common/command_line.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

void print_epoch(const EmbeddingEpochRecord& record, int epochs) {
  std::printf("epoch %3d/%d  loss/edge %.4f  %.2f s", record.epoch, epochs, record.loss_per_edge,
              record.seconds);
  if (record.swap_bytes > 0) {
    std::printf("  (swaps %.1f MiB, %.2f s)", static_cast<double>(record.swap_bytes) / (1 << 20),
                record.swap_seconds);
  }
  if (record.test) {
    std::printf("  MRR %.4f  Hits@10 %.4f", record.test->filtered.mrr,
                record.test->filtered.hits_at_10);
  }
  std::printf("\n");
  std::fflush(stdout);
}

int train_embeddings_main(int argc, char** argv) {
  po::options_description options("train_embeddings [options]");
  options.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>(),
      "result file (JSON); default results/embeddings-<dataset>.json")("quiet,q",
                                                                       "no per-epoch progress");
  add_config_options(options, embedding_config_options());
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const ConfigSources sources = config_sources(command_line->parsed, embedding_config_options());
  const EmbeddingExperimentConfig config =
      embedding_experiment_from_json(resolve_config_document(sources.file, sources.assignments));
  const po::variables_map& vm = command_line->values;
  const std::string output =
      vm.count("output") != 0
          ? vm["output"].as<std::string>()
          : "results/embeddings-" + std::filesystem::path(config.workload.source).stem().string() +
                ".json";
  check_output_path(output, "--output");
  if (!config.training.swap_directory.empty()) {
    check_output_folder(config.training.swap_directory, "training.swap_directory");
  }

  const Stopwatch load;
  const LinkPredictionData data = load_link_prediction(config.workload);
  std::printf("%s: %lld entities, %d relations, %zu training and %zu held-out edges (%.2f s)\n",
              data.name.c_str(), static_cast<long long>(data.num_entities), data.num_relations(),
              data.train.size(), data.test.size(), load.seconds());
  const bool quiet = vm.count("quiet") != 0;
  // Within a long epoch, a line on stderr at most every 10 s.
  Stopwatch since_progress;
  const BucketProgress bucket_progress = [&](int epoch, int done, int total) {
    if (quiet || done == total || since_progress.seconds() < 10) return;
    std::fprintf(stderr, "train_embeddings: epoch %d, bucket %d of %d\n", epoch, done, total);
    since_progress.restart();
  };
  const EmbeddingReport report = train_embeddings(
      data, config,
      [&](const EmbeddingEpochRecord& record) {
        if (!quiet) print_epoch(record, config.training.epochs);
        since_progress.restart();
      },
      nullptr, bucket_progress);

  nlohmann::json result = report.to_json();
  result["provenance"] = provenance_json(argc, argv);
  result["config"] = to_json(config);
  result["dataset"] = data.summary();
  write_text_file_atomically(output, result.dump(2) + "\n");
  std::printf("\n%s, %s scoring, dimension %d, %d partitions, %d epochs\n", data.name.c_str(),
              config.model.scoring.c_str(), config.model.dimension, config.training.partitions,
              config.training.epochs);
  std::printf(
      "  held-out edges, filtered: MRR %.4f, Hits@1 %.4f, Hits@10 %.4f (raw: MRR %.4f, Hits@10 "
      "%.4f; %lld rankings)\n",
      report.test.filtered.mrr, report.test.filtered.hits_at_1, report.test.filtered.hits_at_10,
      report.test.raw.mrr, report.test.raw.hits_at_10,
      static_cast<long long>(report.test.rankings));
  std::printf("  epoch time %.3f s; swapped %.1f MiB in %.2f s; peak memory %.1f MiB\n",
              report.epoch_seconds,
              static_cast<double>(report.swaps.bytes_read + report.swaps.bytes_written) / (1 << 20),
              report.swaps.seconds, static_cast<double>(report.peak_memory_bytes) / (1 << 20));
  std::printf("  result written to %s\n", output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("train_embeddings", train_embeddings_main, argc, argv);
}
