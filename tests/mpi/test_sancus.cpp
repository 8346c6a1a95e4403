// SANCUS under mpiexec, on every rank count ctest runs it with: broadcasting every epoch, one epoch
// gives the loss, gradients and updated weights of single-process full-graph training; with
// skip-broadcast, every epoch of a cycle gives those of a single-process reference that applies
// the same staleness (the copies kept from the last broadcast epoch); the transport moves exactly
// the planned bytes, nothing but the all-reduce and the announcement in a skipped epoch. On 2
// ranks, GCN trained with SCS-E's bound 1 ends within 0.005 of the accuracy without it (Cora,
// Citeseer and a larger generated graph).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>

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

struct SkippingCase {
  std::string model;
  int num_layers = 2;
  std::string bound = "epochs";
  int staleness = 0;
  double threshold = 0;  // change bound
};

class SancusSkipping : public ::testing::TestWithParam<SkippingCase> {};

// Every epoch of a run gives the step of the stale reference refreshed where the ranks decided to
// broadcast (read from the plan: every rank plans with every rank's decisions).
TEST_P(SancusSkipping, EveryEpochGivesTheStaleReferencesStep) {
  const SkippingCase& test = GetParam();
  MpiTransport transport;
  ExperimentConfig config = sancus_experiment(test.model, test.num_layers, test.staleness);
  config.distribution.sancus_bound = test.bound;
  if (test.threshold > 0) config.distribution.sancus_change_threshold = test.threshold;
  // Plain SGD keeps no state, so the reference's fresh optimizer per step does the same.
  config.training.optimizer = "sgd";
  config.training.momentum = 0;
  config.training.learning_rate = 0.1;
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  testing::StaleFullGraphReference reference(context.model, model_seed(config.training), cora(),
                                             context.partition);
  int skipped = 0;
  constexpr int kEpochs = 6;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const TrafficBytes sent_before = transport.bytes_sent();
    const TrafficBytes received_before = transport.bytes_received();
    const IterationRun run = engine.run_iteration(epoch, 0, Stopwatch());
    expect_planned_bytes(transport, sent_before, received_before, run.plan);
    const auto broadcasts = sancus_broadcasts(run.plan, test.num_layers);
    bool own = false;  // this rank broadcasts some layer's activations
    for (std::size_t l = 1; l < broadcasts.size(); ++l)
      own |= broadcasts[l][static_cast<std::size_t>(transport.rank())] != 0;
    EXPECT_EQ(run.plan.bytes_sent()[Traffic::features] > 0, epoch == 1 && transport.size() > 1);
    EXPECT_EQ(run.plan.bytes_sent()[Traffic::activations] > 0, own && transport.size() > 1);
    for (const auto& layer : broadcasts)
      skipped += static_cast<int>(std::count(layer.begin(), layer.end(), 0));
    const double loss = transport.sum_over_ranks(run.outcome.loss);
    const double reference_loss = reference.step(config.training, epoch, broadcasts);
    EXPECT_NEAR(loss, reference_loss, 1e-5 * reference_loss);
    const std::vector<Parameter> gradients = engine.executor().gather_full_parameters(true);
    const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);
    testing::expect_same_step(gradients, weights, reference.parameters(), config.training);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The bound skipped something beyond the features (whose copies never go stale).
  if (transport.size() > 1) {
    EXPECT_GT(skipped, (kEpochs - 1) * transport.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Bounds, SancusSkipping,
                         ::testing::Values(SkippingCase{"gcn", 2, "epochs", 1},
                                           SkippingCase{"gcn", 3, "epochs", 2},
                                           SkippingCase{"sage", 2, "epochs", 1},
                                           SkippingCase{"gat", 2, "epochs", 1},
                                           SkippingCase{"gcn", 3, "adaptive", 1},
                                           SkippingCase{"gcn", 2, "change", 0, 0.05},
                                           SkippingCase{"sage", 3, "change", 0, 0.8}),
                         [](const ::testing::TestParamInfo<SkippingCase>& case_info) {
                           const SkippingCase& c = case_info.param;
                           return c.model + std::to_string(c.num_layers) + "_" + c.bound +
                                  std::to_string(c.staleness) +
                                  (c.threshold > 0 ? "_threshold" : "");
                         });

// GCN with Kipf & Welling's settings on 2 ranks: skipping ends within 0.005 of broadcasting every
// epoch, mean test accuracy over seeds (SANCUS reports accuracy within 0.005 of non-stale
// training). SCS-E with bound 1 (a broadcast every other epoch) on Cora, Citeseer and a
// contextual SBM graph of 20,000 nodes; SCS-A with bound 1 and SCS-H on Cora. With dropout 0.5 a
// block changes by 50 to 80 % from one epoch to the next, so SCS-H's threshold here is 0.6 (about
// half the blocks broadcast; SANCUS's 0.01 to 0.05 would broadcast all).
const Dataset& larger_graph() {
  static const Dataset dataset = [] {
    WorkloadConfig config = testing::learnable_csbm_config();
    config.num_nodes = 20000;
    return load_workload(config);
  }();
  return dataset;
}

// Mean test accuracy over 5 seeds of 200 epochs with `bound` (sancus_bound, or "none": every
// epoch).
double sancus_accuracy(const Dataset& dataset, MpiTransport& transport, const std::string& bound) {
  constexpr int kSeeds = 5;
  double accuracy = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    ExperimentConfig config = sancus_experiment("gcn", 2, bound == "none" ? 0 : 1);
    if (bound == "adaptive") config.distribution.sancus_bound = "adaptive";
    if (bound == "change") {
      config.distribution.sancus_bound = "change";
      config.distribution.sancus_staleness_epochs = 0;
      config.distribution.sancus_change_threshold = 0.6;
    }
    config.training.seed = static_cast<std::uint64_t>(seed);
    config.training.epochs = 200;
    config.training.eval_every = 0;
    const StrategyContext context = make_strategy_context(config, dataset, transport.size());
    DistributedOptions quiet;
    quiet.quiet = true;
    const DistributedReport report = train_distributed(config, context, dataset, transport, quiet);
    accuracy += report.test_accuracy / kSeeds;
  }
  return accuracy;
}

class SancusAccuracy : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SancusAccuracy, SkippingKeepsTheAccuracy) {
  MpiTransport transport;
  if (transport.size() != 2) GTEST_SKIP() << "runs with 2 ranks";
  const auto& [graph, bound] = GetParam();
  const Dataset& dataset = graph == "csbm" ? larger_graph() : testing::bundled_workload(graph);
  // Every epoch's accuracy, once per graph: the test cases of one process run in turn.
  static std::map<std::string, double> every_epoch;
  if (!every_epoch.contains(graph))
    every_epoch[graph] = sancus_accuracy(dataset, transport, "none");
  const double skipping = sancus_accuracy(dataset, transport, bound);
  if (transport.rank() == 0) {
    std::printf(
        "sancus on 2 ranks, %s GCN: %.2f %% broadcasting every epoch, %.2f %% with the %s "
        "bound\n",
        graph.c_str(), 100 * every_epoch[graph], 100 * skipping, bound.c_str());
  }
  EXPECT_NEAR(skipping, every_epoch[graph], 0.005);
}

INSTANTIATE_TEST_SUITE_P(
    Graphs, SancusAccuracy,
    ::testing::Values(std::tuple{"cora", "epochs"}, std::tuple{"citeseer", "epochs"},
                      std::tuple{"csbm", "epochs"}, std::tuple{"cora", "adaptive"},
                      std::tuple{"cora", "change"}),
    [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& case_info) {
      return std::get<0>(case_info.param) + "_" + std::get<1>(case_info.param);
    });

}  // namespace
}  // namespace gnnbed
