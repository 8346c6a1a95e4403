#include "workloads/sparse_features.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/parallel_copy.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// Throws Error unless the arrays are a CSR matrix of num_nodes rows with strictly increasing
// columns in [0, dim) in every row.
void check_csr(std::int64_t num_nodes, int dim, std::span<const std::int64_t> offsets,
               std::span<const std::int32_t> columns, std::span<const float> values) {
  const auto fail = [](const std::string& problem) { throw Error("sparse features: " + problem); };
  if (dim <= 0) fail("need a positive dimension, got " + std::to_string(dim));
  if (static_cast<std::int64_t>(offsets.size()) != num_nodes + 1) {
    fail(std::to_string(offsets.size()) + " row offsets for " + std::to_string(num_nodes) +
         " nodes");
  }
  if (columns.size() != values.size() || offsets.front() != 0 ||
      offsets.back() != static_cast<std::int64_t>(columns.size())) {
    fail("offsets end at " + std::to_string(offsets.back()) + " for " +
         std::to_string(columns.size()) + " columns and " + std::to_string(values.size()) +
         " values");
  }
  // Every offset within [previous, nonzeros] before any entry is read through them.
  const auto nonzeros = static_cast<std::int64_t>(columns.size());
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    const auto begin = offsets[static_cast<std::size_t>(v)];
    const auto end = offsets[static_cast<std::size_t>(v) + 1];
    if (end < begin || end > nonzeros) {
      fail("row " + std::to_string(v) + " spans entries [" + std::to_string(begin) + ", " +
           std::to_string(end) + ") of " + std::to_string(nonzeros));
    }
  }
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    const auto begin = offsets[static_cast<std::size_t>(v)];
    const auto end = offsets[static_cast<std::size_t>(v) + 1];
    for (auto e = begin; e < end; ++e) {
      const std::int32_t column = columns[static_cast<std::size_t>(e)];
      const bool increasing = e == begin || column > columns[static_cast<std::size_t>(e) - 1];
      if (column < 0 || column >= dim || !increasing) {
        fail("row " + std::to_string(v) + " has column " + std::to_string(column) +
             " out of order or outside [0, " + std::to_string(dim) + ")");
      }
    }
  }
}

}  // namespace

SparseFeatures::SparseFeatures(std::int64_t num_nodes, int dim, SharedArray<std::int64_t> offsets,
                               SharedArray<std::int32_t> columns, SharedArray<float> values)
    : num_nodes_(num_nodes),
      dim_(dim),
      offsets_(std::move(offsets)),
      columns_(std::move(columns)),
      values_(std::move(values)) {
  check_csr(num_nodes_, dim_, offsets_.span(), columns_.span(), values_.span());
}

SparseFeatures::SparseFeatures(SparseMatrix rows)
    : SparseFeatures(rows.rows, static_cast<int>(rows.cols), SharedArray(std::move(rows.offsets)),
                     SharedArray(std::move(rows.columns)), SharedArray(std::move(rows.weights))) {}

void SparseFeatures::gather(std::span<const NodeId> nodes, int column_begin, int column_end,
                            float* out) const {
  check_feature_columns(dim_, column_begin, column_end);
  const auto width = static_cast<std::size_t>(column_end - column_begin);
  const auto count = static_cast<std::int64_t>(nodes.size());
  const bool parallel =
      worth_parallel_copy(count, static_cast<std::int64_t>(width * sizeof(float)));
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t i = 0; i < count; ++i) {
    float* row = out + static_cast<std::size_t>(i) * width;
    std::fill_n(row, width, 0.0f);
    const auto v = static_cast<std::size_t>(nodes[static_cast<std::size_t>(i)]);
    const std::int32_t* first = columns_.data() + offsets_[v];
    const std::int32_t* last = columns_.data() + offsets_[v + 1];
    for (const std::int32_t* c = std::lower_bound(first, last, column_begin);
         c != last && *c < column_end; ++c) {
      row[*c - column_begin] = values_[static_cast<std::size_t>(c - columns_.data())];
    }
  }
}

SparseMatrix SparseFeatures::gather_rows(std::span<const NodeId> nodes) const {
  return view().selected_rows(nodes);
}

double SparseFeatures::nonzero_group_fraction() const {
  if (num_nodes_ == 0) return 1.0;
  const std::int64_t groups_per_row = (dim_ + kDropoutGroupEntries - 1) / kDropoutGroupEntries;
  std::int64_t nonzero_groups = 0;
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    std::int64_t last_group = -1;
    for (auto e = offsets_[static_cast<std::size_t>(v)];
         e < offsets_[static_cast<std::size_t>(v) + 1]; ++e) {
      const auto e_index = static_cast<std::size_t>(e);
      const std::int64_t group = columns_[e_index] / kDropoutGroupEntries;
      if (values_[e_index] != 0.0f && group != last_group) {
        ++nonzero_groups;
        last_group = group;
      }
    }
  }
  return static_cast<double>(nonzero_groups) / static_cast<double>(num_nodes_ * groups_per_row);
}

std::int64_t SparseFeatures::stored_bytes() const {
  return static_cast<std::int64_t>(offsets_.size() * sizeof(std::int64_t) +
                                   columns_.size() * sizeof(std::int32_t) +
                                   values_.size() * sizeof(float));
}

nlohmann::json SparseFeatures::describe() const {
  const double cells = static_cast<double>(num_nodes_) * static_cast<double>(dim_);
  return {{"kind", "stored"},
          {"layout", "sparse"},
          {"dtype", "float32"},
          {"dim", dim_},
          {"nonzeros", nonzeros()},
          {"density", cells > 0 ? static_cast<double>(nonzeros()) / cells : 0.0},
          {"row_normalized", row_normalized_}};
}

SparseFeatures SparseFeatures::row_normalized() const {
  std::vector<float> scaled(values_.begin(), values_.end());
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    const auto begin = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v)]);
    const auto end = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v) + 1]);
    double sum = 0;
    for (std::size_t e = begin; e < end; ++e) sum += scaled[e];
    if (sum == 0) continue;
    const auto inverse = static_cast<float>(1.0 / sum);
    for (std::size_t e = begin; e < end; ++e) scaled[e] *= inverse;
  }
  SparseFeatures result(num_nodes_, dim_, offsets_, columns_, SharedArray(std::move(scaled)));
  result.row_normalized_ = true;
  return result;
}

bool SparseFeatures::smaller_than_dense(std::int64_t num_nodes, int dim, std::int64_t nonzeros) {
  const std::int64_t sparse_bytes = nonzeros * 8 + (num_nodes + 1) * 8;
  return sparse_bytes < num_nodes * static_cast<std::int64_t>(dim) * 4;
}

SparseFeatures SparseFeatures::nonzeros_of(const StoredFeatures& features) {
  SparseMatrix rows;
  rows.rows = features.num_nodes();
  rows.cols = features.dim();
  rows.offsets.reserve(static_cast<std::size_t>(rows.rows) + 1);
  for (std::int64_t v = 0; v < rows.rows; ++v) {
    const std::span<const float> row = features.row(static_cast<NodeId>(v));
    for (std::size_t j = 0; j < row.size(); ++j) {
      if (row[j] == 0.0f) continue;
      rows.columns.push_back(static_cast<std::int32_t>(j));
      rows.weights.push_back(row[j]);
    }
    rows.offsets.push_back(static_cast<std::int64_t>(rows.columns.size()));
  }
  return SparseFeatures(std::move(rows));
}

SharedArray<std::int32_t> SparseFeatures::row_entries() const {
  std::vector<std::int32_t> entries(static_cast<std::size_t>(num_nodes_));
  for (std::size_t v = 0; v < entries.size(); ++v) {
    entries[v] = static_cast<std::int32_t>(offsets_[v + 1] - offsets_[v]);
  }
  return SharedArray(std::move(entries));
}

}  // namespace gnnbed
