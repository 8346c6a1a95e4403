// CPU kernels against straightforward loops and closed forms.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/aggregation.hpp"
#include "exec/train/optimizer.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

Matrix transpose(const Matrix& m) {
  Matrix t(m.cols(), m.rows());
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (std::int64_t j = 0; j < m.cols(); ++j) t(j, i) = m(i, j);
  }
  return t;
}

Matrix naive_product(const Matrix& a, const Matrix& b) {
  Matrix c(a.rows(), b.cols());
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.cols(); ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < a.cols(); ++k) sum += static_cast<double>(a(i, k)) * b(k, j);
      c(i, j) = static_cast<float>(sum);
    }
  }
  return c;
}

void expect_near(const Matrix& actual, const Matrix& expected, float tolerance) {
  ASSERT_EQ(actual.rows(), expected.rows());
  ASSERT_EQ(actual.cols(), expected.cols());
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual.data()[i], expected.data()[i], tolerance) << "entry " << i;
  }
}

TEST(Gemm, AllTransposeCombinationsMatchNaiveProduct) {
  const Matrix a = uniform_matrix(7, 5, -1.0f, 1.0f, 1);
  const Matrix b = uniform_matrix(5, 3, -1.0f, 1.0f, 2);
  const Matrix expected = naive_product(a, b);
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const Matrix a_arg = ta ? transpose(a) : a;
      const Matrix b_arg = tb ? transpose(b) : b;
      Matrix c;
      cpu::gemm(a_arg, ta, b_arg, tb, c);
      expect_near(c, expected, 1e-5f);
    }
  }
}

TEST(Gemm, AccumulatesWithBetaOne) {
  const Matrix a = uniform_matrix(4, 6, -1.0f, 1.0f, 3);
  const Matrix b = uniform_matrix(6, 2, -1.0f, 1.0f, 4);
  Matrix c = uniform_matrix(4, 2, -1.0f, 1.0f, 5);
  Matrix expected = naive_product(a, b);
  for (std::int64_t i = 0; i < c.size(); ++i) expected.data()[i] += c.data()[i];
  cpu::gemm(a, false, b, false, c, 1.0f, 1.0f);
  expect_near(c, expected, 1e-5f);
}

TEST(Gemm, RejectsMismatchedShapes) {
  Matrix c;
  EXPECT_THROW(cpu::gemm(uniform_matrix(3, 4, -1.0f, 1.0f, 1), false,
                         uniform_matrix(5, 2, -1.0f, 1.0f, 2), false, c),
               Error);
}

TEST(Gemm, FirstRowsViewMultipliesAPrefix) {
  const Matrix a = uniform_matrix(6, 4, -1.0f, 1.0f, 8);
  const Matrix b = uniform_matrix(4, 3, -1.0f, 1.0f, 9);
  Matrix c;
  cpu::gemm(MatrixView(a).first_rows(2), false, b, false, c);
  const Matrix full = naive_product(a, b);
  ASSERT_EQ(c.rows(), 2);
  for (std::int64_t i = 0; i < 2 * 3; ++i) EXPECT_NEAR(c.data()[i], full.data()[i], 1e-5f);
}

cpu::SparseMatrix small_sparse() {
  // 3 x 4: row 0 = {1: 2.0, 3: -1.0}, row 1 = {}, row 2 = {0: 0.5, 1: 1.5, 2: 3.0}
  cpu::SparseMatrix a;
  a.rows = 3;
  a.cols = 4;
  a.offsets = {0, 2, 2, 5};
  a.columns = {1, 3, 0, 1, 2};
  a.weights = {2.0f, -1.0f, 0.5f, 1.5f, 3.0f};
  return a;
}

Matrix dense_of(const cpu::SparseMatrix& a) {
  Matrix d(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      d(r, a.columns[static_cast<std::size_t>(e)]) += a.weights[static_cast<std::size_t>(e)];
    }
  }
  return d;
}

TEST(ColumnSums, AreTheChunkedDoubleSumsOnAnyNumberOfThreads) {
  // Several chunks, the last one partial, and enough entries for the threaded path.
  const std::int64_t rows = 3 * cpu::kColumnSumChunkRows + 17;
  const std::int64_t cols = 300;
  const Matrix grad = uniform_matrix(rows, cols, -1.0f, 1.0f, 12);
  const Matrix start = uniform_matrix(1, cols, -1.0f, 1.0f, 13);

  Matrix expected;
  expected.copy_from(start);
  for (std::int64_t j = 0; j < cols; ++j) {
    double total = 0.0;
    for (std::int64_t chunk = 0; chunk < cpu::column_sum_chunks(rows); ++chunk) {
      double chunk_sum = 0.0;
      const std::int64_t end = std::min(rows, (chunk + 1) * cpu::kColumnSumChunkRows);
      for (std::int64_t i = chunk * cpu::kColumnSumChunkRows; i < end; ++i) {
        chunk_sum += grad(i, j);
      }
      total += chunk_sum;
    }
    expected(0, j) += static_cast<float>(total);
  }

  const int threads = omp_get_max_threads();
  for (const int thread_count : {1, 2, 3}) {
    omp_set_num_threads(thread_count);
    Matrix sums;
    sums.copy_from(start);
    cpu::accumulate_column_sums(grad, sums);
    for (std::int64_t j = 0; j < cols; ++j) {
      ASSERT_EQ(sums(0, j), expected(0, j)) << "column " << j << ", " << thread_count << " threads";
    }
  }
  omp_set_num_threads(threads);
}

TEST(Spmm, MatchesDenseProduct) {
  const cpu::SparseMatrix a = small_sparse();
  const Matrix x = uniform_matrix(4, 3, -1.0f, 1.0f, 6);
  Matrix y;
  cpu::spmm(a, x, y);
  expect_near(y, naive_product(dense_of(a), x), 1e-6f);
}

TEST(Spmm, TransposedIsTheTranspose) {
  const cpu::SparseMatrix a = small_sparse();
  const cpu::SparseMatrix t = a.transposed();
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.cols, 3);
  expect_near(dense_of(t), transpose(dense_of(a)), 0.0f);
  for (std::int64_t r = 0; r < t.rows; ++r) {
    for (auto e = t.offsets[static_cast<std::size_t>(r)] + 1;
         e < t.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      EXPECT_LT(t.columns[static_cast<std::size_t>(e) - 1], t.columns[static_cast<std::size_t>(e)]);
    }
  }
}

// Large enough for the transpose to split its rows over threads: the same matrix, sorted rows,
// whatever the number of threads.
TEST(Spmm, TransposeIsTheSameOnAnyThreadCount) {
  cpu::SparseMatrix a;
  a.rows = 5000;
  a.cols = 300;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t c = 0; c < a.cols;
         c += 1 + static_cast<std::int64_t>(hash_mix(3, r, c) % 20)) {
      a.columns.push_back(static_cast<std::int32_t>(c));
      a.weights.push_back(static_cast<float>(r) + static_cast<float>(c) / 1000.0f);
    }
    a.offsets.push_back(a.nonzeros());
  }
  ASSERT_GE(a.nonzeros(), 1 << 16);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const cpu::SparseMatrix serial = a.transposed();
  expect_near(dense_of(serial), transpose(dense_of(a)), 0.0f);
  for (const int threads : {2, 3, 4}) {
    omp_set_num_threads(threads);
    const cpu::SparseMatrix parallel = a.transposed();
    EXPECT_EQ(parallel.offsets, serial.offsets) << threads << " threads";
    EXPECT_EQ(parallel.columns, serial.columns) << threads << " threads";
    EXPECT_EQ(parallel.weights, serial.weights) << threads << " threads";
  }
  omp_set_num_threads(before);
}

std::vector<float> values_of(const Matrix& m) { return {m.data(), m.data() + m.size()}; }

// Bag-of-words-like rows: a few columns each, most of them low (skewed), some rows empty.
cpu::SparseMatrix skewed_rows(std::int64_t rows, std::int64_t cols) {
  cpu::SparseMatrix a;
  a.rows = rows;
  a.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = static_cast<std::int64_t>(hash_mix(5, r) % 7); c < cols;
         c += 1 + c / 3 + static_cast<std::int64_t>(hash_mix(7, r, c) % 9)) {
      a.columns.push_back(static_cast<std::int32_t>(c));
      a.weights.push_back(static_cast<float>(hash_mix(11, r, c) % 1000) / 300.0f - 1.5f);
    }
    a.offsets.push_back(a.nonzeros());
  }
  return a;
}

// transpose(a) x without the transpose: the transpose's product bit for bit, on any number of
// threads, on a matrix large enough to split, its prefix, and other values over its structure.
TEST(Spmm, TransposedSortedIsTheTransposesProductOnAnyThreadCount) {
  const cpu::SparseMatrix a = skewed_rows(3000, 700);
  const Matrix x = uniform_matrix(a.rows, 16, -1.0f, 1.0f, 8);
  ASSERT_GE(a.nonzeros() * x.cols(), 1 << 16);
  std::vector<float> other_weights(a.weights.size());
  for (std::size_t e = 0; e < other_weights.size(); ++e) {
    other_weights[e] = e % 3 == 0 ? 0.0f : a.weights[e] * 2.0f;
  }
  const cpu::SparseMatrixView prefix = cpu::SparseMatrixView(a).first_rows(1000);
  const Matrix x_prefix = uniform_matrix(prefix.rows, 5, -1.0f, 1.0f, 9);
  const int before = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    Matrix expected, actual;
    cpu::spmm(a.transposed(), x, expected);
    cpu::spmm_transposed_sorted(a, x, actual);
    EXPECT_EQ(values_of(actual), values_of(expected)) << threads << " threads";
    cpu::spmm(prefix.copy().transposed(), x_prefix, expected);
    cpu::spmm_transposed_sorted(prefix, x_prefix, actual);
    EXPECT_EQ(values_of(actual), values_of(expected)) << "prefix, " << threads << " threads";
    const cpu::SparseMatrixView other = cpu::SparseMatrixView(a).with_weights(other_weights);
    cpu::spmm(other.copy().transposed(), x, expected);
    cpu::spmm_transposed_sorted(other, x, actual);
    EXPECT_EQ(values_of(actual), values_of(expected)) << "other values, " << threads << " threads";
  }
  omp_set_num_threads(before);
}

TEST(Spmm, TransposedSortedOfEmptyRowsIsZero) {
  cpu::SparseMatrix a;
  a.rows = 3;
  a.cols = 4;
  a.offsets = {0, 0, 0, 0};
  const Matrix x = uniform_matrix(3, 2, -1.0f, 1.0f, 1);
  Matrix y;
  cpu::spmm_transposed_sorted(a, x, y);
  EXPECT_EQ(y.rows(), 4);
  EXPECT_EQ(values_of(y), std::vector<float>(8, 0.0f));
  EXPECT_THROW(cpu::spmm_transposed_sorted(a, uniform_matrix(2, 2, 0.0f, 1.0f, 1), y), Error);
}

TEST(SparseMatrixView, SharesTheMatrixArrays) {
  const cpu::SparseMatrix a = skewed_rows(10, 30);
  const cpu::SparseMatrixView prefix = cpu::SparseMatrixView(a).first_rows(4);
  EXPECT_EQ(prefix.rows, 4);
  EXPECT_EQ(prefix.columns.data(), a.columns.data());
  const cpu::SparseMatrix copied = a.first_rows(4);
  EXPECT_EQ(prefix.copy().offsets, copied.offsets);
  EXPECT_EQ(prefix.copy().columns, copied.columns);
  EXPECT_EQ(prefix.copy().weights, copied.weights);
  EXPECT_THROW(cpu::SparseMatrixView(a).first_rows(11), Error);
  EXPECT_THROW(cpu::SparseMatrixView(a).with_weights(std::vector<float>(1)), Error);
}

// Path 0 - 1 - 2 plus an isolated node 3, as a full-graph block.
Block path_block() {
  Block block;
  block.src_nodes = {0, 1, 2, 3};
  block.num_dst = 4;
  block.offsets = {0, 1, 3, 4, 4};
  block.src_index = {1, 0, 2, 1};
  return block;
}

TEST(Aggregation, GcnOnFullGraphIsSymmetricNormalisedAdjacencyWithSelfLoops) {
  const Matrix a = dense_of(gcn_aggregation(path_block()).materialized());
  // degrees with self loops: 2, 3, 2, 1
  const double d[] = {2, 3, 2, 1};
  const int edges[][2] = {{0, 1}, {1, 0}, {1, 2}, {2, 1}};
  Matrix expected(4, 4);
  for (int v = 0; v < 4; ++v) expected(v, v) = static_cast<float>(1.0 / d[v]);
  for (const auto& e : edges)
    expected(e[0], e[1]) = static_cast<float>(1.0 / std::sqrt(d[e[0]] * d[e[1]]));
  expect_near(a, expected, 1e-7f);
}

TEST(Aggregation, GcnOnSampledBlockUsesBlockDegrees) {
  // dst {10, 11}; src {10, 11, 12}; edges 12->10, 11->10, 12->11.
  Block block;
  block.src_nodes = {10, 11, 12};
  block.num_dst = 2;
  block.offsets = {0, 2, 3};
  block.src_index = {2, 1, 2};
  const Matrix a = dense_of(gcn_aggregation(block).materialized());
  // in-degree + 1: d0 = 3, d1 = 2. out-degree (+1 for dst): s0 = 1, s1 = 2, s2 = 2.
  EXPECT_NEAR(a(0, 0), 1.0 / std::sqrt(3.0 * 1.0), 1e-7);
  EXPECT_NEAR(a(0, 1), 1.0 / std::sqrt(3.0 * 2.0), 1e-7);
  EXPECT_NEAR(a(0, 2), 1.0 / std::sqrt(3.0 * 2.0), 1e-7);
  EXPECT_NEAR(a(1, 1), 1.0 / std::sqrt(2.0 * 2.0), 1e-7);
  EXPECT_NEAR(a(1, 2), 1.0 / std::sqrt(2.0 * 2.0), 1e-7);
  EXPECT_EQ(a(1, 0), 0.0f);
}

TEST(Aggregation, MeanAveragesInNeighboursAndLeavesIsolatedNodesAtZero) {
  const Matrix a = dense_of(mean_aggregation(path_block()).materialized());
  EXPECT_EQ(a(0, 1), 1.0f);
  EXPECT_EQ(a(1, 0), 0.5f);
  EXPECT_EQ(a(1, 2), 0.5f);
  EXPECT_EQ(a(2, 1), 1.0f);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(a(3, j), 0.0f);
}

// A sampled-looking block: sources in no order within a row, repeated sources, a destination
// that is its own source, destinations without edges, and more sources than destinations.
Block unordered_block(std::int64_t num_dst, std::int64_t num_src) {
  Block block;
  for (std::int64_t v = 0; v < num_src; ++v) block.src_nodes.push_back(static_cast<NodeId>(v));
  block.num_dst = num_dst;
  for (std::int64_t d = 0; d < num_dst; ++d) {
    const auto edges = static_cast<std::int64_t>(hash_mix(21, d) % 12);
    for (std::int64_t e = 0; e < edges; ++e) {
      const auto s = static_cast<std::int32_t>(hash_mix(22, d, e) % (e == 0 ? num_dst : num_src));
      block.src_index.push_back(e == 1 ? static_cast<std::int32_t>(d) : s);
    }
    if (edges > 3) block.src_index.push_back(block.src_index.back());
    block.offsets.push_back(block.num_edges());
  }
  return block;
}

// Both aggregations, read from the block in place, give the stored matrix's products bit for
// bit, forward and transposed, on any number of threads (large enough to split).
TEST(Aggregation, ReadInPlaceIsTheStoredMatrixsProductsOnAnyThreadCount) {
  const Block block = unordered_block(4000, 6000);
  const Matrix x = uniform_matrix(block.num_src(), 16, -1.0f, 1.0f, 23);
  const Matrix g = uniform_matrix(block.num_dst, 16, -1.0f, 1.0f, 24);
  ASSERT_GE(block.num_edges() * g.cols(), 1 << 16);
  const int before = omp_get_max_threads();
  for (const bool gcn : {false, true}) {
    const cpu::ScaledAdjacency a = gcn ? gcn_aggregation(block) : mean_aggregation(block);
    const cpu::SparseMatrix stored = a.materialized();
    ASSERT_EQ(stored.nonzeros(), a.nonzeros());
    for (const int threads : {1, 2, 3, 4}) {
      omp_set_num_threads(threads);
      Matrix expected, actual;
      cpu::spmm(stored, x, expected);
      cpu::aggregate(a, x, actual);
      EXPECT_EQ(values_of(actual), values_of(expected)) << gcn << ", " << threads << " threads";
      cpu::spmm(stored.transposed(), g, expected);
      cpu::aggregate_transposed(a, g, actual);
      EXPECT_EQ(values_of(actual), values_of(expected))
          << "transposed, " << gcn << ", " << threads << " threads";
    }
  }
  omp_set_num_threads(before);
  Matrix y;
  EXPECT_THROW(cpu::aggregate(gcn_aggregation(block), g, y), Error);
  EXPECT_THROW(cpu::aggregate_transposed(gcn_aggregation(block), x, y), Error);
}

TEST(SoftmaxCrossEntropy, ValueGradientAndAccuracyMatchClosedForm) {
  Matrix logits(2, 3);
  const float values[] = {1.0f, 2.0f, 3.0f, 0.5f, -1.0f, 0.0f};
  std::copy(values, values + 6, logits.data());
  const std::int32_t labels[] = {2, 1};
  Matrix grad;
  std::int64_t correct = 0;
  const double loss = cpu::softmax_cross_entropy(logits, labels, grad, correct);
  double expected_loss = 0;
  for (int i = 0; i < 2; ++i) {
    double sum = 0;
    for (int j = 0; j < 3; ++j) sum += std::exp(static_cast<double>(logits(i, j)));
    expected_loss += std::log(sum) - logits(i, labels[i]);
    for (int j = 0; j < 3; ++j) {
      const double p = std::exp(static_cast<double>(logits(i, j))) / sum;
      EXPECT_NEAR(grad(i, j), (p - (j == labels[i] ? 1 : 0)) / 2, 1e-7);
    }
  }
  EXPECT_NEAR(loss, expected_loss / 2, 1e-12);
  EXPECT_EQ(correct, 1);
  EXPECT_EQ(cpu::count_correct(logits, labels), 1);
}

// The documented mask, entry by entry (the CUDA kernel computes the same formula).
TEST(Dropout, KeepsAnEntryIffItsSixteenBitsOfTheGroupHashReachTheRate) {
  Matrix x(7, 11);
  x.fill(1.0f);
  const std::vector<std::int32_t> ids{3, 90, 4, 17, 100000, 0, 55};
  const std::int64_t column_offset = 6;
  cpu::dropout_forward(x, ids, 0.3f, 1234, column_offset);
  const std::uint64_t threshold = 19661;  // lround(0.3 * 65536)
  for (std::int64_t r = 0; r < x.rows(); ++r) {
    for (std::int64_t c = 0; c < x.cols(); ++c) {
      const std::int64_t column = c + column_offset;
      const std::uint64_t bits =
          hash_mix(1234, static_cast<std::uint64_t>(ids[static_cast<std::size_t>(r)]),
                   static_cast<std::uint64_t>(column / 4)) >>
          (16 * (column % 4));
      EXPECT_EQ(x(r, c), (bits & 0xffff) >= threshold ? 1.0f / 0.7f : 0.0f)
          << "row " << r << " column " << column;
    }
  }
}

TEST(Dropout, IntoACopyEqualsInPlaceOnTheCopy) {
  Matrix x = uniform_matrix(300, 37, -1.0f, 1.0f, 8);
  for (std::int64_t c = 0; c < 12; ++c) x(5, c) = 0.0f;  // zero groups, left without hashing
  std::vector<std::int32_t> ids(300);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(7 * i + 3);
  Matrix in_place = x;
  cpu::dropout_forward(in_place, ids, 0.4f, 99);
  Matrix copied(2, 2);
  cpu::dropout_forward_copy(x, copied, ids, 0.4f, 99);
  ASSERT_EQ(copied.rows(), 300);
  ASSERT_EQ(copied.cols(), 37);
  EXPECT_TRUE(
      std::equal(copied.values().begin(), copied.values().end(), in_place.values().begin()));
}

TEST(Dropout, KeepsTheExpectedFractionScaledAndMasksGradientsIdentically) {
  Matrix x(1000, 20);
  x.fill(1.0f);
  std::vector<std::int32_t> ids(1000);
  for (int i = 0; i < 1000; ++i) ids[static_cast<std::size_t>(i)] = 5000 + i;
  cpu::dropout_forward(x, ids, 0.5f, 42);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(x.data()[i] == 0.0f || x.data()[i] == 2.0f);
    kept += x.data()[i] != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 20000.0, 0.5, 0.02);
  Matrix g(1000, 20);
  g.fill(1.0f);
  cpu::dropout_backward(g, ids, 0.5f, 42);
  for (std::int64_t i = 0; i < x.size(); ++i) EXPECT_EQ(g.data()[i], x.data()[i]);
}

TEST(Dropout, MaskDependsOnNodeIdNotRowPosition) {
  Matrix a(2, 8);
  Matrix b(2, 8);
  a.fill(1.0f);
  b.fill(1.0f);
  const std::int32_t ids_a[] = {7, 9};
  const std::int32_t ids_b[] = {9, 7};
  cpu::dropout_forward(a, ids_a, 0.5f, 3);
  cpu::dropout_forward(b, ids_b, 0.5f, 3);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(a(0, j), b(1, j));
    EXPECT_EQ(a(1, j), b(0, j));
  }
}

TEST(Dropout, ColumnSlicesGetTheFullMatrixMask) {
  Matrix full(3, 11);
  full.fill(1.0f);
  const std::int32_t ids[] = {4, 8, 15};
  cpu::dropout_forward(full, ids, 0.5f, 77);
  for (const auto& [begin, end] :
       {std::pair{0, 5}, std::pair{5, 6}, std::pair{6, 11}, std::pair{3, 9}}) {
    Matrix slice(3, end - begin);
    slice.fill(1.0f);
    cpu::dropout_forward(slice, ids, 0.5f, 77, begin);
    for (int i = 0; i < 3; ++i) {
      for (int j = begin; j < end; ++j) EXPECT_EQ(slice(i, j - begin), full(i, j)) << i << "," << j;
    }
  }
}

TEST(Optimizer, AdamFirstStepMovesEveryWeightByTheLearningRate) {
  Parameter p{"w", 0, true, Matrix(1, 3), Matrix(1, 3)};
  p.value.fill(1.0f);
  p.grad(0, 0) = 0.5f;
  p.grad(0, 1) = -2.0f;
  p.grad(0, 2) = 0.0f;
  AdamOptimizer adam(0.1);
  Parameter* list[] = {&p};
  adam.step(list);
  // After one bias-corrected step, m / sqrt(v) = sign(g).
  EXPECT_NEAR(p.value(0, 0), 0.9f, 1e-6f);
  EXPECT_NEAR(p.value(0, 1), 1.1f, 1e-6f);
  EXPECT_NEAR(p.value(0, 2), 1.0f, 1e-6f);
}

TEST(Optimizer, SgdWithMomentumAndWeightDecay) {
  Parameter w{"layer0.W", 0, true, Matrix(1, 1), Matrix(1, 1)};
  Parameter b{"layer0.b", 0, false, Matrix(1, 1), Matrix(1, 1)};
  Parameter w2{"layer1.W", 1, true, Matrix(1, 1), Matrix(1, 1)};
  for (Parameter* p : {&w, &b, &w2}) {
    p->value(0, 0) = 2.0f;
    p->grad(0, 0) = 1.0f;
  }
  TrainingConfig config;
  config.optimizer = "sgd";
  config.learning_rate = 0.5;
  config.momentum = 0.9;
  config.weight_decay = 0.25;
  config.weight_decay_layers = "first";
  Parameter* list[] = {&w, &b, &w2};
  apply_weight_decay(list, config);
  EXPECT_FLOAT_EQ(w.grad(0, 0), 1.5f);   // decayed
  EXPECT_FLOAT_EQ(b.grad(0, 0), 1.0f);   // biases never decay
  EXPECT_FLOAT_EQ(w2.grad(0, 0), 1.0f);  // not the first layer
  auto sgd = make_optimizer(config);
  sgd->step(list);
  EXPECT_FLOAT_EQ(w.value(0, 0), 2.0f - 0.5f * 1.5f);
  sgd->step(list);  // velocity 0.9 * 1.5 + 1.5
  EXPECT_FLOAT_EQ(w.value(0, 0), 2.0f - 0.75f - 0.5f * (0.9f * 1.5f + 1.5f));
}

// Scatters split the columns over threads: repeated positions keep the last row, or the sum in
// row order, bit for bit on any number of threads, as a serial loop over the rows gives them.
TEST(ScatterRows, RepeatedPositionsGiveTheSerialResultOnAnyThreadCount) {
  const std::int64_t width = 100;
  const Matrix rows = uniform_matrix(3000, width, -1.0f, 1.0f, 41);
  std::vector<std::int32_t> positions(3000);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    positions[r] = static_cast<std::int32_t>(hash_mix(42, r) % 700);
  }
  for (const bool add : {false, true}) {
    Matrix expected(700, width);
    for (std::size_t r = 0; r < positions.size(); ++r) {
      for (std::int64_t j = 0; j < width; ++j) {
        float& to = expected(positions[r], j);
        to = add ? to + rows(static_cast<std::int64_t>(r), j)
                 : rows(static_cast<std::int64_t>(r), j);
      }
    }
    for (const int threads : {1, 2, 3}) {
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      Matrix out(700, width);
      cpu::scatter_rows(rows, positions, out, add);
      omp_set_num_threads(before);
      EXPECT_TRUE(std::equal(out.values().begin(), out.values().end(), expected.values().begin()))
          << (add ? "scatter_add_rows" : "scatter_rows") << " on " << threads << " threads";
    }
  }
  Matrix out(700, width);
  std::vector<std::int32_t> outside = positions;
  outside[5] = 700;
  EXPECT_THROW(cpu::scatter_rows(rows, outside, out, false), Error);
  EXPECT_THROW(cpu::scatter_rows(rows, std::span(positions).first(10), out, true), Error);
}

}  // namespace
}  // namespace gnnbed
