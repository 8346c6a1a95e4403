// A rank's data from a sharded workload against the same rank's data cut from the whole dataset:
// its LocalStore holds the same structure, features (byte for byte) and labels, its batch schedule
// lists the same seeds, and load_rank_workload builds the same strategy context. Shard sets cut for
// another run are rejected with a ConfigError naming the field to change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "exec/distributed/local_store.hpp"
#include "exec/distributed/rank_workload.hpp"
#include "strategies/batch_schedule.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/shard_format.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

const Dataset& cora() { return testing::bundled_workload("cora"); }

template <typename T>
std::vector<T> to_vector(std::span<const T> values) {
  return {values.begin(), values.end()};
}

ExperimentConfig experiment(const std::string& strategy, const std::string& structure,
                            const std::string& partitioner, const std::filesystem::path& shards) {
  ExperimentConfig config;
  config.workload.source = "shards";
  config.workload.path = shards.string();
  config.model.kind = "sage";
  config.training.batch_size = 16;
  config.training.fanouts = {10, 5};
  config.distribution.strategy = strategy;
  config.distribution.structure = structure;
  config.distribution.partitioner = partitioner;
  config.distribution.partition_seed = 3;
  return config;
}

ShardLayout layout_of(const ExperimentConfig& config, int num_ranks) {
  return {num_ranks, config.distribution.partitioner, config.distribution.partition_seed,
          config.distribution.structure, config.distribution.strategy == "p3" ? "columns" : "rows"};
}

// Everything the rank's features hold: its rows or its columns of every node.
std::vector<float> held_features(const LocalStore& store) {
  const FeaturePlacement& placement = store.placement();
  std::vector<NodeId> nodes(store.owned_nodes().begin(), store.owned_nodes().end());
  if (!placement.owned_rows_only) {
    nodes.resize(static_cast<std::size_t>(store.partition().num_nodes()));
    std::iota(nodes.begin(), nodes.end(), NodeId{0});
  }
  std::vector<float> values(
      nodes.size() * static_cast<std::size_t>(placement.column_end - placement.column_begin));
  store.gather_features(nodes, placement.column_begin, placement.column_end, values.data());
  return values;
}

class RankShards
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string, int>> {};

TEST_P(RankShards, HoldWhatTheLocalStoreOfTheWholeDatasetHolds) {
  const auto& [strategy, structure, partitioner, num_ranks] = GetParam();
  const TemporaryDirectory dir;
  const ExperimentConfig config = experiment(strategy, structure, partitioner, dir.path());
  write_shards(cora(), layout_of(config, num_ranks), dir.path());
  ExperimentConfig whole_config = config;
  whole_config.workload.source = "cora";
  const StrategyContext whole_context = make_strategy_context(whole_config, cora(), num_ranks);
  const BatchSchedule whole_schedule(cora().split.train, whole_context.partition, 16, 5);
  for (int r = 0; r < num_ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    RankWorkload sharded = load_rank_workload(config, num_ranks, r);
    const StrategyContext& context = sharded.context;
    EXPECT_EQ(context.partition.nodes_of(r), whole_context.partition.nodes_of(r));
    EXPECT_EQ(context.feature_dim, 1433);
    EXPECT_EQ(context.model.layer(1).out_dim, 7);
    EXPECT_EQ(context.structure_partitioned, structure == "partitioned");
    EXPECT_EQ(sharded.dataset_summary, cora().summary());

    const LocalStore whole(cora(), whole_context, r,
                           make_strategy(strategy)->feature_placement(whole_context, r));
    const LocalStore store(std::move(sharded.shard));
    EXPECT_EQ(store.placement(), whole.placement());
    EXPECT_EQ(to_vector(store.owned_nodes()), to_vector(whole.owned_nodes()));
    EXPECT_EQ(to_vector(store.structure().offsets()), to_vector(whole.structure().offsets()));
    EXPECT_EQ(to_vector(store.structure().sources()), to_vector(whole.structure().sources()));
    EXPECT_EQ(store.structure_bytes(), whole.structure_bytes());
    EXPECT_EQ(store.feature_bytes(), whole.feature_bytes());
    const std::vector<float> features = held_features(store);
    const std::vector<float> expected = held_features(whole);
    ASSERT_EQ(features.size(), expected.size());
    EXPECT_EQ(std::memcmp(features.data(), expected.data(), features.size() * sizeof(float)), 0);
    for (const NodeId v : store.owned_nodes()) ASSERT_EQ(store.label(v), whole.label(v));
    EXPECT_THROW(store.label(static_cast<NodeId>(
                     whole_context.partition.nodes_of((r + 1) % num_ranks).front())),
                 Error);

    // The rank's schedule, from its own training nodes and every rank's count.
    std::vector<std::int64_t> counts;
    for (const SplitCounts& c : store.shard().split_counts) counts.push_back(c.train);
    const BatchSchedule schedule(r, store.shard().split.train, counts, 16, 5);
    EXPECT_EQ(schedule.iterations_per_epoch(), whole_schedule.iterations_per_epoch());
    for (int epoch = 1; epoch <= 2; ++epoch) {
      for (int i = 0; i < schedule.iterations_per_epoch(); ++i) {
        EXPECT_EQ(schedule.seeds(r, epoch, i), whole_schedule.seeds(r, epoch, i));
        EXPECT_EQ(schedule.seeds_in_iteration(epoch, i),
                  whole_schedule.seeds_in_iteration(epoch, i));
      }
    }
    EXPECT_THROW(schedule.seeds((r + 1) % num_ranks, 1, 0), Error);
  }
}

std::string rank_shards_name(const ::testing::TestParamInfo<RankShards::ParamType>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                     std::get<2>(info.param) + "_" + std::to_string(std::get<3>(info.param));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Layouts, RankShards,
                         ::testing::Values(std::make_tuple("dgl-pull", "replicated", "hash", 2),
                                           std::make_tuple("dgl-pull", "partitioned", "metis", 3),
                                           std::make_tuple("p3", "partitioned", "hash", 4),
                                           std::make_tuple("p3", "replicated", "metis", 2)),
                         rank_shards_name);

TEST(RankWorkload, ShardsCutForAnotherRunNameTheFieldToChange) {
  const TemporaryDirectory dir;
  const ExperimentConfig config = experiment("dgl-pull", "partitioned", "hash", dir.path());
  write_shards(cora(), layout_of(config, 2), dir.path());
  EXPECT_NO_THROW(load_rank_workload(config, 2, 1));
  auto field_of = [&](const ExperimentConfig& run, int num_ranks) {
    try {
      load_rank_workload(run, num_ranks, 0);
    } catch (const ConfigError& error) {
      return error.field();
    }
    return std::string("(none)");
  };
  EXPECT_EQ(field_of(config, 3), "ranks");
  ExperimentConfig other = config;
  other.distribution.partitioner = "metis";
  EXPECT_EQ(field_of(other, 2), "distribution.partitioner");
  other = config;
  other.distribution.partition_seed = 4;
  EXPECT_EQ(field_of(other, 2), "distribution.partition_seed");
  other = config;
  other.distribution.structure = "replicated";
  EXPECT_EQ(field_of(other, 2), "distribution.structure");
  other = config;
  other.distribution.strategy = "p3";
  EXPECT_EQ(field_of(other, 2), "distribution.strategy");
  other = config;
  other.workload.path.clear();
  EXPECT_EQ(field_of(other, 2), "workload.path");
}

}  // namespace
}  // namespace gnnbed
