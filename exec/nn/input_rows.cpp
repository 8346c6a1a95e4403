#include "exec/nn/input_rows.hpp"

#include "workloads/sparse_features.hpp"

namespace gnnbed {

InputRows InputRows::gather(const FeatureStore& features, std::span<const NodeId> nodes) {
  if (const auto* sparse = dynamic_cast<const SparseFeatures*>(&features)) {
    return InputRows(sparse->gather_rows(nodes));
  }
  Matrix dense(static_cast<std::int64_t>(nodes.size()), features.dim());
  features.gather(nodes, dense.data());
  return InputRows(std::move(dense));
}

}  // namespace gnnbed
