#pragma once
// What the benchmarks of the MPI transport share (bench_link_exchange, bench_transfer_overlap):
// their options on two ranks, their list options, and the one JSON line rank 0 prints last.
#include <boost/program_options.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "exec/transport.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"

namespace gnnbed::bench {

// The options of a benchmark that runs on exactly two ranks; none after printing the help (rank
// 0), which ends the benchmark.
inline std::optional<boost::program_options::variables_map> two_rank_options(
    const boost::program_options::options_description& options, int argc, char** argv,
    const Transport& transport) {
  namespace po = boost::program_options;
  po::variables_map values;
  po::store(po::parse_command_line(argc, argv, options), values);
  po::notify(values);
  if (values.count("help")) {
    if (transport.rank() == 0) std::cout << options;
    return std::nullopt;
  }
  if (transport.size() != 2) throw Error("needs 2 ranks, not " + std::to_string(transport.size()));
  return values;
}

// A comma-separated list of integers, each at least `minimum` (an error names the option).
inline std::vector<int> int_list(const boost::program_options::variables_map& options,
                                 const std::string& name, int minimum) {
  const nlohmann::json lists = {{name, options[name].as<std::string>()}};
  std::vector<int> values;
  JsonFieldReader(lists, "").read(name, values);
  for (const int value : values) {
    require(value >= minimum, name, "must be at least " + std::to_string(minimum));
  }
  return values;
}

// The results as one JSON line with their provenance.
inline void print_results(const std::string& bench, int argc, char** argv,
                          const nlohmann::json& rows) {
  std::cout << nlohmann::json{{"bench", bench},
                              {"provenance", provenance_json(argc, argv)},
                              {"results", rows}}
                   .dump()
            << "\n";
}

}  // namespace gnnbed::bench
