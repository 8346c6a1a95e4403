// Plans with P3's caching move exactly the bytes that the copies make local fewer, and the rest
// within groups: a rank holding a copy of a structure partition samples its nodes itself (no
// request, no reply) and asks its group mates for the others; DGL-pull pulls no row it holds a
// copy of; P3 sends its first-layer graph to, pulls partial activations from and
// pushes gradients to the members of its group only, and all-reduces the first layer's weights,
// which it then holds whole. The sampled mini-batches are the same with and without copies.
#include <gtest/gtest.h>

#include "strategies/plan/block_codec.hpp"
#include "strategies/caching.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

StrategyContext plain_context(int num_ranks, bool partitioned) {
  TrainingConfig training;
  training.batch_size = 16;
  training.fanouts = {10, 5};
  return StrategyContext{num_ranks,   ModelSpec(ModelConfig{"sage", 2, 16, 0.5}, 1433, 7),
                         training,    NodePartition::hashed(2708, num_ranks, 3),
                         partitioned, 1433,
                         {},          {},
                         {}};
}

// `context` with the copies a budget of `partitions` of the largest partition buys per rank.
StrategyContext cached(StrategyContext context, const std::string& strategy,
                       const std::string& cache, double partitions) {
  const PartitionSizes sizes = partition_sizes(cora().graph, context.partition);
  const std::vector<std::int64_t> bytes =
      cache == "structure" ? structure_partition_bytes(sizes)
                           : feature_partition_bytes(*make_strategy(strategy), context, sizes);
  DistributionConfig distribution;
  distribution.cache = cache;
  distribution.cache_budget_bytes = static_cast<std::int64_t>(
      partitions * static_cast<double>(*std::max_element(bytes.begin(), bytes.end())));
  add_replicas(context, distribution, *make_strategy(strategy), sizes);
  return context;
}

std::vector<Plan> plans_for(const std::string& strategy, const StrategyContext& context) {
  const BatchSchedule schedule(cora().split.train, context.partition, context.training.batch_size,
                               5);
  return plan_iteration(*make_strategy(strategy), context, cora().graph, schedule, 9, 1, 0);
}

const Block& own_block(const Plan& plan, std::size_t layer) {
  return *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[layer])].block;
}

std::int64_t sampling_bytes(const Plan& plan) {
  std::int64_t bytes = 0;
  for (const SamplingHop& hop : plan.ops[0].sampling_hops) {
    for (std::size_t q = 0; q < hop.request_bytes_to.size(); ++q)
      bytes += hop.request_bytes_to[q] + hop.reply_bytes_from[q];
  }
  return bytes;
}

TEST(CachedPlans, StructureCopiesTakeTheirNodesRequestsAndRepliesOffTheNetwork) {
  const StrategyContext plain = plain_context(4, true);
  const StrategyContext pairs = cached(plain, "dgl-pull", "structure", 1.0);
  ASSERT_EQ(pairs.structure_replicas.group_size(4), 2);
  ASSERT_FALSE(pairs.feature_replicas.any());
  const auto without = plans_for("dgl-pull", plain);
  const auto with = plans_for("dgl-pull", pairs);
  for (int r = 0; r < 4; ++r) {
    const Plan& a = without[static_cast<std::size_t>(r)];
    const Plan& b = with[static_cast<std::size_t>(r)];
    // The same mini-batch, with fewer bytes: per frontier node of a copied part, a 4-byte id
    // request and a reply of a count and the sampled ids.
    std::int64_t saved = 0;
    for (std::size_t l = 0; l < 2; ++l) {
      const Block& block = own_block(b, l);
      EXPECT_EQ(block.src_nodes, own_block(a, l).src_nodes);
      EXPECT_EQ(block.offsets, own_block(a, l).offsets);
      for (std::int64_t d = 0; d < block.num_dst; ++d) {
        const int owner = plain.partition.owner(block.src_nodes[static_cast<std::size_t>(d)]);
        if (owner == r || !pairs.structure_replicas.holds(r, owner)) continue;
        saved += 4 + 4 +
                 4 * (block.offsets[static_cast<std::size_t>(d) + 1] -
                      block.offsets[static_cast<std::size_t>(d)]);
      }
    }
    EXPECT_GT(saved, 0) << "rank " << r;
    EXPECT_EQ(sampling_bytes(b), sampling_bytes(a) - saved) << "rank " << r;
    for (const SamplingHop& hop : b.ops[0].sampling_hops) {
      for (int q = 0; q < 4; ++q) {
        if (q / 2 != r / 2) {
          EXPECT_EQ(hop.request_bytes_to[static_cast<std::size_t>(q)], 0) << "outside the group";
        }
      }
    }
    EXPECT_EQ(b.bytes_sent()[Traffic::features], a.bytes_sent()[Traffic::features]);
  }

  const StrategyContext everywhere = cached(plain, "dgl-pull", "structure", 3.0);
  ASSERT_EQ(everywhere.structure_replicas.group_size(4), 1);
  for (const Plan& plan : plans_for("dgl-pull", everywhere)) {
    EXPECT_EQ(sampling_bytes(plan), 0) << "every rank samples everything itself";
  }
}

TEST(CachedPlans, DglPullPullsOnlyTheRowsItHoldsNoCopyOf) {
  const StrategyContext plain = plain_context(4, false);
  const StrategyContext pairs = cached(plain, "dgl-pull", "features", 1.0);
  ASSERT_EQ(pairs.feature_replicas.group_size(4), 2);
  for (const Plan& plan : plans_for("dgl-pull", pairs)) {
    std::int64_t pulled = 0;
    for (const NodeId v : own_block(plan, 0).src_nodes)
      pulled += !pairs.feature_replicas.holds(plan.rank, plain.partition.owner(v));
    EXPECT_EQ(plan.bytes_received()[Traffic::features], pulled * 1433 * 4) << "rank " << plan.rank;
    const Op& announce = plan.op_labelled("announce");
    EXPECT_EQ(announce.total_bytes_to(), pulled * 4);
    EXPECT_EQ(announce.total_bytes_to(), announce.bytes_to[static_cast<std::size_t>(plan.rank ^ 1)])
        << "every request goes to the group mate";
  }
  const StrategyContext everywhere = cached(plain, "dgl-pull", "features", 3.0);
  for (const Plan& plan : plans_for("dgl-pull", everywhere)) {
    EXPECT_EQ(plan.bytes_sent().total(), plan.op_labelled("all_reduce gradients").total_bytes_to())
        << "nothing but the gradients moves";
  }
}

TEST(CachedPlans, P3RunsTheFirstLayerWithinGroupsAndAllReducesItsWeights) {
  const StrategyContext plain = plain_context(4, false);
  const StrategyContext pairs = cached(plain, "p3", "features", 1.0);
  ASSERT_EQ(pairs.feature_replicas.group_size(4), 2);
  const std::int64_t data_parallel = 16 + 2 * 16 * 7 + 7;
  const std::int64_t first_weights = 2 * 1433 * 16;
  for (const Plan& plan : plans_for("p3", pairs)) {
    const Block& first = own_block(plan, 0);
    const std::int64_t n1 = first.num_dst;
    EXPECT_EQ(plan.bytes_sent()[Traffic::features], 0);
    // One group mate instead of three peers.
    EXPECT_EQ(plan.op_labelled("announce").total_bytes_to(), encoded_block_bytes(first));
    EXPECT_EQ(plan.op_labelled("pull partial activations").total_bytes_from(), n1 * 16 * 4);
    EXPECT_EQ(plan.op_labelled("push layer0 gradients").total_bytes_to(), n1 * 16 * 4);
    EXPECT_EQ(plan.op_labelled("all_reduce gradients").total_bytes_to(),
              4 * ring_all_reduce_elements_sent(plan.rank, 4, data_parallel + first_weights));
    for (const ParameterSpec& p : plan.parameters) EXPECT_EQ(p.local_rows(), p.rows) << p.name;
  }
  // Between them, the two members of a group cover every column of each other's batches once.
  const auto plans = plans_for("p3", pairs);
  for (const int owner : {0, 1}) {
    std::int64_t columns = 0;
    for (const int member : {0, 1}) {
      for (const Op& op : plans[static_cast<std::size_t>(member)].ops) {
        if (op.kind == OpKind::layer_forward && op.partial && op.instance % 4 == owner)
          columns += op.column_end - op.column_begin;
      }
    }
    EXPECT_EQ(columns, 1433) << "batch of rank " << owner;
  }

  // Groups of one: the first layer is data parallel, nothing moves but the gradients.
  const StrategyContext everywhere = cached(plain, "p3", "features", 3.0);
  for (const Plan& plan : plans_for("p3", everywhere)) {
    EXPECT_EQ(plan.bytes_sent().total(), plan.op_labelled("all_reduce gradients").total_bytes_to());
    const Op& forward =
        plan.op_labelled("layer0.partial_forward for rank " + std::to_string(plan.rank));
    EXPECT_EQ(forward.column_end - forward.column_begin, 1433);
  }
}

TEST(CachedPlans, ABudgetThatBuysNoCopyChangesNoPlan) {
  for (const std::string strategy : {"dgl-pull", "p3"}) {
    const StrategyContext plain = plain_context(3, true);
    const StrategyContext none = cached(plain, strategy, "features", 0.9);
    ASSERT_FALSE(none.feature_replicas.any());
    const auto a = plans_for(strategy, plain);
    const auto b = plans_for(strategy, none);
    for (std::size_t r = 0; r < a.size(); ++r) EXPECT_EQ(a[r].to_json(), b[r].to_json());
  }
}

}  // namespace
}  // namespace gnnbed
