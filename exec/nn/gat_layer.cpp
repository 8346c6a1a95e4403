#include "exec/nn/gat_layer.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr float kLeakySlope = 0.2f;  // the GAT paper's negative slope

float dot(const float* a, const float* b, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Destination v's edges in a block with self loops: i < degree is its i-th in-edge, i == degree
// the loop to itself. Edges are numbered destination by destination, each self loop after its
// destination's in-edges.
struct EdgeRange {
  EdgeRange(const Block& of, std::int64_t destination)
      : block(of),
        v(destination),
        begin(of.offsets[static_cast<std::size_t>(destination)]),
        degree(of.offsets[static_cast<std::size_t>(destination) + 1] - begin),
        first(begin + destination) {}
  std::int64_t source(std::int64_t i) const {
    return i < degree ? block.src_index[static_cast<std::size_t>(begin + i)] : v;
  }

  const Block& block;
  std::int64_t v;
  std::int64_t begin;   // v's first entry in src_index
  std::int64_t degree;  // v's in-edges (without the self loop)
  std::int64_t first;   // number of v's first edge
};

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
  block_ = &block;
  backend_.gemm(h_src, false, weight_.value, false, z_);
  const std::int64_t head_dim = z_.cols() / heads_;
  const std::int64_t num_src = block.num_src();
  Matrix scores(num_src + block.num_dst, heads_);
  for (std::int64_t u = 0; u < num_src; ++u) {
    for (int k = 0; k < heads_; ++k) {
      const float* z = z_.row(u) + k * head_dim;
      scores(u, k) = dot(z, attention_src_.value.row(k), head_dim);
      if (u < block.num_dst) scores(num_src + u, k) = dot(z, attention_dst_.value.row(k), head_dim);
    }
  }
  return scores;
}

void GatLayer::check_synced(const Matrix& synced, const char* what) const {
  const std::int64_t num_src = block_->num_src();
  const std::int64_t num_dst = block_->num_dst;
  if (synced.rows() != num_src + num_dst || synced.cols() != heads_) {
    throw Error("GatLayer: " + std::to_string(synced.rows()) + " x " +
                std::to_string(synced.cols()) + " " + what + " for " + std::to_string(num_src) +
                " sources, " + std::to_string(num_dst) + " destinations and " +
                std::to_string(heads_) + " heads");
  }
}

Matrix GatLayer::forward_from_sync(const Matrix& scores) {
  if (h_src_ == nullptr) throw Error("GatLayer: the forward's second step before its first");
  const Block& block = *block_;
  const std::int64_t width = z_.cols();
  const std::int64_t head_dim = width / heads_;
  const std::int64_t num_src = block.num_src();
  const std::int64_t num_dst = block.num_dst;
  check_synced(scores, "scores");
  const auto num_slots = static_cast<std::size_t>((block.num_edges() + num_dst) * heads_);
  attention_.assign(num_slots, 0.0f);
  pre_leaky_.assign(num_slots, 0.0f);
  Matrix out(num_dst, width);
  for (std::int64_t v = 0; v < num_dst; ++v) {
    const EdgeRange edges(block, v);
    for (int k = 0; k < heads_; ++k) {
      float largest = -INFINITY;
      for (std::int64_t i = 0; i <= edges.degree; ++i) {
        const float pre = scores(num_src + v, k) + scores(edges.source(i), k);
        const auto slot = static_cast<std::size_t>((edges.first + i) * heads_ + k);
        pre_leaky_[slot] = pre;
        attention_[slot] = pre > 0.0f ? pre : kLeakySlope * pre;
        largest = std::max(largest, attention_[slot]);
      }
      float total = 0.0f;
      for (std::int64_t i = 0; i <= edges.degree; ++i) {
        float& a = attention_[static_cast<std::size_t>((edges.first + i) * heads_ + k)];
        a = std::exp(a - largest);
        total += a;
      }
      float* target = out.row(v) + k * head_dim;
      for (std::int64_t i = 0; i <= edges.degree; ++i) {
        float& a = attention_[static_cast<std::size_t>((edges.first + i) * heads_ + k)];
        a /= total;
        const float* z = z_.row(edges.source(i)) + k * head_dim;
        for (std::int64_t c = 0; c < head_dim; ++c) target[c] += a * z[c];
      }
    }
  }
  if (bias_ != nullptr) backend_.add_row_vector(out, bias_->value);
  return out;
}

Matrix GatLayer::backward_to_sync(const Matrix& grad_out) {
  if (h_src_ == nullptr) throw Error("GatLayer: backward before forward");
  const Block& block = *block_;
  if (bias_ != nullptr) backend_.accumulate_column_sums(grad_out, bias_->grad);
  const std::int64_t width = z_.cols();
  const std::int64_t head_dim = width / heads_;
  const std::int64_t num_src = block.num_src();
  const std::int64_t num_dst = block.num_dst;
  grad_z_.reset(num_src, width);
  Matrix score_grads(num_src + num_dst, heads_);
  std::vector<float> grad_attention;
  for (std::int64_t v = 0; v < num_dst; ++v) {
    const EdgeRange edges(block, v);
    for (int k = 0; k < heads_; ++k) {
      const float* g = grad_out.row(v) + k * head_dim;
      // d(loss)/d(alpha) per edge, and the softmax's weighted sum of them.
      grad_attention.assign(static_cast<std::size_t>(edges.degree + 1), 0.0f);
      float weighted = 0.0f;
      for (std::int64_t i = 0; i <= edges.degree; ++i) {
        const std::int64_t u = edges.source(i);
        const float a = attention_[static_cast<std::size_t>((edges.first + i) * heads_ + k)];
        const float d = dot(g, z_.row(u) + k * head_dim, head_dim);
        grad_attention[static_cast<std::size_t>(i)] = d;
        weighted += a * d;
        float* target = grad_z_.row(u) + k * head_dim;
        for (std::int64_t c = 0; c < head_dim; ++c) target[c] += a * g[c];
      }
      for (std::int64_t i = 0; i <= edges.degree; ++i) {
        const auto slot = static_cast<std::size_t>((edges.first + i) * heads_ + k);
        const float grad_score = attention_[slot] *
                                 (grad_attention[static_cast<std::size_t>(i)] - weighted) *
                                 (pre_leaky_[slot] > 0.0f ? 1.0f : kLeakySlope);
        score_grads(num_src + v, k) += grad_score;
        score_grads(edges.source(i), k) += grad_score;
      }
    }
  }
  return score_grads;
}

Matrix GatLayer::backward_from_sync(const Matrix& score_grads, bool want_input_grad) {
  if (grad_z_.rows() != z_.rows())
    throw Error("GatLayer: the backward's second step before its first");
  const std::int64_t width = z_.cols();
  const std::int64_t head_dim = width / heads_;
  const std::int64_t num_src = block_->num_src();
  const std::int64_t num_dst = block_->num_dst;
  check_synced(score_grads, "score gradients");
  // The scores are a_src . z_u and a_dst . z_v: their gradients reach the attention vectors and z.
  for (std::int64_t u = 0; u < num_src; ++u) {
    for (int k = 0; k < heads_; ++k) {
      const float* z = z_.row(u) + k * head_dim;
      float* target = grad_z_.row(u) + k * head_dim;
      const float from_src = score_grads(u, k);
      const float from_dst = u < num_dst ? score_grads(num_src + u, k) : 0.0f;
      const float* a_src = attention_src_.value.row(k);
      const float* a_dst = attention_dst_.value.row(k);
      float* grad_a_src = attention_src_.grad.row(k);
      float* grad_a_dst = attention_dst_.grad.row(k);
      for (std::int64_t c = 0; c < head_dim; ++c) {
        grad_a_src[c] += from_src * z[c];
        grad_a_dst[c] += from_dst * z[c];
        target[c] += from_src * a_src[c] + from_dst * a_dst[c];
      }
    }
  }
  backend_.gemm(*h_src_, true, grad_z_, false, weight_.grad, 1.0f, 1.0f);
  Matrix grad_input;
  if (want_input_grad) backend_.gemm(grad_z_, false, weight_.value, true, grad_input);
  grad_z_.reset(0, width);
  return grad_input;
}

}  // namespace gnnbed
