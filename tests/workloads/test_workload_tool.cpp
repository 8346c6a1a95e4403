// The `workload` program end to end: convert to the binary format and read it back, partition,
// and reject bad commands with a clear line and a non-zero exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;

std::string workload() { return testing::binary_path("workloads/workload"); }

// The JSON report is the last thing the program prints.
nlohmann::json report_of(const CommandResult& run) {
  return nlohmann::json::parse(run.output.substr(run.output.find("\n{") + 1));
}

TEST(WorkloadTool, ConvertThenInfoOnTheBinaryFileGivesTheSameCounts) {
  const testing::TemporaryDirectory dir;
  const std::string binary = (dir.path() / "cora.bin").string();
  const CommandResult convert =
      run_command(workload() + " convert --workload cora --output " + binary);
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  const CommandResult info = run_command(workload() + " info --workload binary --path " + binary);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const nlohmann::json report = report_of(info);
  EXPECT_EQ(report["num_nodes"], 2708);
  EXPECT_EQ(report["num_edges"], 10556);
  EXPECT_EQ(report["feature_dim"], 1433);
  EXPECT_EQ(report["num_train"], 140);
  EXPECT_EQ(report["max_in_degree"], 168);
}

TEST(WorkloadTool, ConvertWithShardsWritesAManifestAndOneFilePerRank) {
  const testing::TemporaryDirectory dir;
  const auto shards = dir.path() / "cora-3";
  const CommandResult convert =
      run_command(workload() + " convert --workload cora --output " + shards.string() +
                  " --shards 3 --partitioner metis --partition-seed 2 --structure partitioned"
                  " --feature-layout columns");
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  const nlohmann::json manifest = report_of(convert)["manifest"];
  EXPECT_EQ(manifest["layout"], (nlohmann::json{{"num_shards", 3},
                                                {"partitioner", "metis"},
                                                {"partition_seed", 2},
                                                {"structure", "partitioned"},
                                                {"features", "columns"}}));
  EXPECT_EQ(manifest["dataset"]["num_nodes"], 2708);
  std::int64_t owned = 0;
  for (int r = 0; r < 3; ++r) {
    const auto file = shards / ("shard-" + std::to_string(r) + ".gnnbed");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    EXPECT_EQ(std::filesystem::file_size(file), manifest["shards"][r]["file_bytes"]);
    owned += manifest["shards"][r]["num_owned"].get<std::int64_t>();
  }
  EXPECT_EQ(owned, 2708);
  EXPECT_TRUE(std::filesystem::exists(shards / "manifest.json"));

  const CommandResult bad =
      run_command(workload() + " convert --workload cora --output " +
                  (dir.path() / "bad").string() + " --shards 2 --feature-layout diagonal");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("feature-layout"), std::string::npos) << bad.output;
}

TEST(WorkloadTool, PartitionReportsCutBalanceReplicationAndFeatureSplit) {
  const CommandResult run =
      run_command(workload() + " partition --workload cora --parts 4 --partitioner metis");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = report_of(run);
  EXPECT_EQ(report["partition"]["method"], "metis");
  EXPECT_EQ(report["partition"]["num_parts"], 4);
  EXPECT_GT(report["partition"]["edge_cut"].get<std::int64_t>(), 0);
  EXPECT_LT(report["partition"]["edge_cut_fraction"].get<double>(), 0.5);
  EXPECT_EQ(report["feature_split"]["num_parts"], 4);
}

TEST(WorkloadTool, BadCommandsExitNonZeroWithOneClearLine) {
  const CommandResult unknown = run_command(workload() + " shuffle --workload cora");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("'shuffle' is not one of"), std::string::npos) << unknown.output;
  const CommandResult no_output = run_command(workload() + " convert --workload cora");
  EXPECT_EQ(no_output.exit_code, 2);
  EXPECT_NE(no_output.output.find("--output"), std::string::npos) << no_output.output;
  const CommandResult bad_partitioner =
      run_command(workload() + " partition --workload cora --partitioner spectral");
  EXPECT_EQ(bad_partitioner.exit_code, 2);
  EXPECT_NE(bad_partitioner.output.find("spectral"), std::string::npos) << bad_partitioner.output;
  // Shards go into a folder: a file there is refused before the workload loads.
  const testing::TemporaryDirectory dir;
  dir.write("taken", "a file\n");
  const CommandResult onto_file = run_command(workload() + " convert --workload cora --output " +
                                              (dir.path() / "taken").string() + " --shards 2");
  EXPECT_EQ(onto_file.exit_code, 2);
  EXPECT_NE(onto_file.output.find("is not a folder"), std::string::npos) << onto_file.output;
  EXPECT_EQ(onto_file.output.find("nodes"), std::string::npos) << "refused before loading";
}

}  // namespace
}  // namespace gnnbed
