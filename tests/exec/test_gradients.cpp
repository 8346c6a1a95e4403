// Every layer's hand-derived backward pass against central finite differences, for GCN, GraphSAGE,
// SGC and GAT, in both multiplication orders (out < in transforms first, out >= in aggregates
// first), on a sampled block (destinations a prefix of sources) and through a whole model with
// dropout, ReLU and softmax cross-entropy.
#include <gtest/gtest.h>

#include <functional>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/aggregation.hpp"
#include "exec/nn/layers.hpp"
#include "exec/nn/model.hpp"
#include "workloads/common/random.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

// A block with 4 destinations and 7 sources; destination 3 has no in-edges.
Block sampled_block() {
  Block block;
  block.src_nodes = {40, 41, 42, 43, 44, 45, 46};
  block.num_dst = 4;
  block.offsets = {0, 3, 5, 8, 8};
  block.src_index = {4, 1, 5, 0, 6, 1, 4, 2};
  return block;
}

// One-sided differences of `loss` with respect to every entry of `values`: left and right. Where
// the loss is smooth they agree and their mean is the central difference; where a ReLU switches
// inside the step (a kink) they differ, and the analytic gradient must lie between them.
struct NumericGradient {
  std::vector<double> left;
  std::vector<double> right;
};

NumericGradient numeric_gradient(std::span<float> values, const std::function<double()>& loss,
                                 float step) {
  NumericGradient gradient{std::vector<double>(values.size()), std::vector<double>(values.size())};
  const double at = loss();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float saved = values[i];
    values[i] = saved + step;
    const double plus = loss();
    values[i] = saved - step;
    const double minus = loss();
    values[i] = saved;
    gradient.left[i] = (at - minus) / static_cast<double>(step);
    gradient.right[i] = (plus - at) / static_cast<double>(step);
  }
  return gradient;
}

void expect_gradient(std::span<const float> analytic, const NumericGradient& numeric,
                     double tolerance, const std::string& what) {
  ASSERT_EQ(analytic.size(), numeric.left.size()) << what;
  double largest = 0;
  std::size_t kinks = 0;
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const double central = (numeric.left[i] + numeric.right[i]) / 2;
    largest = std::max(largest, std::abs(central));
    const double slack = tolerance * std::max(1.0, std::abs(central));
    const bool smooth = std::abs(numeric.left[i] - numeric.right[i]) <= slack;
    kinks += smooth ? 0 : 1;
    const double low = smooth ? central : std::min(numeric.left[i], numeric.right[i]);
    const double high = smooth ? central : std::max(numeric.left[i], numeric.right[i]);
    EXPECT_GE(analytic[i], low - slack) << what << " entry " << i;
    EXPECT_LE(analytic[i], high + slack) << what << " entry " << i;
  }
  ASSERT_GT(largest, 1e-3) << what << ": the gradient is trivially zero, the check would be empty";
  EXPECT_LE(kinks, 1 + analytic.size() / 10) << what << ": too many non-smooth entries to check";
}

struct LayerCase {
  const char* kind;
  int in_dim;
  int out_dim;
};

void PrintTo(const LayerCase& layer_case, std::ostream* out) {
  *out << layer_case.kind << " " << layer_case.in_dim << "->" << layer_case.out_dim;
}

class LayerGradient : public ::testing::TestWithParam<LayerCase> {};

// GAT's case: 2 heads of out_dim / 2 columns.
ModelConfig layer_config(const LayerCase& c) {
  ModelConfig config;
  config.kind = c.kind;
  config.num_layers = 2;
  config.heads = config.kind == "gat" ? 2 : 1;
  config.hidden = c.out_dim / config.heads;
  return config;
}

// loss = sum(layer(h) * r) is linear in the weights and in h, so central differences are exact
// up to float rounding. GAT's attention is not linear: a smaller step keeps the one-sided
// differences within a looser tolerance of each other (float rounding grows as the step shrinks).
void expect_layer_gradients(const LayerCase& c) {
  SCOPED_TRACE(std::string(c.kind) + " " + std::to_string(c.in_dim) + " -> " +
               std::to_string(c.out_dim));
  const ModelConfig config = layer_config(c);
  const ModelSpec spec(config, c.in_dim, 3);
  const Block block = sampled_block();
  std::vector<Parameter> parameters = initial_parameters(spec, 0, 11);
  std::vector<Parameter*> pointers;
  std::uint64_t parameter_seed = 100;
  for (Parameter& p : parameters) {
    p.value = uniform_matrix(p.value.rows(), p.value.cols(), -1.0f, 1.0f, parameter_seed++);
    pointers.push_back(&p);
  }
  auto layer = make_layer(spec, 0, pointers);
  Matrix h = uniform_matrix(block.num_src(), c.in_dim, -1.0f, 1.0f, 12);
  const Matrix r = uniform_matrix(block.num_dst, c.out_dim, -1.0f, 1.0f, 13);

  auto loss = [&]() {
    const Matrix out = layer->forward(block, h);
    double total = 0;
    for (std::int64_t i = 0; i < out.size(); ++i)
      total += static_cast<double>(out.data()[i]) * r.data()[i];
    return total;
  };
  loss();
  const Matrix grad_h = layer->backward(r, true);
  ASSERT_EQ(grad_h.rows(), block.num_src());
  ASSERT_EQ(grad_h.cols(), c.in_dim);
  const bool linear = c.kind != std::string("gat");
  const float step = linear ? 1e-2f : 2e-3f;
  const double tolerance = linear ? 2e-3 : 1e-2;
  expect_gradient(grad_h.values(), numeric_gradient(h.values(), loss, step), tolerance, "d/dh");
  for (Parameter& p : parameters) {
    expect_gradient(p.grad.values(), numeric_gradient(p.value.values(), loss, step), tolerance,
                    p.name);
  }
  EXPECT_EQ(layer->backward(r, false).size(), 0) << "no input gradient was asked for";
}

TEST_P(LayerGradient, MatchesFiniteDifferences) { expect_layer_gradients(GetParam()); }

// Not a LayerGradient case: GAT's partial layers do not sum to the full one (GatLayer.SyncedSteps
// below).
TEST(GatLayer, MatchesFiniteDifferences) {
  expect_layer_gradients({"gat", 6, 4});
  expect_layer_gradients({"gat", 3, 8});
}

// P3's split of GAT's first layer (SyncedLayer): on 3 column slices, the partial scores summed,
// then the partial outputs summed (plus the bias), give the full layer's output; backward from
// the same output gradient, the partial score gradients summed, then each slice's weight
// gradient is the matching rows of the full layer's, and the attention vectors' gradients sum to
// the full layer's.
TEST(GatLayer, SyncedStepsOverColumnSlicesGiveTheFullLayer) {
  const LayerCase c{"gat", 7, 6};
  const ModelSpec spec(layer_config(c), c.in_dim, 3);
  const Block block = sampled_block();
  std::vector<Parameter> full = initial_parameters(spec, 0, 5);
  std::uint64_t parameter_seed = 30;
  for (Parameter& p : full)
    p.value = uniform_matrix(p.value.rows(), p.value.cols(), -1.0f, 1.0f, parameter_seed++);
  std::vector<Parameter*> full_pointers;
  for (Parameter& p : full) full_pointers.push_back(&p);
  const Matrix h = uniform_matrix(block.num_src(), c.in_dim, -1.0f, 1.0f, 6);
  const Matrix grad_out = uniform_matrix(block.num_dst, c.out_dim, -1.0f, 1.0f, 7);
  auto full_layer = make_layer(spec, 0, full_pointers);
  const Matrix expected = full_layer->forward(block, h);
  full_layer->backward(grad_out, false);

  constexpr int kParts = 3;
  const FeatureColumnSplit split(c.in_dim, kParts);
  // Per slice: W's rows, and its own a_src and a_dst (gradients accumulate per slice).
  std::vector<std::vector<Parameter>> held(kParts);
  std::vector<std::unique_ptr<GnnLayer>> layers;
  std::vector<Matrix> slices;
  for (int part = 0; part < kParts; ++part) {
    held[part] = {row_slice(full[0], split.begin(part), split.end(part)), full[1], full[2]};
    for (Parameter& p : held[part]) p.grad.fill(0.0f);
    std::vector<Parameter*> pointers;
    for (Parameter& p : held[part]) pointers.push_back(&p);
    layers.push_back(make_layer(spec, 0, pointers));
    Matrix h_slice(block.num_src(), split.width(part));
    for (std::int64_t i = 0; i < h.rows(); ++i) {
      for (int j = 0; j < split.width(part); ++j) h_slice(i, j) = h(i, split.begin(part) + j);
    }
    slices.push_back(std::move(h_slice));
  }
  auto synced = [&](int part) -> SyncedLayer& {
    return dynamic_cast<SyncedLayer&>(*layers[static_cast<std::size_t>(part)]);
  };
  Matrix scores(block.num_src() + block.num_dst, 2);
  for (int part = 0; part < kParts; ++part)
    cpu::add_in_place(scores, synced(part).forward_to_sync(block, slices[part]));
  Matrix out(block.num_dst, c.out_dim);
  for (int part = 0; part < kParts; ++part)
    cpu::add_in_place(out, synced(part).forward_from_sync(scores));
  cpu::add_row_vector(out, full.back().value);
  for (std::int64_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(out.data()[i], expected.data()[i], 1e-5) << "output entry " << i;

  Matrix score_grads(block.num_src() + block.num_dst, 2);
  for (int part = 0; part < kParts; ++part)
    cpu::add_in_place(score_grads, synced(part).backward_to_sync(grad_out));
  for (int part = 0; part < kParts; ++part) {
    EXPECT_EQ(synced(part).backward_from_sync(score_grads, false).size(), 0);
    const Matrix& rows = held[part][0].grad;
    for (std::int64_t i = 0; i < rows.rows(); ++i) {
      for (std::int64_t j = 0; j < rows.cols(); ++j)
        EXPECT_NEAR(rows(i, j), full[0].grad(split.begin(part) + i, j), 1e-5);
    }
  }
  for (std::size_t a = 1; a <= 2; ++a) {
    for (std::int64_t e = 0; e < full[a].grad.size(); ++e) {
      double sum = 0;
      for (int part = 0; part < kParts; ++part) sum += held[part][a].grad.data()[e];
      EXPECT_NEAR(sum, full[a].grad.data()[e], 1e-5) << full[a].name << " entry " << e;
    }
  }
  float largest = 0;
  for (const float g : full[1].grad.values()) largest = std::max(largest, std::abs(g));
  EXPECT_GT(largest, 1e-3) << "a_src's gradient is zero: the check would be empty";
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerGradient,
                         ::testing::Values(LayerCase{"gcn", 6, 3}, LayerCase{"gcn", 3, 5},
                                           LayerCase{"sage", 6, 3}, LayerCase{"sage", 3, 5},
                                           LayerCase{"sgc", 6, 3}),
                         [](const ::testing::TestParamInfo<LayerCase>& param_info) {
                           return std::string(param_info.param.kind) + "_" +
                                  std::to_string(param_info.param.in_dim) + "_to_" +
                                  std::to_string(param_info.param.out_dim);
                         });

// P3's first layer: the feature columns are split across ranks, each computes a partial output
// with its rows of the weights and no bias, and the partial outputs plus the bias sum to the full
// layer's output. Backward from the same output gradient, each partial layer's weight gradient is
// the matching rows of the full layer's.
TEST_P(LayerGradient, PartialLayersOverColumnSlicesSumToTheFullLayer) {
  const LayerCase c = GetParam();
  const ModelConfig config = layer_config(c);
  const ModelSpec spec(config, c.in_dim, 3);
  const Block block = sampled_block();
  std::vector<Parameter> full = initial_parameters(spec, 0, 5);
  std::vector<Parameter*> full_pointers;
  for (Parameter& p : full) full_pointers.push_back(&p);
  const bool bias = spec.layer(0).bias;  // not SGC's first layer
  if (bias) full.back().value = uniform_matrix(1, c.out_dim, -1.0f, 1.0f, 9);  // a non-zero one
  const Matrix h = uniform_matrix(block.num_src(), c.in_dim, -1.0f, 1.0f, 6);
  const Matrix grad_out = uniform_matrix(block.num_dst, c.out_dim, -1.0f, 1.0f, 7);
  auto full_layer = make_layer(spec, 0, full_pointers);
  const Matrix expected = full_layer->forward(block, h);
  full_layer->backward(grad_out, false);

  const FeatureColumnSplit split(c.in_dim, 2);
  Matrix sum(block.num_dst, c.out_dim);
  for (int part = 0; part < 2; ++part) {
    std::vector<Parameter> weights;
    for (int p = 0; p < spec.num_weights(0); ++p) {
      weights.push_back(
          row_slice(full[static_cast<std::size_t>(p)], split.begin(part), split.end(part)));
    }
    std::vector<Parameter*> pointers;
    for (Parameter& p : weights) pointers.push_back(&p);
    Matrix h_slice(block.num_src(), split.width(part));
    for (std::int64_t i = 0; i < h.rows(); ++i) {
      for (int j = 0; j < split.width(part); ++j) h_slice(i, j) = h(i, split.begin(part) + j);
    }
    auto partial = make_layer(spec, 0, pointers);
    cpu::add_in_place(sum, partial->forward(block, h_slice));
    partial->backward(grad_out, false);
    for (std::size_t p = 0; p < weights.size(); ++p) {
      for (std::int64_t i = 0; i < weights[p].grad.rows(); ++i) {
        for (std::int64_t j = 0; j < weights[p].grad.cols(); ++j) {
          EXPECT_NEAR(weights[p].grad(i, j), full[p].grad(split.begin(part) + i, j), 1e-5)
              << full[p].name << " row " << split.begin(part) + i;
        }
      }
    }
  }
  if (bias) cpu::add_row_vector(sum, full.back().value);
  for (std::int64_t i = 0; i < sum.size(); ++i)
    EXPECT_NEAR(sum.data()[i], expected.data()[i], 1e-5);
}

class ModelGradient : public ::testing::TestWithParam<const char*> {};

// Two layers, dropout 0.3, ReLU, softmax cross-entropy: d(loss)/d(every parameter).
TEST_P(ModelGradient, MatchesFiniteDifferences) {
  ModelConfig config;
  config.kind = GetParam();
  config.num_layers = 2;
  config.hidden = 5;
  config.heads = 2;  // GAT: 10 hidden columns
  config.dropout = 0.3;
  const ModelSpec spec(config, 6, 3);
  Model model(spec, 21);
  // GAT's attention vectors of a few tenths leave every score of a destination on one side of
  // the LeakyReLU, where a_dst shifts them all alike and the softmax ignores it: larger ones mix
  // the sides, so that its gradient is not zero.
  std::uint64_t attention_seed = 23;
  for (Parameter* p : model.parameters()) {
    if (p->name.find(".a_") != std::string::npos)
      p->value = uniform_matrix(p->value.rows(), p->value.cols(), -2.0f, 2.0f, attention_seed++);
  }
  // Layer 0 maps 7 sources to 4 destinations; layer 1 maps those 4 to the 2 seeds.
  const Block first = sampled_block();
  Block second;
  second.src_nodes = {40, 41, 42, 43};
  second.num_dst = 2;
  second.offsets = {0, 2, 4};
  second.src_index = {2, 3, 0, 2};
  const Block* blocks[] = {&first, &second};
  const Matrix input = uniform_matrix(first.num_src(), 6, -1.0f, 1.0f, 22);
  const std::int32_t labels[] = {2, 0};

  auto loss = [&]() {
    const Matrix logits = model.forward(blocks, input, true, 99);
    Matrix grad;
    std::int64_t correct = 0;
    return cpu::softmax_cross_entropy(logits, labels, grad, correct);
  };
  const Matrix logits = model.forward(blocks, input, true, 99);
  Matrix grad_logits;
  std::int64_t correct = 0;
  cpu::softmax_cross_entropy(logits, labels, grad_logits, correct);
  model.zero_grad();
  model.backward(grad_logits);
  for (Parameter* p : model.parameters()) {
    const std::vector<float> analytic(p->grad.values().begin(), p->grad.values().end());
    expect_gradient(analytic, numeric_gradient(p->value.values(), loss, 2e-3f), 2e-2, p->name);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelGradient, ::testing::Values("gcn", "sage", "sgc", "gat"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param);
                         });

// SGC with K = 3 is Wu et al.'s logits = A3 A2 A1 X W + b: three GCN propagations (no ReLU) and
// one linear map, whose parameters are W (features x classes) and b alone.
TEST(SgcModel, IsOneLinearMapOfTheThriceAggregatedFeatures) {
  ModelConfig config;
  config.kind = "sgc";
  config.num_layers = 3;
  config.hidden = 64;  // does not apply
  config.dropout = 0;
  const ModelSpec spec(config, 6, 3);
  EXPECT_EQ(spec.num_parameters(), 6 * 3 + 3);
  EXPECT_EQ(spec.parameters(1).size(), 0u);
  Model model(spec, 31);
  const auto parameters = model.parameters();
  ASSERT_EQ(parameters.size(), 2u);
  parameters[1]->value = uniform_matrix(1, 3, -1.0f, 1.0f, 32);  // a non-zero bias

  const Block first = sampled_block();
  Block second;
  second.src_nodes = {40, 41, 42, 43};
  second.num_dst = 3;
  second.offsets = {0, 2, 3, 4};
  second.src_index = {3, 1, 0, 2};
  Block third;
  third.src_nodes = {40, 41, 42};
  third.num_dst = 2;
  third.offsets = {0, 2, 3};
  third.src_index = {2, 1, 0};
  const Block* blocks[] = {&first, &second, &third};
  const Matrix input = uniform_matrix(first.num_src(), 6, -1.0f, 1.0f, 33);
  const Matrix logits = model.forward(blocks, input, false, 0);

  Matrix propagated = input;
  for (const Block* block : blocks) {
    Matrix next;
    cpu::aggregate(gcn_aggregation(*block), propagated, next);
    propagated = std::move(next);
  }
  Matrix expected;
  cpu::gemm(propagated, false, parameters[0]->value, false, expected);
  cpu::add_row_vector(expected, parameters[1]->value);
  ASSERT_EQ(logits.rows(), 2);
  ASSERT_EQ(logits.cols(), 3);
  for (std::int64_t i = 0; i < logits.size(); ++i)
    EXPECT_NEAR(logits.data()[i], expected.data()[i], 1e-5) << "entry " << i;
}

TEST(Model, ForwardIsDeterministicAndDropoutOnlyInTraining) {
  ModelConfig config;
  config.kind = "sage";
  config.hidden = 4;
  config.dropout = 0.5;
  const ModelSpec spec(config, 6, 3);
  Model a(spec, 5);
  Model b(spec, 5);
  const Block block = sampled_block();
  Block top;
  top.src_nodes = {40, 41, 42, 43};
  top.num_dst = 4;
  top.offsets = {0, 0, 0, 0, 0};
  const Block* blocks[] = {&block, &top};
  const Matrix input = uniform_matrix(block.num_src(), 6, -1.0f, 1.0f, 1);
  const Matrix train_a = a.forward(blocks, input, true, 7);
  const Matrix train_b = b.forward(blocks, input, true, 7);
  const Matrix train_other_key = b.forward(blocks, input, true, 8);
  const Matrix eval_a = a.forward(blocks, input, false, 7);
  const Matrix eval_b = a.forward(blocks, input, false, 8);
  bool key_matters = false;
  bool dropout_matters = false;
  for (std::int64_t i = 0; i < train_a.size(); ++i) {
    EXPECT_EQ(train_a.data()[i], train_b.data()[i]);
    EXPECT_EQ(eval_a.data()[i], eval_b.data()[i]);
    key_matters = key_matters || train_a.data()[i] != train_other_key.data()[i];
    dropout_matters = dropout_matters || train_a.data()[i] != eval_a.data()[i];
  }
  EXPECT_TRUE(key_matters);
  EXPECT_TRUE(dropout_matters);
}

}  // namespace
}  // namespace gnnbed
