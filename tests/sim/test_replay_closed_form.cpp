// The replay engine against closed forms: with SimGrid's CM02 model and no cross traffic a
// transfer over a route takes exactly the sum of its links' latencies + size / the narrowest
// bandwidth, so point-to-point transfers, collectives and compute-only plans have exact times.
// Each test builds its own engine, so ctest runs each in its own process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/replay.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "tests/sim/closed_form_cluster.hpp"

namespace gnnbed {
namespace {

using namespace closed_form;

std::vector<std::vector<Plan>> one_iteration(std::vector<Plan> plans) { return {std::move(plans)}; }

// One iteration in which rank 0 sends `bytes_from_0` to rank 1 and rank 1 `bytes_from_1` to rank
// 0, as one exchange (a message of 0 bytes where nothing goes, as in MPI).
std::vector<std::vector<Plan>> two_rank_exchange(std::int64_t bytes_from_0,
                                                 std::int64_t bytes_from_1) {
  std::vector<Plan> plans;
  for (int r = 0; r < 2; ++r) {
    Plan plan = empty_plan(r, 2);
    Op op = exchange_op("features", Traffic::features, 2);
    const auto peer = static_cast<std::size_t>(1 - r);
    op.bytes_to[peer] = r == 0 ? bytes_from_0 : bytes_from_1;
    op.bytes_from[peer] = r == 0 ? bytes_from_1 : bytes_from_0;
    plan.ops.push_back(op);
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

TEST(ReplayClosedForm, PointToPointTransfer) {
  const std::int64_t bytes = 3'000'000;
  const ReplayResult result = replay_plans(cluster(2, 1), two_rank_exchange(bytes, 0), {});
  expect_relative(result.makespan_seconds, remote_seconds(static_cast<double>(bytes)));
  EXPECT_EQ(result.ranks[0].sent[Traffic::features], bytes);
  EXPECT_EQ(result.communications, 2);  // the empty reply is a zero-byte message, as in MPI
}

// Every one of n ranks all-reduces `elements` gradients, over machines of `ranks_per_machine`
// (0: one ring).
std::vector<std::vector<Plan>> all_reduce_plans(int n, std::int64_t elements,
                                                int ranks_per_machine = 0) {
  std::vector<Plan> plans;
  for (int r = 0; r < n; ++r) {
    Plan plan = empty_plan(r, n);
    plan.parameters.push_back({"w", 0, true, elements, 1, 0, elements});
    Op op;
    op.kind = OpKind::all_reduce;
    op.stream = Stream::network;
    op.label = "all_reduce";
    op.traffic = Traffic::gradients;
    op.parameters = {"w"};
    op.ranks_per_machine = ranks_per_machine;
    op.bytes_to.assign(n, 0);
    op.bytes_from.assign(n, 0);
    plan.ops.push_back(op);
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

TEST(ReplayClosedForm, RingAllReduce) {
  const int n = 4;
  const std::int64_t elements = 1'000'000;  // divisible by n: equal chunks
  const ReplayResult result = replay_plans(cluster(n, 1), all_reduce_plans(n, elements), {});
  const double buffer_bytes = 4.0 * elements;
  // 2 (n - 1) steps of one chunk each: 2 (n - 1) / n * S / B plus 2 (n - 1) route latencies.
  const double expected = 2.0 * (n - 1) / n * buffer_bytes / kNicBandwidth +
                          2.0 * (n - 1) * (2 * kDeviceLatency + 2 * kNicLatency);
  expect_relative(result.makespan_seconds, expected);
  EXPECT_EQ(result.communications, 2 * (n - 1) * n);
}

// Two machines of two GPUs. One ring over the four: 6 steps, each bound by the chunk S / 4 that
// crosses a NIC. Hierarchical: a reduce-scatter step within each machine (S / 2 over the device
// links), two steps across in which both GPUs of a machine send S / 4 through its one NIC (half
// its bandwidth each), and an all-gather step within.
TEST(ReplayClosedForm, HierarchicalAllReduceSharesEachMachinesNic) {
  const std::int64_t elements = 1'000'000;
  const double buffer_bytes = 4.0 * elements;
  const double across_latency = 2 * kDeviceLatency + 2 * kNicLatency;
  const double within = 2 * kDeviceLatency + buffer_bytes / 2 / kDeviceBandwidth;
  const double across = across_latency + buffer_bytes / 4 / (kNicBandwidth / 2);
  const ReplayResult hierarchical =
      replay_plans(cluster(2, 2, "gpu"), all_reduce_plans(4, elements, 2), {});
  expect_relative(hierarchical.makespan_seconds, 2 * within + 2 * across);
  EXPECT_EQ(hierarchical.communications, 4 * 4);
}

TEST(ReplayClosedForm, FlatAllReduceOverMachinesOfTwoGpusWaitsForItsNicSteps) {
  const std::int64_t elements = 1'000'000;
  const double buffer_bytes = 4.0 * elements;
  const ReplayResult flat = replay_plans(cluster(2, 2, "gpu"), all_reduce_plans(4, elements), {});
  const double across = 2 * kDeviceLatency + 2 * kNicLatency + buffer_bytes / 4 / kNicBandwidth;
  expect_relative(flat.makespan_seconds, 6 * across);
}

// n ranks, one per machine, each sending `bytes` to every other in one all-to-all, in the plan's
// body or (prologue) before it.
std::vector<std::vector<Plan>> uniform_all_to_all(int n, std::int64_t bytes, bool prologue) {
  std::vector<Plan> plans;
  for (int r = 0; r < n; ++r) {
    Plan plan = empty_plan(r, n);
    Op op = exchange_op("activations", Traffic::activations, n);
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      op.bytes_to[static_cast<std::size_t>(q)] = bytes;
      op.bytes_from[static_cast<std::size_t>(q)] = bytes;
    }
    plan.ops.push_back(op);
    if (prologue) plan.prologue_ops = 1;
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

TEST(ReplayClosedForm, PlansAllToAllPostsEveryPairAtOnceOnFewRanks) {
  // 5 ranks: one block of 4 steps, so each NIC carries 4 transfers at once each way.
  const int n = 5;
  const std::int64_t bytes = 400'000;
  const ReplayResult result = replay_plans(cluster(n, 1), uniform_all_to_all(n, bytes, false), {});
  expect_relative(result.makespan_seconds, remote_seconds(4.0 * static_cast<double>(bytes)));
  for (const SimulatedRank& rank : result.ranks) {
    EXPECT_EQ(rank.sent[Traffic::activations], (n - 1) * bytes);
    EXPECT_EQ(rank.seconds[kNumTimeCategories], 0.0);  // nobody waits: all start together
  }
}

TEST(ReplayClosedForm, PlansAllToAllPostsItsStepsInBlocksOfFour) {
  // 10 ranks: steps 1-4 at once, then 5-8 once they have all completed, then step 9.
  ASSERT_EQ(ReplayOptions{}.all_to_all_block_steps, 4);
  const int n = 10;
  const auto bytes = static_cast<double>(400'000);
  const ReplayResult result =
      replay_plans(cluster(n, 1), uniform_all_to_all(n, 400'000, false), {});
  expect_relative(result.makespan_seconds, 2 * remote_seconds(4 * bytes) + remote_seconds(bytes));
}

TEST(ReplayClosedForm, PlansAllToAllPostsTheBlocksItIsGiven) {
  // Blocks of 3 on 10 ranks: steps 1-3, 4-6, 7-9.
  ReplayOptions options;
  options.all_to_all_block_steps = 3;
  const auto bytes = static_cast<double>(400'000);
  const ReplayResult result =
      replay_plans(cluster(10, 1), uniform_all_to_all(10, 400'000, false), options);
  expect_relative(result.makespan_seconds, 3 * remote_seconds(3 * bytes));
}

TEST(ReplayClosedForm, PrologueAllToAllRunsStepByStep) {
  const int n = 5;
  const std::int64_t bytes = 400'000;
  const ReplayResult result = replay_plans(cluster(n, 1), uniform_all_to_all(n, bytes, true), {});
  expect_relative(result.makespan_seconds, (n - 1) * remote_seconds(static_cast<double>(bytes)));
}

TEST(ReplayClosedForm, PrologueExchangeWithinMachinesTakesOnlyTheMachinesSteps) {
  // 3 machines of 2 CPU ranks: each rank sends `bytes` to its mate, in one step over the device
  // links, not in 5 steps over every rank.
  const int n = 6;
  const std::int64_t bytes = 800'000;
  std::vector<Plan> plans;
  for (int r = 0; r < n; ++r) {
    Plan plan = empty_plan(r, n);
    Op op = exchange_op("relay announcements", Traffic::structure, n);
    op.ranks_per_machine = 2;
    op.bytes_to[static_cast<std::size_t>(r ^ 1)] = bytes;
    op.bytes_from[static_cast<std::size_t>(r ^ 1)] = bytes;
    plan.ops.push_back(op);
    plan.prologue_ops = 1;
    plans.push_back(plan);
  }
  const ReplayResult result = replay_plans(cluster(3, 2), one_iteration(std::move(plans)), {});
  expect_relative(result.makespan_seconds,
                  2 * kDeviceLatency + static_cast<double>(bytes) / kDeviceBandwidth);
  EXPECT_EQ(result.communications, n);
}

TEST(ReplayClosedForm, ComputeOnlyPlanFollowsTheCostModel) {
  const ClusterSpec spec = cluster(1, 1);
  Plan plan = empty_plan(0, 1);
  Op forward;
  forward.kind = OpKind::layer_forward;
  forward.label = "forward";
  forward.flops = 6e9;
  forward.sparse_flops = 1e9;
  Op relu;
  relu.kind = OpKind::relu;
  relu.label = "relu";
  relu.memory_bytes = 40'000'000;
  relu.deps = {0};
  Op step;
  step.kind = OpKind::optimizer_step;
  step.label = "step";
  step.flops = 1e6;
  step.memory_bytes = 3'200'000;
  step.deps = {1};
  plan.ops = {forward, relu, step};
  const ReplayResult result = replay_plans(spec, one_iteration({plan}), {});
  const double expected =
      (3e-6 + 5e9 / 2e11 + 1e9 / 3e10) + (3e-6 + 4e7 / 5e10) + (3e-6 + 1e6 / 2e11 + 3.2e6 / 5e10);
  expect_relative(result.makespan_seconds, expected);
  expect_relative(result.ranks[0].seconds[static_cast<std::size_t>(TimeCategory::compute)],
                  expected);
}

// The batch's production: sampling (per sampled edge) and planning (per node whose holder the
// strategy looked up), one fixed cost; over partitioned structure, one per hop, planning after
// the last.
Plan sampling_plan() {
  Plan plan = empty_plan(0, 1);
  Op sample;
  sample.kind = OpKind::sample;
  sample.stream = Stream::sampler;
  sample.label = "sample";
  sample.sampled_edges = 400'000;
  sample.planned_nodes = 300'000;
  plan.ops = {sample};
  return plan;
}

TEST(ReplayClosedForm, SamplingAndPlanningFollowTheCostModel) {
  expect_relative(
      replay_plans(cluster(1, 1), one_iteration({sampling_plan()}), {}).makespan_seconds,
      3e-6 + 4e5 / 4e7 + 3e5 / 2e7);
}

TEST(ReplayClosedForm, SamplingHopByHopIsFollowedByPlanning) {
  Plan plan = sampling_plan();
  SamplingHop hop;
  hop.request_bytes_to = hop.request_bytes_from = hop.reply_bytes_to = hop.reply_bytes_from = {0};
  hop.edges_sampled_locally = 100'000;
  plan.ops[0].sampling_hops = {hop, hop};
  plan.ops[0].sampling_hops[1].edges_sampled_locally = 300'000;
  expect_relative(replay_plans(cluster(1, 1), one_iteration({plan}), {}).makespan_seconds,
                  (3e-6 + 1e5 / 4e7) + (3e-6 + 3e5 / 4e7) + 3e5 / 2e7);
}

TEST(ReplayClosedForm, RecordedDurationsReplaceTheCostModelWhereAsked) {
  const ClusterSpec spec = cluster(1, 1);
  Plan plan = empty_plan(0, 1);
  Op forward;
  forward.kind = OpKind::layer_forward;
  forward.label = "forward";
  forward.flops = 6e9;
  forward.measured_seconds = 0.0125;
  Op relu;
  relu.kind = OpKind::relu;
  relu.label = "relu (not recorded)";
  relu.memory_bytes = 40'000'000;
  relu.deps = {0};
  plan.ops = {forward, relu};
  ReplayOptions options;
  options.use_measured_durations = true;
  const ReplayResult measured = replay_plans(spec, one_iteration({plan}), options);
  expect_relative(measured.makespan_seconds, 0.0125 + (3e-6 + 4e7 / 5e10));
}

Op copy_stream_op(OpKind kind, std::string label, std::int64_t memory_bytes) {
  Op op;
  op.kind = kind;
  op.stream = Stream::copy;
  op.label = std::move(label);
  op.memory_bytes = memory_bytes;
  return op;
}

TEST(ReplayClosedForm, HostToDeviceCopyCrossesTheDeviceLink) {
  Plan plan = empty_plan(0, 1);
  plan.ops = {copy_stream_op(OpKind::copy_to_device, "copy", 16'000'000)};
  const ReplayResult result = replay_plans(cluster(1, 1, "gpu"), one_iteration({plan}), {});
  expect_relative(result.makespan_seconds, kDeviceLatency + 16e6 / kDeviceBandwidth);
}

// Every one of `ranks` GPUs of one machine copies `bytes` from host memory at once.
std::vector<std::vector<Plan>> every_gpu_copies(int ranks, std::int64_t bytes) {
  std::vector<Plan> plans;
  for (int r = 0; r < ranks; ++r) {
    Plan plan = empty_plan(r, ranks);
    plan.ops = {copy_stream_op(OpKind::copy_to_device, "copy", bytes)};
    plans.push_back(plan);
  }
  return one_iteration(plans);
}

TEST(ReplayClosedForm, AMachinesCopiesShareItsMemoryBus) {
  // Two GPUs copy 16 MB each over their own 8 GB/s lanes, through one 4 GB/s memory bus: 2 GB/s
  // each.
  const ReplayResult result =
      replay_plans(cluster(1, 2, "gpu", {{"host", {{"memory_bandwidth_bytes_per_second", 4e9}}}}),
                   every_gpu_copies(2, 16'000'000), {});
  expect_relative(result.makespan_seconds, kDeviceLatency + 16e6 / 2e9);
}

TEST(ReplayClosedForm, GpusUnderOnePcieSwitchShareItsUplink) {
  // Four GPUs in pairs under two switches with 6 GB/s uplinks (1 us): each pair's copies share
  // their uplink, 3 GB/s each, below their 8 GB/s lanes.
  const nlohmann::json pcie = {
      {"devices_per_switch", 2},
      {"uplink", {{"bandwidth_bytes_per_second", 6e9}, {"latency_seconds", 1e-6}}}};
  const ReplayResult result = replay_plans(cluster(1, 4, "gpu", {{"pcie_switch", pcie}}),
                                           every_gpu_copies(4, 16'000'000), {});
  expect_relative(result.makespan_seconds, kDeviceLatency + 1e-6 + 16e6 / 3e9);
}

// Two GPUs of one machine exchange `bytes` of activations each way.
std::vector<std::vector<Plan>> gpus_exchange(std::int64_t bytes) {
  std::vector<std::vector<Plan>> iterations = two_rank_exchange(bytes, bytes);
  for (Plan& plan : iterations[0]) plan.ops[0].traffic = Traffic::activations;
  return iterations;
}

TEST(ReplayClosedForm, GpusUnderOneSwitchReachEachOtherWithoutItsUplink) {
  const nlohmann::json pcie = {
      {"devices_per_switch", 2},
      {"uplink", {{"bandwidth_bytes_per_second", 1e9}, {"latency_seconds", 1e-6}}}};
  const ReplayResult result =
      replay_plans(cluster(1, 2, "gpu", {{"pcie_switch", pcie}}), gpus_exchange(8'000'000), {});
  expect_relative(result.makespan_seconds, 2 * kDeviceLatency + 8e6 / kDeviceBandwidth);
}

TEST(ReplayClosedForm, GpusUnderTwoSwitchesCrossBothUplinks) {
  const nlohmann::json pcie = {
      {"devices_per_switch", 1},
      {"uplink", {{"bandwidth_bytes_per_second", 1e9}, {"latency_seconds", 1e-6}}}};
  const ReplayResult result =
      replay_plans(cluster(1, 2, "gpu", {{"pcie_switch", pcie}}), gpus_exchange(8'000'000), {});
  expect_relative(result.makespan_seconds, 2 * kDeviceLatency + 2e-6 + 8e6 / 1e9);
}

// 2 machines x 2 GPUs: every rank exchanges `bytes` of `traffic` with its counterpart on the other
// machine (rank r + 2 mod 4) and zero-byte messages with the rest, as MPI sends them, all at once
// (one block of pairwise steps): the counterparts' transfers carry the time.
std::vector<std::vector<Plan>> counterparts_exchange(Traffic traffic, std::int64_t bytes) {
  std::vector<Plan> plans;
  for (int r = 0; r < 4; ++r) {
    Plan plan = empty_plan(r, 4);
    Op op = exchange_op("exchange", traffic, 4);
    const auto counterpart = static_cast<std::size_t>((r + 2) % 4);
    op.bytes_to[counterpart] = bytes;
    op.bytes_from[counterpart] = bytes;
    plan.ops.push_back(op);
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

constexpr std::int64_t kCounterpartBytes = 5'000'000;

TEST(ReplayClosedForm, RailsCarryTheirGpusTransfersSideBySide) {
  // Two NICs per machine, one per GPU: the two counterpart transfers leaving a machine at step 2
  // each have a NIC.
  const ReplayResult result =
      replay_plans(cluster(2, 2, "gpu", {{"nic", {{"count", 2}}}}),
                   counterparts_exchange(Traffic::activations, kCounterpartBytes), {});
  expect_relative(result.makespan_seconds, remote_seconds(static_cast<double>(kCounterpartBytes)));
}

TEST(ReplayClosedForm, GpusOfAMachineShareItsOneNic) {
  const ReplayResult result = replay_plans(
      cluster(2, 2, "gpu"), counterparts_exchange(Traffic::activations, kCounterpartBytes), {});
  expect_relative(result.makespan_seconds,
                  remote_seconds(0) + 2 * static_cast<double>(kCounterpartBytes) / kNicBandwidth);
}

// A 1 GB/s memory bus, below the NICs' 1.25 GB/s, in machines with a NIC per GPU.
ClusterSpec slow_bus_rails(bool gpu_direct) {
  return cluster(2, 2, "gpu",
                 {{"host", {{"memory_bandwidth_bytes_per_second", 1e9}}},
                  {"nic", {{"count", 2}, {"gpu_direct", gpu_direct}}}});
}

TEST(ReplayClosedForm, GpuDirectTransfersSkipTheMemoryBus) {
  // With GPUDirect RDMA each of step 2's transfers goes at its NIC's bandwidth.
  const ReplayResult result = replay_plans(
      slow_bus_rails(true), counterparts_exchange(Traffic::activations, kCounterpartBytes), {});
  expect_relative(result.makespan_seconds, remote_seconds(static_cast<double>(kCounterpartBytes)));
}

TEST(ReplayClosedForm, StagedTransfersShareTheMemoryBus) {
  // Staged through host memory, step 2's four transfers in and out of a machine share its bus:
  // 0.25 GB/s each.
  const ReplayResult result = replay_plans(
      slow_bus_rails(false), counterparts_exchange(Traffic::activations, kCounterpartBytes), {});
  expect_relative(result.makespan_seconds,
                  remote_seconds(0) + static_cast<double>(kCounterpartBytes) / 0.25e9);
}

TEST(ReplayClosedForm, TheCpusTransfersLeaveOverItsFirstNic) {
  // Features move between the machines' CPUs: with a NIC per GPU, both counterpart transfers
  // still leave over the first NIC and share it, across two NICs.
  const ReplayResult result =
      replay_plans(cluster(2, 2, "gpu", {{"nic", {{"count", 2}}}}),
                   counterparts_exchange(Traffic::features, kCounterpartBytes), {});
  expect_relative(result.makespan_seconds,
                  2 * kNicLatency + 2 * static_cast<double>(kCounterpartBytes) / kNicBandwidth);
}

TEST(ReplayClosedForm, FeaturesMoveBetweenMachineCpusWithoutCrossingTheDeviceLinks) {
  // 2 machines x 2 GPUs, every rank pulls 1 MB of features from every other: feature traffic is
  // between the machines' CPUs, so 10 kB/s device links (100 s per MB) are never on its route, at
  // any step of the exchange (a step may receive from its own machine and send to another).
  std::vector<Plan> plans;
  for (int r = 0; r < 4; ++r) {
    Plan plan = empty_plan(r, 4);
    Op op = exchange_op("features", Traffic::features, 4);
    for (int q = 0; q < 4; ++q) {
      if (q == r) continue;
      op.bytes_to[static_cast<std::size_t>(q)] = 1'000'000;
      op.bytes_from[static_cast<std::size_t>(q)] = 1'000'000;
    }
    plan.ops.push_back(op);
    plans.push_back(plan);
  }
  const ReplayResult result =
      replay_plans(cluster(2, 2, "gpu", {{"device_link", {{"bandwidth_bytes_per_second", 1e4}}}}),
                   one_iteration(plans), {});
  EXPECT_LT(result.makespan_seconds, 0.1);
  EXPECT_GT(result.makespan_seconds, 2e6 / kNicBandwidth);  // two remote MB per rank over a NIC
}

// Rank 0 gathers 1000 of its input rows (400 kB) into "local", and the 500 rows (200 kB) a peer
// sent arrived in "pulled" (the prologue's, so in host memory); it assembles both and copies the
// assembly to its device.
Plan assemble_and_copy_plan() {
  Plan plan = empty_plan(0, 1);
  const auto add_tensor = [&](const std::string& name, TensorKind kind, std::int64_t rows,
                              std::int64_t cols) {
    plan.tensors.push_back({name, kind, rows, cols, nullptr, nullptr});
    return static_cast<int>(plan.tensors.size()) - 1;
  };
  const int local = add_tensor("local", TensorKind::dense, 1000, 100);
  const int pulled = add_tensor("pulled", TensorKind::dense, 500, 100);
  const int assembly = add_tensor("assembly", TensorKind::dense, 1500, 100);
  const int local_positions = add_tensor("local positions", TensorKind::index, 1000, 1);
  const int pulled_positions = add_tensor("pulled positions", TensorKind::index, 500, 1);
  Op gather = copy_stream_op(OpKind::gather_features, "gather", 400'000);
  gather.outputs = {local};
  Op assemble = copy_stream_op(OpKind::scatter_rows, "assemble", 600'000);
  assemble.inputs = {local_positions, local, pulled_positions, pulled};
  assemble.outputs = {assembly};
  assemble.deps = {0};
  Op copy = copy_stream_op(OpKind::copy_to_device, "copy", 600'000);
  copy.inputs = {assembly};
  copy.deps = {1};
  plan.ops = {gather, assemble, copy};
  return plan;
}

TEST(ReplayClosedForm, CopiesMoveTheHostRowsOfTheirInput) {
  // The plan's one copy, op 2, and the bytes it moves.
  const auto copied = [](const Plan& plan, bool features_on_device) {
    const std::vector<DeviceCopy> copies = device_copies(plan, features_on_device);
    EXPECT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies.at(0).op, 2u);
    return copies.at(0).bytes;
  };
  const Plan plan = assemble_and_copy_plan();
  EXPECT_EQ(copied(plan, false), 600'000) << "gathered on the host: every row";
  EXPECT_EQ(copied(plan, true), 200'000) << "the gathered rows are on the device";
  Plan straight = plan;
  straight.ops[2].inputs = {0};
  straight.ops[2].memory_bytes = 400'000;
  EXPECT_EQ(copied(straight, true), 0);
  straight.ops[2].inputs = {1};
  straight.ops[2].memory_bytes = 200'000;
  EXPECT_EQ(copied(straight, true), 200'000) << "what arrived from peers";
}

// The device has no gather_features cost: it gathers as it gathers rows, at 1e11 bytes/s.
ClusterSpec gpu_keeping_features() {
  return cluster(
      1, 1, "gpu",
      {{"device",
        {{"keeps_features", true},
         {"cost_model",
          {{"gather_features", nullptr},
           {"gather_rows", {{"fixed_seconds", 3e-6}, {"memory_bytes_per_second", 1e11}}}}}}}});
}
constexpr double kAssembleSeconds = 3e-6 + 6e5 / 5e10;

TEST(ReplayClosedForm, ADeviceKeepingTheFeaturesGathersThemAndCopiesThePeersRows) {
  ReplayOptions options;
  options.feature_bytes = {1 << 20};
  const ReplayResult result =
      replay_plans(gpu_keeping_features(), one_iteration({assemble_and_copy_plan()}), options);
  expect_relative(result.makespan_seconds, (3e-6 + 4e5 / 1e11) + kAssembleSeconds +
                                               (kDeviceLatency + 2e5 / kDeviceBandwidth));
}

TEST(ReplayClosedForm, FeaturesLargerThanHalfTheDeviceStayOnTheHost) {
  // As the engine leaves them: gathered on the host, every row copied.
  ReplayOptions options;
  options.feature_bytes = {(1LL << 33) + 1};
  const ReplayResult result =
      replay_plans(gpu_keeping_features(), one_iteration({assemble_and_copy_plan()}), options);
  expect_relative(result.makespan_seconds, (3e-6 + 4e5 / 5e10) + kAssembleSeconds +
                                               (kDeviceLatency + 6e5 / kDeviceBandwidth));
}

TEST(ReplayClosedForm, IterationsRunInOrderOnEveryRank) {
  Plan plan = empty_plan(0, 1);
  Op op;
  op.kind = OpKind::loss;
  op.label = "loss";
  op.memory_bytes = 5'000'000;
  plan.ops = {op};
  const ReplayResult result =
      replay_plans(cluster(1, 1), {std::vector<Plan>{plan}, std::vector<Plan>{plan}}, {});
  const double one = 3e-6 + 5e6 / 5e10;
  expect_relative(result.iteration_end_seconds[0], one);
  expect_relative(result.makespan_seconds, 2 * one);
}

// Two independent ops on different streams: 5e7 bytes of gathering (sampler stream) and of relu
// (compute stream), 1 ms + 3 us each.
Plan two_streams_plan() {
  Plan plan = empty_plan(0, 1);
  Op gather;
  gather.kind = OpKind::gather_features;
  gather.stream = Stream::sampler;
  gather.label = "gather";
  gather.memory_bytes = 50'000'000;
  Op relu;
  relu.kind = OpKind::relu;
  relu.stream = Stream::compute;
  relu.label = "relu";
  relu.memory_bytes = 50'000'000;
  plan.ops = {gather, relu};
  return plan;
}

TEST(ReplayClosedForm, CpuRankRunsItsStreamsOneAfterAnother) {
  // One thread runs a CPU rank's plan (PlanExecutor): no overlap between its streams.
  const ReplayResult result = replay_plans(cluster(1, 1), one_iteration({two_streams_plan()}), {});
  const double one = 3e-6 + 5e7 / 5e10;
  expect_relative(result.makespan_seconds, 2 * one);
  // Concurrent on one core, each would have taken twice as long in the breakdown.
  const SimulatedRank& rank = result.ranks[0];
  expect_relative(rank.seconds[static_cast<std::size_t>(TimeCategory::copy)], one);
  expect_relative(rank.seconds[static_cast<std::size_t>(TimeCategory::compute)], one);
}

TEST(ReplayClosedForm, GpuRankOverlapsHostAndDeviceWork) {
  // The gather runs on the machine's CPU, the relu on the GPU: they overlap.
  const ReplayResult result =
      replay_plans(cluster(1, 1, "gpu"), one_iteration({two_streams_plan()}), {});
  expect_relative(result.makespan_seconds, 3e-6 + 5e7 / 5e10);
}

TEST(ReplayClosedForm, GpuRanksPlanWaitsForItsPrologue) {
  // The gather is the prologue (as sampling is): the relu, with no dependency on it, is still an op
  // of the plan built from its results, so it starts when the prologue ends.
  Plan plan = two_streams_plan();
  plan.prologue_ops = 1;
  const ReplayResult result = replay_plans(cluster(1, 1, "gpu"), one_iteration({plan}), {});
  expect_relative(result.makespan_seconds, 2 * (3e-6 + 5e7 / 5e10));
}

std::vector<Plan> compute_only_plans(int num_ranks) {
  std::vector<Plan> plans;
  for (int r = 0; r < num_ranks; ++r) {
    Plan plan = empty_plan(r, num_ranks);
    Op relu;
    relu.kind = OpKind::relu;
    relu.label = "relu";
    relu.memory_bytes = 50'000'000;
    plan.ops = {relu};
    plans.push_back(plan);
  }
  return plans;
}

TEST(ReplayClosedForm, AComputeTimeFactorScalesCompute) {
  const ReplayResult result = replay_plans(cluster(2, 1, "cpu", {{"compute_time_factor", 1.25}}),
                                           one_iteration(compute_only_plans(2)), {});
  expect_relative(result.makespan_seconds, 1.25 * (3e-6 + 5e7 / 5e10));
}

TEST(ReplayClosedForm, RanksOutnumberingSharedCoresShareThem) {
  const double one = 3e-6 + 5e7 / 5e10;
  const ReplayResult two_cores = replay_plans(cluster(4, 1, "cpu", {{"shared_cores", 2}}),
                                              one_iteration(compute_only_plans(4)), {});
  expect_relative(two_cores.makespan_seconds, 2 * one);  // four busy ranks, two cores
}

TEST(ReplayClosedForm, RanksShareOnlyTheirOwnCore) {
  // Ranks 0 and 2 share core 0, rank 1 has core 1 to itself and does not lend it when it is done:
  // busy-polling MPI ranks never leave a core idle for the OS to balance onto.
  const double one = 3e-6 + 5e7 / 5e10;
  const ReplayResult three_ranks = replay_plans(cluster(3, 1, "cpu", {{"shared_cores", 2}}),
                                                one_iteration(compute_only_plans(3)), {});
  expect_relative(three_ranks.makespan_seconds, 2 * one);
}

TEST(ReplayClosedForm, AsManySharedCoresAsRanksChangeNothing) {
  const ReplayResult four_cores = replay_plans(cluster(4, 1, "cpu", {{"shared_cores", 4}}),
                                               one_iteration(compute_only_plans(4)), {});
  expect_relative(four_cores.makespan_seconds, 3e-6 + 5e7 / 5e10);
}

// Three ranks on two shared cores that time slice (ranks 0 and 2 on core 0, rank 1 on core 1).
ClusterSpec sliced_cores(double slice_seconds) {
  return cluster(3, 1, "cpu",
                 {{"shared_cores", 2}, {"shared_core_time_slice_seconds", slice_seconds}});
}

// A relu of 5e10 bytes a second (every_kind_cost) that takes `seconds`.
Op relu_of(double seconds) {
  Op relu;
  relu.kind = OpKind::relu;
  relu.label = "relu";
  relu.memory_bytes = static_cast<std::int64_t>(std::llround((seconds - 3e-6) * 5e10));
  return relu;
}

TEST(ReplayClosedForm, CoreMatesComputingTakeTurnsOfATimeSlice) {
  // Ranks 0 and 2 compute 10 ms each on core 0 in turns of 4 ms (ticks at 4, 8, 12, 16 ms): the
  // first to start gets 0-4, 8-12 and 16-18, the other 4-8, 12-16 and 18-20, so one finishes at
  // 18 ms and the other at 20 ms, where processor sharing finishes both at 20 ms. Rank 1 has
  // core 1 to itself.
  std::vector<Plan> plans;
  for (int r = 0; r < 3; ++r) {
    Plan plan = empty_plan(r, 3);
    plan.ops = {relu_of(0.010)};
    plans.push_back(plan);
  }
  const ReplayResult result = replay_plans(sliced_cores(0.004), one_iteration(plans), {});
  const double first = std::min(result.ranks[0].finish_seconds, result.ranks[2].finish_seconds);
  const double last = std::max(result.ranks[0].finish_seconds, result.ranks[2].finish_seconds);
  expect_relative(first, 0.018);
  expect_relative(last, 0.020);
  expect_relative(result.ranks[1].finish_seconds, 0.010);
}

// Ranks 0, 1 and 2 on sliced_cores run one all-to-all in which only rank 1 sends rank 0 anything
// (`bytes`); rank 2 then computes for `relu_seconds`. Every pair at once: rank 2 is done at
// T0 = remote_seconds(0) and computes, while rank 0 still waits for rank 1's message, which
// arrives at remote_seconds(bytes).
ReplayResult released_beside_a_computing_core_mate(double slice_seconds, std::int64_t bytes,
                                                   double relu_seconds) {
  std::vector<Plan> plans;
  for (int r = 0; r < 3; ++r) {
    Plan plan = empty_plan(r, 3);
    Op exchange = exchange_op("features", Traffic::features, 3);
    if (r == 1) exchange.bytes_to[0] = bytes;
    if (r == 0) exchange.bytes_from[1] = bytes;
    plan.ops.push_back(exchange);
    if (r == 2) {
      plan.ops.push_back(relu_of(relu_seconds));
      plan.ops.back().deps = {0};
    }
    plans.push_back(plan);
  }
  return replay_plans(sliced_cores(slice_seconds), one_iteration(plans), {});
}

constexpr std::int64_t kReleasingBytes = 1'250'000;  // 1 ms over the NIC

double releasing_arrival_seconds() { return remote_seconds(static_cast<double>(kReleasingBytes)); }

TEST(ReplayClosedForm, ARankReleasedWhileItsCoreMateComputesRunsAtTheNextTick) {
  const ReplayResult result = released_beside_a_computing_core_mate(0.004, kReleasingBytes, 0.010);
  ASSERT_LT(releasing_arrival_seconds(), 0.004);
  expect_relative(result.ranks[0].finish_seconds, 0.004);
  // Rank 0's peers started sending as soon as it asked: what it waited for is its core.
  EXPECT_NEAR(result.ranks[0].seconds[kNumTimeCategories], 0.004 - releasing_arrival_seconds(),
              1e-12);
  // Rank 2 was released at T0, when its core-mate waited: it computed at once, alone.
  expect_relative(result.ranks[2].finish_seconds, remote_seconds(0) + 0.010);
}

TEST(ReplayClosedForm, ARankReleasedWhileItsCoreMateComputesRunsWhenTheCoreMateStops) {
  // Rank 2's relu ends between the message's arrival and the next tick: the core-mate then waits
  // in MPI and yields.
  const double relu_seconds = (releasing_arrival_seconds() + 0.004) / 2 - remote_seconds(0);
  const ReplayResult result =
      released_beside_a_computing_core_mate(0.004, kReleasingBytes, relu_seconds);
  // The relu as costed, its bytes rounded.
  const double relu_end =
      remote_seconds(0) + 3e-6 + static_cast<double>(relu_of(relu_seconds).memory_bytes) / 5e10;
  ASSERT_GT(relu_end, releasing_arrival_seconds());
  expect_relative(result.ranks[2].finish_seconds, relu_end);
  expect_relative(result.ranks[0].finish_seconds, relu_end);
}

TEST(ReplayClosedForm, SpreadRanksWaitForTheSlowest) {
  // Two ranks compute, then exchange nothing: the faster waits for the slower, which computes
  // for (1 + spread * 0.5894) of the cost model's time (Blom's score of the larger of 2 draws).
  const double spread = 0.1;
  const double slow_factor = 1 + spread * 0.58945;
  std::vector<Plan> plans = compute_only_plans(2);
  for (Plan& plan : plans) {
    Op exchange = exchange_op("features", Traffic::features, 2);
    exchange.deps = {0};
    plan.ops.push_back(exchange);
  }
  const ReplayResult result =
      replay_plans(cluster(2, 1, "cpu", {{"rank_speed_spread", spread}}), one_iteration(plans), {});
  const double one = 3e-6 + 5e7 / 5e10;
  const double exchange = remote_seconds(0);
  EXPECT_NEAR(result.makespan_seconds, slow_factor * one + exchange, 1e-5 * one);
  const double fast_factor = 2 - slow_factor;
  EXPECT_NEAR(result.ranks[0].seconds[kNumTimeCategories], (slow_factor - fast_factor) * one,
              1e-5 * one);
  EXPECT_EQ(result.ranks[1].seconds[kNumTimeCategories], 0.0);
}

TEST(ReplayClosedForm, DeviatingPartsComputeSlower) {
  // Machine 1 computes 2x slower, and its second rank 1.5x on top of that.
  const ClusterSpec spec = cluster(2, 2, "cpu",
                                   {{"deviations",
                                     {{{"machine", 1}, {"compute_time_factor", 2}},
                                      {{"rank", 3}, {"compute_time_factor", 1.5}}}}});
  const ReplayResult result = replay_plans(spec, one_iteration(compute_only_plans(4)), {});
  const double one = 3e-6 + 5e7 / 5e10;
  for (const auto& [rank, factor] : {std::pair{0, 1.0}, {1, 1.0}, {2, 2.0}, {3, 3.0}}) {
    expect_relative(result.ranks[static_cast<std::size_t>(rank)].finish_seconds, factor * one);
  }
}

TEST(ReplayClosedForm, EveryRankWaitsForAStragglerAtTheNextExchange) {
  std::vector<Plan> plans = compute_only_plans(2);
  for (Plan& plan : plans) {
    Op exchange = exchange_op("features", Traffic::features, 2);
    exchange.deps = {0};
    plan.ops.push_back(exchange);
  }
  const ReplayResult result = replay_plans(
      cluster(2, 1, "cpu", {{"deviations", {{{"rank", 1}, {"compute_time_factor", 1.8}}}}}),
      one_iteration(plans), {});
  const double one = 3e-6 + 5e7 / 5e10;
  expect_relative(result.makespan_seconds, 1.8 * one + remote_seconds(0));
  expect_relative(result.ranks[0].seconds[kNumTimeCategories], 0.8 * one);
  EXPECT_EQ(result.ranks[1].seconds[kNumTimeCategories], 0.0);
}

TEST(ReplayClosedForm, ADegradedNicBoundsTheTransfersThroughIt) {
  const std::int64_t bytes = 3'000'000;
  const ReplayResult result = replay_plans(
      cluster(2, 1, "cpu",
              {{"deviations",
                {{{"machine", 1}, {"nic", {{"bandwidth_gbps", 1}, {"latency_seconds", 5e-5}}}}}}}),
      two_rank_exchange(bytes, 0), {});
  expect_relative(result.makespan_seconds,
                  2 * kDeviceLatency + kNicLatency + 5e-5 + static_cast<double>(bytes) / 1.25e8);
}

TEST(ReplayClosedForm, ADegradedDeviceLinkBoundsTheTransfersThroughIt) {
  const std::int64_t bytes = 3'000'000;
  const ReplayResult result = replay_plans(
      cluster(2, 1, "cpu",
              {{"deviations",
                {{{"rank", 0}, {"device_link", {{"bandwidth_bytes_per_second", 1e8}}}}}}}),
      two_rank_exchange(bytes, 0), {});
  expect_relative(result.makespan_seconds,
                  2 * kDeviceLatency + 2 * kNicLatency + static_cast<double>(bytes) / 1e8);
}

TEST(ReplayClosedForm, ADegradedNicInAFatTreeBoundsItsMachinesTransfers) {
  // Two machines under one switch: each machine's up link and the switch's down link carry the
  // NIC's latency; the deviating NIC is machine 0's limiter link, the narrowest on the route.
  const std::int64_t bytes = 3'000'000;
  const nlohmann::json patch = {
      {"network",
       {{"topology", "fat-tree"}, {"fat_tree", {{"down", {2}}, {"up", {1}}, {"link_count", {1}}}}}},
      {"deviations", {{{"machine", 0}, {"nic", {{"bandwidth_gbps", 1}}}}}}};
  const ReplayResult result =
      replay_plans(cluster(2, 1, "cpu", patch), two_rank_exchange(bytes, 0), {});
  expect_relative(result.makespan_seconds,
                  2 * kDeviceLatency + 2 * kNicLatency + static_cast<double>(bytes) / 1.25e8);
}

// Two ranks compute one op, then exchange: rank 1 computes twice as long.
std::vector<std::vector<Plan>> compute_then_exchange() {
  std::vector<Plan> plans = compute_only_plans(2);
  for (Plan& plan : plans) {
    Op exchange = exchange_op("features", Traffic::features, 2);
    exchange.deps = {0};
    exchange.bytes_to[static_cast<std::size_t>(1 - plan.rank)] = 1'000'000;
    exchange.bytes_from[static_cast<std::size_t>(1 - plan.rank)] = 1'000'000;
    plan.ops.push_back(exchange);
  }
  return one_iteration(plans);
}

nlohmann::json failing(const nlohmann::json& failure, double detection_seconds) {
  nlohmann::json deviations = {{{"rank", 1}, {"compute_time_factor", 2}}};
  deviations.push_back(failure);
  return {{"deviations", deviations}, {"failure_detection_seconds", detection_seconds}};
}

TEST(ReplayClosedForm, AFailedRankStopsTheJobWhereEveryRankStood) {
  const double one = 3e-6 + 5e7 / 5e10;
  // Rank 0 fails while rank 1 still computes; the job is stopped at once.
  const ReplayResult result =
      replay_plans(cluster(2, 1, "cpu", failing({{"rank", 0}, {"fails_at_seconds", 1.5 * one}}, 0)),
                   compute_then_exchange(), {});
  ASSERT_TRUE(result.failure.has_value());
  const ReplayFailure& failure = *result.failure;
  EXPECT_FALSE(failure.completed);
  ASSERT_EQ(failure.applied.size(), 1U);
  EXPECT_EQ(failure.applied[0].part, "rank 0");
  expect_relative(failure.stopped_seconds, 1.5 * one);
  EXPECT_EQ(failure.iterations_completed, 0);
  EXPECT_EQ(failure.ranks[0].state, "failed");
  EXPECT_EQ(failure.ranks[0].next_op, "features");
  expect_relative(failure.ranks[0].last_op_end_seconds, one);
  EXPECT_EQ(failure.ranks[1].state, "waiting");  // still computing when the job was stopped
  EXPECT_EQ(failure.ranks[1].next_op, "relu");
}

TEST(ReplayClosedForm, SurvivorsGoOnUntilTheyNeedTheFailedPart) {
  const double one = 3e-6 + 5e7 / 5e10;
  // Detected 1 s later: rank 1 finishes its op, then starts its transfer to rank 0's dead host,
  // which fails; with no rank left, the job ends there, before the detection time.
  const ReplayResult result =
      replay_plans(cluster(2, 1, "cpu", failing({{"rank", 0}, {"fails_at_seconds", 1.5 * one}}, 1)),
                   compute_then_exchange(), {});
  ASSERT_TRUE(result.failure.has_value());
  const ReplayFailure& failure = *result.failure;
  expect_relative(failure.stopped_seconds, 2 * one);
  EXPECT_EQ(failure.ranks[1].state, "aborted");
  EXPECT_EQ(failure.ranks[1].next_op, "features");
  expect_relative(failure.ranks[1].last_op_end_seconds, 2 * one);
}

TEST(ReplayClosedForm, AFailedNicAbortsTheTransferThroughIt) {
  const double one = 3e-6 + 5e7 / 5e10;
  // Machine 0's NIC fails while rank 1 still computes: once rank 1 has posted its receive, both
  // ranks start their transfers over the dead NIC, and both fail.
  const ReplayResult result = replay_plans(
      cluster(2, 1, "cpu",
              failing({{"machine", 0}, {"nic", {{"fails_at_seconds", 1.5 * one}}}}, 1)),
      compute_then_exchange(), {});
  ASSERT_TRUE(result.failure.has_value());
  const ReplayFailure& failure = *result.failure;
  EXPECT_EQ(failure.applied[0].part, "the NIC of machine 0");
  for (const StoppedRank& rank : failure.ranks) {
    EXPECT_EQ(rank.state, "aborted") << "rank " << rank.rank;
    EXPECT_EQ(rank.next_op, "features") << "rank " << rank.rank;
  }
  expect_relative(failure.stopped_seconds, 2 * one);
}

TEST(ReplayClosedForm, AFailureAfterTheLastIterationNeverHappens) {
  const ReplayResult result =
      replay_plans(cluster(2, 1, "cpu", failing({{"machine", 0}, {"fails_at_seconds", 10}}, 0)),
                   compute_then_exchange(), {});
  EXPECT_FALSE(result.failure.has_value());
  const double one = 3e-6 + 5e7 / 5e10;
  expect_relative(result.makespan_seconds, 2 * one + remote_seconds(1e6));
}

TEST(ReplayClosedForm, JitteredRanksWaitForTheSlowerDraw) {
  // Two ranks compute one op each, then exchange nothing: each computes for its own draw of the
  // jitter (op 0 of iteration 0), and the faster waits for the slower.
  std::vector<Plan> plans = compute_only_plans(2);
  for (Plan& plan : plans) {
    Op exchange = exchange_op("features", Traffic::features, 2);
    exchange.deps = {0};
    plan.ops.push_back(exchange);
  }
  const ClusterSpec spec = cluster(2, 1, "cpu", {{"compute_jitter", 0.2}});
  const double factor_0 = spec.jitter_factor(0, 0, 0);
  const double factor_1 = spec.jitter_factor(1, 0, 0);
  ASSERT_NE(factor_0, factor_1);
  const ReplayResult result = replay_plans(spec, one_iteration(plans), {});
  const double one = 3e-6 + 5e7 / 5e10;
  expect_relative(result.makespan_seconds, std::max(factor_0, factor_1) * one + remote_seconds(0));
  const std::size_t faster = factor_0 < factor_1 ? 0 : 1;
  EXPECT_NEAR(result.ranks[faster].seconds[kNumTimeCategories], std::abs(factor_0 - factor_1) * one,
              1e-9 * one);
  EXPECT_EQ(result.ranks[1 - faster].seconds[kNumTimeCategories], 0.0);
}

TEST(ReplayClosedForm, NetworkStackCpuTimeBoundsATransferWhenSlowerThanTheLink) {
  // 1 ns of CPU per byte at each end (1 GB/s) is slower than the 10 Gbit/s route, and runs
  // concurrently with the transfer: the transfer takes bytes * 1 ns.
  const std::int64_t bytes = 3'000'000;
  const ClusterSpec spec = cluster(2, 1, "cpu", {{"nic", {{"cpu_seconds_per_byte", 1e-9}}}});
  const ReplayResult result = replay_plans(spec, two_rank_exchange(bytes, 0), {});
  ASSERT_GT(static_cast<double>(bytes) * 1e-9, remote_seconds(static_cast<double>(bytes)));
  expect_relative(result.makespan_seconds, static_cast<double>(bytes) * 1e-9);
}

// Two machines exchange `bytes` both ways at once under LV08, with or without TCP's cross
// traffic (cluster.hpp: network.crosstraffic).
ReplayResult exchange_both_ways_lv08(std::int64_t bytes, bool crosstraffic) {
  const ClusterSpec spec =
      cluster(2, 1, "cpu", {{"network", {{"model", "LV08"}, {"crosstraffic", crosstraffic}}}});
  return replay_plans(spec, two_rank_exchange(bytes, bytes), {});
}

// LV08's factors (SimGrid's defaults): latencies x 13.01, bandwidth x 0.97.
constexpr double kLv08LatencyFactor = 13.01;
constexpr double kLv08BandwidthFactor = 0.97;
constexpr std::int64_t kBothWaysBytes = 3'000'000;

double lv08_one_way_seconds(double bytes) {
  return kLv08LatencyFactor * (2 * kDeviceLatency + 2 * kNicLatency) +
         bytes / (kLv08BandwidthFactor * std::min(kDeviceBandwidth, kNicBandwidth));
}

TEST(ReplayClosedForm, WithoutCrossTrafficBothWaysTakeTheOneWayTime) {
  // Split-duplex links: the two directions do not meet.
  const ReplayResult result = exchange_both_ways_lv08(kBothWaysBytes, false);
  expect_relative(result.makespan_seconds,
                  lv08_one_way_seconds(static_cast<double>(kBothWaysBytes)));
}

TEST(ReplayClosedForm, CrossTrafficLoadsTheReversePath) {
  // Each direction's acknowledgements share the links of the other direction's data.
  const ReplayResult result = exchange_both_ways_lv08(kBothWaysBytes, true);
  EXPECT_GT(result.makespan_seconds,
            1.01 * lv08_one_way_seconds(static_cast<double>(kBothWaysBytes)));
}

// Pipelining (plan.hpp): per iteration, compute c, then an exchange of T seconds, then compute c
// that needs the exchange. Without pipelining every iteration takes 2c + T; with a pipeline of
// depth 1 the exchange of iteration k runs while the rank computes the second half of k - 1 and
// the first half of k + 1, so with T <= c the rank computes without a break: 2nc in all.
std::vector<std::vector<Plan>> exchange_between_computes(int iterations, int depth,
                                                         std::int64_t bytes) {
  std::vector<std::vector<Plan>> all;
  for (int i = 0; i < iterations; ++i) {
    std::vector<Plan> plans;
    for (int r = 0; r < 2; ++r) {
      Plan plan = empty_plan(r, 2);
      plan.iteration = i;
      plan.step = i;
      plan.pipeline_depth = depth;
      Op first;
      first.kind = OpKind::loss;
      first.label = "first half";
      first.memory_bytes = 5'000'000;
      Op exchange = exchange_op("partials", Traffic::activations, 2);
      exchange.bytes_to[static_cast<std::size_t>(1 - r)] = bytes;
      exchange.bytes_from[static_cast<std::size_t>(1 - r)] = bytes;
      exchange.deps = {0};
      Op second = first;
      second.label = "second half";
      second.deps = {1};
      second.stage = depth;
      plan.ops = {first, exchange, second};
      plan.validate();
      plans.push_back(plan);
    }
    all.push_back(plans);
  }
  return all;
}

constexpr int kPipelinedIterations = 4;
constexpr std::int64_t kHiddenExchangeBytes = 50'000;
constexpr double kHalfCompute = 3e-6 + 5e6 / 5e10;

TEST(ReplayClosedForm, WithoutPipeliningExchangesAddToCompute) {
  const double exchange = remote_seconds(static_cast<double>(kHiddenExchangeBytes));
  const ReplayResult plain = replay_plans(
      cluster(2, 1), exchange_between_computes(kPipelinedIterations, 0, kHiddenExchangeBytes), {});
  expect_relative(plain.makespan_seconds, kPipelinedIterations * (2 * kHalfCompute + exchange));
}

TEST(ReplayClosedForm, PipeliningHidesExchangesOnCpuRanks) {
  ASSERT_LT(remote_seconds(static_cast<double>(kHiddenExchangeBytes)), kHalfCompute)
      << "the closed form needs the exchange hidden";
  const ReplayResult pipelined = replay_plans(
      cluster(2, 1), exchange_between_computes(kPipelinedIterations, 1, kHiddenExchangeBytes), {});
  expect_relative(pipelined.makespan_seconds, 2 * kPipelinedIterations * kHalfCompute);
}

TEST(ReplayClosedForm, PipeliningHidesExchangesOnGpuRanks) {
  // Compute and network streams are separate actors on GPU ranks anyway.
  const ReplayResult pipelined =
      replay_plans(cluster(2, 1, "gpu"),
                   exchange_between_computes(kPipelinedIterations, 1, kHiddenExchangeBytes), {});
  expect_relative(pipelined.makespan_seconds, 2 * kPipelinedIterations * kHalfCompute);
}

// With the exchange longer than the compute it overlaps, the network is the bottleneck: the
// exchanges run back to back after the first compute, and the last compute follows the last one.
TEST(ReplayClosedForm, PipeliningIsBoundByTheSlowerOfComputeAndNetwork) {
  const std::int64_t bytes = 1'000'000;
  const double exchange = remote_seconds(static_cast<double>(bytes));
  ASSERT_GT(exchange, 2 * kHalfCompute);
  const ReplayResult pipelined =
      replay_plans(cluster(2, 1), exchange_between_computes(kPipelinedIterations, 1, bytes), {});
  expect_relative(pipelined.makespan_seconds,
                  kHalfCompute + kPipelinedIterations * exchange + kHalfCompute);
}

// A transport that moves data only inside its calls (cluster.hpp: nic.progress_window_bytes).
constexpr std::int64_t kWindowBytes = 250'000;
constexpr double kWindowSeconds = kWindowBytes / kNicBandwidth;

Op compute_op(const std::string& label, double seconds) {
  Op op;
  op.kind = OpKind::loss;  // 3 us + memory_bytes at 5e10 bytes/s (every_kind_cost)
  op.label = label;
  op.memory_bytes = static_cast<std::int64_t>((seconds - 3e-6) * 5e10);
  return op;
}
double compute_seconds(const Op& op) { return 3e-6 + static_cast<double>(op.memory_bytes) / 5e10; }

ClusterSpec windowed_cluster(std::int64_t window_bytes) {
  return cluster(2, 1, "cpu", {{"nic", {{"progress_window_bytes", window_bytes}}}});
}

// Both ranks post an exchange of `bytes` each way, compute `seconds` beside it, then compute the
// same again with what arrived.
std::vector<std::vector<Plan>> exchange_beside_compute(std::int64_t bytes, double seconds) {
  std::vector<Plan> plans;
  for (int r = 0; r < 2; ++r) {
    Plan plan = empty_plan(r, 2);
    Op exchange = exchange_op("pull", Traffic::features, 2);
    exchange.bytes_to[static_cast<std::size_t>(1 - r)] = bytes;
    exchange.bytes_from[static_cast<std::size_t>(1 - r)] = bytes;
    Op beside = compute_op("beside", seconds);
    Op after = compute_op("after", seconds);
    after.deps = {0};
    plan.ops = {exchange, beside, after};
    plan.validate();
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

TEST(ReplayClosedForm, ATransferOverlapsComputeWhereTheTransportProgressesAlone) {
  const std::int64_t bytes = 2'500'000;
  const auto plans = exchange_beside_compute(bytes, 5e-3);
  const double compute = compute_seconds(plans[0][0].ops[1]);
  ASSERT_LT(remote_seconds(static_cast<double>(bytes)), compute);
  const ReplayResult result = replay_plans(windowed_cluster(0), plans, {});
  expect_relative(result.makespan_seconds, 2 * compute);
}

TEST(ReplayClosedForm, ATransferStallsWhileItsRanksComputePastTheProgressWindow) {
  // The transfer moves from the post until the window has passed (its latency, then bytes at the
  // link's rate), stalls until the computation beside it ends, and moves the rest after it: it
  // ends (compute - window) later than alone.
  const std::int64_t bytes = 2'500'000;
  const auto plans = exchange_beside_compute(bytes, 5e-3);
  const double compute = compute_seconds(plans[0][0].ops[1]);
  const double transfer = remote_seconds(static_cast<double>(bytes));
  ASSERT_LT(kWindowSeconds, transfer);
  const ReplayResult result = replay_plans(windowed_cluster(kWindowBytes), plans, {});
  // The closed gate lets a byte a second through: (compute - window) bytes, nothing at 1e-9.
  expect_relative(result.makespan_seconds, transfer + (compute - kWindowSeconds) + compute);
}

// Rank 0 posts an exchange of 1 MB each way, then computes 8 ms; rank 1 computes 2 ms, then
// posts it.
std::vector<std::vector<Plan>> exchange_posted_at_different_times() {
  std::vector<Plan> plans;
  for (int r = 0; r < 2; ++r) {
    Plan plan = empty_plan(r, 2);
    Op exchange = exchange_op("pull", Traffic::features, 2);
    exchange.bytes_to[static_cast<std::size_t>(1 - r)] = 1'000'000;
    exchange.bytes_from[static_cast<std::size_t>(1 - r)] = 1'000'000;
    if (r == 0) {
      plan.ops = {exchange, compute_op("long", 8e-3)};
    } else {
      plan.ops = {compute_op("short", 2e-3), exchange};
    }
    plan.validate();
    plans.push_back(plan);
  }
  return one_iteration(std::move(plans));
}

TEST(ReplayClosedForm, ATransferStartsWhenBothEndsPostedWhereTheTransportProgressesAlone) {
  const auto plans = exchange_posted_at_different_times();
  const double long_compute = compute_seconds(plans[0][0].ops[1]);
  const double short_compute = compute_seconds(plans[0][1].ops[0]);
  expect_relative(replay_plans(windowed_cluster(0), plans, {}).makespan_seconds,
                  std::max(long_compute, short_compute + remote_seconds(1e6)));
}

TEST(ReplayClosedForm, ATransferDoesNotStartWhileAnEndComputesPastTheProgressWindow) {
  // The rendezvous needs rank 0 in its transport: the transfer starts when rank 0's computation
  // ends, not when rank 1 posts.
  const auto plans = exchange_posted_at_different_times();
  const double long_compute = compute_seconds(plans[0][0].ops[1]);
  ASSERT_GT(long_compute, compute_seconds(plans[0][1].ops[0]) + kWindowSeconds);
  expect_relative(replay_plans(windowed_cluster(kWindowBytes), plans, {}).makespan_seconds,
                  long_compute + remote_seconds(1e6));
}

}  // namespace
}  // namespace gnnbed
