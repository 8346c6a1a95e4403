// run_experiment --strategy pbg (run_pbg.hpp): every rank parses the same command line and loads
// the same workload; rank 0 checks the output path, writes the result and prints the summary.
#include "exec/tools/run_pbg.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "exec/embedding/distributed_embeddings.hpp"
#include "exec/tools/setup_agreement.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/command_line.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/provenance.hpp"

namespace po = boost::program_options;

namespace gnnbed {
namespace {

struct PbgSetup {
  EmbeddingExperimentConfig config;
  std::optional<LinkPredictionData> data;
  std::string output;
  bool quiet = false;
  double stall_timeout_seconds = 0;
  bool help = false;
};

// The command line, the strategy's checks and the workload; throws what stops the rank.
void prepare(int argc, char** argv, int num_ranks, int rank, PbgSetup& setup) {
  po::options_description options("mpirun -np N run_experiment --strategy pbg [options]");
  options.add_options()("help,h", "show this help")("strategy", po::value<std::string>(),
                                                    "pbg (PyTorch-BigGraph's embedding training)")(
      "output,o", po::value<std::string>(),
      "result file (JSON); default results/run-pbg-<dataset>-<N>ranks.json")(
      "stall-timeout", po::value<double>()->default_value(600),
      "seconds a rank may wait for its peers without progress before the run stops (0: never)")(
      "quiet,q", "no per-epoch progress");
  add_config_options(options, embedding_config_options());
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) {
    setup.help = true;
    return;
  }
  const ConfigSources sources = config_sources(command_line->parsed, embedding_config_options());
  setup.config =
      embedding_experiment_from_json(resolve_config_document(sources.file, sources.assignments));
  const po::variables_map& vm = command_line->values;
  setup.output = vm.count("output") != 0
                     ? vm["output"].as<std::string>()
                     : "results/run-pbg-" +
                           std::filesystem::path(setup.config.workload.source).stem().string() +
                           "-" + std::to_string(num_ranks) + "ranks.json";
  setup.quiet = vm.count("quiet") != 0;
  setup.stall_timeout_seconds = vm["stall-timeout"].as<double>();
  if (rank == 0) check_output_path(setup.output, "--output");
  PbgStrategy::check(setup.config, num_ranks);
  setup.data = load_link_prediction(setup.config.workload);
  EntityPartitioning::check(setup.data->num_entities, setup.config.training.partitions);
}

void print_epoch(const DistributedEmbeddingEpoch& e, int epochs) {
  std::printf("epoch %3d/%d  loss/edge %.4f  %.3f s (training %.3f, waiting %.3f per rank)",
              e.epoch, epochs, e.loss_per_edge, e.seconds, e.train_seconds, e.waiting_seconds);
  if (e.test)
    std::printf("  MRR %.4f  Hits@10 %.4f", e.test->filtered.mrr, e.test->filtered.hits_at_10);
  std::printf("\n");
  std::fflush(stdout);
}

void print_summary(const PbgSetup& setup, const LinkPredictionData& data,
                   const DistributedEmbeddingReport& report) {
  const EmbeddingExperimentConfig& config = setup.config;
  std::printf("\npbg on %s, %d ranks: dimension %d, %d partitions, %d epochs\n", data.name.c_str(),
              report.num_ranks, config.model.dimension, config.training.partitions,
              config.training.epochs);
  std::printf("  held-out edges, filtered: MRR %.4f, Hits@1 %.4f, Hits@10 %.4f\n",
              report.test.filtered.mrr, report.test.filtered.hits_at_1,
              report.test.filtered.hits_at_10);
  std::printf("  epoch time %.3f s (slowest rank); peak memory %.1f MiB (largest rank)\n",
              report.epoch_seconds, static_cast<double>(report.peak_memory_bytes) / (1 << 20));
  for (std::size_t r = 0; r < report.sent.size(); ++r) {
    std::printf("  rank %zu sent: embeddings %.2f MiB, control %lld B\n", r,
                static_cast<double>(report.sent[r][Traffic::embeddings]) / (1 << 20),
                static_cast<long long>(report.sent[r][Traffic::control]));
  }
  std::printf("  bytes by kind %s the plans'\n",
              report.bytes_match_plans() ? "equal" : "DIFFER FROM");
  std::printf("  result written to %s\n", setup.output.c_str());
}

}  // namespace

int run_pbg_experiment(int argc, char** argv, MpiTransport& transport) {
  PbgSetup setup;
  int exit_code = 0;
  const std::string problem = setup_problem(
      [&] { prepare(argc, argv, transport.size(), transport.rank(), setup); }, exit_code);
  if (const std::optional<int> code = setup_failure_code(transport, problem, exit_code)) {
    return *code;
  }
  if (setup.help) return 0;
  const int epochs = setup.config.training.epochs;
  const bool quiet = setup.quiet;
  const DistributedEmbeddingReport report = train_embeddings_distributed(
      *setup.data, setup.config, transport,
      [&](const DistributedEmbeddingEpoch& e) {
        if (!quiet) print_epoch(e, epochs);
      },
      nullptr, setup.stall_timeout_seconds);
  if (transport.rank() != 0) return 0;
  nlohmann::json result = report.to_json();
  result["strategy"] = kPbgStrategyName;
  result["bytes_match_plans"] = report.bytes_match_plans();
  result["provenance"] = provenance_json(argc, argv);
  result["config"] = to_json(setup.config);
  result["dataset"] = setup.data->summary();
  write_text_file_atomically(setup.output, result.dump(2) + "\n");
  print_summary(setup, *setup.data, report);
  return 0;
}

}  // namespace gnnbed
