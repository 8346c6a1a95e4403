#include "exec/nn/layers.hpp"

#include <cmath>

#include "exec/nn/aggregation.hpp"
#include "exec/nn/gat_layer.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

std::vector<Parameter> initial_parameters(const ModelSpec& spec, int layer, std::uint64_t seed) {
  std::vector<Parameter> parameters;
  const auto shapes = spec.parameters(layer);
  for (std::size_t p = 0; p < shapes.size(); ++p) {
    const ParameterShape& shape = shapes[p];
    Parameter parameter{"layer" + std::to_string(layer) + "." + shape.name, layer, shape.is_weight,
                        Matrix(shape.rows, shape.cols), Matrix(shape.rows, shape.cols)};
    if (shape.is_weight) {
      const auto limit = static_cast<float>(std::sqrt(6.0 / (shape.rows + shape.cols)));
      parameter.value = uniform_matrix(shape.rows, shape.cols, -limit, limit,
                                       hash_mix(seed, static_cast<std::uint64_t>(layer), p));
    }
    parameters.push_back(std::move(parameter));
  }
  return parameters;
}

Parameter row_slice(const Parameter& parameter, std::int64_t begin, std::int64_t end) {
  if (begin < 0 || end > parameter.value.rows() || begin > end) {
    throw Error("row_slice: rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                parameter.name + " (" + std::to_string(parameter.value.rows()) + " rows)");
  }
  const std::int64_t cols = parameter.value.cols();
  Parameter slice{parameter.name, parameter.layer, parameter.is_weight, Matrix(end - begin, cols),
                  Matrix(end - begin, cols)};
  std::copy(parameter.value.row(begin), parameter.value.row(begin) + (end - begin) * cols,
            slice.value.data());
  return slice;
}

Matrix AggregateTransform::forward(cpu::ScaledAdjacency aggregation, const Matrix& h_src,
                                   const Matrix& weight) {
  aggregation_ = std::move(aggregation);
  h_src_ = &h_src;
  sparse_src_.reset();
  Matrix out;
  if (transform_first_) {
    Matrix transformed;
    backend_.gemm(h_src, false, weight, false, transformed);
    backend_.aggregate(aggregation_, transformed, out);
  } else {
    backend_.aggregate(aggregation_, h_src, aggregated_);
    backend_.gemm(aggregated_, false, weight, false, out);
  }
  return out;
}

Matrix AggregateTransform::forward_sparse(cpu::ScaledAdjacency aggregation,
                                          cpu::SparseMatrixView x_src, const Matrix& weight) {
  aggregation_ = std::move(aggregation);
  h_src_ = nullptr;
  sparse_src_ = x_src;
  Matrix transformed;
  backend_.spmm_rows(x_src, weight, transformed);
  Matrix out;
  backend_.aggregate(aggregation_, transformed, out);
  return out;
}

void accumulate_sparse_weight_grad(ComputeBackend& backend, cpu::SparseMatrixView x,
                                   const Matrix& grad, Matrix& weight_grad) {
  Matrix product;
  backend.spmm_rows_transposed(x, grad, product);
  backend.add_in_place(weight_grad, product);
}

Matrix AggregateTransform::backward(const Matrix& grad_out, const Matrix& weight,
                                    Matrix& weight_grad, bool want_input_grad) {
  Matrix grad_input;
  if (sparse_src_.has_value()) {
    if (want_input_grad) throw Error("AggregateTransform: no input gradient for sparse input rows");
    Matrix grad_transformed;
    backend_.aggregate_transposed(aggregation_, grad_out, grad_transformed);
    accumulate_sparse_weight_grad(backend_, *sparse_src_, grad_transformed, weight_grad);
  } else if (transform_first_) {
    Matrix grad_transformed;
    backend_.aggregate_transposed(aggregation_, grad_out, grad_transformed);
    backend_.gemm(*h_src_, true, grad_transformed, false, weight_grad, 1.0f, 1.0f);
    if (want_input_grad) backend_.gemm(grad_transformed, false, weight, true, grad_input);
  } else {
    backend_.gemm(aggregated_, true, grad_out, false, weight_grad, 1.0f, 1.0f);
    if (want_input_grad) {
      Matrix grad_aggregated;
      backend_.gemm(grad_out, false, weight, true, grad_aggregated);
      backend_.aggregate_transposed(aggregation_, grad_aggregated, grad_input);
    }
  }
  return grad_input;
}

Matrix GnnLayer::forward_sparse(const Block&, cpu::SparseMatrixView) {
  throw Error("this layer takes dense input rows only");
}

GcnLayer::GcnLayer(bool transform_first, Parameter& weight, Parameter* bias,
                   ComputeBackend& backend)
    : weight_(weight), bias_(bias), backend_(backend), propagate_(transform_first, backend) {}

Matrix GcnLayer::forward(const Block& block, const Matrix& h_src) {
  Matrix out = propagate_.forward(gcn_aggregation(block), h_src, weight_.value);
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix GcnLayer::forward_sparse(const Block& block, cpu::SparseMatrixView x_src) {
  Matrix out = propagate_.forward_sparse(gcn_aggregation(block), x_src, weight_.value);
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix GcnLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  if (bias_ != nullptr) backend_.accumulate_column_sums(grad_out, bias_->grad);
  return propagate_.backward(grad_out, weight_.value, weight_.grad, want_input_grad);
}

Matrix PropagationLayer::forward(const Block& block, const Matrix& h_src) {
  aggregation_ = gcn_aggregation(block);
  Matrix out;
  backend_.aggregate(aggregation_, h_src, out);
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix PropagationLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  if (bias_ != nullptr) backend_.accumulate_column_sums(grad_out, bias_->grad);
  Matrix grad_input;
  if (want_input_grad) backend_.aggregate_transposed(aggregation_, grad_out, grad_input);
  return grad_input;
}

SageLayer::SageLayer(bool transform_first, Parameter& weight_self, Parameter& weight_neigh,
                     Parameter* bias, ComputeBackend& backend)
    : weight_self_(weight_self),
      weight_neigh_(weight_neigh),
      bias_(bias),
      backend_(backend),
      neighbours_(transform_first, backend) {}

Matrix SageLayer::forward(const Block& block, const Matrix& h_src) {
  num_dst_ = block.num_dst;
  h_src_ = &h_src;
  sparse_dst_.reset();
  Matrix out;
  backend_.gemm(MatrixView(h_src).first_rows(num_dst_), false, weight_self_.value, false, out);
  backend_.add_in_place(out,
                        neighbours_.forward(mean_aggregation(block), h_src, weight_neigh_.value));
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix SageLayer::forward_sparse(const Block& block, cpu::SparseMatrixView x_src) {
  num_dst_ = block.num_dst;
  h_src_ = nullptr;
  sparse_dst_ = x_src.first_rows(num_dst_);
  Matrix out;
  backend_.spmm_rows(*sparse_dst_, weight_self_.value, out);
  backend_.add_in_place(
      out, neighbours_.forward_sparse(mean_aggregation(block), x_src, weight_neigh_.value));
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix SageLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  if (bias_ != nullptr) backend_.accumulate_column_sums(grad_out, bias_->grad);
  if (sparse_dst_.has_value()) {
    accumulate_sparse_weight_grad(backend_, *sparse_dst_, grad_out, weight_self_.grad);
  } else {
    backend_.gemm(MatrixView(*h_src_).first_rows(num_dst_), true, grad_out, false,
                  weight_self_.grad, 1.0f, 1.0f);
  }
  Matrix grad_input =
      neighbours_.backward(grad_out, weight_neigh_.value, weight_neigh_.grad, want_input_grad);
  if (want_input_grad) {
    // The destination nodes are the first rows of the source side: their self term adds there.
    Matrix grad_self;
    backend_.gemm(grad_out, false, weight_self_.value, true, grad_self);
    backend_.add_to_first_rows(grad_input, grad_self);
  }
  return grad_input;
}

std::unique_ptr<GnnLayer> make_layer(const ModelSpec& spec, int layer,
                                     std::span<Parameter* const> parameters,
                                     ComputeBackend& backend) {
  const auto shapes = spec.parameters(layer);
  const auto num_weights = static_cast<std::size_t>(spec.num_weights(layer));
  if (parameters.size() != num_weights && parameters.size() != shapes.size()) {
    throw Error("make_layer: layer " + std::to_string(layer) + " takes " +
                std::to_string(num_weights) + " weights" +
                (spec.layer(layer).bias ? " and an optional bias" : "") + ", got " +
                std::to_string(parameters.size()) + " parameters");
  }
  for (std::size_t p = 0; p < num_weights; ++p) {
    if (parameters[p]->value.cols() != shapes[p].cols) {
      throw Error("make_layer: " + parameters[p]->name + " has " +
                  std::to_string(parameters[p]->value.cols()) + " columns, layer " +
                  std::to_string(layer) + " needs " + std::to_string(shapes[p].cols));
    }
  }
  Parameter* bias =
      spec.layer(layer).bias && parameters.size() == shapes.size() ? parameters.back() : nullptr;
  if (num_weights == 0) return std::make_unique<PropagationLayer>(bias, backend);
  // A partial layer's weights hold only its slice of the input rows: the slice's width decides.
  const bool transform_first =
      spec.transforms_first(layer, static_cast<int>(parameters[0]->value.rows()));
  switch (spec.kind()) {
    case ModelKind::gat:
      return std::make_unique<GatLayer>(spec.layer(layer).heads, *parameters[0], *parameters[1],
                                        *parameters[2], bias, backend);
    case ModelKind::sgc:
    case ModelKind::gcn:
      return std::make_unique<GcnLayer>(transform_first, *parameters[0], bias, backend);
    case ModelKind::sage:
      return std::make_unique<SageLayer>(transform_first, *parameters[0], *parameters[1], bias,
                                         backend);
  }
  throw Error("unknown model kind");
}

}  // namespace gnnbed
