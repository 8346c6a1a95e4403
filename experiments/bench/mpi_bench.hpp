#pragma once
// What the benchmarks of the MPI transport share (bench_link_exchange, bench_transfer_overlap):
// their list options, and the one JSON line rank 0 prints last.
#include <boost/program_options.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"

namespace gnnbed::bench {

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
