// bench_gather: the row copies of a mini-batch (feature gather, gather_rows, scatter_rows,
// scatter_add_rows) against this machine's memory bandwidth, measured here as a parallel copy
// of a buffer far larger than the caches (STREAM's convention: bytes read plus bytes written).
// Rows are picked at random from a table larger than the caches, as a mini-batch's input nodes
// are. Prints a readable line per kernel and thread count, then one JSON line.
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <numeric>

#include "exec/kernels/cpu_kernels.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/features.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

struct Sizes {
  std::int64_t table_rows = 0;
  std::int64_t width = 0;
  std::int64_t picked_rows = 0;
  double seconds = 0;
};

// Runs `kernel` for about `seconds` after one warm-up call; returns GB/s for `bytes` per call.
double gigabytes_per_second(const std::function<void()>& kernel, double bytes, double seconds) {
  kernel();
  std::int64_t calls = 0;
  const Stopwatch clock;
  while (clock.seconds() < seconds) {
    kernel();
    ++calls;
  }
  return bytes * static_cast<double>(calls) / clock.seconds() / 1e9;
}

// The reference: a parallel copy of `from` into `to`, each thread its own contiguous chunk.
void parallel_copy(const std::vector<float>& from, std::vector<float>& to) {
  const auto count = static_cast<std::int64_t>(from.size());
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t thread = omp_get_thread_num();
    const std::int64_t begin = count * thread / threads;
    const std::int64_t end = count * (thread + 1) / threads;
    std::memcpy(to.data() + begin, from.data() + begin,
                static_cast<std::size_t>(end - begin) * sizeof(float));
  }
}

int bench_main(int argc, char** argv) {
  po::options_description options("bench_gather [options]");
  options.add_options()("help,h", "show this help")(
      "threads", po::value<std::string>()->default_value("1,2"), "OpenMP thread counts to run")(
      "table-rows", po::value<std::int64_t>()->default_value(1'000'000), "rows of the table")(
      "width", po::value<std::int64_t>()->default_value(100), "floats per row")(
      "rows", po::value<std::int64_t>()->default_value(200'000), "rows copied per call")(
      "seconds", po::value<double>()->default_value(1.0), "time per kernel and thread count")(
      "seed", po::value<std::uint64_t>()->default_value(1), "seed of the picked rows");
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const Sizes sizes{vm["table-rows"].as<std::int64_t>(), vm["width"].as<std::int64_t>(),
                    vm["rows"].as<std::int64_t>(), vm["seconds"].as<double>()};
  require(sizes.table_rows > 0 && sizes.width > 0 && sizes.picked_rows > 0, "table-rows",
          "table-rows, width and rows must be positive");
  require(sizes.seconds > 0, "seconds", "must be positive");
  std::vector<int> thread_counts;
  JsonFieldReader({{"threads", vm["threads"].as<std::string>()}}, "")
      .read("threads", thread_counts);
  for (const int threads : thread_counts) require(threads > 0, "threads", "must be positive");

  const Matrix table_matrix = uniform_matrix(sizes.table_rows, sizes.width, -1.0f, 1.0f, 7);
  const StoredFeatures table(
      sizes.table_rows, static_cast<int>(sizes.width),
      SharedArray(std::vector<float>(table_matrix.values().begin(), table_matrix.values().end())));
  std::vector<NodeId> picked(static_cast<std::size_t>(sizes.picked_rows));
  Rng rng(vm["seed"].as<std::uint64_t>());
  for (NodeId& v : picked)
    v = static_cast<NodeId>(rng.below(static_cast<std::uint64_t>(sizes.table_rows)));
  // Scatter positions: a permutation of the picked rows' places, as an input tensor's rows are.
  std::vector<std::int32_t> positions(picked.size());
  std::iota(positions.begin(), positions.end(), 0);
  shuffle(std::span(positions), rng);

  const double row_bytes = static_cast<double>(sizes.width) * sizeof(float);
  const double picked_bytes = row_bytes * static_cast<double>(sizes.picked_rows);
  std::vector<float> copy_from(table_matrix.values().begin(), table_matrix.values().end());
  std::vector<float> copy_to(copy_from.size());
  Matrix gathered(sizes.picked_rows, sizes.width);
  Matrix scattered(sizes.picked_rows, sizes.width);
  std::printf("table %lld x %lld floats (%.0f MB), %lld rows per call (%.0f MB)\n",
              static_cast<long long>(sizes.table_rows), static_cast<long long>(sizes.width),
              static_cast<double>(copy_from.size()) * 4 / 1e6,
              static_cast<long long>(sizes.picked_rows), picked_bytes / 1e6);
  const std::vector<std::pair<std::string, std::function<double()>>> kernels = {
      {"feature_gather",
       [&] {
         return gigabytes_per_second([&] { table.gather(picked, gathered.data()); },
                                     2 * picked_bytes, sizes.seconds);
       }},
      {"gather_rows",
       [&] {
         return gigabytes_per_second(
             [&] { cpu::gather_rows(table_matrix, picked, 0, sizes.width, gathered); },
             2 * picked_bytes, sizes.seconds);
       }},
      {"scatter_rows",
       [&] {
         return gigabytes_per_second(
             [&] { cpu::scatter_rows(gathered, positions, scattered, false); }, 2 * picked_bytes,
             sizes.seconds);
       }},
      {"scatter_add_rows", [&] {
         return gigabytes_per_second(
             [&] { cpu::scatter_rows(gathered, positions, scattered, true); }, 3 * picked_bytes,
             sizes.seconds);
       }}};

  nlohmann::json runs = nlohmann::json::array();
  for (const int threads : thread_counts) {
    omp_set_num_threads(threads);
    const double copy =
        gigabytes_per_second([&] { parallel_copy(copy_from, copy_to); },
                             2.0 * static_cast<double>(copy_from.size()) * 4, sizes.seconds);
    std::printf("  %d thread(s): memory copy %.2f GB/s\n", threads, copy);
    nlohmann::json run = {{"threads", threads}, {"copy_gb_per_second", copy}};
    for (const auto& [name, measure] : kernels) {
      const double rate = measure();
      std::printf("    %-17s %6.2f GB/s  %4.0f %% of the copy\n", name.c_str(), rate,
                  100 * rate / copy);
      run[name + "_gb_per_second"] = rate;
    }
    runs.push_back(run);
  }
  std::cout << nlohmann::json{{"benchmark", "gather"}, {"table_rows", sizes.table_rows},
                              {"width", sizes.width},  {"rows", sizes.picked_rows},
                              {"runs", runs},          {"provenance", provenance_json(argc, argv)}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_gather", bench_main, argc, argv); }
