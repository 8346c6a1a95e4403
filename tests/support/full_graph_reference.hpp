#pragma once
// Single-process references for full-graph training (tests that link the CPU engine): one step of
// the model on the whole graph, and the same step as SANCUS computes it with stale copies of the
// other ranks' embeddings and gradients.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/distributed/rank_engine.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/layers.hpp"
#include "exec/nn/model.hpp"
#include "strategies/batch_schedule.hpp"
#include "strategies/config/training_config.hpp"
#include "tests/support/reference_step.hpp"
#include "workloads/common/random.hpp"
#include "workloads/partition.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed::testing {

// The epoch's dropout key, as every full-graph strategy's plans use it.
inline std::uint64_t full_graph_dropout_key(const Dataset& dataset, const TrainingConfig& training,
                                            int epoch) {
  const NodePartition one = NodePartition::hashed(dataset.num_nodes(), 1, 1);
  return BatchSchedule(dataset.split.train, one, 0, training.seed).dropout_key(epoch, 0);
}

// The gradient of the mean cross-entropy of the training nodes, as a matrix over every node (zero
// outside the training nodes). Returns the loss.
inline double training_loss_gradient(const Dataset& dataset, const Matrix& logits, Matrix& grad) {
  const std::vector<NodeId>& train = dataset.split.train;
  Matrix train_logits(static_cast<std::int64_t>(train.size()), logits.cols());
  std::vector<std::int32_t> labels;
  for (std::size_t i = 0; i < train.size(); ++i) {
    std::copy_n(logits.row(train[i]), logits.cols(),
                train_logits.row(static_cast<std::int64_t>(i)));
    labels.push_back(dataset.labels[static_cast<std::size_t>(train[i])]);
  }
  Matrix grad_train;
  std::int64_t correct = 0;
  const double loss = cpu::softmax_cross_entropy(train_logits, labels, grad_train, correct);
  grad = Matrix(logits.rows(), logits.cols());
  for (std::size_t i = 0; i < train.size(); ++i) {
    std::copy_n(grad_train.row(static_cast<std::int64_t>(i)), grad.cols(), grad.row(train[i]));
  }
  return loss;
}

// One full-graph step of the single-process model: forward on the whole graph with the epoch's
// dropout masks, the mean loss of the training nodes, backward. Returns the loss.
inline double full_graph_step(Model& model, const Dataset& dataset, const TrainingConfig& training,
                              int epoch) {
  const Block block = full_graph_block(dataset.graph);
  const std::vector<const Block*> blocks(static_cast<std::size_t>(model.spec().num_layers()),
                                         &block);
  Matrix features(dataset.num_nodes(), dataset.feature_dim());
  dataset.features->gather(block.src_nodes, features.data());
  const Matrix logits =
      model.forward(blocks, features, true, full_graph_dropout_key(dataset, training, epoch));
  Matrix grad;
  const double loss = training_loss_gradient(dataset, logits, grad);
  model.zero_grad();
  model.backward(grad);
  return loss;
}

// Collective: the distributed step `engine` just ran (`outcome`, of epoch `epoch`) against the
// single-process full-graph step of `reference` (the model as the ranks held it before the step):
// the loss over every rank, every gradient and every weight after the step. Leaves `reference`
// stepped, for the next epoch (with an optimizer that keeps no state between steps).
inline void expect_full_graph_step(RankEngine& engine, Transport& transport,
                                   const PlanOutcome& outcome, const ExperimentConfig& config,
                                   Model& reference, const Dataset& dataset, int epoch) {
  const double loss = transport.sum_over_ranks(outcome.loss);
  const std::vector<Parameter> gradients = engine.executor().gather_full_parameters(true);
  const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);
  const double reference_loss = full_graph_step(reference, dataset, config.training, epoch);
  EXPECT_NEAR(loss, reference_loss, 1e-5 * reference_loss);
  expect_same_step(gradients, weights, reference.parameters(), config.training);
}

// SANCUS's step in one process. Every rank r computes layer l >= 1 for its own nodes from an input
// whose rows of r's nodes are fresh and whose other rows are the copy kept from their owner's last
// broadcast of the layer; backward, the gradient of a node's row adds its owner's fresh
// contribution to the other ranks' contributions kept from the owner's last broadcast. Layer 0's
// input, the features, never changes, so its copies are exact and layer 0 runs once on the whole
// graph. The caller steps the parameters between epochs (with an optimizer that keeps no state, so
// that a fresh one per step does the same).
class StaleFullGraphReference {
 public:
  StaleFullGraphReference(const ModelSpec& spec, std::uint64_t seed, const Dataset& dataset,
                          const NodePartition& partition)
      : spec_(spec),
        dataset_(dataset),
        partition_(partition),
        block_(full_graph_block(dataset.graph)) {
    for (int l = 0; l < spec.num_layers(); ++l)
      parameters_.push_back(initial_parameters(spec, l, seed));
    features_ = Matrix(dataset.num_nodes(), dataset.feature_dim());
    dataset.features->gather(block_.src_nodes, features_.data());
    kept_inputs_.resize(static_cast<std::size_t>(spec.num_layers()));
    kept_gradients_.resize(static_cast<std::size_t>(spec.num_layers()));
  }

  std::vector<Parameter*> parameters() {
    std::vector<Parameter*> all;
    for (auto& layer : parameters_) {
      for (Parameter& p : layer) all.push_back(&p);
    }
    return all;
  }

  // One epoch; `broadcast`: the copies are refreshed first. Returns the loss.
  double step(const TrainingConfig& training, int epoch, bool broadcast) {
    return step(training, epoch,
                std::vector<std::vector<char>>(static_cast<std::size_t>(spec_.num_layers()),
                                               std::vector<char>(num_ranks(), broadcast ? 1 : 0)));
  }
  // One epoch where owner q's rows of layer l's input are refreshed first where fresh[l][q] (and
  // the gradients of those rows then kept); layer 0's entries are not read.
  double step(const TrainingConfig& training, int epoch,
              const std::vector<std::vector<char>>& fresh) {
    fresh_ = fresh;
    for (Parameter* p : parameters()) p->grad.fill(0.0f);
    key_ = full_graph_dropout_key(dataset_, training, epoch);
    forward();
    Matrix grad;
    const double loss = training_loss_gradient(dataset_, outputs_.back(), grad);
    backward(std::move(grad));
    return loss;
  }

 private:
  int num_ranks() const { return partition_.num_parts(); }
  bool fresh(std::size_t layer, NodeId v) const {
    return fresh_[layer][static_cast<std::size_t>(partition_.owner(v))] != 0;
  }
  std::uint64_t layer_key(int layer) const {
    return hash_mix(key_, static_cast<std::uint64_t>(layer));
  }
  void dropout(Matrix& h, int layer) const {
    if (spec_.dropout() > 0)
      cpu::dropout_forward(h, block_.src_nodes, static_cast<float>(spec_.dropout()),
                           layer_key(layer));
  }
  std::unique_ptr<GnnLayer> make(int layer) {
    std::vector<Parameter*> held;
    for (Parameter& p : parameters_[static_cast<std::size_t>(layer)]) held.push_back(&p);
    return make_layer(spec_, layer, held);
  }

  // outputs_[l]: layer l's output over every node, each row computed by its owner (after ReLU).
  void forward() {
    const auto num_layers = static_cast<std::size_t>(spec_.num_layers());
    layers_.clear();
    layers_.resize(num_layers);
    inputs_.clear();
    inputs_.resize(num_layers);
    outputs_.assign(num_layers, Matrix());
    // Layers keep a reference to their input until backward: no reallocation after the first.
    for (auto& per_rank : inputs_) per_rank.reserve(static_cast<std::size_t>(num_ranks()));
    inputs_[0].push_back(features_);
    dropout(inputs_[0][0], 0);
    layers_[0].push_back(make(0));
    outputs_[0] = layers_[0][0]->forward(block_, inputs_[0][0]);
    if (spec_.layer(0).relu) cpu::relu_forward(outputs_[0]);
    for (std::size_t l = 1; l < num_layers; ++l) {
      const Matrix& computed = outputs_[l - 1];
      if (kept_inputs_[l].size() == 0) kept_inputs_[l] = Matrix(computed.rows(), computed.cols());
      for (NodeId v = 0; v < dataset_.num_nodes(); ++v) {
        if (fresh(l, v)) std::copy_n(computed.row(v), computed.cols(), kept_inputs_[l].row(v));
      }
      outputs_[l] = Matrix(computed.rows(), spec_.layer(static_cast<int>(l)).out_dim);
      for (int r = 0; r < num_ranks(); ++r) {
        Matrix input = kept_inputs_[l];
        for (NodeId v = 0; v < dataset_.num_nodes(); ++v) {
          if (partition_.owner(v) == r) std::copy_n(computed.row(v), computed.cols(), input.row(v));
        }
        dropout(input, static_cast<int>(l));
        inputs_[l].push_back(std::move(input));
        layers_[l].push_back(make(static_cast<int>(l)));
        const Matrix out = layers_[l].back()->forward(block_, inputs_[l].back());
        for (NodeId v = 0; v < dataset_.num_nodes(); ++v) {
          if (partition_.owner(v) == r) std::copy_n(out.row(v), out.cols(), outputs_[l].row(v));
        }
      }
      if (spec_.layer(static_cast<int>(l)).relu) cpu::relu_forward(outputs_[l]);
    }
  }

  // `grad`: of the last layer's output over every node.
  void backward(Matrix grad) {
    const auto rate = static_cast<float>(spec_.dropout());
    for (int l = spec_.num_layers() - 1; l >= 1; --l) {
      const auto slot = static_cast<std::size_t>(l);
      if (spec_.layer(l).relu) cpu::relu_backward(outputs_[slot], grad);
      kept_gradients_[slot].resize(static_cast<std::size_t>(num_ranks()));
      Matrix input_grad(grad.rows(), spec_.layer(l).in_dim);
      for (int r = 0; r < num_ranks(); ++r) {
        Matrix own(grad.rows(), grad.cols());
        for (NodeId v = 0; v < dataset_.num_nodes(); ++v) {
          if (partition_.owner(v) == r) std::copy_n(grad.row(v), grad.cols(), own.row(v));
        }
        Matrix contribution = layers_[slot][static_cast<std::size_t>(r)]->backward(own, true);
        if (rate > 0) cpu::dropout_backward(contribution, block_.src_nodes, rate, layer_key(l));
        Matrix& kept = kept_gradients_[slot][static_cast<std::size_t>(r)];
        if (kept.size() == 0) kept = Matrix(contribution.rows(), contribution.cols());
        for (NodeId v = 0; v < dataset_.num_nodes(); ++v) {
          // Rows read from a fresh block send their gradients back; the others' owner adds what
          // came back when it last broadcast.
          if (fresh(slot, v)) std::copy_n(contribution.row(v), contribution.cols(), kept.row(v));
          const Matrix& added = partition_.owner(v) == r ? contribution : kept;
          for (std::int64_t c = 0; c < input_grad.cols(); ++c)
            input_grad.row(v)[c] += added.row(v)[c];
        }
      }
      grad = std::move(input_grad);
    }
    if (spec_.layer(0).relu) cpu::relu_backward(outputs_[0], grad);
    layers_[0][0]->backward(grad, false);
  }

  const ModelSpec spec_;
  const Dataset& dataset_;
  const NodePartition& partition_;
  const Block block_;
  std::uint64_t key_ = 0;
  std::vector<std::vector<Parameter>> parameters_;  // per layer; layers hold pointers into it
  Matrix features_;
  std::vector<std::vector<std::unique_ptr<GnnLayer>>> layers_;  // [layer][rank]
  std::vector<std::vector<Matrix>> inputs_;                     // [layer][rank], after dropout
  std::vector<Matrix> outputs_;
  std::vector<std::vector<char>> fresh_;             // [layer][owner]: refreshed this epoch
  std::vector<Matrix> kept_inputs_;                  // [layer]: owners' rows as last broadcast
  std::vector<std::vector<Matrix>> kept_gradients_;  // [layer][rank]: its input gradient then
};

}  // namespace gnnbed::testing
