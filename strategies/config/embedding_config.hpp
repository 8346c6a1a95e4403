#pragma once
// How PyTorch-BigGraph-style embeddings are trained: the model (dimension, scoring function,
// margin) and its training (Adagrad, batches, negatives, partitions, bucket order, swapping).
// Defaults are PBG's where it has one, said at each field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/common/json_config.hpp"
#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed {

struct EmbeddingModelConfig {
  int dimension = 100;
  // "dot": score(s, t) = s . t (PBG's dot comparator, no operator); "translation": TransE,
  // score(s, r, t) = -||s + r - t|| with one learnt vector r per relation (PBG's translation
  // operator with the l2 comparator).
  std::string scoring = "dot";
  double margin = 0.1;       // of the ranking loss (PBG: 0.1)
  double init_scale = 1e-3;  // embeddings start as normal(0, init_scale) (PBG: 1e-3)
};

struct EmbeddingTrainingConfig {
  int epochs = 10;
  // Adagrad's step: row-wise for embeddings (one accumulator per entity, as PBG's RowAdagrad),
  // element-wise for relation parameters (PBG: 0.01).
  double learning_rate = 0.01;
  int batch_size = 1000;       // edges per optimiser step (PBG: 1000)
  int batch_negatives = 50;    // the chunk: edges that serve as each other's negatives (PBG: 50)
  int uniform_negatives = 50;  // per chunk and side, uniform over the partition (PBG: 50)
  int partitions = 1;          // entity partitions P: P x P buckets
  std::string bucket_order = "inside_out";  // PBG's default (strategies/pbg_buckets.hpp)
  // Where a single machine keeps the partitions it is not training: empty for memory; a
  // directory to swap them to disk, as PBG does when the embeddings exceed memory.
  std::string swap_directory;
  int eval_every = 0;  // rank the held-out edges every this many epochs (0 = at the end only)
  // "all": rank every held-out edge against every entity; "sampled": against the other held-out
  // edges of its chunk and uniform entities, as PBG evaluates (exec/embedding/sampled_ranking.hpp),
  // at a cost that does not grow with the entities.
  std::string eval_candidates = "all";
  int eval_batch_negatives = 1000;    // sampled: the chunk (PBG: 1000)
  int eval_uniform_negatives = 1000;  // sampled: uniform per chunk and side (PBG: 1000)
  std::uint64_t seed = 1;             // embeddings, partitions, bucket order, edge order, negatives
};

struct EmbeddingExperimentConfig {
  LinkPredictionSource workload;
  EmbeddingModelConfig model;
  EmbeddingTrainingConfig training;
};

// The command-line options of the embedding tools (train_embeddings, run_experiment --strategy
// pbg), each setting one field.
const std::vector<ConfigOption>& embedding_config_options();

// Reads {"workload": ..., "model": ..., "training": ...}; every field optional, errors name it.
EmbeddingExperimentConfig embedding_experiment_from_json(const nlohmann::json& document);
nlohmann::json to_json(const EmbeddingExperimentConfig& config);

// Seeds derived from training.seed for each random choice, shared by every engine.
std::uint64_t embedding_init_seed(const EmbeddingTrainingConfig& config);
std::uint64_t partition_seed(const EmbeddingTrainingConfig& config);
std::uint64_t negative_seed(const EmbeddingTrainingConfig& config);
// Whether the held-out edges are ranked after `epoch` (counted from 1): every eval_every epochs,
// and after the last.
bool evaluated_epoch(const EmbeddingTrainingConfig& config, int epoch);
// What trains bucket `bucket_index` (lhs * P + rhs) in `epoch`: its edge order and negatives, the
// same on whichever machine or rank trains it.
std::uint64_t bucket_seed(const EmbeddingTrainingConfig& config, int epoch, int bucket_index);

}  // namespace gnnbed
