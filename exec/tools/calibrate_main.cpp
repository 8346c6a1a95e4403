// calibrate: fits the cost model and the network factors on this machine and writes the
// calibration file the simulator reads (mpirun -np 2 calibrate). Compute ops are timed through
// run_experiment's code (exec/calibration/op_benchmark.hpp) over a range of sizes, every costed
// op kind fitted as fixed cost + work / rate; the transport is timed with a ping-pong between
// ranks 0 and 1 (latency, bandwidth) and the collectives plans use, compared with the fitted
// per-step model. The file records provenance, the fitted model, the network, and every sample
// with its prediction and residual; a table of the residuals is printed. Calibrate with the
// OMP_NUM_THREADS you run experiments with: the rates are per rank at that thread count.
// `--device cuda` times the compute ops on each rank's GPU through the same executor (the CUDA
// backend), and `--transport nccl` times the transfers over NCCL: a GPU calibration file.
#include <cblas.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <fstream>
#include <optional>

#include "exec/backends.hpp"
#include "exec/calibration/bucket_benchmark.hpp"
#include "exec/calibration/device_copy_benchmark.hpp"
#include "exec/calibration/op_benchmark.hpp"
#include "exec/calibration/private_cache.hpp"
#include "exec/calibration/speed_probe.hpp"
#include "exec/calibration/transport_benchmark.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "sim/cost_model/cache_fit.hpp"
#include "sim/cost_model/cost_fit.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/statistics.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

struct Settings {
  std::string output = "results/calibration.json";
  std::string device = "cpu";
  std::string transport = "mpi";
  bool quick = false;
  std::string probe;  // a calibration to compare this machine's speed with, instead of calibrating
  std::uint64_t seed = 1;
  std::int64_t num_nodes = 0;
  double average_degree = 16;
  ComputeRepetitions compute;
  TransferRepetitions transfer;
  std::vector<std::int64_t> ping_pong_bytes;
  std::vector<std::int64_t> all_to_all_bytes;
  std::vector<std::int64_t> all_reduce_bytes;

  nlohmann::json to_json(int num_ranks, std::size_t num_cases) const {
    return {{"quick", quick},
            {"device", device},
            {"transport", transport},
            {"seed", seed},
            {"ranks", num_ranks},
            {"omp_threads", omp_get_max_threads()},
            {"graph",
             {{"generator", "csbm"}, {"nodes", num_nodes}, {"average_degree", average_degree}}},
            {"compute_cases", num_cases},
            {"compute_repetitions", {{"warmup", compute.warmup}, {"timed", compute.timed}}},
            {"transfer_repetitions",
             {{"warmup", transfer.warmup},
              {"min_calls", transfer.min_calls},
              {"max_calls", transfer.max_calls},
              {"budget_bytes", transfer.budget_bytes}}},
            {"ping_pong_bytes", ping_pong_bytes},
            {"all_to_all_bytes", all_to_all_bytes},
            {"all_reduce_bytes", all_reduce_bytes}};
  }
};

std::optional<Settings> parse(int argc, char** argv) {
  po::options_description options("mpirun -np 2 calibrate [options]");
  options.add_options()("help,h", "show this help")(
      "output,o", po::value<std::string>()->default_value("results/calibration.json"),
      "calibration file (JSON)")("quick", "a few small sizes and repetitions (for tests)")(
      "probe", po::value<std::string>(),
      "instead of calibrating, time a few of the compute cases of this calibration file again "
      "and print, as a JSON line, how much longer they take now (compute_time_ratio, for "
      "simulate's compute_time_factor); use the --quick the file was taken with")(
      "device", po::value<std::string>()->default_value("cpu"),
      "where the compute ops run: cpu, or cuda (a GPU calibration)")(
      "transport", po::value<std::string>()->default_value("mpi"),
      "what the transfers are timed over: mpi, or nccl")(
      "seed", po::value<std::uint64_t>()->default_value(1), "graph, weights and sampling")(
      "nodes", po::value<std::int64_t>(),
      "nodes of the generated graph the ops run on (default 262144, so that feature tables and "
      "batch tensors outgrow the last-level cache as real workloads do; 4096 with --quick)");
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return std::nullopt;
  const po::variables_map& vm = command_line->values;
  Settings settings;
  settings.output = vm["output"].as<std::string>();
  check_output_path(settings.output, "--output");
  settings.quick = vm.count("quick") != 0;
  if (vm.count("probe") != 0) settings.probe = vm["probe"].as<std::string>();
  settings.device = vm["device"].as<std::string>();
  settings.transport = vm["transport"].as<std::string>();
  require(settings.device == "cpu" || settings.device == "cuda", "--device", "must be cpu or cuda");
  require(settings.transport == "mpi" || settings.transport == "nccl", "--transport",
          "must be mpi or nccl");
  settings.seed = vm["seed"].as<std::uint64_t>();
  settings.num_nodes =
      vm.count("nodes") != 0 ? vm["nodes"].as<std::int64_t>() : (settings.quick ? 4096 : 262144);
  require(settings.num_nodes >= 2048, "--nodes", "must be at least 2048 (the largest batch)");
  if (settings.quick) {
    settings.compute = {1, 2};
    settings.transfer = {1, 2, 20, 16.0 * kMiB};
    settings.ping_pong_bytes = {0, kKiB, 64 * kKiB, kMiB, 4 * kMiB};
    settings.all_to_all_bytes = {kKiB, kMiB};
    settings.all_reduce_bytes = {4 * kKiB, kMiB};
  } else {
    settings.compute = {2, 10};
    settings.transfer = {2, 5, 200, 512.0 * kMiB};
    settings.ping_pong_bytes = {0,    64,       kKiB,      16 * kKiB, 256 * kKiB,
                                kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB};
    settings.all_to_all_bytes = {kKiB, 64 * kKiB, kMiB, 16 * kMiB};
    settings.all_reduce_bytes = {4 * kKiB, 256 * kKiB, 4 * kMiB, 32 * kMiB};
  }
  return settings;
}

// Ranks 0 and 1 as a transport of their own, over `transport` (null on other ranks). Collective.
std::unique_ptr<Transport> pair_transport(const std::string& transport, int local) {
  MPI_Comm split = pair_communicator(MPI_COMM_WORLD, 0, 1);
  std::unique_ptr<Transport> pair;
  if (split != MPI_COMM_NULL) {
    pair = make_data_transport(transport, split, local);
    MPI_Comm_free(&split);
  }
  return pair;
}

std::string rate_text(double rate, double unit) {
  if (rate == 0) return "-";
  if (rate == kUnresolvedRate) return "free";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", rate / unit);
  return text;
}

void print_fits(const std::array<std::optional<CostFit>, kNumOpKinds>& fits,
                const SamplesByKind& samples) {
  std::printf("\n%-17s %7s %9s %10s %10s %8s %9s %9s %9s %8s %8s %8s %8s\n", "op kind", "samples",
              "fixed us", "dense GF/s", "sparse GF/s", "mem GB/s", "Medges/s", "Mnodes/s",
              "Mentries/s", "Mnear/s", "Mfar/s", "med|res|", "max|res|");
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    if (!fits[k]) continue;
    const OpCost& c = fits[k]->cost;
    std::printf("%-17s %7zu %9.2f %10s %10s %8s %9s %9s %9s %8s %8s %7.1f%% %7.1f%%\n",
                std::string(to_string(static_cast<OpKind>(k))).c_str(), samples[k].size(),
                1e6 * c.fixed_seconds, rate_text(c.dense_flops_per_second, 1e9).c_str(),
                rate_text(c.sparse_flops_per_second, 1e9).c_str(),
                rate_text(c.memory_bytes_per_second, 1e9).c_str(),
                rate_text(c.sampled_edges_per_second, 1e6).c_str(),
                rate_text(c.planned_nodes_per_second, 1e6).c_str(),
                rate_text(c.sparse_entries_per_second, 1e6).c_str(),
                rate_text(c.near_cache_misses_per_second, 1e6).c_str(),
                rate_text(c.far_cache_misses_per_second, 1e6).c_str(),
                100 * fits[k]->summary.median_abs_relative_residual,
                100 * fits[k]->summary.max_abs_relative_residual);
  }
}

void print_network(const NetworkFit& fit, std::span<const TransferSample> ping_pongs,
                   std::span<const CollectiveSample> collectives) {
  std::printf("\nnetwork: latency %.2f us, bandwidth %.2f GB/s (ping-pong, ranks 0 and 1)\n",
              1e6 * fit.network.latency_seconds, fit.network.bandwidth_bytes_per_second / 1e9);
  std::printf("%-12s %12s %12s %12s %8s\n", "", "bytes", "measured us", "model us", "residual");
  for (std::size_t i = 0; i < ping_pongs.size(); ++i) {
    std::printf("%-12s %12.0f %12.2f %12.2f %7.1f%%\n", "ping-pong", ping_pongs[i].bytes,
                1e6 * ping_pongs[i].seconds, 1e6 * fit.predicted_seconds[i],
                100 * fit.relative_residuals[i]);
  }
  for (const CollectiveSample& sample : collectives) {
    const double predicted = predicted_seconds(sample, fit.network);
    std::printf("%-12s %12lld %12.2f %12.2f %7.1f%%\n", sample.collective.c_str(),
                static_cast<long long>(sample.payload_bytes), 1e6 * sample.seconds, 1e6 * predicted,
                100 * (predicted - sample.seconds) / sample.seconds);
  }
}

// A quantity measured once per case of several ranks (the ranks' speed spread, ops' jitter), as
// (case, value).
using PerCase = std::vector<std::pair<std::string, double>>;

// The median over the cases, recorded in `fits[name]` with every case's value.
double median_over_cases(const PerCase& cases, const std::string& name, nlohmann::json& fits) {
  nlohmann::json cases_json = nlohmann::json::array();
  std::vector<double> values;
  for (const auto& [label, value] : cases) {
    cases_json.push_back({{"case", label}, {name, value}});
    values.push_back(value);
  }
  const double middle = median(values);
  fits[name] = {{"cases", cases_json}, {"median", middle}};
  return middle;
}

// The 1-minute load average before measuring (-1 where /proc/loadavg is missing): other
// processes on the machine inflate every timing.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1;
}

// The op kind only plans with peers have (the assembly of local and received rows).
constexpr OpKind kKindOnlyPeersRun = OpKind::scatter_rows;

// With one rank there is no network to measure, and no input is assembled from several ranks'
// rows (kKindOnlyPeersRun): both are kept from the calibration already in the output file.
Calibration calibration_to_keep(const std::string& output) {
  const std::string why =
      "one rank measures no network and assembles no rows from peers, and " + output + " has ";
  Calibration kept;
  try {
    kept = read_calibration(output);
  } catch (const Error& error) {
    throw ConfigError(
        "ranks", why + "no calibration to keep (" + error.what() + "): run under mpirun -np 2");
  }
  if (!kept.cost_model.cost(kKindOnlyPeersRun)) {
    throw ConfigError("ranks", why + "no scatter_rows cost to keep: run under mpirun -np 2");
  }
  return kept;
}

// A kept calibration's fit report of `name`, marked with the file it was kept from.
nlohmann::json kept_fit(const Calibration& kept, const std::string& name,
                        const std::string& output) {
  nlohmann::json fit = kept.fits.is_object() && kept.fits.contains(name) ? kept.fits[name]
                                                                         : nlohmann::json::object();
  fit["kept_from"] = output;
  return fit;
}

// The probe (--probe): the probe cases timed as calibration times them, against the reference
// calibration's samples of the same ops; one JSON line on rank 0.
int probe_speed(const Settings& settings, Transport& self, Transport& world,
                ComputeBackend& backend, int argc, char** argv) {
  const double load_before = load_average();
  const Calibration reference = read_calibration(settings.probe);
  SamplesByKind samples;
  OpBenchmark benchmark(settings.num_nodes, settings.average_degree, settings.seed);
  for (const ComputeCase& probe : probe_cases(settings.quick)) {
    benchmark.run(probe, settings.compute, self, world, backend, samples);
  }
  if (world.rank() != 0) return 0;
  const SpeedProbe probe = compare_with_calibration(samples, reference.fits);
  std::printf("compute takes %.3f times as long as when %s was taken (%d ops)\n",
              probe.compute_time_ratio(), settings.probe.c_str(), probe.matched_ops);
  nlohmann::json line = probe.to_json();
  line["probe"] = settings.probe;
  line["provenance"] = provenance_json(argc, argv);
  line["load_average_before"] = load_before;
  std::printf("%s\n", line.dump().c_str());
  return 0;
}

// What a rank measured: compute samples by op kind, the ranks' speed spread and ops' jitter per
// case, the transfers and the copies to its device; rank 0 fits its own.
struct Measurements {
  SamplesByKind samples;
  std::vector<TransferSample> ping_pongs;
  std::vector<CollectiveSample> collectives;
  std::vector<TransferSample> device_copies;
  PerCase rank_speed_spreads;
  PerCase compute_jitters;
};

// What rank 0 says before measuring: the setting, and anything that makes the timings doubtful.
void print_start(const Settings& settings, int num_ranks, const std::string& backend,
                 std::size_t num_cases, double load_before, bool keeps_calibration) {
  std::printf(
      "calibrate: %d ranks, %d OpenMP threads per rank, compute on %s, transfers over %s, %zu "
      "compute cases on a %lld-node graph%s\n",
      num_ranks, omp_get_max_threads(), backend.c_str(), settings.transport.c_str(), num_cases,
      static_cast<long long>(settings.num_nodes), settings.quick ? " (quick)" : "");
  if (load_before > 0.5) {
    std::printf(
        "warning: load average %.2f before calibrating: other processes compete for the "
        "cores and inflate the timings\n",
        load_before);
  }
  if (keeps_calibration) {
    std::printf(
        "one rank: compute only; the network and scatter_rows calibrations of %s are kept\n",
        settings.output.c_str());
  }
  std::fflush(stdout);
}

// Times every compute case on every rank (collective), with rank 0 reporting each as it ends.
void time_compute_cases(const Settings& settings, const std::vector<ComputeCase>& cases,
                        Transport& self, Transport& world, ComputeBackend& backend,
                        Measurements& measured) {
  OpBenchmark benchmark(settings.num_nodes, settings.average_degree, settings.seed);
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const CaseTiming timing =
        benchmark.run(cases[c], settings.compute, self, world, backend, measured.samples);
    if (timing.rank_speed_spread) {
      measured.rank_speed_spreads.emplace_back(cases[c].describe(), *timing.rank_speed_spread);
    }
    if (timing.compute_jitter) {
      measured.compute_jitters.emplace_back(cases[c].describe(), *timing.compute_jitter);
    }
    if (world.rank() == 0) {
      std::printf("[%3zu/%zu] %-40s %9.2f ms/iteration\n", c + 1, cases.size(),
                  cases[c].describe().c_str(), 1e3 * timing.iteration_seconds);
      std::fflush(stdout);
    }
  }
}

// With two ranks or more: the ping-pong between ranks 0 and 1 and the collectives (collective).
void time_network(const Settings& settings, Transport& world, Transport& collective, int local,
                  Measurements& measured) {
  if (world.size() < 2) return;
  const std::unique_ptr<Transport> pair = pair_transport(settings.transport, local);
  if (pair != nullptr) {
    measured.ping_pongs = ping_pong(*pair, settings.ping_pong_bytes, settings.transfer);
  }
  world.barrier();
  measured.collectives = time_all_to_all(collective, settings.all_to_all_bytes, settings.transfer);
  for (CollectiveSample& sample :
       time_all_reduce(collective, settings.all_reduce_bytes, settings.transfer)) {
    measured.collectives.push_back(sample);
  }
}

// The caches a rank's row reads find (cache_fit.hpp): the near level a CPU core's private cache
// as the machine reports it, the far level fitted to the samples (both fitted where the machine
// does not say, and on a GPU), whose cache misses it then sets. The cost model records the
// machine's: each of the `num_ranks` calibrating CPU ranks (on this one machine) had its share; a
// GPU's rows find its own cache.
void fit_cache(SamplesByKind& samples, int num_ranks, bool gpu, Calibration& calibration) {
  // A GPU's cache is not the host core's.
  const double near_bytes = gpu ? 0 : private_cache_bytes();
  const CacheFit fit = fit_caches(samples, candidate_caches(near_bytes));
  for (std::vector<CostSample>& kind : samples) set_cache_misses(kind, fit.per_rank);
  const int sharers = gpu ? 1 : num_ranks;
  calibration.cost_model.set_caches(
      {fit.per_rank.near_bytes * sharers, fit.per_rank.far_bytes * sharers});
  calibration.fits["caches"] = fit.to_json();
  calibration.fits["caches"]["near_bytes_from"] =
      near_bytes > 0 ? "the core's private cache (/sys/devices/system/cpu/cpu0/cache)" : "fitted";
  std::printf(
      "\ncaches for rows read where indices point, per rank of %d (the best fit of %zu): "
      "near %.2f MiB, far %.2f MiB (0: not modelled)\n",
      sharers, fit.objective_by_candidate.size(), fit.per_rank.near_bytes / kMiB,
      fit.per_rank.far_bytes / kMiB);
}

// Fits every costed op kind to its samples, or keeps scatter_rows from `kept` where one rank ran:
// its own assemblies (evaluation's) place local rows only, not rows that arrived from peers out of
// cache. Prints the fits.
void fit_compute(const Measurements& measured, int num_ranks, bool gpu,
                 const std::optional<Calibration>& kept, const std::string& output,
                 Calibration& calibration) {
  SamplesByKind samples = measured.samples;
  fit_cache(samples, num_ranks, gpu, calibration);
  std::array<std::optional<CostFit>, kNumOpKinds> fits;
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (!is_costed(kind)) continue;
    const std::string name(to_string(kind));
    if (kept && kind == kKindOnlyPeersRun) {
      calibration.cost_model.set(kind, *kept->cost_model.cost(kind));
      calibration.fits[name] = kept_fit(*kept, name, output);
      continue;
    }
    if (samples[k].empty()) throw Error("no compute case ran a '" + name + "' op");
    try {
      fits[k] = fit_op_cost(samples[k]);
    } catch (const Error& error) {
      throw Error(name + ": " + error.what());
    }
    calibration.cost_model.set(kind, fits[k]->cost);
    calibration.fits[name] = fits[k]->to_json(samples[k]);
  }
  print_fits(fits, samples);
}

// How far the ranks' speeds and an op's times varied: the medians over the cases of several ranks.
void fit_variation(const Measurements& measured, int num_ranks, Calibration& calibration) {
  if (!measured.rank_speed_spreads.empty()) {
    calibration.rank_speed_spread =
        median_over_cases(measured.rank_speed_spreads, "rank_speed_spread", calibration.fits);
    std::printf(
        "\nrank speed spread (the ranks' compute times, %zu cases of %d ranks): median %.3f\n",
        measured.rank_speed_spreads.size(), num_ranks, calibration.rank_speed_spread);
    if (calibration.rank_speed_spread > kLargestRankSpeedSpread) {
      std::printf(
          "warning: a rank speed spread of %.3f is wider than the simulator models (%.2f): other "
          "work loaded the machine while it calibrated; recorded as %.2f, the measurement is in "
          "fits.rank_speed_spread\n",
          calibration.rank_speed_spread, kLargestRankSpeedSpread, kLargestRankSpeedSpread);
      calibration.rank_speed_spread = kLargestRankSpeedSpread;
    }
  }
  if (!measured.compute_jitters.empty()) {
    calibration.compute_jitter =
        median_over_cases(measured.compute_jitters, "compute_jitter", calibration.fits);
    std::printf(
        "compute jitter (an op's log time from run to run, %zu cases of %d ranks): "
        "median %.3f\n",
        measured.compute_jitters.size(), num_ranks, calibration.compute_jitter);
  }
}

// The network (fitted, or kept where one rank measured none) and the host-to-GPU link.
void fit_links(const Measurements& measured, const std::optional<Calibration>& kept,
               const std::string& output, Calibration& calibration) {
  if (kept) {
    calibration.network = kept->network;
    calibration.fits["network"] = kept_fit(*kept, "network", output);
  } else {
    const NetworkFit network = fit_network(measured.ping_pongs);
    calibration.network = network.network;
    calibration.fits["network"] = {
        {"ping_pong", network.to_json(measured.ping_pongs)},
        {"collectives", collectives_json(measured.collectives, network.network)}};
    print_network(network, measured.ping_pongs, measured.collectives);
  }
  if (!measured.device_copies.empty()) {
    const NetworkFit link = fit_network(measured.device_copies);
    calibration.device_link = link.network;
    calibration.fits["device_link"] = link.to_json(measured.device_copies);
    std::printf("\ndevice link: latency %.2f us, bandwidth %.2f GB/s (page-locked host to GPU)\n",
                1e6 * link.network.latency_seconds, link.network.bandwidth_bytes_per_second / 1e9);
  }
}

int calibrate(int argc, char** argv) {
  // As run_experiment does, so that the ops are timed under the same allocator.
  keep_freed_memory_for_reuse();
  MpiSession session(&argc, &argv);
  MpiTransport world;
  MpiTransport self(MPI_COMM_SELF);
  const int rank = world.rank();
  const int num_ranks = world.size();
  const std::optional<Settings> parsed = parse(argc, argv);
  if (!parsed) return 0;
  const Settings& settings = *parsed;
  const int local = local_rank(MPI_COMM_WORLD);
  // ConfigError (exit 2, naming the option) when the device is not there.
  const std::unique_ptr<ComputeBackend> backend = make_compute_backend(settings.device, local);
  // The collectives' transport: MPI (world itself) or NCCL over the same ranks.
  std::unique_ptr<Transport> nccl_world;
  if (settings.transport == "nccl") {
    nccl_world = make_data_transport(settings.transport, MPI_COMM_WORLD, local);
  }
  Transport& collective = nccl_world != nullptr ? *nccl_world : static_cast<Transport&>(world);
  if (!settings.probe.empty()) {
    try {
      return probe_speed(settings, self, world, *backend, argc, argv);
    } catch (const std::exception& error) {
      abort_all_ranks(error.what(), 1);
    }
  }
  std::optional<Calibration> kept;
  if (num_ranks == 1) kept = calibration_to_keep(settings.output);

  const std::vector<ComputeCase> cases = compute_cases(settings.quick, num_ranks);
  const double load_before = load_average();
  if (rank == 0) {
    print_start(settings, num_ranks, backend->name(), cases.size(), load_before, kept.has_value());
  }
  const Stopwatch total;
  Measurements measured;
  try {
    time_compute_cases(settings, cases, self, world, *backend, measured);
    time_train_bucket(settings.quick, settings.seed,
                      measured.samples[static_cast<std::size_t>(OpKind::train_bucket)]);
    if (backend->is_gpu()) {
      measured.device_copies = time_copies_to_device(*backend, default_device_copy_bytes(), 5);
    }
    time_network(settings, world, collective, local, measured);
  } catch (const std::exception& error) {
    abort_all_ranks(error.what(), 1);
  }
  if (rank != 0) return 0;

  Calibration calibration;
  fit_compute(measured, num_ranks, backend->is_gpu(), kept, settings.output, calibration);
  fit_variation(measured, num_ranks, calibration);
  fit_links(measured, kept, settings.output, calibration);
  calibration.provenance = provenance_json(argc, argv);
  calibration.provenance["versions"]["mpi"] = mpi_library_version();
  calibration.provenance["versions"]["openblas"] = openblas_get_config();
  calibration.provenance["versions"]["gpu"] = gpu_stack_version();
  calibration.provenance["device"] = backend->name();
  calibration.provenance["settings"] = settings.to_json(num_ranks, cases.size());
  calibration.provenance["settings"]["load_average_before"] = load_before;
  calibration.provenance["seconds"] = total.seconds();
  write_calibration(calibration, settings.output);
  std::printf("\ncalibration written to %s (%.1f s)\n", settings.output.c_str(), total.seconds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("calibrate", calibrate, argc, argv); }
