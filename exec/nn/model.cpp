#include "exec/nn/model.hpp"

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

Model::Model(const ModelSpec& spec, std::uint64_t seed) : spec_(spec) {
  for (int l = 0; l < spec.num_layers(); ++l) {
    parameters_.push_back(initial_parameters(spec, l, seed));
  }
  for (int l = 0; l < spec.num_layers(); ++l) {
    std::vector<Parameter*> layer_parameters;
    for (Parameter& p : parameters_[static_cast<std::size_t>(l)]) layer_parameters.push_back(&p);
    layers_.push_back(make_layer(spec, l, layer_parameters));
  }
}

std::uint64_t Model::layer_dropout_key(int layer) const {
  return hash_mix(dropout_key_, static_cast<std::uint64_t>(layer));
}

void Model::begin_forward(std::span<const Block* const> blocks, bool training,
                          std::uint64_t dropout_key) {
  const int num_layers = spec_.num_layers();
  if (static_cast<int>(blocks.size()) != num_layers) {
    throw Error("model forward: " + std::to_string(blocks.size()) + " blocks for " +
                std::to_string(num_layers) + " layers");
  }
  blocks_.assign(blocks.begin(), blocks.end());
  inputs_.resize(static_cast<std::size_t>(num_layers));
  dropout_key_ = dropout_key;
  dropout_applied_ = training && spec_.dropout() > 0.0;
}

void Model::check_input_rows(int layer, std::int64_t rows) const {
  const std::int64_t sources = blocks_[static_cast<std::size_t>(layer)]->num_src();
  if (rows != sources) {
    throw Error("model forward: layer " + std::to_string(layer) + " gets " + std::to_string(rows) +
                " rows for " + std::to_string(sources) + " source nodes");
  }
}

Matrix Model::forward(std::span<const Block* const> blocks, const Matrix& input, bool training,
                      std::uint64_t dropout_key) {
  begin_forward(blocks, training, dropout_key);
  return forward_layers(0, input);
}

Matrix Model::forward(std::span<const Block* const> blocks, cpu::SparseMatrixView input,
                      bool training, std::uint64_t dropout_key) {
  begin_forward(blocks, training, dropout_key);
  check_input_rows(0, input.rows);
  if (!layers_[0]->takes_sparse_input()) {
    inputs_[0] = cpu::densified(input);
    return forward_layers(0, inputs_[0]);
  }
  cpu::SparseMatrixView x = input;
  if (dropout_applied_) {
    // Dropout is a bit per entry, applied as the layer reads the rows: they stay in the store.
    x = cpu::dropout_sparse_view(input, blocks_[0]->src_nodes, static_cast<float>(spec_.dropout()),
                                 layer_dropout_key(0), sparse_input_kept_);
  }
  Matrix out = layers_[0]->forward_sparse(*blocks_[0], x);
  if (spec_.num_layers() == 1) return out;
  if (spec_.layer(0).relu) cpu::relu_forward(out);
  inputs_[1] = std::move(out);
  return forward_layers(1, inputs_[1]);
}

Matrix Model::forward(std::span<const Block* const> blocks, const InputRows& input, bool training,
                      std::uint64_t dropout_key) {
  return input.is_sparse() ? forward(blocks, input.sparse(), training, dropout_key)
                           : forward(blocks, input.dense(), training, dropout_key);
}

Matrix Model::forward_layers(int first_layer, const Matrix& input) {
  const int num_layers = spec_.num_layers();
  const auto rate = static_cast<float>(spec_.dropout());
  const Matrix* h = &input;
  for (int l = first_layer;; ++l) {
    const auto index = static_cast<std::size_t>(l);
    check_input_rows(l, h->rows());
    if (dropout_applied_) {
      const auto& ids = blocks_[index]->src_nodes;
      if (h == &inputs_[index]) {
        cpu::dropout_forward(inputs_[index], ids, rate, layer_dropout_key(l));
      } else {
        cpu::dropout_forward_copy(*h, inputs_[index], ids, rate, layer_dropout_key(l));
      }
      h = &inputs_[index];
    }
    Matrix out = layers_[index]->forward(*blocks_[index], *h);
    if (l == num_layers - 1) return out;
    if (spec_.layer(l).relu) cpu::relu_forward(out);
    inputs_[index + 1] = std::move(out);
    h = &inputs_[index + 1];
  }
}

void Model::backward(const Matrix& grad_logits) {
  const auto rate = static_cast<float>(spec_.dropout());
  Matrix grad = grad_logits;
  for (int l = spec_.num_layers() - 1; l >= 0; --l) {
    const auto index = static_cast<std::size_t>(l);
    // The ReLU after layer l fed inputs_[l + 1]. After dropout that holds relu_output * mask /
    // (1 - rate), which is positive exactly where relu_output is positive and kept; where an
    // entry was dropped its gradient is already zero. So it serves as the ReLU's mask either way.
    if (spec_.layer(l).relu) cpu::relu_backward(inputs_[index + 1], grad);
    grad = layers_[index]->backward(grad, l > 0);
    if (l > 0 && dropout_applied_) {
      cpu::dropout_backward(grad, blocks_[index]->src_nodes, rate, layer_dropout_key(l));
    }
  }
}

void Model::zero_grad() {
  for (Parameter* p : parameters()) p->grad.fill(0.0f);
}

std::vector<Parameter*> Model::parameters() {
  std::vector<Parameter*> all;
  for (auto& layer : parameters_) {
    for (Parameter& p : layer) all.push_back(&p);
  }
  return all;
}

}  // namespace gnnbed
