// Every ComputeBackend kernel against the cpu:: kernel it must match, one body for every backend
// (DGL's convention): built once for the CPU backend (label unit, which checks that routing the
// kernels through the interface changes nothing) and once for CUDA (label gpu, built where CUDA
// is, skipped without a device). GNNBED_TEST_DEVICE names the backend.
//
// Tolerances: element-wise kernels, the CSR aggregation, dropout and the optimisers must match
// bit for bit (same operations in the same order; cuda_kernels.cu is compiled with -fmad=false);
// cuBLAS sums products in another order, so gemm is compared within float32 rounding; softmax
// cross-entropy within double rounding of exp/log; GAT's attention within float32 rounding of
// expf, and bit for bit where no exponential is involved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "exec/backends.hpp"
#include "exec/kernels/cpu_gat.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/aggregation.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

#ifndef GNNBED_TEST_DEVICE
#error "GNNBED_TEST_DEVICE must name the backend under test (\"cpu\" or \"cuda\")"
#endif

namespace gnnbed {
namespace {

class BackendKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string device = GNNBED_TEST_DEVICE;
    if (device != "cpu") {
      const CudaDevices devices = cuda_devices();
      if (devices.count == 0) GTEST_SKIP() << "no CUDA device: " << devices.problem;
    }
    backend_ = make_compute_backend(device, 0);
  }
  ComputeBackend& backend() { return *backend_; }

 private:
  std::unique_ptr<ComputeBackend> backend_;
};

void expect_identical(const Matrix& actual, const Matrix& expected, const std::string& what) {
  ASSERT_EQ(actual.rows(), expected.rows()) << what;
  ASSERT_EQ(actual.cols(), expected.cols()) << what;
  for (std::int64_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual.data()[i], expected.data()[i]) << what << " entry " << i;
  }
}

// Within float32 rounding of a sum of `terms` products of entries of magnitude <= 1.
void expect_close(const Matrix& actual, const Matrix& expected, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(actual.rows(), expected.rows()) << what;
  ASSERT_EQ(actual.cols(), expected.cols()) << what;
  for (std::int64_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual.data()[i], expected.data()[i], tolerance) << what << " entry " << i;
  }
}

// A random CSR matrix with rows of 0..max_degree entries (some rows empty).
cpu::SparseMatrix random_sparse(std::int64_t rows, std::int64_t cols, int max_degree,
                                std::uint64_t seed) {
  cpu::SparseMatrix a;
  a.rows = rows;
  a.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto degree = static_cast<std::int64_t>(hash_mix(seed, r) % (max_degree + 1));
    for (std::int64_t e = 0; e < degree; ++e) {
      a.columns.push_back(static_cast<std::int32_t>(hash_mix(seed, r, e, 1) % cols));
      a.weights.push_back(unit_float(hash_mix(seed, r, e, 2)));
    }
    a.offsets.push_back(a.nonzeros());
  }
  return a;
}

TEST_F(BackendKernels, GemmMatchesTheCpuForEveryTransposeAndAccumulation) {
  // Odd sizes, larger than one cuBLAS tile, so that edge handling is exercised.
  const std::int64_t m = 67, k = 133, n = 45;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const Matrix a = uniform_matrix(ta ? k : m, ta ? m : k, -1, 1, 1);
      const Matrix b = uniform_matrix(tb ? n : k, tb ? k : n, -1, 1, 2);
      Matrix expected;
      Matrix actual;
      cpu::gemm(a, ta, b, tb, expected);
      backend().gemm(a, ta, b, tb, actual);
      const std::string what =
          std::string("gemm ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0");
      expect_close(actual, expected, 1e-5 * static_cast<double>(k), what);
      // Accumulation: c = 0.5 a b + 1 c.
      cpu::gemm(a, ta, b, tb, expected, 0.5f, 1.0f);
      backend().gemm(a, ta, b, tb, actual, 0.5f, 1.0f);
      expect_close(actual, expected, 2e-5 * static_cast<double>(k), what + " accumulating");
    }
  }
  // A view of the first rows (what GraphSAGE's self term multiplies).
  const Matrix h = uniform_matrix(50, 16, -1, 1, 3);
  const Matrix w = uniform_matrix(16, 8, -1, 1, 4);
  Matrix expected;
  Matrix actual;
  cpu::gemm(MatrixView(h).first_rows(20), false, w, false, expected);
  backend().gemm(MatrixView(h).first_rows(20), false, w, false, actual);
  expect_close(actual, expected, 1e-4, "gemm on a row prefix");
  Matrix wrong(3, 3);
  EXPECT_THROW(backend().gemm(h, false, h, false, wrong), Error);
}

TEST_F(BackendKernels, AggregationMatchesTheCpuExactly) {
  const cpu::SparseMatrix a = random_sparse(300, 500, 12, 5);
  for (const std::int64_t width : {1, 7, 32, 100}) {
    const Matrix x = uniform_matrix(500, width, -1, 1, 6);
    Matrix expected;
    Matrix actual;
    cpu::spmm(a, x, expected);
    backend().spmm(a, x, actual);
    expect_identical(actual, expected, "spmm width " + std::to_string(width));
    // The transpose, as backward passes use it.
    const Matrix g = uniform_matrix(300, width, -1, 1, 7);
    cpu::spmm(a.transposed(), g, expected);
    backend().spmm(a.transposed(), g, actual);
    expect_identical(actual, expected, "transposed spmm width " + std::to_string(width));
    backend().spmm_transposed(a, g, actual);
    expect_identical(actual, expected, "spmm_transposed width " + std::to_string(width));
  }
  // Mostly empty columns (rows of the transpose), a column index needing 13 bits, repeated
  // entries of one row in a column.
  const cpu::SparseMatrix wide = random_sparse(40, 5000, 3, 8);
  const Matrix g = uniform_matrix(40, 9, -1, 1, 9);
  Matrix expected;
  Matrix actual;
  cpu::spmm(wide.transposed(), g, expected);
  backend().spmm_transposed(wide, g, actual);
  expect_identical(actual, expected, "spmm_transposed of a wide matrix");

  const Matrix wrong(499, 4);
  Matrix out;
  EXPECT_THROW(backend().spmm(a, wrong, out), Error);
  EXPECT_THROW(backend().spmm_transposed(a, wrong, out), Error);
}

// A block's aggregations read without stored weights, and sparse input rows read in place with
// dropout applied as they are read: what the layers multiply by.
TEST_F(BackendKernels, BlockAggregationsAndDroppedSparseRowsMatchTheCpuExactly) {
  const cpu::SparseMatrix edges = random_sparse(300, 500, 12, 10);
  Block block;
  block.src_nodes.resize(500);
  std::iota(block.src_nodes.begin(), block.src_nodes.end(), NodeId{0});
  block.num_dst = 300;
  block.offsets = edges.offsets;
  block.src_index = edges.columns;
  for (const std::int64_t width : {1, 16, 41}) {
    const Matrix x = uniform_matrix(500, width, -1, 1, 11);
    const Matrix g = uniform_matrix(300, width, -1, 1, 12);
    for (const bool gcn : {false, true}) {
      const cpu::ScaledAdjacency a = gcn ? gcn_aggregation(block) : mean_aggregation(block);
      const std::string what =
          std::string(gcn ? "gcn" : "mean") + " width " + std::to_string(width);
      Matrix expected;
      Matrix actual;
      cpu::aggregate(a, x, expected);
      backend().aggregate(a, x, actual);
      expect_identical(actual, expected, "aggregate " + what);
      cpu::aggregate_transposed(a, g, expected);
      backend().aggregate_transposed(a, g, actual);
      expect_identical(actual, expected, "aggregate_transposed " + what);
    }
  }
  cpu::SparseMatrix rows = random_sparse(300, 700, 20, 13);
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    std::sort(rows.columns.begin() + rows.offsets[static_cast<std::size_t>(r)],
              rows.columns.begin() + rows.offsets[static_cast<std::size_t>(r) + 1]);
  }
  std::vector<std::int32_t> row_ids(300);
  std::iota(row_ids.begin(), row_ids.end(), 1000);
  std::vector<std::uint64_t> kept;
  const cpu::SparseMatrixView dropped = cpu::dropout_sparse_view(rows, row_ids, 0.5f, 14, kept);
  const Matrix w = uniform_matrix(700, 16, -1, 1, 15);
  const Matrix g = uniform_matrix(300, 16, -1, 1, 16);
  Matrix expected;
  Matrix actual;
  cpu::spmm(dropped, w, expected);
  backend().spmm_rows(dropped, w, actual);
  expect_identical(actual, expected, "spmm_rows after dropout");
  cpu::spmm_transposed_sorted(dropped, g, expected);
  backend().spmm_rows_transposed(dropped, g, actual);
  expect_identical(actual, expected, "spmm_rows_transposed after dropout");
}

TEST_F(BackendKernels, ElementWiseKernelsMatchTheCpuExactly) {
  const Matrix x = uniform_matrix(123, 37, -1, 1, 8);
  const Matrix other = uniform_matrix(123, 37, -1, 1, 9);
  const Matrix bias = uniform_matrix(1, 37, -1, 1, 10);
  Matrix expected;
  Matrix actual;

  expected.copy_from(x);
  actual.copy_from(x);
  cpu::add_row_vector(expected, bias);
  backend().add_row_vector(actual, bias);
  expect_identical(actual, expected, "add_row_vector");

  Matrix expected_sums = uniform_matrix(1, 37, -1, 1, 11);
  Matrix actual_sums;
  actual_sums.copy_from(expected_sums);
  cpu::accumulate_column_sums(x, expected_sums);
  backend().accumulate_column_sums(x, actual_sums);
  expect_identical(actual_sums, expected_sums, "accumulate_column_sums");
  // Several chunks of rows (cpu::kColumnSumChunkRows), the last one partial.
  const Matrix tall = uniform_matrix(3 * cpu::kColumnSumChunkRows + 5, 37, -1, 1, 12);
  cpu::accumulate_column_sums(tall, expected_sums);
  backend().accumulate_column_sums(tall, actual_sums);
  expect_identical(actual_sums, expected_sums, "accumulate_column_sums over chunks");

  cpu::scale(expected, 0.3f);
  backend().scale(actual, 0.3f);
  expect_identical(actual, expected, "scale");

  cpu::add_in_place(expected, other);
  backend().add_in_place(actual, other);
  expect_identical(actual, expected, "add_in_place");

  cpu::relu_forward(expected);
  backend().relu_forward(actual);
  expect_identical(actual, expected, "relu_forward");

  Matrix expected_grad;
  Matrix actual_grad;
  expected_grad.copy_from(other);
  actual_grad.copy_from(other);
  cpu::relu_backward(expected, expected_grad);
  backend().relu_backward(actual, actual_grad);
  expect_identical(actual_grad, expected_grad, "relu_backward");
  EXPECT_THROW(backend().add_in_place(actual, bias), Error);
}

TEST_F(BackendKernels, DropoutMaskIsTheCpuMaskBitForBit) {
  // Sparse-ish input (zero groups, which the CPU skips), a column offset that is not a multiple
  // of the hash group, and row ids out of order.
  Matrix x = uniform_matrix(64, 29, -1, 1, 12);
  for (std::int64_t i = 0; i < x.size(); i += 3) x.data()[i] = 0.0f;
  for (std::int64_t j = 0; j < 8; ++j) x(5, j) = 0.0f;
  std::vector<std::int32_t> ids(64);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(1000 - 7 * i);
  for (const std::int64_t offset : {0, 3, 130}) {
    Matrix expected;
    Matrix actual;
    expected.copy_from(x);
    actual.copy_from(x);
    cpu::dropout_forward(expected, ids, 0.4f, 77, offset);
    backend().dropout_forward(actual, ids, 0.4f, 77, offset);
    expect_identical(actual, expected, "dropout_forward offset " + std::to_string(offset));
    cpu::dropout_backward(expected, ids, 0.4f, 77, offset);
    backend().dropout_backward(actual, ids, 0.4f, 77, offset);
    expect_identical(actual, expected, "dropout_backward offset " + std::to_string(offset));
  }
  Matrix y;
  y.copy_from(x);
  EXPECT_THROW(backend().dropout_forward(y, std::span(ids).first(3), 0.5f, 1), Error);
}

TEST_F(BackendKernels, SoftmaxCrossEntropyMatchesTheCpu) {
  const Matrix logits = uniform_matrix(257, 11, -4, 4, 13);
  std::vector<std::int32_t> labels(257);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i * 5 % 11);
  Matrix expected_grad;
  Matrix actual_grad;
  std::int64_t expected_correct = -1;
  std::int64_t actual_correct = -1;
  const double expected =
      cpu::softmax_cross_entropy(logits, labels, expected_grad, expected_correct);
  const double actual =
      backend().softmax_cross_entropy(logits, labels, actual_grad, actual_correct);
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected));
  EXPECT_EQ(actual_correct, expected_correct);
  expect_close(actual_grad, expected_grad, 1e-7, "softmax_cross_entropy gradient");
  labels[3] = 11;
  EXPECT_THROW(backend().softmax_cross_entropy(logits, labels, actual_grad, actual_correct), Error);
  // No rows: zero loss, an empty gradient of the logits' width.
  const Matrix none(0, 11);
  EXPECT_EQ(backend().softmax_cross_entropy(none, {}, actual_grad, actual_correct), 0.0);
  EXPECT_EQ(actual_grad.cols(), 11);
}

// GAT's edges over `num_src` sources: destination v has 0..max_degree random sources, then itself.
cpu::AttentionEdges random_attention_edges(std::int64_t num_dst, std::int64_t num_src,
                                           int max_degree, std::uint64_t seed) {
  cpu::AttentionEdges edges;
  edges.num_dst = num_dst;
  edges.num_src = num_src;
  for (std::int64_t v = 0; v < num_dst; ++v) {
    const auto degree = static_cast<std::int64_t>(hash_mix(seed, v) % (max_degree + 1));
    for (std::int64_t e = 0; e < degree; ++e) {
      edges.sources.push_back(static_cast<std::int32_t>(hash_mix(seed, v, e) % num_src));
    }
    edges.sources.push_back(static_cast<std::int32_t>(v));
    edges.offsets.push_back(edges.num_slots());
  }
  return edges;
}

TEST_F(BackendKernels, GatAttentionMatchesTheCpu) {
  const std::int64_t heads = 4, head_dim = 5, num_src = 300, num_dst = 120;
  const cpu::AttentionEdges edges = random_attention_edges(num_dst, num_src, 9, 21);
  const Matrix z = uniform_matrix(num_src, heads * head_dim, -1, 1, 22);
  const Matrix a_src = uniform_matrix(heads, head_dim, -1, 1, 23);
  const Matrix a_dst = uniform_matrix(heads, head_dim, -1, 1, 24);
  Matrix scores[2], attention[2], pre_leaky[2], out[2];
  cpu::gat_scores(z, a_src, a_dst, num_dst, scores[0]);
  backend().gat_scores(z, a_src, a_dst, num_dst, scores[1]);
  expect_identical(scores[1], scores[0], "gat_scores");
  cpu::gat_attention(edges, scores[0], z, attention[0], pre_leaky[0], out[0]);
  backend().gat_attention(edges, scores[0], z, attention[1], pre_leaky[1], out[1]);
  expect_identical(pre_leaky[1], pre_leaky[0], "the scores' sums before LeakyReLU");
  expect_close(attention[1], attention[0], 1e-6, "attention");
  expect_close(out[1], out[0], 1e-5, "attention output");

  const Matrix grad_out = uniform_matrix(num_dst, heads * head_dim, -1, 1, 25);
  Matrix grad_z[2], score_grads[2];
  cpu::gat_attention_backward(edges, grad_out, z, attention[0], pre_leaky[0], grad_z[0],
                              score_grads[0]);
  backend().gat_attention_backward(edges, grad_out, z, attention[0], pre_leaky[0], grad_z[1],
                                   score_grads[1]);
  // Given the same attention, no exponential is involved: the per-source sums run in the CPU's
  // order.
  expect_identical(grad_z[1], grad_z[0], "attention backward: z's gradient");
  expect_identical(score_grads[1], score_grads[0], "attention backward: the scores' gradients");

  Matrix grad_src[2] = {uniform_matrix(heads, head_dim, -1, 1, 26),
                        uniform_matrix(heads, head_dim, -1, 1, 26)};
  Matrix grad_dst[2] = {uniform_matrix(heads, head_dim, -1, 1, 27),
                        uniform_matrix(heads, head_dim, -1, 1, 27)};
  Matrix grad_z_in = grad_z[0];
  cpu::gat_scores_backward(z, score_grads[0], a_src, a_dst, num_dst, grad_z[0], grad_src[0],
                           grad_dst[0]);
  backend().gat_scores_backward(z, score_grads[0], a_src, a_dst, num_dst, grad_z_in, grad_src[1],
                                grad_dst[1]);
  expect_identical(grad_z_in, grad_z[0], "scores backward: z's gradient");
  expect_identical(grad_src[1], grad_src[0], "scores backward: a_src's gradient");
  expect_identical(grad_dst[1], grad_dst[0], "scores backward: a_dst's gradient");

  const Matrix wrong_z(num_src - 1, heads * head_dim);
  EXPECT_THROW(
      backend().gat_attention(edges, scores[0], wrong_z, attention[1], pre_leaky[1], out[1]),
      Error);
  const Matrix wrong_scores(num_src, heads);
  EXPECT_THROW(backend().gat_attention(edges, wrong_scores, z, attention[1], pre_leaky[1], out[1]),
               Error);
}

TEST_F(BackendKernels, OptimizerStepsMatchTheCpuExactly) {
  const std::int64_t count = 1000;
  const Matrix start = uniform_matrix(1, count, -1, 1, 14);
  std::vector<float> expected(start.values().begin(), start.values().end());
  std::vector<float> expected_m(static_cast<std::size_t>(count), 0.0f);
  std::vector<float> expected_v(static_cast<std::size_t>(count), 0.0f);
  Matrix actual = start;
  Matrix actual_m(1, count);
  Matrix actual_v(1, count);
  for (int t = 1; t <= 3; ++t) {
    const Matrix grad = uniform_matrix(1, count, -1, 1, 20 + t);
    AdamStep step;
    step.correction2 = 1.0 - std::pow(step.beta2, t);
    step.step_size = 0.01 / (1.0 - std::pow(step.beta1, t));
    cpu::adam_step(expected, grad.values(), expected_m, expected_v, step);
    backend().adam_step(actual, grad, actual_m, actual_v, step);
    cpu::sgd_step(expected, grad.values(), expected_m, 0.1f, 0.9f);
    backend().sgd_step(actual, grad, actual_m, 0.1f, 0.9f);
  }
  for (std::int64_t i = 0; i < count; ++i) {
    const auto e = static_cast<std::size_t>(i);
    ASSERT_EQ(actual(0, i), expected[e]) << "value " << i;
    ASSERT_EQ(actual_m(0, i), expected_m[e]) << "first moment / velocity " << i;
    ASSERT_EQ(actual_v(0, i), expected_v[e]) << "second moment " << i;
  }
  Matrix short_state(1, count - 1);
  EXPECT_THROW(backend().sgd_step(actual, start, short_state, 0.1f, 0.9f), Error);
}

TEST_F(BackendKernels, GatherRowsCopiesTheRowsAndColumnsAskedFor) {
  const Matrix table = uniform_matrix(30, 7, -1, 1, 41);
  const std::vector<std::int32_t> rows = {4, 0, 29, 4, 17};
  Matrix out;
  backend().gather_rows(table, rows, 2, 6, out);
  ASSERT_EQ(out.rows(), 5);
  ASSERT_EQ(out.cols(), 4);
  for (std::int64_t i = 0; i < out.rows(); ++i) {
    for (std::int64_t j = 0; j < out.cols(); ++j) {
      ASSERT_EQ(out(i, j), table(rows[static_cast<std::size_t>(i)], 2 + j)) << i << ", " << j;
    }
  }
  backend().gather_rows(table, {}, 0, 7, out);
  EXPECT_EQ(out.rows(), 0);
  const std::vector<std::int32_t> outside = {3, 30};
  EXPECT_THROW(backend().gather_rows(table, outside, 0, 7, out), Error);
  EXPECT_THROW(backend().gather_rows(table, rows, 5, 8, out), Error);
}

// A layer's forward and backward as the executor runs them: results stay with the backend
// between kernels, host code edits some in between (as communication and host-side layers do),
// and every value read at the end equals the CPU's.
TEST_F(BackendKernels, ChainsOfKernelsWithHostEditsBetweenThemMatchTheCpu) {
  auto run = [](ComputeBackend& on) {
    const Matrix h = uniform_matrix(40, 12, -1, 1, 31);
    const Matrix w = uniform_matrix(12, 8, -1, 1, 32);
    Matrix bias = uniform_matrix(1, 8, -1, 1, 33);
    Matrix out;
    on.gemm(h, false, w, false, out);
    on.add_row_vector(out, bias);
    on.relu_forward(out);
    out(3, 2) = 5.0f;  // a host edit of a result the backend wrote
    Matrix grad_w(12, 8);
    on.gemm(h, true, out, false, grad_w, 1.0f, 1.0f);
    Matrix grad_h;
    on.gemm(out, false, w, true, grad_h);
    Matrix self_rows;
    on.gemm(MatrixView(out).first_rows(10), false, w, true, self_rows);
    on.add_to_first_rows(grad_h, self_rows);
    bias.fill(0.5f);  // a host edit of an operand the backend read before
    on.accumulate_column_sums(out, bias);
    on.synchronize();
    return std::vector<Matrix>{out, grad_w, grad_h, bias};
  };
  const std::vector<Matrix> expected = run(cpu_backend());
  const std::vector<Matrix> actual = run(backend());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expect_close(actual[i], expected[i], 1e-5, "result " + std::to_string(i));
  }
  Matrix too_wide(50, 9);
  EXPECT_THROW(backend().add_to_first_rows(too_wide, expected[2]), Error);
}

}  // namespace
}  // namespace gnnbed
