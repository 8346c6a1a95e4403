#include "exec/nn/input_rows.hpp"

#include "workloads/sparse_features.hpp"

namespace gnnbed {

namespace {

// Whether `nodes` is 0, 1, ..., num_nodes - 1.
bool every_node_in_order(std::span<const NodeId> nodes, std::int64_t num_nodes) {
  if (static_cast<std::int64_t>(nodes.size()) != num_nodes) return false;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] != static_cast<NodeId>(i)) return false;
  }
  return true;
}

}  // namespace

InputRows InputRows::gather(const FeatureStore& features, std::span<const NodeId> nodes) {
  if (const auto* sparse = dynamic_cast<const SparseFeatures*>(&features)) {
    if (every_node_in_order(nodes, sparse->num_nodes())) return InputRows(sparse->view());
    return InputRows(sparse->gather_rows(nodes));
  }
  Matrix dense(static_cast<std::int64_t>(nodes.size()), features.dim());
  features.gather(nodes, dense.data());
  return InputRows(std::move(dense));
}

}  // namespace gnnbed
