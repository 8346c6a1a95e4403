#pragma once
// GNN layers with hand-derived backward passes. A layer maps the source-node representations of
// a block (num_src x in) to destination-node outputs (num_dst x out, before any activation).
//
// Layers do not own their parameters: a model (or a strategy's engine) owns them and hands each
// layer the ones it uses. That lets P3's model-parallel first layer run on a slice of the weight
// rows (its share of the feature columns) and without the bias, which is added once after the
// partial results are summed.
//
// The linear map and the aggregation commute, so each layer applies the weight on whichever side
// is narrower: transform-then-aggregate when out < in (layer 1 of a wide-feature graph),
// aggregate-then-transform otherwise. Both orders are tested against finite differences.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exec/kernels/compute_backend.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/tensor.hpp"
#include "strategies/config/model_spec.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

struct Parameter {
  std::string name;  // "layer0.W_self", ...
  int layer = 0;
  bool is_weight = false;
  Matrix value;
  Matrix grad;
};

// The parameters of layer l as ModelSpec::parameters lists them: Glorot-uniform weights and zero
// biases, a pure function of (seed, layer, parameter).
std::vector<Parameter> initial_parameters(const ModelSpec& spec, int layer, std::uint64_t seed);

// Rows [begin, end) of a weight parameter (value and a zero gradient): a rank's share of a
// weight split along its input dimension.
Parameter row_slice(const Parameter& parameter, std::int64_t begin, std::int64_t end);

// y = A h W for a sparse aggregation A (num_dst x num_src), dense h (num_src x in) and W (in x
// out), multiplied in the cheaper order: (A (h W)) when out < in, else ((A h) W). The part GCN and
// GraphSAGE's neighbour term share. Kernels run on `backend`, which must outlive the object.
class AggregateTransform {
 public:
  AggregateTransform(bool transform_first, ComputeBackend& backend)
      : transform_first_(transform_first), backend_(backend) {}

  // Keeps `aggregation` and a reference to `h_src` (both, and the block the aggregation reads,
  // must outlive backward).
  Matrix forward(cpu::ScaledAdjacency aggregation, const Matrix& h_src, const Matrix& weight);
  // The same on sparse source rows, always transform-first (A (x W)): x W is a sparse times dense
  // product, and aggregating first would need a sparse times sparse one. backward then gives no
  // input gradient.
  Matrix forward_sparse(cpu::ScaledAdjacency aggregation, cpu::SparseMatrixView x_src,
                        const Matrix& weight);
  // Adds dL/dW to `weight_grad`; returns dL/dh_src when `want_input_grad`, else an empty matrix.
  Matrix backward(const Matrix& grad_out, const Matrix& weight, Matrix& weight_grad,
                  bool want_input_grad);

 private:
  bool transform_first_;
  ComputeBackend& backend_;
  cpu::ScaledAdjacency aggregation_;
  const Matrix* h_src_ = nullptr;
  std::optional<cpu::SparseMatrixView> sparse_src_;  // set by forward_sparse instead of h_src_
  Matrix aggregated_;                                // A h_src (aggregate-first order only)
};

// dL/dW += transpose(x) grad for sparse rows x: the weight gradient of x W.
void accumulate_sparse_weight_grad(ComputeBackend& backend, cpu::SparseMatrixView x,
                                   const Matrix& grad, Matrix& weight_grad);

class GnnLayer {
 public:
  virtual ~GnnLayer() = default;

  // Keeps what backward needs; `block` and `h_src` must stay alive, unchanged, until backward.
  virtual Matrix forward(const Block& block, const Matrix& h_src) = 0;
  // Adds parameter gradients to their `grad`; returns d(loss)/d(h_src) when `want_input_grad`
  // (otherwise an empty matrix: layer 1 needs no gradient for the input features).
  virtual Matrix backward(const Matrix& grad_out, bool want_input_grad) = 0;

  // Whether forward_sparse takes the layer's input as sparse rows (bag-of-words features of layer
  // 0): layers whose first use of the input is a product with a weight. Others get dense rows.
  virtual bool takes_sparse_input() const { return false; }
  // forward on sparse source rows, which must stay alive, unchanged, until backward; backward
  // then gives no input gradient (layer 0 needs none). Throws Error unless takes_sparse_input().
  virtual Matrix forward_sparse(const Block& block, cpu::SparseMatrixView x_src);
};

// A layer whose split by input columns (P3's first layer) needs sums over the column slices midway,
// because it is not linear in its input (GAT's attention). Forward and backward each run in two
// steps: the first gives a tensor linear in the layer's input columns, partial on a slice; the
// second takes that tensor summed over the slices. Run whole, the steps compose to forward and
// backward. Each step keeps what the next needs: to_sync, then from_sync, forward then backward.
class SyncedLayer {
 public:
  virtual ~SyncedLayer() = default;

  virtual Matrix forward_to_sync(const Block& block, const Matrix& h_src) = 0;
  virtual Matrix forward_from_sync(const Matrix& synced) = 0;
  virtual Matrix backward_to_sync(const Matrix& grad_out) = 0;
  // Returns d(loss)/d(h_src) when `want_input_grad`, else an empty matrix.
  virtual Matrix backward_from_sync(const Matrix& synced, bool want_input_grad) = 0;
};

class GcnLayer final : public GnnLayer {
 public:
  // `bias` may be null (a partial layer).
  GcnLayer(bool transform_first, Parameter& weight, Parameter* bias, ComputeBackend& backend);
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;
  bool takes_sparse_input() const override { return true; }
  Matrix forward_sparse(const Block& block, cpu::SparseMatrixView x_src) override;

 private:
  Parameter& weight_;
  Parameter* bias_;
  ComputeBackend& backend_;
  AggregateTransform propagate_;
};

// SGC's layers after the first: GCN's propagation without weights, h'_v = sum_{u in N(v) + v}
// h_u / sqrt(d_u d_v), plus the bias on the last.
class PropagationLayer final : public GnnLayer {
 public:
  // `bias` may be null.
  PropagationLayer(Parameter* bias, ComputeBackend& backend) : bias_(bias), backend_(backend) {}
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;

 private:
  Parameter* bias_;
  ComputeBackend& backend_;
  cpu::ScaledAdjacency aggregation_;
};

class SageLayer final : public GnnLayer {
 public:
  // `bias` may be null (a partial layer).
  SageLayer(bool transform_first, Parameter& weight_self, Parameter& weight_neigh, Parameter* bias,
            ComputeBackend& backend);
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;
  bool takes_sparse_input() const override { return true; }
  Matrix forward_sparse(const Block& block, cpu::SparseMatrixView x_src) override;

 private:
  Parameter& weight_self_;
  Parameter& weight_neigh_;
  Parameter* bias_;
  ComputeBackend& backend_;
  AggregateTransform neighbours_;
  std::int64_t num_dst_ = 0;
  const Matrix* h_src_ = nullptr;
  // With sparse input: the destination rows, the input's first rows.
  std::optional<cpu::SparseMatrixView> sparse_dst_;
};

// Layer l of `spec` over `parameters`, given in ModelSpec::parameters(l) order; when the list
// ends before a bias the layer has, the layer is partial (no bias). Throws Error on a shape
// mismatch. The layer's kernels run on `backend` (which must outlive it).
std::unique_ptr<GnnLayer> make_layer(const ModelSpec& spec, int layer,
                                     std::span<Parameter* const> parameters,
                                     ComputeBackend& backend = cpu_backend());

}  // namespace gnnbed
