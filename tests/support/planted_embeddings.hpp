#pragma once
// The planted link-prediction experiment the embedding tests train: groups of 20 entities, each
// with `degree` edges to others of its group (planted_communities), dimension 32.
#include <cstdint>

#include "strategies/config/embedding_config.hpp"

namespace gnnbed::testing {

inline EmbeddingExperimentConfig planted_embedding_config(std::int64_t entities, int degree,
                                                          int partitions, int epochs = 50) {
  EmbeddingExperimentConfig config;
  config.workload.source = "planted";
  config.workload.entities = entities;
  config.workload.group_size = 20;
  config.workload.degree = degree;
  config.model.dimension = 32;
  config.training.epochs = epochs;
  config.training.partitions = partitions;
  return config;
}

}  // namespace gnnbed::testing
