// SANCUS's three staleness bounds, decided before every epoch (strategies/sancus_bounds.hpp):
// SCS-A counts the epochs a rank computed with stale copies of the peers it reads from, SCS-H
// predicts a block's change from the blocks the plans keep (or, in the simulator, draws it with a
// given chance), and every rank's decisions travel in front of its announcement, so that all ranks
// plan the same transfers.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "strategies/config/experiment_config.hpp"
#include "strategies/sancus.hpp"
#include "strategies/sancus_bounds.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig bound_config(const std::string& bound, int staleness = 0,
                              std::optional<double> threshold = {},
                              std::optional<double> fraction = {}, int layers = 3) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{"gcn", layers, 16, 0.5};
  config.training.batch_size = 0;
  config.distribution.strategy = "sancus";
  config.distribution.sancus_bound = bound;
  config.distribution.sancus_staleness_epochs = staleness;
  config.distribution.sancus_change_threshold = threshold;
  config.distribution.sancus_broadcast_fraction = fraction;
  return config;
}

// [epoch - 1][layer][rank]: the decisions of epochs 1 to `last`, planned as a run goes through
// them (each epoch carrying the state of the one before), checked to agree between the ranks.
std::vector<std::vector<std::vector<char>>> decisions_of_run(const StrategyContext& context,
                                                             int last) {
  const BatchSchedule schedule(cora().split.train, context.partition, 0, 5);
  std::vector<std::vector<std::int32_t>> carried;
  std::vector<std::vector<std::vector<char>>> decisions;
  for (int epoch = 1; epoch <= last; ++epoch) {
    const std::vector<Plan> plans = plan_iteration(*context.strategy, context, cora().graph,
                                                   schedule, 9, epoch, 0, {}, &carried);
    const int layers = context.model.num_layers();
    decisions.push_back(sancus_broadcasts(plans.front(), layers));
    for (const Plan& plan : plans) {
      EXPECT_EQ(sancus_broadcasts(plan, layers), decisions.back()) << "rank " << plan.rank;
      EXPECT_NO_THROW(plan.validate());
    }
  }
  return decisions;
}

TEST(SancusAdaptiveBound, WhereEveryRankReadsFromEveryOtherItKeepsSCSEsRhythm) {
  constexpr int kRanks = 3;
  for (const int staleness : {1, 2}) {
    SCOPED_TRACE("bound " + std::to_string(staleness));
    const StrategyContext adaptive =
        make_strategy_context(bound_config("adaptive", staleness), cora(), kRanks);
    const auto decisions = decisions_of_run(adaptive, 7);
    SancusOptions scs_e;
    scs_e.staleness_epochs = staleness;
    for (int epoch = 1; epoch <= 7; ++epoch) {
      const auto& layers = decisions[static_cast<std::size_t>(epoch - 1)];
      EXPECT_EQ(layers[0], std::vector<char>(kRanks, epoch == 1 ? 1 : 0)) << "features, " << epoch;
      for (std::size_t l = 1; l < layers.size(); ++l) {
        EXPECT_EQ(layers[l], std::vector<char>(kRanks, scs_e.broadcasts(epoch) ? 1 : 0))
            << "layer " << l << ", epoch " << epoch;
      }
    }
  }
}

// A rank's state after an epoch, for one layer of three ranks: its stale count.
std::int32_t stale_after(const std::vector<std::int32_t>& before, const std::vector<char>& sent,
                         const std::vector<char>& reads_from) {
  RankIteration iteration;
  iteration.rank = 0;
  iteration.carried_state = before;
  const std::vector<std::int32_t> state = next_sancus_state(iteration, {sent}, reads_from);
  EXPECT_EQ(broadcasts_in_state(state), SancusBroadcasts{sent});
  EXPECT_EQ(state.at(2), before.empty() ? 1 : before.at(2) + 1) << "plans so far";
  return state.at(3);
}

TEST(SancusAdaptiveBound, CountsOnlyTheEpochsARankReadAStaleCopy) {
  const std::vector<std::int32_t> stale_two = {1, 3, 4, 2, 0, 0, 0};
  // Its peers broadcast: nothing it read was stale.
  EXPECT_EQ(stale_after(stale_two, {0, 1, 1}, {0, 1, 1}), 2);
  // Rank 2 skipped, and rank 0 reads from it.
  EXPECT_EQ(stale_after(stale_two, {0, 1, 0}, {0, 1, 1}), 3);
  // Rank 2 skipped, but rank 0 reads nothing of it.
  EXPECT_EQ(stale_after(stale_two, {0, 1, 0}, {0, 1, 0}), 2);
  // Its own broadcast starts the count again, from this epoch's stale reads.
  EXPECT_EQ(stale_after(stale_two, {1, 1, 0}, {0, 1, 1}), 1);
  EXPECT_EQ(stale_after(stale_two, {1, 1, 1}, {0, 1, 1}), 0);
  // The run's first epoch: nothing carried.
  EXPECT_EQ(stale_after({}, {1, 1, 0}, {0, 0, 1}), 1);

  const StrategyContext context = make_strategy_context(bound_config("adaptive", 2), cora(), 3);
  RankIteration iteration;
  iteration.epoch = 5;
  const SancusOptions options = sancus_options(bound_config("adaptive", 2).distribution);
  EXPECT_EQ(own_broadcasts(options, context, iteration), std::vector<char>(3, 1))
      << "the first plan sends every block";
  iteration.carried_state = {3, 3, 4, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(own_broadcasts(options, context, iteration), (std::vector<char>{0, 0, 1}));
}

TEST(SancusChangeBound, PredictsTheChangeFromTheLastBlockAndItsLastStep) {
  const std::vector<float> sent = {3, 4};  // norm 5
  const std::vector<float> last = {3, 4.1f};
  const std::vector<float> before = {3, 4.2f};
  EXPECT_NEAR(predicted_change(last, {}, sent), 0.02, 1e-6);
  EXPECT_NEAR(predicted_change(last, before, sent), 0.04, 1e-6);
  EXPECT_EQ(predicted_change(sent, sent, sent), 0);
  EXPECT_TRUE(std::isinf(predicted_change({}, {}, sent))) << "nothing computed yet";
  EXPECT_TRUE(std::isinf(predicted_change(last, {}, std::vector<float>{0, 0})));
  EXPECT_EQ(predicted_change(std::vector<float>{0, 0}, {}, std::vector<float>{0, 0}), 0);

  const ExperimentConfig config = bound_config("change", 0, 0.03, {}, 2);
  const StrategyContext context = make_strategy_context(config, cora(), 2);
  const SancusOptions options = sancus_options(config.distribution);
  std::map<std::string, std::vector<float>> held = {{computed_block_name(1, 4), last},
                                                    {sent_block_name(1), sent}};
  RankIteration iteration;
  iteration.epoch = 5;
  iteration.carried_state = {2, 2, 4, 0, 0, 1, 1, 1, 1};
  iteration.persistent_values = [&](const std::string& name) -> std::span<const float> {
    const auto found = held.find(name);
    return found == held.end() ? std::span<const float>() : std::span<const float>(found->second);
  };
  EXPECT_EQ(own_broadcasts(options, context, iteration), (std::vector<char>{0, 0}))
      << "2 % since the peers' copy, under 3 %";
  held[computed_block_name(1, 3)] = before;
  EXPECT_EQ(own_broadcasts(options, context, iteration), (std::vector<char>{0, 1}))
      << "2 % plus a last step of 2 %";
  iteration.carried_state[2] = 1;
  EXPECT_EQ(own_broadcasts(options, context, iteration), (std::vector<char>{0, 0}))
      << "the rank's second plan: the block before the last was never computed";
}

TEST(SancusChangeBound, TheSimulatorDrawsItsDecisionsWithTheGivenChance) {
  constexpr int kRanks = 3;
  constexpr int kEpochs = 12;
  for (const double fraction : {0.0, 1.0}) {
    const StrategyContext context =
        make_strategy_context(bound_config("change", 0, 0.03, fraction), cora(), kRanks);
    const auto decisions = decisions_of_run(context, kEpochs);
    for (int epoch = 2; epoch <= kEpochs; ++epoch) {
      const auto& layers = decisions[static_cast<std::size_t>(epoch - 1)];
      EXPECT_EQ(layers[0], std::vector<char>(kRanks, 0));
      for (std::size_t l = 1; l < layers.size(); ++l) {
        EXPECT_EQ(layers[l], std::vector<char>(kRanks, fraction == 1 ? 1 : 0));
      }
    }
  }
  const StrategyContext half =
      make_strategy_context(bound_config("change", 0, 0.03, 0.5), cora(), kRanks);
  const auto decisions = decisions_of_run(half, kEpochs);
  EXPECT_EQ(decisions, decisions_of_run(half, kEpochs)) << "seeded: the same every time";
  int broadcasts = 0;
  int blocks = 0;
  for (int epoch = 2; epoch <= kEpochs; ++epoch) {
    const auto& layers = decisions[static_cast<std::size_t>(epoch - 1)];
    for (std::size_t l = 1; l < layers.size(); ++l) {
      for (const char b : layers[l]) {
        broadcasts += b;
        ++blocks;
      }
    }
  }
  EXPECT_GT(broadcasts, blocks / 4);
  EXPECT_LT(broadcasts, 3 * blocks / 4);
  EXPECT_EQ(half.strategy->epoch_cycle(), 4);
  EXPECT_TRUE(half.strategy->carries_state());
}

TEST(SancusChangeBound, PlansKeepTheOwnBlockAsComputedAndAsSent) {
  const StrategyContext context =
      make_strategy_context(bound_config("change", 0, 0.03, 0.5, 2), cora(), 2);
  const BatchSchedule schedule(cora().split.train, context.partition, 0, 5);
  std::vector<std::vector<std::int32_t>> carried;
  for (int epoch = 1; epoch <= 6; ++epoch) {
    for (const Plan& plan : plan_iteration(*context.strategy, context, cora().graph, schedule, 9,
                                           epoch, 0, {}, &carried)) {
      const bool sent = sancus_broadcasts(plan, 2)[1][static_cast<std::size_t>(plan.rank)] != 0;
      int kept_as_sent = 0;
      int kept_as_computed = 0;
      for (const Op& op : plan.ops) {
        kept_as_sent += op.label == "keep layer1 own block as sent" ? 1 : 0;
        kept_as_computed += op.label == "keep layer1 own block as computed" ? 1 : 0;
      }
      EXPECT_EQ(kept_as_computed, 1);
      EXPECT_EQ(kept_as_sent, sent ? 1 : 0) << "epoch " << epoch << ", rank " << plan.rank;
    }
  }
}

TEST(SancusChangeBound, WithoutValuesOrAChanceItCannotBeSimulated) {
  const StrategyContext context = make_strategy_context(bound_config("change", 0, 0.03), cora(), 2);
  const BatchSchedule schedule(cora().split.train, context.partition, 0, 5);
  std::vector<std::vector<std::int32_t>> carried;
  plan_iteration(*context.strategy, context, cora().graph, schedule, 9, 1, 0, {}, &carried);
  try {
    plan_iteration(*context.strategy, context, cora().graph, schedule, 9, 2, 0, {}, &carried);
    FAIL() << "planned the change bound without values";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("sancus_broadcast_fraction"), std::string::npos);
  }
}

TEST(SancusAnnouncement, CarriesTheDecisionsInFrontOfTheHalo) {
  const Announcement halo(std::vector<std::vector<std::int32_t>>{{7, 8}, {}, {9}});
  const Announcement sent = with_broadcasts(halo, {1, 0}, 1);
  EXPECT_EQ(sent[0], (std::vector<std::int32_t>{1, 0, 7, 8}));
  EXPECT_TRUE(sent[1].empty());
  const Announcement received(std::vector<std::vector<std::int32_t>>{{0, 1, 5}, {}, {1, 1}});
  const DecodedAnnouncements decoded = decode_broadcasts(sent, received, 1, 2);
  EXPECT_EQ(decoded.broadcasts, (SancusBroadcasts{{0, 1, 1}, {1, 0, 1}}));
  EXPECT_EQ(decoded.sent[0], (std::vector<std::int32_t>{7, 8}));
  EXPECT_EQ(decoded.sent[2], (std::vector<std::int32_t>{9}));
  EXPECT_EQ(decoded.received[0], (std::vector<std::int32_t>{5}));
  EXPECT_TRUE(decoded.received[2].empty());
  const Announcement short_one(std::vector<std::vector<std::int32_t>>{{1}, {}, {1, 1}});
  EXPECT_THROW(decode_broadcasts(sent, short_one, 1, 2), Error);
}

TEST(SancusConfig, EachBoundTakesItsOwnOptions) {
  const auto read = [](nlohmann::json distribution) {
    distribution["strategy"] = "sancus";
    return experiment_config_from_json({{"distribution", distribution}});
  };
  EXPECT_THROW(read({{"sancus_bound", "sometimes"}}), ConfigError);
  EXPECT_THROW(read({{"sancus_bound", "change"}}), ConfigError) << "no threshold";
  EXPECT_THROW(read({{"sancus_bound", "change"}, {"sancus_change_threshold", 0}}), ConfigError);
  EXPECT_THROW(read({{"sancus_bound", "change"},
                     {"sancus_change_threshold", 0.03},
                     {"sancus_staleness_epochs", 2}}),
               ConfigError);
  EXPECT_THROW(read({{"sancus_bound", "change"},
                     {"sancus_change_threshold", 0.03},
                     {"sancus_broadcast_fraction", 1.5}}),
               ConfigError);
  EXPECT_THROW(read({{"sancus_bound", "epochs"}, {"sancus_change_threshold", 0.03}}), ConfigError);
  EXPECT_THROW(read({{"sancus_bound", "adaptive"}, {"sancus_broadcast_fraction", 0.5}}),
               ConfigError);
  const ExperimentConfig change = read({{"sancus_bound", "change"},
                                        {"sancus_change_threshold", 0.03},
                                        {"sancus_broadcast_fraction", 0.25}});
  EXPECT_EQ(change.distribution.sancus_change_threshold, 0.03);
  EXPECT_EQ(change.distribution.sancus_broadcast_fraction, 0.25);
  DistributionConfig roc;
  roc.strategy = "roc";
  roc.sancus_bound = "adaptive";
  EXPECT_THROW(make_strategy(roc), ConfigError);
}

}  // namespace
}  // namespace gnnbed
