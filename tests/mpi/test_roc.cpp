// ROC-like full-graph training under mpiexec, on every rank count ctest runs it with: one epoch of
// roc gives the loss, the gradients and the updated weights of single-process full-graph training
// and the transport moves exactly the planned bytes (GCN and GraphSAGE, 1 to 3 layers;
// contiguous, cost-balanced and hash partitions; replicated and partitioned structure); on 2
// ranks, Kipf & Welling's GCN on Cora reaches the published accuracy.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/nn/model.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/reference_step.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig roc_experiment(const std::string& model, int num_layers,
                                const std::string& partitioner, const std::string& structure) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, num_layers, 16, 0.5};
  config.training.batch_size = 0;
  config.training.seed = 4;
  config.distribution.strategy = "roc";
  config.distribution.partitioner = partitioner;
  config.distribution.structure = structure;
  return config;
}

// One full-graph step of the single-process model: forward on the whole graph with the epoch's
// dropout masks, the mean loss of the training nodes, backward. Returns the loss.
double reference_step(Model& model, const TrainingConfig& training, int epoch) {
  const Block block = full_graph_block(cora().graph);
  const std::vector<const Block*> blocks(static_cast<std::size_t>(model.spec().num_layers()),
                                         &block);
  Matrix features(cora().num_nodes(), cora().feature_dim());
  cora().features->gather(block.src_nodes, features.data());
  const NodePartition one = NodePartition::hashed(cora().num_nodes(), 1, 1);
  const BatchSchedule schedule(cora().split.train, one, 0, training.seed);
  const Matrix logits = model.forward(blocks, features, true, schedule.dropout_key(epoch, 0));
  const std::vector<NodeId>& train = cora().split.train;
  Matrix train_logits(static_cast<std::int64_t>(train.size()), logits.cols());
  std::vector<std::int32_t> labels;
  for (std::size_t i = 0; i < train.size(); ++i) {
    std::copy_n(logits.row(train[i]), logits.cols(),
                train_logits.row(static_cast<std::int64_t>(i)));
    labels.push_back(cora().labels[static_cast<std::size_t>(train[i])]);
  }
  Matrix grad_train;
  std::int64_t correct = 0;
  const double loss = cpu::softmax_cross_entropy(train_logits, labels, grad_train, correct);
  Matrix grad(logits.rows(), logits.cols());
  for (std::size_t i = 0; i < train.size(); ++i) {
    std::copy_n(grad_train.row(static_cast<std::int64_t>(i)), grad.cols(), grad.row(train[i]));
  }
  model.zero_grad();
  model.backward(grad);
  return loss;
}

class RocOneEpoch
    : public ::testing::TestWithParam<std::tuple<std::string, int, std::string, std::string>> {};

TEST_P(RocOneEpoch, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  const auto& [model_kind, num_layers, partitioner, structure] = GetParam();
  MpiTransport transport;
  const ExperimentConfig config = roc_experiment(model_kind, num_layers, partitioner, structure);
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  const TrafficBytes sent_before = transport.bytes_sent();
  const TrafficBytes received_before = transport.bytes_received();
  const Stopwatch clock;
  constexpr int kEpoch = 2;
  const IterationRun run = engine.run_iteration(kEpoch, 0, clock);
  EXPECT_EQ(transport.bytes_sent() - sent_before, run.plan.bytes_sent());
  EXPECT_EQ(transport.bytes_received() - received_before, run.plan.bytes_received());
  if (transport.size() > 1) {
    EXPECT_GT(run.plan.bytes_sent()[Traffic::features], 0) << "halo features move";
    EXPECT_EQ(run.plan.bytes_sent()[Traffic::activations] > 0, num_layers > 1)
        << "halo activations move before every layer but the first";
  }

  const double loss = transport.sum_over_ranks(run.outcome.loss);
  const std::vector<Parameter> gradients = engine.executor().gather_full_parameters(true);
  const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);
  Model reference(context.model, model_seed(config.training));
  const double reference_loss = reference_step(reference, config.training, kEpoch);
  EXPECT_NEAR(loss, reference_loss, 1e-5 * reference_loss);
  testing::expect_same_step(gradients, weights, reference.parameters(), config.training);
}

std::string roc_name(const ::testing::TestParamInfo<RocOneEpoch::ParamType>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) +
                     "layers_" + std::get<2>(info.param) + "_" + std::get<3>(info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Gcn, RocOneEpoch,
                         ::testing::Combine(::testing::Values("gcn"), ::testing::Values(1, 2, 3),
                                            ::testing::Values("contiguous", "cost-balanced"),
                                            ::testing::Values("replicated", "partitioned")),
                         roc_name);

INSTANTIATE_TEST_SUITE_P(OtherModels, RocOneEpoch,
                         ::testing::Combine(::testing::Values("sage", "sgc", "gat"),
                                            ::testing::Values(2), ::testing::Values("hash"),
                                            ::testing::Values("partitioned")),
                         roc_name);

// Kipf & Welling's settings (2 layers, hidden 16, dropout 0.5, weight decay 5e-4, Adam 0.01, 200
// epochs) with roc on contiguous ranges: the published 81.5 % within 1.5 points, mean over seeds.
TEST(RocAccuracy, TwoRanksReachThePublishedGcnAccuracyOnCora) {
  MpiTransport transport;
  if (transport.size() != 2) GTEST_SKIP() << "runs with 2 ranks";
  constexpr int kSeeds = 5;
  double accuracy = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    ExperimentConfig config = roc_experiment("gcn", 2, "contiguous", "partitioned");
    config.training.seed = static_cast<std::uint64_t>(seed);
    config.training.epochs = 200;
    config.training.eval_every = 0;
    const StrategyContext context = make_strategy_context(config, cora(), transport.size());
    DistributedOptions options;
    options.quiet = true;
    const DistributedReport report = train_distributed(config, context, cora(), transport, options);
    if (transport.rank() == 0) {
      std::printf("  seed %d: test accuracy %.2f %%\n", seed, 100 * report.test_accuracy);
      accuracy += report.test_accuracy / kSeeds;
    }
  }
  if (transport.rank() == 0) {
    std::printf(
        "roc on 2 ranks, Cora GCN: %.2f %% mean test accuracy over %d seeds "
        "(published 81.5 %%)\n",
        100 * accuracy, kSeeds);
    EXPECT_NEAR(100 * accuracy, 81.5, 1.5);
  }
}

}  // namespace
}  // namespace gnnbed
