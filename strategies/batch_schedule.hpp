#pragma once
// Which seeds every rank trains on in every iteration. Each rank trains on the training nodes it
// owns (DGL's and P3's trainers both do), in a seeded order that changes every epoch, in batches of
// `batch_size`. An epoch has as many iterations as the rank with the most training nodes needs;
// ranks that run out take part with empty batches, so that collectives stay matched. A batch size
// of 0 trains full-graph: one iteration per epoch, every rank's batch all of its training nodes.
//
// Every rank can compute every rank's seeds: the schedule is a pure function of the training
// nodes, the partition and the seed. A rank that holds only its own training nodes (a sharded
// workload) builds the schedule from them and every rank's count, and can list its own seeds only.
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/graph.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {

class BatchSchedule {
 public:
  BatchSchedule(std::span<const NodeId> train_nodes, const NodePartition& partition, int batch_size,
                std::uint64_t seed);
  // `rank`'s view: its own training nodes, and how many every rank has (train_counts[q] for q).
  BatchSchedule(int rank, std::span<const NodeId> own_train_nodes,
                std::span<const std::int64_t> train_counts, int batch_size, std::uint64_t seed);

  int num_ranks() const { return static_cast<int>(counts_.size()); }
  int iterations_per_epoch() const { return iterations_; }
  std::int64_t train_nodes_of(int rank) const { return counts_[static_cast<std::size_t>(rank)]; }

  // Rank r's seeds in iteration i of epoch e (possibly empty). Throws Error for a rank whose
  // training nodes this schedule was not given.
  std::vector<NodeId> seeds(int rank, int epoch, int iteration) const;
  // Seeds over all ranks in iteration i of epoch e: the loss is their mean.
  std::int64_t seeds_in_iteration(int epoch, int iteration) const;
  // The optimizer step of iteration i of epoch e, counted from 0 over the run (epochs from 1).
  std::int64_t global_step(int epoch, int iteration) const {
    return static_cast<std::int64_t>(epoch - 1) * iterations_ + iteration;
  }
  // Tells iterations apart for sampling: every rank uses the same key in the same iteration.
  std::uint64_t batch_key(int epoch, int iteration) const;
  // Dropout masks of iteration i of epoch e (per layer: hash_mix(key, layer)).
  std::uint64_t dropout_key(int epoch, int iteration) const;

 private:
  void count_iterations();

  std::vector<std::vector<NodeId>> owned_;  // per rank, increasing ids (only the held ranks')
  std::vector<std::int64_t> counts_;        // per rank
  std::vector<char> held_;                  // per rank: owned_ is known
  int batch_size_;
  std::uint64_t seed_;
  int iterations_ = 0;
};

}  // namespace gnnbed
