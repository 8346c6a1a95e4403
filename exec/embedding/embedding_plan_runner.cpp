// PBG's plans run for real on one rank (embedding_plan_runner.hpp).
#include "exec/embedding/embedding_plan_runner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "exec/embedding/embedding_trainer.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

constexpr std::size_t kNumStreams = 5;

// A table on the wire: its embeddings, then its Adagrad state (rows x (dimension + 1) floats).
std::vector<std::byte> table_bytes(const PartitionTable& table) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(table.bytes()));
  const std::size_t embedding_bytes = table.embeddings.size() * sizeof(float);
  std::memcpy(bytes.data(), table.embeddings.data(), embedding_bytes);
  std::memcpy(bytes.data() + embedding_bytes, table.adagrad_sum.data(),
              table.adagrad_sum.size() * sizeof(float));
  return bytes;
}

PartitionTable table_from_bytes(const std::vector<std::byte>& bytes, std::int64_t rows,
                                int dimension) {
  PartitionTable table;
  table.rows = rows;
  table.dimension = dimension;
  table.embeddings.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(dimension));
  table.adagrad_sum.resize(static_cast<std::size_t>(rows));
  const std::size_t embedding_bytes = table.embeddings.size() * sizeof(float);
  if (bytes.size() != embedding_bytes + table.adagrad_sum.size() * sizeof(float)) {
    throw Error("a partition table of " + std::to_string(rows) + " rows arrived with " +
                std::to_string(bytes.size()) + " bytes");
  }
  std::memcpy(table.embeddings.data(), bytes.data(), embedding_bytes);
  std::memcpy(table.adagrad_sum.data(), bytes.data() + embedding_bytes,
              table.adagrad_sum.size() * sizeof(float));
  return table;
}

std::string bucket_name(std::uint64_t code, int partitions) {
  const auto p = static_cast<std::uint64_t>(partitions);
  if (code >= p * p) return "done";
  return "bucket (" + std::to_string(code / p) + ", " + std::to_string(code % p) + ")";
}

}  // namespace

struct EmbeddingPlanRunner::Transfer {
  std::vector<std::byte> payload;  // what a send sends, kept until it completes
  std::unique_ptr<PendingTransfer> pending;
};

// One run of a plan: the streams' positions and the transfers in flight.
class EmbeddingPlanRunner::Interpreter {
 public:
  Interpreter(EmbeddingPlanRunner& runner, const Plan& plan)
      : runner_(runner),
        plan_(plan),
        done_(plan.ops.size(), 0),
        transfers_(plan.ops.size()),
        numbers_(plan.ops.size(), 0) {
    // A message's number: how many the plan lists before it in its direction with its peer, the
    // number the peer's plan gives the other end.
    std::vector<int> sent(static_cast<std::size_t>(plan.num_ranks), 0);
    std::vector<int> received(sent.size(), 0);
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      // Checked before anything runs, so that no transfer is left half-done.
      if (op.kind != OpKind::send && op.kind != OpKind::receive &&
          op.kind != OpKind::train_bucket) {
        throw Error(op.label + ": a " + std::string(to_string(op.kind)) +
                    " op is not PyTorch-BigGraph's (the embedding engine runs send, receive and "
                    "train_bucket)");
      }
      streams_[static_cast<std::size_t>(op.stream)].push_back(static_cast<int>(i));
      if (op.kind == OpKind::send) numbers_[i] = sent[static_cast<std::size_t>(op.peer)]++;
      if (op.kind == OpKind::receive) numbers_[i] = received[static_cast<std::size_t>(op.peer)]++;
    }
  }

  EmbeddingPlanOutcome run() {
    const Stopwatch clock;
    Stopwatch since_progress;
    while (finished_ < plan_.ops.size()) {
      const std::size_t before = finished_;
      advance_transfers();
      train_ready();
      if (finished_ > before) {
        since_progress.restart();
        continue;
      }
      check_stall(since_progress.seconds());
      // Waiting for peers: let the ranks that share this core run.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    outcome_.seconds = clock.seconds();
    return outcome_;
  }

 private:
  bool deps_done(const Op& op) const {
    return std::all_of(op.deps.begin(), op.deps.end(),
                       [&](int d) { return done_[static_cast<std::size_t>(d)] != 0; });
  }

  // Starts and completes the transfers at the heads of the streams, each stream in order.
  void advance_transfers() {
    for (std::size_t s = 0; s < kNumStreams; ++s) {
      const std::vector<int>& ops = streams_[s];
      while (heads_[s] < ops.size()) {
        const int i = ops[heads_[s]];
        const Op& op = plan_.ops[static_cast<std::size_t>(i)];
        if (!is_communication(op.kind)) break;
        Transfer& transfer = transfers_[static_cast<std::size_t>(i)];
        if (!transfer.pending) {
          if (!deps_done(op) || throttled(op)) break;
          start(op, numbers_[static_cast<std::size_t>(i)], transfer);
        }
        if (!transfer.pending->test()) break;
        finish(op, transfer);
        done_[static_cast<std::size_t>(i)] = 1;
        ++heads_[s];
        ++finished_;
      }
    }
  }

  // A throttled send waits until its interval since the rank's previous throttled send has passed.
  bool throttled(const Op& op) const {
    const auto& last = runner_.last_throttled_send_seconds_;
    return op.kind == OpKind::send && op.throttle_seconds > 0 && last &&
           runner_.clock_.seconds() < *last + op.throttle_seconds;
  }

  // Trains the buckets at the heads of the streams whose dependencies are done.
  void train_ready() {
    for (std::size_t s = 0; s < kNumStreams; ++s) {
      if (heads_[s] >= streams_[s].size()) continue;
      const int i = streams_[s][heads_[s]];
      const Op& op = plan_.ops[static_cast<std::size_t>(i)];
      if (is_communication(op.kind) || !deps_done(op)) continue;
      train(op);
      done_[static_cast<std::size_t>(i)] = 1;
      ++heads_[s];
      ++finished_;
    }
  }

  void start(const Op& op, int number, Transfer& transfer) {
    Transport& transport = runner_.transport_;
    if (op.kind == OpKind::send) {
      if (op.inputs.empty()) {
        transfer.payload.resize(sizeof(op.key));
        std::memcpy(transfer.payload.data(), &op.key, sizeof(op.key));
      } else if (pbg_partition_of(name_of(op.inputs[0]))) {
        transfer.payload = table_bytes(runner_.table(plan_, op.inputs[0]));
      } else {
        transfer.payload = runner_.relation_payload(name_of(op.inputs[0]), op.changes);
      }
      if (op.throttle_seconds > 0) runner_.last_throttled_send_seconds_ = runner_.clock_.seconds();
      transfer.pending = transport.start_send(op.peer, number, transfer.payload, op.traffic);
      return;
    }
    transfer.pending = transport.start_receive(
        op.peer, number, op.bytes_from[static_cast<std::size_t>(op.peer)], op.traffic);
  }

  void finish(const Op& op, Transfer& transfer) {
    if (op.kind == OpKind::send) {
      // A table has moved: the peer holds it now.
      if (!op.inputs.empty() && pbg_partition_of(name_of(op.inputs[0])))
        runner_.tables_.erase(partition_of(op.inputs[0]));
      transfer = Transfer{};
      return;
    }
    const std::vector<std::byte>& bytes =
        transfer.pending->received()[static_cast<std::size_t>(op.peer)];
    if (op.outputs.empty()) {
      std::uint64_t code = 0;
      std::memcpy(&code, bytes.data(), std::min(bytes.size(), sizeof(code)));
      if (code != op.key) {
        const int partitions = runner_.partitioning_.num_partitions();
        throw Error(op.label + ": rank " + std::to_string(plan_.rank) + " expected " +
                    bucket_name(op.key, partitions) + ", rank " + std::to_string(op.peer) +
                    " sent " + bucket_name(code, partitions));
      }
    } else if (pbg_partition_of(name_of(op.outputs[0]))) {
      const TensorSpec& spec = plan_.tensors[static_cast<std::size_t>(op.outputs[0])];
      runner_.tables_[partition_of(op.outputs[0])] =
          table_from_bytes(bytes, spec.rows, static_cast<int>(spec.cols) - 1);
    } else {
      runner_.receive_relations(name_of(op.outputs[0]), bytes, op.changes);
    }
    transfer = Transfer{};
  }

  void train(const Op& op) {
    const TensorSpec& edges = plan_.tensors[static_cast<std::size_t>(op.input(Input::edges))];
    if (!edges.index || edges.index->size() % 3 != 0 ||
        static_cast<std::int64_t>(edges.index->size()) != edges.rows) {
      throw Error(op.label +
                  ": the plan does not carry its edges as (lhs, relation, rhs) triples (a plan "
                  "from bucket sizes alone is for the simulator)");
    }
    static_assert(sizeof(Triple) == 3 * sizeof(std::int32_t));
    const std::span<const Triple> triples(reinterpret_cast<const Triple*>(edges.index->data()),
                                          edges.index->size() / 3);
    PartitionTable& lhs = runner_.table(plan_, op.input(Input::lhs));
    PartitionTable& rhs = runner_.table(plan_, op.input(Input::rhs));
    const Stopwatch clock;
    if (op.has_input(Input::relations) == runner_.relations_.empty()) {
      throw Error(op.label + ": relation parameters " +
                  (runner_.relations_.empty() ? "given to dot scoring, which has none"
                                              : "missing for translation scoring"));
    }
    const BucketStats stats = train_bucket(triples, lhs, rhs, runner_.relations_, runner_.hyper_,
                                           op.key, [&] { advance_transfers(); });
    outcome_.train_seconds += clock.seconds();
    outcome_.loss += stats.loss;
    outcome_.edges += stats.edges;
  }

  const std::string& name_of(int tensor) const {
    return plan_.tensors[static_cast<std::size_t>(tensor)].name;
  }

  int partition_of(int tensor) const {
    const std::string& name = plan_.tensors[static_cast<std::size_t>(tensor)].name;
    const std::optional<int> partition = pbg_partition_of(name);
    if (!partition) throw Error("tensor '" + name + "' is not a partition's table");
    return *partition;
  }

  void check_stall(double seconds) const {
    if (runner_.stall_timeout_seconds_ <= 0 || seconds < runner_.stall_timeout_seconds_) return;
    std::string heads;
    for (std::size_t s = 0; s < kNumStreams; ++s) {
      if (heads_[s] >= streams_[s].size()) continue;
      heads += (heads.empty() ? "" : "; ") +
               plan_.ops[static_cast<std::size_t>(streams_[s][heads_[s]])].label;
    }
    throw Error("rank " + std::to_string(plan_.rank) + " made no progress for " +
                std::to_string(seconds) + " s, waiting at: " + heads);
  }

 private:
  EmbeddingPlanRunner& runner_;
  const Plan& plan_;
  std::array<std::vector<int>, kNumStreams> streams_;
  std::array<std::size_t, kNumStreams> heads_{};
  std::vector<char> done_;
  std::vector<Transfer> transfers_;
  std::vector<int> numbers_;  // per op: a send's or receive's message number
  std::size_t finished_ = 0;  // ops done
  EmbeddingPlanOutcome outcome_;
};

EmbeddingPlanRunner::EmbeddingPlanRunner(const EntityPartitioning& partitioning, int num_relations,
                                         const EmbeddingExperimentConfig& config,
                                         Transport& transport, double stall_timeout_seconds)
    : partitioning_(partitioning),
      config_(config),
      hyper_(bucket_hyperparameters(config)),
      transport_(transport),
      stall_timeout_seconds_(stall_timeout_seconds),
      relations_(hyper_.scoring, num_relations, config.model.dimension),
      relations_base_(relations_.translation.size(), 0.0f),
      server_relations_(relations_.translation.size(), 0.0f) {
  const std::uint64_t seed = embedding_init_seed(config.training);
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    if (pbg_partition_server(p, transport.size()) != transport.rank()) continue;
    tables_.emplace(p, initial_partition_table(partitioning.members(p), config.model.dimension,
                                               config.model.init_scale, seed));
  }
}

PartitionTable& EmbeddingPlanRunner::table(const Plan& plan, int tensor) {
  const std::string& name = plan.tensors[static_cast<std::size_t>(tensor)].name;
  const std::optional<int> partition = pbg_partition_of(name);
  const auto it = partition ? tables_.find(*partition) : tables_.end();
  if (it == tables_.end()) {
    throw Error("rank " + std::to_string(plan.rank) + " reads '" + name +
                "', which it does not hold");
  }
  return it->second;
}

std::vector<float>& EmbeddingPlanRunner::relation_values(const std::string& name) {
  if (name == kPbgRelationsTensor && !relations_.empty()) return relations_.translation;
  if (name == kPbgServerRelationsTensor && !server_relations_.empty()) return server_relations_;
  throw Error("'" + name + "' is neither a partition's table nor relation parameters this run has");
}

std::vector<std::byte> EmbeddingPlanRunner::relation_payload(const std::string& name,
                                                             bool changes) {
  std::vector<float> values = relation_values(name);
  if (changes) {
    if (name != kPbgRelationsTensor) throw Error("only a trainer pushes changes ('" + name + "')");
    for (std::size_t i = 0; i < values.size(); ++i) values[i] -= relations_base_[i];
  }
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void EmbeddingPlanRunner::receive_relations(const std::string& name,
                                            const std::vector<std::byte>& bytes, bool changes) {
  std::vector<float>& values = relation_values(name);
  if (bytes.size() != values.size() * sizeof(float)) {
    throw Error("'" + name + "' arrived with " + std::to_string(bytes.size()) + " bytes");
  }
  std::vector<float> received(values.size());
  std::memcpy(received.data(), bytes.data(), bytes.size());
  if (changes) {
    for (std::size_t i = 0; i < values.size(); ++i) values[i] += received[i];
    return;
  }
  // Pulled values: what the next push's changes are counted from.
  values = received;
  if (name == kPbgRelationsTensor) relations_base_ = received;
}

RelationParameters EmbeddingPlanRunner::server_relations() const {
  RelationParameters shared = relations_;
  shared.translation = server_relations_;
  return shared;
}

EmbeddingPlanOutcome EmbeddingPlanRunner::run(const Plan& plan) {
  if (plan.rank != transport_.rank() || plan.num_ranks != transport_.size()) {
    throw Error("a plan of rank " + std::to_string(plan.rank) + " of " +
                std::to_string(plan.num_ranks) + " given to rank " +
                std::to_string(transport_.rank()) + " of " + std::to_string(transport_.size()));
  }
  try {
    Interpreter interpreter(*this, plan);
    return interpreter.run();
  } catch (const Error& error) {
    throw Error("rank " + std::to_string(plan.rank) + ", epoch " + std::to_string(plan.epoch) +
                ": " + error.what());
  }
}

}  // namespace gnnbed
