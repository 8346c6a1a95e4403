#include "exec/nn/gat_layer.hpp"

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

cpu::AttentionEdges attention_edges(const Block& block) {
  cpu::AttentionEdges edges;
  edges.num_dst = block.num_dst;
  edges.num_src = block.num_src();
  edges.offsets.resize(static_cast<std::size_t>(block.num_dst) + 1);
  edges.sources.resize(block.src_index.size() + static_cast<std::size_t>(block.num_dst));
  for (std::int64_t v = 0; v <= block.num_dst; ++v) {
    edges.offsets[static_cast<std::size_t>(v)] = block.offsets[static_cast<std::size_t>(v)] + v;
  }
  for (std::int64_t v = 0; v < block.num_dst; ++v) {
    const auto begin = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(v)]);
    const auto end = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(v) + 1]);
    auto slot = static_cast<std::size_t>(edges.offsets[static_cast<std::size_t>(v)]);
    for (std::size_t e = begin; e < end; ++e) edges.sources[slot++] = block.src_index[e];
    edges.sources[slot] = static_cast<std::int32_t>(v);
  }
  return edges;
}

}  // namespace

GatLayer::GatLayer(int heads, Parameter& weight, Parameter& attention_src, Parameter& attention_dst,
                   Parameter* bias, ComputeBackend& backend)
    : heads_(heads),
      weight_(weight),
      attention_src_(attention_src),
      attention_dst_(attention_dst),
      bias_(bias),
      backend_(backend) {
  const std::int64_t width = weight.value.cols();
  if (heads < 1 || width % heads != 0 || attention_src.value.rows() != heads ||
      attention_src.value.cols() != width / heads || attention_dst.value.rows() != heads ||
      attention_dst.value.cols() != width / heads) {
    throw Error("GatLayer: " + std::to_string(heads) + " heads over " + std::to_string(width) +
                " columns need " + std::to_string(heads) + " x head width attention vectors");
  }
}

Matrix GatLayer::forward(const Block& block, const Matrix& h_src) {
  return forward_from_sync(forward_to_sync(block, h_src));
}

Matrix GatLayer::backward(const Matrix& grad_out, bool want_input_grad) {
  return backward_from_sync(backward_to_sync(grad_out), want_input_grad);
}

Matrix GatLayer::forward_to_sync(const Block& block, const Matrix& h_src) {
  h_src_ = &h_src;
  edges_ = attention_edges(block);
  backend_.gemm(h_src, false, weight_.value, false, z_);
  Matrix scores;
  backend_.gat_scores(z_, attention_src_.value, attention_dst_.value, block.num_dst, scores);
  return scores;
}

void GatLayer::check_synced(const Matrix& synced, const char* what) const {
  const std::int64_t num_src = edges_.num_src;
  const std::int64_t num_dst = edges_.num_dst;
  if (synced.rows() != num_src + num_dst || synced.cols() != heads_) {
    throw Error("GatLayer: " + std::to_string(synced.rows()) + " x " +
                std::to_string(synced.cols()) + " " + what + " for " + std::to_string(num_src) +
                " sources, " + std::to_string(num_dst) + " destinations and " +
                std::to_string(heads_) + " heads");
  }
}

Matrix GatLayer::forward_from_sync(const Matrix& scores) {
  if (h_src_ == nullptr) throw Error("GatLayer: the forward's second step before its first");
  check_synced(scores, "scores");
  Matrix out;
  backend_.gat_attention(edges_, scores, z_, attention_, pre_leaky_, out);
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix GatLayer::backward_to_sync(const Matrix& grad_out) {
  if (h_src_ == nullptr) throw Error("GatLayer: backward before forward");
  if (bias_ != nullptr) backend_.accumulate_column_sums(grad_out, bias_->grad);
  Matrix score_grads;
  backend_.gat_attention_backward(edges_, grad_out, z_, attention_, pre_leaky_, grad_z_,
                                  score_grads);
  return score_grads;
}

Matrix GatLayer::backward_from_sync(const Matrix& score_grads, bool want_input_grad) {
  if (grad_z_.rows() != z_.rows())
    throw Error("GatLayer: the backward's second step before its first");
  check_synced(score_grads, "score gradients");
  // The scores are a_src . z_u and a_dst . z_v: their gradients reach the attention vectors and z.
  backend_.gat_scores_backward(z_, score_grads, attention_src_.value, attention_dst_.value,
                               edges_.num_dst, grad_z_, attention_src_.grad, attention_dst_.grad);
  backend_.gemm(*h_src_, true, grad_z_, false, weight_.grad, 1.0f, 1.0f);
  Matrix grad_input;
  if (want_input_grad) backend_.gemm(grad_z_, false, weight_.value, true, grad_input);
  grad_z_.reset(0, z_.cols());
  return grad_input;
}

}  // namespace gnnbed
