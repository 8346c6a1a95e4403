#pragma once
// A stack of GNN layers with dropout before every layer and ReLU between layers.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/nn/input_rows.hpp"
#include "exec/nn/layers.hpp"
#include "exec/tensor.hpp"
#include "strategies/config/model_spec.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

class Model {
 public:
  Model(const ModelSpec& spec, std::uint64_t seed);

  // Runs blocks[0..L-1] on `input` (one row per blocks[0] source node). With `training`, applies
  // dropout (masks keyed on `dropout_key`, the layer and each row's node id). Keeps what backward
  // needs: the blocks and `input` must stay alive, unchanged, until backward.
  Matrix forward(std::span<const Block* const> blocks, const Matrix& input, bool training,
                 std::uint64_t dropout_key);
  // The same on sparse input rows (bag-of-words features, a view whose arrays must stay alive,
  // unchanged, until backward): layer 0 multiplies them without densifying when it can
  // (GnnLayer::takes_sparse_input) and gets them densified otherwise; dropout keeps or zeroes each
  // stored entry as it would in the dense rows.
  Matrix forward(std::span<const Block* const> blocks, cpu::SparseMatrixView input, bool training,
                 std::uint64_t dropout_key);
  // One of the two above, as `input` holds its rows.
  Matrix forward(std::span<const Block* const> blocks, const InputRows& input, bool training,
                 std::uint64_t dropout_key);

  // Back-propagates d(loss)/d(logits) of the last training forward, adding to every grad.
  void backward(const Matrix& grad_logits);

  void zero_grad();
  // Every parameter, layer by layer in ModelSpec::parameters order.
  std::vector<Parameter*> parameters();
  const ModelSpec& spec() const { return spec_; }

 private:
  std::uint64_t layer_dropout_key(int layer) const;
  void begin_forward(std::span<const Block* const> blocks, bool training,
                     std::uint64_t dropout_key);
  // Throws Error unless layer `layer` gets one input row per source node of its block.
  void check_input_rows(int layer, std::int64_t rows) const;
  // Layers first_layer.. on `input`, the dense input of first_layer.
  Matrix forward_layers(int first_layer, const Matrix& input);

  ModelSpec spec_;
  std::vector<std::vector<Parameter>> parameters_;  // per layer; layers hold references into it
  std::vector<std::unique_ptr<GnnLayer>> layers_;
  std::vector<const Block*> blocks_;
  // inputs_[l] is what layer l consumed (after dropout); inputs_[0] is used only with dropout,
  // otherwise layer 0 reads the caller's input directly. Kept between steps to reuse the memory.
  std::vector<Matrix> inputs_;
  // Which entries of the sparse layer-0 input dropout keeps (a bit each), read with the input.
  std::vector<std::uint64_t> sparse_input_kept_;
  std::uint64_t dropout_key_ = 0;
  bool dropout_applied_ = false;
};

}  // namespace gnnbed
