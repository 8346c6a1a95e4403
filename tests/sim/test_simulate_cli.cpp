// The simulate program end to end: outputs, determinism, sweeps, memory limits, bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "strategies/plan/plan.hpp"
#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

std::string simulate() { return testing::binary_path("sim/simulate"); }

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The points of a result without the wall-clock times of the process that computed them.
nlohmann::json predicted_points(const std::filesystem::path& path) {
  nlohmann::json points = read_json(path)["points"];
  for (auto& point : points) {
    point["result"].erase("planning_seconds");
    point["result"].erase("replay_seconds");
    point.erase("load_seconds");
  }
  return points;
}

TEST(SimulateCli, SameInputsGiveBitIdenticalResults) {
  const TemporaryDirectory dir;
  std::vector<nlohmann::json> points;
  for (const char* name : {"a.json", "b.json"}) {
    const CommandResult run =
        run_command(simulate() + " --workload cora --batch-size 32 --strategy p3 --quiet -o " +
                    (dir.path() / name).string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    points.push_back(predicted_points(dir.path() / name));
  }
  EXPECT_EQ(points[0].dump(), points[1].dump());
  EXPECT_GT(points[0][0]["result"]["epoch_seconds"].get<double>(), 0);
}

// A pipelined epoch from a sample: each drawn iteration replayed behind the mini-batches in
// flight with it, and the drain replayed whole (sim/epoch_sample.hpp). Without that, the drawn
// iterations overlapped one another as if adjacent and the estimate fell 30 % short.
TEST(SimulateCli, APipelinedEpochFromASampleMatchesTheWholeEpoch) {
  const TemporaryDirectory dir;
  std::vector<double> epoch_seconds;
  for (const char* iterations : {"0", "8"}) {
    const std::filesystem::path output = dir.path() / (std::string(iterations) + ".json");
    const CommandResult run =
        run_command(simulate() +
                    " --workload csbm --set workload.num_nodes=100000 --batch-size 16 --strategy p3"
                    " --set distribution.pipeline=true --quiet --iterations " +
                    iterations + " -o " + output.string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const nlohmann::json result = read_json(output)["points"][0]["result"];
    ASSERT_EQ(result["iterations_per_epoch"], 41);
    epoch_seconds.push_back(result["epoch_seconds"].get<double>());
  }
  EXPECT_NEAR(epoch_seconds[1], epoch_seconds[0], 0.01 * epoch_seconds[0]);
}

// The ops of a traced simulate run of cora on the P3 cluster: per op name, per (rank,
// iteration), when it started and ended (microseconds).
struct TracedSpan {
  double start_us = 0;
  double end_us = 0;
};
using TracedOps = std::map<std::string, std::map<std::pair<int, int>, TracedSpan>>;

TracedOps traced_cora_ops(const std::string& arguments) {
  const TemporaryDirectory dir;
  const std::filesystem::path trace = dir.path() / "trace.json";
  const CommandResult run = run_command(simulate() + " --workload cora --cluster p3-cluster " +
                                        arguments + " --quiet --trace " + trace.string() + " -o " +
                                        (dir.path() / "out.json").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  TracedOps ops;
  if (run.exit_code != 0) return ops;
  const nlohmann::json document = read_json(trace);
  for (const nlohmann::json& event : document["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const double start = event["ts"].get<double>();
    ops[event["name"].get<std::string>()]
       [{event["pid"].get<int>(), event["args"]["iteration"].get<int>()}] = {
           start, start + event["dur"].get<double>()};
  }
  return ops;
}

// On a GPU rank the sampler and the network are separate streams, but an iteration's
// announcement carries what its sampling found: it starts once the sampling has ended, as the
// engine runs the prologue in order.
TEST(SimulateCli, AGpuRanksAnnouncementFollowsItsSampling) {
  TracedOps ops = traced_cora_ops("--strategy p3 --batch-size 16 --iterations 2");
  ASSERT_EQ(ops["announce"].size(), 32u);  // 16 ranks, 2 iterations
  for (const auto& [key, announced] : ops["announce"]) {
    const auto sampled = ops["sample"].find(key);
    ASSERT_NE(sampled, ops["sample"].end());
    EXPECT_GE(announced.start_us, sampled->second.end_us - 1e-6)
        << "rank " << key.first << " iteration " << key.second;
  }
}

// A pipelined round starts with the next mini-batch's prologue (plan.hpp: schedule_key), so on the
// network stream, which takes a rank's transfers in order, announcement k + 1 goes before the
// pull of mini-batch k's partial activations, while k's feature slices are still being gathered.
TEST(SimulateCli, APipelinedRoundAnnouncesTheNextMiniBatchBeforeItsTransfers) {
  TracedOps ops = traced_cora_ops(
      "--strategy p3 --batch-size 4 --set distribution.pipeline=true --iterations 0");
  int checked = 0;
  for (const auto& [key, pulled] : ops["pull partial activations"]) {
    const auto next = ops["announce"].find(std::pair{key.first, key.second + 1});
    if (next == ops["announce"].end()) continue;
    EXPECT_LT(next->second.start_us, pulled.start_us)
        << "rank " << key.first << " iteration " << key.second;
    ++checked;
  }
  EXPECT_GE(checked, 32) << "16 ranks, at least 3 iterations";
}

// A calibration whose cost model is the emulated cluster preset's, with ranks that spread.
std::filesystem::path spread_calibration(const TemporaryDirectory& dir, double spread) {
  const nlohmann::json preset =
      read_json(std::filesystem::path(GNNBED_SOURCE_DIR) / "sim/presets/emulated-cluster.json");
  const nlohmann::json calibration = {
      {"format", "gnnbed-calibration"},
      {"version", 1},
      {"cost_model", preset["device"]["cost_model"]},
      {"network", {{"latency_seconds", 1e-6}, {"bandwidth_bytes_per_second", 1e10}}},
      {"rank_speed_spread", spread}};
  return dir.write("calibration.json", calibration.dump());
}

TEST(SimulateCli, ACalibrationSpreadsTheRanksUnlessASettingSaysOtherwise) {
  const TemporaryDirectory dir;
  const std::string base = simulate() + " --cluster emulated-cluster --calibration " +
                           spread_calibration(dir, 0.1).string() +
                           " --workload cora --batch-size 32 --strategy dgl-pull --quiet";
  const CommandResult spread = run_command(base + " -o " + (dir.path() / "a.json").string());
  ASSERT_EQ(spread.exit_code, 0) << spread.output;
  const CommandResult identical = run_command(base + " --cluster-set rank_speed_spread=0 -o " +
                                              (dir.path() / "b.json").string());
  ASSERT_EQ(identical.exit_code, 0) << identical.output;
  const nlohmann::json spread_point = read_json(dir.path() / "a.json")["points"][0];
  const nlohmann::json identical_point = read_json(dir.path() / "b.json")["points"][0];
  EXPECT_EQ(spread_point["cluster"]["rank_speed_spread"], 0.1);
  EXPECT_FALSE(identical_point["cluster"].contains("rank_speed_spread"));
  // The slower rank sets the pace, and the faster waits for it.
  EXPECT_GT(spread_point["result"]["epoch_seconds"].get<double>(),
            identical_point["result"]["epoch_seconds"].get<double>());
  EXPECT_GT(spread_point["result"]["breakdown_mean_seconds"]["waiting"].get<double>(),
            identical_point["result"]["breakdown_mean_seconds"]["waiting"].get<double>());
}

TEST(SimulateCli, SweepsMakeAGridAndTheCsvHasARowPerPoint) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "sweep.json").string();
  const CommandResult run = run_command(
      simulate() + " --workload cora --batch-size 64 --sweep distribution.strategy=dgl-pull,p3 " +
      "--sweep cluster.nic.bandwidth_gbps=1,100 -j 2 -o " + output + " --trace " +
      (dir.path() / "trace.json").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json document = read_json(output);
  ASSERT_EQ(document["points"].size(), 4U);
  EXPECT_TRUE(document["provenance"].contains("git_revision"));
  // A slower network never makes an epoch faster.
  for (std::size_t s = 0; s < 2; ++s) {
    const auto& slow = document["points"][2 * s]["result"];
    const auto& fast = document["points"][2 * s + 1]["result"];
    EXPECT_GT(slow["epoch_seconds"].get<double>(), fast["epoch_seconds"].get<double>());
  }
  std::ifstream csv(dir.path() / "sweep.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 5);
  EXPECT_FALSE(read_json(dir.path() / "trace.json")["traceEvents"].empty());
  EXPECT_FALSE(document["points"][0].contains("chrome_trace")) << "the trace has its own file";
}

TEST(SimulateCli, ASweepSpreadOverShardsAndResumedGivesTheOneProcessResult) {
  const TemporaryDirectory dir;
  const std::string sweep = simulate() +
                            " --workload cora --batch-size 64 --strategy p3 -q "
                            "--sweep model.hidden=16,32,64 --sweep cluster.machines=2,4 ";
  const std::string points = " --points-dir " + (dir.path() / "points").string();
  ASSERT_EQ(run_command(sweep + "-o " + (dir.path() / "whole.json").string()).exit_code, 0);
  // Three shares, as three machines would run them; none writes a result file.
  for (const char* share : {"0/3", "1/3", "2/3"}) {
    const CommandResult run = run_command(sweep + points + " --shard " + share + " -o " +
                                          (dir.path() / "share.json").string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("2 points computed"), std::string::npos) << run.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "share.json"));
  // A machine lost its share's second point: the final run computes it, and only it.
  std::filesystem::remove(dir.path() / "points/point-4.json");
  const std::string merged = (dir.path() / "merged.json").string();
  const CommandResult final_run = run_command(sweep + points + " -o " + merged);
  ASSERT_EQ(final_run.exit_code, 0) << final_run.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "points/point-4.json"));
  EXPECT_EQ(predicted_points(merged).dump(), predicted_points(dir.path() / "whole.json").dump());

  // Points of another sweep are refused, not mixed in.
  const CommandResult other = run_command(
      simulate() + " --workload cora --batch-size 64 --strategy dgl-pull -q " +
      "--sweep model.hidden=16,32,64 --sweep cluster.machines=2,4" + points + " -o " + merged);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.output.find("belongs to another sweep"), std::string::npos) << other.output;
  const CommandResult no_folder =
      run_command(simulate() + " --workload cora --shard 0/2 -q -o " + merged);
  EXPECT_EQ(no_folder.exit_code, 2);
  EXPECT_NE(no_folder.output.find("'shard'"), std::string::npos) << no_folder.output;
}

TEST(SimulateCli, APointThatFailsLeavesNoTraceBehind) {
  // The first point runs and records its trace; the second's workload file does not exist.
  const TemporaryDirectory dir;
  std::string edges;
  for (int v = 0; v < 200; ++v)
    edges += std::to_string(v) + " " + std::to_string((v + 1) % 200) + "\n";
  dir.write("ring.txt", edges);
  const std::string output = (dir.path() / "out.json").string();
  const CommandResult run =
      run_command(simulate() + " --workload edge-list --batch-size 16 --cluster-set machines=2 " +
                  "--cluster-set ranks_per_machine=1 --sweep workload.path=" +
                  (dir.path() / "ring.txt").string() + "," + (dir.path() / "missing.txt").string() +
                  " --quiet -o " + output + " --trace " + (dir.path() / "trace.json").string());
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_FALSE(std::filesystem::exists(output));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "trace.json"));
}

TEST(SimulateCli, ARunThatDoesNotFitIsOutOfMemory) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "oom.json").string();
  const CommandResult run = run_command(simulate() +
                                        " --workload cora --batch-size 64 --cluster-set "
                                        "device.memory_bytes=100000 --quiet -o " +
                                        output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json result = read_json(output)["points"][0]["result"];
  EXPECT_TRUE(result["out_of_memory"].get<bool>());
  EXPECT_NE(result["out_of_memory_reason"].get<std::string>().find("rank"), std::string::npos);
  EXPECT_TRUE(result["epoch_seconds"].is_null());
}

TEST(SimulateCli, ALargeReplayPrintsItsCostPerTransfer) {
  const TemporaryDirectory dir;
  const std::string small = simulate() +
                            " --workload cora --batch-size 16 --cluster emulated-cluster "
                            "--strategy dgl-pull --iterations 1 -o " +
                            (dir.path() / "small.json").string();
  const CommandResult few = run_command(small + " --cluster-set machines=4");
  ASSERT_EQ(few.exit_code, 0) << few.output;
  EXPECT_EQ(few.output.find("transfers:"), std::string::npos) << few.output;
  // 200 ranks: each pairwise all-to-all is 200 x 199 transfers, over 100,000 in the iteration.
  const CommandResult many = run_command(small + " --cluster-set machines=200");
  ASSERT_EQ(many.exit_code, 0) << many.output;
  EXPECT_NE(many.output.find("M transfers: "), std::string::npos) << many.output;
  EXPECT_NE(many.output.find(" us each"), std::string::npos) << many.output;
}

TEST(SimulateCli, AFailureStopsThePointAndSaysWhereTheRanksStood) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "failed.json").string();
  const CommandResult run = run_command(
      simulate() +
      " --workload cora --batch-size 64 --strategy p3 --cluster-set deviations.0.machine=2"
      " --cluster-set deviations.0.fails_at_seconds=0 --sweep cluster.failure_detection_seconds=0,2"
      " -o " +
      output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("machine 2 failed at 0.000 s"), std::string::npos) << run.output;
  const nlohmann::json document = read_json(output);
  for (const nlohmann::json& point : document["points"]) {
    const nlohmann::json& result = point["result"];
    EXPECT_TRUE(result["epoch_seconds"].is_null());
    const nlohmann::json& failure = result["failure"];
    EXPECT_FALSE(failure["completed"].get<bool>());
    EXPECT_EQ(failure["failures"][0]["part"], "machine 2");
    EXPECT_EQ(failure["iterations_completed"], 0);
    int failed = 0;
    for (const auto& rank : failure["ranks"]) failed += rank["state"] == "failed" ? 1 : 0;
    EXPECT_EQ(failed, 4);  // machine 2's four GPUs
  }
  std::ifstream csv(dir.path() / "failed.csv");
  std::string header;
  std::string row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_NE(row.find(",0,,,"), std::string::npos) << row;  // not out of memory, no epoch time
}

// Copies of other ranks' partitions (P3's caching) live in host memory: on the P3 cluster (16
// ranks, 4 per machine), a machine with 30 MB holds its ranks' own partitions of Cora (about 1 MB
// each) but not a copy of every partition on every rank (each rank then holds all 16).
TEST(SimulateCli, CopiesOfPartitionsCountInMemory) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "cache.json").string();
  const CommandResult run = run_command(
      simulate() +
      " --workload cora --batch-size 64 --strategy p3 --structure partitioned --cluster p3-cluster"
      " --cluster-set host.memory_bytes=30000000 --sweep distribution.cache_budget_bytes=0,1e12"
      " -j 2 --quiet -o " +
      output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json points = read_json(output)["points"];
  const nlohmann::json& plain = points[0]["result"];
  const nlohmann::json& cached = points[1]["result"];
  EXPECT_FALSE(plain["out_of_memory"].get<bool>());
  EXPECT_EQ(plain["caching"]["feature_group_size"], 16);
  EXPECT_EQ(cached["caching"]["feature_group_size"], 1);
  EXPECT_EQ(cached["caching"]["structure_group_size"], 1);
  ASSERT_TRUE(cached["out_of_memory"].get<bool>());
  EXPECT_NE(cached["out_of_memory_reason"].get<std::string>().find("host memory"),
            std::string::npos);
  std::int64_t everything = 0;
  for (const auto& rank : plain["ranks"]) everything += rank["host_bytes"].get<std::int64_t>();
  for (const auto& rank : cached["ranks"]) EXPECT_EQ(rank["host_bytes"], everything);
}

TEST(SimulateCli, BadInputIsRejectedWithTheFieldAndNothingWritten) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "bad.json").string();
  for (const std::string& arguments :
       {std::string("--cluster-set nic.bandwidth_gbps=-1"), std::string("--sweep model.hidden="),
        std::string("--cluster nowhere"), std::string("--sweep model.hidden=0"),
        std::string("--cluster p3-cluster --ranks-per-machine 2")}) {
    const CommandResult run =
        run_command(simulate() + " --workload cora --quiet " + arguments + " -o " + output);
    EXPECT_EQ(run.exit_code, 2) << arguments << ": " << run.output;
    EXPECT_FALSE(std::filesystem::exists(output)) << arguments;
  }
}

// Values the replay could not use (a link SimGrid's solver cannot represent, a rate of 0 for work
// the plans have) stop the run before it starts, naming the field, instead of aborting inside the
// simulation.
TEST(SimulateCli, ClusterValuesTheReplayCannotUseAreRefusedWithTheField) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "bad.json").string();
  const std::pair<std::string, std::string> cases[] = {
      {"nic.bandwidth_gbps=1e-300", "nic.bandwidth_gbps"},
      {"device_link.latency_seconds=1e9", "device_link.latency_seconds"},
      {"device.cost_model.layer_forward.dense_flops_per_second=1e-300",
       "device.cost_model.layer_forward.dense_flops_per_second"},
      {"device.cost_model.layer_forward.dense_flops_per_second=0",
       "device.cost_model.layer_forward"}};
  for (const auto& [setting, field] : cases) {
    const CommandResult run =
        run_command(simulate() + " --workload cora --batch-size 64 --quiet --cluster-set " +
                    setting + " -o " + output);
    EXPECT_EQ(run.exit_code, 2) << setting << ": " << run.output;
    EXPECT_NE(run.output.find(field), std::string::npos) << setting << ": " << run.output;
    EXPECT_FALSE(std::filesystem::exists(output)) << setting;
  }
}

// A compute-only plan of `rank` (of 2) for `iteration`, whose one op a real run timed.
Plan recorded_plan(int rank, int iteration, double measured_seconds) {
  PlanBuilder builder("recorded", rank, 2, 2, iteration);
  Op forward;
  forward.kind = OpKind::layer_forward;
  forward.label = "forward";
  forward.flops = 1e9;
  forward.measured_seconds = measured_seconds;
  builder.add_op(forward);
  return builder.finish();
}

TEST(SimulateCli, ReplaysRecordedPlansWithTheirMeasuredDurations) {
  const TemporaryDirectory dir;
  const std::string plans = (dir.path() / "plans.json").string();
  // Rank 0 takes 10 + 30 ms over the two recorded iterations, rank 1 20 + 5 ms; nothing couples
  // the ranks, so the recorded iterations take 40 ms, and an epoch of 6 iterations 3 times that.
  write_plans({recorded_plan(0, 0, 0.010), recorded_plan(1, 0, 0.020), recorded_plan(0, 1, 0.030),
               recorded_plan(1, 1, 0.005)},
              plans);
  const std::string cluster =
      " --cluster this-machine --cluster-set machines=2 --cluster-set ranks_per_machine=1";
  const std::string output = (dir.path() / "replayed.json").string();
  const CommandResult run =
      run_command(simulate() + cluster + " --replay-plans " + plans +
                  " --measured-durations --iterations-per-epoch 6 --quiet -o " + output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json point = read_json(output)["points"][0];
  EXPECT_EQ(point["strategy"], "recorded");
  EXPECT_EQ(point["result"]["iterations_simulated"], 2);
  EXPECT_NEAR(point["result"]["simulated_seconds"].get<double>(), 0.040, 1e-12);
  EXPECT_NEAR(point["result"]["epoch_seconds"].get<double>(), 0.120, 1e-12);

  // Without --measured-durations the cost model times the same plans.
  const CommandResult modelled =
      run_command(simulate() + cluster + " --replay-plans " + plans + " --quiet -o " + output);
  ASSERT_EQ(modelled.exit_code, 0) << modelled.output;
  EXPECT_GT(
      std::abs(read_json(output)["points"][0]["result"]["simulated_seconds"].get<double>() - 0.040),
      1e-6);
}

// `arguments` to simulate exit 2 with every one of `messages` in their output.
void expect_rejected(const std::string& arguments, const std::vector<std::string>& messages) {
  const CommandResult run = run_command(simulate() + arguments);
  EXPECT_EQ(run.exit_code, 2) << arguments;
  for (const std::string& message : messages) {
    EXPECT_NE(run.output.find(message), std::string::npos) << arguments << ": " << run.output;
  }
}

TEST(SimulateCli, RecordedPlansThatDoNotFitTheClusterAreRejected) {
  const TemporaryDirectory dir;
  const std::string plans = (dir.path() / "plans.json").string();
  write_plans({recorded_plan(0, 0, 0.01), recorded_plan(1, 0, 0.01), recorded_plan(0, 1, 0.01)},
              plans);
  const std::string output = (dir.path() / "replayed.json").string();
  const std::string two_ranks =
      " --cluster this-machine --cluster-set machines=2 --cluster-set ranks_per_machine=1";
  expect_rejected(two_ranks + " --replay-plans " + plans + " --quiet -o " + output,
                  {"'replay-plans'", "iteration 1 has no plan of rank 1"});
  expect_rejected(" --cluster p3-cluster --replay-plans " + plans + " --quiet -o " + output,
                  {"made for 2 ranks, the cluster has 16"});
  expect_rejected(" --workload cora --measured-durations --quiet -o " + output,
                  {"needs --replay-plans"});
  expect_rejected(two_ranks + " --replay-plans " + plans + " --iterations 1 --quiet -o " + output,
                  {"'iterations'"});
  expect_rejected(" --workload cora --iterations-per-epoch 3 --quiet -o " + output,
                  {"'iterations-per-epoch'"});
  expect_rejected(
      two_ranks + " --replay-plans " + plans + " --sweep model.hidden=8,16 -o " + output, {});
  // The recorded plans fix the experiment: an experiment option would be ignored.
  expect_rejected(two_ranks + " --replay-plans " + plans + " --hidden 64 --quiet -o " + output,
                  {"'--hidden'", "does not apply with --replay-plans"});
  expect_rejected(
      two_ranks + " --replay-plans " + plans + " --set model.hidden=64 --quiet -o " + output,
      {"'--set'"});
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(SimulateCli, AFieldSweptTwiceIsRejected) {
  const TemporaryDirectory dir;
  const std::string output = (dir.path() / "out.json").string();
  expect_rejected(
      " --workload cora --sweep model.hidden=8,16 --sweep model.hidden=32 --quiet -o " + output,
      {"'sweep model.hidden'", "swept twice"});
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(SimulateCli, PbgEpochIsRepeatableWithThePlansBytes) {
  const TemporaryDirectory dir;
  const std::string command = simulate() +
                              " --strategy pbg --dataset planted --entities 4000 --degree 6"
                              " --dimension 32 --partitions 4 --cluster this-machine"
                              " --cluster-set ranks_per_machine=2 --quiet --output ";
  for (const char* name : {"a.json", "b.json"}) {
    const CommandResult run = run_command(command + (dir.path() / name).string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  const nlohmann::json a = read_json(dir.path() / "a.json");
  const nlohmann::json b = read_json(dir.path() / "b.json");
  EXPECT_EQ(a["strategy"], "pbg");
  EXPECT_EQ(a["num_ranks"], 2);
  EXPECT_EQ(a["bytes_match_plans"], true);
  EXPECT_GT(a["epoch_seconds"].get<double>(), 0);
  EXPECT_GT(a["ranks"][1]["bytes_sent"]["embeddings"].get<std::int64_t>(), 0);
  EXPECT_EQ(a["epoch_seconds"], b["epoch_seconds"]);
  EXPECT_EQ(a["ranks"], b["ranks"]);
}

TEST(SimulateCli, PbgRefusesASwapDirectoryNamingTheField) {
  const TemporaryDirectory dir;
  const CommandResult run = run_command(
      simulate() + " --strategy pbg --dataset planted --entities 400 --swap-dir " +
      (dir.path() / "swap").string() + " --output " + (dir.path() / "pbg.json").string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("training.swap_directory"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "pbg.json"));
}

}  // namespace
}  // namespace gnnbed
