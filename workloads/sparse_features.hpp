#pragma once
// Node features stored as sparse rows. Bag-of-words features (Planetoid, Coauthor, Amazon and most
// citation graphs) are 1-2 % non-zero: kept dense they take 50-100 times the memory, and every
// kernel that reads them (dropout, the first layer's product) runs over zeros. Kept as CSR, the
// first layer multiplies them without densifying (exec/nn), and gathers of sparse rows give the
// same CSR for a mini-batch; `gather` still densifies for the readers that need dense rows.
#include <cstdint>
#include <span>

#include "workloads/features.hpp"
#include "workloads/sparse_matrix.hpp"

namespace gnnbed {

class SparseFeatures final : public FeatureStore {
 public:
  // Row v holds columns[offsets[v] .. offsets[v+1]), strictly increasing, with values[...].
  // Throws Error when the arrays do not describe that (a loader's bug: loaders check files).
  SparseFeatures(std::int64_t num_nodes, int dim, SharedArray<std::int64_t> offsets,
                 SharedArray<std::int32_t> columns, SharedArray<float> values);
  // Takes a CSR matrix (rows = nodes, cols = feature dimension).
  explicit SparseFeatures(SparseMatrix rows);
  using FeatureStore::gather;

  std::int64_t num_nodes() const override { return num_nodes_; }
  int dim() const override { return dim_; }
  // Dense rows: zeros with the stored entries written in.
  void gather(std::span<const NodeId> nodes, int column_begin, int column_end,
              float* out) const override;
  std::int64_t stored_bytes() const override;
  nlohmann::json describe() const override;
  double nonzero_group_fraction() const override;

  // The rows of `nodes`, in that order, as a CSR matrix (nodes.size() x dim).
  SparseMatrix gather_rows(std::span<const NodeId> nodes) const;
  // Every row, in node order, read in place (num_nodes x dim): full-graph training needs no copy.
  // Valid while this store lives.
  SparseMatrixView view() const {
    return {num_nodes_, dim_, offsets_.span(), columns_.span(), values_.span()};
  }

  std::int64_t nonzeros() const { return static_cast<std::int64_t>(columns_.size()); }
  std::span<const std::int64_t> offsets() const { return offsets_.span(); }
  std::span<const std::int32_t> columns() const { return columns_.span(); }
  std::span<const float> values() const { return values_.span(); }
  // Every row's stored entries, in node order.
  SharedArray<std::int32_t> row_entries() const;

  // A copy with every row scaled to sum to 1 (rows that sum to 0 stay 0), as Kipf & Welling
  // preprocess bag-of-words features (StoredFeatures::row_normalized's rule).
  SparseFeatures row_normalized() const;

  // Whether `nonzeros` entries of a num_nodes x dim matrix take less memory as CSR (8 bytes per
  // entry and 8 per row) than as dense float32 rows: loaders keep sparse files sparse then.
  static bool smaller_than_dense(std::int64_t num_nodes, int dim, std::int64_t nonzeros);
  // The nonzero entries of every row of `features`, zeros left out.
  static SparseFeatures nonzeros_of(const StoredFeatures& features);

 private:
  std::int64_t num_nodes_;
  int dim_;
  SharedArray<std::int64_t> offsets_;
  SharedArray<std::int32_t> columns_;
  SharedArray<float> values_;
  bool row_normalized_ = false;
};

}  // namespace gnnbed
