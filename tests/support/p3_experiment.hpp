#pragma once
// The experiment of the pipelining tests: P3 training 2-layer GraphSAGE (hidden 16, dropout 0.5)
// on Cora, with or without pipelining.
#include <vector>

#include "strategies/config/experiment_config.hpp"

namespace gnnbed::testing {

inline ExperimentConfig p3_cora_experiment(int batch_size, std::vector<int> fanouts,
                                           bool pipeline) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{"sage", 2, 16, 0.5};
  config.training.batch_size = batch_size;
  config.training.fanouts = std::move(fanouts);
  config.distribution.strategy = "p3";
  config.distribution.pipeline = pipeline;
  return config;
}

}  // namespace gnnbed::testing
