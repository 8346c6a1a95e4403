// SANCUS's skip-broadcast, checked on its plans: in a broadcast epoch every rank sends its whole
// block of every layer's input to every peer and the gradients of the halo's rows back to their
// owners; in the epochs the staleness bound skips, nothing moves but the gradient all-reduce, and
// the plans read the copies kept from the last broadcast (persistent tensors, the same names and
// shapes every epoch). The simulator replays a whole cycle of epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "strategies/config/experiment_config.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/plan_memory.hpp"
#include "strategies/sancus.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

constexpr int kHidden = 16;

ExperimentConfig sancus_config(int staleness_epochs, const std::string& kind = "gcn",
                               int layers = 2) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{kind, layers, kHidden, 0.5};
  config.training.batch_size = 0;
  config.distribution.strategy = "sancus";
  config.distribution.sancus_staleness_epochs = staleness_epochs;
  return config;
}

// Every rank's plan of `epoch`, as the run's first plan (nothing carried from an epoch before).
std::vector<Plan> sancus_plans(const StrategyContext& context, int epoch) {
  const BatchSchedule schedule(cora().split.train, context.partition, 0, 5);
  return plan_iteration(*context.strategy, context, cora().graph, schedule, 9, epoch, 0);
}

// Every rank's plans of epochs 1 to `last`, each carrying the state of the one before: [epoch - 1].
std::vector<std::vector<Plan>> sancus_run(const StrategyContext& context, int last) {
  const BatchSchedule schedule(cora().split.train, context.partition, 0, 5);
  std::vector<std::vector<std::int32_t>> carried;
  std::vector<std::vector<Plan>> epochs;
  for (int epoch = 1; epoch <= last; ++epoch) {
    epochs.push_back(plan_iteration(*context.strategy, context, cora().graph, schedule, 9, epoch, 0,
                                    {}, &carried));
  }
  return epochs;
}

std::int64_t parameter_elements(const StrategyContext& context) {
  std::int64_t elements = 0;
  for (const ParameterSpec& p : full_model_parameters(context.model))
    elements += p.local_elements();
  return elements;
}

TEST(SancusPlans, ABroadcastEpochSendsEveryLayersWholeBlockToEveryPeer) {
  constexpr int kRanks = 3;
  const StrategyContext context = make_strategy_context(sancus_config(0, "gcn", 3), cora(), kRanks);
  const std::vector<Plan> plans = sancus_plans(context, 1);
  const std::int64_t parameters = parameter_elements(context);
  for (const Plan& plan : plans) {
    SCOPED_TRACE("rank " + std::to_string(plan.rank));
    const std::vector<NodeId> own_nodes = context.partition.nodes_of(plan.rank);
    const auto own = static_cast<std::int64_t>(own_nodes.size());
    const TrafficBytes sent = plan.bytes_sent();
    // Cora's bag of words stays sparse: the block goes out as its rows' entries.
    ASSERT_TRUE(context.sparse_feature_rows());
    EXPECT_EQ(sent[Traffic::features],
              (kRanks - 1) *
                  (own * kSparseRowBytes + context.feature_entries(own_nodes) * kSparseEntryBytes));
    EXPECT_EQ(sent[Traffic::activations], (kRanks - 1) * 2 * own * kHidden * 4)
        << "layers 1 and 2 broadcast their inputs";
    // Back to each owner: the gradients of its nodes this rank read, at layers 1 and 2.
    std::int64_t halo_rows = 0;
    for (int q = 0; q < kRanks; ++q) {
      if (q != plan.rank) halo_rows += plan.op_labelled("announce").bytes_to[q] / 4;
    }
    EXPECT_EQ(sent[Traffic::gradients],
              2 * halo_rows * kHidden * 4 +
                  4 * ring_all_reduce_elements_sent(plan.rank, kRanks, parameters));
    for (int q = 0; q < kRanks; ++q) {
      if (q == plan.rank) continue;
      const auto peer = static_cast<std::size_t>(q);
      const auto theirs = static_cast<std::int64_t>(context.partition.nodes_of(q).size());
      EXPECT_EQ(plan.op_labelled("broadcast layer1 block").bytes_from[peer], theirs * kHidden * 4);
      // What this rank receives from q is what q sends it.
      for (const Op& op : plan.ops) {
        if (op.kind != OpKind::all_to_all) continue;
        EXPECT_EQ(op.bytes_from[peer],
                  plans[peer].op_labelled(op.label).bytes_to[static_cast<std::size_t>(plan.rank)])
            << op.label;
      }
    }
    EXPECT_NO_THROW(plan.validate());
  }
}

// The persistent tensors of a plan: name -> rows x cols.
std::map<std::string, std::pair<std::int64_t, std::int64_t>> persistent_of(const Plan& plan) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> held;
  for (const TensorSpec& t : plan.tensors) {
    if (t.persistent) held[t.name] = {t.rows, t.cols};
  }
  return held;
}

TEST(SancusPlans, SkippedEpochsMoveOnlyTheAllReduceAndReadTheKeptCopies) {
  constexpr int kRanks = 2;
  constexpr int kStaleness = 2;  // broadcast in epochs 1, 4, 7, ...
  const StrategyContext context =
      make_strategy_context(sancus_config(kStaleness, "sage"), cora(), kRanks);
  EXPECT_EQ(context.strategy->epoch_cycle(), kStaleness + 1);
  const std::int64_t all_reduce =
      4 * ring_all_reduce_elements_sent(0, kRanks, parameter_elements(context));
  const std::vector<std::vector<Plan>> run = sancus_run(context, 5);
  const std::vector<Plan>& broadcast = run[3];
  for (const int epoch : {2, 3, 5}) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const std::vector<Plan>& skipped = run[static_cast<std::size_t>(epoch - 1)];
    for (int r = 0; r < kRanks; ++r) {
      const Plan& plan = skipped[static_cast<std::size_t>(r)];
      const TrafficBytes sent = plan.bytes_sent();
      EXPECT_EQ(sent[Traffic::features], 0);
      EXPECT_EQ(sent[Traffic::activations], 0);
      EXPECT_EQ(sent[Traffic::gradients], all_reduce);
      EXPECT_GT(broadcast[static_cast<std::size_t>(r)].bytes_sent()[Traffic::activations], 0);
      EXPECT_EQ(broadcast[static_cast<std::size_t>(r)].bytes_sent()[Traffic::features], 0)
          << "the features never change: sent once, in the first epoch";
      EXPECT_GT(run[0][static_cast<std::size_t>(r)].bytes_sent()[Traffic::features], 0);
      // The copies read now are the ones the broadcast epochs write.
      const auto held = persistent_of(plan);
      EXPECT_EQ(held.size(), 3U) << "layer 0 and 1 blocks of the peer, layer 1 gradients from it";
      EXPECT_EQ(held, persistent_of(broadcast[static_cast<std::size_t>(r)]));
      EXPECT_NO_THROW(plan.validate());
      const std::vector<NodeId> peer_nodes = context.partition.nodes_of(1 - r);
      EXPECT_GE(plan_peak_bytes(plan), context.feature_entries(peer_nodes) * kSparseEntryBytes)
          << "the peer's feature block (sparse rows) is held between plans";
    }
  }
}

// A skipped epoch reads its copies before anything writes them: validation accepts that of
// persistent tensors only, which must be dense, named once, in unpipelined plans, and survive a
// plan file.
TEST(PersistentTensors, AreReadBeforeWrittenOnlyAsDeclaredAndSurviveAPlanFile) {
  const StrategyContext context = make_strategy_context(sancus_config(1), cora(), 2);
  const Plan skipped = sancus_run(context, 2)[1].front();
  ASSERT_NO_THROW(skipped.validate());
  const auto held = persistent_of(skipped);
  ASSERT_FALSE(held.empty());
  const testing::TemporaryDirectory dir;
  for (const char* name : {"plans.json", "plans.msgpack"}) {
    write_plans({skipped}, dir.path() / name);
    const Plan read = read_plans(dir.path() / name).front();
    EXPECT_EQ(persistent_of(read), held) << name;
    EXPECT_NO_THROW(read.validate()) << name;
  }
  const auto first_persistent = [](Plan& plan) -> TensorSpec& {
    return *std::find_if(plan.tensors.begin(), plan.tensors.end(),
                         [](const TensorSpec& t) { return t.persistent; });
  };
  Plan forgotten = skipped;
  first_persistent(forgotten).persistent = false;
  EXPECT_THROW(forgotten.validate(), Error) << "read before any op writes it";
  Plan transient = skipped;
  first_persistent(transient).transient = true;
  EXPECT_THROW(transient.validate(), Error);
  Plan twice = skipped;
  TensorSpec copy = first_persistent(twice);
  twice.tensors.push_back(copy);
  EXPECT_THROW(twice.validate(), Error);
  Plan pipelined = skipped;
  pipelined.pipeline_depth = 1;
  EXPECT_THROW(pipelined.validate(), Error);
}

TEST(SancusPlans, OneRankMovesNothingAndKeepsNoCopies) {
  const StrategyContext context = make_strategy_context(sancus_config(1), cora(), 1);
  for (const int epoch : {1, 2}) {
    const Plan plan = sancus_plans(context, epoch).front();
    EXPECT_EQ(plan.bytes_sent().total(), 0);
    EXPECT_TRUE(persistent_of(plan).empty());
    EXPECT_NO_THROW(plan.validate());
  }
}

TEST(SancusConfig, TheBoundIsSancusOnlyAndNotNegative) {
  nlohmann::json document = {
      {"distribution", {{"strategy", "roc"}, {"sancus_staleness_epochs", 1}}}};
  EXPECT_THROW(make_strategy(experiment_config_from_json(document).distribution), ConfigError);
  document["distribution"]["strategy"] = "sancus";
  document["distribution"]["sancus_staleness_epochs"] = -1;
  EXPECT_THROW(experiment_config_from_json(document), ConfigError);
  document["distribution"]["sancus_staleness_epochs"] = 3;
  EXPECT_EQ(experiment_config_from_json(document).distribution.sancus_staleness_epochs, 3);
  DistributionConfig pipelined;
  pipelined.strategy = "sancus";
  pipelined.pipeline = true;
  EXPECT_THROW(make_strategy(pipelined), ConfigError);
}

TEST(SancusOptions, BroadcastsInTheFirstEpochAndEveryBoundPlusOneAfter) {
  const SancusOptions every;
  SancusOptions third;
  third.staleness_epochs = 2;
  for (int epoch = 1; epoch <= 7; ++epoch) {
    EXPECT_TRUE(every.broadcasts(epoch));
    EXPECT_EQ(third.broadcasts(epoch), epoch == 1 || epoch == 4 || epoch == 7) << epoch;
  }
}

}  // namespace
}  // namespace gnnbed
