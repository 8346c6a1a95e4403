// simulate --evaluation replays every rank's evaluation plan after the epoch: on Cora (one chunk
// per rank and layer: its 10,556 in-edges are fewer than a chunk's 65,536), GCN's layers narrow
// (1433 -> 16 -> 7 columns), so each rank sends every peer, per layer, the products of its own
// nodes among the in-neighbours of the peer's destinations (its own nodes, then its validation
// and test nodes), and never a feature row.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

// The distinct in-neighbours of `nodes` that rank `owner` owns, but for `nodes` themselves.
std::int64_t neighbours_owned_by(const Graph& graph, const std::vector<NodeId>& nodes,
                                 const NodePartition& partition, int owner) {
  const std::set<NodeId> own(nodes.begin(), nodes.end());
  std::set<NodeId> found;
  for (const NodeId v : nodes) {
    for (const NodeId u : graph.in_neighbors(v)) {
      if (partition.owner(u) == owner && own.count(u) == 0) found.insert(u);
    }
  }
  return static_cast<std::int64_t>(found.size());
}

TEST(SimulateEvaluation, EveryRankSendsTheProductsItsPeersDestinationsNeed) {
  constexpr int kRanks = 4;
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "evaluation.json").string();
  const CommandResult run = run_command(
      testing::binary_path("sim/simulate") +
      " --workload cora --strategy dgl-pull --model gcn --hidden 16 --layers 2 --batch-size 64"
      " --partitioner contiguous --cluster p3-cluster --cluster-set machines=1"
      " --cluster-set ranks_per_machine=" +
      std::to_string(kRanks) + " --evaluation --quiet -o " + output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(output);
  const nlohmann::json result = nlohmann::json::parse(in)["points"][0]["result"];
  ASSERT_TRUE(result.contains("evaluation")) << result.dump();
  const nlohmann::json& evaluation = result["evaluation"];
  EXPECT_GT(evaluation["seconds"].get<double>(), 0);

  const Dataset& cora = testing::bundled_workload("cora");
  const NodePartition partition = make_partitioner("contiguous")->partition(cora.graph, kRanks, 1);
  std::vector<std::vector<NodeId>> owned(kRanks), targets(kRanks);
  for (NodeId v = 0; v < cora.num_nodes(); ++v) owned[partition.owner(v)].push_back(v);
  for (const auto* split : {&cora.split.val, &cora.split.test}) {
    for (const NodeId v : *split) targets[partition.owner(v)].push_back(v);
  }
  ASSERT_EQ(evaluation["bytes_sent_per_rank"].size(), static_cast<std::size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    std::int64_t products = 0;
    for (int q = 0; q < kRanks; ++q) {
      if (q == r) continue;
      products += neighbours_owned_by(cora.graph, owned[q], partition, r) * 16 +
                  neighbours_owned_by(cora.graph, targets[q], partition, r) * 7;
    }
    const nlohmann::json& sent = evaluation["bytes_sent_per_rank"][r];
    EXPECT_EQ(sent["activations"].get<std::int64_t>(), products * 4) << "rank " << r;
    EXPECT_EQ(sent["features"].get<std::int64_t>(), 0) << "rank " << r;
    EXPECT_GT(sent["structure"].get<std::int64_t>(), 0) << "the announcement";
  }
}

// Evaluation's tensors count on the device too: with 2-neighbour sampling and batches of 8, a
// training iteration on Cora needs about 1.4 MB, the full-neighbourhood evaluation about 8.8 MB.
TEST(SimulateEvaluation, AnEvaluationThatDoesNotFitIsOutOfMemory) {
  const TemporaryDirectory dir;
  const auto run = [&](const std::string& name, const std::string& extra) {
    const std::string output = (dir.path() / name).string();
    const CommandResult result = run_command(
        testing::binary_path("sim/simulate") +
        " --workload cora --batch-size 8 --fanouts 2,2 --cluster p3-cluster --cluster-set "
        "machines=1 --cluster-set ranks_per_machine=2 --cluster-set device.memory_bytes=4000000 "
        "--quiet -o " +
        output + " " + extra);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    std::ifstream in(output);
    const nlohmann::json document = nlohmann::json::parse(in);
    return document["points"][0]["result"];
  };
  const nlohmann::json training = run("training.json", "");
  EXPECT_FALSE(training["out_of_memory"].get<bool>());
  EXPECT_EQ(training["ranks"][0]["evaluation_device_peak_bytes"].get<std::int64_t>(), 0);
  const nlohmann::json evaluated = run("evaluated.json", "--evaluation");
  EXPECT_TRUE(evaluated["out_of_memory"].get<bool>());
  EXPECT_NE(evaluated["out_of_memory_reason"].get<std::string>().find("to evaluate"),
            std::string::npos);
  for (const auto& rank : evaluated["ranks"]) {
    EXPECT_GT(rank["evaluation_device_peak_bytes"].get<std::int64_t>(), 4000000);
    EXPECT_LT(rank["device_peak_bytes"].get<std::int64_t>(), 4000000);
  }
}

}  // namespace
}  // namespace gnnbed
