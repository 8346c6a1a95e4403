#include "workloads/sparse_matrix.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/parallel_copy.hpp"

namespace gnnbed {

SparseMatrix SparseMatrix::transposed() const {
  // The rows are cut into chunks, one per thread. Each chunk counts its entries per column; a
  // transposed row holds its column's entries chunk by chunk, and each chunk fills its own slots
  // visiting its rows in order, so every transposed row comes out sorted by column, the same on
  // any number of threads. Chunks cost a counter per column each: only worth it when the columns
  // are few beside the entries.
  const std::int64_t threads = omp_get_max_threads();
  const std::int64_t chunks = nonzeros() >= (1 << 16) && cols * threads <= nonzeros() ? threads : 1;
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(chunks * cols), 0);
  const auto chunk_rows = [&](std::int64_t chunk) {
    return std::pair{rows * chunk / chunks, rows * (chunk + 1) / chunks};
  };
#pragma omp parallel for schedule(static, 1) num_threads(static_cast <int>(chunks))
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    std::int64_t* const count = cursor.data() + chunk * cols;
    const auto [first, last] = chunk_rows(chunk);
    for (auto e = offsets[static_cast<std::size_t>(first)];
         e < offsets[static_cast<std::size_t>(last)]; ++e) {
      ++count[columns[static_cast<std::size_t>(e)]];
    }
  }
  SparseMatrix t;
  t.rows = cols;
  t.cols = rows;
  t.offsets.assign(static_cast<std::size_t>(cols) + 1, 0);
  std::int64_t slot = 0;
  for (std::int64_t c = 0; c < cols; ++c) {
    t.offsets[static_cast<std::size_t>(c)] = slot;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      std::int64_t& place = cursor[static_cast<std::size_t>(chunk * cols + c)];
      const std::int64_t count = place;
      place = slot;
      slot += count;
    }
  }
  t.offsets.back() = slot;
  t.columns.resize(columns.size());
  t.weights.resize(weights.size());
#pragma omp parallel for schedule(static, 1) num_threads(static_cast <int>(chunks))
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    std::int64_t* const place = cursor.data() + chunk * cols;
    const auto [first, last] = chunk_rows(chunk);
    for (std::int64_t r = first; r < last; ++r) {
      for (auto e = offsets[static_cast<std::size_t>(r)];
           e < offsets[static_cast<std::size_t>(r) + 1]; ++e) {
        const auto target = static_cast<std::size_t>(place[columns[static_cast<std::size_t>(e)]]++);
        t.columns[target] = static_cast<std::int32_t>(r);
        t.weights[target] = weights[static_cast<std::size_t>(e)];
      }
    }
  }
  return t;
}

SparseMatrix SparseMatrix::first_rows(std::int64_t count) const {
  return SparseMatrixView(*this).first_rows(count).copy();
}

SparseMatrixView SparseMatrixView::first_rows(std::int64_t count) const {
  if (count < 0 || count > rows) {
    throw Error("SparseMatrix::first_rows: " + std::to_string(count) + " of " +
                std::to_string(rows) + " rows");
  }
  const auto entries = static_cast<std::size_t>(offsets[static_cast<std::size_t>(count)]);
  SparseMatrixView prefix(count, cols, offsets.first(static_cast<std::size_t>(count) + 1),
                          columns.first(entries), weights.first(entries));
  prefix.kept = kept;
  prefix.kept_scale = kept_scale;
  return prefix;
}

SparseMatrixView SparseMatrixView::with_weights(std::span<const float> other_weights) const {
  if (other_weights.size() != weights.size()) {
    throw Error("SparseMatrixView::with_weights: " + std::to_string(other_weights.size()) +
                " values for " + std::to_string(weights.size()) + " entries");
  }
  return {rows, cols, offsets, columns, other_weights};
}

SparseMatrixView SparseMatrixView::with_dropout(std::span<const std::uint64_t> kept_bits,
                                                float scale) const {
  if (kept_bits.size() * 64 < weights.size()) {
    throw Error("SparseMatrixView::with_dropout: " + std::to_string(kept_bits.size() * 64) +
                " mask bits for " + std::to_string(weights.size()) + " entries");
  }
  SparseMatrixView dropped = *this;
  dropped.kept = kept_bits;
  dropped.kept_scale = scale;
  return dropped;
}

SparseMatrix SparseMatrixView::copy() const {
  SparseMatrix owned;
  owned.rows = rows;
  owned.cols = cols;
  owned.offsets.assign(offsets.begin(), offsets.end());
  owned.columns.assign(columns.begin(), columns.end());
  if (kept.empty()) {
    owned.weights.assign(weights.begin(), weights.end());
  } else {
    owned.weights.resize(weights.size());
    for (std::size_t e = 0; e < weights.size(); ++e) owned.weights[e] = weight(e);
  }
  return owned;
}

SparseMatrix SparseMatrixView::selected_rows(std::span<const std::int32_t> positions) const {
  SparseMatrix selected;
  selected.rows = static_cast<std::int64_t>(positions.size());
  selected.cols = cols;
  selected.offsets.resize(positions.size() + 1);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const std::int32_t row = positions[i];
    if (row < 0 || row >= rows) {
      throw Error("SparseMatrix::selected_rows: row " + std::to_string(row) + " outside the " +
                  std::to_string(rows) + " rows");
    }
    const auto r = static_cast<std::size_t>(row);
    selected.offsets[i + 1] = selected.offsets[i] + offsets[r + 1] - offsets[r];
  }
  selected.columns.resize(static_cast<std::size_t>(selected.offsets.back()));
  selected.weights.resize(selected.columns.size());
  const auto count = static_cast<std::int64_t>(positions.size());
  const bool parallel =
      worth_parallel_copy(count, selected.nonzeros() * 8 / std::max<std::int64_t>(count, 1));
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto source = static_cast<std::size_t>(offsets[static_cast<std::size_t>(positions[i])]);
    const auto target = static_cast<std::size_t>(selected.offsets[static_cast<std::size_t>(i)]);
    const auto length =
        static_cast<std::size_t>(selected.offsets[static_cast<std::size_t>(i) + 1]) - target;
    std::memcpy(selected.columns.data() + target, columns.data() + source,
                length * sizeof(std::int32_t));
    if (kept.empty()) {
      std::memcpy(selected.weights.data() + target, weights.data() + source,
                  length * sizeof(float));
    } else {
      for (std::size_t e = 0; e < length; ++e) selected.weights[target + e] = weight(source + e);
    }
  }
  return selected;
}

}  // namespace gnnbed
