#include "exec/cuda/cuda_gat.cuh"
#include "exec/cuda/cuda_grid.cuh"

namespace gnnbed::cuda {
namespace {

constexpr float kLeakySlope = 0.2f;  // the GAT paper's negative slope, as the CPU's

__device__ float dot(const float* a, const float* b, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

__global__ void scores_kernel(const float* z, const float* a_src, const float* a_dst,
                              std::int64_t num_src, std::int64_t num_dst, std::int64_t heads,
                              std::int64_t head_dim, float* scores) {
  for (std::int64_t i = first_index(); i < num_src * heads; i += stride()) {
    const std::int64_t u = i / heads;
    const std::int64_t k = i % heads;
    const float* z_u = z + u * heads * head_dim + k * head_dim;
    scores[i] = dot(z_u, a_src + k * head_dim, head_dim);
    if (u < num_dst) scores[(num_src + u) * heads + k] = dot(z_u, a_dst + k * head_dim, head_dim);
  }
}

// One thread per (destination, head).
__global__ void softmax_kernel(AttentionEdgesOnDevice edges, const float* scores,
                               std::int64_t heads, float* attention, float* pre_leaky) {
  for (std::int64_t i = first_index(); i < edges.num_dst * heads; i += stride()) {
    const std::int64_t v = i / heads;
    const std::int64_t k = i % heads;
    const std::int64_t begin = edges.offsets[v];
    const std::int64_t end = edges.offsets[v + 1];
    float largest = -INFINITY;
    for (std::int64_t s = begin; s < end; ++s) {
      const float pre =
          scores[(edges.num_src + v) * heads + k] + scores[edges.sources[s] * heads + k];
      pre_leaky[s * heads + k] = pre;
      const float leaky = pre > 0.0f ? pre : kLeakySlope * pre;
      attention[s * heads + k] = leaky;
      largest = fmaxf(largest, leaky);
    }
    float total = 0.0f;
    for (std::int64_t s = begin; s < end; ++s) {
      const float e = expf(attention[s * heads + k] - largest);
      attention[s * heads + k] = e;
      total += e;
    }
    for (std::int64_t s = begin; s < end; ++s) attention[s * heads + k] /= total;
  }
}

// One thread per output entry: its destination's slots in order.
__global__ void aggregate_kernel(AttentionEdgesOnDevice edges, const float* attention,
                                 const float* z, std::int64_t heads, std::int64_t head_dim,
                                 float* out) {
  const std::int64_t width = heads * head_dim;
  for (std::int64_t i = first_index(); i < edges.num_dst * width; i += stride()) {
    const std::int64_t v = i / width;
    const std::int64_t column = i % width;
    const std::int64_t k = column / head_dim;
    float sum = 0.0f;
    for (std::int64_t s = edges.offsets[v]; s < edges.offsets[v + 1]; ++s) {
      sum += attention[s * heads + k] * z[edges.sources[s] * width + column];
    }
    out[i] = sum;
  }
}

// One thread per (destination, head): the scores' gradient of each slot (edge_grads) and their
// sum, the destination row's score gradient.
__global__ void edge_grads_kernel(AttentionEdgesOnDevice edges, const float* grad_out,
                                  const float* z, const float* attention, const float* pre_leaky,
                                  std::int64_t heads, std::int64_t head_dim, float* edge_grads,
                                  float* score_grads) {
  const std::int64_t width = heads * head_dim;
  for (std::int64_t i = first_index(); i < edges.num_dst * heads; i += stride()) {
    const std::int64_t v = i / heads;
    const std::int64_t k = i % heads;
    const float* g = grad_out + v * width + k * head_dim;
    const std::int64_t begin = edges.offsets[v];
    const std::int64_t end = edges.offsets[v + 1];
    float weighted = 0.0f;
    for (std::int64_t s = begin; s < end; ++s) {
      const float* z_u = z + edges.sources[s] * width + k * head_dim;
      weighted += attention[s * heads + k] * dot(g, z_u, head_dim);
    }
    float destination_sum = 0.0f;
    for (std::int64_t s = begin; s < end; ++s) {
      const float d = dot(g, z + edges.sources[s] * width + k * head_dim, head_dim);
      const float grad_score = attention[s * heads + k] * (d - weighted) *
                               (pre_leaky[s * heads + k] > 0.0f ? 1.0f : kLeakySlope);
      edge_grads[s * heads + k] = grad_score;
      destination_sum += grad_score;
    }
    score_grads[(edges.num_src + v) * heads + k] = destination_sum;
  }
}

// One thread per entry of grad_z: its source's slots in slot order; the thread of each head's
// first column also sums the source row's score gradient.
__global__ void source_grads_kernel(AttentionEdgesOnDevice edges, const float* grad_out,
                                    const float* attention, const float* edge_grads,
                                    std::int64_t heads, std::int64_t head_dim, float* grad_z,
                                    float* score_grads) {
  const std::int64_t width = heads * head_dim;
  for (std::int64_t i = first_index(); i < edges.num_src * width; i += stride()) {
    const std::int64_t u = i / width;
    const std::int64_t column = i % width;
    const std::int64_t k = column / head_dim;
    const bool sums_scores = column % head_dim == 0;
    float sum = 0.0f;
    float score_sum = 0.0f;
    for (std::int64_t j = edges.source_offsets[u]; j < edges.source_offsets[u + 1]; ++j) {
      const std::int64_t s = edges.source_slots[j];
      sum += attention[s * heads + k] * grad_out[edges.slot_destinations[s] * width + column];
      if (sums_scores) score_sum += edge_grads[s * heads + k];
    }
    grad_z[i] = sum;
    if (sums_scores) score_grads[u * heads + k] = score_sum;
  }
}

__global__ void scores_backward_z_kernel(const float* score_grads, const float* a_src,
                                         const float* a_dst, std::int64_t num_src,
                                         std::int64_t num_dst, std::int64_t heads,
                                         std::int64_t head_dim, float* grad_z) {
  const std::int64_t width = heads * head_dim;
  for (std::int64_t i = first_index(); i < num_src * width; i += stride()) {
    const std::int64_t u = i / width;
    const std::int64_t k = (i % width) / head_dim;
    const std::int64_t c = i % head_dim;
    const float from_src = score_grads[u * heads + k];
    const float from_dst = u < num_dst ? score_grads[(num_src + u) * heads + k] : 0.0f;
    grad_z[i] += from_src * a_src[k * head_dim + c] + from_dst * a_dst[k * head_dim + c];
  }
}

// One thread per attention-vector entry, over the sources in row order (as the CPU adds them).
__global__ void attention_vector_grads_kernel(const float* z, const float* score_grads,
                                              std::int64_t num_src, std::int64_t num_dst,
                                              std::int64_t heads, std::int64_t head_dim,
                                              float* grad_a_src, float* grad_a_dst) {
  const std::int64_t width = heads * head_dim;
  for (std::int64_t i = first_index(); i < heads * head_dim; i += stride()) {
    const std::int64_t k = i / head_dim;
    float from_src_sum = grad_a_src[i];
    float from_dst_sum = grad_a_dst[i];
    for (std::int64_t u = 0; u < num_src; ++u) {
      const float z_uc = z[u * width + i];
      const float from_dst = u < num_dst ? score_grads[(num_src + u) * heads + k] : 0.0f;
      from_src_sum += score_grads[u * heads + k] * z_uc;
      from_dst_sum += from_dst * z_uc;
    }
    grad_a_src[i] = from_src_sum;
    grad_a_dst[i] = from_dst_sum;
  }
}

}  // namespace

void gat_scores(const float* z, const float* a_src, const float* a_dst, std::int64_t num_src,
                std::int64_t num_dst, std::int64_t heads, std::int64_t head_dim, float* scores,
                cudaStream_t stream) {
  if (num_src * heads == 0) return;
  scores_kernel<<<blocks_for(num_src * heads), kThreads, 0, stream>>>(
      z, a_src, a_dst, num_src, num_dst, heads, head_dim, scores);
}

void gat_attention(const AttentionEdgesOnDevice& edges, const float* scores, const float* z,
                   std::int64_t heads, std::int64_t head_dim, float* attention, float* pre_leaky,
                   float* out, cudaStream_t stream) {
  if (edges.num_dst == 0) return;
  softmax_kernel<<<blocks_for(edges.num_dst * heads), kThreads, 0, stream>>>(edges, scores, heads,
                                                                             attention, pre_leaky);
  aggregate_kernel<<<blocks_for(edges.num_dst * heads * head_dim), kThreads, 0, stream>>>(
      edges, attention, z, heads, head_dim, out);
}

void gat_attention_backward(const AttentionEdgesOnDevice& edges, const float* grad_out,
                            const float* z, const float* attention, const float* pre_leaky,
                            std::int64_t heads, std::int64_t head_dim, float* edge_grads,
                            float* grad_z, float* score_grads, cudaStream_t stream) {
  if (edges.num_dst > 0) {
    edge_grads_kernel<<<blocks_for(edges.num_dst * heads), kThreads, 0, stream>>>(
        edges, grad_out, z, attention, pre_leaky, heads, head_dim, edge_grads, score_grads);
  }
  if (edges.num_src > 0) {
    source_grads_kernel<<<blocks_for(edges.num_src * heads * head_dim), kThreads, 0, stream>>>(
        edges, grad_out, attention, edge_grads, heads, head_dim, grad_z, score_grads);
  }
}

void gat_scores_backward(const float* z, const float* score_grads, const float* a_src,
                         const float* a_dst, std::int64_t num_src, std::int64_t num_dst,
                         std::int64_t heads, std::int64_t head_dim, float* grad_z,
                         float* grad_a_src, float* grad_a_dst, cudaStream_t stream) {
  if (num_src == 0) return;
  scores_backward_z_kernel<<<blocks_for(num_src * heads * head_dim), kThreads, 0, stream>>>(
      score_grads, a_src, a_dst, num_src, num_dst, heads, head_dim, grad_z);
  attention_vector_grads_kernel<<<blocks_for(heads * head_dim), kThreads, 0, stream>>>(
      z, score_grads, num_src, num_dst, heads, head_dim, grad_a_src, grad_a_dst);
}

}  // namespace gnnbed::cuda
