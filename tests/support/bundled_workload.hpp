#pragma once
// The bundled Planetoid datasets, loaded once per test process (for tests that link
// gnnbed_workloads).
#include <map>
#include <string>

#include "workloads/workload_config.hpp"

namespace gnnbed::testing {

inline const Dataset& bundled_workload(const std::string& name) {
  static std::map<std::string, Dataset> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    WorkloadConfig config;
    config.source = name;
    it = loaded.emplace(name, load_workload(config)).first;
  }
  return it->second;
}

}  // namespace gnnbed::testing
