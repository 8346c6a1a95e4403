#include "exec/kernels/cpu_gat.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed::cpu {
namespace {

constexpr float kLeakySlope = 0.2f;  // the GAT paper's negative slope

float dot(const float* a, const float* b, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

std::string shape(const Matrix& m) {
  return std::to_string(m.rows()) + " x " + std::to_string(m.cols());
}

void require_shape(const Matrix& m, std::int64_t rows, std::int64_t cols, const char* what,
                   const char* name) {
  if (m.rows() != rows || m.cols() != cols) {
    throw Error(std::string(what) + ": " + name + " is " + shape(m) + ", expected " +
                std::to_string(rows) + " x " + std::to_string(cols));
  }
}

}  // namespace

SlotsBySource slots_by_source(const AttentionEdges& edges) {
  SlotsBySource grouped;
  grouped.offsets.assign(static_cast<std::size_t>(edges.num_src) + 1, 0);
  for (const std::int32_t u : edges.sources) ++grouped.offsets[static_cast<std::size_t>(u) + 1];
  for (std::size_t u = 1; u < grouped.offsets.size(); ++u) {
    grouped.offsets[u] += grouped.offsets[u - 1];
  }
  grouped.slots.resize(edges.sources.size());
  grouped.slot_destinations.resize(edges.sources.size());
  for (std::int64_t v = 0; v < edges.num_dst; ++v) {
    for (auto s = edges.offsets[static_cast<std::size_t>(v)];
         s < edges.offsets[static_cast<std::size_t>(v) + 1]; ++s) {
      grouped.slot_destinations[static_cast<std::size_t>(s)] = static_cast<std::int32_t>(v);
    }
  }
  std::vector<std::int64_t> cursor(grouped.offsets.begin(), grouped.offsets.end() - 1);
  for (std::size_t slot = 0; slot < edges.sources.size(); ++slot) {
    const auto u = static_cast<std::size_t>(edges.sources[slot]);
    grouped.slots[static_cast<std::size_t>(cursor[u]++)] = static_cast<std::int64_t>(slot);
  }
  return grouped;
}

void check_attention(const AttentionEdges& edges, const Matrix& z, std::int64_t heads,
                     const char* what) {
  if (heads < 1 || z.cols() % heads != 0 || z.rows() != edges.num_src ||
      edges.num_dst > edges.num_src ||
      static_cast<std::int64_t>(edges.offsets.size()) != edges.num_dst + 1 ||
      edges.offsets.back() != edges.num_slots()) {
    throw Error(std::string(what) + ": z is " + shape(z) + " for " + std::to_string(heads) +
                " heads over " + std::to_string(edges.num_src) + " sources, " +
                std::to_string(edges.num_dst) + " destinations and " +
                std::to_string(edges.num_slots()) + " edge slots");
  }
}

void check_gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst,
                      std::int64_t num_dst) {
  const std::int64_t heads = a_src.rows();
  if (heads < 1 || z.cols() != heads * a_src.cols() || num_dst < 0 || num_dst > z.rows()) {
    throw Error("gat_scores: z is " + shape(z) + " for attention vectors " + shape(a_src) +
                " and " + std::to_string(num_dst) + " destinations");
  }
  require_shape(a_dst, heads, a_src.cols(), "gat_scores", "a_dst");
}

void check_gat_attention(const AttentionEdges& edges, const Matrix& scores, const Matrix& z) {
  const std::int64_t heads = scores.cols();
  check_attention(edges, z, heads, "gat_attention");
  require_shape(scores, edges.num_src + edges.num_dst, heads, "gat_attention", "scores");
}

void check_gat_attention_backward(const AttentionEdges& edges, const Matrix& grad_out,
                                  const Matrix& z, const Matrix& attention,
                                  const Matrix& pre_leaky) {
  const std::int64_t heads = attention.cols();
  check_attention(edges, z, heads, "gat_attention_backward");
  require_shape(grad_out, edges.num_dst, z.cols(), "gat_attention_backward", "grad_out");
  require_shape(attention, edges.num_slots(), heads, "gat_attention_backward", "attention");
  require_shape(pre_leaky, edges.num_slots(), heads, "gat_attention_backward", "pre_leaky");
}

void check_gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                               const Matrix& a_dst, std::int64_t num_dst, const Matrix& grad_z,
                               const Matrix& grad_a_src, const Matrix& grad_a_dst) {
  const std::int64_t heads = a_src.rows();
  const std::int64_t head_dim = a_src.cols();
  if (heads < 1 || z.cols() != heads * head_dim || num_dst < 0 || num_dst > z.rows()) {
    throw Error("gat_scores_backward: z is " + shape(z) + " for attention vectors " + shape(a_src) +
                " and " + std::to_string(num_dst) + " destinations");
  }
  require_shape(score_grads, z.rows() + num_dst, heads, "gat_scores_backward", "score_grads");
  require_shape(grad_z, z.rows(), z.cols(), "gat_scores_backward", "grad_z");
  require_shape(a_dst, heads, head_dim, "gat_scores_backward", "a_dst");
  require_shape(grad_a_src, heads, head_dim, "gat_scores_backward", "grad_a_src");
  require_shape(grad_a_dst, heads, head_dim, "gat_scores_backward", "grad_a_dst");
}

void gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst, std::int64_t num_dst,
                Matrix& scores) {
  check_gat_scores(z, a_src, a_dst, num_dst);
  const std::int64_t heads = a_src.rows();
  const std::int64_t head_dim = a_src.cols();
  const std::int64_t num_src = z.rows();
  scores.reset(num_src + num_dst, heads);
  float* out = scores.values().data();
  const float* src = a_src.values().data();
  const float* dst = a_dst.values().data();
  for (std::int64_t u = 0; u < num_src; ++u) {
    for (std::int64_t k = 0; k < heads; ++k) {
      const float* z_u = z.row(u) + k * head_dim;
      out[u * heads + k] = dot(z_u, src + k * head_dim, head_dim);
      if (u < num_dst) out[(num_src + u) * heads + k] = dot(z_u, dst + k * head_dim, head_dim);
    }
  }
}

void gat_attention(const AttentionEdges& edges, const Matrix& scores, const Matrix& z,
                   Matrix& attention, Matrix& pre_leaky, Matrix& out) {
  check_gat_attention(edges, scores, z);
  const std::int64_t heads = scores.cols();
  const std::int64_t head_dim = z.cols() / heads;
  attention.reset(edges.num_slots(), heads);
  pre_leaky.reset(edges.num_slots(), heads);
  out.reset(edges.num_dst, z.cols());
  const float* score = scores.values().data();
  float* alpha = attention.values().data();
  float* pre_sum = pre_leaky.values().data();
  for (std::int64_t v = 0; v < edges.num_dst; ++v) {
    const std::int64_t begin = edges.offsets[static_cast<std::size_t>(v)];
    const std::int64_t end = edges.offsets[static_cast<std::size_t>(v) + 1];
    for (std::int64_t k = 0; k < heads; ++k) {
      float largest = -INFINITY;
      for (std::int64_t s = begin; s < end; ++s) {
        const std::int64_t u = edges.sources[static_cast<std::size_t>(s)];
        const float pre = score[(edges.num_src + v) * heads + k] + score[u * heads + k];
        pre_sum[s * heads + k] = pre;
        alpha[s * heads + k] = pre > 0.0f ? pre : kLeakySlope * pre;
        largest = std::max(largest, alpha[s * heads + k]);
      }
      float total = 0.0f;
      for (std::int64_t s = begin; s < end; ++s) {
        alpha[s * heads + k] = std::exp(alpha[s * heads + k] - largest);
        total += alpha[s * heads + k];
      }
      float* target = out.row(v) + k * head_dim;
      for (std::int64_t s = begin; s < end; ++s) {
        alpha[s * heads + k] /= total;
        const float a = alpha[s * heads + k];
        const float* z_u = z.row(edges.sources[static_cast<std::size_t>(s)]) + k * head_dim;
        for (std::int64_t c = 0; c < head_dim; ++c) target[c] += a * z_u[c];
      }
    }
  }
}

void gat_attention_backward(const AttentionEdges& edges, const Matrix& grad_out, const Matrix& z,
                            const Matrix& attention, const Matrix& pre_leaky, Matrix& grad_z,
                            Matrix& score_grads) {
  check_gat_attention_backward(edges, grad_out, z, attention, pre_leaky);
  const std::int64_t heads = attention.cols();
  const std::int64_t head_dim = z.cols() / heads;
  grad_z.reset(edges.num_src, z.cols());
  score_grads.reset(edges.num_src + edges.num_dst, heads);
  const float* alpha = attention.values().data();
  const float* pre_sum = pre_leaky.values().data();
  float* grads = score_grads.values().data();
  for (std::int64_t v = 0; v < edges.num_dst; ++v) {
    const std::int64_t begin = edges.offsets[static_cast<std::size_t>(v)];
    const std::int64_t end = edges.offsets[static_cast<std::size_t>(v) + 1];
    for (std::int64_t k = 0; k < heads; ++k) {
      const float* g = grad_out.row(v) + k * head_dim;
      // d(loss)/d(alpha) per slot is g . z_u; the softmax's backward needs their weighted sum.
      float weighted = 0.0f;
      for (std::int64_t s = begin; s < end; ++s) {
        const std::int64_t u = edges.sources[static_cast<std::size_t>(s)];
        const float a = alpha[s * heads + k];
        weighted += a * dot(g, z.row(u) + k * head_dim, head_dim);
        float* target = grad_z.row(u) + k * head_dim;
        for (std::int64_t c = 0; c < head_dim; ++c) target[c] += a * g[c];
      }
      for (std::int64_t s = begin; s < end; ++s) {
        const std::int64_t u = edges.sources[static_cast<std::size_t>(s)];
        const float d = dot(g, z.row(u) + k * head_dim, head_dim);
        const float grad_score = alpha[s * heads + k] * (d - weighted) *
                                 (pre_sum[s * heads + k] > 0.0f ? 1.0f : kLeakySlope);
        grads[(edges.num_src + v) * heads + k] += grad_score;
        grads[u * heads + k] += grad_score;
      }
    }
  }
}

void gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                         const Matrix& a_dst, std::int64_t num_dst, Matrix& grad_z,
                         Matrix& grad_a_src, Matrix& grad_a_dst) {
  check_gat_scores_backward(z, score_grads, a_src, a_dst, num_dst, grad_z, grad_a_src, grad_a_dst);
  const std::int64_t heads = a_src.rows();
  const std::int64_t head_dim = a_src.cols();
  const std::int64_t num_src = z.rows();
  const float* grads = score_grads.values().data();
  for (std::int64_t u = 0; u < num_src; ++u) {
    for (std::int64_t k = 0; k < heads; ++k) {
      const float* z_u = z.row(u) + k * head_dim;
      float* target = grad_z.row(u) + k * head_dim;
      const float from_src = grads[u * heads + k];
      const float from_dst = u < num_dst ? grads[(num_src + u) * heads + k] : 0.0f;
      const float* src = a_src.row(k);
      const float* dst = a_dst.row(k);
      float* grad_src = grad_a_src.row(k);
      float* grad_dst = grad_a_dst.row(k);
      for (std::int64_t c = 0; c < head_dim; ++c) {
        grad_src[c] += from_src * z_u[c];
        grad_dst[c] += from_dst * z_u[c];
        target[c] += from_src * src[c] + from_dst * dst[c];
      }
    }
  }
}

}  // namespace gnnbed::cpu
