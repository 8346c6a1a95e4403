// simulate runs roc: one full-graph step per epoch whose every rank receives exactly its halo's
// features (the shape the partition gives it; Cora's rows sparse), and whose result records each
// rank's part with its simulated busy time, which a cost-balanced run then fits and records after
// its own.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "strategies/partition_costs.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The bytes of the sparse feature rows of part r's halo (the distinct in-neighbours of its nodes
// that other parts own): 4 per row and 8 per stored entry, as Cora's bag of words travels.
std::int64_t halo_feature_bytes(const Dataset& cora, const NodePartition& partition, int r) {
  const auto& sparse = dynamic_cast<const SparseFeatures&>(*cora.features);
  std::set<NodeId> halo;
  for (const NodeId v : partition.nodes_of(r)) {
    for (const NodeId u : cora.graph.in_neighbors(v)) {
      if (partition.owner(u) != r) halo.insert(u);
    }
  }
  std::int64_t bytes = 0;
  for (const NodeId u : halo) {
    const auto row = static_cast<std::size_t>(u);
    bytes += 4 + 8 * (sparse.offsets()[row + 1] - sparse.offsets()[row]);
  }
  return bytes;
}

std::string simulate_roc(const std::string& partitioner, const std::string& output) {
  return testing::binary_path("sim/simulate") +
         " --workload cora --strategy roc --model gcn --batch-size 0 --cluster p3-cluster "
         "--partitioner " +
         partitioner + " --quiet -o " + output;
}

TEST(SimulateRoc, EveryRankReceivesItsHaloFeaturesAndRecordsItsPartForTheCostModel) {
  const TemporaryDirectory dir;
  const std::string contiguous = (dir.path() / "contiguous.json").string();
  const CommandResult run = run_command(simulate_roc("contiguous", contiguous));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json result = read_json(contiguous)["points"][0]["result"];
  ASSERT_FALSE(result["out_of_memory"].get<bool>());
  EXPECT_EQ(result["iterations_per_epoch"].get<int>(), 1) << "one full-graph step per epoch";
  EXPECT_GT(result["epoch_seconds"].get<double>(), 0);

  const Dataset& cora = testing::bundled_workload("cora");
  const Graph& graph = cora.graph;
  const NodePartition partition = make_partitioner("contiguous")->partition(graph, 16, 1);
  const std::vector<PartitionShape> shapes = partition_shapes(graph, partition);
  ASSERT_EQ(result["ranks"].size(), 16U);
  const nlohmann::json& samples = result["partition_costs"]["samples"];
  ASSERT_EQ(samples.size(), 16U);
  for (std::size_t r = 0; r < 16; ++r) {
    const nlohmann::json& rank = result["ranks"][r];
    EXPECT_EQ(rank["bytes_received_per_epoch"]["features"].get<std::int64_t>(),
              halo_feature_bytes(cora, partition, static_cast<int>(r)))
        << "rank " << r;
    EXPECT_GT(rank["bytes_received_per_epoch"]["activations"].get<std::int64_t>(), 0);
    EXPECT_EQ(samples[r]["remote_neighbours"].get<std::int64_t>(), shapes[r].remote_neighbours);
    EXPECT_EQ(samples[r]["edges"].get<std::int64_t>(), shapes[r].edges);
    EXPECT_DOUBLE_EQ(samples[r]["seconds"].get<double>(),
                     rank["busy_seconds_per_epoch"].get<double>());
  }

  const std::string balanced = (dir.path() / "balanced.json").string();
  const CommandResult refit =
      run_command(simulate_roc("cost-balanced", balanced) + " --partition-costs " + contiguous);
  ASSERT_EQ(refit.exit_code, 0) << refit.output;
  const nlohmann::json costs = read_json(balanced)["points"][0]["result"]["partition_costs"];
  EXPECT_EQ(costs["model"]["fitted_on_samples"].get<int>(), 16);
  EXPECT_EQ(costs["samples"].size(), 32U) << "the contiguous run's, then this run's";
  EXPECT_EQ(costs["predicted_seconds"].size(), 16U);
}

TEST(SimulateRoc, AMiniBatchSizeIsRefusedWithTheFieldToChange) {
  const testing::TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run =
      run_command(testing::binary_path("sim/simulate") +
                  " --workload cora --strategy roc --quiet -o " + result.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("training.batch_size"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result));
}

}  // namespace
}  // namespace gnnbed
