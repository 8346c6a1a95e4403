#pragma once
// Single-process training, full-graph or sampled mini-batch: the reference every distributed
// strategy is checked against.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "exec/nn/model.hpp"
#include "strategies/config/model_spec.hpp"
#include "strategies/config/training_config.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

struct EpochRecord {
  int epoch = 0;                // 1-based
  double loss = 0;              // mean over the epoch's training steps
  double train_accuracy = 0;    // on the training nodes as seen in training (dropout on)
  double val_accuracy = -1;     // -1 when not evaluated this epoch
  double seconds = 0;           // training time of the epoch (evaluation excluded)
  double sampling_seconds = 0;  // building the computation graphs (blocks)
  double gather_seconds = 0;    // reading input features and labels
  double compute_seconds = 0;   // forward, backward and optimiser step
  int steps = 0;
};

struct TrainingReport {
  std::vector<EpochRecord> epochs;
  double val_accuracy = 0;   // after the last epoch
  double test_accuracy = 0;  // after the last epoch
  double epoch_seconds = 0;  // mean training time per epoch, after the warm-up epochs
  double total_seconds = 0;  // wall time including evaluation
  std::int64_t num_parameters = 0;
  std::int64_t peak_memory_bytes = 0;  // resident set high-water mark of the process

  nlohmann::json to_json() const;
};

struct Accuracy {
  double validation = 0;
  double test = 0;
};

// Accuracy on the validation and test nodes, with full neighbourhoods and no dropout:
// `full_block` is full_graph_block(dataset.graph), `all_features` every node's features.
Accuracy evaluate_full_graph(Model& model, const Dataset& dataset, const Block& full_block,
                             const InputRows& all_features);
// The same for a model with the given parameter values (by name).
Accuracy evaluate_parameters(const Dataset& dataset, const ModelSpec& spec,
                             const std::vector<Parameter>& values);
// Sets every parameter of `model` to the value of the same name in `values` (Error when one is
// missing).
void set_parameter_values(Model& model, const std::vector<Parameter>& values);

using EpochCallback = std::function<void(const EpochRecord&)>;

// Trains a fresh model (weights from config.seed) on `dataset` and evaluates it on the validation
// and test nodes with full neighbourhoods. Calls `on_epoch` after every epoch (progress).
TrainingReport train_model(const Dataset& dataset, const ModelSpec& spec,
                           const TrainingConfig& config, const EpochCallback& on_epoch = {});

}  // namespace gnnbed
