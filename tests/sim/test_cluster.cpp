// Cluster presets and their validation (no SimGrid engine involved).
#include <gtest/gtest.h>

#include <cmath>

#include "sim/cluster.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

std::string error_of(const std::string& source, const std::vector<std::string>& overrides) {
  try {
    load_cluster(source, overrides);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(Cluster, EveryPresetLoadsAndCoversEveryOpKind) {
  const std::vector<std::string> names = cluster_preset_names();
  for (const std::string expected : {"p3-cluster", "cloud-25gbps", "cloud-100gbps", "nvlink-ib-400",
                                     "this-machine", "emulated-cluster"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const ClusterSpec cluster = load_cluster(name, {});
    EXPECT_EQ(cluster.name, name);
    EXPECT_GT(cluster.num_ranks(), 0);
    Op op;
    op.kind = OpKind::layer_forward;
    op.flops = 1e9;
    op.sparse_flops = 1e8;
    EXPECT_GT(cluster.compute_seconds(op), 0);
    // The preset's document reads back into the same cluster.
    EXPECT_EQ(cluster_from_json(cluster.to_json(), name).to_json(), cluster.to_json());
  }
}

TEST(Cluster, RanksShareTheirMachinesCachesAndAGpuHasItsOwn) {
  const ClusterSpec p3 = load_cluster("p3-cluster", {});
  EXPECT_EQ(p3.cache_sharers(/*on_host=*/true).far, p3.ranks_per_machine);
  EXPECT_EQ(p3.cache_sharers(/*on_host=*/true).near, p3.ranks_per_machine);
  EXPECT_EQ(p3.cache_sharers(/*on_host=*/false).far, 1);
  const ClusterSpec cpus = load_cluster("emulated-cluster", {"machines=3", "ranks_per_machine=2"});
  EXPECT_EQ(cpus.cache_sharers(false).near, 2);
  EXPECT_EQ(cpus.cache_sharers(false).far, 2);
  // On the validation rig every rank is on the one host, two at a time on its two cores.
  const ClusterSpec rig = load_cluster("emulated-cluster", {"machines=4", "shared_cores=2"});
  EXPECT_EQ(rig.cache_sharers(false).near, 2);
  EXPECT_EQ(rig.cache_sharers(false).far, 4);
}

TEST(Cluster, P3ClusterIsThePapers) {
  const ClusterSpec cluster = load_cluster("p3-cluster", {});
  EXPECT_EQ(cluster.machines, 4);
  EXPECT_EQ(cluster.ranks_per_machine, 4);
  EXPECT_EQ(cluster.device_kind, DeviceKind::gpu);
  EXPECT_DOUBLE_EQ(cluster.nic.bandwidth_bytes_per_second, 10e9 / 8);
  EXPECT_TRUE(cluster.runs_on_host(OpKind::sample));
  EXPECT_FALSE(cluster.runs_on_host(OpKind::layer_forward));
  // The paper's system gathered inputs on the host and copied them all.
  EXPECT_FALSE(cluster.device_keeps_features);
  EXPECT_TRUE(cluster.runs_on_host(OpKind::gather_features));
  EXPECT_FALSE(cluster.runs_on_host(OpKind::gather_features, true));
}

TEST(Cluster, ADeviceKeepingFeaturesNeedsAGatherCost) {
  try {
    static_cast<void>(load_cluster(
        "p3-cluster", {"device.keeps_features=true", "device.cost_model.gather_rows=null"}));
    FAIL() << "accepted";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "device.cost_model.gather_rows");
  }
  const ClusterSpec kept = load_cluster("p3-cluster", {"device.keeps_features=true"});
  EXPECT_TRUE(kept.device_keeps_features);
  EXPECT_EQ(cluster_from_json(kept.to_json(), "round trip").to_json(), kept.to_json());
}

TEST(Cluster, OverridesApplyBeforeValidation) {
  const ClusterSpec cluster =
      load_cluster("p3-cluster", {"nic.bandwidth_gbps=25", "machines=16", "network.model=CM02"});
  EXPECT_DOUBLE_EQ(cluster.nic.bandwidth_bytes_per_second, 25e9 / 8);
  EXPECT_EQ(cluster.num_ranks(), 64);
  EXPECT_EQ(cluster.network_model, "CM02");
  EXPECT_FALSE(cluster.uses_crosstraffic());  // RDMA: no acknowledgements on the reverse path
  const ClusterSpec quiet = load_cluster("p3-cluster", {"network.crosstraffic=false"});
  EXPECT_TRUE(load_cluster("p3-cluster", {}).uses_crosstraffic());
  EXPECT_FALSE(quiet.uses_crosstraffic());
  EXPECT_FALSE(cluster_from_json(quiet.to_json(), "round trip").uses_crosstraffic());
  const ClusterSpec emulated = load_cluster(
      "emulated-cluster",
      {"shared_cores=2", "nic.cpu_seconds_per_byte=5e-10", "nic.progress_window_bytes=400000"});
  EXPECT_EQ(emulated.shared_cores, 2);
  EXPECT_DOUBLE_EQ(emulated.nic_cpu_seconds_per_byte, 5e-10);
  EXPECT_DOUBLE_EQ(emulated.progress_window_bytes, 400000);
  const ClusterSpec round_trip = cluster_from_json(emulated.to_json(), "round trip");
  EXPECT_EQ(round_trip.shared_cores, 2);
  EXPECT_DOUBLE_EQ(round_trip.progress_window_bytes, 400000);
}

TEST(Cluster, BadValuesNameTheField) {
  EXPECT_NE(error_of("p3-cluster", {"nic.bandwidth_gbps=0"}).find("nic.bandwidth_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"machines=0"}).find("machines"), std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"nic.speed=3"}).find("nic.speed"), std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"network.topology=ring"}).find("network.topology"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"device.cost_model.layer_forward=null"})
                .find("device.cost_model.layer_forward"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"device.cost_model.all_reduce={}"}).find("all_reduce"),
            std::string::npos);
  EXPECT_NE(error_of("no-such-cluster", {}).find("p3-cluster"), std::string::npos);
  EXPECT_NE(error_of("fat-tree-cloud", {"machines=32"}).find("network.fat_tree.down"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"nic"}).find("FIELD=VALUE"), std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"network.crosstraffic=3"}).find("network.crosstraffic"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"shared_cores=-1"}).find("shared_cores"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"nic.cpu_seconds_per_byte=-1e-9"})
                .find("nic.cpu_seconds_per_byte"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"nic.progress_window_bytes=-1"})
                .find("nic.progress_window_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"rank_speed_spread=-0.1"}).find("rank_speed_spread"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"rank_speed_spread=0.3"}).find("rank_speed_spread"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"compute_jitter=-0.1"}).find("compute_jitter"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"compute_jitter=0.6"}).find("compute_jitter"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"compute_time_factor=0"}).find("compute_time_factor"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"shared_cores=2", "shared_core_time_slice_seconds=-1e-3"})
                .find("shared_core_time_slice_seconds"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"shared_cores=2", "shared_core_time_slice_seconds=0.2"})
                .find("shared_core_time_slice_seconds"),
            std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"shared_core_time_slice_seconds=0.004"})
                .find("needs shared_cores"),
            std::string::npos);
}

TEST(Cluster, RanksSpreadAroundTheCostModelWithTheMeanKept) {
  EXPECT_DOUBLE_EQ(load_cluster("emulated-cluster", {"machines=4"}).compute_factor(3), 1.0);
  const ClusterSpec spread =
      load_cluster("emulated-cluster", {"machines=4", "rank_speed_spread=0.1"});
  // Blom's scores of 4 draws: +-Phi^-1(0.853) = +-1.0491, +-Phi^-1(0.618) = +-0.2993.
  EXPECT_NEAR(spread.compute_factor(0), 1 - 0.1 * 1.0491, 1e-4);
  EXPECT_NEAR(spread.compute_factor(1), 1 - 0.1 * 0.2993, 1e-4);
  EXPECT_NEAR(spread.compute_factor(3), 1 + 0.1 * 1.0491, 1e-4);
  double sum = 0;
  for (int r = 0; r < 4; ++r) sum += spread.compute_factor(r);
  EXPECT_NEAR(sum, 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(cluster_from_json(spread.to_json(), "round trip").rank_speed_spread, 0.1);
}

TEST(Cluster, AComputeTimeFactorScalesEveryRank) {
  EXPECT_FALSE(
      load_cluster("emulated-cluster", {"machines=4"}).to_json().contains("compute_time_factor"));
  const ClusterSpec slower = load_cluster(
      "emulated-cluster", {"machines=4", "rank_speed_spread=0.1", "compute_time_factor=1.2"});
  EXPECT_NEAR(slower.compute_factor(3), 1.2 * (1 + 0.1 * 1.0491), 1e-4);
  EXPECT_DOUBLE_EQ(cluster_from_json(slower.to_json(), "round trip").compute_time_factor, 1.2);
}

TEST(Cluster, DeviationsSlowTheirPartAndChangeItsLinks) {
  const ClusterSpec uneven =
      load_cluster("p3-cluster", {R"(deviations=[{"machine": 1, "compute_time_factor": 1.5,
                                                  "nic": {"bandwidth_gbps": 1}},
                                                 {"rank": 5, "compute_time_factor": 2,
                                                  "device_link": {"latency_seconds": 1e-3}}])",
                                  "deviations.2.rank=0", "deviations.2.compute_time_factor=1.25"});
  ASSERT_EQ(uneven.ranks_per_machine, 4);
  EXPECT_DOUBLE_EQ(uneven.compute_factor(0), 1.25);
  EXPECT_DOUBLE_EQ(uneven.compute_factor(1), 1.0);
  EXPECT_DOUBLE_EQ(uneven.compute_factor(4), 1.5);  // machine 1's ranks: 4 to 7
  EXPECT_DOUBLE_EQ(uneven.compute_factor(5), 3.0);  // and its own
  // Rank 5's deviation is its GPU's: what machine 1's CPU runs for it (sampling) is not slower.
  EXPECT_DOUBLE_EQ(uneven.compute_factor(5, /*on_host=*/true), 1.5);
  EXPECT_DOUBLE_EQ(uneven.compute_factor(0, /*on_host=*/true), 1.0);
  EXPECT_DOUBLE_EQ(uneven.nic_of(1).bandwidth_bytes_per_second, 1.25e8);
  EXPECT_DOUBLE_EQ(uneven.nic_of(1).latency_seconds, uneven.nic.latency_seconds);
  EXPECT_DOUBLE_EQ(uneven.nic_of(2).bandwidth_bytes_per_second,
                   uneven.nic.bandwidth_bytes_per_second);
  EXPECT_DOUBLE_EQ(uneven.device_link_of(5).latency_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(uneven.device_link_of(5).bandwidth_bytes_per_second,
                   uneven.device_link.bandwidth_bytes_per_second);
  const ClusterSpec again = cluster_from_json(uneven.to_json(), "round trip");
  ASSERT_EQ(again.deviations.size(), 3U);
  for (int r = 0; r < again.num_ranks(); ++r) {
    EXPECT_DOUBLE_EQ(again.compute_factor(r), uneven.compute_factor(r)) << "rank " << r;
  }
  EXPECT_DOUBLE_EQ(again.nic_of(1).bandwidth_bytes_per_second, 1.25e8);
  EXPECT_DOUBLE_EQ(again.device_link_of(5).latency_seconds, 1e-3);
}

TEST(Cluster, FailuresComeInTimeOrderWithTheirParts) {
  const ClusterSpec failing =
      load_cluster("p3-cluster", {R"(deviations=[{"machine": 1, "fails_at_seconds": 3,
                                     "nic": {"fails_at_seconds": 2}},
                                    {"rank": 5, "device_link": {"fails_at_seconds": 1}}])",
                                  "failure_detection_seconds=30"});
  const std::vector<PartFailure> failures = failing.failures();
  ASSERT_EQ(failures.size(), 3U);
  EXPECT_EQ(failures[0].part, "the device link of rank 5");
  EXPECT_EQ(failures[0].kind, PartFailure::Kind::device_link);
  EXPECT_EQ(failures[1].part, "the NIC of machine 1");
  EXPECT_EQ(failures[2].part, "machine 1");
  EXPECT_EQ(failures[2].index, 1);
  const ClusterSpec again = cluster_from_json(failing.to_json(), "round trip");
  EXPECT_EQ(again.failures().size(), 3U);
  EXPECT_DOUBLE_EQ(again.failure_detection_seconds, 30);
}

TEST(Cluster, BadDeviationsNameTheEntryAndField) {
  const auto error = [](const std::string& list) {
    return error_of("p3-cluster", {"deviations=" + list});
  };
  EXPECT_NE(error(R"([{"machine": 4}])").find("deviations[0].machine"), std::string::npos);
  EXPECT_NE(error(R"([{"rank": 16}])").find("deviations[0].rank"), std::string::npos);
  EXPECT_NE(error(R"([{"machine": 0, "rank": 1}])").find("exactly one part"), std::string::npos);
  EXPECT_NE(error(R"([{"compute_time_factor": 2}])").find("exactly one part"), std::string::npos);
  EXPECT_NE(
      error(R"([{"rank": 1, "compute_time_factor": 0}])").find("deviations[0].compute_time_factor"),
      std::string::npos);
  EXPECT_NE(error(R"([{"rank": 1, "nic": {"bandwidth_gbps": 1}}])").find("deviations[0].nic"),
            std::string::npos);
  EXPECT_NE(error(R"([{"machine": 1, "device_link": {"latency_seconds": 1}}])")
                .find("deviations[0].device_link"),
            std::string::npos);
  EXPECT_NE(error(R"([{"machine": 1, "nic": {"bandwidth_gbps": 0}}])")
                .find("deviations[0].nic.bandwidth_gbps"),
            std::string::npos);
  EXPECT_NE(error(R"([{"machine": 1, "speed": 2}])").find("deviations[0].speed"),
            std::string::npos);
  EXPECT_NE(error(R"([{"rank": 3}, {"rank": 3, "compute_time_factor": 2}])")
                .find("rank 3 already deviates in deviations[0]"),
            std::string::npos);
  EXPECT_NE(error(R"({"rank": 3})").find("deviations"), std::string::npos);
  EXPECT_NE(
      error(R"([{"rank": 1, "fails_at_seconds": -1}])").find("deviations[0].fails_at_seconds"),
      std::string::npos);
  EXPECT_NE(error(R"([{"machine": 1, "nic": {"fails_at_seconds": "soon"}}])")
                .find("deviations[0].nic.fails_at_seconds"),
            std::string::npos);
  EXPECT_NE(
      error_of("p3-cluster", {"failure_detection_seconds=-1"}).find("failure_detection_seconds"),
      std::string::npos);
  EXPECT_NE(
      error_of("p3-cluster", {"deviations=[]", "deviations.1.rank=2"}).find("deviations.1.rank"),
      std::string::npos);
}

TEST(Cluster, AMachinesInsideHasPcieSwitchesAndAMemoryBus) {
  const ClusterSpec cloud = load_cluster("cloud-100gbps", {});
  EXPECT_EQ(cloud.pcie_switch.devices_per_switch, 2);
  EXPECT_DOUBLE_EQ(cloud.pcie_switch.uplink.bandwidth_bytes_per_second, 12e9);
  EXPECT_DOUBLE_EQ(cloud.host_memory_bytes_per_second, 150e9);
  const ClusterSpec again = cluster_from_json(cloud.to_json(), "round trip");
  EXPECT_EQ(again.pcie_switch.devices_per_switch, 2);
  EXPECT_DOUBLE_EQ(again.pcie_switch.uplink.latency_seconds, 2.5e-6);
  EXPECT_DOUBLE_EQ(again.host_memory_bytes_per_second, 150e9);
  const ClusterSpec flat = load_cluster("p3-cluster", {});
  EXPECT_EQ(flat.pcie_switch.devices_per_switch, 0);
  EXPECT_FALSE(flat.to_json().contains("pcie_switch"));
  EXPECT_NE(error_of("cloud-100gbps", {"pcie_switch.devices_per_switch=0"})
                .find("pcie_switch.devices_per_switch"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"pcie_switch.devices_per_switch=2"}).find("pcie_switch.uplink"),
            std::string::npos);
  EXPECT_NE(error_of("p3-cluster", {"host.memory_bandwidth_bytes_per_second=-1"})
                .find("host.memory_bandwidth_bytes_per_second"),
            std::string::npos);
}

TEST(Cluster, RailsSplitAMachinesRanksIntoEqualGroups) {
  const ClusterSpec dgx = load_cluster("dgx-a100", {});
  EXPECT_EQ(dgx.nics_per_machine, 8);
  EXPECT_TRUE(dgx.gpu_direct);
  EXPECT_EQ(dgx.nic_index_of(9), 1);
  const ClusterSpec again = cluster_from_json(dgx.to_json(), "round trip");
  EXPECT_EQ(again.nics_per_machine, 8);
  EXPECT_TRUE(again.gpu_direct);
  const ClusterSpec pairs = load_cluster("dgx-a100", {"nic.count=2"});
  EXPECT_EQ(pairs.nic_index_of(3), 0);
  EXPECT_EQ(pairs.nic_index_of(4), 1);
  EXPECT_EQ(pairs.nic_index_of(12), 1);
  EXPECT_EQ(load_cluster("p3-cluster", {}).nics_per_machine, 1);
  EXPECT_NE(error_of("dgx-a100", {"nic.count=3"}).find("nic.count"), std::string::npos);
  EXPECT_NE(error_of("dgx-a100", {"nic.count=0"}).find("nic.count"), std::string::npos);
  EXPECT_NE(error_of("emulated-cluster", {"nic.gpu_direct=true"}).find("nic.gpu_direct"),
            std::string::npos);
  EXPECT_NE(error_of("fat-tree-cloud", {"ranks_per_machine=2", "nic.count=2"}).find("nic.count"),
            std::string::npos);
  EXPECT_NE(error_of("fat-tree-cloud", {"nic.gpu_direct=true"}).find("nic.gpu_direct"),
            std::string::npos);
}

TEST(Cluster, JitteredOpsKeepTheCostModelsMeanAndTheirLogSpread) {
  const ClusterSpec none = load_cluster("emulated-cluster", {"machines=4"});
  EXPECT_EQ(none.jitter_factor(1, 2, 3), 1.0);
  const ClusterSpec jittered =
      load_cluster("emulated-cluster", {"machines=4", "compute_jitter=0.2"});
  // Over 4 ranks x 100 iterations x 100 ops: mean 1 and log-sd 0.2, to the sampling error of
  // 40,000 draws (0.2 / sqrt(40000) = 0.001).
  double sum = 0, log_sum = 0, log_squares = 0;
  int draws = 0;
  for (int rank = 0; rank < 4; ++rank) {
    for (int iteration = 0; iteration < 100; ++iteration) {
      for (int op = 0; op < 100; ++op) {
        const double factor = jittered.jitter_factor(rank, iteration, op);
        sum += factor;
        log_sum += std::log(factor);
        log_squares += std::log(factor) * std::log(factor);
        ++draws;
      }
    }
  }
  const double log_mean = log_sum / draws;
  EXPECT_NEAR(sum / draws, 1.0, 0.004);
  EXPECT_NEAR(std::sqrt(log_squares / draws - log_mean * log_mean), 0.2, 0.004);
  // A pure function of the seed and the op's position.
  EXPECT_EQ(jittered.jitter_factor(2, 7, 5), jittered.jitter_factor(2, 7, 5));
  EXPECT_NE(jittered.jitter_factor(2, 7, 5), jittered.jitter_factor(2, 7, 6));
  const ClusterSpec reseeded = load_cluster(
      "emulated-cluster", {"machines=4", "compute_jitter=0.2", "compute_jitter_seed=2"});
  EXPECT_NE(reseeded.jitter_factor(2, 7, 5), jittered.jitter_factor(2, 7, 5));
  const ClusterSpec round_trip = cluster_from_json(reseeded.to_json(), "round trip");
  EXPECT_DOUBLE_EQ(round_trip.compute_jitter, 0.2);
  EXPECT_EQ(round_trip.compute_jitter_seed, 2u);
  EXPECT_FALSE(none.to_json().contains("compute_jitter"));
}

TEST(Cluster, SharedCoresTimeSliceOnlyWhenASliceIsGiven) {
  const ClusterSpec sharing = load_cluster("emulated-cluster", {"machines=4", "shared_cores=2"});
  EXPECT_EQ(sharing.shared_core_time_slice_seconds, 0.0);
  EXPECT_FALSE(sharing.to_json().contains("shared_core_time_slice_seconds"));
  const ClusterSpec slicing = load_cluster(
      "emulated-cluster", {"machines=4", "shared_cores=2", "shared_core_time_slice_seconds=0.004"});
  EXPECT_DOUBLE_EQ(
      cluster_from_json(slicing.to_json(), "round trip").shared_core_time_slice_seconds, 0.004);
}

TEST(Cluster, CalibrationMakesCpuRanksOfTheCalibratedMachine) {
  Calibration calibration;
  OpCost cost;
  cost.fixed_seconds = 1e-6;
  cost.dense_flops_per_second = 1e10;
  cost.sparse_flops_per_second = 1e9;
  cost.memory_bytes_per_second = 1e9;
  cost.sampled_edges_per_second = 1e7;
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    if (is_costed(static_cast<OpKind>(k))) calibration.cost_model.set(static_cast<OpKind>(k), cost);
  }
  calibration.network = {3e-6, 4e9};
  const ClusterSpec cluster =
      apply_calibration(load_cluster("emulated-cluster", {"machines=4"}), calibration);
  EXPECT_EQ(cluster.device_kind, DeviceKind::cpu);
  EXPECT_EQ(cluster.num_ranks(), 4);
  EXPECT_DOUBLE_EQ(cluster.device_link.bandwidth_bytes_per_second, 4e9);
  Op op;
  op.kind = OpKind::relu;
  op.memory_bytes = 1'000'000;
  EXPECT_DOUBLE_EQ(cluster.compute_seconds(op), 1e-6 + 1e-3);

  // A GPU calibration (one with a device link) makes GPU ranks whose copies cross that link, and
  // the file keeps it.
  calibration.device_link = NetworkCalibration{8e-6, 5e10};
  const ClusterSpec gpus =
      apply_calibration(load_cluster("emulated-cluster", {"machines=4"}), calibration);
  EXPECT_EQ(gpus.device_kind, DeviceKind::gpu);
  EXPECT_DOUBLE_EQ(gpus.device_link.bandwidth_bytes_per_second, 5e10);
  EXPECT_DOUBLE_EQ(gpus.device_link.latency_seconds, 8e-6);
  EXPECT_DOUBLE_EQ(gpus.compute_seconds(op), 1e-6 + 1e-3);
  // calibrate's engine kept the features on its GPU: so do the calibrated ranks, where they fit.
  EXPECT_TRUE(gpus.device_keeps_features);
  EXPECT_TRUE(gpus.keeps_features(gpus.device_memory_bytes / 2));
  EXPECT_FALSE(gpus.keeps_features(gpus.device_memory_bytes / 2 + 1));
  EXPECT_FALSE(cluster.keeps_features(0)) << "CPU ranks have no device to keep them on";
  const testing::TemporaryDirectory dir;
  write_calibration(calibration, dir.path() / "gpu.json");
  const Calibration read = read_calibration(dir.path() / "gpu.json");
  ASSERT_TRUE(read.device_link.has_value());
  EXPECT_DOUBLE_EQ(read.device_link->bandwidth_bytes_per_second, 5e10);
  calibration.device_link.reset();
  write_calibration(calibration, dir.path() / "cpu.json");
  EXPECT_FALSE(read_calibration(dir.path() / "cpu.json").device_link.has_value());
}

TEST(Cluster, TrainBucketRunsOnTheHostOfGpuMachinesAndACalibrationWithoutItKeepsThePresets) {
  EXPECT_TRUE(load_cluster("p3-cluster", {}).runs_on_host(OpKind::train_bucket));
  EXPECT_FALSE(load_cluster("emulated-cluster", {}).runs_on_host(OpKind::train_bucket));
  // A calibration file from before calibrate timed train_bucket keeps the preset's.
  const ClusterSpec preset = load_cluster("emulated-cluster", {"machines=2"});
  Calibration calibration;
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (is_costed(kind) && kind != OpKind::train_bucket)
      calibration.cost_model.set(kind, *preset.device_cost_model.cost(kind));
  }
  calibration.network = {3e-6, 4e9};
  Op op;
  op.kind = OpKind::train_bucket;
  op.flops = 1.3e11;  // the preset's 0.5 ms per bucket and 6.5e10 FLOP/s
  EXPECT_DOUBLE_EQ(apply_calibration(preset, calibration).compute_seconds(op), 2.0005);
  calibration.device_link = NetworkCalibration{8e-6, 5e10};
  EXPECT_DOUBLE_EQ(apply_calibration(preset, calibration).compute_seconds(op), 2.0005)
      << "on the host of a GPU calibration's machines";
}

}  // namespace
}  // namespace gnnbed
