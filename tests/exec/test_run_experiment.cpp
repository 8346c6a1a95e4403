// run_experiment end to end under mpiexec: results (JSON with per-rank bytes equal to the plans',
// CSV, Chrome trace, plans) for both strategies; a configuration that does not fit the rank count,
// a bad option, and a rank that cannot read its data each end every rank with one clear message
// and a non-zero exit, leaving no result behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exec/backends.hpp"
#include "strategies/plan/plan.hpp"
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
  EXPECT_EQ(json["execution"]["device"], "cpu");
  EXPECT_EQ(json["execution"]["omp_threads"], 1);  // mpiexec() sets OMP_NUM_THREADS=1
  EXPECT_FALSE(json["execution"]["openblas_core"].get<std::string>().empty());

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

// Per-op timing over the measured epochs (after the warm-up one): every op kind of the plans with
// its count, seconds and work per epoch; the op times of a rank fit inside its epoch; the recorded
// plans come from the first measured epoch with every op's measured duration.
TEST(RunExperiment, ReportsPerOpKindTimesAndRecordsMeasuredPlans) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "ops.json";
  const auto plans_file = dir.path() / "plans.json";
  const CommandResult run = run_command(
      mpiexec(2) + run_experiment() +
      " --workload cora --batch-size 32 --fanouts 10,5 --epochs 3 --strategy dgl-pull --quiet"
      " --set training.eval_every=-1 --output " +
      result.string() + " --plans " + plans_file.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json json = read_json(result);
  const nlohmann::json& ops = json["ops_by_kind"];
  EXPECT_EQ(ops["measured_epochs"], 2);
  const auto plans = read_plans(plans_file);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].epoch, 2) << "plans of the first epoch after the warm-up one";
  EXPECT_EQ(plans[0].iteration, 0);

  // Every op kind of the plans, as often per epoch as the plans hold it (every iteration's plan
  // has the same ops).
  const int iterations = json["epochs"][1]["iterations"].get<int>();
  std::map<std::string, int> ops_per_plan;
  for (const Plan& plan : plans) {
    for (const Op& op : plan.ops) ++ops_per_plan[std::string(to_string(op.kind))];
  }
  ASSERT_EQ(ops["kinds"].size(), ops_per_plan.size());
  double mean_sum = 0;
  double max_sum = 0;
  for (const auto& [kind, count] : ops_per_plan) {
    SCOPED_TRACE(kind);
    ASSERT_TRUE(ops["kinds"].contains(kind));
    const nlohmann::json& entry = ops["kinds"][kind];
    EXPECT_DOUBLE_EQ(entry["count_per_epoch"].get<double>(),
                     static_cast<double>(count) / 2 * iterations);
    const double mean = entry["seconds_per_epoch"]["mean"].get<double>();
    const double max = entry["seconds_per_epoch"]["max"].get<double>();
    EXPECT_GE(mean, 0.0);
    EXPECT_GE(max, mean);
    EXPECT_LE(entry["waiting_seconds_per_epoch"]["max"].get<double>(), max);
    mean_sum += mean;
    max_sum += max;
  }
  const double epoch_seconds = json["epoch_seconds"].get<double>();
  EXPECT_LE(mean_sum, epoch_seconds) << "a rank's ops run within its epoch";
  EXPECT_LE(max_sum, 2 * epoch_seconds);
  const nlohmann::json& kinds = ops["kinds"];
  EXPECT_GT(kinds["layer_forward"]["work_per_epoch"]["dense_flops"].get<double>(), 0);
  EXPECT_GT(kinds["layer_forward"]["work_per_epoch"]["sparse_flops"].get<double>(), 0);
  EXPECT_GT(kinds["sample"]["work_per_epoch"]["sampled_edges"].get<double>(), 0);
  EXPECT_GT(kinds["gather_features"]["work_per_epoch"]["memory_bytes"].get<double>(), 0);
  EXPECT_GT(kinds["all_to_all"]["work_per_epoch"]["bytes_sent"].get<double>(), 0);

  // Every op ran (the prologue included), so every op has a measured duration.
  for (const Plan& plan : plans) {
    double seconds = 0;
    for (const Op& op : plan.ops) {
      EXPECT_GE(op.measured_seconds, 0.0) << "rank " << plan.rank << " " << op.label;
      seconds += op.measured_seconds;
    }
    EXPECT_LE(seconds, json["epochs"][1]["seconds"].get<double>());
  }
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

// P3's caching end to end on 2 ranks: with copies of every partition on every rank, two epochs of
// p3 over partitioned structure give the losses and accuracies of training without copies (bit for
// bit with structure copies; to float rounding with feature copies too, which run the first layer
// data parallel), move no structure and no activations in training, and hold the copies.
TEST(RunExperiment, CachingChangesTheBytesNotTheResults) {
  const TemporaryDirectory dir;
  const std::string options =
      " --workload cora --batch-size 16 --fanouts 10,5 --epochs 2 --quiet --strategy p3"
      " --structure partitioned --cache-budget 1e12 --output ";
  std::map<std::string, nlohmann::json> results;
  for (const std::string cache : {"none", "structure", "both"}) {
    const auto output = dir.path() / (cache + ".json");
    const std::string caching =
        cache == "none" ? " --set distribution.cache_budget_bytes=0" : " --cache " + cache;
    const CommandResult run =
        run_command(mpiexec(2) + run_experiment() + options + output.string() + caching);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    results[cache] = read_json(output);
    EXPECT_EQ(results[cache]["bytes_match_plans"], true) << cache;
  }
  const nlohmann::json& plain = results["none"];
  for (const std::string cache : {"structure", "both"}) {
    SCOPED_TRACE(cache);
    const nlohmann::json& json = results[cache];
    for (std::size_t e = 0; e < 2; ++e) {
      for (const char* field : {"loss", "train_accuracy", "val_accuracy"}) {
        const double expected = plain["epochs"][e][field].get<double>();
        const double value = json["epochs"][e][field].get<double>();
        if (cache == "structure") {
          EXPECT_EQ(value, expected) << field << ", epoch " << e + 1;
        } else {
          EXPECT_NEAR(value, expected, field == std::string("loss") ? 1e-5 * expected : 2e-3)
              << field << ", epoch " << e + 1;
        }
      }
    }
    std::int64_t all_features = 0;
    for (const auto& rank : plain["ranks"])
      all_features += rank["feature_bytes"].get<std::int64_t>();
    for (int r = 0; r < 2; ++r) {
      const auto& rank = json["ranks"][r];
      const auto& before = plain["ranks"][r]["bytes_sent"];
      if (cache == "structure") {
        // What is left is P3's push of the first layer's computation graph.
        EXPECT_LT(rank["bytes_sent"]["structure"].get<std::int64_t>(),
                  before["structure"].get<std::int64_t>());
        EXPECT_EQ(rank["bytes_sent"]["activations"], before["activations"]);
      } else {
        EXPECT_EQ(rank["bytes_sent"]["structure"], 0);
        EXPECT_EQ(rank["bytes_sent"]["activations"], 0);
      }
      EXPECT_EQ(
          rank["feature_bytes"].get<std::int64_t>(),
          cache == "both" ? all_features : plain["ranks"][r]["feature_bytes"].get<std::int64_t>());
    }
  }
}

// 2 feature columns over 3 ranks: rank 2 holds none, so it computes no partial activations and
// sends none; it pulls its batch's from ranks 0 and 1.
TEST(RunExperiment, P3RunsOnMoreRanksThanFeatureColumns) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run = run_command(
      mpiexec(3) + run_experiment() +
      " --workload csbm --set workload.num_nodes=300 --set workload.feature_dim=2 --strategy p3"
      " --features stored --batch-size 16 --epochs 1 --quiet --output " +
      result.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["bytes_match_plans"], true);
  const auto& ranks = json["ranks"];
  ASSERT_EQ(ranks.size(), 3u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks[r]["feature_bytes"], 300 * 4) << "rank " << r << " holds one column";
    EXPECT_GT(ranks[r]["bytes_sent"]["activations"].get<std::int64_t>(), 0) << "rank " << r;
  }
  EXPECT_EQ(ranks[2]["feature_bytes"], 0);
  EXPECT_EQ(ranks[2]["bytes_sent"]["activations"], 0);
  EXPECT_GT(ranks[2]["bytes_received"]["activations"].get<std::int64_t>(), 0);
}

// One feature column over 2 ranks: rank 0 holds the whole first-layer weight and rank 1 none of
// it, so only rank 1 sees it split. Evaluation gathers the weight on both ranks (it deadlocked when
// each rank decided alone whether to).
TEST(RunExperiment, P3EvaluatesWhenOneRankHoldsEveryFeatureColumn) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run = run_command(
      "timeout 120 env " + mpiexec(2) + run_experiment() +
      " --workload csbm --set workload.num_nodes=200 --set workload.feature_dim=1 --strategy p3"
      " --batch-size 8 --epochs 2 --quiet --output " +
      result.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["bytes_match_plans"], true);
  EXPECT_TRUE(json.contains("test_accuracy")) << "evaluation ran";
  EXPECT_TRUE(json["epochs"].back().contains("val_accuracy"));
}

// A NaN loss stops every rank after the epoch that produced it, with one message and no result;
// training.stop_on_divergence=false lets the run finish and records the losses as null.
TEST(RunExperiment, ADivergedRunStopsWithAnErrorUnlessToldToGoOn) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const std::string command = mpiexec(2) + run_experiment() +
                              " --workload cora --set training.learning_rate=1e30 --epochs 3"
                              " --quiet --output " +
                              result.string();
  const CommandResult diverged = run_command(command);
  EXPECT_EQ(diverged.exit_code, 1) << diverged.output;
  EXPECT_NE(diverged.output.find("training diverged: the training loss of epoch 2"),
            std::string::npos)
      << diverged.output;
  EXPECT_FALSE(std::filesystem::exists(result)) << "a diverged run leaves no result";
  const CommandResult allowed = run_command(command + " --set training.stop_on_divergence=false");
  ASSERT_EQ(allowed.exit_code, 0) << allowed.output;
  const nlohmann::json json = read_json(result);
  ASSERT_EQ(json["epochs"].size(), 3u);
  EXPECT_TRUE(json["epochs"][1]["loss"].is_null());
}

// Every output is checked before the workload loads; one that cannot be written stops the run
// with the option named, and none of the others is written.
TEST(RunExperiment, AnOutputThatCannotBeWrittenStopsTheRunFirst) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run =
      run_command(mpiexec(2) + run_experiment() + " --workload cora --epochs 1 --quiet --output " +
                  result.string() + " --csv " + dir.path().string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("'--csv': cannot write"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("is a folder"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result));
}

TEST(RunExperiment, PipelinedP3MovesThePlannedBytesAndReportsItsStash) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "pipelined.json";
  const CommandResult run = run_command(
      mpiexec(2) + run_experiment() +
      " --workload cora --batch-size 8 --fanouts 10,5 --epochs 2 --strategy p3 --pipeline true"
      " --quiet --output " +
      result.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["bytes_match_plans"], true);
  EXPECT_EQ(json["out_of_memory"], false);
  EXPECT_EQ(json["config"]["distribution"]["pipeline"], true);
  for (const auto& rank : json["ranks"]) {
    EXPECT_GT(rank["stash_peak_bytes"].get<std::int64_t>(), 0);
    EXPECT_EQ(rank["bytes_sent"]["features"], 0);
  }
  EXPECT_GT(json["test_accuracy"].get<double>(), 0.3);
}

TEST(RunExperiment, PipeliningIsP3s) {
  const CommandResult run = run_command(mpiexec(2) + run_experiment() +
                                        " --workload cora --strategy dgl-pull --pipeline true");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("distribution.pipeline"), std::string::npos) << run.output;
}

// Without sampling DGL-pull's inputs outgrow a small device: every rank stops at the first
// iteration and the result says out of memory, as simulate reports such a point. (Cora's rows are
// sparse: an iteration needs about 1.1 MiB.)
TEST(RunExperiment, AnIterationBeyondTheDeviceMemoryIsReportedAsOutOfMemory) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "oom.json";
  const std::string command = mpiexec(2) + run_experiment() +
                              " --workload cora --batch-size 64 --fanouts -1,-1 --epochs 1"
                              " --strategy dgl-pull --quiet --output " +
                              result.string();
  const CommandResult oom = run_command(command + " --device-memory 500000");
  ASSERT_EQ(oom.exit_code, 0) << oom.output;
  EXPECT_NE(oom.output.find("out of memory: rank"), std::string::npos) << oom.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["out_of_memory"], true);
  EXPECT_NE(json["out_of_memory_reason"].get<std::string>().find("device_memory_bytes"),
            std::string::npos);
  const CommandResult fits = run_command(command + " --device-memory 2000000000");
  ASSERT_EQ(fits.exit_code, 0) << fits.output;
  EXPECT_EQ(read_json(result)["out_of_memory"], false);
  const CommandResult negative = run_command(command + " --device-memory -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
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

// A rank that stops (here SIGSTOP, as a debugger or a hung file system would stop it) ends the
// whole job once its peers have waited --progress-timeout seconds without progress: a non-zero
// exit naming the rank waited for and the setting, nothing hung, nothing written.
TEST(RunExperiment, AStoppedRankEndsEveryRankAtTheProgressTimeout) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const auto pid_file = dir.path() / "rank1.pid";
  // Far more epochs than the job can finish before the stop (Cora's epoch takes milliseconds): a
  // rank stopped after training, in its teardown, would keep mpirun waiting for it.
  const std::string arguments =
      " --workload cora --batch-size 16 --epochs 100000 --quiet"
      " --progress-timeout 3 --output " +
      result.string();
  // Rank 1 writes its pid, then becomes run_experiment (exec keeps the pid); once training has
  // begun, the script stops it and times how long the job takes to end.
  const std::string script =
      "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1\n"
      "timeout 120 " +
      std::string(GNNBED_MPIEXEC) + " --oversubscribe -n 1 " + run_experiment() + arguments +
      " : -n 1 sh -c 'echo $$ > " + pid_file.string() + "; exec " + run_experiment() + arguments +
      "' & job=$!; " + "for i in $(seq 300); do [ -s " + pid_file.string() +
      " ] && break; sleep 0.1; done; " + "sleep 5; kill -STOP $(cat " + pid_file.string() +
      "); start=$(date +%s); " + "wait $job; status=$?; kill -CONT $(cat " + pid_file.string() +
      ") 2>/dev/null; " + "echo \"ended after $(( $(date +%s) - start )) s\"; exit $status\n";
  const CommandResult run = run_command("bash " + dir.write("stop_rank_1.sh", script).string());
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.exit_code, 124) << "timed out: the stopped rank's peers hung\n" << run.output;
  EXPECT_NE(run.output.find("for rank 1 without progress (distribution.progress_timeout_seconds)"),
            std::string::npos)
      << run.output;
  const auto ended = run.output.find("ended after ");
  ASSERT_NE(ended, std::string::npos) << run.output;
  EXPECT_LE(std::stoi(run.output.substr(ended + 12)), 30) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result)) << "a stopped run leaves no result";
}

// A sharded workload (`workload convert --shards N`): every rank loads its own shard, and training
// gives the losses, accuracies and traffic of training from the whole workload (Cora's feature
// rows sparse in both).
class RunExperimentFromShards
    : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

TEST_P(RunExperimentFromShards, GivesTheLossesAndAccuracyOfTheWholeWorkload) {
  const auto& [ranks, strategy, structure] = GetParam();
  const TemporaryDirectory dir;
  const auto shards = dir.path() / "cora-shards";
  const std::string partitioner = structure == "partitioned" ? "metis" : "hash";
  const CommandResult convert = run_command(
      testing::binary_path("workloads/workload") + " convert --workload cora --output " +
      shards.string() + " --shards " + std::to_string(ranks) + " --partitioner " + partitioner +
      " --structure " + structure + " --feature-layout " + (strategy == "p3" ? "columns" : "rows"));
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  const std::string options = " --batch-size 16 --fanouts 10,5 --epochs 2 --quiet --strategy " +
                              strategy + " --structure " + structure + " --partitioner " +
                              partitioner + " --output ";
  const CommandResult whole = run_command(mpiexec(ranks) + run_experiment() + " --workload cora" +
                                          options + (dir.path() / "whole.json").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const CommandResult sharded =
      run_command(mpiexec(ranks) + run_experiment() + " --workload shards --path " +
                  shards.string() + options + (dir.path() / "sharded.json").string());
  ASSERT_EQ(sharded.exit_code, 0) << sharded.output;
  const nlohmann::json expected = read_json(dir.path() / "whole.json");
  const nlohmann::json json = read_json(dir.path() / "sharded.json");
  EXPECT_EQ(json["dataset"], expected["dataset"]);
  EXPECT_EQ(json["bytes_match_plans"], true);
  ASSERT_EQ(json["epochs"].size(), 2u);
  for (std::size_t e = 0; e < 2; ++e) {
    for (const char* field : {"loss", "train_accuracy", "val_accuracy"}) {
      EXPECT_EQ(json["epochs"][e][field], expected["epochs"][e][field])
          << field << ", epoch " << e + 1;
    }
  }
  EXPECT_EQ(json["test_accuracy"], expected["test_accuracy"]);
  ASSERT_EQ(json["ranks"].size(), static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(json["ranks"][r]["bytes_sent"], expected["ranks"][r]["bytes_sent"]) << "rank " << r;
    EXPECT_EQ(json["ranks"][r]["feature_bytes"], expected["ranks"][r]["feature_bytes"]);
    EXPECT_EQ(json["ranks"][r]["evaluation_bytes_sent"],
              expected["ranks"][r]["evaluation_bytes_sent"]);
    EXPECT_GT(json["ranks"][r]["evaluation_bytes_sent"]["total"].get<std::int64_t>(), 0)
        << "every rank evaluates its own nodes, with inputs from the others";
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, RunExperimentFromShards,
                         ::testing::Values(std::make_tuple(2, "dgl-pull", "replicated"),
                                           std::make_tuple(4, "p3", "partitioned")),
                         [](const auto& param_info) {
                           std::string name = std::to_string(std::get<0>(param_info.param)) +
                                              "ranks_" + std::get<1>(param_info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(RunExperiment, ShardsCannotHoldCopies) {
  const TemporaryDirectory dir;
  const auto shards = dir.path() / "columns";
  ASSERT_EQ(run_command(testing::binary_path("workloads/workload") +
                        " convert --workload cora --shards 2 --feature-layout columns --output " +
                        shards.string())
                .exit_code,
            0);
  const CommandResult run = run_command(
      mpiexec(2) + run_experiment() + " --workload shards --path " + shards.string() +
      " --strategy p3 --epochs 1 --cache-budget 1e9 --output " + (dir.path() / "r.json").string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("'distribution.cache_budget_bytes'"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

TEST(RunExperiment, ShardsCutForAnotherStrategyAreRejected) {
  const TemporaryDirectory dir;
  const auto shards = dir.path() / "rows";
  ASSERT_EQ(run_command(testing::binary_path("workloads/workload") +
                        " convert --workload cora --shards 2 --output " + shards.string())
                .exit_code,
            0);
  const auto result = dir.path() / "r.json";
  const CommandResult run =
      run_command(mpiexec(2) + run_experiment() + " --workload shards --path " + shards.string() +
                  " --strategy p3 --epochs 1 --output " + result.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("rank 0: configuration field 'distribution.strategy'"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("--feature-layout columns"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result));
}

// --device cuda where there is no GPU (or no CUDA in the build) stops every rank with exit 2 and
// a message naming the option; --transport nccl needs --device cuda. (On a machine with a GPU the
// first check does not apply: tests/mpi/test_gpu_distributed.cpp runs there.)
TEST(RunExperiment, CudaWithoutADeviceIsRejectedNamingTheOption) {
  if (cuda_devices().count > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const TemporaryDirectory dir;
  const auto result = dir.path() / "r.json";
  const CommandResult run =
      run_command(mpiexec(2) + run_experiment() +
                  " --workload cora --epochs 1 --device cuda --output " + result.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("configuration field '--device'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("needs a CUDA device"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(result));
}

TEST(RunExperiment, NcclWithoutCudaIsRejectedNamingTheOption) {
  const CommandResult run =
      run_command(mpiexec(2) + run_experiment() + " --workload cora --epochs 1 --transport nccl");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("configuration field '--transport'"), std::string::npos) << run.output;
}

TEST(RunExperiment, PbgTrainsEmbeddingsMovingThePlannedBytes) {
  const TemporaryDirectory dir;
  const auto result = dir.path() / "pbg.json";
  const CommandResult run =
      run_command(mpiexec(2) + run_experiment() +
                  " --strategy pbg --dataset planted --entities 400 --degree 5 --dimension 16"
                  " --partitions 4 --epochs 3 --quiet --output " +
                  result.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("bytes by kind equal the plans'"), std::string::npos) << run.output;
  const nlohmann::json json = read_json(result);
  EXPECT_EQ(json["strategy"], "pbg");
  EXPECT_EQ(json["bytes_match_plans"], true);
  EXPECT_EQ(json["epochs"].size(), 3u);
  ASSERT_EQ(json["ranks"].size(), 2u);
  for (const auto& rank : json["ranks"]) {
    EXPECT_EQ(rank["bytes_sent"], rank["planned_bytes_sent"]);
    EXPECT_GT(rank["bytes_sent"]["embeddings"].get<std::int64_t>(), 0);
  }
  EXPECT_GT(json["test"]["filtered"]["mrr"].get<double>(), 0);
}

TEST(RunExperiment, PbgRefusesBadSettingsNamingTheField) {
  const TemporaryDirectory dir;
  const CommandResult run = run_command(
      mpiexec(2) + run_experiment() +
      " --strategy pbg --dataset planted --entities 100 --swap-dir " +
      (dir.path() / "swap").string() + " --output " + (dir.path() / "pbg.json").string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("configuration field 'training.swap_directory'"), std::string::npos)
      << run.output;
  // More partitions than entities: every rank stops before training, naming the field.
  const CommandResult more = run_command(
      mpiexec(2) + run_experiment() +
      " --strategy pbg --dataset planted --entities 10 --degree 3 --group-size 5 --partitions 20"
      " --output " +
      (dir.path() / "pbg.json").string());
  EXPECT_EQ(more.exit_code, 2) << more.output;
  EXPECT_NE(more.output.find("configuration field 'training.partitions'"), std::string::npos)
      << more.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "pbg.json"));
}

}  // namespace
}  // namespace gnnbed
