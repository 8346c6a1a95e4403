// What a probe of the modelled cluster finds (sim/probed_costs.hpp): NeutronStar's Tv, Te and Tc
// from the device's cost model and the links, filled where the configuration leaves them unset,
// so that the hybrid decides for the cluster it runs on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/probed_costs.hpp"
#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

TEST(ProbedCosts, NeutronStarsCostsComeFromTheDevicesRatesAndTheNarrowestLink) {
  // p3-cluster's P100: dense 4e12 and sparse 1.2e11 flop/s, 4e11 B/s; PCIe 12 GB/s; 10 Gbit/s NIC.
  const ClusterSpec cluster = load_cluster("p3-cluster", {});
  const NeutronStarCosts costs = neutronstar_costs(cluster, 16);
  EXPECT_DOUBLE_EQ(costs.vertex_seconds, 2.0 * 16 / 4e12 + 8 / 4e11);
  EXPECT_DOUBLE_EQ(costs.edge_seconds, 2 / 1.2e11);
  EXPECT_DOUBLE_EQ(costs.transfer_seconds, 4 / 1.25e9);
  const ClusterSpec fast = load_cluster("p3-cluster", {"nic.bandwidth_gbps=1000"});
  EXPECT_DOUBLE_EQ(neutronstar_costs(fast, 16).transfer_seconds, 4 / 12e9);  // PCIe is narrower
}

TEST(ProbedCosts, OnlyUnsetOptionsOfTheStrategyThatUsesThemAreProbed) {
  const ClusterSpec cluster = load_cluster("p3-cluster", {});
  ExperimentConfig config;
  config.distribution.strategy = "neutronstar";
  config.distribution.neutronstar_edge_seconds = 1e-9;
  nlohmann::json probed;
  const ExperimentConfig filled = with_probed_costs(config, cluster, probed);
  EXPECT_DOUBLE_EQ(filled.distribution.neutronstar_edge_seconds.value(), 1e-9);
  EXPECT_DOUBLE_EQ(filled.distribution.neutronstar_transfer_seconds.value(), 4 / 1.25e9);
  EXPECT_EQ(probed.size(), 2U);
  EXPECT_FALSE(probed.contains("neutronstar_edge_seconds"));
  config.distribution.strategy = "roc";
  EXPECT_FALSE(with_probed_costs(config, cluster, probed)
                   .distribution.neutronstar_transfer_seconds.has_value());
  EXPECT_TRUE(probed.empty());
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The activation bytes the ranks of a hybrid neutronstar run send per epoch, per NIC bandwidth.
std::vector<std::int64_t> activation_bytes(const std::string& extra) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "hybrid.json").string();
  const CommandResult run = run_command(
      testing::binary_path("sim/simulate") +
      " --workload cora --model gcn --batch-size 0 --strategy neutronstar --cluster p3-cluster"
      " --sweep cluster.nic.bandwidth_gbps=0.1,10,1000 --quiet -o " +
      output + " " + extra);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::int64_t> bytes;
  const nlohmann::json document = read_json(output);
  for (const nlohmann::json& point : document["points"]) {
    std::int64_t sum = 0;
    for (const auto& rank : point["result"]["ranks"]) {
      sum += rank["bytes_sent_per_epoch"]["activations"].get<std::int64_t>();
    }
    bytes.push_back(sum);
  }
  return bytes;
}

TEST(ProbedCosts, TheHybridFetchesMoreDependenciesTheFasterTheProbedNetwork) {
  const std::vector<std::int64_t> probed = activation_bytes("");
  ASSERT_EQ(probed.size(), 3U);
  EXPECT_LT(probed[0], probed[1]);
  EXPECT_LT(probed[1], probed[2]);
  // A cost the configuration sets is kept: the same choice at every bandwidth.
  const std::vector<std::int64_t> set =
      activation_bytes("--set distribution.neutronstar_transfer_seconds=3.2e-9");
  EXPECT_EQ(set[0], set[1]);
  EXPECT_EQ(set[1], set[2]);
  EXPECT_EQ(set[1], probed[1]);  // 10 Gbit/s is what 3.2e-9 s per value stands for
}

}  // namespace
}  // namespace gnnbed
