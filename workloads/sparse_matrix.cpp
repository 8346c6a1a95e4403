#include "workloads/sparse_matrix.hpp"

#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {

SparseMatrix SparseMatrix::transposed() const {
  SparseMatrix t;
  t.rows = cols;
  t.cols = rows;
  t.offsets.assign(static_cast<std::size_t>(cols) + 1, 0);
  for (const std::int32_t c : columns) ++t.offsets[static_cast<std::size_t>(c) + 1];
  for (std::size_t i = 1; i < t.offsets.size(); ++i) t.offsets[i] += t.offsets[i - 1];
  t.columns.resize(columns.size());
  t.weights.resize(weights.size());
  std::vector<std::int64_t> cursor(t.offsets.begin(), t.offsets.end() - 1);
  // Rows are visited in increasing order, so every transposed row comes out sorted by column.
  for (std::int64_t r = 0; r < rows; ++r) {
    for (auto e = offsets[static_cast<std::size_t>(r)];
         e < offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const auto slot = static_cast<std::size_t>(
          cursor[static_cast<std::size_t>(columns[static_cast<std::size_t>(e)])]++);
      t.columns[slot] = static_cast<std::int32_t>(r);
      t.weights[slot] = weights[static_cast<std::size_t>(e)];
    }
  }
  return t;
}

SparseMatrix SparseMatrix::first_rows(std::int64_t count) const {
  if (count < 0 || count > rows) {
    throw Error("SparseMatrix::first_rows: " + std::to_string(count) + " of " +
                std::to_string(rows) + " rows");
  }
  SparseMatrix prefix;
  prefix.rows = count;
  prefix.cols = cols;
  prefix.offsets.assign(offsets.begin(), offsets.begin() + count + 1);
  const auto entries = static_cast<std::size_t>(prefix.offsets.back());
  prefix.columns.assign(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(entries));
  prefix.weights.assign(weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(entries));
  return prefix;
}

}  // namespace gnnbed
