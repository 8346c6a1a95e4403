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

namespace {

// out += w * in over `width` floats: the one inner loop of every sparse product here, so that the
// stored and the scaled forms of an aggregation round alike.
inline void add_scaled_row(float* out, float w, const float* in, std::int64_t width) {
  for (std::int64_t j = 0; j < width; ++j) out[j] += w * in[j];
}

// y = (rows x x.cols()), each row summed by add_row(r, out, x_values) on some thread, rows in
// parallel. Raw pointers are taken once: Matrix's accessors check residency (exec/tensor.hpp) on
// each call.
template <typename AddRow>
void sum_rows(std::int64_t rows, const Matrix& x, Matrix& y, AddRow add_row) {
  const std::int64_t width = x.cols();
  y.reset(rows, width);
  float* const y_values = y.data();
  const float* const x_values = x.data();
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t r = 0; r < rows; ++r) add_row(r, y_values + r * width, x_values);
}

}  // namespace

void spmm(SparseMatrixView a, const Matrix& x, Matrix& y) {
  check_spmm(a, x);
  const std::int64_t width = x.cols();
  sum_rows(a.rows, x, y, [&](std::int64_t r, float* out, const float* x_values) {
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      add_scaled_row(out, a.weight(static_cast<std::size_t>(e)),
                     x_values + a.columns[static_cast<std::size_t>(e)] * width, width);
    }
  });
}

namespace {

// Below this many multiply-adds (entries times width) spmm_transposed_sorted runs on one thread.
constexpr std::int64_t kTransposedParallelWork = 1 << 16;
// Column counts only balance the threads' shares, so every fourth entry is counted.
constexpr std::size_t kColumnCountStride = 4;

// Columns [0, num_columns) cut into `parts` ranges of consecutive columns holding about equally
// many of `columns` (a sparse matrix's entries): range p is [bounds[p], bounds[p + 1]).
std::vector<std::int64_t> column_ranges(std::span<const std::int32_t> columns,
                                        std::int64_t num_columns, int parts) {
  std::vector<std::int64_t> bounds{0};
  if (parts > 1) {
    std::vector<std::int64_t> counted(static_cast<std::size_t>(num_columns), 0);
    std::int64_t total = 0;
    for (std::size_t e = 0; e < columns.size(); e += kColumnCountStride, ++total) {
      ++counted[static_cast<std::size_t>(columns[e])];
    }
    std::int64_t seen = 0;
    for (std::int64_t c = 0; c < num_columns; ++c) {
      seen += counted[static_cast<std::size_t>(c)];
      const auto closed = static_cast<std::int64_t>(bounds.size());
      if (closed < parts && seen * parts >= total * closed) bounds.push_back(c + 1);
    }
  }
  while (static_cast<std::int64_t>(bounds.size()) <= parts) bounds.push_back(num_columns);
  return bounds;
}

// Calls add_range(first_column, end_column) for shares of the columns holding about equally many
// of `columns` (a sparse matrix's entries), one share per thread, or one share on the calling
// thread below kTransposedParallelWork multiply-adds. A transposed product split this way, by
// output rows rather than by the matrix's rows, keeps the transpose's order in every sum: partial
// sums per share of the rows would be added in another order, changing the bits.
template <typename AddRange>
void by_column_shares(std::span<const std::int32_t> columns, std::int64_t num_columns,
                      std::int64_t multiply_adds, AddRange add_range) {
  const int parts = multiply_adds >= kTransposedParallelWork ? omp_get_max_threads() : 1;
  const std::vector<std::int64_t> bounds = column_ranges(columns, num_columns, parts);
#pragma omp parallel for schedule(static, 1) num_threads(parts)
  for (int p = 0; p < parts; ++p) {
    add_range(bounds[static_cast<std::size_t>(p)], bounds[static_cast<std::size_t>(p) + 1]);
  }
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
      add_scaled_row(y_values + *c * width, a.weight(static_cast<std::size_t>(c - columns)), in,
                     width);
    }
  }
}

}  // namespace

void spmm_transposed_sorted(SparseMatrixView a, const Matrix& x, Matrix& y) {
  check_spmm_transposed(a, x);
  y.reset(a.cols, x.cols());
  float* const y_values = y.data();
  by_column_shares(a.columns, a.cols, a.nonzeros() * x.cols(),
                   [&](std::int64_t first, std::int64_t end) {
                     add_transposed_column_range(a, x, first, end, y_values);
                   });
}

SparseMatrix ScaledAdjacency::materialized() const {
  SparseMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.offsets.resize(static_cast<std::size_t>(rows) + 1);
  const std::int64_t first = offsets.empty() ? 0 : offsets[0];
  for (std::int64_t r = 0; r <= rows; ++r) {
    a.offsets[static_cast<std::size_t>(r)] =
        offsets[static_cast<std::size_t>(r)] - first + (self_loops ? r : 0);
  }
  a.columns.reserve(static_cast<std::size_t>(nonzeros()));
  a.weights.reserve(static_cast<std::size_t>(nonzeros()));
  for (std::int64_t r = 0; r < rows; ++r) {
    if (self_loops) {
      a.columns.push_back(static_cast<std::int32_t>(r));
      a.weights.push_back(weight(r, static_cast<std::int32_t>(r)));
    }
    for (auto e = offsets[static_cast<std::size_t>(r)];
         e < offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t c = columns[static_cast<std::size_t>(e)];
      a.columns.push_back(c);
      a.weights.push_back(weight(r, c));
    }
  }
  return a;
}

namespace {

void check_aggregation(const ScaledAdjacency& a, std::int64_t input_rows, std::int64_t wanted_rows,
                       const char* kernel) {
  if (input_rows != wanted_rows) {
    throw Error(std::string(kernel) + ": the aggregation is " + std::to_string(a.rows) + " x " +
                std::to_string(a.cols) + " but the dense input has " + std::to_string(input_rows) +
                " rows");
  }
  if (static_cast<std::int64_t>(a.row_scales.size()) != a.rows ||
      (!a.column_scales.empty() && static_cast<std::int64_t>(a.column_scales.size()) != a.cols) ||
      static_cast<std::int64_t>(a.offsets.size()) != a.rows + 1 ||
      (a.self_loops && a.rows > a.cols)) {
    throw Error(std::string(kernel) + ": malformed aggregation (" + std::to_string(a.rows) + " x " +
                std::to_string(a.cols) + ", " + std::to_string(a.row_scales.size()) +
                " row scales, " + std::to_string(a.column_scales.size()) + " column scales)");
  }
}

// Rows [first_column, end_column) of transpose(a) x, added to y (rows of x.cols() floats), a's rows
// visited in increasing order and each row's entries in order. A block's columns are in no order
// within a row, so every entry is looked at and those outside the range skipped.
void add_aggregated_column_range(const ScaledAdjacency& a, const Matrix& x,
                                 std::int64_t first_column, std::int64_t end_column,
                                 float* y_values) {
  const std::int64_t width = x.cols();
  const float* const x_values = x.data();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const float* in = x_values + r * width;
    if (a.self_loops && r >= first_column && r < end_column) {
      add_scaled_row(y_values + r * width, a.weight(r, static_cast<std::int32_t>(r)), in, width);
    }
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t c = a.columns[static_cast<std::size_t>(e)];
      if (c >= first_column && c < end_column) {
        add_scaled_row(y_values + c * width, a.weight(r, c), in, width);
      }
    }
  }
}

}  // namespace

void aggregate(const ScaledAdjacency& a, const Matrix& x, Matrix& y) {
  check_aggregation(a, x.rows(), a.cols, "aggregate");
  const std::int64_t width = x.cols();
  sum_rows(a.rows, x, y, [&](std::int64_t r, float* out, const float* x_values) {
    if (a.self_loops) {
      add_scaled_row(out, a.weight(r, static_cast<std::int32_t>(r)), x_values + r * width, width);
    }
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t c = a.columns[static_cast<std::size_t>(e)];
      add_scaled_row(out, a.weight(r, c), x_values + c * width, width);
    }
  });
}

void aggregate_transposed(const ScaledAdjacency& a, const Matrix& x, Matrix& y) {
  check_aggregation(a, x.rows(), a.rows, "aggregate_transposed");
  y.reset(a.cols, x.cols());
  float* const y_values = y.data();
  by_column_shares(a.columns, a.cols, a.nonzeros() * x.cols(),
                   [&](std::int64_t first, std::int64_t end) {
                     add_aggregated_column_range(a, x, first, end, y_values);
                   });
}

Matrix densified(SparseMatrixView a) {
  Matrix dense(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    float* row = dense.row(r);
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      row[a.columns[static_cast<std::size_t>(e)]] = a.weight(static_cast<std::size_t>(e));
    }
  }
  return dense;
}

}  // namespace gnnbed::cpu
