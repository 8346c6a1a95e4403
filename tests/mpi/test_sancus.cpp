// SANCUS under mpiexec, on every rank count ctest runs it with: broadcasting every epoch, one epoch
// gives the loss, gradients and updated weights of single-process full-graph training; with
// skip-broadcast, every epoch of a cycle gives those of a single-process reference that applies
// the same staleness (the copies kept from the last broadcast epoch); the transport moves exactly
// the planned bytes, nothing but the all-reduce and the announcement in a skipped epoch. On 2
// ranks, GCN trained with SCS-E's bound 1 ends within 0.005 of the accuracy without it (Cora,
// Citeseer and a larger generated graph).
#include <gtest/gtest.h>

#include <array>

#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "strategies/sancus.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/full_graph_reference.hpp"
#include "tests/support/reference_step.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig sancus_experiment(const std::string& model, int num_layers, int staleness) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, num_layers, 16, 0.5};
  config.training.batch_size = 0;
  config.training.seed = 4;
  config.distribution.strategy = "sancus";
  config.distribution.partitioner = "hash";
  config.distribution.sancus_staleness_epochs = staleness;
  return config;
}

void expect_planned_bytes(const MpiTransport& transport, const TrafficBytes& sent_before,
                          const TrafficBytes& received_before, const Plan& plan) {
  EXPECT_EQ(transport.bytes_sent() - sent_before, plan.bytes_sent());
  EXPECT_EQ(transport.bytes_received() - received_before, plan.bytes_received());
}

class SancusBroadcastingEveryEpoch : public ::testing::TestWithParam<std::tuple<std::string, int>> {
};

TEST_P(SancusBroadcastingEveryEpoch, GivesTheSingleProcessLossAndGradients) {
  const auto& [model_kind, num_layers] = GetParam();
  MpiTransport transport;
  const ExperimentConfig config = sancus_experiment(model_kind, num_layers, 0);
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  const TrafficBytes sent_before = transport.bytes_sent();
  const TrafficBytes received_before = transport.bytes_received();
  constexpr int kEpoch = 2;
  const IterationRun run = engine.run_iteration(kEpoch, 0, Stopwatch());
  expect_planned_bytes(transport, sent_before, received_before, run.plan);
  EXPECT_EQ(run.plan.bytes_sent()[Traffic::features] > 0, transport.size() > 1);

  Model reference(context.model, model_seed(config.training));
  testing::expect_full_graph_step(engine, transport, run.outcome, config, reference, cora(),
                                  kEpoch);
}

INSTANTIATE_TEST_SUITE_P(Models, SancusBroadcastingEveryEpoch,
                         ::testing::Values(std::tuple{"gcn", 1}, std::tuple{"gcn", 2},
                                           std::tuple{"gcn", 3}, std::tuple{"sage", 2},
                                           std::tuple{"gat", 2}, std::tuple{"sgc", 2}));

class SancusSkipping : public ::testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(SancusSkipping, EveryEpochOfACycleGivesTheStaleReferencesStep) {
  const auto& [model_kind, num_layers, staleness] = GetParam();
  MpiTransport transport;
  ExperimentConfig config = sancus_experiment(model_kind, num_layers, staleness);
  // Plain SGD keeps no state, so the reference's fresh optimizer per step does the same.
  config.training.optimizer = "sgd";
  config.training.momentum = 0;
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  testing::StaleFullGraphReference reference(context.model, model_seed(config.training), cora(),
                                             context.partition);
  const SancusOptions options{staleness};
  for (int epoch = 1; epoch <= staleness + 3; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const TrafficBytes sent_before = transport.bytes_sent();
    const TrafficBytes received_before = transport.bytes_received();
    const IterationRun run = engine.run_iteration(epoch, 0, Stopwatch());
    expect_planned_bytes(transport, sent_before, received_before, run.plan);
    const bool broadcast = options.broadcasts(epoch);
    EXPECT_EQ(run.plan.bytes_sent()[Traffic::features] > 0, broadcast && transport.size() > 1);
    const double loss = transport.sum_over_ranks(run.outcome.loss);
    const double reference_loss = reference.step(config.training, epoch, broadcast);
    EXPECT_NEAR(loss, reference_loss, 1e-5 * reference_loss);
    const std::vector<Parameter> gradients = engine.executor().gather_full_parameters(true);
    const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);
    testing::expect_same_step(gradients, weights, reference.parameters(), config.training);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Bounds, SancusSkipping,
                         ::testing::Values(std::tuple{"gcn", 2, 1}, std::tuple{"gcn", 3, 2},
                                           std::tuple{"sage", 2, 1}, std::tuple{"gat", 2, 1}));

// GCN with Kipf & Welling's settings on 2 ranks: SCS-E with bound 1 (a broadcast every other
// epoch) ends within 0.005 of broadcasting every epoch, mean test accuracy over seeds, on Cora,
// Citeseer and a contextual SBM graph of 20,000 nodes (SANCUS reports accuracy within 0.005 of
// non-stale training).
const Dataset& larger_graph() {
  static const Dataset dataset = [] {
    WorkloadConfig config = testing::learnable_csbm_config();
    config.num_nodes = 20000;
    return load_workload(config);
  }();
  return dataset;
}

class SancusAccuracy : public ::testing::TestWithParam<std::string> {};

TEST_P(SancusAccuracy, SkippingEveryOtherBroadcastKeepsTheAccuracy) {
  MpiTransport transport;
  if (transport.size() != 2) GTEST_SKIP() << "runs with 2 ranks";
  const Dataset& dataset =
      GetParam() == "csbm" ? larger_graph() : testing::bundled_workload(GetParam());
  constexpr int kSeeds = 5;
  std::array<double, 2> accuracy{};
  for (const int staleness : {0, 1}) {
    for (int seed = 1; seed <= kSeeds; ++seed) {
      ExperimentConfig config = sancus_experiment("gcn", 2, staleness);
      config.training.seed = static_cast<std::uint64_t>(seed);
      config.training.epochs = 200;
      config.training.eval_every = 0;
      const StrategyContext context = make_strategy_context(config, dataset, transport.size());
      DistributedOptions quiet;
      quiet.quiet = true;
      const DistributedReport report = train_distributed(config, context, dataset, transport, quiet);
      accuracy[static_cast<std::size_t>(staleness)] += report.test_accuracy / kSeeds;
    }
  }
  if (transport.rank() == 0) {
    std::printf("sancus on 2 ranks, %s GCN: %.2f %% broadcasting every epoch, %.2f %% every other\n",
                GetParam().c_str(), 100 * accuracy[0], 100 * accuracy[1]);
  }
  EXPECT_NEAR(accuracy[1], accuracy[0], 0.005);
}

INSTANTIATE_TEST_SUITE_P(Graphs, SancusAccuracy, ::testing::Values("cora", "citeseer", "csbm"));

}  // namespace
}  // namespace gnnbed
