#pragma once
// GNN layers with hand-derived backward passes. A layer maps the source-node representations of
// a block (num_src x in) to destination-node outputs (num_dst x out, before any activation).
//
// The linear map and the aggregation commute, so each layer applies the weight on whichever side
// is narrower: transform-then-aggregate when out < in (layer 1 of a wide-feature graph),
// aggregate-then-transform otherwise. Both orders are tested against finite differences.
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/tensor.hpp"
#include "strategies/model_spec.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

struct Parameter {
  std::string name;  // "layer0.W_self", ...
  int layer = 0;
  bool is_weight = false;
  Matrix value;
  Matrix grad;
};

class GnnLayer {
 public:
  virtual ~GnnLayer() = default;

  // Keeps what backward needs; `block` and `h_src` must stay alive, unchanged, until backward.
  virtual Matrix forward(const Block& block, const Matrix& h_src) = 0;
  // Adds parameter gradients to their `grad`; returns d(loss)/d(h_src) when `want_input_grad`
  // (otherwise an empty matrix: layer 1 needs no gradient for the input features).
  virtual Matrix backward(const Matrix& grad_out, bool want_input_grad) = 0;

  std::vector<Parameter>& parameters() { return parameters_; }

 protected:
  // Glorot-uniform weights and zero biases, from (seed, layer, parameter, entry).
  GnnLayer(const ModelSpec& spec, int layer, std::uint64_t seed);
  Parameter& parameter(std::size_t index) { return parameters_[index]; }

 private:
  std::vector<Parameter> parameters_;
};

// y = A h W for a sparse aggregation A (num_dst x num_src), dense h (num_src x in) and W (in x
// out), multiplied in the cheaper order: (A (h W)) when out < in, else ((A h) W). The part GCN and
// GraphSAGE's neighbour term share.
class AggregateTransform {
 public:
  explicit AggregateTransform(bool transform_first) : transform_first_(transform_first) {}

  // Keeps `aggregation` and a reference to `h_src` (which must outlive backward).
  Matrix forward(cpu::SparseMatrix aggregation, const Matrix& h_src, const Matrix& weight);
  // Adds dL/dW to `weight_grad`; returns dL/dh_src when `want_input_grad`, else an empty matrix.
  Matrix backward(const Matrix& grad_out, const Matrix& weight, Matrix& weight_grad,
                  bool want_input_grad);

 private:
  bool transform_first_;
  cpu::SparseMatrix aggregation_;
  const Matrix* h_src_ = nullptr;
  Matrix aggregated_;  // A h_src (aggregate-first order only)
};

class GcnLayer final : public GnnLayer {
 public:
  GcnLayer(const ModelSpec& spec, int layer, std::uint64_t seed);
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;

 private:
  Parameter& weight() { return parameter(0); }
  Parameter& bias() { return parameter(1); }

  AggregateTransform propagate_;
};

class SageLayer final : public GnnLayer {
 public:
  SageLayer(const ModelSpec& spec, int layer, std::uint64_t seed);
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;

 private:
  Parameter& weight_self() { return parameter(0); }
  Parameter& weight_neigh() { return parameter(1); }
  Parameter& bias() { return parameter(2); }

  AggregateTransform neighbours_;
  std::int64_t num_dst_ = 0;
  const Matrix* h_src_ = nullptr;
};

std::unique_ptr<GnnLayer> make_layer(const ModelSpec& spec, int layer, std::uint64_t seed);

}  // namespace gnnbed
