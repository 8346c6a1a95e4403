#include "exec/train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <numeric>

#include "exec/nn/model.hpp"
#include "exec/train/optimizer.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {
namespace {

std::int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

std::vector<std::int32_t> labels_of(const Dataset& dataset, std::span<const NodeId> nodes) {
  std::vector<std::int32_t> labels(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    labels[i] = dataset.labels[static_cast<std::size_t>(nodes[i])];
  }
  return labels;
}

Matrix gather_features(const FeatureStore& features, std::span<const NodeId> nodes) {
  Matrix x(static_cast<std::int64_t>(nodes.size()), features.dim());
  features.gather(nodes, x.data());
  return x;
}

Matrix rows_of(const Matrix& m, std::span<const NodeId> rows) {
  Matrix picked(static_cast<std::int64_t>(rows.size()), m.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(m.row(rows[i]), m.cols(), picked.row(static_cast<std::int64_t>(i)));
  }
  return picked;
}

// Everything one training run needs: the model, its optimiser, and the full-graph view used for
// full-graph steps and for evaluation.
class Run {
 public:
  Run(const Dataset& dataset, const ModelSpec& spec, const TrainingConfig& config)
      : dataset_(dataset),
        config_(config),
        model_(spec, hash_mix(config.seed, 0x77e1)),
        optimizer_(make_optimizer(config)),
        parameters_(model_.parameters()),
        full_block_(full_graph_block(dataset.graph)),
        full_blocks_(static_cast<std::size_t>(spec.num_layers()), &full_block_) {}

  EpochRecord full_graph_epoch(int epoch) {
    EpochRecord record;
    Stopwatch watch;
    if (all_features_.size() == 0) {
      all_features_ = gather_features(*dataset_.features, full_block_.src_nodes);
      record.gather_seconds = watch.seconds();
    }
    const Stopwatch compute;
    const Matrix logits = model_.forward(full_blocks_, all_features_, true, dropout_key(epoch, 0));
    const auto labels = labels_of(dataset_, dataset_.split.train);
    Matrix grad_train;
    std::int64_t correct = 0;
    record.loss = cpu::softmax_cross_entropy(rows_of(logits, dataset_.split.train), labels,
                                             grad_train, correct);
    Matrix grad(logits.rows(), logits.cols());
    for (std::size_t i = 0; i < dataset_.split.train.size(); ++i) {
      std::copy_n(grad_train.row(static_cast<std::int64_t>(i)), grad.cols(),
                  grad.row(dataset_.split.train[i]));
    }
    step(grad);
    record.compute_seconds = compute.seconds();
    record.train_accuracy = static_cast<double>(correct) / static_cast<double>(labels.size());
    record.steps = 1;
    record.seconds = watch.seconds();
    return record;
  }

  EpochRecord mini_batch_epoch(int epoch, const NeighborSampler& sampler) {
    EpochRecord record;
    const Stopwatch watch;
    std::vector<NodeId> order = dataset_.split.train;
    Rng rng(hash_mix(config_.seed, 0x5a3b, static_cast<std::uint64_t>(epoch)));
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const auto batch_size = static_cast<std::size_t>(config_.batch_size);
    const std::size_t num_batches = (order.size() + batch_size - 1) / batch_size;
    double loss_sum = 0;
    std::int64_t correct_sum = 0;
    for (std::size_t b = 0; b < num_batches; ++b) {
      const std::span<const NodeId> seeds = std::span<const NodeId>(order).subspan(
          b * batch_size, std::min(batch_size, order.size() - b * batch_size));
      Stopwatch phase;
      const MiniBatch batch =
          sampler.sample(seeds, static_cast<std::uint64_t>(epoch) * num_batches + b);
      record.sampling_seconds += phase.seconds();
      phase.restart();
      const Matrix input = gather_features(*dataset_.features, batch.input_nodes());
      const auto labels = labels_of(dataset_, seeds);
      record.gather_seconds += phase.seconds();
      phase.restart();
      std::vector<const Block*> blocks;
      for (const Block& block : batch.blocks) blocks.push_back(&block);
      const Matrix logits = model_.forward(blocks, input, true, dropout_key(epoch, b));
      Matrix grad;
      std::int64_t correct = 0;
      loss_sum += cpu::softmax_cross_entropy(logits, labels, grad, correct) *
                  static_cast<double>(seeds.size());
      correct_sum += correct;
      step(grad);
      record.compute_seconds += phase.seconds();
    }
    record.loss = loss_sum / static_cast<double>(order.size());
    record.train_accuracy = static_cast<double>(correct_sum) / static_cast<double>(order.size());
    record.steps = static_cast<int>(num_batches);
    record.seconds = watch.seconds();
    return record;
  }

  // Accuracy on the validation and the test nodes, with full neighbourhoods and no dropout.
  std::pair<double, double> evaluate() {
    if (all_features_.size() == 0) {
      all_features_ = gather_features(*dataset_.features, full_block_.src_nodes);
    }
    const Matrix logits = model_.forward(full_blocks_, all_features_, false, 0);
    auto accuracy = [&](const std::vector<NodeId>& nodes) {
      if (nodes.empty()) return 0.0;
      return static_cast<double>(
                 cpu::count_correct(rows_of(logits, nodes), labels_of(dataset_, nodes))) /
             static_cast<double>(nodes.size());
    };
    return {accuracy(dataset_.split.val), accuracy(dataset_.split.test)};
  }

  std::int64_t num_parameters() const { return model_.spec().num_parameters(); }

 private:
  std::uint64_t dropout_key(int epoch, std::size_t batch) const {
    return hash_mix(config_.seed, 0xd0d0, static_cast<std::uint64_t>(epoch), batch);
  }

  void step(const Matrix& grad_logits) {
    model_.zero_grad();
    model_.backward(grad_logits);
    apply_weight_decay(parameters_, config_);
    optimizer_->step(parameters_);
  }

  const Dataset& dataset_;
  const TrainingConfig& config_;
  Model model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<Parameter*> parameters_;
  Block full_block_;
  std::vector<const Block*> full_blocks_;
  Matrix all_features_;
};

}  // namespace

nlohmann::json TrainingReport::to_json() const {
  nlohmann::json per_epoch = nlohmann::json::array();
  for (const auto& e : epochs) {
    nlohmann::json row = {{"epoch", e.epoch},
                          {"loss", e.loss},
                          {"train_accuracy", e.train_accuracy},
                          {"seconds", e.seconds},
                          {"sampling_seconds", e.sampling_seconds},
                          {"gather_seconds", e.gather_seconds},
                          {"compute_seconds", e.compute_seconds},
                          {"steps", e.steps}};
    if (e.val_accuracy >= 0) row["val_accuracy"] = e.val_accuracy;
    per_epoch.push_back(row);
  }
  return {{"val_accuracy", val_accuracy},
          {"test_accuracy", test_accuracy},
          {"epoch_seconds", epoch_seconds},
          {"total_seconds", total_seconds},
          {"num_parameters", num_parameters},
          {"peak_memory_bytes", peak_memory_bytes},
          {"epochs", per_epoch}};
}

TrainingReport train_model(const Dataset& dataset, const ModelSpec& spec,
                           const TrainingConfig& config, const EpochCallback& on_epoch) {
  validate(config, spec.num_layers());
  if (!dataset.features) {
    throw ConfigError("workload.features", "training needs node features; '" + dataset.name +
                                               "' has none (use features=generated)");
  }
  if (dataset.split.train.empty()) {
    throw ConfigError("workload", "'" + dataset.name + "' has no training nodes");
  }
  const Stopwatch total;
  Run run(dataset, spec, config);
  std::unique_ptr<NeighborSampler> sampler;
  if (config.batch_size > 0) {
    sampler = std::make_unique<NeighborSampler>(dataset.graph, config.fanouts,
                                                hash_mix(config.seed, 0x5a11));
  }
  TrainingReport report;
  report.num_parameters = run.num_parameters();
  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    EpochRecord record =
        sampler ? run.mini_batch_epoch(epoch, *sampler) : run.full_graph_epoch(epoch);
    record.epoch = epoch;
    const bool evaluate_now =
        epoch == config.epochs || (config.eval_every > 0 && epoch % config.eval_every == 0);
    if (evaluate_now) {
      const auto [val, test] = run.evaluate();
      record.val_accuracy = val;
      if (epoch == config.epochs) {
        report.val_accuracy = val;
        report.test_accuracy = test;
      }
    }
    report.epochs.push_back(record);
    if (on_epoch) on_epoch(record);
  }
  double seconds = 0;
  for (const auto& e : report.epochs) seconds += e.seconds;
  report.epoch_seconds = seconds / static_cast<double>(report.epochs.size());
  report.total_seconds = total.seconds();
  report.peak_memory_bytes = peak_resident_bytes();
  return report;
}

}  // namespace gnnbed
