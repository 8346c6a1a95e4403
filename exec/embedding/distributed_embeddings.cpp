// PBG's distributed training for real (distributed_embeddings.hpp).
#include "exec/embedding/distributed_embeddings.hpp"

#include <cstring>

#include "exec/embedding/embedding_plan_runner.hpp"
#include "strategies/config/training_config.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"

namespace gnnbed {
namespace {

template <typename T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T take(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw Error("a gathered partition table is truncated");
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

// The rank's tables as one string: (partition, rows, dimension, embeddings, Adagrad state)...
std::string encode_tables(const std::map<int, PartitionTable>& tables) {
  std::string out;
  for (const auto& [partition, table] : tables) {
    append(out, static_cast<std::int32_t>(partition));
    append(out, table.rows);
    append(out, static_cast<std::int32_t>(table.dimension));
    out.append(reinterpret_cast<const char*>(table.embeddings.data()),
               table.embeddings.size() * sizeof(float));
    out.append(reinterpret_cast<const char*>(table.adagrad_sum.data()),
               table.adagrad_sum.size() * sizeof(float));
  }
  return out;
}

void decode_tables(const std::string& in, std::vector<PartitionTable>& tables) {
  std::size_t at = 0;
  while (at < in.size()) {
    const auto partition = take<std::int32_t>(in, at);
    PartitionTable table;
    table.rows = take<std::int64_t>(in, at);
    table.dimension = take<std::int32_t>(in, at);
    table.embeddings.resize(static_cast<std::size_t>(table.rows * table.dimension));
    table.adagrad_sum.resize(static_cast<std::size_t>(table.rows));
    for (std::vector<float>* part : {&table.embeddings, &table.adagrad_sum}) {
      const std::size_t bytes = part->size() * sizeof(float);
      if (at + bytes > in.size()) throw Error("a gathered partition table is truncated");
      std::memcpy(part->data(), in.data() + at, bytes);
      at += bytes;
    }
    if (partition < 0 || partition >= static_cast<int>(tables.size()) ||
        !tables[static_cast<std::size_t>(partition)].embeddings.empty()) {
      throw Error("partition " + std::to_string(partition) + " gathered twice or out of range");
    }
    tables[static_cast<std::size_t>(partition)] = std::move(table);
  }
}

// Rank 0: every partition's table, gathered from the ranks that hold them. Collective.
std::vector<PartitionTable> gather_tables(const EmbeddingPlanRunner& runner, Transport& transport,
                                          int partitions) {
  const std::vector<std::string> parts = transport.gather_to_root(encode_tables(runner.tables()));
  std::vector<PartitionTable> tables(static_cast<std::size_t>(partitions));
  if (transport.rank() != 0) return tables;
  for (const std::string& part : parts) decode_tables(part, tables);
  for (int p = 0; p < partitions; ++p) {
    if (tables[static_cast<std::size_t>(p)].embeddings.empty() &&
        tables[static_cast<std::size_t>(p)].rows > 0)
      throw Error("no rank holds partition " + std::to_string(p) + " after the epoch");
  }
  return tables;
}

// Rank 0: per-rank traffic and memory, gathered. Collective.
void gather_traffic(DistributedEmbeddingReport& report, Transport& transport,
                    const TrafficBytes& sent, const TrafficBytes& received,
                    const TrafficBytes& planned_sent, const TrafficBytes& planned_received) {
  const nlohmann::json mine = {{"sent", sent.to_json()},
                               {"received", received.to_json()},
                               {"planned_sent", planned_sent.to_json()},
                               {"planned_received", planned_received.to_json()},
                               {"peak_memory_bytes", peak_resident_bytes()}};
  const std::vector<std::string> all = transport.gather_to_root(mine.dump());
  const auto bytes_of = [](const nlohmann::json& object) {
    TrafficBytes bytes;
    for (std::size_t k = 0; k < kNumTrafficKinds; ++k)
      bytes.bytes[k] =
          object.at(std::string(to_string(static_cast<Traffic>(k)))).get<std::int64_t>();
    return bytes;
  };
  for (const std::string& text : all) {
    const nlohmann::json rank = nlohmann::json::parse(text);
    report.sent.push_back(bytes_of(rank.at("sent")));
    report.received.push_back(bytes_of(rank.at("received")));
    report.planned_sent.push_back(bytes_of(rank.at("planned_sent")));
    report.planned_received.push_back(bytes_of(rank.at("planned_received")));
    report.peak_memory_bytes =
        std::max(report.peak_memory_bytes, rank.at("peak_memory_bytes").get<std::int64_t>());
  }
}

}  // namespace

nlohmann::json DistributedEmbeddingReport::to_json() const {
  nlohmann::json records = nlohmann::json::array();
  for (const DistributedEmbeddingEpoch& e : epochs) {
    nlohmann::json record = {{"epoch", e.epoch},
                             {"seconds", e.seconds},
                             {"loss_per_edge", e.loss_per_edge},
                             {"train_seconds", e.train_seconds},
                             {"waiting_seconds", e.waiting_seconds}};
    if (e.test) record["test"] = e.test->to_json();
    records.push_back(record);
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < sent.size(); ++r) {
    ranks.push_back({{"rank", r},
                     {"bytes_sent", sent[r].to_json()},
                     {"bytes_received", received[r].to_json()},
                     {"planned_bytes_sent", planned_sent[r].to_json()},
                     {"planned_bytes_received", planned_received[r].to_json()}});
  }
  return {
      {"num_ranks", num_ranks},
      {"epochs", records},
      {"test", test.to_json()},
      {"epoch_seconds", epoch_seconds},
      {"ranks", ranks},
      {"peak_memory_bytes", peak_memory_bytes},
      {"schedule", {{"makespan_edges", schedule_makespan}, {"idle_share", schedule_idle_share}}}};
}

DistributedEmbeddingReport train_embeddings_distributed(
    const LinkPredictionData& data, const EmbeddingExperimentConfig& config, Transport& transport,
    const std::function<void(const DistributedEmbeddingEpoch&)>& on_epoch,
    EmbeddingModelState* final_state, double stall_timeout_seconds) {
  const EntityPartitioning partitioning(data.num_entities, config.training.partitions,
                                        partition_seed(config.training));
  const EdgeBuckets buckets(data.train, partitioning);
  const PbgStrategy strategy(partitioning, buckets, data.num_relations(), config, transport.size());
  EmbeddingPlanRunner runner(partitioning, data.num_relations(), config, transport,
                             stall_timeout_seconds);
  const KnownEdgeLists known{data.train, data.test};
  DistributedEmbeddingReport report;
  report.num_ranks = transport.size();
  report.schedule_makespan = strategy.schedule().makespan;
  report.schedule_idle_share =
      strategy.schedule().idle / (strategy.schedule().makespan * transport.size());
  const TrafficBytes sent_before = transport.bytes_sent();
  const TrafficBytes received_before = transport.bytes_received();
  TrafficBytes planned_sent;
  TrafficBytes planned_received;
  for (int epoch = 1; epoch <= config.training.epochs; ++epoch) {
    const Plan plan = strategy.epoch_plans(epoch)[static_cast<std::size_t>(transport.rank())];
    planned_sent += plan.bytes_sent();
    planned_received += plan.bytes_received();
    const EmbeddingPlanOutcome outcome = runner.run(plan);
    DistributedEmbeddingEpoch record;
    record.epoch = epoch;
    record.seconds = transport.max_over_ranks(outcome.seconds);
    const double loss = transport.sum_over_ranks(outcome.loss);
    const std::int64_t edges = transport.sum_over_ranks(outcome.edges);
    record.loss_per_edge = edges > 0 ? loss / static_cast<double>(edges) : 0;
    const double ranks = transport.size();
    record.train_seconds = transport.sum_over_ranks(outcome.train_seconds) / ranks;
    record.waiting_seconds =
        transport.sum_over_ranks(outcome.seconds - outcome.train_seconds) / ranks;
    const bool last = epoch == config.training.epochs;
    if (evaluated_epoch(config.training, epoch)) {
      std::vector<PartitionTable> tables =
          gather_tables(runner, transport, partitioning.num_partitions());
      if (transport.rank() == 0) {
        MemoryPartitionStore store(std::move(tables));
        const RelationParameters relations = runner.server_relations();
        record.test = evaluate_held_out(data.test, known, partitioning, store, relations, config);
        if (last && final_state != nullptr) {
          for (int p = 0; p < partitioning.num_partitions(); ++p)
            final_state->partitions.push_back(store.table(p));
          final_state->relations = relations;
        }
      }
    }
    if (transport.rank() == 0 && on_epoch) on_epoch(record);
    report.epochs.push_back(record);
  }
  if (report.epochs.back().test) report.test = *report.epochs.back().test;
  std::vector<double> epoch_seconds;
  for (const DistributedEmbeddingEpoch& e : report.epochs) epoch_seconds.push_back(e.seconds);
  report.epoch_seconds = measured_epoch_seconds(epoch_seconds, 1);
  gather_traffic(report, transport, transport.bytes_sent() - sent_before,
                 transport.bytes_received() - received_before, planned_sent, planned_received);
  return report;
}

}  // namespace gnnbed
