// calibrate end to end under mpiexec (--quick): the file reads back as the simulator reads it,
// with a fitted cost for every costed op kind, a positive latency and bandwidth, and every sample
// with its prediction and residual; on one rank it measures compute only and keeps the network
// of the existing file, or refuses when there is none.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "exec/backends.hpp"
#include "sim/cost_model/cost_model.hpp"
#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

std::string calibrate(int ranks) {
  return std::string(
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 ") +
         GNNBED_MPIEXEC + " --oversubscribe -n " + std::to_string(ranks) + " " +
         testing::binary_path("exec/calibrate") + " --quick";
}

TEST(Calibrate, WritesAFileWithEveryCostedKindAndTheNetwork) {
  const TemporaryDirectory dir;
  const auto file = dir.path() / "calibration.json";
  const CommandResult run = run_command(calibrate(2) + " --output " + file.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("[ 30/30]"), std::string::npos) << "progress per case\n" << run.output;
  EXPECT_NE(run.output.find("max|res|"), std::string::npos) << "residual table\n" << run.output;

  const Calibration calibration = read_calibration(file);
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const std::string name(to_string(kind));
    SCOPED_TRACE(name);
    if (!is_costed(kind)) {
      EXPECT_FALSE(calibration.cost_model.cost(kind).has_value());
      continue;
    }
    ASSERT_TRUE(calibration.cost_model.cost(kind).has_value());
    ASSERT_TRUE(calibration.fits.contains(name));
    const nlohmann::json& fit = calibration.fits[name];
    ASSERT_GE(fit["samples"].size(), 2u);
    for (const auto& sample : fit["samples"]) {
      EXPECT_GT(sample["measured_seconds"].get<double>(), 0);
      EXPECT_GE(sample["predicted_seconds"].get<double>(), 0);
      const double residual = sample["relative_residual"].get<double>();
      EXPECT_DOUBLE_EQ(residual, (sample["predicted_seconds"].get<double>() -
                                  sample["measured_seconds"].get<double>()) /
                                     sample["measured_seconds"].get<double>());
    }
    EXPECT_LE(fit["median_abs_relative_residual"].get<double>(),
              fit["max_abs_relative_residual"].get<double>());
  }
  // The work each kind is fitted on is the work its ops carry.
  EXPECT_GT(calibration.cost_model.cost(OpKind::layer_forward)->dense_flops_per_second, 0);
  EXPECT_GT(calibration.cost_model.cost(OpKind::layer_forward)->sparse_flops_per_second, 0);
  EXPECT_GT(calibration.cost_model.cost(OpKind::sample)->sampled_edges_per_second, 0);
  EXPECT_GT(calibration.cost_model.cost(OpKind::gather_features)->memory_bytes_per_second, 0);
  // The layers' memory term; the assembly of local and received rows, which only the distributed
  // cases and the evaluation plans have (one rank's training plans gather straight into their
  // input).
  EXPECT_GT(calibration.cost_model.cost(OpKind::layer_forward)->memory_bytes_per_second, 0);
  int distributed_assemblies = 0;
  for (const auto& sample : calibration.fits["scatter_rows"]["samples"]) {
    const std::string label = sample["label"].get<std::string>();
    const bool distributed = label.find("2 ranks") != std::string::npos;
    distributed_assemblies += distributed ? 1 : 0;
    EXPECT_TRUE(distributed || label.find("evaluation") != std::string::npos) << sample.dump();
  }
  EXPECT_GE(distributed_assemblies, 2);
  // How far apart the distributed cases' ranks' compute times were: two cases, their median (mean).
  const nlohmann::json& spread = calibration.fits["rank_speed_spread"];
  ASSERT_EQ(spread["cases"].size(), 2u) << spread.dump();
  std::vector<double> spreads;
  for (const auto& c : spread["cases"]) {
    EXPECT_NE(c["case"].get<std::string>().find("2 ranks"), std::string::npos);
    spreads.push_back(c["rank_speed_spread"].get<double>());
  }
  EXPECT_GE(calibration.rank_speed_spread, 0);
  // The median, kept in the fits; the file holds at most what the simulator models (a loaded
  // machine measures wider).
  const double median = (spreads[0] + spreads[1]) / 2;
  EXPECT_DOUBLE_EQ(spread["median"].get<double>(), median);
  EXPECT_DOUBLE_EQ(calibration.rank_speed_spread, std::min(median, kLargestRankSpeedSpread));
  // The quick cases' ops may all be under the jitter's 1 ms: then they claim none.
  if (calibration.fits.contains("compute_jitter")) {
    const nlohmann::json& jitter = calibration.fits["compute_jitter"];
    ASSERT_GE(jitter["cases"].size(), 1u) << jitter.dump();
    ASSERT_LE(jitter["cases"].size(), 2u) << jitter.dump();
    std::vector<double> jitters;
    for (const auto& c : jitter["cases"]) jitters.push_back(c["compute_jitter"].get<double>());
    EXPECT_GE(calibration.compute_jitter, 0);
    EXPECT_DOUBLE_EQ(calibration.compute_jitter,
                     jitters.size() == 1 ? jitters[0] : (jitters[0] + jitters[1]) / 2);
  } else {
    EXPECT_EQ(calibration.compute_jitter, 0.0);
  }

  EXPECT_GT(calibration.network.latency_seconds, 0);
  EXPECT_GT(calibration.network.bandwidth_bytes_per_second, 0);
  const nlohmann::json& network = calibration.fits["network"];
  EXPECT_EQ(network["ping_pong"]["samples"].size(), 5u);
  EXPECT_EQ(network["ping_pong"]["samples"][0]["bytes"], 0.0);
  ASSERT_EQ(network["collectives"].size(), 4u);
  EXPECT_EQ(network["collectives"][0]["collective"], "all_to_all");
  EXPECT_EQ(network["collectives"][0]["steps"], 1);
  EXPECT_EQ(network["collectives"][2]["collective"], "all_reduce");
  EXPECT_EQ(network["collectives"][2]["steps"], 2);
  EXPECT_EQ(calibration.provenance["settings"]["ranks"], 2);
  EXPECT_EQ(calibration.provenance["settings"]["omp_threads"], 1);
  EXPECT_FALSE(calibration.provenance["git_revision"].get<std::string>().empty());
}

TEST(Calibrate, OneRankKeepsTheNetworkOfTheExistingFileOrRefuses) {
  const TemporaryDirectory dir;
  const auto file = dir.path() / "calibration.json";
  const CommandResult refused = run_command(calibrate(1) + " --output " + file.string());
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("one rank measures no network"), std::string::npos)
      << refused.output;
  EXPECT_FALSE(std::filesystem::exists(file));

  ASSERT_EQ(run_command(calibrate(2) + " --output " + file.string()).exit_code, 0);
  const Calibration measured = read_calibration(file);
  const CommandResult kept = run_command(calibrate(1) + " --output " + file.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("compute only"), std::string::npos) << kept.output;
  const Calibration again = read_calibration(file);
  EXPECT_EQ(again.network.latency_seconds, measured.network.latency_seconds);
  EXPECT_EQ(again.network.bandwidth_bytes_per_second, measured.network.bandwidth_bytes_per_second);
  EXPECT_EQ(again.fits["network"]["kept_from"], file.string());
  // One rank assembles no rows from peers: the distributed cases' scatter_rows is kept too.
  const OpCost& scatter = *again.cost_model.cost(OpKind::scatter_rows);
  EXPECT_EQ(scatter.fixed_seconds, measured.cost_model.cost(OpKind::scatter_rows)->fixed_seconds);
  EXPECT_EQ(scatter.memory_bytes_per_second,
            measured.cost_model.cost(OpKind::scatter_rows)->memory_bytes_per_second);
  EXPECT_EQ(again.fits["scatter_rows"]["kept_from"], file.string());
  EXPECT_EQ(again.provenance["settings"]["ranks"], 1);
  EXPECT_TRUE(again.cost_model.cost(OpKind::layer_backward).has_value());
}

TEST(Calibrate, AProbeTimesTheCalibrationsCasesAgainAndPrintsTheRatio) {
  const TemporaryDirectory dir;
  const auto file = dir.path() / "calibration.json";
  ASSERT_EQ(run_command(calibrate(2) + " --output " + file.string()).exit_code, 0);
  const auto before = std::filesystem::last_write_time(file);
  const CommandResult probe = run_command(calibrate(2) + " --probe " + file.string());
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  const auto json_line = probe.output.find("{\"compute_time_ratio\"");
  ASSERT_NE(json_line, std::string::npos) << probe.output;
  const nlohmann::json result =
      nlohmann::json::parse(probe.output.substr(json_line, probe.output.find('\n', json_line)));
  EXPECT_GT(result["matched_ops"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(result["compute_time_ratio"].get<double>(),
                   result["now_seconds"].get<double>() / result["then_seconds"].get<double>());
  EXPECT_EQ(std::filesystem::last_write_time(file), before) << "a probe writes no calibration";
  // Probing a quick calibration with the full cases: its samples are not there.
  const CommandResult mismatched = run_command(
      std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 ") +
      GNNBED_MPIEXEC + " --oversubscribe -n 1 " + testing::binary_path("exec/calibrate") +
      " --nodes 4096 --probe " + file.string());
  EXPECT_NE(mismatched.exit_code, 0);
  EXPECT_NE(mismatched.output.find("has no sample of"), std::string::npos) << mismatched.output;
}

TEST(Calibrate, RejectsAGraphTooSmallForItsBatches) {
  const CommandResult run = run_command(calibrate(1) + " --nodes 100 --output /nonexistent/x");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--nodes"), std::string::npos) << run.output;
}

// A GPU calibration where there is no GPU: exit 2 naming the option, nothing written.
TEST(Calibrate, RejectsCudaWithoutADevice) {
  if (cuda_devices().count > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const TemporaryDirectory dir;
  const auto file = dir.path() / "calibration.json";
  const CommandResult run = run_command(calibrate(1) + " --device cuda --output " + file.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("configuration field '--device'"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace gnnbed
