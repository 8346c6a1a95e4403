// bench_shared_core_latency: how long a message takes to be noticed by a rank that waits for it
// while another process computes on its core. Run with more ranks than cores and Open MPI's
// mpi_yield_when_idle: ranks 0 and 1 ping-pong empty messages; the other ranks first wait in a
// barrier (idle: every waiting rank yields, so the pingers run at once), then compute while the
// pingers ping-pong again (busy: a pinger waiting for its message gets its core back only when the
// computing rank's time slice ends). The simulator charges the difference on every message that
// reaches a rank whose core-mate computes (ClusterSpec::shared_core_wakeup_seconds).
//
//   mpirun -np 4 --mca mpi_yield_when_idle 1 bench_shared_core_latency [--round-trips 200]
//
// Prints a line per phase on rank 0, then one JSON line.
#include <mpi.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "exec/mpi/mpi_transport.hpp"
#include "strategies/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/statistics.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

// Ranks 0 and 1: `round_trips` empty round trips; the median one-way time (half a round trip).
double ping_pong(int rank, int round_trips) {
  const int peer = 1 - rank;
  std::vector<double> one_way_seconds;
  for (int k = 0; k < round_trips; ++k) {
    const Stopwatch watch;
    if (rank == 0) {
      MPI_Send(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
    one_way_seconds.push_back(watch.seconds() / 2);
  }
  return median(one_way_seconds);
}

// The other ranks: compute until the pingers join the barrier, testing it once a millisecond.
void compute_until_released() {
  MPI_Request barrier = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  volatile double sink = 0;
  int released = 0;
  while (released == 0) {
    const Stopwatch slice;
    while (slice.seconds() < 1e-3) sink = sink + 1.0;
    MPI_Test(&barrier, &released, MPI_STATUS_IGNORE);
  }
}

int bench_main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  po::options_description options("mpirun -np N bench_shared_core_latency [options]");
  options.add_options()("help,h", "show this help")(
      "round-trips", po::value<int>()->default_value(200), "round trips per phase");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help")) {
    if (rank == 0) std::cout << options;
    return 0;
  }
  if (size < 3) {
    throw Error(
        "bench_shared_core_latency: needs at least 3 ranks (2 pingers, the rest busy), not " +
        std::to_string(size));
  }
  const int round_trips = vm["round-trips"].as<int>();
  require(round_trips > 0, "round-trips", "must be positive");

  const bool pinger = rank < 2;
  if (pinger) ping_pong(rank, 10);  // connections set up
  MPI_Barrier(MPI_COMM_WORLD);
  const double idle_seconds = pinger ? ping_pong(rank, round_trips) : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double busy_seconds = 0;
  if (pinger) {
    busy_seconds = ping_pong(rank, round_trips);
    MPI_Request barrier = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  } else {
    compute_until_released();
  }
  if (rank == 0) {
    std::printf(
        "empty message, one way: %.1f us beside waiting ranks, %.1f us beside computing "
        "ones (%d round trips each, median)\n",
        1e6 * idle_seconds, 1e6 * busy_seconds, round_trips);
    std::cout << nlohmann::json{{"bench", "shared_core_latency"},
                                {"provenance", provenance_json(argc, argv)},
                                {"ranks", size},
                                {"round_trips", round_trips},
                                {"idle_one_way_seconds", idle_seconds},
                                {"busy_one_way_seconds", busy_seconds}}
                     .dump()
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("bench_shared_core_latency", bench_main, argc, argv);
}
