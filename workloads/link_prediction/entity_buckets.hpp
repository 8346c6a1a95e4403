#pragma once
// PyTorch-BigGraph's layout of a link-prediction workload: entities split into P partitions and
// edges into P x P buckets by the partitions of their source (lhs) and target (rhs). Training one
// bucket needs the embeddings of two partitions only, which is what lets PBG keep the rest on
// disk or on other machines.
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed {

// A bucket: the edges from entities of partition `lhs` to entities of partition `rhs`.
struct Bucket {
  int lhs = 0;
  int rhs = 0;
  friend bool operator==(const Bucket&, const Bucket&) = default;
  // How many of `other`'s partitions this bucket uses too (0, 1 or 2).
  int shared_partitions(const Bucket& other) const;
  // The partitions the bucket needs, each once (one on the diagonal).
  std::vector<int> partitions() const {
    if (lhs == rhs) return {lhs};
    return {lhs, rhs};
  }
};

class EntityPartitioning {
 public:
  // Entities assigned to partitions at random, as PBG's importer does: a seeded permutation cut
  // into num_partitions contiguous runs whose sizes differ by at most one. 1 <= num_partitions
  // <= num_entities.
  EntityPartitioning(std::int64_t num_entities, int num_partitions, std::uint64_t seed);
  // Throws ConfigError naming training.partitions unless 1 <= num_partitions <= num_entities.
  static void check(std::int64_t num_entities, int num_partitions);

  int num_partitions() const { return static_cast<int>(members_.size()); }
  std::int64_t num_entities() const { return static_cast<std::int64_t>(partition_of_.size()); }
  int partition_of(std::int32_t entity) const {
    return partition_of_[static_cast<std::size_t>(entity)];
  }
  std::int32_t offset_of(std::int32_t entity) const {
    return offset_of_[static_cast<std::size_t>(entity)];
  }
  // The entities of partition p, by offset.
  std::span<const std::int32_t> members(int p) const {
    return members_[static_cast<std::size_t>(p)];
  }
  std::int64_t size(int p) const { return static_cast<std::int64_t>(members(p).size()); }

 private:
  std::vector<std::int32_t> partition_of_;
  std::vector<std::int32_t> offset_of_;
  std::vector<std::vector<std::int32_t>> members_;
};

class EdgeBuckets {
 public:
  // Every edge in its bucket, with source and target as offsets within their partitions, in the
  // order of `edges`.
  EdgeBuckets(std::span<const Triple> edges, const EntityPartitioning& partitioning);

  int num_partitions() const { return num_partitions_; }
  std::span<const Triple> edges(Bucket bucket) const {
    return edges_[static_cast<std::size_t>(index(bucket))];
  }
  std::int64_t count(Bucket bucket) const {
    return static_cast<std::int64_t>(edges(bucket).size());
  }
  int index(Bucket bucket) const { return bucket.lhs * num_partitions_ + bucket.rhs; }

 private:
  int num_partitions_;
  std::vector<std::vector<Triple>> edges_;  // by index()
};

// Edges per bucket, by EdgeBuckets::index: of `edges`, or of a planted graph's training edges
// (`source.source` "planted", split as load_link_prediction splits it) counted as they are
// generated, without holding them: the bucket sizes of a graph too large for memory.
std::vector<std::int64_t> bucket_counts(std::span<const Triple> edges,
                                        const EntityPartitioning& partitioning);
std::vector<std::int64_t> planted_bucket_counts(const LinkPredictionSource& source,
                                                const EntityPartitioning& partitioning);

}  // namespace gnnbed
