// bench_transfer_overlap: how much of a nonblocking exchange moves while both ranks compute,
// through the transport training uses (MpiTransport::start_all_to_all, as PlanExecutor posts a
// plan's transfers). Each rank posts an exchange of S bytes both ways, computes (spins) for C ms,
// testing the transfer every G ms as the executor tests its transfers between ops (G = 0: never),
// then waits for it. Where the transport progresses alone (RDMA, a progress thread) the wait is
// what is left of the exchange after C; where it moves data only inside MPI calls, more is left.
//
//   mpirun -np 2 bench_transfer_overlap [--sizes-mib 4,16,64] [--compute-ms 0,100,400]
//                                       [--test-every-ms 0,10] [--repetitions 7]
//
// Prints one line per (size, compute, test interval) on rank 0, then one JSON line. Bytes moved
// during the computation are inferred from the wait: S (1 - wait / E), E the median exchange
// time without computing, measured first.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "exec/mpi/mpi_transport.hpp"
#include "experiments/bench/mpi_bench.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/statistics.hpp"
#include "workloads/common/stopwatch.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

struct Point {
  double compute_seconds = 0;
  double test_every_seconds = 0;  // 0: no MPI call while computing
};

// Spins for `seconds` (a computing rank keeps its core), testing `pending` every
// `test_every_seconds` where that is positive.
void compute(double seconds, double test_every_seconds, PendingTransfer& pending) {
  const Stopwatch watch;
  double next_test = test_every_seconds;
  while (watch.seconds() < seconds) {
    if (test_every_seconds > 0 && watch.seconds() >= next_test) {
      pending.test();
      next_test += test_every_seconds;
    }
  }
}

// The median over `repetitions` of the slowest rank's wait after computing.
double median_wait_seconds(MpiTransport& transport, std::int64_t bytes, Point point,
                           int repetitions) {
  const int peer = 1 - transport.rank();
  const std::vector<std::byte> payload(static_cast<std::size_t>(bytes), std::byte{1});
  std::vector<std::span<const std::byte>> send(2);
  send[static_cast<std::size_t>(peer)] = payload;
  std::vector<std::int64_t> receive_bytes(2, 0);
  receive_bytes[static_cast<std::size_t>(peer)] = bytes;
  std::vector<double> waits;
  for (int r = 0; r < repetitions + 1; ++r) {  // the first warms the connection up
    transport.barrier();
    const std::unique_ptr<PendingTransfer> pending =
        transport.start_all_to_all(send, receive_bytes, Traffic::features, /*block_steps=*/1);
    compute(point.compute_seconds, point.test_every_seconds, *pending);
    const Stopwatch watch;
    TransferTiming timing;
    pending->wait(timing);
    const double wait = transport.max_over_ranks(watch.seconds());
    if (r > 0) waits.push_back(wait);
  }
  return median(waits);
}

int bench_main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  MpiTransport transport;
  po::options_description options("mpirun -np 2 bench_transfer_overlap [options]");
  options.add_options()("help,h", "show this help")(
      "sizes-mib", po::value<std::string>()->default_value("4,16,64"), "exchange sizes (MiB)")(
      "compute-ms", po::value<std::string>()->default_value("0,100,400"),
      "computation after posting (ms)")("test-every-ms",
                                        po::value<std::string>()->default_value("0,10"),
                                        "MPI test interval while computing (ms); 0: none")(
      "repetitions", po::value<int>()->default_value(7), "timed exchanges per point");
  const std::optional<po::variables_map> parsed =
      bench::two_rank_options(options, argc, argv, transport);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const std::vector<int> sizes_mib = bench::int_list(vm, "sizes-mib", 1);
  const std::vector<int> compute_ms = bench::int_list(vm, "compute-ms", 0);
  const std::vector<int> test_every_ms = bench::int_list(vm, "test-every-ms", 0);
  const int repetitions = vm["repetitions"].as<int>();
  require(repetitions > 0, "repetitions", "must be positive");

  nlohmann::json rows = nlohmann::json::array();
  for (const int size_mib : sizes_mib) {
    const auto bytes = static_cast<std::int64_t>(size_mib * kBytesPerMiB);
    const double exchange_seconds = median_wait_seconds(transport, bytes, {}, repetitions);
    for (const int c : compute_ms) {
      for (const int g : test_every_ms) {
        if (c == 0 && g > 0) continue;
        const Point point{c * 1e-3, g * 1e-3};
        const double wait =
            c == 0 ? exchange_seconds : median_wait_seconds(transport, bytes, point, repetitions);
        const double moved =
            static_cast<double>(bytes) * std::max(0.0, 1 - wait / exchange_seconds);
        if (transport.rank() == 0) {
          std::printf(
              "%4d MiB both ways, compute %4d ms, test every %3d ms: wait %8.3f ms "
              "(exchange alone %8.3f ms): %7.2f MiB moved while computing\n",
              size_mib, c, g, 1e3 * wait, 1e3 * exchange_seconds, moved / kBytesPerMiB);
          std::fflush(stdout);
        }
        rows.push_back({{"bytes", bytes},
                        {"compute_seconds", point.compute_seconds},
                        {"test_every_seconds", point.test_every_seconds},
                        {"median_wait_seconds", wait},
                        {"median_exchange_seconds", exchange_seconds},
                        {"bytes_moved_while_computing", moved}});
      }
    }
  }
  if (transport.rank() == 0) bench::print_results("transfer_overlap", argc, argv, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("bench_transfer_overlap", bench_main, argc, argv);
}
