// P3's caching greedy (strategies/replication.hpp) and its configuration: the fewest ranks that
// hold every partition within the budget, groups of consecutive ranks, largest partitions first
// to the member with the most room, servers within the group; the budget and the choice of what
// to cache are validated with the field's name.
#include <gtest/gtest.h>

#include "strategies/caching.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/replication.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/refused_field.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

std::vector<std::int64_t> all(int n, std::int64_t value) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(n), value);
}

TEST(Replication, NothingIsReplicatedWithoutBudget) {
  const Replication none = replicate_partitions(all(4, 10), all(4, 0));
  EXPECT_FALSE(none.any());
  EXPECT_EQ(none.group_size(4), 4);
  EXPECT_EQ(none, Replication());
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(none.cached(r).empty());
    for (int q = 0; q < 4; ++q) {
      EXPECT_EQ(none.server(r, q), q) << "without caching every partition comes from its owner";
      EXPECT_EQ(none.holds(r, q), r == q);
    }
  }
  EXPECT_FALSE(replicate_partitions(all(4, 10), all(4, 9)).any()) << "no partition fits";
}

TEST(Replication, EnoughBudgetForEverythingPutsEveryPartitionOnEveryRank) {
  const Replication full = replicate_partitions(all(4, 10), all(4, 30));
  EXPECT_EQ(full.group_size(4), 1);
  for (int r = 0; r < 4; ++r) {
    for (int q = 0; q < 4; ++q) EXPECT_EQ(full.server(r, q), r);
    EXPECT_EQ(full.held_bytes(r, all(4, 10)), 40);
  }
  EXPECT_EQ(full.cached(2), (std::vector<int>{0, 1, 3}));
}

TEST(Replication, TheInputFitsTheFewestRanksAndIsCopiedOntoTheOthers) {
  // Room for one more partition each: pairs of ranks hold everything, each member one of the
  // other pair's partitions (the first member takes the first, having as much room).
  const Replication pairs = replicate_partitions(all(4, 10), all(4, 10));
  EXPECT_EQ(pairs.group_size(4), 2);
  EXPECT_EQ(pairs.cached(0), std::vector<int>{2});
  EXPECT_EQ(pairs.cached(1), std::vector<int>{3});
  EXPECT_EQ(pairs.cached(2), std::vector<int>{0});
  EXPECT_EQ(pairs.cached(3), std::vector<int>{1});
  EXPECT_EQ(pairs.server(0, 1), 1) << "its group mate, the owner";
  EXPECT_EQ(pairs.server(0, 3), 1) << "its group mate's replica";
  EXPECT_EQ(pairs.server(0, 2), 0);
  EXPECT_EQ(pairs.server(3, 0), 2);

  // 16 ranks, room for 3 more partitions: groups of 4 (the P3 cluster's machines); with groups
  // of 3 (5 groups, the last of 4) a member would need room for 13 / 3 > 3 partitions.
  const Replication machines = replicate_partitions(all(16, 5), all(16, 15));
  EXPECT_EQ(machines.group_size(16), 4);
  EXPECT_EQ(machines.cached(5), (std::vector<int>{1, 9, 13})) << "round robin over 4 members";
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(machines.cached(r).size(), 3u);
    for (int q = 0; q < 16; ++q) EXPECT_EQ(machines.server(r, q) / 4, r / 4) << r << " " << q;
  }
  // Room for one more: two groups of 8 (the smallest groups with one copy per member).
  const Replication halves = replicate_partitions(all(16, 5), all(16, 5));
  EXPECT_EQ(halves.group_size(16), 8);
  EXPECT_EQ(halves.cached(0), std::vector<int>{8});
  EXPECT_EQ(halves.server(15, 0), 8);
}

TEST(Replication, UnevenRankCountsMakeGroupsDifferingByOne) {
  // 5 ranks, room for 2 more partitions each: groups of 2, and floor(5 / 2) = 2 groups of them,
  // ranks {0, 1} and {2, 3, 4}.
  const Replication replication = replicate_partitions(all(5, 1), all(5, 2));
  EXPECT_EQ(replication.group_size(5), 2);
  EXPECT_EQ(replication.cached(0), (std::vector<int>{2, 4}));
  EXPECT_EQ(replication.cached(1), std::vector<int>{3});
  EXPECT_EQ(replication.cached(2), std::vector<int>{0});
  EXPECT_EQ(replication.cached(3), std::vector<int>{1});
  EXPECT_TRUE(replication.cached(4).empty());
  EXPECT_EQ(replication.server(4, 1), 3);
}

TEST(Replication, LargestPartitionsGoFirstToTheRoomiestMember) {
  // Ranks 0 and 1 must take partitions 2 (size 6) and 3 (size 5) with budgets 6 and 5: only
  // largest-first finds it (smallest-first would put 3 on rank 0 and leave 2 nowhere).
  const Replication replication = replicate_partitions({1, 1, 6, 5}, {6, 5, 1, 1});
  EXPECT_EQ(replication.group_size(4), 2);
  EXPECT_EQ(replication.cached(0), std::vector<int>{2});
  EXPECT_EQ(replication.cached(1), std::vector<int>{3});
  EXPECT_THROW(replicate_partitions({1, 2}, {1}), Error);
}

TEST(Replication, RejectsServersThatDoNotHoldThePartition) {
  EXPECT_THROW(Replication({{}, {}}, {{0, 0}, {1, 1}}, 1), Error) << "rank 0 holds no copy of 1";
  EXPECT_THROW(Replication({{1}, {}}, {{0, 1}, {0, 1}}, 1), Error)
      << "rank 0 holds 1 but does not serve it to itself";
  EXPECT_NO_THROW(Replication({{1}, {}}, {{0, 0}, {0, 1}}, 1));
}

TEST(Replication, PartitionSizesCountOwnedNodesAndInEdges) {
  const Dataset& cora = testing::bundled_workload("cora");
  const NodePartition partition = NodePartition::hashed(cora.num_nodes(), 3, 1);
  const PartitionSizes sizes = partition_sizes(cora.graph, partition);
  std::int64_t nodes = 0;
  std::int64_t edges = 0;
  for (int q = 0; q < 3; ++q) {
    nodes += sizes.nodes[static_cast<std::size_t>(q)];
    edges += sizes.edges[static_cast<std::size_t>(q)];
    EXPECT_EQ(sizes.nodes[static_cast<std::size_t>(q)],
              static_cast<std::int64_t>(partition.nodes_of(q).size()));
  }
  EXPECT_EQ(nodes, cora.num_nodes());
  EXPECT_EQ(edges, cora.graph.num_edges());
  const auto bytes = structure_partition_bytes(sizes);
  EXPECT_EQ(bytes[1], 8 * sizes.nodes[1] + 4 * sizes.edges[1]);
}

ExperimentConfig cached_experiment(const std::string& strategy, const std::string& structure,
                                   std::int64_t budget, const std::string& cache) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.training.batch_size = 16;
  config.training.fanouts = {10, 5};
  config.distribution.strategy = strategy;
  config.distribution.structure = structure;
  config.distribution.cache_budget_bytes = budget;
  config.distribution.cache = cache;
  return config;
}

TEST(Caching, BothCopiesEachRanksStructureAndFeaturesTogether) {
  const Dataset& cora = testing::bundled_workload("cora");
  const StrategyContext plain =
      make_strategy_context(cached_experiment("p3", "partitioned", 0, "both"), cora, 4);
  const PartitionSizes sizes = partition_sizes(cora.graph, plain.partition);
  const auto structure = structure_partition_bytes(sizes);
  const auto features = feature_partition_bytes(*make_strategy("p3"), plain, sizes);
  std::vector<std::int64_t> together;
  for (std::size_t q = 0; q < 4; ++q) together.push_back(structure[q] + features[q]);
  // Room for one more structure and feature partition: pairs of ranks, for both.
  const std::int64_t one = *std::max_element(together.begin(), together.end());
  const StrategyContext both =
      make_strategy_context(cached_experiment("p3", "partitioned", one, "both"), cora, 4);
  EXPECT_EQ(both.structure_replicas, replicate_partitions(together, all(4, one)));
  EXPECT_EQ(both.structure_replicas.group_size(4), 2);
  EXPECT_EQ(both.feature_replicas, both.structure_replicas);
  const auto resident = resident_bytes(*make_strategy("p3"), both, cora.graph, sizes);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(resident[static_cast<std::size_t>(r)],
              both.structure_replicas.held_bytes(r, together));
  }
  // The same budget for one kind only copies more of it.
  const StrategyContext structure_only =
      make_strategy_context(cached_experiment("p3", "partitioned", one, "structure"), cora, 4);
  EXPECT_EQ(structure_only.structure_replicas.group_size(4), 1);
  EXPECT_FALSE(structure_only.feature_replicas.any());
  // Replicated structure: the budget goes to features.
  const StrategyContext replicated = make_strategy_context(
      cached_experiment("dgl-pull", "replicated", 1LL << 40, "both"), cora, 4);
  EXPECT_FALSE(replicated.structure_replicas.any());
  EXPECT_EQ(replicated.feature_replicas.group_size(4), 1);
  const auto everything = resident_bytes(*make_strategy("dgl-pull"), replicated, cora.graph,
                                         partition_sizes(cora.graph, replicated.partition));
  const std::int64_t whole =
      8 * (cora.num_nodes() + 1) + 4 * cora.graph.num_edges() + cora.num_nodes() * 1433 * 4;
  for (const std::int64_t bytes : everything) EXPECT_EQ(bytes, whole) << "all on every rank";
}

TEST(Caching, ConfigurationErrorsNameTheField) {
  const auto field_of = testing::refused_field;
  EXPECT_EQ(field_of("distribution.cache_budget_bytes=-1"), "distribution.cache_budget_bytes");
  EXPECT_EQ(field_of("distribution.cache_budget_bytes=1.5"), "distribution.cache_budget_bytes");
  EXPECT_EQ(field_of("distribution.cache=graph"), "distribution.cache");
  EXPECT_EQ(field_of("distribution.cache_budget_bytes=1e9"), "(accepted)");
  const ExperimentConfig config = resolve_experiment(
      "", {"distribution.cache_budget_bytes=2e9", "distribution.cache=features"});
  EXPECT_EQ(config.distribution.cache_budget_bytes, 2000000000);
  EXPECT_EQ(to_json(config)["distribution"]["cache"], "features");

  const Dataset& cora = testing::bundled_workload("cora");
  try {
    make_strategy_context(cached_experiment("p3", "replicated", 1000, "structure"), cora, 2);
    FAIL() << "replicated structure has nothing to cache";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "distribution.cache");
  }
}

}  // namespace
}  // namespace gnnbed
