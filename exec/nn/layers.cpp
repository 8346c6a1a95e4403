#include "exec/nn/layers.hpp"

#include <cmath>

#include "exec/nn/aggregation.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

GnnLayer::GnnLayer(const ModelSpec& spec, int layer, std::uint64_t seed) {
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
    parameters_.push_back(std::move(parameter));
  }
}

Matrix AggregateTransform::forward(cpu::SparseMatrix aggregation, const Matrix& h_src,
                                   const Matrix& weight) {
  aggregation_ = std::move(aggregation);
  h_src_ = &h_src;
  Matrix out;
  if (transform_first_) {
    Matrix transformed;
    cpu::gemm(h_src, false, weight, false, transformed);
    cpu::spmm(aggregation_, transformed, out);
  } else {
    cpu::spmm(aggregation_, h_src, aggregated_);
    cpu::gemm(aggregated_, false, weight, false, out);
  }
  return out;
}

Matrix AggregateTransform::backward(const Matrix& grad_out, const Matrix& weight,
                                    Matrix& weight_grad, bool want_input_grad) {
  Matrix grad_input;
  if (transform_first_) {
    Matrix grad_transformed;
    cpu::spmm(aggregation_.transposed(), grad_out, grad_transformed);
    cpu::gemm(*h_src_, true, grad_transformed, false, weight_grad, 1.0f, 1.0f);
    if (want_input_grad) cpu::gemm(grad_transformed, false, weight, true, grad_input);
  } else {
    cpu::gemm(aggregated_, true, grad_out, false, weight_grad, 1.0f, 1.0f);
    if (want_input_grad) {
      Matrix grad_aggregated;
      cpu::gemm(grad_out, false, weight, true, grad_aggregated);
      cpu::spmm(aggregation_.transposed(), grad_aggregated, grad_input);
    }
  }
  return grad_input;
}

GcnLayer::GcnLayer(const ModelSpec& spec, int layer, std::uint64_t seed)
    : GnnLayer(spec, layer, seed), propagate_(spec.transforms_first(layer)) {}

Matrix GcnLayer::forward(const Block& block, const Matrix& h_src) {
  Matrix out = propagate_.forward(gcn_aggregation(block), h_src, weight().value);
  cpu::add_row_vector(out, bias().value);
  return out;
}

Matrix GcnLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  cpu::accumulate_column_sums(grad_out, bias().grad);
  return propagate_.backward(grad_out, weight().value, weight().grad, want_input_grad);
}

SageLayer::SageLayer(const ModelSpec& spec, int layer, std::uint64_t seed)
    : GnnLayer(spec, layer, seed), neighbours_(spec.transforms_first(layer)) {}

Matrix SageLayer::forward(const Block& block, const Matrix& h_src) {
  num_dst_ = block.num_dst;
  h_src_ = &h_src;
  Matrix out;
  cpu::gemm(MatrixView(h_src).first_rows(num_dst_), false, weight_self().value, false, out);
  cpu::add_in_place(out, neighbours_.forward(mean_aggregation(block), h_src, weight_neigh().value));
  cpu::add_row_vector(out, bias().value);
  return out;
}

Matrix SageLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  cpu::accumulate_column_sums(grad_out, bias().grad);
  cpu::gemm(MatrixView(*h_src_).first_rows(num_dst_), true, grad_out, false, weight_self().grad,
            1.0f, 1.0f);
  Matrix grad_input =
      neighbours_.backward(grad_out, weight_neigh().value, weight_neigh().grad, want_input_grad);
  if (want_input_grad) {
    // The destination nodes are the first rows of the source side: their self term adds there.
    Matrix grad_self;
    cpu::gemm(grad_out, false, weight_self().value, true, grad_self);
    const std::int64_t count = grad_self.size();
    float* target = grad_input.data();
    const float* source = grad_self.data();
    for (std::int64_t i = 0; i < count; ++i) target[i] += source[i];
  }
  return grad_input;
}

std::unique_ptr<GnnLayer> make_layer(const ModelSpec& spec, int layer, std::uint64_t seed) {
  switch (spec.kind()) {
    case ModelKind::gcn:
      return std::make_unique<GcnLayer>(spec, layer, seed);
    case ModelKind::sage:
      return std::make_unique<SageLayer>(spec, layer, seed);
  }
  throw Error("unknown model kind");
}

}  // namespace gnnbed
