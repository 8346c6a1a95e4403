// NeutronStar's dependency management, checked on its plans: fetching every remote dependency
// (DepComm) moves exactly ROC's halo; computing them again (DepCache) gives every layer below the
// top the closure of the own nodes' in-neighbourhoods and moves nothing but the all-reduce once
// the features are copied; the hybrid's cost model falls back to one or the other at its extremes
// and mixes them in between.
#include <gtest/gtest.h>

#include <set>

#include "strategies/config/experiment_config.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

constexpr int kRanks = 3;

ExperimentConfig full_graph_config(const std::string& strategy, const std::string& dependencies,
                                   double transfer_seconds = 3.2e-9) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{"gcn", 2, 16, 0.5};
  config.training.batch_size = 0;
  config.distribution.strategy = strategy;
  config.distribution.neutronstar_dependencies = dependencies;
  config.distribution.neutronstar_transfer_seconds = transfer_seconds;
  return config;
}

std::vector<Plan> plans(const ExperimentConfig& config, int epoch,
                        const Dataset& dataset = cora()) {
  const StrategyContext context = make_strategy_context(config, dataset, kRanks);
  const BatchSchedule schedule(dataset.split.train, context.partition, 0, 5);
  return plan_iteration(*context.strategy, context, dataset.graph, schedule, 9, epoch, 0);
}

// On Cora's bag-of-words rows both send the rows' entries (sparse), and on dense rows every column.
TEST(NeutronStarPlans, FetchingEveryDependencyMovesRocsHalo) {
  for (const char* rows : {"sparse", "dense"}) {
    const Dataset& dataset = testing::bundled_workload("cora", rows);
    const std::vector<Plan> roc = plans(full_graph_config("roc", "hybrid"), 2, dataset);
    const std::vector<Plan> first =
        plans(full_graph_config("neutronstar", "communicate"), 1, dataset);
    const std::vector<Plan> later =
        plans(full_graph_config("neutronstar", "communicate"), 2, dataset);
    for (int r = 0; r < kRanks; ++r) {
      SCOPED_TRACE(std::string(rows) + " rows, rank " + std::to_string(r));
      const auto slot = static_cast<std::size_t>(r);
      const TrafficBytes halo = roc[slot].bytes_sent();
      EXPECT_EQ(first[slot].bytes_sent()[Traffic::features], halo[Traffic::features]);
      EXPECT_EQ(later[slot].bytes_sent()[Traffic::features], 0) << "the copies serve";
      EXPECT_EQ(later[slot].bytes_sent()[Traffic::activations], halo[Traffic::activations]);
      EXPECT_EQ(later[slot].bytes_sent()[Traffic::gradients], halo[Traffic::gradients]);
      EXPECT_NO_THROW(first[slot].validate());
      EXPECT_NO_THROW(later[slot].validate());
    }
  }
}

TEST(NeutronStarPlans, ComputingEveryDependencyAgainMovesOnlyTheAllReduce) {
  const ExperimentConfig config = full_graph_config("neutronstar", "cache");
  const StrategyContext context = make_strategy_context(config, cora(), kRanks);
  std::int64_t parameters = 0;
  for (const ParameterSpec& p : full_model_parameters(context.model))
    parameters += p.local_elements();
  const Graph& graph = cora().graph;
  for (const Plan& plan : plans(config, 2)) {
    SCOPED_TRACE("rank " + std::to_string(plan.rank));
    const TrafficBytes sent = plan.bytes_sent();
    EXPECT_EQ(sent[Traffic::features] + sent[Traffic::activations], 0);
    EXPECT_EQ(sent[Traffic::gradients],
              4 * ring_all_reduce_elements_sent(plan.rank, kRanks, parameters));
    // Layer 0 computes the own nodes and their in-neighbours, from their in-neighbours in turn.
    std::set<NodeId> closure;
    for (const NodeId v : context.partition.nodes_of(plan.rank)) {
      closure.insert(v);
      for (const NodeId u : graph.in_neighbors(v)) closure.insert(u);
    }
    const Op& forward = plan.op_labelled("layer0.forward");
    const Block& first = *plan.tensors[static_cast<std::size_t>(forward.input(Input::block))].block;
    const std::set<NodeId> computed(first.dst_nodes().begin(), first.dst_nodes().end());
    EXPECT_EQ(computed, closure);
    EXPECT_NO_THROW(plan.validate());
  }
}

TEST(NeutronStarPlans, TheHybridFollowsItsCostModelBetweenTheExtremes) {
  const auto activations = [](const ExperimentConfig& config) {
    std::int64_t bytes = 0;
    for (const Plan& plan : plans(config, 2)) bytes += plan.bytes_sent()[Traffic::activations];
    return bytes;
  };
  const std::int64_t fetching = activations(full_graph_config("neutronstar", "communicate"));
  ASSERT_GT(fetching, 0);
  EXPECT_EQ(activations(full_graph_config("neutronstar", "hybrid", 1e-15)), fetching)
      << "a free network: fetch everything";
  EXPECT_EQ(activations(full_graph_config("neutronstar", "hybrid", 1.0)), 0)
      << "a dear network: compute everything again";
  // Fetching 16 hidden values against aggregating 1433 features over an edge or two.
  const std::int64_t mixed = activations(full_graph_config("neutronstar", "hybrid", 2e-9));
  EXPECT_GT(mixed, 0);
  EXPECT_LT(mixed, fetching);
}

// Whether op `later` of `plan` waits, through its dependencies, for op `earlier`.
bool waits_for(const Plan& plan, int later, int earlier) {
  std::vector<int> pending = {later};
  std::vector<bool> seen(plan.ops.size(), false);
  while (!pending.empty()) {
    const int op = pending.back();
    pending.pop_back();
    if (op == earlier) return true;
    for (const int dep : plan.ops[static_cast<std::size_t>(op)].deps) {
      if (!seen[static_cast<std::size_t>(dep)]) {
        seen[static_cast<std::size_t>(dep)] = true;
        pending.push_back(dep);
      }
    }
  }
  return false;
}

int op_index(const Plan& plan, const std::string& label) {
  return static_cast<int>(&plan.op_labelled(label) - plan.ops.data());
}

// With overlap, a layer's destinations that read no fetched row are computed after the fetch has
// started and before it is waited for, and their gradients while the fetched rows' go back; the
// traffic is the same as without.
TEST(NeutronStarPlans, DepCommComputesWhatNeedsNoFetchedRowWhileTheRowsMove) {
  ExperimentConfig config = full_graph_config("neutronstar", "communicate");
  config.distribution.neutronstar_overlap = true;
  const std::vector<Plan> overlapped = plans(config, 2);
  config.distribution.neutronstar_overlap = false;
  const std::vector<Plan> plain = plans(config, 2);
  for (const Plan& plan : overlapped) {
    SCOPED_TRACE("rank " + std::to_string(plan.rank));
    EXPECT_EQ(plan.bytes_sent(), plain[static_cast<std::size_t>(plan.rank)].bytes_sent());
    EXPECT_EQ(plan.bytes_received(), plain[static_cast<std::size_t>(plan.rank)].bytes_received());
    const int fetch = op_index(plan, "layer1 fetch dependencies");
    const int ready = op_index(plan, "layer1.forward (ready)");
    const int waiting = op_index(plan, "layer1.forward (waiting)");
    EXPECT_LT(fetch, ready);
    EXPECT_FALSE(waits_for(plan, ready, fetch));
    EXPECT_TRUE(waits_for(plan, waiting, fetch));
    const int gradients = op_index(plan, "layer1 dependency gradients");
    const int ready_backward = op_index(plan, "layer1.backward (ready)");
    EXPECT_TRUE(waits_for(plan, gradients, op_index(plan, "layer1.backward (waiting)")));
    EXPECT_LT(gradients, ready_backward);
    EXPECT_FALSE(waits_for(plan, ready_backward, gradients));
    // Both parts hold destinations, and together every one of the layer's.
    const auto destinations = [&](const std::string& label) {
      const Op& op = plan.op_labelled(label);
      return plan.tensors[static_cast<std::size_t>(op.input(Input::block))].block->num_dst;
    };
    const std::int64_t ready_rows = destinations("layer1.forward (ready)");
    EXPECT_GT(ready_rows, 0);
    EXPECT_GT(destinations("layer1.forward (waiting)"), 0);
    EXPECT_EQ(ready_rows + destinations("layer1.forward (waiting)"), destinations("layer0.forward"))
        << "DepComm computes the own nodes at both layers";
    EXPECT_NO_THROW(plan.validate());
  }
}

TEST(NeutronStarConfig, ModesCostsAndStructureAreChecked) {
  nlohmann::json document = {
      {"distribution", {{"strategy", "neutronstar"}, {"neutronstar_dependencies", "both"}}}};
  EXPECT_THROW(experiment_config_from_json(document), ConfigError);
  document["distribution"]["neutronstar_dependencies"] = "cache";
  document["distribution"]["neutronstar_edge_seconds"] = 0;
  EXPECT_THROW(experiment_config_from_json(document), ConfigError);
  ExperimentConfig partitioned = full_graph_config("neutronstar", "cache");
  partitioned.distribution.structure = "partitioned";
  EXPECT_THROW(make_strategy_context(partitioned, cora(), 2), ConfigError);
  partitioned.distribution.neutronstar_dependencies = "communicate";
  EXPECT_NO_THROW(make_strategy_context(partitioned, cora(), 2));
  ExperimentConfig roc = full_graph_config("roc", "hybrid");
  roc.distribution.neutronstar_overlap = true;
  EXPECT_THROW(make_strategy_context(roc, cora(), 2), ConfigError) << "overlap is NeutronStar's";
}

}  // namespace
}  // namespace gnnbed
