// Fitting the cost model: known coefficients come back exactly from noise-free samples (one work
// term, two, and proportional ones), noise leaves them close and shows in the residuals, a term
// that costs nothing is fitted as free rather than negative, the network fit recovers latency and
// bandwidth, and samples that cannot determine the cost are refused with a message saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/cost_model/cost_fit.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

OpWork layer_work(double dense, double sparse) {
  OpWork work;
  work.dense_flops = dense;
  work.sparse_flops = sparse;
  return work;
}

OpWork bytes_work(double bytes) {
  OpWork work;
  work.memory_bytes = bytes;
  return work;
}

std::vector<CostSample> samples_of(const OpCost& truth, const std::vector<OpWork>& works) {
  std::vector<CostSample> samples;
  for (const OpWork& work : works) {
    samples.push_back({"op", work, truth.seconds(work)});
  }
  return samples;
}

TEST(CostFit, RecoversOneTermExactly) {
  OpCost truth;
  truth.fixed_seconds = 3e-6;
  truth.memory_bytes_per_second = 8e9;
  const auto samples =
      samples_of(truth, {bytes_work(1e3), bytes_work(1e5), bytes_work(1e7), bytes_work(4e8)});
  const CostFit fit = fit_op_cost(samples);
  EXPECT_NEAR(fit.cost.fixed_seconds, 3e-6, 1e-15);
  EXPECT_NEAR(fit.cost.memory_bytes_per_second / 8e9, 1.0, 1e-9);
  EXPECT_EQ(fit.cost.dense_flops_per_second, 0.0) << "terms absent from the samples stay unset";
  EXPECT_EQ(fit.cost.sampled_edges_per_second, 0.0);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 1e-9);
  EXPECT_TRUE(fit.notes.empty());
  ASSERT_EQ(fit.predicted_seconds.size(), samples.size());
  EXPECT_NEAR(fit.predicted_seconds[2], samples[2].seconds, 1e-15);
}

TEST(CostFit, RecoversDenseAndSparseRatesExactly) {
  OpCost truth;
  truth.fixed_seconds = 2e-5;
  truth.dense_flops_per_second = 5e10;
  truth.sparse_flops_per_second = 2e9;
  const auto samples =
      samples_of(truth, {layer_work(1e6, 1e5), layer_work(1e8, 1e5), layer_work(1e6, 1e8),
                         layer_work(3e9, 2e7), layer_work(4e7, 6e6), layer_work(1e4, 1e4)});
  const CostFit fit = fit_op_cost(samples);
  EXPECT_NEAR(fit.cost.fixed_seconds / 2e-5, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.dense_flops_per_second / 5e10, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.sparse_flops_per_second / 2e9, 1.0, 1e-8);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 1e-8);
}

// Aggregations of one edge count at several widths: the per-entry cost (the same at any width)
// and the per-FLOP cost (growing with it) come apart, as on a GPU, where the entries dominate.
TEST(CostFit, SeparatesTheCostPerSparseEntryFromTheSparseFlops) {
  OpCost truth;
  truth.fixed_seconds = 6e-5;
  truth.sparse_flops_per_second = 4e11;
  truth.sparse_entries_per_second = 3e8;
  std::vector<OpWork> works;
  for (const double entries : {1e4, 3e5, 2e6}) {
    for (const double width : {16.0, 64.0, 512.0}) {
      OpWork work;
      work.sparse_entries = entries;
      work.sparse_flops = 2 * entries * width;
      works.push_back(work);
    }
  }
  const CostFit fit = fit_op_cost(samples_of(truth, works));
  EXPECT_NEAR(fit.cost.fixed_seconds / 6e-5, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.sparse_flops_per_second / 4e11, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.sparse_entries_per_second / 3e8, 1.0, 1e-8);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 1e-8);
}

// Cost models from before entries were counted have no rate for them: the entries then cost
// nothing apart, where any other term's work without a rate is an error.
TEST(CostModel, EntriesWithoutARateAreInTheSparseFlopsCost) {
  OpCost cost;
  cost.fixed_seconds = 1e-5;
  cost.sparse_flops_per_second = 1e10;
  OpWork work;
  work.sparse_flops = 2e6;
  work.sparse_entries = 1e5;
  EXPECT_DOUBLE_EQ(cost.seconds(work), 1e-5 + 2e-4);
  cost.sparse_entries_per_second = 1e9;
  EXPECT_DOUBLE_EQ(cost.seconds(work), 1e-5 + 2e-4 + 1e-4);
  work.sampled_edges = 10;
  EXPECT_THROW(cost.seconds(work), Error);
}

TEST(CostFit, ProportionalTermsShareTheirJointCostEvenly) {
  // An optimizer step: 10 FLOPs and 32 bytes per parameter, 1 ns per parameter in all.
  std::vector<CostSample> samples;
  for (const double parameters : {1e3, 1e5, 1e6, 3e7}) {
    OpWork work;
    work.dense_flops = 10 * parameters;
    work.memory_bytes = 32 * parameters;
    samples.push_back({"step", work, 1e-6 + 1e-9 * parameters});
  }
  const CostFit fit = fit_op_cost(samples);
  EXPECT_NEAR(fit.cost.fixed_seconds / 1e-6, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.dense_flops_per_second / 2e10, 1.0, 1e-8) << "half of 1 ns per 10 FLOPs";
  EXPECT_NEAR(fit.cost.memory_bytes_per_second / 6.4e10, 1.0, 1e-8);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 1e-8);
  ASSERT_EQ(fit.notes.size(), 1u);
  EXPECT_NE(fit.notes[0].find("dense_flops, memory_bytes are proportional"), std::string::npos)
      << fit.notes[0];
}

// Calibration's sample op: the same sampled edges with planning work (dgl-pull looks up every
// input node's holder) and without (p3 takes the sampled ids as they are), so that the two rates
// come apart.
TEST(CostFit, SeparatesSamplingFromPlanningByTheStrategiesThatPlanNone) {
  OpCost truth;
  truth.fixed_seconds = 5e-4;
  truth.sampled_edges_per_second = 7e7;
  truth.planned_nodes_per_second = 5e7;
  std::vector<OpWork> works;
  for (const double edges : {2e3, 2e4, 8e4, 3e5}) {
    OpWork p3;
    p3.sampled_edges = edges;
    works.push_back(p3);
    OpWork dgl_pull = p3;
    dgl_pull.planned_nodes = 0.6 * edges;
    works.push_back(dgl_pull);
  }
  const CostFit fit = fit_op_cost(samples_of(truth, works));
  EXPECT_NEAR(fit.cost.fixed_seconds / 5e-4, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.sampled_edges_per_second / 7e7, 1.0, 1e-8);
  EXPECT_NEAR(fit.cost.planned_nodes_per_second / 5e7, 1.0, 1e-8);
  const OpCost read = OpCost::from_json(fit.cost.to_json(), "cost");
  EXPECT_DOUBLE_EQ(read.planned_nodes_per_second, fit.cost.planned_nodes_per_second);
}

TEST(CostFit, NoisySamplesGiveCloseCoefficientsAndResidualsOfTheNoiseSize) {
  OpCost truth;
  truth.fixed_seconds = 1e-5;
  truth.dense_flops_per_second = 4e10;
  truth.sparse_flops_per_second = 1e9;
  Rng random(7);
  std::vector<CostSample> samples;
  for (int i = 0; i < 200; ++i) {
    const double dense = std::pow(10.0, 4 + 5 * random.uniform());
    const double sparse = std::pow(10.0, 4 + 4 * random.uniform());
    const OpWork work = layer_work(dense, sparse);
    const double noise = 1 + 0.1 * (random.uniform() - 0.5);  // +-5 %
    samples.push_back({"layer", work, truth.seconds(work) * noise});
  }
  const CostFit fit = fit_op_cost(samples);
  EXPECT_NEAR(fit.cost.fixed_seconds / 1e-5, 1.0, 0.05);
  EXPECT_NEAR(fit.cost.dense_flops_per_second / 4e10, 1.0, 0.05);
  EXPECT_NEAR(fit.cost.sparse_flops_per_second / 1e9, 1.0, 0.05);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 0.07);
  EXPECT_GT(fit.summary.max_abs_relative_residual, 0.03);
  EXPECT_LT(fit.summary.median_abs_relative_residual, fit.summary.max_abs_relative_residual);
}

TEST(CostFit, ATermThatCostsNothingIsFreeNotNegative) {
  // Time falls slightly with sparse work (noise): unconstrained least squares would give a
  // negative cost per sparse FLOP.
  std::vector<CostSample> samples;
  samples.push_back({"a", layer_work(1e6, 1e3), 1.0e-4});
  samples.push_back({"b", layer_work(1e6, 1e6), 0.99e-4});
  samples.push_back({"c", layer_work(1e8, 1e3), 1.0e-2});
  samples.push_back({"d", layer_work(1e8, 1e6), 0.99e-2});
  const CostFit fit = fit_op_cost(samples);
  EXPECT_GE(fit.cost.fixed_seconds, 0.0);
  EXPECT_EQ(fit.cost.sparse_flops_per_second, kUnresolvedRate);
  EXPECT_GT(fit.cost.dense_flops_per_second, 0.0);
  ASSERT_EQ(fit.notes.size(), 1u);
  EXPECT_NE(fit.notes[0].find("sparse_flops: no measurable cost"), std::string::npos);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 0.02);
  // The fitted model still costs every op of the kind.
  EXPECT_GT(fit.cost.seconds(layer_work(1e7, 1e7)), 0.0);
}

TEST(CostFit, AnOpWithoutWorkFitsTheMeanFixedCostInRelativeTerms) {
  const std::vector<CostSample> samples = {{"x", OpWork{}, 1e-6}, {"y", OpWork{}, 3e-6}};
  const CostFit fit = fit_op_cost(samples);
  // min (c - 1e-6)^2 / 1e-12 + (c - 3e-6)^2 / 9e-12: c = 1.2e-6.
  EXPECT_NEAR(fit.cost.fixed_seconds, 1.2e-6, 1e-15);
  EXPECT_NEAR(fit.relative_residuals[0], 0.2, 1e-9);
  EXPECT_NEAR(fit.relative_residuals[1], -0.6, 1e-9);
  EXPECT_NEAR(fit.summary.median_abs_relative_residual, 0.4, 1e-9);
  EXPECT_NEAR(fit.summary.max_abs_relative_residual, 0.6, 1e-9);
}

TEST(CostFit, RefusesSamplesThatCannotDetermineTheCost) {
  const auto message = [](const std::vector<CostSample>& samples) {
    try {
      fit_op_cost(samples);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({}).find("no samples"), std::string::npos);
  EXPECT_NE(message({{"zero", bytes_work(1e3), 0.0}}).find("'zero' has a measured time"),
            std::string::npos);
  EXPECT_NE(message({{"nan", bytes_work(1e3), std::nan("")}}).find("must be positive"),
            std::string::npos);
  EXPECT_NE(message({{"neg", bytes_work(-1), 1.0}}).find("memory_bytes -1"), std::string::npos);
  // Every sample the same size: fixed cost and rate cannot be told apart.
  EXPECT_NE(message({{"a", bytes_work(1e3), 1.0}, {"b", bytes_work(1e3), 2.0}})
                .find("every sample has the same memory_bytes"),
            std::string::npos);
  // One sample for two coefficients.
  EXPECT_NE(message({{"a", bytes_work(0), 1.0}}).find("no error"), std::string::npos)
      << "an op without work has one coefficient";
  EXPECT_NE(message({{"a", layer_work(1, 2), 1.0}, {"b", layer_work(2, 3), 1.0}})
                .find("2 samples do not determine 3 coefficients"),
            std::string::npos);
  // Three samples whose dense and sparse work add up to the same line: dependent columns.
  EXPECT_NE(message({{"a", layer_work(1, 2), 1.0},
                     {"b", layer_work(2, 3), 1.5},
                     {"c", layer_work(3, 4), 2.0}})
                .find("do not determine"),
            std::string::npos);
}

TEST(NetworkFit, RecoversLatencyAndBandwidth) {
  std::vector<TransferSample> samples;
  for (const double bytes : {0.0, 64.0, 4096.0, 1048576.0, 67108864.0}) {
    samples.push_back({"ping-pong", bytes, 2e-6 + bytes / 1.25e9});
  }
  const NetworkFit fit = fit_network(samples);
  EXPECT_NEAR(fit.network.latency_seconds / 2e-6, 1.0, 1e-9);
  EXPECT_NEAR(fit.network.bandwidth_bytes_per_second / 1.25e9, 1.0, 1e-9);
  EXPECT_LT(fit.summary.max_abs_relative_residual, 1e-9);
  const nlohmann::json json = fit.to_json(samples);
  EXPECT_EQ(json["samples"].size(), 5u);
  EXPECT_EQ(json["samples"][4]["bytes"], 67108864.0);
}

TEST(NetworkFit, RefusesSizesThatDoNotResolveABandwidth) {
  EXPECT_THROW(fit_network(std::vector<TransferSample>{{"a", 0, 1e-6}, {"b", 0, 2e-6}}), Error);
  // Time that falls with size: latency only, no finite bandwidth.
  EXPECT_THROW(fit_network(std::vector<TransferSample>{{"a", 0, 2e-6}, {"b", 1e6, 1e-6}}), Error);
}

TEST(CostFit, JsonCarriesEverySampleWithItsPredictionAndResidual) {
  OpCost truth;
  truth.fixed_seconds = 1e-6;
  truth.sampled_edges_per_second = 1e8;
  OpWork small;
  small.sampled_edges = 1e3;
  OpWork large;
  large.sampled_edges = 1e6;
  const auto samples = samples_of(truth, {small, large});
  const CostFit fit = fit_op_cost(samples);
  const nlohmann::json json = fit.to_json(samples);
  EXPECT_NEAR(json["cost"]["sampled_edges_per_second"].get<double>() / 1e8, 1.0, 1e-9);
  ASSERT_EQ(json["samples"].size(), 2u);
  EXPECT_EQ(json["samples"][1]["work"], (nlohmann::json{{"sampled_edges", 1e6}}));
  EXPECT_DOUBLE_EQ(json["samples"][1]["measured_seconds"].get<double>(), samples[1].seconds);
  EXPECT_TRUE(json["samples"][1].contains("predicted_seconds"));
  EXPECT_TRUE(json["samples"][1].contains("relative_residual"));
  // The fitted cost reads back as the cost model reads it.
  const OpCost read = OpCost::from_json(json["cost"], "cost");
  EXPECT_DOUBLE_EQ(read.sampled_edges_per_second, fit.cost.sampled_edges_per_second);
}

}  // namespace
}  // namespace gnnbed
