#pragma once
// What one rank of a distributed run holds of a workload: the graph structure it samples from
// (every node's in-edges, or only those of the nodes it owns), the node features placed on it (the
// rows of the nodes it owns, or a slice of the feature columns of every node), the labels and
// split of the nodes it owns, and every node's owner. `cut_shard` takes it from a whole Dataset;
// the sharded workload format (shard_format.hpp) stores it, one file per rank, so that a rank can
// load its part without ever holding the whole workload.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/dataset.hpp"
#include "workloads/partition.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {

// Which node features a rank holds: the rows of the nodes it owns (all columns), or every node's
// row restricted to columns [column_begin, column_end).
struct FeaturePlacement {
  bool owned_rows_only = true;
  std::int64_t column_begin = 0;
  std::int64_t column_end = 0;

  bool operator==(const FeaturePlacement& other) const = default;
};

// A copy of another rank's features (P3's caching): what `part`'s placement holds.
struct FeatureReplica {
  int part = 0;
  FeaturePlacement placement;

  bool operator==(const FeatureReplica& other) const = default;
};

// What a rank holds besides the node owners.
struct ShardPlacement {
  bool structure_partitioned = false;  // the in-edges of its own nodes only, else every node's
  FeaturePlacement features;
  // Copies of other ranks' partitions (P3's caching; sharded workload files hold none): the
  // in-edges of the nodes of these parts too (partitioned structure), in increasing part order,
  // and their features.
  std::vector<int> structure_replicas;
  std::vector<FeatureReplica> feature_replicas;

  bool operator==(const ShardPlacement& other) const = default;
};

// How many of a rank's nodes are in each part of the split.
struct SplitCounts {
  std::int64_t train = 0;
  std::int64_t val = 0;
  std::int64_t test = 0;

  bool operator==(const SplitCounts& other) const = default;
};

struct RankShard {
  std::string name;  // the workload's
  int rank = 0;
  int num_classes = 0;
  int feature_dim = 0;         // the workload's feature width (0: structure only)
  std::int64_t num_edges = 0;  // the whole graph's CSR entries (for summaries)
  NodePartition partition;     // every node's owner
  ShardPlacement placement;
  std::int64_t num_owned = 0;
  Graph structure;  // every node's in-edges, or only the owned nodes' (other rows empty)
  SharedArray<std::int32_t> labels;  // the owned nodes' labels in increasing id order; empty when
                                     // the workload has none
  Split split;                       // the owned nodes of each part, in the workload's order
  std::vector<SplitCounts> split_counts;  // every rank's, in rank order
  // Stored features: the placed part, row-major: the owned nodes' rows (increasing id order) x
  // the placed columns, or every node's row x the placed columns.
  SharedArray<float> stored_features;
  // Stored features of each of placement.feature_replicas, laid out the same way.
  std::vector<SharedArray<float>> replica_features;
  // Generated features: the generator, to be read at the placed rows and columns only.
  std::shared_ptr<const GeneratedFeatures> generated_features;
  // Sparse features (bag of words), in place of stored_features: the placed part as sparse rows,
  // laid out as stored_features (the held nodes' rows x the placed columns, column 0 being
  // column_begin), and each replica's the same way.
  std::shared_ptr<const SparseFeatures> sparse_features;
  std::vector<std::shared_ptr<const SparseFeatures>> sparse_replica_features;
  // With sparse features: every node's stored entries over all columns, which size the sparse
  // rows a rank receives from its peers (StrategyContext::feature_row_entries).
  SharedArray<std::int32_t> feature_row_entries;

  std::int64_t num_nodes() const { return partition.num_nodes(); }
  bool has_features() const { return feature_dim > 0; }
};

// The in-edges of the nodes `partition` gives to `rank` (other nodes keep no in-edges).
Graph owned_rows(const Graph& graph, const NodePartition& partition, int rank);
// The same for the nodes of every part in `parts` (increasing).
Graph owned_rows(const Graph& graph, const NodePartition& partition, const std::vector<int>& parts,
                 const std::string& name);

// `rank`'s part of `dataset`, with the replicas its placement lists. Structure replicated and
// generated features are shared with the dataset, not copied; stored features are copied. Throws
// ConfigError when the placement does not fit the dataset (columns outside its features).
RankShard cut_shard(const Dataset& dataset, const NodePartition& partition, int rank,
                    const ShardPlacement& placement);

}  // namespace gnnbed
