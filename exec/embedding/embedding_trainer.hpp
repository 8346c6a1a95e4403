#pragma once
// Single-machine PBG-style training: every epoch trains the P x P buckets in the configured
// bucket order, holding only each bucket's two partitions (the rest in memory or swapped to disk,
// training.swap_directory), then ranks the held-out edges.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "exec/embedding/link_ranking.hpp"
#include "strategies/config/embedding_config.hpp"

namespace gnnbed {

struct EmbeddingEpochRecord {
  int epoch = 0;
  double loss_per_edge = 0;  // the ranking loss of both sides, over the epoch's edges
  double seconds = 0;
  double swap_seconds = 0;  // of `seconds`: reading and writing swapped partitions
  std::int64_t swap_bytes = 0;
  std::optional<LinkRankingMetrics> test;  // on evaluated epochs
};

struct EmbeddingReport {
  std::vector<EmbeddingEpochRecord> epochs;
  LinkRankingMetrics test;   // after the last epoch
  double epoch_seconds = 0;  // mean, the first epoch left out when there are more
  SwapCounters swaps;
  std::int64_t peak_memory_bytes = 0;  // the process's peak resident memory, at the end
  nlohmann::json to_json() const;
};

// The trained state, for callers that go on from it (tests compare it across stores).
struct EmbeddingModelState {
  std::vector<PartitionTable> partitions;
  RelationParameters relations;
};

// Called after every bucket with (epoch, buckets trained in it, buckets in all), for progress.
using BucketProgress = std::function<void(int, int, int)>;

EmbeddingReport train_embeddings(const LinkPredictionData& data,
                                 const EmbeddingExperimentConfig& config,
                                 const std::function<void(const EmbeddingEpochRecord&)>& on_epoch,
                                 EmbeddingModelState* final_state = nullptr,
                                 const BucketProgress& on_bucket = nullptr);

// Ranks the held-out edges by the configured protocol (training.eval_candidates).
LinkRankingMetrics evaluate_held_out(std::span<const Triple> held_out, const KnownEdgeLists& known,
                                     const EntityPartitioning& partitioning, PartitionStore& store,
                                     const RelationParameters& relations,
                                     const EmbeddingExperimentConfig& config);
// The hyperparameters of one bucket's training, from the configuration.
BucketHyperparameters bucket_hyperparameters(const EmbeddingExperimentConfig& config);

}  // namespace gnnbed
