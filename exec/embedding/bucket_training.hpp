#pragma once
// Training one bucket, as a PBG trainer does: the bucket's edges in a seeded random order, in
// batches; each batch in chunks whose edges are each other's negatives, plus uniform negatives
// drawn from the two partitions; both sides of every edge corrupted; the margin ranking loss;
// one Adagrad step per batch (row-wise for embeddings, element-wise for relation parameters).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "exec/embedding/partition_store.hpp"
#include "exec/embedding/ranking_loss.hpp"
#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed {

// The parameters every trainer shares: one translation vector per relation (zero at the start,
// as PBG's translation operator) and its Adagrad state. Empty for dot scoring.
struct RelationParameters {
  int dimension = 0;
  std::vector<float> translation;  // relations x dimension
  std::vector<float> adagrad_sum;  // element-wise

  RelationParameters() = default;
  RelationParameters(Scoring scoring, int num_relations, int dimension);
  bool empty() const { return translation.empty(); }
  const float* of(std::int32_t relation) const {
    return translation.data() + static_cast<std::ptrdiff_t>(relation) * dimension;
  }
};

struct BucketHyperparameters {
  Scoring scoring = Scoring::dot;
  double margin = 0.1;
  double learning_rate = 0.1;
  int batch_size = 1000;
  int batch_negatives = 50;
  int uniform_negatives = 50;
};

struct BucketStats {
  double loss = 0;  // summed over the bucket's edges (both sides)
  std::int64_t edges = 0;
};

// Trains the bucket's `edges` (sources as offsets in `lhs`, targets in `rhs`; `lhs` and `rhs`
// are one table for a bucket on the diagonal) for one pass. `seed` draws the edge order and the
// negatives: a pure function of it, so any store or engine that trains the same bucket with the
// same seed computes the same update. `between_batches`, when set, runs after every batch's step
// (a distributed trainer serves its peers' transfers there).
BucketStats train_bucket(std::span<const Triple> edges, PartitionTable& lhs, PartitionTable& rhs,
                         RelationParameters& relations, const BucketHyperparameters& hyper,
                         std::uint64_t seed, const std::function<void()>& between_batches = {});

}  // namespace gnnbed
