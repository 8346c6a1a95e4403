#pragma once
// The bundled Planetoid datasets, loaded once per test process, and small generated workloads (for
// tests that link gnnbed_workloads).
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "workloads/workload_config.hpp"

namespace gnnbed::testing {

// `feature_rows` as workload.feature_rows: "dense" keeps the bag-of-words rows dense.
inline const Dataset& bundled_workload(const std::string& name,
                                       const std::string& feature_rows = "auto") {
  static std::map<std::pair<std::string, std::string>, Dataset> loaded;
  const auto key = std::make_pair(name, feature_rows);
  auto it = loaded.find(key);
  if (it == loaded.end()) {
    WorkloadConfig config;
    config.source = name;
    config.feature_rows = feature_rows;
    it = loaded.emplace(key, load_workload(config)).first;
  }
  return it->second;
}

// The CSBM graph of the accuracy tests: learnable well above chance (4 classes, weak features,
// homophilous edges), small enough to train in seconds.
inline WorkloadConfig learnable_csbm_config() {
  WorkloadConfig config;
  config.source = "csbm";
  config.num_nodes = 3000;
  config.num_classes = 4;
  config.feature_dim = 32;
  config.feature_signal = 0.15f;
  config.homophily = 0.8;
  return config;
}

// A contextual SBM workload: generated structure, labels and (generated) features.
inline Dataset csbm_workload(std::int64_t num_nodes, int num_classes, int feature_dim) {
  WorkloadConfig config;
  config.source = "csbm";
  config.num_nodes = num_nodes;
  config.num_classes = num_classes;
  config.feature_dim = feature_dim;
  return load_workload(config);
}

}  // namespace gnnbed::testing
