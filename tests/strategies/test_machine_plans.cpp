// Plans that follow the machines (distribution.ranks_per_machine): with dgl-pull's per-machine
// feature store a rank pulls no row of its machine's ranks and exactly the flat plan's rows of the
// other machines, and the store counts once per machine; the hierarchical all-reduce carries the
// schedule's bytes in every data-parallel strategy's plans; configurations the machines cannot
// serve are refused naming the field.
#include <gtest/gtest.h>

#include "strategies/caching.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr int kRanks = 4;
constexpr int kRanksPerMachine = 2;

const Dataset& cora() { return testing::bundled_workload("cora"); }

std::size_t index(int i) { return static_cast<std::size_t>(i); }

ExperimentConfig experiment(const std::string& strategy) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{"sage", 2, 16, 0.5};
  config.training.batch_size = 32;
  config.training.fanouts = {10, 5};
  config.distribution.strategy = strategy;
  config.distribution.ranks_per_machine = kRanksPerMachine;
  return config;
}

std::vector<Plan> plans_for(const StrategyContext& context) {
  const BatchSchedule schedule(cora().split.train, context.partition, context.training.batch_size,
                               5);
  return plan_iteration(*context.strategy, context, cora().graph, schedule, 9, 1, 0);
}

bool same_machine(int a, int b) { return a / kRanksPerMachine == b / kRanksPerMachine; }

// Bytes of `traffic` this rank's all-to-all ops send to (or receive from) each rank.
std::vector<std::int64_t> bytes_by_peer(const Plan& plan, Traffic traffic, bool sent) {
  std::vector<std::int64_t> bytes(index(plan.num_ranks), 0);
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::all_to_all || op.traffic != traffic) continue;
    for (int q = 0; q < plan.num_ranks; ++q) {
      bytes[index(q)] += sent ? op.bytes_to[index(q)] : op.bytes_from[index(q)];
    }
  }
  return bytes;
}

std::vector<std::int64_t> sent_by_peer(const Plan& plan, Traffic traffic) {
  return bytes_by_peer(plan, traffic, true);
}

std::vector<std::int64_t> received_by_peer(const Plan& plan, Traffic traffic) {
  return bytes_by_peer(plan, traffic, false);
}

TEST(MachinePlans, MachineStorePullsOnlyTheOtherMachinesRows) {
  ExperimentConfig config = experiment("dgl-pull");
  const StrategyContext per_rank = make_strategy_context(config, cora(), kRanks);
  config.distribution.feature_store = "machine";
  const StrategyContext per_machine = make_strategy_context(config, cora(), kRanks);
  ASSERT_TRUE(per_machine.feature_replicas.shared_within_machine());
  const auto flat = plans_for(per_rank);
  const auto shared = plans_for(per_machine);
  std::int64_t flat_within = 0;
  for (int r = 0; r < kRanks; ++r) {
    for (const Traffic traffic : {Traffic::features, Traffic::structure}) {
      const auto before = sent_by_peer(flat[index(r)], traffic);
      const auto after = sent_by_peer(shared[index(r)], traffic);
      for (int q = 0; q < kRanks; ++q) {
        if (q == r) continue;
        if (same_machine(r, q)) {
          flat_within += before[index(q)];
          EXPECT_EQ(after[index(q)], 0) << "rank " << r << " to its machine's rank " << q;
        } else {
          EXPECT_EQ(after[index(q)], before[index(q)]) << "rank " << r << " to rank " << q;
        }
      }
    }
  }
  EXPECT_GT(flat_within, 0) << "the flat plans moved nothing within a machine: nothing was tested";
  // One store per machine: every row is counted once, on its owner, as without it.
  const PartitionSizes sizes = partition_sizes(cora().graph, per_rank.partition);
  EXPECT_EQ(resident_bytes(*per_machine.strategy, per_machine, cora().graph, sizes),
            resident_bytes(*per_rank.strategy, per_rank, cora().graph, sizes));
}

TEST(MachinePlans, HierarchicalAllReduceCarriesTheSchedulesBytesInEveryStrategy) {
  for (const char* strategy : {"dgl-pull", "p3"}) {
    SCOPED_TRACE(strategy);
    ExperimentConfig config = experiment(strategy);
    config.distribution.all_reduce = "hierarchical";
    const StrategyContext context = make_strategy_context(config, cora(), kRanks);
    for (const Plan& plan : plans_for(context)) {
      int reduces = 0;
      for (const Op& op : plan.ops) {
        if (op.kind != OpKind::all_reduce) continue;
        ++reduces;
        EXPECT_EQ(op.ranks_per_machine, kRanksPerMachine);
        const std::int64_t elements = local_elements(plan.parameters, op.parameters);
        auto to = all_reduce_elements_to(plan.rank, kRanks, kRanksPerMachine, elements);
        for (std::int64_t& bytes : to) bytes *= 4;
        EXPECT_EQ(op.bytes_to, to) << "rank " << plan.rank;
        // A rank talks to the next rank of its machine and to its peer on the next machine.
        for (int q = 0; q < kRanks; ++q) {
          const bool peer = q == plan.rank / kRanksPerMachine * kRanksPerMachine +
                                     (plan.rank + 1) % kRanksPerMachine ||
                            q == (plan.rank + kRanksPerMachine) % kRanks;
          EXPECT_EQ(op.bytes_to[index(q)] > 0, peer && q != plan.rank) << "to rank " << q;
        }
      }
      EXPECT_EQ(reduces, 1);
    }
  }
}

// P3 with its partial results summed within each machine: a batch's owner receives one sum per
// other machine instead of every other machine's ranks' partials, and pushes its gradient to one
// rank per machine; within the machine as many bytes move as before, plus the relayed ones.
TEST(MachinePlans, P3SumsPartialResultsWithinEachMachineBeforeTheNetwork) {
  for (const char* model : {"sage", "gat"}) {
    SCOPED_TRACE(model);
    ExperimentConfig config = experiment("p3");
    config.model.kind = model;
    const StrategyContext flat_context = make_strategy_context(config, cora(), kRanks);
    config.distribution.p3_partials = "machine";
    const StrategyContext machine_context = make_strategy_context(config, cora(), kRanks);
    const auto flat = plans_for(flat_context);
    const auto summed = plans_for(machine_context);
    // Per machine (batches differ in size, and a rank relays other machines' batches than its
    // own): on two machines every batch crosses once instead of once per rank of the other.
    for (int m = 0; m < kRanks / kRanksPerMachine; ++m) {
      for (const Traffic traffic : {Traffic::activations, Traffic::gradients}) {
        std::int64_t flat_across = 0;
        std::int64_t summed_across = 0;
        for (int r = m * kRanksPerMachine; r < (m + 1) * kRanksPerMachine; ++r) {
          const auto flat_in = received_by_peer(flat[index(r)], traffic);
          const auto summed_in = received_by_peer(summed[index(r)], traffic);
          const auto flat_out = sent_by_peer(flat[index(r)], traffic);
          const auto summed_out = sent_by_peer(summed[index(r)], traffic);
          for (int q = 0; q < kRanks; ++q) {
            if (same_machine(r, q)) continue;
            flat_across += flat_in[index(q)] + flat_out[index(q)];
            summed_across += summed_in[index(q)] + summed_out[index(q)];
          }
        }
        ASSERT_GT(flat_across, 0);
        EXPECT_EQ(summed_across * kRanksPerMachine, flat_across)
            << "machine " << m << " " << to_string(traffic);
      }
    }
  }
}

// A batch's first-layer graph (pushed, or its seeds where the ranks derive it) crosses to another
// machine once, to the relay of that machine, which forwards it to its mate: every rank ends with
// every peer's payload, and the mate's copy adds only its length to what moves within the machine.
TEST(MachinePlans, P3AnnouncesEachBatchOncePerMachine) {
  for (const char* first_layer : {"push", "derive"}) {
    SCOPED_TRACE(first_layer);
    ExperimentConfig config = experiment("p3");
    config.distribution.p3_first_layer = first_layer;
    const auto flat = plans_for(make_strategy_context(config, cora(), kRanks));
    config.distribution.p3_partials = "machine";
    const auto relayed = plans_for(make_strategy_context(config, cora(), kRanks));
    for (int r = 0; r < kRanks; ++r) {
      const Plan& plan = relayed[index(r)];
      ASSERT_EQ(plan.ops[2].label, "relay announcements");
      EXPECT_EQ(plan.ops[2].ranks_per_machine, kRanksPerMachine);
      const auto flat_in = received_by_peer(flat[index(r)], Traffic::structure);
      const auto flat_out = sent_by_peer(flat[index(r)], Traffic::structure);
      const auto in = received_by_peer(plan, Traffic::structure);
      const auto out = sent_by_peer(plan, Traffic::structure);
      std::int64_t expected_within_in = 0;
      for (int q = 0; q < kRanks; ++q) {
        if (q == r) continue;
        if (same_machine(r, q)) continue;
        // The other machine's rank with r's local index relays r's payload there.
        const bool relay = q % kRanksPerMachine == r % kRanksPerMachine;
        EXPECT_EQ(out[index(q)], relay ? flat_out[index(q)] : 0) << r << " to " << q;
        EXPECT_EQ(in[index(q)], relay ? flat_in[index(q)] : 0) << r << " from " << q;
        // What the mate relays arrives within the machine, after its length.
        if (!relay) expected_within_in += flat_in[index(q)] + 4;
      }
      std::int64_t within_in = 0;
      for (int q = 0; q < kRanks; ++q) {
        if (same_machine(r, q)) within_in += in[index(q)] - (q == r ? 0 : flat_in[index(q)]);
      }
      EXPECT_EQ(within_in, expected_within_in) << "rank " << r;
    }
  }
}

// An exchange within machines is a prologue all_to_all whose bytes stay in the machine.
TEST(MachinePlans, AnExchangeWithinMachinesKeepsItsBytesThere) {
  ExperimentConfig config = experiment("p3");
  config.distribution.p3_partials = "machine";
  const auto plans = plans_for(make_strategy_context(config, cora(), kRanks));
  const Plan& plan = plans[0];
  EXPECT_NO_THROW(plan.validate());
  Plan across = plan;
  across.ops[2].bytes_to[index(kRanks - 1)] = 4;
  EXPECT_THROW(across.validate(), Error);
  Plan body = plan;
  const auto body_exchange =
      std::find_if(body.ops.begin() + body.prologue_ops, body.ops.end(),
                   [](const Op& op) { return op.kind == OpKind::all_to_all; });
  ASSERT_NE(body_exchange, body.ops.end());
  body_exchange->ranks_per_machine = kRanksPerMachine;
  EXPECT_THROW(body.validate(), Error);
}

// The ConfigError's field, or "" when the context builds.
std::string refused_field(const ExperimentConfig& config, int num_ranks) {
  try {
    make_strategy_context(config, cora(), num_ranks);
  } catch (const ConfigError& error) {
    return error.field();
  }
  return "";
}

TEST(MachinePlans, RefusesWhatTheMachinesCannotServe) {
  ExperimentConfig config = experiment("p3");
  config.distribution.feature_store = "machine";
  EXPECT_EQ(refused_field(config, kRanks), "distribution.feature_store");

  config = experiment("dgl-pull");
  config.distribution.feature_store = "machine";
  config.distribution.cache_budget_bytes = 1000000;
  EXPECT_EQ(refused_field(config, kRanks), "distribution.cache_budget_bytes");

  config = experiment("dgl-pull");
  config.distribution.all_reduce = "hierarchical";
  config.distribution.ranks_per_machine = 0;
  EXPECT_EQ(refused_field(config, kRanks), "distribution.ranks_per_machine");

  config.distribution.ranks_per_machine = 3;
  EXPECT_EQ(refused_field(config, kRanks), "distribution.ranks_per_machine");

  config.distribution.ranks_per_machine = kRanksPerMachine;
  EXPECT_EQ(refused_field(config, kRanks), "");

  config.distribution.p3_partials = "machine";
  EXPECT_EQ(refused_field(config, kRanks), "distribution.p3_partials");  // dgl-pull
  config = experiment("p3");
  config.distribution.p3_partials = "machine";
  config.distribution.cache = "features";
  config.distribution.cache_budget_bytes = 1000000;
  EXPECT_EQ(refused_field(config, kRanks), "distribution.p3_partials");
}

}  // namespace
}  // namespace gnnbed
