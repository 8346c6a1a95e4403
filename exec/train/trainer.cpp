#include "exec/train/trainer.hpp"

#include <algorithm>
#include <numeric>

#include "exec/nn/model.hpp"
#include "exec/train/minibatch_step.hpp"
#include "exec/train/optimizer.hpp"
#include "strategies/batch_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

namespace {

std::vector<std::int32_t> labels_of(const Dataset& dataset, std::span<const NodeId> nodes) {
  std::vector<std::int32_t> labels(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    labels[i] = dataset.labels[static_cast<std::size_t>(nodes[i])];
  }
  return labels;
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
        model_(spec, model_seed(config)),
        optimizer_(make_optimizer(config)),
        parameters_(model_.parameters()),
        full_block_(full_graph_block(dataset.graph)),
        full_blocks_(static_cast<std::size_t>(spec.num_layers()), &full_block_) {}

  EpochRecord full_graph_epoch(int epoch) {
    EpochRecord record;
    Stopwatch watch;
    if (all_features_.empty()) {
      all_features_ = InputRows::gather(*dataset_.features, full_block_.src_nodes);
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

  // Mini-batches of the schedule (one rank: every training node), each one optimiser step.
  EpochRecord mini_batch_epoch(int epoch, const NeighborSampler& sampler,
                               const BatchSchedule& schedule) {
    EpochRecord record;
    const Stopwatch watch;
    double loss_sum = 0;
    std::int64_t correct_sum = 0;
    std::int64_t seeds_sum = 0;
    for (int iteration = 0; iteration < schedule.iterations_per_epoch(); ++iteration) {
      const std::vector<NodeId> seeds = schedule.seeds(0, epoch, iteration);
      Stopwatch phase;
      const MiniBatch batch = sampler.sample(seeds, schedule.batch_key(epoch, iteration));
      record.sampling_seconds += phase.seconds();
      model_.zero_grad();
      const StepResult step_result = accumulate_gradients(
          model_, *dataset_.features, dataset_.labels.span(), batch,
          1.0 / static_cast<double>(seeds.size()), schedule.dropout_key(epoch, iteration));
      phase.restart();
      update();
      record.gather_seconds += step_result.gather_seconds;
      record.compute_seconds += step_result.compute_seconds + phase.seconds();
      loss_sum += step_result.loss * static_cast<double>(seeds.size());
      correct_sum += step_result.correct;
      seeds_sum += static_cast<std::int64_t>(seeds.size());
    }
    record.loss = loss_sum / static_cast<double>(seeds_sum);
    record.train_accuracy = static_cast<double>(correct_sum) / static_cast<double>(seeds_sum);
    record.steps = schedule.iterations_per_epoch();
    record.seconds = watch.seconds();
    return record;
  }

  Accuracy evaluate() {
    if (all_features_.empty()) {
      all_features_ = InputRows::gather(*dataset_.features, full_block_.src_nodes);
    }
    return evaluate_full_graph(model_, dataset_, full_block_, all_features_);
  }

  std::int64_t num_parameters() const { return model_.spec().num_parameters(); }

 private:
  std::uint64_t dropout_key(int epoch, std::size_t batch) const {
    return hash_mix(config_.seed, 0xd0d0, static_cast<std::uint64_t>(epoch), batch);
  }

  void step(const Matrix& grad_logits) {
    model_.zero_grad();
    model_.backward(grad_logits);
    update();
  }

  void update() {
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
  InputRows all_features_;
};

}  // namespace

Accuracy evaluate_full_graph(Model& model, const Dataset& dataset, const Block& full_block,
                             const InputRows& all_features) {
  const std::vector<const Block*> blocks(static_cast<std::size_t>(model.spec().num_layers()),
                                         &full_block);
  const Matrix logits = model.forward(blocks, all_features, false, 0);
  auto accuracy = [&](const std::vector<NodeId>& nodes) {
    if (nodes.empty()) return 0.0;
    return static_cast<double>(
               cpu::count_correct(rows_of(logits, nodes), labels_of(dataset, nodes))) /
           static_cast<double>(nodes.size());
  };
  return {accuracy(dataset.split.val), accuracy(dataset.split.test)};
}

void set_parameter_values(Model& model, const std::vector<Parameter>& values) {
  for (Parameter* p : model.parameters()) {
    const auto match = std::find_if(values.begin(), values.end(),
                                    [&](const Parameter& v) { return v.name == p->name; });
    if (match == values.end()) throw Error("no value for parameter " + p->name);
    p->value.copy_from(match->value);
  }
}

Accuracy evaluate_parameters(const Dataset& dataset, const ModelSpec& spec,
                             const std::vector<Parameter>& values) {
  Model model(spec, 0);
  set_parameter_values(model, values);
  const Block full_block = full_graph_block(dataset.graph);
  return evaluate_full_graph(model, dataset, full_block,
                             InputRows::gather(*dataset.features, full_block.src_nodes));
}

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
  std::unique_ptr<BatchSchedule> schedule;
  if (config.batch_size > 0) {
    sampler =
        std::make_unique<NeighborSampler>(dataset.graph, config.fanouts, sampler_seed(config));
    schedule = std::make_unique<BatchSchedule>(dataset.split.train,
                                               NodePartition::hashed(dataset.num_nodes(), 1, 0),
                                               config.batch_size, config.seed);
  }
  TrainingReport report;
  report.num_parameters = run.num_parameters();
  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    EpochRecord record =
        sampler ? run.mini_batch_epoch(epoch, *sampler, *schedule) : run.full_graph_epoch(epoch);
    record.epoch = epoch;
    check_divergence(config, epoch, record.loss);
    const bool evaluate_now =
        config.eval_every >= 0 &&
        (epoch == config.epochs || (config.eval_every > 0 && epoch % config.eval_every == 0));
    if (evaluate_now) {
      const Accuracy accuracy = run.evaluate();
      record.val_accuracy = accuracy.validation;
      if (epoch == config.epochs) {
        report.val_accuracy = accuracy.validation;
        report.test_accuracy = accuracy.test;
      }
    }
    report.epochs.push_back(record);
    if (on_epoch) on_epoch(record);
  }
  std::vector<double> seconds;
  for (const auto& e : report.epochs) seconds.push_back(e.seconds);
  report.epoch_seconds = measured_epoch_seconds(seconds, config.warmup_epochs);
  report.total_seconds = total.seconds();
  report.peak_memory_bytes = peak_resident_bytes();
  return report;
}

}  // namespace gnnbed
