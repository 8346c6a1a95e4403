// The replay of point-to-point plans (PyTorch-BigGraph's: sends, receives, the server stream and
// train_bucket) against closed forms on closed_form_cluster.hpp's cluster, as
// test_replay_closed_form.cpp does for collectives. Then whole PBG epochs
// (PbgStrategy::epoch_plans) on 2 and 4 ranks. SimGrid allows one engine per process: ctest runs
// each case in its own, and a case that replays twice runs each replay in a child process
// (replay_in_child).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>

#include "sim/replay.hpp"
#include "strategies/pbg.hpp"
#include "tests/sim/closed_form_cluster.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {
namespace {

using namespace closed_form;

constexpr double kTrainFlopsPerSecond = 1e10;
constexpr double kTrainFixedSeconds = 1e-4;

// The closed-form cluster with a train_bucket cost of its own, on devices and hosts; `patch` is
// merged after it.
ClusterSpec training_cluster(int machines, int ranks_per_machine,
                             const std::string& device_kind = "cpu",
                             const nlohmann::json& patch = nlohmann::json::object()) {
  const nlohmann::json train = {{"train_bucket",
                                 {{"fixed_seconds", kTrainFixedSeconds},
                                  {"dense_flops_per_second", kTrainFlopsPerSecond},
                                  {"memory_bytes_per_second", 5e10}}}};
  nlohmann::json document = {{"host", {{"cost_model", train}}},
                             {"device", {{"cost_model", train}}}};
  document.merge_patch(patch);
  return cluster(machines, ranks_per_machine, device_kind, document);
}

// Seconds for `bytes` between the CPUs of two GPU machines: their NICs only.
double host_to_host_seconds(double bytes) { return 2 * kNicLatency + bytes / kNicBandwidth; }
double train_seconds(double flops) { return kTrainFixedSeconds + flops / kTrainFlopsPerSecond; }

// Adds to `plan` a send to or receive from `peer` of `bytes`; returns its index.
int add_message(Plan& plan, OpKind kind, Stream stream, int peer, std::int64_t bytes,
                Traffic traffic = Traffic::embeddings, std::vector<int> deps = {}) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.peer = peer;
  op.traffic = traffic;
  op.label = std::string(to_string(kind)) + " " + std::to_string(plan.ops.size());
  op.bytes_to.assign(static_cast<std::size_t>(plan.num_ranks), 0);
  op.bytes_from = op.bytes_to;
  (kind == OpKind::send ? op.bytes_to : op.bytes_from)[static_cast<std::size_t>(peer)] = bytes;
  op.deps = std::move(deps);
  plan.ops.push_back(std::move(op));
  return static_cast<int>(plan.ops.size()) - 1;
}

int add_training(Plan& plan, double flops, std::vector<int> deps = {}) {
  Op op;
  op.kind = OpKind::train_bucket;
  op.stream = Stream::compute;
  op.label = "train " + std::to_string(plan.ops.size());
  op.flops = flops;
  op.deps = std::move(deps);
  plan.ops.push_back(std::move(op));
  return static_cast<int>(plan.ops.size()) - 1;
}

// Every rank's bytes by kind are its plans'.
void expect_plans_bytes(const ReplayResult& result, const std::vector<Plan>& plans) {
  ASSERT_EQ(result.ranks.size(), plans.size());
  for (std::size_t r = 0; r < plans.size(); ++r) {
    for (std::size_t k = 0; k < kNumTrafficKinds; ++k) {
      const auto kind = static_cast<Traffic>(k);
      EXPECT_EQ(result.ranks[r].sent[kind], plans[r].bytes_sent()[kind]) << "rank " << r;
      EXPECT_EQ(result.ranks[r].received[kind], plans[r].bytes_received()[kind]) << "rank " << r;
    }
  }
}

// Rank 1 sends a partition to rank 0's server while rank 0 trains a bucket, which its plan lists
// first: the server does not wait for the rank's training.
std::vector<Plan> send_beside_training(std::int64_t bytes, double flops) {
  std::vector<Plan> plans = {empty_plan(0, 2), empty_plan(1, 2)};
  add_training(plans[0], flops);
  add_message(plans[0], OpKind::receive, Stream::server, 1, bytes);
  add_message(plans[1], OpKind::send, Stream::network, 0, bytes);
  return plans;
}

TEST(ReplayPointToPoint, AServerReceivesWhileItsRankTrains) {
  const std::int64_t bytes = 4'000'000;  // 3.2 ms over the NIC
  const double flops = 1e8;              // 10.1 ms
  const std::vector<Plan> plans = send_beside_training(bytes, flops);
  const ReplayResult result = replay_plans(training_cluster(2, 1), {plans}, {});
  const double transfer = remote_seconds(static_cast<double>(bytes));
  ASSERT_LT(transfer, train_seconds(flops));
  expect_relative(result.makespan_seconds, train_seconds(flops));
  expect_relative(result.ranks[1].finish_seconds, transfer);
  expect_relative(result.ranks[0].seconds[static_cast<std::size_t>(TimeCategory::communication)],
                  transfer);
  EXPECT_EQ(result.communications, 1);
  expect_plans_bytes(result, plans);
}

TEST(ReplayPointToPoint, ATransferLongerThanTheTrainingSetsTheMakespan) {
  const std::int64_t bytes = 40'000'000;  // 32 ms over the NIC
  const double flops = 1e8;
  const ReplayResult result =
      replay_plans(training_cluster(2, 1), {send_beside_training(bytes, flops)}, {});
  expect_relative(result.makespan_seconds, remote_seconds(static_cast<double>(bytes)));
}

TEST(ReplayPointToPoint, OnGpuMachinesEmbeddingsMoveBetweenCpusAndTrainingRunsOnTheHost) {
  // Device links of 10 kB/s would take 400 s for the partition: it never crosses them. The
  // device's train_bucket rate is 1000 times slower than the host's, which runs it.
  const std::int64_t bytes = 4'000'000;
  const double flops = 1e8;
  nlohmann::json slow_device = every_kind_cost();
  slow_device["train_bucket"]["dense_flops_per_second"] = kTrainFlopsPerSecond / 1000;
  const nlohmann::json patch = {{"device_link", {{"bandwidth_bytes_per_second", 1e4}}},
                                {"device", {{"cost_model", slow_device}}}};
  const std::vector<Plan> plans = send_beside_training(bytes, flops);
  const ReplayResult result = replay_plans(training_cluster(2, 1, "gpu", patch), {plans}, {});
  expect_relative(result.ranks[1].finish_seconds, host_to_host_seconds(static_cast<double>(bytes)));
  expect_relative(result.makespan_seconds, train_seconds(flops));
  expect_plans_bytes(result, plans);
}

TEST(ReplayPointToPoint, AServerPassingAPartitionOnTakesBothTransfers) {
  // Rank 1 -> rank 0's server -> rank 2: the server sends once it has received.
  const std::int64_t first = 3'000'000;
  const std::int64_t second = 5'000'000;
  std::vector<Plan> plans = {empty_plan(0, 3), empty_plan(1, 3), empty_plan(2, 3)};
  const int received = add_message(plans[0], OpKind::receive, Stream::server, 1, first);
  add_message(plans[0], OpKind::send, Stream::server, 2, second, Traffic::embeddings, {received});
  add_message(plans[1], OpKind::send, Stream::network, 0, first);
  add_message(plans[2], OpKind::receive, Stream::network, 0, second);
  const ReplayResult result = replay_plans(training_cluster(3, 1), {plans}, {});
  expect_relative(result.makespan_seconds, remote_seconds(static_cast<double>(first)) +
                                               remote_seconds(static_cast<double>(second)));
  // Rank 2 posted its receive at 0 and waited for rank 0 to start sending.
  expect_relative(result.ranks[2].seconds[kNumTimeCategories],
                  remote_seconds(static_cast<double>(first)));
  EXPECT_EQ(result.communications, 2);
  expect_plans_bytes(result, plans);
}

TEST(ReplayPointToPoint, MessagesOfAPairMatchInPlanOrderWhicheverStreamPostsFirst) {
  // Rank 1 sends a grant (its first message to rank 0) after training, and a partition (its
  // second) from its server at once. Rank 0's network stream takes the grant, its server the
  // partition, both posted at once: the partition arrives first, and is not taken for the grant.
  const std::int64_t bytes = 4'000'000;
  const double flops = 1e8;
  std::vector<Plan> plans = {empty_plan(0, 2), empty_plan(1, 2)};
  add_message(plans[0], OpKind::receive, Stream::network, 1, kControlMessageBytes,
              Traffic::control);
  add_message(plans[0], OpKind::receive, Stream::server, 1, bytes);
  const int trained = add_training(plans[1], flops);
  add_message(plans[1], OpKind::send, Stream::network, 0, kControlMessageBytes, Traffic::control,
              {trained});
  add_message(plans[1], OpKind::send, Stream::server, 0, bytes);
  ReplayOptions options;
  options.record_trace = true;
  const ReplayResult result = replay_plans(training_cluster(2, 1), {plans}, options);
  const auto end_of = [&](int rank, OpKind kind, Stream stream) {
    for (const SimulatedOp& op : result.trace) {
      if (op.rank == rank && op.kind == kind && op.stream == stream) {
        return op.start_seconds + op.seconds;
      }
    }
    ADD_FAILURE() << "no such op";
    return 0.0;
  };
  expect_relative(end_of(0, OpKind::receive, Stream::server),
                  remote_seconds(static_cast<double>(bytes)));
  expect_relative(end_of(0, OpKind::receive, Stream::network),
                  train_seconds(flops) + remote_seconds(kControlMessageBytes));
  expect_plans_bytes(result, plans);
}

TEST(ReplayPointToPoint, ASendWithoutItsReceiveIsAnErrorBeforeTheReplay) {
  std::vector<Plan> plans = {empty_plan(0, 2), empty_plan(1, 2)};
  add_message(plans[1], OpKind::send, Stream::network, 0, 100);
  add_message(plans[1], OpKind::send, Stream::network, 0, 200);
  add_message(plans[0], OpKind::receive, Stream::server, 1, 100);
  EXPECT_THROW(replay_plans(training_cluster(2, 1), {plans}, {}), Error);
}

TEST(ReplayPointToPoint, MessagesWhoseSidesDisagreeAreAnError) {
  std::vector<Plan> plans = {empty_plan(0, 2), empty_plan(1, 2)};
  add_message(plans[1], OpKind::send, Stream::network, 0, 100);
  add_message(plans[0], OpKind::receive, Stream::server, 1, 200);
  try {
    replay_plans(training_cluster(2, 1), {plans}, {});
    FAIL() << "replayed";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("message 0 from rank 1 to rank 0"), std::string::npos)
        << error.what();
  }
}

// What the PBG replays are compared by: the makespan, when each rank finished, its bytes by
// kind, its compute seconds and how many ops ran.
struct ReplaySummary {
  double makespan_seconds = 0;
  std::vector<double> finish_seconds;
  std::vector<TrafficBytes> sent;
  std::vector<TrafficBytes> received;
  std::vector<double> compute_seconds;
  std::size_t ops_run = 0;
};

nlohmann::json summary_json(const ReplayResult& result) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const SimulatedRank& rank : result.ranks) {
    ranks.push_back({{"finish", rank.finish_seconds},
                     {"sent", rank.sent.bytes},
                     {"received", rank.received.bytes},
                     {"compute", rank.seconds[static_cast<std::size_t>(TimeCategory::compute)]}});
  }
  return {{"makespan", result.makespan_seconds},
          {"ranks", std::move(ranks)},
          {"ops_run", result.trace.size()}};
}

// Replays in a child process (SimGrid's one engine per process), which sends back its summary
// as JSON (doubles round trip exactly) or the error it threw.
ReplaySummary replay_in_child(const ClusterSpec& cluster, const std::vector<Plan>& plans) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw Error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw Error("fork failed");
  if (pid == 0) {
    close(pipe_ends[0]);
    std::string text;
    try {
      ReplayOptions options;
      options.record_trace = true;
      text = summary_json(replay_plans(cluster, {plans}, options)).dump();
    } catch (const std::exception& error) {
      text = nlohmann::json{{"error", error.what()}}.dump();
    }
    for (std::size_t written = 0; written < text.size();) {
      const ssize_t n = write(pipe_ends[1], text.data() + written, text.size() - written);
      if (n <= 0) _exit(2);
      written += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof(buffer))) > 0;) text.append(buffer, n);
  close(pipe_ends[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error("the replay's child failed");
  const nlohmann::json document = nlohmann::json::parse(text);
  if (document.contains("error")) throw Error(document["error"].get<std::string>());
  ReplaySummary summary;
  summary.makespan_seconds = document["makespan"].get<double>();
  summary.ops_run = document["ops_run"].get<std::size_t>();
  for (const nlohmann::json& rank : document["ranks"]) {
    summary.finish_seconds.push_back(rank["finish"].get<double>());
    summary.sent.push_back({rank["sent"].get<std::array<std::int64_t, kNumTrafficKinds>>()});
    summary.received.push_back(
        {rank["received"].get<std::array<std::int64_t, kNumTrafficKinds>>()});
    summary.compute_seconds.push_back(rank["compute"].get<double>());
  }
  return summary;
}

// A planted graph of 2000 entities in 4 partitions, dimension 16.
struct PbgWorkload {
  EmbeddingExperimentConfig config;
  LinkPredictionData data = planted_communities(2000, 20, 8, 1);
  EntityPartitioning partitioning{data.num_entities, 4, 7};
  EdgeBuckets buckets{data.train, partitioning};

  PbgWorkload() {
    config.model.dimension = 16;
    config.training.partitions = 4;
  }
};

// One epoch of PBG on `cluster`, replayed twice: it finishes, runs every op, moves each rank's
// plan's bytes, trains for the cost model's time, and repeats bit for bit.
void expect_pbg_epoch_replays(const ClusterSpec& spec) {
  const PbgWorkload workload;
  const PbgStrategy strategy(workload.partitioning, workload.buckets,
                             workload.data.num_relations(), workload.config, spec.num_ranks());
  const std::vector<Plan> plans = strategy.epoch_plans(0);
  std::size_t ops = 0;
  std::int64_t messages = 0;
  for (const Plan& plan : plans) {
    ops += plan.ops.size();
    for (const Op& op : plan.ops) messages += op.kind == OpKind::send ? 1 : 0;
  }
  ASSERT_GT(messages, 0) << "the epoch exchanges partitions and locks";
  const ReplaySummary first = replay_in_child(spec, plans);
  const ReplaySummary second = replay_in_child(spec, plans);
  EXPECT_GT(first.makespan_seconds, 0);
  EXPECT_EQ(first.ops_run, ops) << "every op of every rank ran: no deadlock";
  ASSERT_EQ(first.sent.size(), plans.size());
  for (std::size_t r = 0; r < plans.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(first.sent[r], plans[r].bytes_sent());
    EXPECT_EQ(first.received[r], plans[r].bytes_received());
    double training = 0;
    for (const Op& op : plans[r].ops) {
      if (op.kind == OpKind::train_bucket) training += spec.compute_seconds(op);
    }
    EXPECT_NEAR(first.compute_seconds[r], training, 1e-9 * training);
    EXPECT_GE(first.makespan_seconds, training);
  }
  EXPECT_EQ(first.makespan_seconds, second.makespan_seconds);
  EXPECT_EQ(first.finish_seconds, second.finish_seconds);
}

TEST(ReplayPointToPoint, PbgEpochOnTwoCpuRanks) {
  expect_pbg_epoch_replays(training_cluster(2, 1));
}

TEST(ReplayPointToPoint, PbgEpochOnFourCpuRanks) {
  expect_pbg_epoch_replays(training_cluster(4, 1));
}

TEST(ReplayPointToPoint, PbgEpochOnTwoMachinesOfTwoGpus) {
  // Ranks of one machine exchange through its CPU, where nothing crosses a link.
  expect_pbg_epoch_replays(training_cluster(2, 2, "gpu"));
}

}  // namespace
}  // namespace gnnbed
