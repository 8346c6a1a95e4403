// ROC-like full-graph training, checked on its plans and pure functions: every layer moves exactly
// the halo's rows (features at the first layer, activations after, their gradients back), a
// rank's share of the graph carries the whole graph's GCN degrees, the cost-balanced partitioner
// balances a skewed cost better than contiguous ranges, and the partition cost model is fitted
// from, and recorded in, result files.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "strategies/full_graph.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/partition_costs.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/roc_partition.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/expect_input_error.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

// 0 - 1 - ... - 7 - 0, undirected.
Graph cycle(int n) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (int v = 0; v < n; ++v) {
    src.push_back(v);
    dst.push_back((v + 1) % n);
  }
  return build_graph(n, src, dst, EdgeListOptions{}, "cycle");
}

StrategyContext roc_context(NodePartition partition, int features, int hidden, int classes,
                            int layers = 2, const std::string& kind = "gcn") {
  ExperimentConfig config;
  config.model = ModelConfig{kind, layers, hidden, 0.5};
  config.training.batch_size = 0;
  config.distribution.strategy = "roc";
  return make_strategy_context(config, std::move(partition), features, classes);
}

std::vector<Plan> roc_plans(const StrategyContext& context, const Graph& graph,
                            std::span<const NodeId> train) {
  const BatchSchedule schedule(train, context.partition, 0, 5);
  return plan_iteration(*make_strategy("roc"), context, graph, schedule, 9, 1, 0);
}

TEST(RocPlans, MoveTheHaloRowsOfEveryLayerOnACycle) {
  // Two ranks own 0..3 and 4..7: each needs two halo nodes (rank 0: 7 and 4; rank 1: 3 and 0).
  const Graph graph = cycle(8);
  constexpr int kFeatures = 6;
  constexpr int kHidden = 4;
  constexpr int kClasses = 3;
  const StrategyContext context = roc_context(
      make_partitioner("contiguous")->partition(graph, 2, 1), kFeatures, kHidden, kClasses);
  const std::vector<NodeId> train = {0, 1, 5, 6};
  const std::vector<Plan> plans = roc_plans(context, graph, train);
  ASSERT_EQ(plans.size(), 2U);
  const std::int64_t parameters = kFeatures * kHidden + kHidden + kHidden * kClasses + kClasses;
  for (const Plan& plan : plans) {
    SCOPED_TRACE("rank " + std::to_string(plan.rank));
    const auto peer = static_cast<std::size_t>(1 - plan.rank);
    const auto expect_both_ways = [&](const std::string& label, std::int64_t bytes) {
      const Op& op = plan.op_labelled(label);
      EXPECT_EQ(op.bytes_to[peer], bytes) << label;
      EXPECT_EQ(op.bytes_from[peer], bytes) << label;
    };
    expect_both_ways("announce", 2 * 4);
    expect_both_ways("pull halo features", 2 * kFeatures * 4);
    expect_both_ways("layer1 halo activations", 2 * kHidden * 4);
    expect_both_ways("layer1 halo gradients", 2 * kHidden * 4);
    const TrafficBytes sent = plan.bytes_sent();
    EXPECT_EQ(sent[Traffic::structure], 8);
    EXPECT_EQ(sent[Traffic::features], 2 * kFeatures * 4);
    EXPECT_EQ(sent[Traffic::activations], 2 * kHidden * 4);
    EXPECT_EQ(sent[Traffic::gradients],
              2 * kHidden * 4 + 4 * ring_all_reduce_elements_sent(plan.rank, 2, parameters));
    const Block& block =
        *plan.tensors[static_cast<std::size_t>(plan.op_labelled("layer0.forward").inputs[0])].block;
    EXPECT_EQ(block.num_dst, 4);
    EXPECT_EQ(block.num_src(), 6) << "4 own nodes and a halo of 2";
    EXPECT_EQ(block.source_degrees, std::vector<std::int32_t>(6, 3)) << "2 neighbours + self";
    EXPECT_EQ(plan.op_labelled("loss").scale, 0.25) << "1 / training nodes over all ranks";
  }
  EXPECT_EQ(plans[0]
                .tensors[static_cast<std::size_t>(plans[0].op_labelled("layer0.forward").inputs[0])]
                .block->src_nodes,
            (std::vector<NodeId>{0, 1, 2, 3, 7, 4}));
}

TEST(RocPlans, EveryLayerMovesItsWidthTimesTheHaloPerOwnerOnCora) {
  constexpr int kRanks = 3;
  constexpr int kHidden = 16;
  const Graph& graph = cora().graph;
  const NodePartition partition = NodePartition::hashed(graph.num_nodes(), kRanks, 3);
  const StrategyContext context = roc_context(partition, 1433, kHidden, 7, 3, "sage");
  const std::vector<Plan> plans = roc_plans(context, graph, cora().split.train);
  for (int r = 0; r < kRanks; ++r) {
    // The halo of r owned by q, counted from the graph.
    std::vector<std::set<NodeId>> halo(kRanks);
    for (NodeId v = 0; v < graph.num_nodes(); ++v) {
      if (partition.owner(v) != r) continue;
      for (const NodeId u : graph.in_neighbors(v)) {
        if (partition.owner(u) != r) halo[static_cast<std::size_t>(partition.owner(u))].insert(u);
      }
    }
    const Plan& plan = plans[static_cast<std::size_t>(r)];
    for (int q = 0; q < kRanks; ++q) {
      if (q == r) continue;
      SCOPED_TRACE("rank " + std::to_string(r) + " from " + std::to_string(q));
      const auto slot = static_cast<std::size_t>(q);
      const auto rows = static_cast<std::int64_t>(halo[slot].size());
      EXPECT_EQ(plan.op_labelled("pull halo features").bytes_from[slot], rows * 1433 * 4);
      for (const char* layer : {"layer1", "layer2"}) {
        EXPECT_EQ(plan.op_labelled(std::string(layer) + " halo activations").bytes_from[slot],
                  rows * kHidden * 4);
        EXPECT_EQ(plan.op_labelled(std::string(layer) + " halo gradients").bytes_to[slot],
                  rows * kHidden * 4);
      }
      // What r receives from q is what q sends to r.
      const Plan& other = plans[slot];
      for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const Op& op = plan.ops[i];
        if (op.kind != OpKind::all_to_all) continue;
        EXPECT_EQ(op.bytes_from[slot],
                  other.op_labelled(op.label).bytes_to[static_cast<std::size_t>(r)])
            << op.label;
      }
    }
    EXPECT_NO_THROW(plan.validate());
  }
}

TEST(RocPlans, OneRankMovesNothingAndPlansRoundTripWithTheirDegrees) {
  const Graph& graph = cora().graph;
  const StrategyContext context =
      roc_context(NodePartition::hashed(graph.num_nodes(), 1, 1), 1433, 16, 7);
  const std::vector<Plan> plans = roc_plans(context, graph, cora().split.train);
  ASSERT_EQ(plans.size(), 1U);
  EXPECT_EQ(plans[0].bytes_sent().total(), 0);
  EXPECT_EQ(plans[0].prologue_ops, 2) << "sample (the share, cut once) and announce";
  EXPECT_EQ(plans[0].ops.front().sampled_edges, 0);
  // Without a halo the own features are the whole input: gathered into it, not assembled.
  const Op& gather = plans[0].op_labelled("gather own features");
  const TensorSpec& input = plans[0].tensors[static_cast<std::size_t>(gather.outputs[0])];
  EXPECT_EQ(input.name, "layer0 input");
  EXPECT_EQ(input.rows, graph.num_nodes());
  for (const Op& op : plans[0].ops) EXPECT_NE(op.kind, OpKind::scatter_rows) << op.label;
  const nlohmann::json document = plans[0].to_json();
  EXPECT_EQ(Plan::from_json(document, "test").to_json(), document);
  EXPECT_NE(document.dump().find("source_degrees"), std::string::npos);
}

TEST(FullGraph, SharesCoverTheGraphAndCarryItsGcnDegrees) {
  const Graph& graph = cora().graph;
  const NodePartition partition = NodePartition::hashed(graph.num_nodes(), 3, 7);
  const auto blocks = local_graph_blocks(graph, partition, gcn_degrees(graph));
  ASSERT_EQ(blocks.size(), 3U);
  std::int64_t destinations = 0;
  std::int64_t edges = 0;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    const Block& block = *blocks[r];
    destinations += block.num_dst;
    edges += block.num_edges();
    for (std::int64_t d = 0; d < block.num_dst; ++d) {
      const NodeId v = block.src_nodes[static_cast<std::size_t>(d)];
      EXPECT_EQ(partition.owner(v), static_cast<int>(r));
      ASSERT_EQ(block.offsets[static_cast<std::size_t>(d) + 1] -
                    block.offsets[static_cast<std::size_t>(d)],
                graph.in_degree(v));
    }
    ASSERT_EQ(block.source_degrees.size(), block.src_nodes.size());
    for (std::size_t s = 0; s < block.src_nodes.size(); ++s) {
      // Cora is undirected: out-edges = in-edges.
      EXPECT_EQ(block.source_degrees[s], graph.in_degree(block.src_nodes[s]) + 1);
    }
  }
  EXPECT_EQ(destinations, graph.num_nodes());
  EXPECT_EQ(edges, graph.num_edges());
}

TEST(FullGraph, RocTrainsFullGraphAndMiniBatchStrategiesTakeABatchSize) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.distribution.strategy = "roc";
  config.training.batch_size = 1000;
  try {
    make_strategy_context(config, cora(), 2);
    ADD_FAILURE() << "roc accepted a batch size";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "training.batch_size");
    EXPECT_NE(std::string(error.what()).find("--batch-size 0"), std::string::npos);
  }
  config.training.batch_size = 0;
  EXPECT_EQ(make_strategy_context(config, cora(), 2).num_ranks, 2);
  config.distribution.strategy = "dgl-pull";
  try {
    make_strategy_context(config, cora(), 2);
    ADD_FAILURE() << "dgl-pull accepted full-graph training";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("set a batch size"), std::string::npos);
  }
}

TEST(FullGraph, ABatchSizeOfZeroIsOneStepOnEveryTrainingNode) {
  const NodePartition partition = NodePartition::hashed(cora().num_nodes(), 2, 1);
  const BatchSchedule schedule(cora().split.train, partition, 0, 3);
  EXPECT_EQ(schedule.iterations_per_epoch(), 1);
  EXPECT_EQ(schedule.seeds_in_iteration(4, 0),
            static_cast<std::int64_t>(cora().split.train.size()));
  for (int r = 0; r < 2; ++r) {
    std::vector<NodeId> seeds = schedule.seeds(r, 4, 0);
    std::sort(seeds.begin(), seeds.end());
    std::vector<NodeId> owned;
    for (const NodeId v : cora().split.train) {
      if (partition.owner(v) == r) owned.push_back(v);
    }
    std::sort(owned.begin(), owned.end());
    EXPECT_EQ(seeds, owned);
  }
}

// n nodes; the first tenth have 40 in-neighbours each, the rest 2: contiguous ranges put most of
// the edges in the first part.
Graph skewed_graph(int n) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (int v = 0; v < n; ++v) {
    const int degree = v < n / 10 ? 40 : 2;
    for (int k = 1; k <= degree; ++k) {
      src.push_back(static_cast<NodeId>((v + 7 * k) % n));
      dst.push_back(v);
    }
  }
  EdgeListOptions options;
  options.symmetrize = false;
  return build_graph(n, src, dst, options, "skewed");
}

double largest_cost(const Graph& graph, const NodePartition& partition,
                    const PartitionCostModel& model) {
  double largest = 0;
  for (const PartitionShape& shape : partition_shapes(graph, partition)) {
    largest = std::max(largest, model.seconds(shape));
  }
  return largest;
}

void expect_consecutive_ranges(const NodePartition& partition, int num_parts) {
  int previous = 0;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(num_parts), 0);
  for (NodeId v = 0; v < partition.num_nodes(); ++v) {
    const int owner = partition.owner(v);
    ASSERT_TRUE(owner == previous || owner == previous + 1) << "node " << v;
    previous = owner;
    ++sizes[static_cast<std::size_t>(owner)];
  }
  for (const std::int64_t size : sizes) EXPECT_GT(size, 0);
}

TEST(CostBalancedPartition, BalancesASkewedCostBetterThanContiguousRanges) {
  const Graph graph = skewed_graph(2000);
  constexpr int kParts = 4;
  for (const PartitionCostModel& model :
       {PartitionCostModel{1e-6, 1e-7, 0, 1}, PartitionCostModel{1e-6, 1e-7, 5e-7, 1}}) {
    SCOPED_TRACE(model.to_json().dump());
    const NodePartition contiguous = make_partitioner("contiguous")->partition(graph, kParts, 1);
    const NodePartition balanced = cost_balanced_partition(graph, kParts, model);
    expect_consecutive_ranges(balanced, kParts);
    double mean = 0;
    for (const PartitionShape& shape : partition_shapes(graph, balanced)) {
      mean += model.seconds(shape) / kParts;
    }
    const double contiguous_largest = largest_cost(graph, contiguous, model);
    const double balanced_largest = largest_cost(graph, balanced, model);
    EXPECT_LT(balanced_largest, 0.65 * contiguous_largest);
    EXPECT_LT(balanced_largest, 1.1 * mean) << "within 10 % of a perfect balance";
  }
}

TEST(CostBalancedPartition, WithAVertexCostOnlyItSplitsTheNodesEvenly) {
  const Graph graph = skewed_graph(1001);
  const NodePartition balanced = cost_balanced_partition(graph, 4, {1, 0, 0, 0});
  const std::vector<PartitionShape> shapes = partition_shapes(graph, balanced);
  for (const PartitionShape& shape : shapes) EXPECT_LE(shape.vertices, 251);
  EXPECT_THROW(cost_balanced_partition(graph, 4, {0, 0, 0, 0}), ConfigError);
  EXPECT_THROW(cost_balanced_partition(graph, 2000, {1, 0, 0, 0}), ConfigError);
}

TEST(PartitionCosts, ShapesCountOwnedNodesTheirInEdgesAndTheDistinctHalo) {
  const Graph graph = cycle(8);
  const NodePartition partition = make_partitioner("contiguous")->partition(graph, 2, 1);
  const std::vector<PartitionShape> shapes = partition_shapes(graph, partition);
  ASSERT_EQ(shapes.size(), 2U);
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(shapes[static_cast<std::size_t>(p)], (PartitionShape{4, 8, 2}));
    EXPECT_EQ(partition_shape(graph, partition.nodes_of(p), partition, p),
              shapes[static_cast<std::size_t>(p)]);
  }
}

std::vector<PartitionCostSample> exact_samples(const PartitionCostModel& truth) {
  std::vector<PartitionCostSample> samples;
  for (const PartitionShape& shape :
       {PartitionShape{1000, 20000, 300}, PartitionShape{1000, 5000, 900},
        PartitionShape{4000, 9000, 100}, PartitionShape{2500, 30000, 0}}) {
    samples.push_back({"exact", shape, truth.seconds(shape)});
  }
  return samples;
}

TEST(PartitionCosts, TheFitRecoversTheCoefficientsOfExactSamples) {
  const PartitionCostModel truth{2e-6, 5e-8, 3e-7, 0};
  const PartitionCostModel fitted = fit_partition_costs(exact_samples(truth));
  // Parts of distinct shapes: the weak pull toward the default's proportions costs little.
  for (const PartitionCostSample& sample : exact_samples(truth)) {
    EXPECT_NEAR(fitted.seconds(sample.shape), sample.seconds, 0.05 * sample.seconds);
  }
  EXPECT_NEAR(fitted.seconds_per_vertex, truth.seconds_per_vertex, 0.1 * 2e-6);
  EXPECT_NEAR(fitted.seconds_per_edge, truth.seconds_per_edge, 0.2 * 5e-8);
  EXPECT_NEAR(fitted.seconds_per_remote_neighbour, truth.seconds_per_remote_neighbour, 0.2 * 3e-7);
  EXPECT_EQ(fitted.samples, 4);
  EXPECT_THROW(fit_partition_costs({}), Error);
  const std::vector<PartitionCostSample> negative = {{"bad", {1, 1, 1}, -1}};
  EXPECT_THROW(fit_partition_costs(negative), Error);
}

TEST(PartitionCosts, PartsOfNearlyOneShapeKeepTheDefaultProportions) {
  // Two ranks' parts of Cora on contiguous ranges, as measured: a least-squares corner would put
  // the whole time on the halo and make a one-node part look free.
  const std::vector<PartitionCostSample> alike = {{"rank 0", {1354, 5249, 1102}, 0.02587},
                                                  {"rank 1", {1354, 5307, 1116}, 0.02724}};
  const PartitionCostModel fitted = fit_partition_costs(alike);
  EXPECT_GT(fitted.seconds_per_vertex, 0);
  EXPECT_NEAR(fitted.seconds_per_edge / fitted.seconds_per_vertex, 1.0, 0.1);
  EXPECT_NEAR(fitted.seconds(alike[0].shape), alike[0].seconds, 0.05 * alike[0].seconds);
  const Graph& graph = cora().graph;
  const std::vector<PartitionShape> shapes =
      partition_shapes(graph, cost_balanced_partition(graph, 2, fitted));
  EXPECT_NEAR(static_cast<double>(shapes[0].vertices + shapes[0].edges) /
                  static_cast<double>(shapes[1].vertices + shapes[1].edges),
              1.0, 0.05);
}

TEST(PartitionCosts, ResultsRecordEverySampleForTheNextRunToFit) {
  const testing::TemporaryDirectory dir;
  const PartitionCostModel truth{2e-6, 5e-8, 3e-7, 4};
  const std::vector<PartitionCostSample> samples = exact_samples(truth);
  const std::span<const PartitionCostSample> all(samples);
  // A run_experiment result and a simulate output with two points, each holding part of them.
  const nlohmann::json run = {
      {"partition_costs", partition_costs_json(std::nullopt, all.first(1), all.subspan(1, 1))}};
  const nlohmann::json simulated = {
      {"points",
       {{{"result", {{"partition_costs", partition_costs_json(truth, {}, all.subspan(2, 1))}}}},
        {{"result", {{"partition_costs", partition_costs_json(truth, {}, all.subspan(3, 1))}}}}}}};
  const auto run_file = dir.write("run.json", run.dump());
  const auto simulated_file = dir.write("simulated.json", simulated.dump());
  const std::vector<PartitionCostSample> from_run = read_partition_cost_samples(run_file);
  ASSERT_EQ(from_run.size(), 2U);
  EXPECT_EQ(from_run[1].shape, samples[1].shape);
  EXPECT_DOUBLE_EQ(from_run[1].seconds, samples[1].seconds);
  EXPECT_EQ(read_partition_cost_samples(simulated_file).size(), 2U);
  EXPECT_TRUE(simulated["points"][0]["result"]["partition_costs"].contains("predicted_seconds"));

  // cost-balanced fits the file's samples; other partitioners use no model.
  DistributionConfig distribution;
  distribution.partitioner = "cost-balanced";
  EXPECT_EQ(partition_cost_model(distribution)->samples, 0) << "the default model";
  distribution.partition_costs = run_file.string();
  EXPECT_EQ(partition_cost_model(distribution)->samples, 2);
  const nlohmann::json recorded = recorded_partition_costs(distribution, all.subspan(2));
  EXPECT_EQ(recorded["samples"].size(), 4U) << "the file's two, then this run's two";
  distribution.partitioner = "contiguous";
  EXPECT_FALSE(partition_cost_model(distribution).has_value());
  const nlohmann::json chained = recorded_partition_costs(distribution, all);
  EXPECT_EQ(chained["samples"].size(), 6U) << "any partitioner's run chains the samples";
  EXPECT_FALSE(chained.contains("model"));

  const auto empty = dir.write("empty.json", R"({"epoch_seconds": 1})");
  testing::expect_input_error([&] { read_partition_cost_samples(empty); }, "empty.json", 0,
                              "partition_costs", "no partition cost samples");
}

}  // namespace
}  // namespace gnnbed
