// NeutronStar under mpiexec, on every rank count ctest runs it with: whether a rank fetches its
// remote dependencies (DepComm), computes them again (DepCache) or mixes the two (hybrid), every
// epoch gives the loss, gradients and updated weights of single-process full-graph training, the
// first (which copies the dependencies' features) and those after (which reuse the copies), and
// the transport moves exactly the planned bytes.
#include <gtest/gtest.h>

#include "exec/distributed/rank_engine.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/full_graph_reference.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

// (dependencies, model, layers, overlap: the destinations that read no fetched dependency are
// computed while the fetch moves, as their own layer ops)
class NeutronStarEpochs
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, int, bool>> {};

TEST_P(NeutronStarEpochs, GiveTheSingleProcessStepsAndThePlannedBytes) {
  const auto& [dependencies, model_kind, num_layers, overlap] = GetParam();
  MpiTransport transport;
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model_kind, num_layers, 16, 0.5};
  config.training.batch_size = 0;
  config.training.seed = 4;
  // Plain SGD keeps no state, so the reference's fresh optimizer per step does the same.
  config.training.optimizer = "sgd";
  config.distribution.strategy = "neutronstar";
  config.distribution.neutronstar_dependencies = dependencies;
  config.distribution.neutronstar_overlap = overlap;
  // Fetching 16 hidden values costs about as much as aggregating Cora's 1433 features over two
  // edges: the hybrid recomputes the dependencies of the lowest degrees and fetches the rest.
  config.distribution.neutronstar_transfer_seconds = 2e-9;
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  Model reference(context.model, model_seed(config.training));
  for (int epoch = 1; epoch <= 2; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const TrafficBytes sent_before = transport.bytes_sent();
    const TrafficBytes received_before = transport.bytes_received();
    const IterationRun run = engine.run_iteration(epoch, 0, Stopwatch());
    EXPECT_EQ(transport.bytes_sent() - sent_before, run.plan.bytes_sent());
    EXPECT_EQ(transport.bytes_received() - received_before, run.plan.bytes_received());
    EXPECT_EQ(run.plan.bytes_sent()[Traffic::features] > 0, epoch == 1 && transport.size() > 1)
        << "the dependencies' features are copied once";
    if (dependencies == "cache") {
      EXPECT_EQ(run.plan.bytes_sent()[Traffic::activations], 0);
    }
    testing::expect_full_graph_step(engine, transport, run.outcome, config, reference, cora(),
                                    epoch);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, NeutronStarEpochs,
    ::testing::Values(
        std::tuple{"communicate", "gcn", 2, true}, std::tuple{"communicate", "gcn", 2, false},
        std::tuple{"cache", "gcn", 2, true}, std::tuple{"hybrid", "gcn", 2, true},
        std::tuple{"hybrid", "gcn", 3, true}, std::tuple{"hybrid", "gcn", 3, false},
        std::tuple{"cache", "gcn", 3, true}, std::tuple{"hybrid", "sage", 2, true},
        std::tuple{"communicate", "sage", 3, true}, std::tuple{"hybrid", "gat", 2, true},
        std::tuple{"communicate", "gat", 2, false}, std::tuple{"communicate", "sgc", 3, true},
        std::tuple{"cache", "sgc", 2, true}),
    [](const auto& param_info) {
      return std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param) + "_" +
             std::to_string(std::get<2>(param_info.param)) + "layers" +
             (std::get<3>(param_info.param) ? "" : "_no_overlap");
    });

}  // namespace
}  // namespace gnnbed
