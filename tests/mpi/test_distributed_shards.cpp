// Distributed training without the whole workload on any rank, on every rank count ctest runs it
// with: distributed evaluation (each rank its own nodes, full neighbourhoods, inputs fetched from
// the ranks that hold them) gives the single-process full-graph logits and accuracies of the same
// parameters, for both models, both feature placements and both structure modes; and training
// from a sharded workload gives exactly the losses, accuracies and traffic of training from the
// whole dataset.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/distributed/distributed_evaluation.hpp"
#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_workload.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/nn/model.hpp"
#include "exec/train/trainer.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/shard_format.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

// Features narrower than the hidden layers: the first layer aggregates before it multiplies, so
// the feature rows themselves travel.
const Dataset& narrow() {
  static const Dataset dataset = testing::csbm_workload(900, 3, 8);
  return dataset;
}

// More nodes than the 16,384 a first layer multiplies at a time: P3's partial products come in
// several slices.
const Dataset& large() {
  static const Dataset dataset = testing::csbm_workload(20000, 3, 64);
  return dataset;
}

ExperimentConfig experiment(const std::string& strategy, const std::string& structure,
                            const std::string& model, int num_layers) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, num_layers, 16, 0.5};
  config.training.batch_size = 12;
  config.training.fanouts.assign(static_cast<std::size_t>(num_layers), 5);
  config.training.seed = 4;
  config.training.epochs = 3;
  config.training.eval_every = 1;
  config.distribution.strategy = strategy;
  config.distribution.structure = structure;
  config.distribution.partitioner = structure == "partitioned" ? "metis" : "hash";
  return config;
}

class DistributedEvaluation
    : public ::testing::TestWithParam<
          std::tuple<std::string, std::string, std::string, int, std::string>> {};

TEST_P(DistributedEvaluation, GivesTheSingleProcessFullGraphLogitsAndAccuracy) {
  const auto& [strategy, structure, model_kind, num_layers, dataset_name] = GetParam();
  const Dataset& dataset = dataset_name == "cora"    ? cora()
                           : dataset_name == "large" ? large()
                                                     : narrow();
  MpiTransport transport;
  const int rank = transport.rank();
  const ExperimentConfig config = experiment(strategy, structure, model_kind, num_layers);
  const StrategyContext context = make_strategy_context(config, dataset, transport.size());
  const LocalStore store(dataset, context, rank,
                         context.strategy->feature_placement(context, rank));
  DistributedEvaluator evaluator(context, store, transport);

  // Parameters of a model nobody trained: logits far from ties, all classes predicted.
  Model reference(context.model, 11);
  std::vector<Parameter> values;
  for (const Parameter* p : reference.parameters()) values.push_back(*p);

  const Accuracy accuracy = evaluator.evaluate(values);
  const Accuracy expected = evaluate_parameters(dataset, context.model, values);
  EXPECT_DOUBLE_EQ(accuracy.validation, expected.validation);
  EXPECT_DOUBLE_EQ(accuracy.test, expected.test);

  const Block full = full_graph_block(dataset.graph);
  const std::vector<const Block*> blocks(static_cast<std::size_t>(num_layers), &full);
  Matrix all_features(dataset.num_nodes(), dataset.feature_dim());
  dataset.features->gather(full.src_nodes, all_features.data());
  const Matrix full_logits = reference.forward(blocks, all_features, false, 0);
  std::vector<NodeId> mine = store.shard().split.val;
  mine.insert(mine.end(), store.shard().split.test.begin(), store.shard().split.test.end());
  const Matrix logits = evaluator.logits(values);
  ASSERT_EQ(logits.rows(), static_cast<std::int64_t>(mine.size()));
  ASSERT_EQ(logits.cols(), full_logits.cols());
  double largest = 0;
  for (const float value : full_logits.values())
    largest = std::max(largest, std::abs(double{value}));
  ASSERT_GT(largest, 0);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    for (std::int64_t c = 0; c < logits.cols(); ++c) {
      ASSERT_NEAR(logits(static_cast<std::int64_t>(i), c), full_logits(mine[i], c), 1e-5 * largest)
          << "node " << mine[i] << " class " << c;
    }
  }
  // Cora's first layer narrows 1433 features to 16 or 7 columns: the products travel, never the
  // feature rows. Narrow features (8 columns into 16) travel as they are, and so do the rows GAT's
  // attention needs; SGC narrows them to the 3 classes.
  const std::int64_t feature_bytes =
      transport.sum_over_ranks(evaluator.bytes_sent()[Traffic::features]);
  const bool rows_travel = model_kind == "gat" || (dataset_name == "narrow" && model_kind != "sgc");
  if (!rows_travel) {
    EXPECT_EQ(feature_bytes, 0);
  } else if (transport.size() > 1) {
    EXPECT_GT(feature_bytes, 0);
  }
  if (transport.size() > 1) {
    EXPECT_GT(transport.sum_over_ranks(evaluator.bytes_sent()[Traffic::activations]), 0)
        << "inputs come from the ranks that hold them";
  }
  // Two evaluations ran the plan twice (after one announcement, and for GCN one count of the
  // degrees): the transport moved the rows and products the plan says, exactly.
  const Plan& plan = evaluator.plan();
  for (const Traffic kind : {Traffic::features, Traffic::activations}) {
    EXPECT_EQ(evaluator.bytes_sent()[kind], 2 * plan.bytes_sent()[kind]) << to_string(kind);
    EXPECT_EQ(evaluator.bytes_received()[kind], 2 * plan.bytes_received()[kind]) << to_string(kind);
  }
}

std::string evaluation_name(
    const ::testing::TestParamInfo<DistributedEvaluation::ParamType>& param_info) {
  std::string name = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param) + "_" +
                     std::get<2>(param_info.param) + "_" +
                     std::to_string(std::get<3>(param_info.param)) + "layers_" +
                     std::get<4>(param_info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(TwoLayers, DistributedEvaluation,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("replicated", "partitioned"),
                                            ::testing::Values("sage", "gcn"), ::testing::Values(2),
                                            ::testing::Values("cora", "narrow")),
                         evaluation_name);

INSTANTIATE_TEST_SUITE_P(OtherDepths, DistributedEvaluation,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("partitioned"),
                                            ::testing::Values("sage", "gcn"),
                                            ::testing::Values(1, 3), ::testing::Values("cora")),
                         evaluation_name);

// GAT fetches rows and runs its layers (attention needs the rows); SGC multiplies once, then
// propagates.
INSTANTIATE_TEST_SUITE_P(OtherModels, DistributedEvaluation,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("partitioned"),
                                            ::testing::Values("gat", "sgc"), ::testing::Values(2),
                                            ::testing::Values("cora", "narrow")),
                         evaluation_name);

INSTANTIATE_TEST_SUITE_P(ManyNodes, DistributedEvaluation,
                         ::testing::Combine(::testing::Values("p3"),
                                            ::testing::Values("partitioned"),
                                            ::testing::Values("sage", "gcn"), ::testing::Values(2),
                                            ::testing::Values("large")),
                         evaluation_name);

class TrainingFromShards : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(TrainingFromShards, GivesTheLossesAccuracyAndTrafficOfTheWholeDataset) {
  const auto& [strategy, structure] = GetParam();
  MpiTransport transport;
  const int num_ranks = transport.size();
  const int rank = transport.rank();
  ExperimentConfig config = experiment(strategy, structure, "sage", 2);
  // Every rank writes the (deterministic) shard set into its own directory and reads its shard.
  const testing::TemporaryDirectory dir;
  const ShardManifest manifest =
      write_shards(cora(),
                   {num_ranks, config.distribution.partitioner, config.distribution.partition_seed,
                    structure, strategy == "p3" ? "columns" : "rows"},
                   dir.path());
  RankShard shard = load_shard(manifest, rank);
  const StrategyContext sharded_context = make_shard_context(config, shard);
  DistributedOptions options;
  options.quiet = true;
  const DistributedReport sharded =
      train_distributed(config, sharded_context, std::move(shard), transport, options);

  const StrategyContext context = make_strategy_context(config, cora(), num_ranks);
  const DistributedReport whole = train_distributed(config, context, cora(), transport, options);

  ASSERT_EQ(sharded.epochs.size(), whole.epochs.size());
  for (std::size_t e = 0; e < whole.epochs.size(); ++e) {
    EXPECT_EQ(sharded.epochs[e].loss, whole.epochs[e].loss) << "epoch " << e + 1;
    EXPECT_EQ(sharded.epochs[e].train_accuracy, whole.epochs[e].train_accuracy);
    EXPECT_EQ(sharded.epochs[e].val_accuracy, whole.epochs[e].val_accuracy);
  }
  EXPECT_EQ(sharded.test_accuracy, whole.test_accuracy);
  EXPECT_GE(whole.test_accuracy, 0.0) << "evaluated after the last epoch";
  if (rank == 0) {
    EXPECT_TRUE(sharded.bytes_match);
    ASSERT_EQ(sharded.ranks.size(), whole.ranks.size());
    for (std::size_t r = 0; r < whole.ranks.size(); ++r) {
      EXPECT_EQ(sharded.ranks[r].sent, whole.ranks[r].sent) << "rank " << r;
      EXPECT_EQ(sharded.ranks[r].evaluation_sent, whole.ranks[r].evaluation_sent);
      EXPECT_EQ(sharded.ranks[r].feature_bytes, whole.ranks[r].feature_bytes);
      EXPECT_EQ(sharded.ranks[r].structure_bytes, whole.ranks[r].structure_bytes);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, TrainingFromShards,
                         ::testing::Values(std::make_tuple("dgl-pull", "replicated"),
                                           std::make_tuple("p3", "partitioned")),
                         [](const auto& param_info) {
                           std::string name =
                               std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace gnnbed
