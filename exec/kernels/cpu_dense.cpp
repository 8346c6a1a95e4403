#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <string>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/parallel_copy.hpp"

namespace gnnbed::cpu {
namespace {

std::string shape(MatrixView m, bool transposed) {
  return std::to_string(transposed ? m.cols : m.rows) + "x" +
         std::to_string(transposed ? m.rows : m.cols);
}

}  // namespace

GemmShape gemm_dimensions(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b,
                          const Matrix& c, float beta) {
  const std::int64_t m = transpose_a ? a.cols : a.rows;
  const std::int64_t k = transpose_a ? a.rows : a.cols;
  const std::int64_t k_b = transpose_b ? b.cols : b.rows;
  const std::int64_t n = transpose_b ? b.rows : b.cols;
  if (k != k_b) {
    throw Error("gemm: inner dimensions differ: " + shape(a, transpose_a) + " times " +
                shape(b, transpose_b));
  }
  if (beta != 0.0f && (c.rows() != m || c.cols() != n)) {
    throw Error("gemm: accumulating into " + shape(MatrixView(c), false) + " but the product is " +
                std::to_string(m) + "x" + std::to_string(n));
  }
  return {m, n, k};
}

GemmShape gemm_shape(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c,
                     float beta) {
  const GemmShape dimensions = gemm_dimensions(a, transpose_a, b, transpose_b, c, beta);
  if (beta == 0.0f && (c.rows() != dimensions.m || c.cols() != dimensions.n)) {
    c.reset(dimensions.m, dimensions.n);
  }
  return dimensions;
}

void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c, float alpha,
          float beta) {
  const auto [m, n, k] = gemm_shape(a, transpose_a, b, transpose_b, c, beta);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0f) c.fill(0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a.data(),
              static_cast<blasint>(a.cols), b.data(), static_cast<blasint>(b.cols), beta, c.data(),
              static_cast<blasint>(c.cols()));
}

void add_row_vector(Matrix& y, const Matrix& bias) {
  if (bias.rows() != 1 || bias.cols() != y.cols())
    throw Error("add_row_vector: bias shape mismatch");
  const std::int64_t cols = y.cols();
  float* const values = y.data();
  const float* const b = bias.data();
#pragma omp parallel for schedule(static) if (y.size() > 65536)
  for (std::int64_t i = 0; i < y.rows(); ++i) {
    float* row = values + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] += b[j];
  }
}

void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) {
  if (bias_grad.rows() != 1 || bias_grad.cols() != grad.cols()) {
    throw Error("accumulate_column_sums: shape mismatch");
  }
  const std::int64_t rows = grad.rows();
  const std::int64_t cols = grad.cols();
  const std::int64_t chunks = column_sum_chunks(rows);
  std::vector<double> chunk_sums(static_cast<std::size_t>(chunks * cols), 0.0);
  // Raw pointers taken once: Matrix's accessors check residency (exec/tensor.hpp) on each call.
  const float* const values = grad.data();
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    double* sums = chunk_sums.data() + chunk * cols;
    const std::int64_t end = std::min(rows, (chunk + 1) * kColumnSumChunkRows);
    for (std::int64_t i = chunk * kColumnSumChunkRows; i < end; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) sums[j] += values[i * cols + j];
    }
  }
  for (std::int64_t j = 0; j < cols; ++j) {
    double sum = 0.0;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) sum += chunk_sums[chunk * cols + j];
    bias_grad.data()[j] += static_cast<float>(sum);
  }
}

void scale(Matrix& x, float factor) {
  float* values = x.data();
  const std::int64_t count = x.size();
#pragma omp parallel for schedule(static) if (count > 65536)
  for (std::int64_t i = 0; i < count; ++i) values[i] *= factor;
}

void check_gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                       std::int64_t column_begin, std::int64_t column_end) {
  if (column_begin < 0 || column_begin > column_end || column_end > source.cols()) {
    throw Error("gather_rows: columns [" + std::to_string(column_begin) + ", " +
                std::to_string(column_end) + ") of a matrix " + std::to_string(source.cols()) +
                " wide");
  }
  // In parallel: a mini-batch's inputs are hundreds of thousands of rows, and this pass runs
  // before every gather (on the host for a GPU's gather too).
  const auto count = static_cast<std::int64_t>(rows.size());
  std::int32_t lowest = 0;
  std::int32_t highest = 0;
  // Unformatted: clang-format splits the reduction clauses at their colons.
  // clang-format off
#pragma omp parallel for schedule(static) reduction(min : lowest) reduction(max : highest) \
    if (count > 65536)
  // clang-format on
  for (std::int64_t i = 0; i < count; ++i) {
    lowest = std::min(lowest, rows[static_cast<std::size_t>(i)]);
    highest = std::max(highest, rows[static_cast<std::size_t>(i)]);
  }
  if (lowest >= 0 && highest < source.rows()) return;
  for (const std::int32_t row : rows) {
    if (row < 0 || row >= source.rows()) {
      throw Error("gather_rows: position " + std::to_string(row) + " outside the " +
                  std::to_string(source.rows()) + " rows");
    }
  }
}

void gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                 std::int64_t column_begin, std::int64_t column_end, Matrix& out) {
  check_gather_rows(source, rows, column_begin, column_end);
  const std::int64_t width = column_end - column_begin;
  const auto count = static_cast<std::int64_t>(rows.size());
  out.reshape_for_overwrite(count, width);
  const float* const from = source.data() + column_begin;
  const std::int64_t stride = source.cols();
  gather_float_rows(count, width, out.data(), width, [&](std::int64_t i) {
    return from + static_cast<std::int64_t>(rows[static_cast<std::size_t>(i)]) * stride;
  });
}

void check_scatter_rows(const Matrix& rows, std::span<const std::int32_t> positions,
                        const Matrix& out) {
  if (rows.rows() != static_cast<std::int64_t>(positions.size()) || rows.cols() != out.cols()) {
    throw Error("scatter_rows: " + std::to_string(rows.rows()) + " x " +
                std::to_string(rows.cols()) + " rows for " + std::to_string(positions.size()) +
                " positions of width " + std::to_string(out.cols()));
  }
  for (const std::int32_t position : positions) {
    if (position < 0 || position >= out.rows()) {
      throw Error("scatter_rows: position " + std::to_string(position) + " outside the " +
                  std::to_string(out.rows()) + " rows");
    }
  }
}

void scatter_rows(const Matrix& rows, std::span<const std::int32_t> positions, Matrix& out,
                  bool add) {
  check_scatter_rows(rows, positions, out);
  const std::int64_t width = out.cols();
  const auto count = static_cast<std::int64_t>(positions.size());
  // Threads split the output rows: each scans every position in order and copies the rows that
  // land in its share, so a repeated position is added (or overwritten) in row order whatever the
  // number of threads, and every row is copied whole.
  const bool parallel =
      worth_parallel_copy(count, width * static_cast<std::int64_t>(sizeof(float)));
  const float* const from = rows.data();
  float* const to = out.data();
  const std::int64_t out_rows = out.rows();
#pragma omp parallel if (parallel)
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t thread = omp_get_thread_num();
    const std::int64_t first = out_rows * thread / threads;
    const std::int64_t last = out_rows * (thread + 1) / threads;
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t position = positions[static_cast<std::size_t>(r)];
      if (position < first || position >= last) continue;
      const float* source = from + r * width;
      float* target = to + position * width;
      if (add) {
        for (std::int64_t j = 0; j < width; ++j) target[j] += source[j];
      } else {
        std::copy_n(source, width, target);
      }
    }
  }
}

void check_first_rows(const Matrix& y, const Matrix& x) {
  if (y.rows() < x.rows() || y.cols() != x.cols()) {
    throw Error("add_to_first_rows: " + std::to_string(x.rows()) + "x" + std::to_string(x.cols()) +
                " rows into " + std::to_string(y.rows()) + "x" + std::to_string(y.cols()));
  }
}

namespace {

// out[i] += in[i] for the first `count` entries.
void add_entries(float* out, const float* in, std::int64_t count) {
#pragma omp parallel for schedule(static) if (count > 65536)
  for (std::int64_t i = 0; i < count; ++i) out[i] += in[i];
}

}  // namespace

void add_in_place(Matrix& y, const Matrix& x) {
  if (y.rows() != x.rows() || y.cols() != x.cols()) throw Error("add_in_place: shape mismatch");
  add_entries(y.data(), x.data(), y.size());
}

void add_to_first_rows(Matrix& y, const Matrix& x) {
  check_first_rows(y, x);
  add_entries(y.data(), x.data(), x.size());
}

}  // namespace gnnbed::cpu
