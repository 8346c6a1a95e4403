#pragma once
// Sparse rows (TensorKind::sparse: a workload's bag-of-words input features) as the plan executor
// moves them: their layout on the wire, and their assembly from parts.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "workloads/sparse_matrix.hpp"

namespace gnnbed {

// The rows' lengths (int32), then every entry's column (int32), then every value (float32):
// kSparseRowBytes per row and kSparseEntryBytes per entry (plan.hpp), what the plans count.
std::vector<std::byte> encode_sparse_rows(const SparseMatrix& rows);
// The rows `encode_sparse_rows` wrote, which must be `rows` x `cols` with `entries` entries, their
// columns increasing within a row and inside [0, cols); Error naming `where` and what is wrong.
SparseMatrix decode_sparse_rows(std::span<const std::byte> bytes, std::int64_t rows,
                                std::int64_t cols, std::int64_t entries, const std::string& where);

// Row positions[i] of the output is row i of the part.
struct SparseRowsPart {
  std::span<const std::int32_t> positions;
  const SparseMatrix* rows = nullptr;
};
// A `rows` x `cols` matrix whose rows come from the parts, each written exactly once (Error
// naming the part that writes a row twice, or the count of rows none writes).
SparseMatrix place_sparse_rows(std::int64_t rows, std::int64_t cols,
                               std::span<const SparseRowsPart> parts);

}  // namespace gnnbed
