#pragma once
// A sparse matrix in CSR form with an explicit value per entry. One type serves both uses the
// project has for it: an aggregation (a block's edges with their normalisation weights, which the
// engines multiply by dense activations) and sparse input features (bag-of-words rows, which the
// first layer multiplies by its weight without densifying them).
#include <bit>
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
  // Dropout applied as the entries are read (with_dropout): entry e weighs weights[e] * kept_scale
  // where bit e of `kept` is set and +0 where it is clear. Empty: every entry as stored.
  std::span<const std::uint64_t> kept;
  float kept_scale = 1.0f;

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
  // The value of entry `entry` as kernels read it: its weight, after dropout where there is one.
  float weight(std::size_t entry) const {
    if (kept.empty()) return weights[entry];
    // A select by bit mask, not a branch: a dropout mask is random, so a branch would mispredict
    // at every other entry. A dropped entry reads +0.
    const std::uint32_t keep =
        0u - static_cast<std::uint32_t>((kept[entry / 64] >> (entry % 64)) & 1u);
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(weights[entry] * kept_scale) & keep);
  }
  // Rows [0, count) (count <= rows), sharing this view's arrays (and its dropout).
  SparseMatrixView first_rows(std::int64_t count) const;
  // The same rows with other values (one per entry, `weights.size() == nonzeros()`), sharing the
  // offsets and columns: dropout on sparse rows changes values only.
  SparseMatrixView with_weights(std::span<const float> other_weights) const;
  // The same rows after dropout, decided per entry by `kept_bits` (at least one bit per entry) and
  // applied as they are read, so that dropout stores a bit per entry rather than a value.
  SparseMatrixView with_dropout(std::span<const std::uint64_t> kept_bits, float scale) const;
  // A copy that owns its arrays, its weights as weight() reads them.
  SparseMatrix copy() const;
  // Row rows[i] of this matrix as row i of a new one (rows may repeat), its weights as weight()
  // reads them. A row outside [0, rows) is an Error naming it.
  SparseMatrix selected_rows(std::span<const std::int32_t> positions) const;
};

}  // namespace gnnbed
