#pragma once
// The CPU compute kernels every engine op runs on. Dense products go through BLAS; sparse
// aggregation is a CSR times dense product, parallel over output rows.
//
// Shapes are checked; a mismatch is a programming error in the caller and throws gnnbed::Error.
#include <cstdint>
#include <span>
#include <vector>

#include "exec/tensor.hpp"
#include "workloads/sparse_matrix.hpp"

namespace gnnbed {

// Adam's constants for one step (bias corrections included), so that every backend computes the
// same update from the same numbers.
struct AdamStep {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double step_size = 0;    // learning_rate / (1 - beta1^t)
  double correction2 = 1;  // 1 - beta2^t
};

}  // namespace gnnbed

namespace gnnbed::cpu {

// The checks every backend makes before running a kernel (they throw Error naming the kernel).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;  // c is m x n, the inner dimension k
};
// Checks gemm's operands' inner dimensions, and with beta != 0 that `c` has the product's shape.
GemmShape gemm_dimensions(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b,
                          const Matrix& c, float beta);
// gemm_dimensions, then sizes `c` (resized when beta == 0).
GemmShape gemm_shape(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c,
                     float beta);
void check_dropout_rows(const Matrix& x, std::span<const std::int32_t> row_ids);
// One label per row of `logits`, each in [0, cols).
void check_labels(const Matrix& logits, std::span<const std::int32_t> labels);

// c = alpha * op(a) * op(b) + beta * c, op = transpose when the flag is set. With beta == 0, c is
// resized to fit; otherwise it must already have the result's shape.
void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c,
          float alpha = 1.0f, float beta = 0.0f);

// The CSR matrix (workloads/sparse_matrix.hpp): aggregations and sparse input features, and a
// view of one (a SparseMatrix converts to it), which reads features in place from their store.
using SparseMatrix = gnnbed::SparseMatrix;
using SparseMatrixView = gnnbed::SparseMatrixView;

// Checks that `a` can multiply `x` (a.cols == x.rows).
void check_spmm(SparseMatrixView a, const Matrix& x);
// Checks that transpose(a) can multiply `x` (a.rows == x.rows).
void check_spmm_transposed(SparseMatrixView a, const Matrix& x);

// y = a * x (y is resized to a.rows x x.cols).
void spmm(SparseMatrixView a, const Matrix& x, Matrix& y);
// y = transpose(a) * x (y is resized to a.cols x x.cols) without building the transpose, for `a`
// whose columns increase within each row (sparse input features; aggregations need not). The same
// bits as spmm(a.transposed(), x, y) on any number of threads: each of y's rows is summed over a's
// rows in increasing order by the one thread that owns it.
void spmm_transposed_sorted(SparseMatrixView a, const Matrix& x, Matrix& y);
// a as a dense matrix (a.rows x a.cols).
Matrix densified(SparseMatrixView a);

// A block's aggregation read from the block's edges in place, with no weight stored per entry, so
// that a layer holds nothing the size of the graph: row d (a destination) takes a self loop
// (column d) first when `self_loops`, then columns[offsets[d] .. offsets[d+1]); the entry d <- s
// weighs row_scales[d] * column_scales[s], a float product (1 for column_scales when empty). Mean
// aggregation scales rows by 1 / in-degree; GCN's symmetric normalisation scales both sides by
// 1 / sqrt(degree). Whoever owns `offsets` and `columns` (a Block) must outlive it, unchanged.
struct ScaledAdjacency {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<const std::int64_t> offsets;  // rows + 1 of them
  std::span<const std::int32_t> columns;
  bool self_loops = false;  // rows <= cols then
  std::vector<float> row_scales;
  std::vector<float> column_scales;

  float weight(std::int64_t row, std::int32_t column) const {
    const float scale = row_scales[static_cast<std::size_t>(row)];
    return column_scales.empty() ? scale : scale * column_scales[static_cast<std::size_t>(column)];
  }
  std::int64_t nonzeros() const {
    return static_cast<std::int64_t>(columns.size()) + (self_loops ? rows : 0);
  }
  // The same operator with its weights stored: the matrix backends without these kernels (CUDA)
  // multiply by, and what the kernels below give the bits of.
  SparseMatrix materialized() const;
};

// y = a * x (y is resized to a.rows x x.cols): spmm(a.materialized(), x, y), bit for bit.
void aggregate(const ScaledAdjacency& a, const Matrix& x, Matrix& y);
// y = transpose(a) * x (y is resized to a.cols x x.cols) without building the transpose:
// spmm(a.materialized().transposed(), x, y), bit for bit, on any number of threads (each of y's
// rows is summed over a's rows in increasing order by the one thread that owns it).
void aggregate_transposed(const ScaledAdjacency& a, const Matrix& x, Matrix& y);

// y += broadcast(bias) over rows.
void add_row_vector(Matrix& y, const Matrix& bias);
// Column sums are summed in double, per chunk of this many rows in row order, then over the chunks
// in chunk order: chunks can be summed in parallel without changing the result, and the CUDA
// kernel follows the same order, so both give the same bits on any number of threads.
constexpr std::int64_t kColumnSumChunkRows = 256;
inline std::int64_t column_sum_chunks(std::int64_t rows) {
  return (rows + kColumnSumChunkRows - 1) / kColumnSumChunkRows;
}
// bias_grad (1 x cols) += column sums of grad, in the order above.
void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad);
// x *= factor.
void scale(Matrix& x, float factor);
// y += x (same shapes).
void add_in_place(Matrix& y, const Matrix& x);
// out = columns [column_begin, column_end) of source's rows `rows`; check_gather_rows is its
// check (rows inside source, columns inside its width).
void gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                 std::int64_t column_begin, std::int64_t column_end, Matrix& out);
void check_gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                       std::int64_t column_begin, std::int64_t column_end);
// out's row positions[r] = rows' row r (with `add`: += it), for every r in order, so that a
// repeated position keeps the last row (or the sum in row order) on any number of threads.
// Parallel over shares of out's rows. check_scatter_rows is its check (one position per row, each
// inside out, equal widths).
void scatter_rows(const Matrix& rows, std::span<const std::int32_t> positions, Matrix& out,
                  bool add);
void check_scatter_rows(const Matrix& rows, std::span<const std::int32_t> positions,
                        const Matrix& out);
// y's first x.rows() rows += x; check_first_rows is its shape check.
void add_to_first_rows(Matrix& y, const Matrix& x);
void check_first_rows(const Matrix& y, const Matrix& x);

void relu_forward(Matrix& x);
// grad *= (output > 0), with `output` the ReLU's output.
void relu_backward(const Matrix& output, Matrix& grad);

// Inverted dropout, deterministic: entry (r, c) is kept iff bits 16 (c % 4) .. 16 (c % 4) + 15 of
// hash_mix(key, row_ids[r], c / 4), read as a fraction of 2^16, are >= rate; kept entries are
// scaled by 1 / (1 - rate). Keying on the row's global node id makes the mask independent of how
// rows are ordered or split across ranks. `column_offset` says which column of the full matrix
// this one's column 0 is, so that a slice of the feature columns (P3) gets the full mask's slice.
void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                     std::uint64_t key, std::int64_t column_offset = 0);
// dropout_forward of a copy of `x`, written to `out` (resized) in one pass over both.
void dropout_forward_copy(const Matrix& x, Matrix& out, std::span<const std::int32_t> row_ids,
                          float rate, std::uint64_t key);
// The same mask on sparse rows (bag-of-words input features): each stored entry is kept or zeroed
// exactly as dropout_forward would treat it in the dense matrix (zeros stay zero either way).
void dropout_forward_sparse(SparseMatrix& x, std::span<const std::int32_t> row_ids, float rate,
                            std::uint64_t key);
// The same mask on sparse rows read in place (the feature store's): the rows after dropout as a
// view that applies the mask as kernels read it (SparseMatrixView::with_dropout), its bits (one
// per entry) kept in `kept_bits`, which must outlive the view. x itself with rate 0.
SparseMatrixView dropout_sparse_view(SparseMatrixView x, std::span<const std::int32_t> row_ids,
                                     float rate, std::uint64_t key,
                                     std::vector<std::uint64_t>& kept_bits);
// Applies the same mask to a gradient.
void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                      std::uint64_t key, std::int64_t column_offset = 0);

// Mean softmax cross-entropy over the rows of `logits` against `labels` (one per row, each in
// [0, cols)). Writes d(loss)/d(logits) into `grad` and returns the loss; `correct` receives the
// number of rows whose arg-max equals the label.
double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                             Matrix& grad, std::int64_t& correct);

// Number of rows whose arg-max equals the label.
std::int64_t count_correct(const Matrix& logits, std::span<const std::int32_t> labels);
// The same over rows [first_row, first_row + labels.size()) of `logits`.
std::int64_t count_correct(const Matrix& logits, std::int64_t first_row,
                           std::span<const std::int32_t> labels);

// One optimiser update of one parameter (spans of equal length; ComputeBackend documents them).
// check_lengths is their check: `what` ("sgd_step") names the kernel in the error.
void check_lengths(std::size_t value, std::size_t grad, std::size_t state, const char* what);
void sgd_step(std::span<float> value, std::span<const float> grad, std::span<float> velocity,
              float learning_rate, float momentum);
void adam_step(std::span<float> value, std::span<const float> grad, std::span<float> first_moment,
               std::span<float> second_moment, const AdamStep& step);

}  // namespace gnnbed::cpu
