#include "exec/nn/aggregation.hpp"

#include <cmath>

#include "workloads/common/errors.hpp"

namespace gnnbed {

cpu::SparseMatrix mean_aggregation(const Block& block) {
  cpu::SparseMatrix a;
  a.rows = block.num_dst;
  a.cols = block.num_src();
  a.offsets = block.offsets;
  a.columns = block.src_index;
  a.weights.resize(block.src_index.size());
#pragma omp parallel for schedule(static) if (block.num_dst > 4096)
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    const auto begin = block.offsets[static_cast<std::size_t>(d)];
    const auto end = block.offsets[static_cast<std::size_t>(d) + 1];
    const float weight = end > begin ? 1.0f / static_cast<float>(end - begin) : 0.0f;
    for (auto e = begin; e < end; ++e) a.weights[static_cast<std::size_t>(e)] = weight;
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

cpu::SparseMatrix gcn_aggregation(const Block& block) {
  const auto num_dst = static_cast<std::size_t>(block.num_dst);
  const std::vector<std::int32_t> out_degree = gcn_source_degrees(block);

  cpu::SparseMatrix a;
  a.rows = block.num_dst;
  a.cols = block.num_src();
  a.offsets.resize(num_dst + 1);
  for (std::size_t d = 0; d <= num_dst; ++d) {
    a.offsets[d] = block.offsets[d] + static_cast<std::int64_t>(d);
  }
  a.columns.resize(static_cast<std::size_t>(a.offsets[num_dst]));
  a.weights.resize(a.columns.size());
#pragma omp parallel for schedule(static) if (block.num_dst > 4096)
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    const auto row = static_cast<std::size_t>(d);
    const auto begin = block.offsets[row];
    const auto end = block.offsets[row + 1];
    const double in_degree = static_cast<double>(end - begin + 1);
    auto slot = static_cast<std::size_t>(a.offsets[row]);
    a.columns[slot] = static_cast<std::int32_t>(d);
    a.weights[slot++] = static_cast<float>(1.0 / std::sqrt(in_degree * out_degree[row]));
    for (auto e = begin; e < end; ++e) {
      const std::int32_t s = block.src_index[static_cast<std::size_t>(e)];
      a.columns[slot] = s;
      a.weights[slot++] =
          static_cast<float>(1.0 / std::sqrt(in_degree * out_degree[static_cast<std::size_t>(s)]));
    }
  }
  return a;
}

}  // namespace gnnbed
