// cluster_check: before a run on several machines, under the mpirun (or srun) that will launch it
// (docs/cluster.md): every rank fingerprints the tools and the data it would use (this binary,
// and every --path), rank 0 lists every file some rank sees otherwise, and pairs of ranks (one per
// pair of hosts, or every pair) are timed with calibrate's ping-pong: latency and bandwidth. Exit
// 1 when the files differ, so that a launch script can stop there.
#include <mpi.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "exec/calibration/cluster_check.hpp"
#include "exec/calibration/transport_benchmark.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "workloads/common/command_line.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/provenance.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

struct Settings {
  std::vector<std::string> paths;
  bool per_host = true;
  std::int64_t bytes = std::int64_t{16} << 20;
  std::string output = "results/cluster_check.json";
};

std::optional<Settings> parse(int argc, char** argv, int rank) {
  po::options_description options("mpirun -np N cluster_check [options]");
  options.add_options()("help,h", "show this help")(
      "path", po::value<std::vector<std::string>>()->composing(),
      "a file every rank must see the same (repeatable): tools, data, configurations")(
      "pairs", po::value<std::string>()->default_value("hosts"),
      "hosts (one rank per pair of hosts) or ranks (every pair of ranks)")(
      "bytes", po::value<std::int64_t>()->default_value(std::int64_t{16} << 20),
      "message size for the bandwidth (bytes)")(
      "output,o", po::value<std::string>()->default_value("results/cluster_check.json"),
      "result file (JSON)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help") != 0) {
    if (rank == 0) std::cout << options << "\n";
    return std::nullopt;
  }
  Settings settings;
  if (vm.count("path") != 0) settings.paths = vm["path"].as<std::vector<std::string>>();
  const std::string pairs = vm["pairs"].as<std::string>();
  if (pairs != "hosts" && pairs != "ranks") {
    throw ConfigError("--pairs", "'" + pairs + "' is not one of: hosts, ranks");
  }
  settings.per_host = pairs == "hosts";
  settings.bytes = vm["bytes"].as<std::int64_t>();
  if (settings.bytes < 1) throw ConfigError("--bytes", "must be at least 1");
  settings.output = vm["output"].as<std::string>();
  return settings;
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(length));
}

// Every rank's view, on rank 0 (empty elsewhere). Collective.
std::vector<RankView> gather_views(MpiTransport& world, const RankView& mine) {
  std::vector<RankView> views;
  for (const std::string& text : world.gather_to_root(to_json(mine).dump())) {
    views.push_back(rank_view_from_json(nlohmann::json::parse(text)));
  }
  return views;
}

// Every rank's host, on every rank. Collective.
std::vector<std::string> all_hosts(MpiTransport& world, const std::string& mine) {
  TransferTiming timing;
  std::vector<std::string> hosts;
  for (const std::vector<std::byte>& name :
       world.all_gather(std::as_bytes(std::span(mine)), Traffic::structure, timing)) {
    hosts.emplace_back(reinterpret_cast<const char*>(name.data()), name.size());
  }
  return hosts;
}

struct PairTiming {
  int a = 0, b = 0;
  double latency_seconds = 0;
  double bandwidth_bytes_per_second = 0;
};

// Collective: every pair in turn, the others waiting; every rank gets every timing.
std::vector<PairTiming> time_pairs(MpiTransport& world,
                                   const std::vector<std::pair<int, int>>& pairs,
                                   std::int64_t bytes) {
  std::vector<PairTiming> timings;
  const std::vector<std::int64_t> sizes = {0, bytes};
  for (const auto& [a, b] : pairs) {
    MPI_Comm pair = pair_communicator(MPI_COMM_WORLD, a, b);
    std::vector<TransferSample> samples(sizes.size());
    if (pair != MPI_COMM_NULL) {
      {
        MpiTransport transport(pair);
        samples = ping_pong(transport, sizes, {});
      }
      MPI_Comm_free(&pair);
    }
    // The pair's times, every other rank's 0.
    const double latency = world.max_over_ranks(samples[0].seconds);
    const double seconds = world.max_over_ranks(samples[1].seconds);
    timings.push_back({a, b, latency, static_cast<double>(bytes) / seconds});
  }
  return timings;
}

void report(const Settings& settings, const std::vector<RankView>& views,
            const std::vector<std::string>& differences, const std::vector<std::string>& hosts,
            const std::vector<PairTiming>& timings, int argc, char** argv) {
  std::printf("%zu ranks on %zu hosts; %zu files each\n", views.size(),
              std::set<std::string>(hosts.begin(), hosts.end()).size(), views.front().files.size());
  for (const FileFingerprint& f : views.front().files) {
    std::printf("  %s: %s\n", f.path.c_str(),
                f.exists
                    ? (std::to_string(f.bytes) + " bytes" + (f.sampled ? ", sampled" : "")).c_str()
                    : "absent on rank 0");
  }
  for (const std::string& line : differences) std::printf("DIFFERS %s\n", line.c_str());
  if (differences.empty()) std::printf("every rank sees the same files\n");
  nlohmann::json pairs = nlohmann::json::array();
  for (const PairTiming& t : timings) {
    std::printf("  rank %d (%s) - rank %d (%s): latency %.1f us, bandwidth %.2f Gbit/s\n", t.a,
                hosts[static_cast<std::size_t>(t.a)].c_str(), t.b,
                hosts[static_cast<std::size_t>(t.b)].c_str(), 1e6 * t.latency_seconds,
                8e-9 * t.bandwidth_bytes_per_second);
    pairs.push_back(
        {{"ranks", {t.a, t.b}},
         {"hosts", {hosts[static_cast<std::size_t>(t.a)], hosts[static_cast<std::size_t>(t.b)]}},
         {"latency_seconds", t.latency_seconds},
         {"bandwidth_bytes_per_second", t.bandwidth_bytes_per_second}});
  }
  if (timings.empty()) std::printf("no pair to time (one host; --pairs ranks times every pair)\n");
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankView& view : views) ranks.push_back(to_json(view));
  const nlohmann::json document = {{"provenance", provenance_json(argc, argv)},
                                   {"message_bytes", settings.bytes},
                                   {"ranks", ranks},
                                   {"differences", differences},
                                   {"pairs", pairs}};
  write_text_file_atomically(settings.output, document.dump(1) + "\n");
  std::printf("result: %s\n", settings.output.c_str());
}

int cluster_check(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  MpiTransport world;
  const int rank = world.rank();
  const std::optional<Settings> parsed = parse(argc, argv, rank);
  if (!parsed) return 0;
  const Settings& settings = *parsed;
  // Rank 0 writes the result: its problem with the path stops every rank, rank 0 saying why.
  const std::string problem = rank == 0 ? output_path_problem(settings.output) : "";
  if (world.max_over_ranks(problem.empty() ? 0.0 : 1.0) > 0) {
    if (rank == 0) throw ConfigError("--output", problem);
    return 2;
  }
  RankView mine{rank, host_name(), {}};
  try {
    mine.files.push_back(fingerprint_file(std::filesystem::canonical("/proc/self/exe").string()));
    for (const std::string& path : settings.paths) mine.files.push_back(fingerprint_file(path));
  } catch (const std::exception& error) {
    abort_all_ranks("rank " + std::to_string(rank) + ": " + error.what(), 1);
  }
  const std::vector<RankView> views = gather_views(world, mine);
  const std::vector<std::string> hosts = all_hosts(world, mine.host);
  const std::vector<PairTiming> timings =
      time_pairs(world, pairs_to_time(hosts, settings.per_host), settings.bytes);
  if (rank != 0) return 0;
  const std::vector<std::string> differences = file_differences(views);
  report(settings, views, differences, hosts, timings, argc, argv);
  return differences.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return run_main("cluster_check", cluster_check, argc, argv); }
