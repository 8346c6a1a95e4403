// Single-machine PBG-style training (embedding_trainer.hpp).
#include "exec/embedding/embedding_trainer.hpp"

#include "exec/embedding/sampled_ranking.hpp"
#include "strategies/config/training_config.hpp"
#include "strategies/pbg_buckets.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

struct Training {
  const EmbeddingExperimentConfig& config;
  const EntityPartitioning& partitioning;
  const EdgeBuckets& buckets;
  PartitionStore& store;
  RelationParameters& relations;
  const BucketProgress& on_bucket;
};

EmbeddingEpochRecord train_epoch(Training& t, int epoch) {
  const EmbeddingTrainingConfig& training = t.config.training;
  const BucketHyperparameters hyper = bucket_hyperparameters(t.config);
  const SwapCounters before = t.store.swaps();
  const Stopwatch clock;
  EmbeddingEpochRecord record;
  record.epoch = epoch;
  double loss = 0;
  std::int64_t edges = 0;
  const std::vector<Bucket> order = single_machine_bucket_order(
      training.partitions, training.bucket_order, hash_mix(training.seed, 0xb0, epoch));
  int trained = 0;
  for (const Bucket& bucket : order) {
    t.store.hold(bucket.partitions());
    const BucketStats stats =
        train_bucket(t.buckets.edges(bucket), t.store.table(bucket.lhs), t.store.table(bucket.rhs),
                     t.relations, hyper, bucket_seed(training, epoch, t.buckets.index(bucket)));
    loss += stats.loss;
    edges += stats.edges;
    if (t.on_bucket) t.on_bucket(epoch, ++trained, static_cast<int>(order.size()));
  }
  record.seconds = clock.seconds();
  record.loss_per_edge = edges > 0 ? loss / static_cast<double>(edges) : 0;
  record.swap_seconds = t.store.swaps().seconds - before.seconds;
  record.swap_bytes = t.store.swaps().bytes_read + t.store.swaps().bytes_written -
                      before.bytes_read - before.bytes_written;
  return record;
}

}  // namespace

LinkRankingMetrics evaluate_held_out(std::span<const Triple> held_out, const KnownEdgeLists& known,
                                     const EntityPartitioning& partitioning, PartitionStore& store,
                                     const RelationParameters& relations,
                                     const EmbeddingExperimentConfig& config) {
  const Scoring scoring = scoring_from_name(config.model.scoring);
  const EmbeddingTrainingConfig& training = config.training;
  if (training.eval_candidates == "all") {
    return rank_held_out(held_out, known, partitioning, store, relations, scoring);
  }
  const SampledCandidates candidates{training.eval_batch_negatives, training.eval_uniform_negatives,
                                     hash_mix(negative_seed(training), 0xe7a1)};
  return rank_held_out_sampled(held_out, known, partitioning, store, relations, scoring,
                               candidates);
}

BucketHyperparameters bucket_hyperparameters(const EmbeddingExperimentConfig& config) {
  BucketHyperparameters hyper;
  hyper.scoring = scoring_from_name(config.model.scoring);
  hyper.margin = config.model.margin;
  hyper.learning_rate = config.training.learning_rate;
  hyper.batch_size = config.training.batch_size;
  hyper.batch_negatives = config.training.batch_negatives;
  hyper.uniform_negatives = config.training.uniform_negatives;
  return hyper;
}

nlohmann::json EmbeddingReport::to_json() const {
  nlohmann::json records = nlohmann::json::array();
  for (const EmbeddingEpochRecord& r : epochs) {
    nlohmann::json record = {{"epoch", r.epoch},
                             {"loss_per_edge", r.loss_per_edge},
                             {"seconds", r.seconds},
                             {"swap_seconds", r.swap_seconds},
                             {"swap_bytes", r.swap_bytes}};
    if (r.test) record["test"] = r.test->to_json();
    records.push_back(record);
  }
  return {{"epochs", records},
          {"test", test.to_json()},
          {"epoch_seconds", epoch_seconds},
          {"peak_memory_bytes", peak_memory_bytes},
          {"swaps",
           {{"bytes_read", swaps.bytes_read},
            {"bytes_written", swaps.bytes_written},
            {"loads", swaps.loads},
            {"stores", swaps.stores},
            {"seconds", swaps.seconds}}}};
}

EmbeddingReport train_embeddings(const LinkPredictionData& data,
                                 const EmbeddingExperimentConfig& config,
                                 const std::function<void(const EmbeddingEpochRecord&)>& on_epoch,
                                 EmbeddingModelState* final_state,
                                 const BucketProgress& on_bucket) {
  const EntityPartitioning partitioning(data.num_entities, config.training.partitions,
                                        partition_seed(config.training));
  const EdgeBuckets buckets(data.train, partitioning);
  const std::unique_ptr<PartitionStore> store =
      make_partition_store(partitioning, config.model, config.training);
  const Scoring scoring = scoring_from_name(config.model.scoring);
  RelationParameters relations(scoring, data.num_relations(), config.model.dimension);
  Training t{config, partitioning, buckets, *store, relations, on_bucket};
  const KnownEdgeLists known{data.train, data.test};
  EmbeddingReport report;
  for (int epoch = 1; epoch <= config.training.epochs; ++epoch) {
    EmbeddingEpochRecord record = train_epoch(t, epoch);
    if (evaluated_epoch(config.training, epoch)) {
      record.test = evaluate_held_out(data.test, known, partitioning, *store, relations, config);
    }
    on_epoch(record);
    report.epochs.push_back(record);
  }
  report.test = *report.epochs.back().test;
  std::vector<double> epoch_seconds;
  for (const EmbeddingEpochRecord& record : report.epochs) epoch_seconds.push_back(record.seconds);
  report.epoch_seconds = measured_epoch_seconds(epoch_seconds, 1);
  report.swaps = store->swaps();
  report.peak_memory_bytes = peak_resident_bytes();
  if (final_state != nullptr) {
    for (int p = 0; p < partitioning.num_partitions(); ++p) {
      const int hold[] = {p};
      store->hold(hold);
      final_state->partitions.push_back(store->table(p));
    }
    final_state->relations = relations;
  }
  return report;
}

}  // namespace gnnbed
