// run_experiment end to end under mpiexec: results (JSON with per-rank bytes equal to the plans',
// CSV, Chrome trace, plans) for both strategies; a configuration that does not fit the rank count,
// a bad option, and a rank that cannot read its data each end every rank with one clear message
// and a non-zero exit, leaving no result behind.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strategies/plan.hpp"
#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

std::string mpiexec(int ranks) {
  return std::string(
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 ") +
         GNNBED_MPIEXEC + " --oversubscribe -n " + std::to_string(ranks) + " ";
}

std::string run_experiment() { return testing::binary_path("exec/run_experiment"); }

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(RunExperiment, WritesResultsCsvTraceAndPlansWithBytesEqualToThePlans) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "run.json";
  const CommandResult run = run_command(
      mpiexec(2) + run_experiment() +
      " --workload cora --batch-size 16 --fanouts 10,5 --epochs 2 --strategy dgl-pull --quiet" +
      " --output " + result.string() + " --trace " + (dir.path() / "trace.json").string() +
      " --plans " + (dir.path() / "plans.msgpack").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("transport bytes equal the plans'"), std::string::npos) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["num_ranks"], 2);
  EXPECT_EQ(json["bytes_match_plans"], true);
  EXPECT_EQ(json["epochs"].size(), 2u);
  ASSERT_EQ(json["ranks"].size(), 2u);
  for (const auto& rank : json["ranks"]) {
    EXPECT_EQ(rank["bytes_sent"], rank["planned_bytes_sent"]);
    EXPECT_GT(rank["bytes_sent"]["features"].get<std::int64_t>(), 0);
    EXPECT_GT(rank["peak_memory_bytes"].get<std::int64_t>(), 0);
  }
  for (const char* part : {"sampling", "copy", "compute", "communication", "waiting"}) {
    EXPECT_TRUE(json["epochs"][0]["breakdown_mean_seconds"].contains(part)) << part;
  }
  EXPECT_TRUE(json.contains("test_accuracy"));
  EXPECT_FALSE(json["provenance"]["versions"]["mpi"].get<std::string>().empty());
  EXPECT_EQ(json["config"]["distribution"]["strategy"], "dgl-pull");

  std::ifstream csv(dir.path() / "run.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 3) << "a header and one line per epoch";

  const nlohmann::json trace = read_json(dir.path() / "trace.json");
  std::set<int> pids;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") pids.insert(event["pid"].get<int>());
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));

  const auto plans = read_plans(dir.path() / "plans.msgpack");
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[1].rank, 1);
  EXPECT_EQ(plans[0].strategy, "dgl-pull");
}

TEST(RunExperiment, P3OverPartitionedStructureMovesNoFeatures) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "p3.json";
  const CommandResult run = run_command(
      mpiexec(3) + run_experiment() +
      " --workload cora --batch-size 16 --fanouts 10,5 --epochs 1 --strategy p3 --structure"
      " partitioned --partitioner metis --quiet --output " +
      result.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["bytes_match_plans"], true);
  for (const auto& rank : json["ranks"]) {
    EXPECT_EQ(rank["bytes_sent"]["features"], 0);
    EXPECT_GT(rank["bytes_sent"]["activations"].get<std::int64_t>(), 0);
    EXPECT_GT(rank["bytes_sent"]["structure"].get<std::int64_t>(), 0);
  }
}

TEST(RunExperiment, ARankCountThatDoesNotFitIsRejected) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run = run_command(
      mpiexec(3) + run_experiment() +
      " --workload csbm --set workload.num_nodes=300 --set workload.feature_dim=2 --strategy p3"
      " --epochs 1 --output " +
      result.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("rank 0: configuration field 'ranks'"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("2 feature columns"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result));
}

TEST(RunExperiment, UnknownOptionIsRejected) {
  const CommandResult run = run_command(mpiexec(2) + run_experiment() + " --strategie p3");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--strategie"), std::string::npos) << run.output;
}

// Two ranks in different directories: rank 1 finds no dataset where rank 0 finds one. Every rank
// stops, the failing rank's message is printed, nothing hangs and nothing is written.
TEST(RunExperiment, ARankThatCannotReadItsDataStopsEveryRank) {
  const TemporaryDirectory dir;
  std::filesystem::create_directories(dir.path() / "has" / "data");
  std::filesystem::create_directories(dir.path() / "lacks");
  for (const auto& entry : std::filesystem::directory_iterator(testing::bundled_dataset("cora"))) {
    std::filesystem::copy(entry.path(), dir.path() / "has" / "data" / entry.path().filename());
  }
  const std::string arguments = " --workload planetoid-tsv --path data --epochs 1 --output " +
                                (dir.path() / "r.json").string();
  const CommandResult run = run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 " +
      std::string(GNNBED_MPIEXEC) + " --oversubscribe -n 1 -wdir " + (dir.path() / "has").string() +
      " " + run_experiment() + arguments + " : -n 1 -wdir " + (dir.path() / "lacks").string() +
      " " + run_experiment() + arguments);
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(run.output.find("rank 1: data"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace gnnbed
