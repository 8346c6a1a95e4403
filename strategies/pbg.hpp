#pragma once
// PyTorch-BigGraph's distributed training as plans (docs/embeddings.md, "Distributed training").
// M ranks are M trainers. Rank 0 also runs the lock server; partition p is served, between the
// buckets that use it, by rank p mod M (PBG starts a partition server beside every trainer). One
// plan per rank per epoch follows the epoch decided ahead (pbg_schedule.hpp); for each of its
// buckets a trainer
//   1. gives back the partitions its previous bucket used and this one does not (their tables to
//      their servers), then asks rank 0 for the bucket (the request releases the previous one);
//   2. waits for the grant, which rank 0 sends once every trainer that held one of the bucket's
//      partitions this epoch has released it;
//   3. fetches the partitions it does not hold from their servers, and trains the bucket.
// After its last bucket it gives every partition back and tells the lock server it is done.
// Each message is a send in one rank's plan and a receive in the other's. Every exchange has a
// place in one order of the whole epoch (its time in the schedule, then its kind, trainer and
// partition), and every rank's ops are in that order, so that plans run by the rule "each stream
// in order, each op after its dependencies" never wait on each other in a cycle. The servers' side
// is on the server stream, which runs beside the rank's own training.
//
// Relation parameters (translation scoring) are shared through PBG's parameter server on rank 0:
// after each bucket a trainer pushes its changes since its last pull and pulls the server's values
// (at most 100 updates/s and 1 GB/s), rank 0's trainer included, through messages to itself. PBG's
// client does this in the background as training goes on; here it happens between buckets, so
// that runs are deterministic.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strategies/config/embedding_config.hpp"
#include "strategies/pbg_schedule.hpp"
#include "strategies/plan/plan.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {

inline constexpr const char* kPbgStrategyName = "pbg";

// Whether a command line asks for this strategy (--strategy pbg, or --strategy=pbg): the tools
// then take the embedding options instead of a GNN experiment's.
bool asks_for_pbg(int argc, char** argv);

// The rank that serves partition p between buckets.
inline int pbg_partition_server(int partition, int num_ranks) { return partition % num_ranks; }

// The relation parameters in every plan (persistent: relations x dimension): a trainer's copy, and
// the parameter server's on rank 0.
inline constexpr const char* kPbgRelationsTensor = "relations";
inline constexpr const char* kPbgServerRelationsTensor = "relations (parameter server)";

// The name of partition p's table in every plan (persistent: rows x (dimension + 1)).
std::string pbg_partition_tensor(int partition);
// The partition whose table `tensor_name` is; nothing for any other name.
std::optional<int> pbg_partition_of(const std::string& tensor_name);

// The dense FLOPs of training a bucket of `edges` edges, what the cost model times it by: every
// edge scored against its chunk's edges and the uniform candidates on both sides (a multiply-add
// per coordinate), and twice that for the gradients of both factors. The rows it reads and writes
// grow with the same edges, so one rate covers both.
double bucket_flops(std::int64_t edges, int dimension, const EmbeddingTrainingConfig& training);

class PbgStrategy {
 public:
  // `num_relations`: the relation parameters trainers share with translation scoring. Throws
  // ConfigError when the run does not fit (check()).
  PbgStrategy(const EntityPartitioning& partitioning, const EdgeBuckets& buckets, int num_relations,
              const EmbeddingExperimentConfig& config, int num_ranks);
  // Plans from the buckets' sizes alone (edges per bucket, by EdgeBuckets::index), carrying none
  // of their edges: for the simulator, on graphs too large to hold (planted_bucket_counts). The
  // engine that trains for real refuses them.
  PbgStrategy(const EntityPartitioning& partitioning, std::vector<std::int64_t> bucket_counts,
              int num_relations, const EmbeddingExperimentConfig& config, int num_ranks);

  // Throws ConfigError naming the field when `config` on `num_ranks` ranks is not a run the
  // strategy plans: a swap directory (its trainers hold only their bucket's partitions already).
  static void check(const EmbeddingExperimentConfig& config, int num_ranks);

  int num_ranks() const { return num_ranks_; }
  // The epoch the plans follow (the same every epoch: the lock server's rule is deterministic and
  // a bucket's modelled duration is its edges plus the lock round trip).
  const BucketSchedule& schedule() const { return schedule_; }
  // Every rank's plan of `epoch`, rank order.
  std::vector<Plan> epoch_plans(int epoch) const;
  const std::vector<std::int64_t>& bucket_counts() const { return bucket_counts_; }
  // Rows of the relation parameters trainers share (0 with dot scoring, which has none).
  int shared_relations() const { return shared_relations_; }

 private:
  const EntityPartitioning& partitioning_;
  EmbeddingExperimentConfig config_;
  int shared_relations_;  // relation parameters on the parameter server (0: dot scoring)
  int num_ranks_;
  BucketSchedule schedule_;
  std::vector<std::int64_t> bucket_counts_;  // by EdgeBuckets::index
  // Each bucket's edges as (lhs offset, relation, rhs offset) triples, by EdgeBuckets::index:
  // built once, shared by every epoch's plans (empty: plans from sizes alone).
  std::vector<std::shared_ptr<const std::vector<std::int32_t>>> edges_;
};

}  // namespace gnnbed
