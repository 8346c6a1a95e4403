// Sparse input rows (bag-of-words features) through the model: the same logits and gradients as
// the same rows dense, for every model kind, with dropout, on a sampled block (destinations a
// prefix of the sources) and on a full-graph one, in both of the dense path's multiplication
// orders; and dropout's mask on sparse rows equal to the dense mask.
#include <gtest/gtest.h>
#include <omp.h>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/input_rows.hpp"
#include "exec/nn/model.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

// `rows` x `cols` with about a third of the entries nonzero, seeded.
cpu::SparseMatrix random_sparse(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  cpu::SparseMatrix x;
  x.rows = rows;
  x.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::uint64_t bits = hash_mix(seed, static_cast<std::uint64_t>(r * cols + c));
      if (bits % 3 != 0) continue;
      x.columns.push_back(static_cast<std::int32_t>(c));
      x.weights.push_back(static_cast<float>((bits >> 8) % 1000) / 500.0f - 1.0f);
    }
    x.offsets.push_back(x.nonzeros());
  }
  return x;
}

// Layer 0 maps 7 sources to 4 destinations (destination 3 without in-edges); layer 1 maps those
// 4 to 2 seeds.
struct SampledBlocks {
  Block first;
  Block second;
  SampledBlocks() {
    first.src_nodes = {40, 41, 42, 43, 44, 45, 46};
    first.num_dst = 4;
    first.offsets = {0, 3, 5, 8, 8};
    first.src_index = {4, 1, 5, 0, 6, 1, 4, 2};
    second.src_nodes = {40, 41, 42, 43};
    second.num_dst = 2;
    second.offsets = {0, 2, 4};
    second.src_index = {2, 3, 0, 2};
  }
};

struct SparseCase {
  const char* kind;
  int hidden;  // below the 12 input columns the dense path transforms first, above it aggregates
};

void PrintTo(const SparseCase& c, std::ostream* out) { *out << c.kind << "-h" << c.hidden; }

class SparseInput : public ::testing::TestWithParam<SparseCase> {};

void expect_near(const Matrix& actual, const Matrix& expected, const std::string& what,
                 double tolerance = 1e-5) {
  ASSERT_EQ(actual.rows(), expected.rows()) << what;
  ASSERT_EQ(actual.cols(), expected.cols()) << what;
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual.data()[i], expected.data()[i], tolerance) << what << " entry " << i;
  }
}

// Back-propagates `grad_logits` through both models (after their last training forward) and
// compares every parameter's gradient within `tolerance` (0: equal values).
void expect_same_gradients(Model& actual, Model& expected, const Matrix& grad_logits,
                           double tolerance) {
  actual.zero_grad();
  expected.zero_grad();
  actual.backward(grad_logits);
  expected.backward(grad_logits);
  const auto actual_parameters = actual.parameters();
  const auto expected_parameters = expected.parameters();
  for (std::size_t p = 0; p < actual_parameters.size(); ++p) {
    expect_near(actual_parameters[p]->grad, expected_parameters[p]->grad,
                actual_parameters[p]->name + " gradient", tolerance);
  }
}

// Five nodes, every source a destination.
Block full_block() {
  Block full;
  full.src_nodes = {0, 1, 2, 3, 4};
  full.num_dst = 5;
  full.offsets = {0, 2, 3, 5, 6, 8};
  full.src_index = {1, 4, 0, 3, 4, 2, 0, 1};
  return full;
}

// Two layers of the case's kind over 12 input columns and 3 classes.
ModelSpec two_layers(const SparseCase& c, double dropout) {
  ModelConfig config;
  config.kind = c.kind;
  config.num_layers = 2;
  config.hidden = c.hidden;
  config.heads = 2;
  config.dropout = dropout;
  return ModelSpec(config, 12, 3);
}

TEST_P(SparseInput, GivesTheDenseRowsLogitsAndGradients) {
  const ModelSpec spec = two_layers(GetParam(), 0.4);
  Model on_sparse(spec, 17);
  Model on_dense(spec, 17);
  const SampledBlocks sampled;
  const Block* blocks[] = {&sampled.first, &sampled.second};
  const cpu::SparseMatrix sparse = random_sparse(sampled.first.num_src(), 12, 5);
  const Matrix dense = cpu::densified(sparse);
  const std::int32_t labels[] = {2, 0};

  const Matrix logits = on_sparse.forward(blocks, sparse, true, 77);
  expect_near(logits, on_dense.forward(blocks, dense, true, 77), "logits");
  Matrix grad;
  std::int64_t correct = 0;
  cpu::softmax_cross_entropy(logits, labels, grad, correct);
  expect_same_gradients(on_sparse, on_dense, grad, 1e-5);
}

// Full-graph blocks (every source a destination): GraphSAGE's self term reads the input itself.
TEST_P(SparseInput, FullGraphBlocksGiveTheDenseRowsLogits) {
  const ModelSpec spec = two_layers(GetParam(), 0.5);
  Model on_sparse(spec, 3);
  Model on_dense(spec, 3);
  const Block full = full_block();
  const Block* blocks[] = {&full, &full};
  const cpu::SparseMatrix sparse = random_sparse(5, 12, 9);
  for (const bool training : {true, false}) {
    expect_near(on_sparse.forward(blocks, InputRows(sparse), training, 5),
                on_dense.forward(blocks, InputRows(cpu::densified(sparse)), training, 5),
                training ? "training logits" : "evaluation logits");
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SparseInput,
                         ::testing::Values(SparseCase{"gcn", 4}, SparseCase{"gcn", 16},
                                           SparseCase{"sage", 4}, SparseCase{"sage", 16},
                                           SparseCase{"sgc", 4}, SparseCase{"gat", 4}),
                         [](const ::testing::TestParamInfo<SparseCase>& param_info) {
                           return std::string(param_info.param.kind) + "_h" +
                                  std::to_string(param_info.param.hidden);
                         });

TEST(SparseDropout, KeepsAndScalesExactlyTheDenseMasksEntries) {
  cpu::SparseMatrix sparse = random_sparse(9, 23, 13);
  Matrix dense = cpu::densified(sparse);
  const std::vector<std::int32_t> row_ids{5, 900, 2, 17, 3, 44, 8, 1000000, 6};
  cpu::dropout_forward(dense, row_ids, 0.5f, 31);
  cpu::dropout_forward_sparse(sparse, row_ids, 0.5f, 31);
  const Matrix after = cpu::densified(sparse);
  int dropped = 0;
  for (std::int64_t i = 0; i < dense.size(); ++i) {
    EXPECT_EQ(after.data()[i], dense.data()[i]) << "entry " << i;
  }
  for (const float w : sparse.weights) dropped += w == 0.0f ? 1 : 0;
  EXPECT_GT(dropped, 0);
  EXPECT_LT(dropped, static_cast<int>(sparse.weights.size()));
}

// Dropout as a bit per entry, applied as kernels read the rows: the in-place rows' values, the
// dense mask's entries on any number of threads (rows straddling the threads' 64-entry words),
// the input left as it was; a rate of 0 gives the input itself.
TEST(SparseDropout, AppliedAsReadGivesTheInPlaceRowsOnAnyThreadCount) {
  const cpu::SparseMatrix input = random_sparse(1500, 41, 13);
  ASSERT_GT(input.nonzeros(), 16384);
  std::vector<std::int32_t> row_ids;
  for (std::int64_t r = 0; r < input.rows; ++r) row_ids.push_back(static_cast<std::int32_t>(r * 7));
  Matrix dense = cpu::densified(input);
  cpu::dropout_forward(dense, row_ids, 0.5f, 31);
  const int before = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    cpu::SparseMatrix in_place = input;
    cpu::dropout_forward_sparse(in_place, row_ids, 0.5f, 31);
    std::vector<std::uint64_t> kept;
    const cpu::SparseMatrixView dropped = cpu::dropout_sparse_view(input, row_ids, 0.5f, 31, kept);
    EXPECT_EQ(dropped.copy().weights, in_place.weights) << threads << " threads";
    EXPECT_EQ(dropped.columns.data(), input.columns.data());
    const Matrix after = cpu::densified(dropped);
    for (std::int64_t i = 0; i < dense.size(); ++i) {
      ASSERT_EQ(after.data()[i], dense.data()[i]) << "entry " << i << ", " << threads << " threads";
    }
    EXPECT_EQ(cpu::densified(dropped.first_rows(10)).values()[0], after.values()[0]);
  }
  omp_set_num_threads(before);
  EXPECT_EQ(input.weights, random_sparse(1500, 41, 13).weights);
  std::vector<std::uint64_t> kept;
  const cpu::SparseMatrixView undropped = cpu::dropout_sparse_view(input, row_ids, 0.0f, 31, kept);
  EXPECT_TRUE(undropped.kept.empty());
  EXPECT_EQ(undropped.copy().weights, input.weights);
  EXPECT_THROW(cpu::dropout_sparse_view(input, std::span(row_ids).first(3), 0.5f, 31, kept), Error);
  EXPECT_THROW(cpu::SparseMatrixView(input).with_dropout(std::span(kept).first(0), 2.0f), Error);
}

// Every node in order (full-graph training) reads the store in place; the model then gives the
// same bits as on gathered rows, with dropout, and its gradients too.
TEST(InputRows, EveryNodeInOrderReadsTheStoreInPlace) {
  const SparseFeatures features(random_sparse(5, 12, 9));
  const std::vector<NodeId> every{0, 1, 2, 3, 4};
  const InputRows in_place = InputRows::gather(features, every);
  ASSERT_TRUE(in_place.is_sparse());
  EXPECT_EQ(in_place.sparse().columns.data(), features.columns().data());
  EXPECT_EQ(in_place.sparse().weights.data(), features.values().data());
  const InputRows gathered(features.gather_rows(every));
  EXPECT_NE(gathered.sparse().columns.data(), features.columns().data());

  const ModelSpec spec = two_layers(SparseCase{"sage", 4}, 0.5);
  Model on_view(spec, 3);
  Model on_copy(spec, 3);
  const Block full = full_block();
  const Block* blocks[] = {&full, &full};
  const Matrix logits = on_view.forward(blocks, in_place, true, 5);
  expect_near(logits, on_copy.forward(blocks, gathered, true, 5), "logits", 0.0);
  expect_same_gradients(on_view, on_copy, logits, 0.0);
}

TEST(InputRows, GathersSparseRowsFromSparseFeaturesAndDenseOtherwise) {
  const SparseFeatures features(random_sparse(6, 10, 21));
  const std::vector<NodeId> nodes{4, 1, 4};
  const InputRows sparse = InputRows::gather(features, nodes);
  ASSERT_TRUE(sparse.is_sparse());
  EXPECT_EQ(sparse.rows(), 3);
  std::vector<float> expected(30);
  features.gather(nodes, 0, 10, expected.data());
  const Matrix dense = cpu::densified(sparse.sparse());
  EXPECT_EQ(std::vector<float>(dense.data(), dense.data() + 30), expected);

  const StoredFeatures stored(6, 10, SharedArray(std::vector<float>(60, 0.5f)));
  const InputRows rows = InputRows::gather(stored, nodes);
  EXPECT_FALSE(rows.is_sparse());
  EXPECT_EQ(rows.dense().rows(), 3);
}

// Selected rows (a peer's block read at its halo's positions) are the dense rows at those
// positions, repeats included, after the view's dropout; a position outside is refused.
TEST(SparseRows, SelectedRowsAreTheDenseRowsAtThosePositions) {
  const cpu::SparseMatrix x = random_sparse(6, 10, 33);
  const std::vector<std::int32_t> positions{5, 0, 5, 2};
  const Matrix dense = cpu::densified(x);
  const Matrix selected = cpu::densified(cpu::SparseMatrixView(x).selected_rows(positions));
  ASSERT_EQ(selected.rows(), 4);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::int64_t c = 0; c < 10; ++c) {
      EXPECT_EQ(selected(static_cast<std::int64_t>(i), c), dense(positions[i], c));
    }
  }
  const std::vector<std::uint64_t> none_kept(1, 0);
  const cpu::SparseMatrix dropped =
      cpu::SparseMatrixView(x).with_dropout(none_kept, 2.0f).selected_rows(positions);
  for (const float w : dropped.weights) EXPECT_EQ(w, 0.0f);
  const std::vector<std::int32_t> outside{6};
  EXPECT_THROW(cpu::SparseMatrixView(x).selected_rows(outside), Error);
}

}  // namespace
}  // namespace gnnbed
