// simulate: predicts the epoch time of a strategy on a modelled cluster by replaying its plans in
// SimGrid. Takes the experiment description run_experiment takes, plus a cluster (preset or file,
// with overrides and an optional calibration), and sweeps any experiment or cluster field. Each
// point runs in a child process (SimGrid allows one engine per process), up to --jobs at once;
// results are a JSON file with provenance and a CSV, one row per point, and a summary table.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "sim/simulation.hpp"
#include "sim/tools/point_store.hpp"
#include "sim/tools/simulate_pbg.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

// The key under which the first point carries its Chrome trace from its process to the parent.
constexpr const char* kTraceKey = "chrome_trace";

constexpr const char* kClusterPrefix = "cluster.";

struct Sweep {
  std::string field;
  std::vector<std::string> values;
};

// One point of the sweep: its assignments (experiment fields, then cluster fields).
struct Point {
  std::vector<std::pair<std::string, std::string>> assignments;
  std::string label() const {
    std::string text;
    for (const auto& [field, value] : assignments)
      text += (text.empty() ? "" : " ") + field + "=" + value;
    return text.empty() ? "base" : text;
  }
};

Sweep parse_sweep(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw ConfigError("sweep", "'" + text + "' is not FIELD=V1,V2,...");
  }
  Sweep sweep{text.substr(0, equals), {}};
  std::string rest = text.substr(equals + 1);
  std::size_t begin = 0;
  while (begin <= rest.size()) {
    const auto comma = rest.find(',', begin);
    const std::string value =
        rest.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (value.empty()) throw ConfigError("sweep " + sweep.field, "has an empty value");
    sweep.values.push_back(value);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return sweep;
}

std::vector<Point> sweep_points(const std::vector<Sweep>& sweeps) {
  std::vector<Point> points = {Point{}};
  for (const Sweep& sweep : sweeps) {
    std::vector<Point> next;
    for (const Point& point : points) {
      for (const std::string& value : sweep.values) {
        Point extended = point;
        extended.assignments.emplace_back(sweep.field, value);
        next.push_back(std::move(extended));
      }
    }
    points = std::move(next);
  }
  return points;
}

bool is_cluster_field(const std::string& field) { return field.rfind(kClusterPrefix, 0) == 0; }

struct Setup {
  ExperimentConfig base;
  std::string cluster_source;
  std::vector<std::string> cluster_settings;
  std::string calibration_file;
  std::string replay_plans;          // recorded plans to replay instead of planning the experiment
  std::vector<Plan> recorded_plans;  // read once, before the points' processes fork
  int iterations_per_epoch = 0;
  std::vector<Point> points;
  SimulationOptions options;
  int jobs = 1;
  std::string output;
  std::string csv;
  std::string trace;
  bool quiet = false;
  std::string points_dir;                 // each point's result kept there (resumable, shardable)
  std::optional<Shard> shard;             // this process's share of the points
  std::optional<PointStore> point_store;  // over points_dir, once the sweep is known
};

ExperimentConfig point_config(const Setup& setup, const Point& point) {
  nlohmann::json document = to_json(setup.base);
  for (const auto& [field, value] : point.assignments) {
    if (!is_cluster_field(field)) set_json_path(document, field, value);
  }
  return experiment_config_from_json(document);
}

ClusterSpec point_cluster(const Setup& setup, const Point& point) {
  std::optional<Calibration> calibration;
  if (!setup.calibration_file.empty()) calibration = read_calibration(setup.calibration_file);
  std::vector<std::string> settings;
  // The calibrated machine's ranks differ, and its ops vary, as calibration measured, unless a
  // setting says otherwise.
  if (calibration) {
    settings.push_back("rank_speed_spread=" +
                       nlohmann::json(calibration->rank_speed_spread).dump());
    settings.push_back("compute_jitter=" + nlohmann::json(calibration->compute_jitter).dump());
  }
  settings.insert(settings.end(), setup.cluster_settings.begin(), setup.cluster_settings.end());
  for (const auto& [field, value] : point.assignments) {
    if (is_cluster_field(field))
      settings.push_back(field.substr(std::strlen(kClusterPrefix)) + "=" + value);
  }
  ClusterSpec cluster = load_cluster(setup.cluster_source, settings);
  if (calibration) cluster = apply_calibration(std::move(cluster), *calibration);
  return cluster;
}

// Runs one point in a child process and returns its result document. The child loads the workload
// itself: the parent never starts OpenMP threads, which a forked child could not use.
nlohmann::json run_point(const Setup& setup, const Point& point, std::size_t index,
                         bool show_progress) {
  const ClusterSpec cluster = point_cluster(setup, point);
  nlohmann::json document = {{"point", point.label()},
                             {"assignments", nlohmann::json::object()},
                             {"cluster", cluster.to_json()},
                             {"num_ranks", cluster.num_ranks()}};
  for (const auto& [field, value] : point.assignments) document["assignments"][field] = value;
  SimulationResult result;
  if (!setup.replay_plans.empty()) {
    const std::vector<Plan>& plans = setup.recorded_plans;
    document["strategy"] = plans.empty() ? "" : plans.front().strategy;
    document["config"] = nullptr;
    document["replayed_plans"] = {{"file", setup.replay_plans},
                                  {"plans", plans.size()},
                                  {"measured_durations", setup.options.use_measured_durations}};
    // Recorded plans are posted as this command's distribution.all_to_all_block_steps says.
    SimulationOptions options = setup.options;
    options.all_to_all_block_steps = setup.base.distribution.all_to_all_block_steps;
    result = simulate_recorded_plans(plans, cluster, setup.iterations_per_epoch, options);
  } else {
    const ExperimentConfig config = point_config(setup, point);
    const Stopwatch loading;
    const Dataset dataset = load_workload(
        config.workload, show_progress ? stderr_step_progress("simulate") : StepProgress{});
    document["load_seconds"] = loading.seconds();
    SimulationOptions options = setup.options;
    options.all_to_all_block_steps = config.distribution.all_to_all_block_steps;
    if (show_progress) {
      options.progress = [index](int done, int total) {
        std::fprintf(stderr, "\r  point %zu: planned %d/%d iterations", index + 1, done, total);
        if (done == total) std::fprintf(stderr, "\n");
      };
    }
    result = simulate_experiment(config, dataset, cluster, options);
    document["strategy"] = config.distribution.strategy;
    document["config"] = to_json(config);
    document["dataset"] = dataset.summary();
  }
  document["result"] = result.to_json();
  // Handed to the parent with the point, which writes it with the results or not at all.
  if (!setup.trace.empty() && index == 0) document[kTraceKey] = chrome_trace(result.trace);
  return document;
}

struct Child {
  pid_t pid;
  int read_fd;
  std::size_t index;
};

std::string read_all(int fd) {
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fd);
  return text;
}

// The child writes "ok <json>" or "error <code> <message>" to its pipe.
Child start_child(const Setup& setup, std::size_t index, bool progress) {
  int fds[2];
  if (pipe(fds) != 0) throw SystemError(std::string("pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw SystemError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string message;
    try {
      message = "ok " + run_point(setup, setup.points[index], index, progress).dump();
    } catch (const ConfigError& error) {
      message = std::string("error 2 ") + error.what();
    } catch (const std::exception& error) {
      message = std::string("error 1 ") + error.what();
    }
    std::size_t written = 0;
    while (written < message.size()) {
      const ssize_t n = write(fds[1], message.data() + written, message.size() - written);
      if (n <= 0 && errno != EINTR) _exit(1);
      if (n > 0) written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], index};
}

std::string points_csv(const std::vector<nlohmann::json>& results) {
  std::ostringstream csv;
  csv << "point,strategy,num_ranks,out_of_memory,epoch_seconds,epoch_low_seconds,"
         "epoch_high_seconds,sampled_iterations,iterations_per_epoch";
  for (std::size_t p = 0; p < kNumSimulatedParts; ++p)
    csv << ",mean_" << simulated_part_name(p) << "_seconds";
  for (std::size_t k = 0; k < kNumTrafficKinds; ++k)
    csv << ",mean_" << to_string(static_cast<Traffic>(k)) << "_bytes_sent";
  csv << ",max_device_peak_bytes\n";
  for (const nlohmann::json& doc : results) {
    const nlohmann::json& r = doc["result"];
    const bool out_of_memory = r["out_of_memory"].get<bool>();
    // Out of memory, or stopped by a failure: no epoch to report.
    const bool no_epoch = r["epoch_seconds"].is_null();
    csv << '"' << doc["point"].get<std::string>() << "\"," << doc["strategy"].get<std::string>()
        << "," << doc["num_ranks"].get<int>() << "," << (out_of_memory ? 1 : 0) << ",";
    if (!no_epoch) {
      const nlohmann::json& estimate = r["epoch_estimate"];
      csv << r["epoch_seconds"].get<double>() << ",";
      if (!estimate["interval_95_seconds"].is_null()) {
        csv << estimate["interval_95_seconds"][0].get<double>() << ","
            << estimate["interval_95_seconds"][1].get<double>();
      } else {
        csv << ",";
      }
      csv << "," << estimate["sampled_iterations"].get<int>() << ","
          << estimate["iterations_per_epoch"].get<int>();
    } else {
      csv << ",,,,";
    }
    for (std::size_t p = 0; p < kNumSimulatedParts; ++p) {
      csv << ",";
      if (!no_epoch)
        csv << r["breakdown_mean_seconds"][std::string(simulated_part_name(p))].get<double>();
    }
    for (std::size_t k = 0; k < kNumTrafficKinds; ++k) {
      csv << ",";
      if (no_epoch) continue;
      double sum = 0;
      for (const auto& rank : r["ranks"]) {
        sum += rank["bytes_sent_per_epoch"][std::string(to_string(static_cast<Traffic>(k)))]
                   .get<double>();
      }
      csv << static_cast<std::int64_t>(sum / static_cast<double>(r["ranks"].size()));
    }
    std::int64_t peak = 0;
    for (const auto& rank : r["ranks"])
      peak = std::max(peak, rank["device_peak_bytes"].get<std::int64_t>());
    csv << "," << peak << "\n";
  }
  return csv.str();
}

// "exact" for a whole epoch, "[low, high]" for a sample's 95 % interval, "n/a" without one.
std::string interval_text(const nlohmann::json& estimate) {
  if (estimate["exact"].get<bool>()) return "exact";
  if (estimate["interval_95_seconds"].is_null()) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, "[%.3f, %.3f]", estimate["interval_95_seconds"][0].get<double>(),
                estimate["interval_95_seconds"][1].get<double>());
  return text;
}

// What a failure did: " stopped at 3.000 s: rank 5 failed at 1.000 s; 2 iterations done; ranks:
// 3 aborted 1 failed 12 waiting", or " finished despite: ..." when every rank still finished.
std::string failure_text(const nlohmann::json& failure) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(3);
  const bool completed = failure["completed"].get<bool>();
  if (completed) {
    text << " finished despite: ";
  } else {
    text << " stopped at " << failure["stopped_seconds"].get<double>() << " s: ";
  }
  for (std::size_t f = 0; f < failure["failures"].size(); ++f) {
    const nlohmann::json& event = failure["failures"][f];
    text << (f == 0 ? "" : ", ") << event["part"].get<std::string>() << " failed at "
         << event["at_seconds"].get<double>() << " s";
  }
  if (completed) return text.str();
  text << "; " << failure["iterations_completed"].get<int>() << " iterations done; ranks:";
  std::map<std::string, int> states;
  for (const auto& rank : failure["ranks"]) ++states[rank["state"].get<std::string>()];
  for (const auto& [state, count] : states) text << " " << count << " " << state;
  return text.str();
}

// A large replay's cost per simulated transfer: what decides how far the simulator scales
// (docs/simulator.md, "Hundreds of machines").
void print_replay_cost(const nlohmann::json& result) {
  constexpr std::int64_t kLargeReplayTransfers = 100'000;
  if (!result.contains("communications")) return;
  const auto transfers = result["communications"].get<std::int64_t>();
  if (transfers < kLargeReplayTransfers) return;
  const double seconds = result["replay_seconds"].get<double>();
  std::printf("%-44s replay %.1f s for %.2f M transfers: %.1f us each\n", "", seconds,
              static_cast<double>(transfers) / 1e6, 1e6 * seconds / static_cast<double>(transfers));
}

void print_row(const nlohmann::json& doc) {
  const nlohmann::json& r = doc["result"];
  std::printf("%-44s %-8s %5d ", doc["point"].get<std::string>().c_str(),
              doc["strategy"].get<std::string>().c_str(), doc["num_ranks"].get<int>());
  if (r["out_of_memory"].get<bool>()) {
    std::printf(" out of memory: %s\n", r["out_of_memory_reason"].get<std::string>().c_str());
    return;
  }
  if (r.contains("failure")) {
    std::printf("%s\n", failure_text(r["failure"]).c_str());
    if (r["epoch_seconds"].is_null()) return;
    std::printf("%-59s", "");
  }
  std::printf("%9.3f %-19s", r["epoch_seconds"].get<double>(),
              interval_text(r["epoch_estimate"]).c_str());
  for (std::size_t p = 0; p < kNumSimulatedParts; ++p) {
    std::printf(" %8.3f",
                r["breakdown_mean_seconds"][std::string(simulated_part_name(p))].get<double>());
  }
  double sent = 0;
  for (const auto& rank : r["ranks"]) sent += rank["bytes_sent_per_epoch"]["total"].get<double>();
  std::printf(" %10.1f\n", sent / static_cast<double>(r["ranks"].size()) / 1e6);
  if (r.contains("evaluation")) {
    double evaluation_sent = 0;
    for (const auto& rank : r["evaluation"]["bytes_sent_per_rank"])
      evaluation_sent += rank["total"].get<double>();
    std::printf("%-44s evaluation %.3f s, %.1f MB sent per rank\n", "",
                r["evaluation"]["seconds"].get<double>(),
                evaluation_sent / static_cast<double>(r["ranks"].size()) / 1e6);
  }
  print_replay_cost(r);
}

void print_header() {
  std::printf("%-44s %-8s %5s %9s %-19s", "point", "strategy", "ranks", "epoch s", "95 % interval");
  for (std::size_t p = 0; p < kNumSimulatedParts; ++p)
    std::printf(" %8s", std::string(simulated_part_name(p)).substr(0, 8).c_str());
  std::printf(" %10s\n", "MB sent/rk");
}

po::options_description simulate_options() {
  po::options_description options("simulate [options]");
  options.add_options()("help,h", "show this help")(
      "cluster", po::value<std::string>()->default_value("p3-cluster"),
      "cluster preset (sim/presets/<name>.json) or JSON file")(
      "cluster-set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field: FIELD=VALUE (nic.bandwidth_gbps=25, machines=8)")(
      "calibration", po::value<std::string>(),
      "calibration file (from calibrate): CPU ranks timed as the calibrated machine")(
      "sweep", po::value<std::vector<std::string>>()->composing(),
      "FIELD=V1,V2,...: an experiment field (model.hidden) or cluster.FIELD; several sweeps "
      "make a grid")("iterations", po::value<int>()->default_value(0),
                     "simulate k iterations spread over the epoch (the first, the last, one per "
                     "stratum between) and extrapolate with a 95 % interval (0 = all)")(
      "jobs,j", po::value<int>()->default_value(1), "points simulated at once")(
      "output,o", po::value<std::string>()->default_value("results/simulate.json"),
      "result file (JSON)")("csv", po::value<std::string>(),
                            "one row per point; default: the result's name with .csv")(
      "trace", po::value<std::string>(), "Chrome trace of the first point's simulated timeline")(
      "replay-plans", po::value<std::string>(),
      "replay the plans a real run recorded (run_experiment --plans) instead of planning the "
      "experiment; only cluster fields can be swept")(
      "measured-durations",
      "with --replay-plans: compute ops take their recorded durations, not the cost model's")(
      "evaluation",
      "also predict one evaluation after the epoch: the full-neighbourhood inference plans "
      "run_experiment runs (time and bytes per rank)")(
      "iterations-per-epoch", po::value<int>()->default_value(0),
      "with --replay-plans: scale the recorded iterations to an epoch of this many (0 = as "
      "recorded)")("points-dir", po::value<std::string>(),
                   "keep each point's result in this folder as it finishes, and take the "
                   "points already there instead of computing them again (a sweep resumes "
                   "where it stopped)")(
      "shard", po::value<std::string>(),
      "K/N: with --points-dir, compute only the points whose index is K modulo N and write no "
      "result file (one share of a sweep spread over N processes or machines; docs/cluster.md); "
      "a final run without --shard writes the results")("quiet,q", "no progress");
  add_experiment_options(options);
  return options;
}

std::vector<Sweep> sweeps_from(const po::variables_map& vm) {
  std::vector<Sweep> sweeps;
  if (vm.count("sweep") == 0) return sweeps;
  for (const std::string& text : vm["sweep"].as<std::vector<std::string>>()) {
    Sweep sweep = parse_sweep(text);
    // Two value lists for one field would make a grid of points that all set it to the last.
    for (const Sweep& earlier : sweeps) {
      require(earlier.field != sweep.field, "sweep " + sweep.field,
              "is swept twice: give every value in one --sweep");
    }
    sweeps.push_back(std::move(sweep));
  }
  return sweeps;
}

// --replay-plans: the recorded plans fix the experiment, so only the cluster may vary.
void read_replay_options(const CommandLine& command_line, const std::vector<Sweep>& sweeps,
                         Setup& setup) {
  const po::variables_map& vm = command_line.values;
  if (vm.count("replay-plans") == 0) return;
  setup.replay_plans = vm["replay-plans"].as<std::string>();
  require(std::filesystem::is_regular_file(setup.replay_plans), "replay-plans",
          "'" + setup.replay_plans + "' is not a file");
  for (const std::string& option : experiment_options_given(command_line.parsed)) {
    throw ConfigError("--" + option,
                      "does not apply with --replay-plans: the recorded plans "
                      "fix the experiment (cluster fields and --calibration do)");
  }
  for (const Sweep& sweep : sweeps) {
    require(is_cluster_field(sweep.field), "sweep " + sweep.field,
            "only cluster.* fields can be swept when replaying recorded plans");
  }
  setup.recorded_plans = read_plans(setup.replay_plans);
}

// How many iterations and points run, each option checked against the mode it belongs to.
void read_run_options(const po::variables_map& vm, Setup& setup) {
  setup.options.use_measured_durations = vm.count("measured-durations") != 0;
  require(!setup.options.use_measured_durations || !setup.replay_plans.empty(),
          "measured-durations", "needs --replay-plans (only recorded plans carry durations)");
  setup.iterations_per_epoch = vm["iterations-per-epoch"].as<int>();
  require(setup.iterations_per_epoch >= 0, "iterations-per-epoch", "must not be negative");
  require(setup.iterations_per_epoch == 0 || !setup.replay_plans.empty(), "iterations-per-epoch",
          "needs --replay-plans (planned epochs know their iterations)");
  setup.options.iterations = vm["iterations"].as<int>();
  require(setup.options.iterations >= 0, "iterations", "must not be negative");
  require(setup.options.iterations == 0 || setup.replay_plans.empty(), "iterations",
          "does not apply to --replay-plans, which replays every recorded iteration");
  setup.options.evaluation = vm.count("evaluation") != 0;
  require(!setup.options.evaluation || setup.replay_plans.empty(), "evaluation",
          "does not apply to --replay-plans (recorded plans are training's)");
  setup.jobs = vm["jobs"].as<int>();
  require(setup.jobs >= 1, "jobs", "must be at least 1");
}

// The outputs, each path checked before any point runs.
void read_output_options(const po::variables_map& vm, Setup& setup) {
  setup.output = vm["output"].as<std::string>();
  setup.csv = vm.count("csv") != 0
                  ? vm["csv"].as<std::string>()
                  : std::filesystem::path(setup.output).replace_extension(".csv").string();
  if (vm.count("trace") != 0) {
    setup.trace = vm["trace"].as<std::string>();
    setup.options.record_trace = true;
  }
  setup.quiet = vm.count("quiet") != 0;
  if (vm.count("points-dir") != 0) {
    setup.points_dir = vm["points-dir"].as<std::string>();
    check_output_folder(setup.points_dir, "--points-dir");
  }
  if (vm.count("shard") != 0) {
    require(!setup.points_dir.empty(), "shard", "needs --points-dir (where the shares meet)");
    setup.shard = parse_shard(vm["shard"].as<std::string>());
  }
  check_output_path(setup.output, "--output");
  check_output_path(setup.csv, "--csv");
  if (!setup.trace.empty()) check_output_path(setup.trace, "--trace");
}

// Everything that decides the points' results, files by their contents: two runs with equal
// identities compute equal points, whatever their --jobs, --shard or outputs.
nlohmann::json sweep_identity(const Setup& setup) {
  nlohmann::json labels = nlohmann::json::array();
  for (const Point& point : setup.points) labels.push_back(point.label());
  const auto hash_of = [](const std::string& path) -> nlohmann::json {
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return nullptr;
    return content_hash(path);
  };
  return {{"base_config", setup.replay_plans.empty() ? to_json(setup.base) : nullptr},
          {"cluster_source", setup.cluster_source},
          {"cluster_file", hash_of(setup.cluster_source)},
          {"cluster_settings", setup.cluster_settings},
          {"calibration", hash_of(setup.calibration_file)},
          {"replay_plans", hash_of(setup.replay_plans)},
          {"iterations", setup.options.iterations},
          {"evaluation", setup.options.evaluation},
          {"measured_durations", setup.options.use_measured_durations},
          {"iterations_per_epoch", setup.iterations_per_epoch},
          {"points", labels}};
}

Setup setup_from(const CommandLine& command_line) {
  const po::variables_map& vm = command_line.values;
  Setup setup;
  setup.base = experiment_from_options(
      command_line.parsed, {"model.kind=sage", "training.batch_size=1000", "training.fanouts=25,10",
                            "training.eval_every=-1"});
  setup.cluster_source = vm["cluster"].as<std::string>();
  if (vm.count("cluster-set") != 0)
    setup.cluster_settings = vm["cluster-set"].as<std::vector<std::string>>();
  if (vm.count("calibration") != 0) setup.calibration_file = vm["calibration"].as<std::string>();
  const std::vector<Sweep> sweeps = sweeps_from(vm);
  setup.points = sweep_points(sweeps);
  read_replay_options(command_line, sweeps, setup);
  read_run_options(vm, setup);
  read_output_options(vm, setup);
  // Every point's configuration and cluster are checked before anything runs.
  for (const Point& point : setup.points) {
    point_config(setup, point);
    point_cluster(setup, point);
  }
  if (!setup.points_dir.empty()) setup.point_store.emplace(setup.points_dir, sweep_identity(setup));
  return setup;
}

// Every point's result document, or the first failure (message and exit code).
struct PointRuns {
  std::vector<nlohmann::json> results;
  std::string failure;
  int failure_code = 0;
  std::size_t computed = 0;  // by this process
  std::size_t reused = 0;    // taken from --points-dir
};

// Takes the result of a finished child: its point's document, or the first failure.
void collect(const Setup& setup, const Child& child, const std::string& message, int status,
             PointRuns& runs) {
  if (message.rfind("ok ", 0) == 0) {
    runs.results[child.index] = nlohmann::json::parse(message.substr(3));
    if (setup.point_store) {
      setup.point_store->save(child.index, setup.points[child.index].label(),
                              runs.results[child.index]);
    }
    if (!setup.quiet) print_row(runs.results[child.index]);
  } else if (runs.failure.empty()) {
    const bool coded = message.rfind("error ", 0) == 0 && message.size() > 8;
    runs.failure_code = coded ? message[6] - '0' : 1;
    runs.failure = "point '" + setup.points[child.index].label() + "': " +
                   (coded ? message.substr(8)
                          : "the simulation process died (status " + std::to_string(status) + ")");
  }
}

// A sweep's progress after each point: how many are done and about how long the rest take (on
// stderr, so that the table on stdout stays one row per point).
void print_sweep_progress(std::size_t finished, std::size_t total, double elapsed_seconds) {
  const double left_seconds =
      elapsed_seconds / static_cast<double>(finished) * static_cast<double>(total - finished);
  std::fflush(stdout);  // the point's row first, where stdout is a pipe
  std::fprintf(stderr, "simulate: %zu of %zu points after %.1f s, about %.1f s left\n", finished,
               total, elapsed_seconds, left_seconds);
}

// The points this process computes: its shard's, less those whose results are in the points
// folder (taken into `runs` as they are).
std::vector<std::size_t> points_to_compute(const Setup& setup, PointRuns& runs) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < setup.points.size(); ++i) {
    std::optional<nlohmann::json> done;
    if (setup.point_store) done = setup.point_store->load(i, setup.points[i].label());
    if (done) {
      runs.results[i] = std::move(*done);
      ++runs.reused;
      if (!setup.quiet) print_row(runs.results[i]);
    } else if (!setup.shard || setup.shard->owns(i)) {
      indices.push_back(i);
    }
  }
  return indices;
}

// Runs the points in child processes, up to --jobs at once; none starts after a failure.
PointRuns run_points(const Setup& setup) {
  const Stopwatch clock;
  PointRuns runs;
  runs.results.resize(setup.points.size());
  if (!setup.quiet) print_header();
  const std::vector<std::size_t> indices = points_to_compute(setup, runs);
  runs.computed = indices.size();
  std::map<pid_t, Child> running;
  std::size_t next = 0;
  std::size_t finished = 0;
  const bool progress = !setup.quiet && indices.size() == 1 && setup.points.size() == 1;
  while (finished < indices.size()) {
    while (runs.failure.empty() && next < indices.size() &&
           static_cast<int>(running.size()) < setup.jobs) {
      const Child child = start_child(setup, indices[next++], progress);
      running.emplace(child.pid, child);
    }
    if (running.empty()) break;
    // Read the first child to finish (its pipe closes when it exits).
    const auto it = running.begin();
    const Child child = it->second;
    const std::string message = read_all(child.read_fd);
    int status = 0;
    waitpid(child.pid, &status, 0);
    running.erase(it);
    ++finished;
    collect(setup, child, message, status, runs);
    if (!setup.quiet && finished < indices.size() && runs.failure.empty()) {
      print_sweep_progress(finished, indices.size(), clock.seconds());
    }
  }
  return runs;
}

// The result document, the CSV and the trace, written together or not at all.
void write_results(const Setup& setup, std::vector<nlohmann::json> results, const Stopwatch& total,
                   int argc, char** argv) {
  nlohmann::json document = {
      {"provenance", provenance_json(argc, argv)},
      {"simgrid_version", SIMGRID_VERSION_STRING},
      {"base_config", setup.replay_plans.empty() ? to_json(setup.base) : nlohmann::json(nullptr)},
      {"replay_plans", setup.replay_plans},
      {"cluster_source", setup.cluster_source},
      {"cluster_settings", setup.cluster_settings},
      {"calibration", setup.calibration_file},
      {"points", results},
      {"wall_seconds", total.seconds()}};
  std::vector<OutputFile> outputs = {{setup.output, ""}, {setup.csv, points_csv(results)}};
  if (!setup.trace.empty()) {
    outputs.push_back({setup.trace, results.front().at(kTraceKey).dump() + "\n"});
    results.front().erase(kTraceKey);
  }
  document["points"] = results;
  outputs.front().content = document.dump(2) + "\n";
  write_files_atomically(outputs);
}

void print_outputs(const Setup& setup, const Stopwatch& total) {
  std::printf("results: %s, %s%s%s (%.1f s)\n", setup.output.c_str(), setup.csv.c_str(),
              setup.trace.empty() ? "" : ", trace ", setup.trace.c_str(), total.seconds());
  if (setup.options.iterations > 0) {
    std::printf(
        "note: epochs estimated from %d iterations spread over the epoch (first, last, one per "
        "stratum between), with 95 %% intervals; docs/simulator.md gives their error against "
        "full epochs\n",
        setup.options.iterations);
  }
}

int simulate_main(int argc, char** argv) {
  const po::options_description options = simulate_options();
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const Setup setup = setup_from(*command_line);
  const Stopwatch total;
  PointRuns runs = run_points(setup);
  if (!runs.failure.empty()) {
    std::fprintf(stderr, "simulate: %s\n", runs.failure.c_str());
    return runs.failure_code;
  }
  if (setup.shard) {
    std::printf(
        "shard %zu/%zu: %zu points computed, %zu already in %s; run without --shard to "
        "write the results\n",
        setup.shard->index, setup.shard->count, runs.computed, runs.reused,
        setup.points_dir.c_str());
    return 0;
  }
  write_results(setup, std::move(runs.results), total, argc, argv);
  if (!setup.quiet) print_outputs(setup, total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // PyTorch-BigGraph trains embeddings, not a GNN: a workload and options of its own.
  if (asks_for_pbg(argc, argv)) return run_main("simulate", simulate_pbg, argc, argv);
  return run_main("simulate", simulate_main, argc, argv);
}
