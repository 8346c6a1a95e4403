// bench_shared_core_latency: how long a message takes to be noticed by a rank that waits for it
// while another process computes on its core. Needs Open MPI's mpi_yield_when_idle (a waiting
// rank polls and yields) and at least 3 ranks on 2 cores or more: rank 0 has the first core to
// itself and sends messages stamped with the time they leave, at random moments; rank 1 waits for
// them on the second core, first beside ranks that wait in a barrier (idle: they yield, so rank 1
// runs at once), then beside ranks that compute without calling MPI, as training's ops do (busy:
// rank 1 gets the core back only at the timer tick at which the computing rank's time slice
// ends). A message sent at a random moment waits for the rest of a slice, half a slice on
// average: twice the mean difference in the one-way time is the simulator's
// shared_core_time_slice_seconds (docs/simulator.md), which the validation passes. Ranks are
// pinned (rank 0 to the first core it may run on, the others to the second): unpinned, Linux may
// put rank 1 beside rank 0 rather than beside the busy ranks.
//
//   mpirun -np 3 --oversubscribe --mca mpi_yield_when_idle 1 bench_shared_core_latency
//
// Prints a line on rank 1, then one JSON line.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>
#include <vector>

#include "exec/mpi/mpi_transport.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/statistics.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

// Seconds on the clock every process of this machine shares (network namespaces do not change it).
double machine_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct OneWay {
  std::vector<double> seconds;

  double mean() const {
    return seconds.empty() ? 0
                           : std::accumulate(seconds.begin(), seconds.end(), 0.0) /
                                 static_cast<double>(seconds.size());
  }
  double quantile(double q) const {
    if (seconds.empty()) return 0;
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))];
  }
  nlohmann::json to_json() const {
    return {{"messages", seconds.size()},        {"mean_seconds", mean()},
            {"median_seconds", median(seconds)}, {"p10_seconds", quantile(0.1)},
            {"p90_seconds", quantile(0.9)},      {"max_seconds", quantile(1.0)}};
  }
};

// Rank 0 sends its clock for `phase_seconds`, pausing a random 0.5 to 4.5 ms between messages so
// that they arrive at any point of the receiver's core's time slices; a negative stamp ends the
// phase. Rank 1 returns how long each took to be noticed.
OneWay send_at_random(int rank, double phase_seconds, Rng& rng) {
  OneWay one_way;
  if (rank == 0) {
    const Stopwatch phase;
    while (phase.seconds() < phase_seconds) {
      std::this_thread::sleep_for(std::chrono::duration<double>(0.5e-3 + 4e-3 * rng.uniform()));
      const double stamp = machine_clock_seconds();
      MPI_Send(&stamp, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    }
    const double end = -1;
    MPI_Send(&end, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    for (;;) {
      double stamp = 0;
      MPI_Recv(&stamp, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (stamp < 0) break;
      one_way.seconds.push_back(machine_clock_seconds() - stamp);
    }
  }
  return one_way;
}

// The busy ranks: compute for `seconds` without entering MPI, so that they never yield.
void compute_for(double seconds) {
  volatile double sink = 0;
  const Stopwatch watch;
  while (watch.seconds() < seconds) {
    for (int k = 0; k < 10000; ++k) sink = sink + 1.0;
  }
}

// Pins the caller to the first core it may run on (rank 0) or the second (the others).
int pin(int rank) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    throw Error(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
  }
  if (cores.size() < 2) throw Error("bench_shared_core_latency: needs 2 cores, may run on 1");
  const int core = cores[rank == 0 ? 0 : 1];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(core, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    throw Error(std::string("sched_setaffinity: ") + std::strerror(errno));
  }
  return core;
}

int bench_main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  po::options_description options("mpirun -np N bench_shared_core_latency [options]");
  options.add_options()("help,h", "show this help")(
      "seconds", po::value<double>()->default_value(2.0), "seconds of messages per phase")(
      "seed", po::value<std::uint64_t>()->default_value(1), "seed of the pauses between messages");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help")) {
    if (rank == 0) std::cout << options;
    return 0;
  }
  if (size < 3) {
    throw Error(
        "bench_shared_core_latency: needs at least 3 ranks (a sender, a receiver and a busy rank "
        "beside it), not " +
        std::to_string(size));
  }
  const double phase_seconds = vm["seconds"].as<double>();
  require(phase_seconds > 0, "seconds", "must be positive");
  Rng rng(vm["seed"].as<std::uint64_t>());
  // The busy ranks compute past the phase, so that every message of it meets them busy.
  const double busy_margin_seconds = 0.25;

  const int core = pin(rank);
  send_at_random(rank, 0.05, rng);  // connections set up
  MPI_Barrier(MPI_COMM_WORLD);
  const OneWay idle = send_at_random(rank, phase_seconds, rng);
  MPI_Barrier(MPI_COMM_WORLD);
  OneWay busy;
  if (rank < 2) {
    busy = send_at_random(rank, phase_seconds, rng);
  } else {
    compute_for(phase_seconds + busy_margin_seconds);
  }
  std::vector<int> cores(static_cast<std::size_t>(size));
  MPI_Gather(&core, 1, MPI_INT, cores.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(cores.data(), size, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 1) {
    const double slice_seconds = 2 * (busy.mean() - idle.mean());
    std::printf(
        "one way: %.1f us beside waiting ranks, %.1f us beside computing ones (mean; medians "
        "%.1f and %.1f us, 90th percentiles %.1f and %.1f us, %zu and %zu messages): time slice "
        "%.2f ms\n",
        1e6 * idle.mean(), 1e6 * busy.mean(), 1e6 * median(idle.seconds),
        1e6 * median(busy.seconds), 1e6 * idle.quantile(0.9), 1e6 * busy.quantile(0.9),
        idle.seconds.size(), busy.seconds.size(), 1e3 * slice_seconds);
    std::cout << nlohmann::json{{"bench", "shared_core_latency"},
                                {"provenance", provenance_json(argc, argv)},
                                {"ranks", size},
                                {"cores_of_ranks", cores},
                                {"phase_seconds", phase_seconds},
                                {"idle_one_way", idle.to_json()},
                                {"busy_one_way", busy.to_json()},
                                {"shared_core_time_slice_seconds", slice_seconds}}
                     .dump()
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("bench_shared_core_latency", bench_main, argc, argv);
}
