#include "workloads/rank_shard.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/common/errors.hpp"

namespace gnnbed {

Graph owned_rows(const Graph& graph, const NodePartition& partition, int rank) {
  return owned_rows(graph, partition, {rank}, "rank " + std::to_string(rank) + " structure");
}

Graph owned_rows(const Graph& graph, const NodePartition& partition, const std::vector<int>& parts,
                 const std::string& name) {
  std::vector<char> kept(static_cast<std::size_t>(partition.num_parts()), 0);
  for (const int part : parts) kept.at(static_cast<std::size_t>(part)) = 1;
  const auto n = static_cast<std::size_t>(graph.num_nodes());
  std::vector<EdgeIndex> offsets(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const bool owned = kept[static_cast<std::size_t>(partition.owner(static_cast<NodeId>(v)))] != 0;
    offsets[v + 1] = offsets[v] + (owned ? graph.in_degree(static_cast<NodeId>(v)) : 0);
  }
  std::vector<NodeId> sources(static_cast<std::size_t>(offsets[n]));
  for (std::size_t v = 0; v < n; ++v) {
    if (offsets[v + 1] == offsets[v]) continue;
    const auto neighbors = graph.in_neighbors(static_cast<NodeId>(v));
    std::copy(neighbors.begin(), neighbors.end(), sources.begin() + offsets[v]);
  }
  return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)), name);
}

namespace {

void check_columns(const Dataset& dataset, const FeaturePlacement& features) {
  require(0 <= features.column_begin && features.column_begin <= features.column_end &&
              features.column_end <= dataset.feature_dim(),
          "feature placement",
          "columns [" + std::to_string(features.column_begin) + ", " +
              std::to_string(features.column_end) + ") are not inside the " +
              std::to_string(dataset.feature_dim()) + " feature columns");
}

// The nodes whose features `placement` holds of `part`: its own, or every node.
std::vector<NodeId> held_nodes(std::int64_t num_nodes, const NodePartition& partition, int part,
                               const FeaturePlacement& placement) {
  if (placement.owned_rows_only) return partition.nodes_of(part);
  std::vector<NodeId> every(static_cast<std::size_t>(num_nodes));
  std::iota(every.begin(), every.end(), NodeId{0});
  return every;
}

// The sparse features `placement` holds of `part`, laid out as placed_features lays out dense
// ones: the held nodes' rows, columns [column_begin, column_end) renumbered from 0.
std::shared_ptr<const SparseFeatures> placed_sparse_features(const SparseFeatures& features,
                                                             const NodePartition& partition,
                                                             int part,
                                                             const FeaturePlacement& placement) {
  const SparseMatrix rows =
      features.gather_rows(held_nodes(features.num_nodes(), partition, part, placement));
  SparseMatrix placed;
  placed.rows = rows.rows;
  placed.cols = placement.column_end - placement.column_begin;
  placed.offsets.reserve(static_cast<std::size_t>(rows.rows) + 1);
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    for (auto e = rows.offsets[static_cast<std::size_t>(r)];
         e < rows.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t column = rows.columns[static_cast<std::size_t>(e)];
      if (column < placement.column_begin || column >= placement.column_end) continue;
      placed.columns.push_back(static_cast<std::int32_t>(column - placement.column_begin));
      placed.weights.push_back(rows.weights[static_cast<std::size_t>(e)]);
    }
    placed.offsets.push_back(static_cast<std::int64_t>(placed.columns.size()));
  }
  return std::make_shared<const SparseFeatures>(std::move(placed));
}

// The stored features `placement` holds of `part`'s nodes (or of every node's columns).
SharedArray<float> placed_features(const FeatureStore& features, const NodePartition& partition,
                                   int part, const FeaturePlacement& placement) {
  const std::vector<NodeId> held = held_nodes(features.num_nodes(), partition, part, placement);
  std::vector<float> values(
      held.size() * static_cast<std::size_t>(placement.column_end - placement.column_begin));
  features.gather(held, static_cast<int>(placement.column_begin),
                  static_cast<int>(placement.column_end), values.data());
  return SharedArray(std::move(values));
}

}  // namespace

RankShard cut_shard(const Dataset& dataset, const NodePartition& partition, int rank,
                    const ShardPlacement& placement) {
  require(partition.num_nodes() == dataset.num_nodes(), "partition",
          "covers " + std::to_string(partition.num_nodes()) + " nodes, the dataset has " +
              std::to_string(dataset.num_nodes()));
  require(rank >= 0 && rank < partition.num_parts(), "rank",
          std::to_string(rank) + " is outside [0, " + std::to_string(partition.num_parts()) + ")");
  const FeaturePlacement& features = placement.features;
  if (dataset.features) {
    check_columns(dataset, features);
    for (const FeatureReplica& replica : placement.feature_replicas) {
      check_columns(dataset, replica.placement);
      require(replica.part >= 0 && replica.part < partition.num_parts() && replica.part != rank,
              "feature placement",
              "rank " + std::to_string(rank) + " cannot hold a replica of part " +
                  std::to_string(replica.part));
    }
  }
  RankShard shard;
  shard.name = dataset.name;
  shard.rank = rank;
  shard.num_classes = dataset.num_classes;
  shard.feature_dim = dataset.feature_dim();
  shard.num_edges = dataset.graph.num_edges();
  shard.partition = partition;
  shard.placement = placement;
  if (placement.structure_partitioned) {
    std::vector<int> parts = placement.structure_replicas;
    parts.push_back(rank);
    std::sort(parts.begin(), parts.end());
    shard.structure =
        owned_rows(dataset.graph, partition, parts, "rank " + std::to_string(rank) + " structure");
  } else {
    shard.structure = dataset.graph;
  }
  const std::vector<NodeId> owned = partition.nodes_of(rank);
  shard.num_owned = static_cast<std::int64_t>(owned.size());
  if (!dataset.labels.empty()) {
    std::vector<std::int32_t> labels;
    labels.reserve(owned.size());
    for (const NodeId v : owned) labels.push_back(dataset.labels[static_cast<std::size_t>(v)]);
    shard.labels = SharedArray(std::move(labels));
  }
  shard.split_counts.resize(static_cast<std::size_t>(partition.num_parts()));
  const std::pair<const std::vector<NodeId>*, std::int64_t SplitCounts::*> parts[] = {
      {&dataset.split.train, &SplitCounts::train},
      {&dataset.split.val, &SplitCounts::val},
      {&dataset.split.test, &SplitCounts::test}};
  std::vector<NodeId>* owned_parts[] = {&shard.split.train, &shard.split.val, &shard.split.test};
  for (std::size_t p = 0; p < 3; ++p) {
    for (const NodeId v : *parts[p].first) {
      const int owner = partition.owner(v);
      ++(shard.split_counts[static_cast<std::size_t>(owner)].*parts[p].second);
      if (owner == rank) owned_parts[p]->push_back(v);
    }
  }
  if (!dataset.features) return shard;
  if (auto generated = std::dynamic_pointer_cast<const GeneratedFeatures>(dataset.features)) {
    shard.generated_features = std::move(generated);
    return shard;
  }
  if (const auto* sparse = dynamic_cast<const SparseFeatures*>(dataset.features.get())) {
    shard.sparse_features = placed_sparse_features(*sparse, partition, rank, features);
    for (const FeatureReplica& replica : placement.feature_replicas) {
      shard.sparse_replica_features.push_back(
          placed_sparse_features(*sparse, partition, replica.part, replica.placement));
    }
    shard.feature_row_entries = sparse->row_entries();
    return shard;
  }
  shard.stored_features = placed_features(*dataset.features, partition, rank, features);
  for (const FeatureReplica& replica : placement.feature_replicas) {
    shard.replica_features.push_back(
        placed_features(*dataset.features, partition, replica.part, replica.placement));
  }
  return shard;
}

}  // namespace gnnbed
