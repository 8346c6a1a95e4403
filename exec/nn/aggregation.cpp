#include "exec/nn/aggregation.hpp"

#include <cmath>

#include "workloads/common/errors.hpp"

namespace gnnbed {

namespace {

// The aggregation's shape and edges: the block's, read in place.
cpu::ScaledAdjacency block_edges(const Block& block) {
  cpu::ScaledAdjacency a;
  a.rows = block.num_dst;
  a.cols = block.num_src();
  a.offsets = std::span<const std::int64_t>(block.offsets)
                  .first(static_cast<std::size_t>(block.num_dst) + 1);
  a.columns = block.src_index;
  a.row_scales.resize(static_cast<std::size_t>(block.num_dst));
  return a;
}

// 1 / sqrt(degree) rounded to float: GCN's normalisation on one side of an edge.
float inverse_sqrt(std::int64_t degree) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(degree)));
}

}  // namespace

cpu::ScaledAdjacency mean_aggregation(const Block& block) {
  cpu::ScaledAdjacency a = block_edges(block);
  for (std::size_t d = 0; d < a.row_scales.size(); ++d) {
    const auto in_degree = block.offsets[d + 1] - block.offsets[d];
    a.row_scales[d] = in_degree > 0 ? 1.0f / static_cast<float>(in_degree) : 0.0f;
  }
  return a;
}

std::vector<std::int32_t> gcn_source_degrees(const Block& block) {
  if (!block.source_degrees.empty()) {
    if (static_cast<std::int64_t>(block.source_degrees.size()) != block.num_src()) {
      throw Error("block carries " + std::to_string(block.source_degrees.size()) +
                  " source degrees for " + std::to_string(block.num_src()) + " sources");
    }
    return block.source_degrees;
  }
  std::vector<std::int32_t> out_degree(static_cast<std::size_t>(block.num_src()), 0);
  for (std::size_t d = 0; d < static_cast<std::size_t>(block.num_dst); ++d) out_degree[d] = 1;
  for (const std::int32_t s : block.src_index) ++out_degree[static_cast<std::size_t>(s)];
  return out_degree;
}

cpu::ScaledAdjacency gcn_aggregation(const Block& block) {
  if (block.num_dst > block.num_src()) {
    throw Error("gcn_aggregation: block has " + std::to_string(block.num_dst) +
                " destinations but only " + std::to_string(block.num_src()) + " sources");
  }
  cpu::ScaledAdjacency a = block_edges(block);
  a.self_loops = true;
  for (std::size_t d = 0; d < a.row_scales.size(); ++d) {
    a.row_scales[d] = inverse_sqrt(block.offsets[d + 1] - block.offsets[d] + 1);
  }
  const std::vector<std::int32_t> out_degree = gcn_source_degrees(block);
  a.column_scales.resize(out_degree.size());
  for (std::size_t s = 0; s < out_degree.size(); ++s) {
    a.column_scales[s] = inverse_sqrt(out_degree[s]);
  }
  return a;
}

}  // namespace gnnbed
