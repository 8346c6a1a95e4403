// bench_link_exchange: what a link between two ranks delivers to the transport training uses
// (MpiTransport's pairwise all-to-all), one way and both ways at once, with and without a pause
// before each exchange. Training pauses between exchanges (it computes); with Open MPI's default
// TCP fragment, an exchange in both directions after a pause ran at half the rate a back-to-back
// or one-way benchmark reports (docs/validation.md; MpiSession now sets a smaller fragment). Its
// plain-TCP twin, tcp_link_exchange.py, shows what the link itself delivers.
//
//   mpirun -np 2 bench_link_exchange [--sizes-mib 1,4,16] [--pause-ms 0,250] [--repetitions 10]
//
// Prints one line per (size, pause, direction) on rank 0, then one JSON line.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <thread>

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

struct Measurement {
  double seconds_per_exchange = 0;  // mean
  double median_seconds_per_exchange = 0;
  double waiting_seconds_per_exchange = 0;
};

// `both`: each rank sends `bytes` to the other; otherwise only rank 0 sends. The pause sleeps (as
// a rank that computes leaves the link idle); only the exchanges are timed, each by its slowest
// rank. The median over the repetitions leaves out the exchange that a descheduled rank or a
// busy host stretched, which the mean of a few repetitions does not.
Measurement measure(MpiTransport& transport, std::int64_t bytes, bool both, double pause_seconds,
                    int repetitions) {
  const int peer = 1 - transport.rank();
  const std::vector<std::byte> payload(static_cast<std::size_t>(bytes), std::byte{1});
  std::vector<std::span<const std::byte>> send(2);
  if (both || transport.rank() == 0) send[static_cast<std::size_t>(peer)] = payload;
  std::vector<std::vector<std::byte>> received;
  TransferTiming warmup;
  transport.all_to_all_into(send, received, Traffic::features, warmup);
  TransferTiming timing;
  std::vector<double> exchange_seconds;  // per repetition, slowest rank
  for (int r = 0; r < repetitions; ++r) {
    transport.barrier();
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_seconds));
    const Stopwatch watch;
    transport.all_to_all_into(send, received, Traffic::features, timing);
    exchange_seconds.push_back(transport.max_over_ranks(watch.seconds()));
  }
  const double mean = std::accumulate(exchange_seconds.begin(), exchange_seconds.end(), 0.0) /
                      static_cast<double>(repetitions);
  return {mean, median(exchange_seconds),
          transport.max_over_ranks(timing.waiting_seconds / repetitions)};
}

int bench_main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  MpiTransport transport;
  po::options_description options("mpirun -np 2 bench_link_exchange [options]");
  options.add_options()("help,h", "show this help")(
      "sizes-mib", po::value<std::string>()->default_value("1,4,16"), "message sizes (MiB)")(
      "pause-ms", po::value<std::string>()->default_value("0,250"),
      "pause before each exchange (ms): 0 is back to back")(
      "repetitions", po::value<int>()->default_value(10), "timed exchanges per point");
  const std::optional<po::variables_map> parsed =
      bench::two_rank_options(options, argc, argv, transport);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const std::vector<int> sizes_mib = bench::int_list(vm, "sizes-mib", 1);
  const std::vector<int> pauses_ms = bench::int_list(vm, "pause-ms", 0);
  const int repetitions = vm["repetitions"].as<int>();
  require(repetitions > 0, "repetitions", "must be positive");

  nlohmann::json rows = nlohmann::json::array();
  for (const int size_mib : sizes_mib) {
    const auto bytes = static_cast<std::int64_t>(size_mib * kBytesPerMiB);
    for (const int pause_ms : pauses_ms) {
      for (const bool both : {false, true}) {
        const Measurement m = measure(transport, bytes, both, pause_ms * 1e-3, repetitions);
        const auto gbps = [bytes](double seconds) {
          return 8.0 * static_cast<double>(bytes) / seconds / 1e9;
        };
        if (transport.rank() == 0) {
          std::printf(
              "%4d MiB, pause %4d ms, %-9s: %9.3f ms per exchange, %6.3f Gbit/s per "
              "direction (median %.3f ms, %.3f Gbit/s; waiting %.3f ms)\n",
              size_mib, pause_ms, both ? "both ways" : "one way", 1e3 * m.seconds_per_exchange,
              gbps(m.seconds_per_exchange), 1e3 * m.median_seconds_per_exchange,
              gbps(m.median_seconds_per_exchange), 1e3 * m.waiting_seconds_per_exchange);
          std::fflush(stdout);
        }
        rows.push_back({{"bytes", bytes},
                        {"pause_seconds", pause_ms * 1e-3},
                        {"both_ways", both},
                        {"seconds_per_exchange", m.seconds_per_exchange},
                        {"median_seconds_per_exchange", m.median_seconds_per_exchange},
                        {"waiting_seconds_per_exchange", m.waiting_seconds_per_exchange},
                        {"gbps_per_direction", gbps(m.seconds_per_exchange)},
                        {"median_gbps_per_direction", gbps(m.median_seconds_per_exchange)}});
      }
    }
  }
  if (transport.rank() == 0) bench::print_results("link_exchange", argc, argv, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_link_exchange", bench_main, argc, argv); }
