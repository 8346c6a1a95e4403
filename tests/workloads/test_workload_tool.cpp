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

// Runs the tool with `arguments`, expects a configuration error (exit 2) whose line says `what`,
// and returns the output.
std::string expect_refused(const std::string& arguments, const std::string& what) {
  const CommandResult run = run_command(workload() + " " + arguments);
  EXPECT_EQ(run.exit_code, 2) << arguments;
  EXPECT_NE(run.output.find(what), std::string::npos) << run.output;
  return run.output;
}

TEST(WorkloadTool, BadCommandsExitNonZeroWithOneClearLine) {
  expect_refused("shuffle --workload cora", "'shuffle' is not one of");
  expect_refused("convert --workload cora", "--output");
  const std::string bad_partitioner =
      expect_refused("partition --workload cora --partitioner spectral", "spectral");
  EXPECT_EQ(bad_partitioner.find("nodes"), std::string::npos) << "refused before loading";
  // Shards go into a folder: a file there is refused before the workload loads.
  const testing::TemporaryDirectory dir;
  dir.write("taken", "a file\n");
  const std::string onto_file = expect_refused(
      "convert --workload cora --output " + (dir.path() / "taken").string() + " --shards 2",
      "is not a folder");
  EXPECT_EQ(onto_file.find("nodes"), std::string::npos) << "refused before loading";
}

// The tool takes the experiment files and --set assignments the experiment programs take, and
// reads their workload section as they do: later sources override earlier ones, the other
// sections are left to those programs, and a misspelt section is refused.
TEST(WorkloadTool, ReadsTheWorkloadSectionOfAnExperimentFileAndSetAssignments) {
  const testing::TemporaryDirectory dir;
  const auto config =
      dir.write("experiment.json",
                R"({"workload": {"source": "citeseer"}, "model": {"hidden": 8}, "training": {}})");
  const CommandResult from_file = run_command(workload() + " info --config " + config.string());
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  EXPECT_EQ(report_of(from_file)["name"], "citeseer");
  const CommandResult overridden = run_command(workload() + " info --config " + config.string() +
                                               " --set workload.source=pubmed --workload cora");
  ASSERT_EQ(overridden.exit_code, 0) << overridden.output;
  EXPECT_EQ(report_of(overridden)["name"], "cora");
  expect_refused("info --set wrkload.source=cora", "'wrkload': unknown field");
  expect_refused("info --set workload.scale=-1", "workload.scale");
}

}  // namespace
}  // namespace gnnbed
