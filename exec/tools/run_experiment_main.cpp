// run_experiment: distributed GNN training over MPI with one of the strategies (mpirun -np N).
// Every rank loads its own shard of a sharded workload (or loads the whole workload and keeps its
// part); results (rank 0) are a JSON file with provenance, the resolved config, per-epoch time and
// breakdown, per-rank bytes by traffic kind (counted and planned), memory and accuracy; a CSV of
// the epochs; optionally a Chrome trace (chrome://tracing, Perfetto) and the first iteration's
// plans.
#include <cblas.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "exec/backends.hpp"
#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/distributed/rank_workload.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/tools/run_pbg.hpp"
#include "exec/tools/setup_agreement.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "strategies/pbg.hpp"
#include "strategies/roc_partition.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

struct Outputs {
  std::string result;
  std::string csv;
  std::string trace;
  std::string plans;
  bool quiet = false;
};

std::string epochs_csv(const DistributedReport& report) {
  std::ostringstream csv;
  csv << "epoch,seconds,loss,train_accuracy,val_accuracy";
  for (std::size_t p = 0; p < kNumBreakdownParts; ++p)
    csv << ",mean_" << breakdown_part_name(p) << "_seconds";
  for (std::size_t p = 0; p < kNumBreakdownParts; ++p)
    csv << ",max_" << breakdown_part_name(p) << "_seconds";
  csv << "\n";
  for (const DistributedEpoch& e : report.epochs) {
    csv << e.epoch << "," << e.seconds << "," << e.loss << "," << e.train_accuracy << ",";
    if (e.val_accuracy >= 0) csv << e.val_accuracy;
    for (const double s : e.mean_seconds) csv << "," << s;
    for (const double s : e.max_seconds) csv << "," << s;
    csv << "\n";
  }
  return csv.str();
}

void print_summary(const ExperimentConfig& config, const std::string& dataset_name, int num_ranks,
                   const DistributedReport& report, const Outputs& outputs) {
  const std::string batching = config.training.batch_size == 0
                                   ? std::string("full graph")
                                   : "batch " + std::to_string(config.training.batch_size) +
                                         " per rank, fanouts " +
                                         nlohmann::json(config.training.fanouts).dump();
  std::printf("\n%s on %s, %d ranks (%s structure, %s partition): %s %d layers, hidden %d, %s\n",
              config.distribution.strategy.c_str(), dataset_name.c_str(), num_ranks,
              config.distribution.structure.c_str(), config.distribution.partitioner.c_str(),
              config.model.kind.c_str(), config.model.num_layers, config.model.hidden,
              batching.c_str());
  std::array<double, kNumBreakdownParts> mean{};
  for (const DistributedEpoch& e : report.epochs) {
    for (std::size_t p = 0; p < kNumBreakdownParts; ++p)
      mean[p] += e.mean_seconds[p] / static_cast<double>(report.epochs.size());
  }
  std::printf("  epoch time %.3f s (slowest rank); per rank:", report.epoch_seconds);
  for (std::size_t p = 0; p < kNumBreakdownParts; ++p) {
    std::printf(" %s %.3f", std::string(breakdown_part_name(p)).c_str(), mean[p]);
  }
  std::printf(" s\n  bytes sent per epoch, mean over ranks:");
  for (std::size_t k = 0; k < kNumTrafficKinds; ++k) {
    double bytes = 0;
    for (const RankReport& r : report.ranks) bytes += static_cast<double>(r.sent.bytes[k]);
    bytes /= static_cast<double>(report.ranks.size()) * static_cast<double>(report.epochs.size());
    std::printf(" %s %.2f MB", std::string(to_string(static_cast<Traffic>(k))).c_str(),
                bytes / 1e6);
  }
  std::printf("\n  transport bytes %s the plans' on every rank\n",
              report.bytes_match ? "equal" : "DIFFER FROM");
  std::int64_t peak = 0;
  for (const RankReport& r : report.ranks) peak = std::max(peak, r.peak_memory_bytes);
  std::printf("  peak memory %.1f MiB (largest rank)\n", static_cast<double>(peak) / (1 << 20));
  if (!report.epochs.empty()) {
    std::printf("  training loss %.4f in the last epoch\n", report.epochs.back().loss);
  }
  if (report.test_accuracy >= 0) {
    std::printf("  test accuracy %.1f %% (validation %.1f %%)\n", 100 * report.test_accuracy,
                100 * report.val_accuracy);
  }
  std::printf("  results: %s, %s", outputs.result.c_str(), outputs.csv.c_str());
  if (!outputs.trace.empty()) std::printf(", trace %s", outputs.trace.c_str());
  if (!outputs.plans.empty()) std::printf(", plans %s", outputs.plans.c_str());
  std::printf("\n");
}

// Every rank's part of the graph with the time it was busy per epoch: samples of ROC's partition
// cost model.
std::vector<PartitionCostSample> measured_partition_costs(const DistributedReport& report,
                                                          const std::string& dataset_name,
                                                          const std::string& partitioner) {
  std::vector<PartitionCostSample> samples;
  for (const RankReport& r : report.ranks) {
    samples.push_back({"run_experiment " + dataset_name + " " + partitioner + " rank " +
                           std::to_string(r.rank) + "/" + std::to_string(report.ranks.size()),
                       r.partition, r.busy_seconds});
  }
  return samples;
}

// The setup every rank does before talking to the others: parse, load, check. Returns an error
// message (and sets exit_code) instead of throwing, so that ranks can agree to stop together.
struct Setup {
  ExperimentConfig config;
  std::unique_ptr<ComputeBackend> backend;  // --device
  std::string transport = "mpi";            // --transport
  std::optional<RankWorkload> workload;     // set once the config is known to fit
  Outputs outputs;
  bool help = false;
  double load_seconds = 0;
};

po::options_description run_experiment_options() {
  po::options_description options("mpirun -np N run_experiment [options]");
  options.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>(),
      "result file (JSON); default results/run-<strategy>-<workload>-<N>ranks.json")(
      "csv", po::value<std::string>(), "per-epoch CSV; default: the result's name with .csv")(
      "trace", po::value<std::string>(), "Chrome trace of the first epoch (JSON)")(
      "plans", po::value<std::string>(),
      "every rank's plan of the first iteration (.json, or .msgpack)")(
      "device", po::value<std::string>()->default_value("cpu"),
      "where compute ops run: cpu, or cuda (ranks on a machine share its GPUs round robin)")(
      "transport", po::value<std::string>()->default_value("mpi"),
      "what moves the data: mpi, or nccl (one GPU per rank; needs --device cuda)")(
      "device-features", po::value<std::string>()->default_value("auto"),
      "where a GPU rank gathers its mini-batch inputs: auto (on the GPU from a copy of the "
      "rank's features, when it takes at most half the GPU's free memory; else host), or host "
      "(from host memory, into page-locked buffers copied to the GPU)")("quiet,q",
                                                                        "no per-epoch progress");
  add_experiment_options(options);
  return options;
}

void prepare(int argc, char** argv, int num_ranks, int rank, int local_rank, int ranks_per_host,
             Setup& setup) {
  const po::options_description options = run_experiment_options();
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) {
    setup.help = true;
    return;
  }
  const po::variables_map& vm = command_line->values;
  // The P3 paper's setting: GraphSAGE, mini-batches of 1000 seeds, fanouts (25, 10).
  setup.config = experiment_from_options(
      command_line->parsed,
      {"model.kind=sage", "training.batch_size=1000", "training.fanouts=25,10"});
  // Unless the configuration names the machines, they are MPI's hosts (0 when those are not
  // equal blocks of consecutive ranks: the strategy then asks for the field).
  if (setup.config.distribution.ranks_per_machine == 0) {
    setup.config.distribution.ranks_per_machine = ranks_per_host;
  }
  const ExperimentConfig& config = setup.config;
  setup.outputs.result = vm.count("output") != 0 ? vm["output"].as<std::string>()
                                                 : "results/run-" + config.distribution.strategy +
                                                       "-" + config.workload.source + "-" +
                                                       std::to_string(num_ranks) + "ranks.json";
  setup.outputs.csv =
      vm.count("csv") != 0
          ? vm["csv"].as<std::string>()
          : std::filesystem::path(setup.outputs.result).replace_extension(".csv").string();
  if (vm.count("trace") != 0) setup.outputs.trace = vm["trace"].as<std::string>();
  if (vm.count("plans") != 0) setup.outputs.plans = vm["plans"].as<std::string>();
  setup.outputs.quiet = vm.count("quiet") != 0;
  if (rank == 0) {  // the rank that writes them
    check_output_path(setup.outputs.result, "--output");
    check_output_path(setup.outputs.csv, "--csv");
    if (!setup.outputs.trace.empty()) check_output_path(setup.outputs.trace, "--trace");
    if (!setup.outputs.plans.empty()) check_output_path(setup.outputs.plans, "--plans");
  }
  setup.transport = vm["transport"].as<std::string>();
  const std::string device = vm["device"].as<std::string>();
  if (setup.transport != "mpi" && setup.transport != "nccl") {
    throw ConfigError("--transport", "'" + setup.transport + "' is not one of: mpi, nccl");
  }
  if (setup.transport == "nccl" && device != "cuda") {
    throw ConfigError("--transport", "nccl moves data between GPUs: it needs --device cuda");
  }
  if (setup.transport == "nccl" && config.distribution.all_reduce == "hierarchical") {
    throw ConfigError("distribution.all_reduce",
                      "'hierarchical' follows gnnbed's schedule on --transport mpi; NCCL picks "
                      "its own all-reduce for the machines' topology");
  }
  const std::string device_features = vm["device-features"].as<std::string>();
  if (device_features != "auto" && device_features != "host") {
    throw ConfigError("--device-features", "'" + device_features + "' is not one of: auto, host");
  }
  setup.backend = make_compute_backend(device, local_rank);
  setup.backend->allow_feature_tables(device_features == "auto");
  const Stopwatch load;
  setup.workload = load_rank_workload(config, num_ranks, rank);
  setup.load_seconds = load.seconds();
}

// The data plane: NCCL on every rank's GPU (collective), or nothing where the MPI transport itself
// moves the data; MPI stays the control plane.
std::unique_ptr<Transport> data_plane(const Setup& setup) {
  if (setup.transport == "mpi") return nullptr;
  try {
    return make_data_transport(setup.transport, MPI_COMM_WORLD, local_rank(MPI_COMM_WORLD));
  } catch (const std::exception& error) {
    abort_all_ranks(error.what(), 1);
  }
}

void print_start(const Setup& setup, const nlohmann::json& dataset_summary,
                 const std::string& dataset_name, int num_ranks) {
  std::printf(
      "%s: %lld nodes, %lld edges, %d features, %d classes (%s in %.2f s); %s on %d ranks\n",
      dataset_name.c_str(), dataset_summary.at("num_nodes").get<long long>(),
      dataset_summary.at("num_edges").get<long long>(),
      dataset_summary.at("feature_dim").get<int>(), dataset_summary.at("num_classes").get<int>(),
      setup.config.workload.source == "shards" ? "shards loaded" : "loaded", setup.load_seconds,
      setup.config.distribution.strategy.c_str(), num_ranks);
  std::printf("compute on %s, data over %s\n", setup.backend->name().c_str(),
              setup.transport.c_str());
  std::fflush(stdout);
}

// How training ended: a report, a run out of memory (a result too), or a divergence (none).
struct TrainingOutcome {
  DistributedReport report;
  std::string out_of_memory;
  bool diverged = false;
};

TrainingOutcome train(Setup& setup, Transport& data, int rank) {
  DistributedOptions options;
  options.record_trace = !setup.outputs.trace.empty();
  options.keep_first_plans = !setup.outputs.plans.empty();
  options.quiet = setup.outputs.quiet;
  options.backend = setup.backend.get();
  TrainingOutcome outcome;
  try {
    outcome.report = train_distributed(setup.config, setup.workload->context,
                                       std::move(setup.workload->shard), data, options);
  } catch (const OutOfMemoryError& error) {
    // Every rank stopped at the same iteration: a result, as simulate reports such a point.
    outcome.out_of_memory = error.what();
  } catch (const DivergenceError& error) {
    // Every rank saw the same loss and stopped after the same epoch: no result, a clean stop.
    if (rank == 0) std::fprintf(stderr, "run_experiment: %s\n", error.what());
    outcome.diverged = true;
  } catch (const std::exception& error) {
    abort_all_ranks(error.what(), 1);
  }
  return outcome;
}

// The result document's common part: the outcome, provenance, how it ran and on what.
nlohmann::json result_document(const Setup& setup, const TrainingOutcome& outcome,
                               const nlohmann::json& dataset_summary, int num_ranks, int argc,
                               char** argv) {
  nlohmann::json result = outcome.out_of_memory.empty()
                              ? outcome.report.to_json()
                              : nlohmann::json{{"out_of_memory", true},
                                               {"out_of_memory_reason", outcome.out_of_memory},
                                               {"epoch_seconds", nullptr}};
  result["provenance"] = provenance_json(argc, argv);
  result["provenance"]["versions"]["mpi"] = mpi_library_version();
  result["provenance"]["versions"]["openblas"] = openblas_get_config();
  result["provenance"]["versions"]["gpu"] = gpu_stack_version();
  // Threads and BLAS kernels decide CPU times: a rank bound to one core runs one OpenMP thread,
  // and an OpenBLAS that does not know the processor falls back to generic kernels.
  result["execution"] = {{"device", setup.backend->name()},
                         {"transport", setup.transport},
                         {"omp_threads", omp_get_max_threads()},
                         {"openblas_core", openblas_get_corename()}};
  result["config"] = to_json(setup.config);
  result["num_ranks"] = num_ranks;
  result["dataset"] = dataset_summary;
  result["load_seconds"] = setup.load_seconds;
  return result;
}

// Rank 0's outputs: the result alone for a run out of memory, else result, CSV and the optional
// trace and plans, all or none. Returns the exit code: 3 where the transport's bytes differ from
// the plans'.
int write_outputs(const Setup& setup, const TrainingOutcome& outcome,
                  const nlohmann::json& dataset_summary, const std::string& dataset_name,
                  int num_ranks, int argc, char** argv) {
  const DistributedReport& report = outcome.report;
  nlohmann::json result = result_document(setup, outcome, dataset_summary, num_ranks, argc, argv);
  if (!outcome.out_of_memory.empty()) {
    write_text_file_atomically(setup.outputs.result, result.dump(2) + "\n");
    std::printf("out of memory: %s\n", outcome.out_of_memory.c_str());
    return 0;
  }
  result["out_of_memory"] = false;
  if (setup.workload->context.strategy->full_graph()) {
    result["partition_costs"] = recorded_partition_costs(
        setup.config.distribution,
        measured_partition_costs(report, dataset_name, setup.config.distribution.partitioner));
  }
  std::vector<OutputFile> files = {{setup.outputs.result, result.dump(2) + "\n"},
                                   {setup.outputs.csv, epochs_csv(report)}};
  if (!setup.outputs.trace.empty()) {
    files.push_back(
        {setup.outputs.trace,
         nlohmann::json{{"traceEvents", report.trace}, {"displayTimeUnit", "ms"}}.dump() + "\n"});
  }
  if (!setup.outputs.plans.empty()) {
    files.push_back({setup.outputs.plans, encode_plans(report.first_plans, setup.outputs.plans)});
  }
  write_files_atomically(files);
  print_summary(setup.config, dataset_name, num_ranks, report, setup.outputs);
  return report.bytes_match ? 0 : 3;
}

int run(int argc, char** argv, MpiTransport& transport) {
  const int rank = transport.rank();
  const int num_ranks = transport.size();
  Setup setup;
  int exit_code = 0;
  const int host_rank = local_rank(MPI_COMM_WORLD);
  const std::string problem = setup_problem(
      [&] {
        prepare(argc, argv, num_ranks, rank, host_rank, ranks_per_host(MPI_COMM_WORLD), setup);
      },
      exit_code);
  transport.set_progress_timeout(setup.config.distribution.progress_timeout_seconds);
  if (const std::optional<int> code = setup_failure_code(transport, problem, exit_code)) {
    return *code;
  }
  if (setup.help) return 0;
  const std::unique_ptr<Transport> nccl = data_plane(setup);
  Transport& data = nccl != nullptr ? *nccl : static_cast<Transport&>(transport);
  // The slowest rank's loading time: a sharded run loads a shard per rank.
  setup.load_seconds = transport.max_over_ranks(setup.load_seconds);
  const nlohmann::json dataset_summary = setup.workload->dataset_summary;
  const std::string dataset_name = dataset_summary.at("name").get<std::string>();
  if (rank == 0) print_start(setup, dataset_summary, dataset_name, num_ranks);
  const TrainingOutcome outcome = train(setup, data, rank);
  if (outcome.diverged) return 1;
  if (rank != 0) return 0;
  try {
    return write_outputs(setup, outcome, dataset_summary, dataset_name, num_ranks, argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "run_experiment: %s\n", error.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    keep_freed_memory_for_reuse();
    MpiSession session(&argc, &argv);
    int code = 0;
    {
      MpiTransport transport;
      // PyTorch-BigGraph trains embeddings, not a GNN: a workload and options of its own.
      code = asks_for_pbg(argc, argv) ? run_pbg_experiment(argc, argv, transport)
                                      : run(argc, argv, transport);
    }
    return code;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "run_experiment: %s\n", error.what());
    return 1;
  }
}
