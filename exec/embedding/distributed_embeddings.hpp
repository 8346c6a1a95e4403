#pragma once
// PyTorch-BigGraph's distributed training for real: every rank builds the run's plans
// (strategies/pbg.hpp) and runs its own with the EmbeddingPlanRunner, epoch after epoch; rank 0
// gathers the partitions (over the control plane, not counted) to rank the held-out edges.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "exec/embedding/embedding_trainer.hpp"
#include "exec/transport.hpp"
#include "strategies/plan/traffic.hpp"

namespace gnnbed {

struct DistributedEmbeddingEpoch {
  int epoch = 0;
  double seconds = 0;          // the slowest rank's plan
  double loss_per_edge = 0;    // over every rank's edges
  double train_seconds = 0;    // mean over ranks: training buckets
  double waiting_seconds = 0;  // mean over ranks: the rest (grants, partitions in flight)
  std::optional<LinkRankingMetrics> test;  // on evaluated epochs
};

struct DistributedEmbeddingReport {
  int num_ranks = 1;
  std::vector<DistributedEmbeddingEpoch> epochs;
  LinkRankingMetrics test;   // after the last epoch
  double epoch_seconds = 0;  // mean, the first epoch left out when there are more
  // Per rank, over the run: bytes by kind the transport counted and the plans said.
  std::vector<TrafficBytes> sent;
  std::vector<TrafficBytes> received;
  std::vector<TrafficBytes> planned_sent;
  std::vector<TrafficBytes> planned_received;
  std::int64_t peak_memory_bytes = 0;  // the largest rank's peak resident memory
  // Whether every rank moved exactly the bytes its plans said, by kind.
  bool bytes_match_plans() const { return sent == planned_sent && received == planned_received; }
  // The schedule the plans follow, in its modelled units (edges): epoch makespan, and the share of
  // trainers' time spent waiting for a grant.
  double schedule_makespan = 0;
  double schedule_idle_share = 0;
  nlohmann::json to_json() const;
};

// Collective: every rank passes the same data and configuration (scoring "dot"). Rank 0's report
// is complete and `on_epoch` is called there; other ranks get their share. `final_state`, when
// set, receives the trained tables on rank 0. Throws ConfigError for a configuration the strategy
// does not take, and Error when a rank makes no progress for `stall_timeout_seconds` (0: never).
DistributedEmbeddingReport train_embeddings_distributed(
    const LinkPredictionData& data, const EmbeddingExperimentConfig& config, Transport& transport,
    const std::function<void(const DistributedEmbeddingEpoch&)>& on_epoch,
    EmbeddingModelState* final_state = nullptr, double stall_timeout_seconds = 0);

}  // namespace gnnbed
