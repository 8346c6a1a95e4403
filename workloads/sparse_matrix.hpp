#pragma once
// A sparse matrix in CSR form with an explicit value per entry. One type serves both uses the
// project has for it: an aggregation (a block's edges with their normalisation weights, which the
// engines multiply by dense activations) and sparse input features (bag-of-words rows, which the
// first layer multiplies by its weight without densifying them).
#include <cstdint>
#include <span>
#include <vector>

namespace gnnbed {

struct SparseMatrixView;

// Row r holds columns[offsets[r] .. offsets[r+1]) with weights[...] (one value per entry).
struct SparseMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int32_t> columns;
  std::vector<float> weights;

  std::int64_t nonzeros() const { return static_cast<std::int64_t>(columns.size()); }
  // The transpose, with the entries of each row in increasing column order (deterministic).
  SparseMatrix transposed() const;
  // Rows [0, count) (count <= rows), as a new matrix.
  SparseMatrix first_rows(std::int64_t count) const;
};

// The same CSR layout over arrays someone else owns (a SparseMatrix, or sparse input features read
// in place from their store), so that kernels read them without copying. The owner must outlive
// the view and leave its arrays unchanged while the view is in use.
struct SparseMatrixView {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<const std::int64_t> offsets;  // rows + 1 of them
  std::span<const std::int32_t> columns;
  std::span<const float> weights;

  SparseMatrixView() = default;
  SparseMatrixView(std::int64_t num_rows, std::int64_t num_cols,
                   std::span<const std::int64_t> row_offsets,
                   std::span<const std::int32_t> entry_columns,
                   std::span<const float> entry_weights)
      : rows(num_rows),
        cols(num_cols),
        offsets(row_offsets),
        columns(entry_columns),
        weights(entry_weights) {}
  // Implicit: every reader of a view reads a SparseMatrix as well.
  SparseMatrixView(const SparseMatrix& matrix)
      : SparseMatrixView(matrix.rows, matrix.cols, matrix.offsets, matrix.columns, matrix.weights) {
  }

  std::int64_t nonzeros() const { return static_cast<std::int64_t>(columns.size()); }
  // Rows [0, count) (count <= rows), sharing this view's arrays.
  SparseMatrixView first_rows(std::int64_t count) const;
  // The same rows with other values (one per entry, `weights.size() == nonzeros()`), sharing the
  // offsets and columns: dropout on sparse rows changes values only.
  SparseMatrixView with_weights(std::span<const float> other_weights) const;
  // A copy that owns its arrays.
  SparseMatrix copy() const;
};

}  // namespace gnnbed
