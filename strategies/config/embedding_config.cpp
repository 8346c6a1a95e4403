#include "strategies/config/embedding_config.hpp"

#include "strategies/pbg_buckets.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

EmbeddingModelConfig model_from_json(const nlohmann::json& object) {
  EmbeddingModelConfig model;
  JsonFieldReader reader(object, "model");
  reader.read("dimension", model.dimension);
  reader.read("scoring", model.scoring);
  reader.read("margin", model.margin);
  reader.read("init_scale", model.init_scale);
  reader.finish();
  require(model.dimension >= 1, "model.dimension", "must be at least 1");
  require_one_of("model.scoring", model.scoring, {"dot", "translation"});
  require(model.margin >= 0, "model.margin", "must not be negative");
  require(model.init_scale > 0, "model.init_scale", "must be positive");
  return model;
}

EmbeddingTrainingConfig training_from_json(const nlohmann::json& object) {
  EmbeddingTrainingConfig training;
  JsonFieldReader reader(object, "training");
  reader.read("epochs", training.epochs);
  reader.read("learning_rate", training.learning_rate);
  reader.read("batch_size", training.batch_size);
  reader.read("batch_negatives", training.batch_negatives);
  reader.read("uniform_negatives", training.uniform_negatives);
  reader.read("partitions", training.partitions);
  reader.read("bucket_order", training.bucket_order);
  reader.read("swap_directory", training.swap_directory);
  reader.read("eval_every", training.eval_every);
  reader.read("eval_candidates", training.eval_candidates);
  reader.read("eval_batch_negatives", training.eval_batch_negatives);
  reader.read("eval_uniform_negatives", training.eval_uniform_negatives);
  reader.read("seed", training.seed);
  reader.finish();
  require(training.epochs >= 1, "training.epochs", "must be at least 1");
  require(training.learning_rate > 0, "training.learning_rate", "must be positive");
  require(training.batch_size >= 1, "training.batch_size", "must be at least 1");
  require(training.batch_negatives >= 1, "training.batch_negatives", "must be at least 1");
  require(training.uniform_negatives >= 0, "training.uniform_negatives", "must not be negative");
  require(training.partitions >= 1, "training.partitions", "must be at least 1");
  require_one_of("training.bucket_order", training.bucket_order, bucket_order_names());
  require(training.eval_every >= 0, "training.eval_every", "must not be negative");
  require_one_of("training.eval_candidates", training.eval_candidates, {"all", "sampled"});
  require(training.eval_batch_negatives >= 1, "training.eval_batch_negatives",
          "must be at least 1");
  require(training.eval_uniform_negatives >= 0, "training.eval_uniform_negatives",
          "must not be negative");
  return training;
}

const nlohmann::json& section(const nlohmann::json& document, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  const auto found = document.find(key);
  return found == document.end() ? empty : *found;
}

}  // namespace

EmbeddingExperimentConfig embedding_experiment_from_json(const nlohmann::json& document) {
  JsonFieldReader top(document, "");
  top.child("workload");
  top.child("model");
  top.child("training");
  top.finish();
  EmbeddingExperimentConfig config;
  config.workload = link_prediction_source_from_json(section(document, "workload"), {}, "workload");
  config.model = model_from_json(section(document, "model"));
  config.training = training_from_json(section(document, "training"));
  return config;
}

nlohmann::json to_json(const EmbeddingExperimentConfig& config) {
  const EmbeddingModelConfig& model = config.model;
  const EmbeddingTrainingConfig& training = config.training;
  return {{"workload", to_json(config.workload)},
          {"model",
           {{"dimension", model.dimension},
            {"scoring", model.scoring},
            {"margin", model.margin},
            {"init_scale", model.init_scale}}},
          {"training",
           {{"epochs", training.epochs},
            {"learning_rate", training.learning_rate},
            {"batch_size", training.batch_size},
            {"batch_negatives", training.batch_negatives},
            {"uniform_negatives", training.uniform_negatives},
            {"partitions", training.partitions},
            {"bucket_order", training.bucket_order},
            {"swap_directory", training.swap_directory},
            {"eval_every", training.eval_every},
            {"eval_candidates", training.eval_candidates},
            {"eval_batch_negatives", training.eval_batch_negatives},
            {"eval_uniform_negatives", training.eval_uniform_negatives},
            {"seed", training.seed}}}};
}

std::uint64_t embedding_init_seed(const EmbeddingTrainingConfig& config) {
  return hash_mix(config.seed, 0xe3b);
}
const std::vector<ConfigOption>& embedding_config_options() {
  static const std::vector<ConfigOption> options{
      {"dataset", "workload.source", "cora, citeseer, pubmed, planted, or a file's path"},
      {"entities", "workload.entities", "planted: entities"},
      {"group-size", "workload.group_size", "planted: entities per group"},
      {"degree", "workload.degree", "planted: edges per entity, within its group"},
      {"format", "workload.format", "a file's format: edge_list or triples"},
      {"test-fraction", "workload.test_fraction", "edges held out for ranking"},
      {"dimension", "model.dimension", "embedding width"},
      {"scoring", "model.scoring", "dot or translation (TransE)"},
      {"margin", "model.margin", "ranking loss margin"},
      {"epochs", "training.epochs", "passes over every bucket"},
      {"lr", "training.learning_rate", "Adagrad learning rate"},
      {"batch-size", "training.batch_size", "edges per optimiser step"},
      {"batch-negatives", "training.batch_negatives", "chunk size: in-batch negatives"},
      {"uniform-negatives", "training.uniform_negatives", "uniform negatives per chunk and side"},
      {"partitions", "training.partitions", "entity partitions P (P x P buckets)"},
      {"bucket-order", "training.bucket_order", "inside_out, outside_in, random, affinity"},
      {"swap-dir", "training.swap_directory", "swap partitions to this directory"},
      {"eval-every", "training.eval_every", "rank held-out edges every N epochs"},
      {"eval-candidates", "training.eval_candidates",
       "all entities, or sampled (PBG's protocol: chunk and uniform candidates)"},
      {"seed", "training.seed", "every random choice"}};
  return options;
}

std::uint64_t partition_seed(const EmbeddingTrainingConfig& config) {
  return hash_mix(config.seed, 0x9a27);
}
std::uint64_t negative_seed(const EmbeddingTrainingConfig& config) {
  return hash_mix(config.seed, 0x4e6);
}
bool evaluated_epoch(const EmbeddingTrainingConfig& config, int epoch) {
  return epoch == config.epochs || (config.eval_every > 0 && epoch % config.eval_every == 0);
}

std::uint64_t bucket_seed(const EmbeddingTrainingConfig& config, int epoch, int bucket_index) {
  return hash_mix(negative_seed(config), static_cast<std::uint64_t>(epoch),
                  static_cast<std::uint64_t>(bucket_index));
}

}  // namespace gnnbed
