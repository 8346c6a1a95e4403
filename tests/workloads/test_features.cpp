#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/features.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

// The derived classes' gather overrides hide the whole-row overload; call it as callers do,
// through the interface.
void gather_rows(const FeatureStore& store, std::span<const NodeId> nodes, float* out) {
  store.gather(nodes, out);
}

// 3 nodes x 4 columns: value = 10 * node + column.
StoredFeatures small_store() {
  std::vector<float> values(12);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(10 * (i / 4) + i % 4);
  }
  return StoredFeatures(3, 4, SharedArray(std::move(values)));
}

TEST(StoredFeatures, GatherRowsAndColumnRanges) {
  const StoredFeatures store = small_store();
  EXPECT_EQ(store.num_nodes(), 3);
  EXPECT_EQ(store.dim(), 4);
  EXPECT_EQ(store.stored_bytes(), 48);
  const std::vector<NodeId> nodes{2, 0, 2};
  std::vector<float> out(12);
  gather_rows(store, nodes, out.data());
  EXPECT_EQ(out, (std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23}));
  std::vector<float> slice(6);
  store.gather(nodes, 1, 3, slice.data());
  EXPECT_EQ(slice, (std::vector<float>{21, 22, 1, 2, 21, 22}));
  std::vector<float> empty_range(1, -1.0f);
  store.gather(nodes, 2, 2, empty_range.data());
  EXPECT_EQ(empty_range[0], -1.0f);  // nothing written
  EXPECT_EQ(std::vector<float>(store.row(1).begin(), store.row(1).end()),
            (std::vector<float>{10, 11, 12, 13}));
  EXPECT_EQ(store.describe().at("kind"), "stored");
  EXPECT_EQ(store.describe().at("row_normalized"), false);
}

// Dropout skips groups of kDropoutGroupEntries zeros; the fraction it hashes is counted per row,
// the last group of a row possibly shorter.
TEST(StoredFeatures, CountsTheGroupsHoldingANonzero) {
  // 2 rows of 6 columns: groups [0, 4) and [4, 6).
  const StoredFeatures store(2, 6,
                             SharedArray(std::vector<float>{0, 0, 0, 0, 5, 0,  //
                                                            0, 0, 7, 0, 0, -1}));
  EXPECT_DOUBLE_EQ(store.nonzero_group_fraction(), 3.0 / 4.0);
  const StoredFeatures zeros(2, 3, SharedArray(std::vector<float>(6, 0.0f)));
  EXPECT_DOUBLE_EQ(zeros.nonzero_group_fraction(), 0.0);
  const GeneratedFeatures generated(8, SharedArray(std::vector<std::int32_t>{0, 1}), 1.0f, 3);
  EXPECT_DOUBLE_EQ(generated.nonzero_group_fraction(), 1.0);
}

TEST(StoredFeatures, RejectsBadShapesAndColumns) {
  EXPECT_THROW(StoredFeatures(3, 4, SharedArray(std::vector<float>(11))), Error);
  EXPECT_THROW(StoredFeatures(0, 0, SharedArray(std::vector<float>())), Error);
  const StoredFeatures store = small_store();
  const std::vector<NodeId> nodes{0};
  std::vector<float> out(8);
  EXPECT_THROW(store.gather(nodes, 2, 5, out.data()), Error);
  EXPECT_THROW(store.gather(nodes, -1, 2, out.data()), Error);
  EXPECT_THROW(store.gather(nodes, 3, 2, out.data()), Error);
}

TEST(StoredFeatures, RowNormalized) {
  const StoredFeatures store(3, 2, SharedArray(std::vector<float>{1, 3, 0, 0, 2, 2}));
  const StoredFeatures normalized = store.row_normalized();
  EXPECT_EQ(std::vector<float>(normalized.values().begin(), normalized.values().end()),
            (std::vector<float>{0.25f, 0.75f, 0, 0, 0.5f, 0.5f}));
  EXPECT_EQ(normalized.describe().at("row_normalized"), true);
  // The original is untouched.
  EXPECT_EQ(store.values()[0], 1.0f);
}

GeneratedFeatures generated(std::vector<std::int32_t> labels, float signal, std::uint64_t seed,
                            int dim = 8) {
  return GeneratedFeatures(dim, SharedArray(std::move(labels)), signal, seed);
}

// 4 nodes x 6 columns, mostly zeros (one empty row), as CSR and as the same dense rows.
SparseMatrix small_sparse_rows() {
  SparseMatrix rows;
  rows.rows = 4;
  rows.cols = 6;
  rows.offsets = {0, 2, 2, 5, 6};
  rows.columns = {1, 4, 0, 3, 5, 2};
  rows.weights = {1.5f, -2.0f, 3.0f, 0.25f, 1.0f, 7.0f};
  return rows;
}

StoredFeatures dense_of(const SparseMatrix& rows) {
  std::vector<float> values(static_cast<std::size_t>(rows.rows * rows.cols), 0.0f);
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    for (auto e = rows.offsets[static_cast<std::size_t>(r)];
         e < rows.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      values[static_cast<std::size_t>(r * rows.cols + rows.columns[static_cast<std::size_t>(e)])] =
          rows.weights[static_cast<std::size_t>(e)];
    }
  }
  return StoredFeatures(rows.rows, static_cast<int>(rows.cols), SharedArray(std::move(values)));
}

TEST(SparseFeatures, GathersWhatTheDenseRowsHold) {
  const SparseFeatures sparse(small_sparse_rows());
  const StoredFeatures dense = dense_of(small_sparse_rows());
  EXPECT_EQ(sparse.nonzeros(), 6);
  EXPECT_EQ(sparse.stored_bytes(), 5 * 8 + 6 * 4 + 6 * 4);
  EXPECT_EQ(sparse.describe().at("layout"), "sparse");
  const std::vector<NodeId> nodes{3, 0, 2, 1, 2};
  for (const auto& [begin, end] : {std::pair{0, 6}, std::pair{1, 4}, std::pair{5, 6}}) {
    const auto width = static_cast<std::size_t>(end - begin);
    std::vector<float> from_sparse(nodes.size() * width, -9.0f);
    std::vector<float> from_dense(nodes.size() * width, -9.0f);
    sparse.gather(nodes, begin, end, from_sparse.data());
    dense.gather(nodes, begin, end, from_dense.data());
    EXPECT_EQ(from_sparse, from_dense) << "columns [" << begin << ", " << end << ")";
  }
  EXPECT_DOUBLE_EQ(sparse.nonzero_group_fraction(), dense.nonzero_group_fraction());
}

TEST(SparseFeatures, GatherRowsKeepsTheRequestedOrder) {
  const SparseFeatures sparse(small_sparse_rows());
  const std::vector<NodeId> nodes{2, 1, 0, 2};
  const SparseMatrix rows = sparse.gather_rows(nodes);
  EXPECT_EQ(rows.rows, 4);
  EXPECT_EQ(rows.cols, 6);
  EXPECT_EQ(rows.offsets, (std::vector<std::int64_t>{0, 3, 3, 5, 8}));
  EXPECT_EQ(rows.columns, (std::vector<std::int32_t>{0, 3, 5, 1, 4, 0, 3, 5}));
  EXPECT_EQ(rows.weights, (std::vector<float>{3.0f, 0.25f, 1.0f, 1.5f, -2.0f, 3.0f, 0.25f, 1.0f}));
}

// Row normalisation by the dense rule, bit for bit (zeros add nothing to a row's sum).
TEST(SparseFeatures, RowNormalizedEqualsTheDenseRowsNormalized) {
  const SparseFeatures sparse = SparseFeatures(small_sparse_rows()).row_normalized();
  const StoredFeatures dense = dense_of(small_sparse_rows()).row_normalized();
  const std::vector<NodeId> nodes{0, 1, 2, 3};
  std::vector<float> from_sparse(24);
  std::vector<float> from_dense(24);
  gather_rows(sparse, nodes, from_sparse.data());
  gather_rows(dense, nodes, from_dense.data());
  EXPECT_EQ(from_sparse, from_dense);
  EXPECT_EQ(sparse.describe().at("row_normalized"), true);
}

TEST(SparseFeatures, RejectsArraysThatAreNotCsr) {
  const auto make = [](std::vector<std::int64_t> offsets, std::vector<std::int32_t> columns) {
    std::vector<float> values(columns.size(), 1.0f);
    return SparseFeatures(2, 4, SharedArray(std::move(offsets)), SharedArray(std::move(columns)),
                          SharedArray(std::move(values)));
  };
  EXPECT_NO_THROW(make({0, 1, 3}, {2, 0, 3}));
  EXPECT_THROW(make({0, 1}, {2}), Error);           // offsets for one node
  EXPECT_THROW(make({0, 2, 1}, {2, 0}), Error);     // a row ending before it begins
  EXPECT_THROW(make({0, 1, 5}, {2, 0, 3}), Error);  // offsets past the entries
  EXPECT_THROW(make({0, 2, 3}, {2, 2, 1}), Error);  // a column repeated in a row
  EXPECT_THROW(make({0, 1, 3}, {2, 3, 1}), Error);  // columns out of order
  EXPECT_THROW(make({0, 1, 2}, {2, 4}), Error);     // a column outside the dimension
}

TEST(SparseFeatures, SmallerThanDenseDecidesByBytes) {
  EXPECT_TRUE(SparseFeatures::smaller_than_dense(2708, 1433, 49216));  // Cora, 1.3 % dense
  EXPECT_FALSE(SparseFeatures::smaller_than_dense(100, 10, 600));      // 60 % dense
}

TEST(GeneratedFeatures, DeterministicPerSeed) {
  const auto a = generated({0, 1, 0, 1}, 0.5f, 3);
  const auto b = generated({0, 1, 0, 1}, 0.5f, 3);
  const auto c = generated({0, 1, 0, 1}, 0.5f, 4);
  int differ = 0;
  for (NodeId v = 0; v < 4; ++v) {
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(a.value(v, j), b.value(v, j));
      differ += a.value(v, j) != c.value(v, j);
    }
  }
  EXPECT_EQ(differ, 32);
  EXPECT_EQ(a.stored_bytes(), 0);
  EXPECT_EQ(a.num_nodes(), 4);
  EXPECT_EQ(a.describe().at("kind"), "generated");
  EXPECT_EQ(a.describe().at("seed"), 3u);
}

TEST(GeneratedFeatures, GatherEqualsValueAndSlicesAgree) {
  std::vector<std::int32_t> labels(1000);
  for (std::size_t v = 0; v < labels.size(); ++v) labels[v] = static_cast<std::int32_t>(v % 3) - 1;
  const auto features = generated(labels, 1.0f, 11, 10);
  std::vector<NodeId> nodes(1000);
  std::iota(nodes.begin(), nodes.end(), 0);
  std::reverse(nodes.begin(), nodes.end());
  std::vector<float> full(nodes.size() * 10);
  gather_rows(features, nodes, full.data());
  std::vector<float> slice(nodes.size() * 4);
  features.gather(nodes, 3, 7, slice.data());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (int j = 0; j < 10; ++j) {
      ASSERT_EQ(full[i * 10 + static_cast<std::size_t>(j)], features.value(nodes[i], j));
    }
    for (int j = 0; j < 4; ++j) {
      ASSERT_EQ(slice[i * 4 + static_cast<std::size_t>(j)],
                full[i * 10 + 3 + static_cast<std::size_t>(j)]);
    }
  }
  std::vector<float> out(10);
  EXPECT_THROW(features.gather(nodes, 0, 11, out.data()), Error);
}

TEST(GeneratedFeatures, ClassConditionalMeans) {
  // 20000 nodes per label (-1, 0, 1): a column mean has noise standard deviation 0.007.
  constexpr int kPerLabel = 20000;
  std::vector<std::int32_t> labels(3 * kPerLabel);
  for (std::size_t v = 0; v < labels.size(); ++v) labels[v] = static_cast<std::int32_t>(v % 3) - 1;
  const auto features = generated(labels, 0.5f, 5, 16);
  std::vector<std::vector<double>> mean(3, std::vector<double>(16, 0));
  for (NodeId v = 0; v < static_cast<NodeId>(labels.size()); ++v) {
    for (int j = 0; j < 16; ++j) {
      mean[static_cast<std::size_t>(labels[static_cast<std::size_t>(v)] + 1)]
          [static_cast<std::size_t>(j)] += features.value(v, j) / kPerLabel;
    }
  }
  int signs_differ = 0;
  for (std::size_t j = 0; j < 16; ++j) {
    EXPECT_NEAR(mean[0][j], 0.0, 0.04);            // unlabelled: noise only
    EXPECT_NEAR(std::abs(mean[1][j]), 0.5, 0.04);  // class 0: +-signal
    EXPECT_NEAR(std::abs(mean[2][j]), 0.5, 0.04);  // class 1: +-signal
    signs_differ += (mean[1][j] > 0) != (mean[2][j] > 0);
  }
  EXPECT_GT(signs_differ, 0);
  EXPECT_LT(signs_differ, 16);

  // Without signal, every class looks the same.
  const auto noise = generated(labels, 0.0f, 5, 16);
  double class0 = 0;
  for (NodeId v = 1; v < static_cast<NodeId>(labels.size()); v += 3) class0 += noise.value(v, 0);
  EXPECT_NEAR(class0 / kPerLabel, 0.0, 0.04);
}

TEST(GeneratedFeatures, RejectsANonPositiveDimension) {
  EXPECT_THROW(generated({0}, 0.5f, 1, 0), Error);
}

}  // namespace
}  // namespace gnnbed
