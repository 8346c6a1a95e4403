#pragma once
// A sparse matrix in CSR form with an explicit value per entry. One type serves both uses the
// project has for it: an aggregation (a block's edges with their normalisation weights, which the
// engines multiply by dense activations) and sparse input features (bag-of-words rows, which the
// first layer multiplies by its weight without densifying them).
#include <cstdint>
#include <vector>

namespace gnnbed {

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

}  // namespace gnnbed
