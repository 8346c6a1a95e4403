#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed::cpu {

void check_spmm(SparseMatrixView a, const Matrix& x) {
  if (x.rows() != a.cols) {
    throw Error("spmm: sparse matrix has " + std::to_string(a.cols) +
                " columns but the dense input has " + std::to_string(x.rows()) + " rows");
  }
}

void check_spmm_transposed(SparseMatrixView a, const Matrix& x) {
  if (x.rows() != a.rows) {
    throw Error("spmm_transposed: sparse matrix has " + std::to_string(a.rows) +
                " rows but the dense input has " + std::to_string(x.rows()) + " rows");
  }
}

void spmm(SparseMatrixView a, const Matrix& x, Matrix& y) {
  check_spmm(a, x);
  const std::int64_t width = x.cols();
  y.reset(a.rows, width);
  // Raw pointers taken once: Matrix's accessors check residency (exec/tensor.hpp) on each call.
  float* const y_values = y.data();
  const float* const x_values = x.data();
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t r = 0; r < a.rows; ++r) {
    float* out = y_values + r * width;
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const float w = a.weights[static_cast<std::size_t>(e)];
      const float* in = x_values + a.columns[static_cast<std::size_t>(e)] * width;
      for (std::int64_t j = 0; j < width; ++j) out[j] += w * in[j];
    }
  }
}

namespace {

// Below this many multiply-adds (entries times width) spmm_transposed_sorted runs on one thread.
constexpr std::int64_t kTransposedParallelWork = 1 << 16;
// Column counts only balance the threads' shares, so every fourth entry is counted.
constexpr std::size_t kColumnCountStride = 4;

// a's columns cut into `parts` ranges of consecutive columns holding about equally many entries:
// range p is [bounds[p], bounds[p + 1]).
std::vector<std::int64_t> column_ranges(SparseMatrixView a, int parts) {
  std::vector<std::int64_t> bounds{0};
  if (parts > 1) {
    std::vector<std::int64_t> counted(static_cast<std::size_t>(a.cols), 0);
    std::int64_t total = 0;
    for (std::size_t e = 0; e < a.columns.size(); e += kColumnCountStride, ++total) {
      ++counted[static_cast<std::size_t>(a.columns[e])];
    }
    std::int64_t seen = 0;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      seen += counted[static_cast<std::size_t>(c)];
      const auto closed = static_cast<std::int64_t>(bounds.size());
      if (closed < parts && seen * parts >= total * closed) bounds.push_back(c + 1);
    }
  }
  while (static_cast<std::int64_t>(bounds.size()) <= parts) bounds.push_back(a.cols);
  return bounds;
}

// Rows [first_column, end_column) of transpose(a) x, added to y (rows of x.cols() floats), a's
// rows visited in increasing order: each of a's rows gives its entries in the range, found by
// binary search since its columns increase.
void add_transposed_column_range(SparseMatrixView a, const Matrix& x, std::int64_t first_column,
                                 std::int64_t end_column, float* y_values) {
  const std::int64_t width = x.cols();
  const float* const x_values = x.data();
  const std::int32_t* const columns = a.columns.data();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int32_t* const row_end = columns + a.offsets[static_cast<std::size_t>(r) + 1];
    const std::int32_t* c = columns + a.offsets[static_cast<std::size_t>(r)];
    if (first_column > 0) c = std::lower_bound(c, row_end, first_column);
    const float* in = x_values + r * width;
    for (; c != row_end && *c < end_column; ++c) {
      const float w = a.weights[static_cast<std::size_t>(c - columns)];
      float* out = y_values + *c * width;
      for (std::int64_t j = 0; j < width; ++j) out[j] += w * in[j];
    }
  }
}

}  // namespace

void spmm_transposed_sorted(SparseMatrixView a, const Matrix& x, Matrix& y) {
  check_spmm_transposed(a, x);
  y.reset(a.cols, x.cols());
  // Split by output rows (a's columns), not by a's rows: partial sums per share of a's rows would
  // be added in another order than the transpose's row-by-row sum, changing the bits.
  const int parts = a.nonzeros() * x.cols() >= kTransposedParallelWork ? omp_get_max_threads() : 1;
  const std::vector<std::int64_t> bounds = column_ranges(a, parts);
  float* const y_values = y.data();
#pragma omp parallel for schedule(static, 1) num_threads(parts)
  for (int p = 0; p < parts; ++p) {
    add_transposed_column_range(a, x, bounds[static_cast<std::size_t>(p)],
                                bounds[static_cast<std::size_t>(p) + 1], y_values);
  }
}

Matrix densified(SparseMatrixView a) {
  Matrix dense(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    float* row = dense.row(r);
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      row[a.columns[static_cast<std::size_t>(e)]] = a.weights[static_cast<std::size_t>(e)];
    }
  }
  return dense;
}

}  // namespace gnnbed::cpu
