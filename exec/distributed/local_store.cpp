#include "exec/distributed/local_store.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"

namespace gnnbed {

Graph owned_rows(const Graph& graph, const NodePartition& partition, int rank) {
  const auto n = static_cast<std::size_t>(graph.num_nodes());
  std::vector<EdgeIndex> offsets(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const bool owned = partition.owner(static_cast<NodeId>(v)) == rank;
    offsets[v + 1] = offsets[v] + (owned ? graph.in_degree(static_cast<NodeId>(v)) : 0);
  }
  std::vector<NodeId> sources(static_cast<std::size_t>(offsets[n]));
  for (std::size_t v = 0; v < n; ++v) {
    if (offsets[v + 1] == offsets[v]) continue;
    const auto neighbors = graph.in_neighbors(static_cast<NodeId>(v));
    std::copy(neighbors.begin(), neighbors.end(), sources.begin() + offsets[v]);
  }
  return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)),
               "rank " + std::to_string(rank) + " structure");
}

LocalStore::LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
                       const FeaturePlacement& placement)
    : rank_(rank), partition_(context.partition), placement_(placement) {
  structure_ =
      context.structure_partitioned ? owned_rows(dataset.graph, partition_, rank) : dataset.graph;
  const auto n = static_cast<std::size_t>(dataset.num_nodes());
  labels_.assign(n, -1);
  for (std::size_t v = 0; v < n; ++v) {
    if (partition_.owner(static_cast<NodeId>(v)) == rank && !dataset.labels.empty()) {
      labels_[v] = dataset.labels[v];
    }
  }
  if (!dataset.features) return;
  if (dynamic_cast<const GeneratedFeatures*>(dataset.features.get()) != nullptr) {
    generated_ = dataset.features;
    return;
  }
  const std::int64_t width = placement.column_end - placement.column_begin;
  std::vector<NodeId> held;
  row_of_.assign(n, -1);
  for (std::size_t v = 0; v < n; ++v) {
    if (!placement.owned_rows_only || partition_.owner(static_cast<NodeId>(v)) == rank) {
      row_of_[v] = static_cast<std::int32_t>(held.size());
      held.push_back(static_cast<NodeId>(v));
    }
  }
  stored_.resize(held.size() * static_cast<std::size_t>(width));
  dataset.features->gather(held, static_cast<int>(placement.column_begin),
                           static_cast<int>(placement.column_end), stored_.data());
}

void LocalStore::gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                                 std::int64_t column_end, float* out) const {
  if (column_begin < placement_.column_begin || column_end > placement_.column_end ||
      column_begin > column_end) {
    throw Error("rank " + std::to_string(rank_) + " holds feature columns [" +
                std::to_string(placement_.column_begin) + ", " +
                std::to_string(placement_.column_end) + "), not [" + std::to_string(column_begin) +
                ", " + std::to_string(column_end) + ")");
  }
  for (const NodeId v : nodes) {
    if (placement_.owned_rows_only && partition_.owner(v) != rank_) {
      throw Error("rank " + std::to_string(rank_) + " does not hold the features of node " +
                  std::to_string(v) + " (owned by rank " + std::to_string(partition_.owner(v)) +
                  ")");
    }
  }
  if (generated_) {
    generated_->gather(nodes, static_cast<int>(column_begin), static_cast<int>(column_end), out);
    return;
  }
  const std::int64_t width = placement_.column_end - placement_.column_begin;
  const std::int64_t out_width = column_end - column_begin;
  const auto count = static_cast<std::int64_t>(nodes.size());
#pragma omp parallel for schedule(static) if (count > 4096)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int32_t row = row_of_[static_cast<std::size_t>(nodes[static_cast<std::size_t>(i)])];
    const float* source = stored_.data() +
                          static_cast<std::size_t>(row) * static_cast<std::size_t>(width) +
                          static_cast<std::size_t>(column_begin - placement_.column_begin);
    std::copy_n(source, out_width, out + i * out_width);
  }
}

std::int32_t LocalStore::label(NodeId v) const {
  if (partition_.owner(v) != rank_) {
    throw Error("rank " + std::to_string(rank_) + " asked for the label of node " +
                std::to_string(v) + ", which rank " + std::to_string(partition_.owner(v)) +
                " owns");
  }
  return labels_[static_cast<std::size_t>(v)];
}

std::int64_t LocalStore::structure_bytes() const {
  return static_cast<std::int64_t>(structure_.offsets().size_bytes() +
                                   structure_.sources().size_bytes());
}

std::int64_t LocalStore::feature_bytes() const {
  return static_cast<std::int64_t>(stored_.size() * sizeof(float));
}

}  // namespace gnnbed
