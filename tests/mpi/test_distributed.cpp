// Distributed execution against the single-process reference, on every rank count ctest runs it
// with (1..4): sampling over partitioned structure draws exactly the single-process samples and
// moves exactly the predicted bytes; one iteration of dgl-pull and of p3 gives the same loss and
// the same gradients as the single-process model on the same mini-batches and weights, and the
// transport moves exactly the bytes the plan says, with and without P3's caching, which changes
// no result, and with machines of two ranks; with 4 ranks, training on Cora reaches the
// single-process accuracy.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/train/minibatch_step.hpp"
#include "exec/train/optimizer.hpp"
#include "exec/train/trainer.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/single_process_iteration.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig experiment(const std::string& strategy, const std::string& structure,
                            const std::string& model, int num_layers = 2) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, num_layers, 16, 0.5};
  config.training.batch_size = 12;
  config.training.fanouts.assign(static_cast<std::size_t>(num_layers), 5);
  config.training.fanouts.front() = 10;
  config.training.seed = 4;
  config.distribution.strategy = strategy;
  config.distribution.structure = structure;
  return config;
}

TEST(DistributedSampling, OverPartitionedStructureDrawsTheSingleProcessSamples) {
  MpiTransport transport;
  const ExperimentConfig config = experiment("dgl-pull", "partitioned", "sage");
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  const LocalStore store(cora(), context, transport.rank(), {true, 0, 1433});
  EXPECT_LT(store.structure_bytes(),
            8 * (2709) + 4 * cora().graph.num_edges() / transport.size() + 4 * 2000)
      << "a rank keeps only its nodes' in-edges";
  const DistributedSampler distributed(store, context.partition, {10, 5}, 77, true);
  const NeighborSampler reference(cora().graph, {10, 5}, 77);
  const BatchSchedule schedule(cora().split.train, context.partition, 12, 4);
  std::vector<MiniBatch> all;
  for (int r = 0; r < transport.size(); ++r)
    all.push_back(reference.sample(schedule.seeds(r, 1, 0), 3));
  const auto predicted = sampling_traffic(all, context.partition);

  const TrafficBytes before = transport.bytes_sent();
  std::vector<SamplingHop> hops;
  TransferTiming timing;
  const MiniBatch batch =
      distributed.sample(schedule.seeds(transport.rank(), 1, 0), 3, transport, hops, timing);
  const MiniBatch& expected = all[static_cast<std::size_t>(transport.rank())];
  ASSERT_EQ(batch.blocks.size(), expected.blocks.size());
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
    EXPECT_EQ(batch.blocks[l].src_nodes, expected.blocks[l].src_nodes) << "block " << l;
    EXPECT_EQ(batch.blocks[l].offsets, expected.blocks[l].offsets) << "block " << l;
    EXPECT_EQ(batch.blocks[l].src_index, expected.blocks[l].src_index) << "block " << l;
  }
  const auto& mine = predicted[static_cast<std::size_t>(transport.rank())];
  ASSERT_EQ(hops.size(), mine.size());
  std::int64_t predicted_sent = 0;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    EXPECT_EQ(hops[h].request_bytes_to, mine[h].request_bytes_to) << "hop " << h;
    EXPECT_EQ(hops[h].request_bytes_from, mine[h].request_bytes_from) << "hop " << h;
    EXPECT_EQ(hops[h].reply_bytes_to, mine[h].reply_bytes_to) << "hop " << h;
    EXPECT_EQ(hops[h].reply_bytes_from, mine[h].reply_bytes_from) << "hop " << h;
    EXPECT_EQ(hops[h].edges_sampled_locally, mine[h].edges_sampled_locally) << "hop " << h;
    EXPECT_EQ(hops[h].edges_sampled_for_peers, mine[h].edges_sampled_for_peers) << "hop " << h;
    for (std::size_t q = 0; q < mine[h].request_bytes_to.size(); ++q) {
      predicted_sent += mine[h].request_bytes_to[q] + mine[h].reply_bytes_to[q];
    }
  }
  EXPECT_EQ(transport.bytes_sent()[Traffic::structure] - before[Traffic::structure],
            predicted_sent);
}

void expect_single_process_iteration(const ExperimentConfig& config) {
  MpiTransport transport;
  testing::expect_single_process_iteration(config, cora(), transport, cpu_backend());
}

// P3 deriving the first-layer graphs from the owners' seeds instead of receiving them: the same
// loss and gradients, and the transport moves what the plans say (seeds as structure traffic).
TEST(P3DerivedFirstLayer, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  for (const char* kind : {"sage", "gat"}) {
    ExperimentConfig config = experiment("p3", "replicated", kind);
    config.distribution.p3_first_layer = "derive";
    expect_single_process_iteration(config);
  }
}

class OneIteration
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string, int>> {};

TEST_P(OneIteration, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  const auto& [strategy, structure, model_kind, num_layers] = GetParam();
  expect_single_process_iteration(experiment(strategy, structure, model_kind, num_layers));
}

std::string one_iteration_name(
    const ::testing::TestParamInfo<OneIteration::ParamType>& param_info) {
  std::string name = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param) + "_" +
                     std::get<2>(param_info.param) + "_" +
                     std::to_string(std::get<3>(param_info.param)) + "layers";
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(TwoLayers, OneIteration,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("replicated", "partitioned"),
                                            ::testing::Values("sage", "gcn", "sgc"),
                                            ::testing::Values(2)),
                         one_iteration_name);

// GAT: p3 syncs the first layer's attention scores and their gradients (strategies/p3.cpp).
INSTANTIATE_TEST_SUITE_P(Attention, OneIteration,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("replicated", "partitioned"),
                                            ::testing::Values("gat"), ::testing::Values(2)),
                         one_iteration_name);

INSTANTIATE_TEST_SUITE_P(OtherDepths, OneIteration,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("partitioned"),
                                            ::testing::Values("sage", "gcn", "sgc"),
                                            ::testing::Values(1, 3)),
                         one_iteration_name);

// With P3's caching (strategies/replication.hpp) an iteration still gives the single-process
// results and moves exactly the plan's (fewer) bytes. 4e6 bytes buy groups of two on 4 ranks (a P3
// column slice of Cora is 3.9 MB, a DGL row partition 3.9 MB, a structure partition 17 kB) and
// no feature copy on fewer; 1e12 bytes buy every partition on every rank.
class CachedIteration
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::int64_t>> {};

TEST_P(CachedIteration, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  const auto& [strategy, cache, budget] = GetParam();
  ExperimentConfig config = experiment(strategy, "partitioned", "sage");
  config.distribution.cache = cache;
  config.distribution.cache_budget_bytes = budget;
  expect_single_process_iteration(config);
}

INSTANTIATE_TEST_SUITE_P(
    Caching, CachedIteration,
    ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                       ::testing::Values("structure", "features", "both"),
                       ::testing::Values(std::int64_t{4000000}, std::int64_t{1000000000000})),
    [](const ::testing::TestParamInfo<CachedIteration::ParamType>& param_info) {
      std::string name = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param) + "_" +
                         std::to_string(std::get<2>(param_info.param));
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

// GAT under p3 with copies of the column slices: each group syncs the scores among its members,
// and a group of one runs the first layer data parallel.
TEST(CachedAttention, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  for (const std::int64_t budget : {std::int64_t{4000000}, std::int64_t{1000000000000}}) {
    SCOPED_TRACE("cache budget " + std::to_string(budget) + " bytes");
    ExperimentConfig config = experiment("p3", "partitioned", "gat");
    config.distribution.cache = "features";
    config.distribution.cache_budget_bytes = budget;
    expect_single_process_iteration(config);
  }
}

// P3 on more ranks than feature columns: 2 columns over 3 or 4 ranks leave ranks 2 and 3 without
// any, so they take no share of the first layer; an iteration still gives the single-process
// results and moves the plan's bytes, with and without copies of the column slices (on 4 ranks,
// room for one copy each gives groups {0}, {1} and {2, 3}, each holding both columns).
TEST(P3MoreRanksThanColumns, GivesTheSingleProcessLossAndGradientsAndThePlannedBytes) {
  static const Dataset narrow = testing::csbm_workload(600, 4, 2);
  for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{600 * 4}}) {
    SCOPED_TRACE("cache budget " + std::to_string(budget) + " bytes");
    ExperimentConfig config = experiment("p3", "partitioned", "sage");
    config.workload = WorkloadConfig{};
    config.workload.source = "csbm";
    if (budget > 0) {
      config.distribution.cache = "features";
      config.distribution.cache_budget_bytes = budget;
    }
    MpiTransport transport;
    if (budget > 0 && transport.size() == 4) {
      EXPECT_TRUE(make_strategy_context(config, narrow, 4).feature_replicas.any());
    }
    testing::expect_single_process_iteration(config, narrow, transport, cpu_backend());
  }
}

// Machines of two ranks (one where the ranks do not pair up): the hierarchical all-reduce,
// dgl-pull's per-machine feature store and p3's partial results summed within each machine give
// the single-process results and move the plans' bytes (on 4 ranks the all-reduce is hierarchical
// and p3 relays its partial results and its announcements through the machines; on 2 the store
// serves every row locally).
TEST(Machines, MachineAwareStrategiesGiveTheSingleProcessIteration) {
  MpiTransport transport;
  const int ranks_per_machine = transport.size() % 2 == 0 ? 2 : 1;
  struct Case {
    const char* strategy;
    const char* model;
    const char* option;
    const char* value;
  };
  for (const Case& c :
       {Case{"dgl-pull", "sage", "feature_store", "rank"},
        Case{"dgl-pull", "gat", "feature_store", "machine"},
        Case{"p3", "sage", "p3_partials", "owner"}, Case{"p3", "sage", "p3_partials", "machine"},
        Case{"p3", "gat", "p3_partials", "machine"}}) {
    SCOPED_TRACE(std::string(c.strategy) + " " + c.model + ", " + c.option + " " + c.value);
    ExperimentConfig config = experiment(c.strategy, "partitioned", c.model);
    config.distribution.ranks_per_machine = ranks_per_machine;
    config.distribution.all_reduce = "hierarchical";
    (std::string(c.option) == "feature_store" ? config.distribution.feature_store
                                              : config.distribution.p3_partials) = c.value;
    testing::expect_single_process_iteration(config, cora(), transport, cpu_backend());
  }
  // The seeds P3 announces where the ranks derive the first-layer graphs are relayed alike.
  ExperimentConfig derived = experiment("p3", "replicated", "sage");
  derived.distribution.ranks_per_machine = ranks_per_machine;
  derived.distribution.p3_partials = "machine";
  derived.distribution.p3_first_layer = "derive";
  testing::expect_single_process_iteration(derived, cora(), transport, cpu_backend());
}

// An epoch of training with copies of every partition on every rank gives the losses and weights
// of training without: bit for bit where the copies only change where data is read (structure:
// sampling draws the same neighbours wherever it runs; DGL's feature rows), to float rounding
// where they regroup sums (P3's first layer, run data parallel: one partial product over all the
// columns instead of one per slice, and its weight gradients summed by the all-reduce). Fewer
// bytes move.
TEST(CachedTraining, GivesTheResultsOfTrainingWithoutCopies) {
  MpiTransport transport;
  for (const std::string strategy : {"dgl-pull", "p3"}) {
    for (const std::string cache : {"structure", "features"}) {
      SCOPED_TRACE(strategy + " caching " + cache);
      const ExperimentConfig plain = experiment(strategy, "partitioned", "sage");
      ExperimentConfig copies = plain;
      copies.distribution.cache = cache;
      copies.distribution.cache_budget_bytes = 1000000000000;
      const bool exact = cache == "structure" || strategy == "dgl-pull";
      const StrategyContext plain_context = make_strategy_context(plain, cora(), transport.size());
      const StrategyContext copies_context =
          make_strategy_context(copies, cora(), transport.size());
      RankEngine without(plain, plain_context, cora(), transport);
      RankEngine with(copies, copies_context, cora(), transport);
      const Traffic kind = cache == "structure" ? Traffic::structure
                           : strategy == "p3"   ? Traffic::activations
                                                : Traffic::features;
      double bytes_without = 0;
      double bytes_with = 0;
      const Stopwatch clock;
      for (int iteration = 0; iteration < without.schedule().iterations_per_epoch(); ++iteration) {
        const IterationRun a = without.run_iteration(1, iteration, clock);
        const IterationRun b = with.run_iteration(1, iteration, clock);
        const double loss_a = transport.sum_over_ranks(a.outcome.loss);
        const double loss_b = transport.sum_over_ranks(b.outcome.loss);
        if (exact) {
          EXPECT_EQ(loss_a, loss_b) << "iteration " << iteration;
        } else {
          EXPECT_NEAR(loss_a, loss_b, 1e-6 * std::abs(loss_a)) << "iteration " << iteration;
        }
        EXPECT_EQ(transport.sum_over_ranks(a.outcome.correct),
                  transport.sum_over_ranks(b.outcome.correct));
        bytes_without += static_cast<double>(a.plan.bytes_sent()[kind]);
        bytes_with += static_cast<double>(b.plan.bytes_sent()[kind]);
      }
      if (transport.size() > 1) {
        EXPECT_LT(transport.sum_over_ranks(bytes_with), transport.sum_over_ranks(bytes_without))
            << to_string(kind);
      }
      const std::vector<Parameter> weights_a = without.executor().gather_full_parameters(false);
      const std::vector<Parameter> weights_b = with.executor().gather_full_parameters(false);
      ASSERT_EQ(weights_a.size(), weights_b.size());
      for (std::size_t p = 0; p < weights_a.size(); ++p) {
        const Matrix& a = weights_a[p].value;
        const Matrix& b = weights_b[p].value;
        ASSERT_EQ(a.size(), b.size()) << weights_a[p].name;
        for (std::int64_t i = 0; i < a.size(); ++i) {
          if (exact) {
            ASSERT_EQ(a.data()[i], b.data()[i]) << weights_a[p].name << " entry " << i;
          } else {
            ASSERT_NEAR(a.data()[i], b.data()[i], 1e-6) << weights_a[p].name << " entry " << i;
          }
        }
      }
    }
  }
}

// Mean test accuracy over seeds of mini-batch GraphSAGE on Cora: one process with batches of 32,
// and 4 ranks with batches of 8 each (the same global batch).
TEST(DistributedAccuracy, FourRanksReachTheSingleProcessAccuracyOnCora) {
  MpiTransport transport;
  if (transport.size() != 4) GTEST_SKIP() << "runs with 4 ranks";
  constexpr int kSeeds = 3;
  for (const std::string strategy : {"dgl-pull", "p3"}) {
    double distributed = 0;
    double single = 0;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      ExperimentConfig config = experiment(strategy, "replicated", "sage");
      config.training.seed = static_cast<std::uint64_t>(seed);
      config.training.epochs = 50;
      config.training.eval_every = 0;
      config.training.batch_size = 8;
      config.training.fanouts = {25, 10};
      const StrategyContext context = make_strategy_context(config, cora(), 4);
      DistributedOptions options;
      options.quiet = true;
      const DistributedReport report =
          train_distributed(config, context, cora(), transport, options);
      TrainingConfig alone = config.training;
      alone.batch_size = 32;
      if (transport.rank() == 0) {
        distributed += report.test_accuracy / kSeeds;
        const ModelSpec spec(config.model, 1433, 7);
        single += train_model(cora(), spec, alone).test_accuracy / kSeeds;
      }
    }
    if (transport.rank() == 0) {
      std::printf("%s on 4 ranks: %.2f %% mean test accuracy over %d seeds; one process: %.2f %%\n",
                  strategy.c_str(), 100 * distributed, kSeeds, 100 * single);
      EXPECT_NEAR(100 * distributed, 100 * single, 1.0) << strategy;
    }
  }
}

}  // namespace
}  // namespace gnnbed
