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
#include "tests/support/full_graph_reference.hpp"
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

  Model reference(context.model, model_seed(config.training));
  testing::expect_full_graph_step(engine, transport, run.outcome, config, reference, cora(),
                                  kEpoch);
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
