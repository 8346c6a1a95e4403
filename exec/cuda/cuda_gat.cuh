#pragma once
// GAT's attention kernels behind CudaBackend's gat_* operations (exec/kernels/cpu_gat.hpp has
// the contracts). Like cuda_kernels.cuh: plain device pointers, work enqueued on `stream`,
// compiled with -fmad=false. Every sum runs in the CPU kernels' order, one thread per output:
// per destination over its slots; per source over its slots in slot order (the CPU's backward
// scatters in that order); per attention-vector entry over the sources in row order. So results
// differ from the CPU's only where expf does. Row-major matrices; width = heads x head_dim.
#include <cuda_runtime.h>

#include <cstdint>

namespace gnnbed::cuda {

// The edge slots of cpu::AttentionEdges on the device, and their grouping by source.
struct AttentionEdgesOnDevice {
  std::int64_t num_dst = 0;
  std::int64_t num_src = 0;
  const std::int64_t* offsets = nullptr;            // num_dst + 1
  const std::int32_t* sources = nullptr;            // per slot
  const std::int64_t* source_offsets = nullptr;     // num_src + 1
  const std::int64_t* source_slots = nullptr;       // slots grouped by source
  const std::int32_t* slot_destinations = nullptr;  // per slot
};

void gat_scores(const float* z, const float* a_src, const float* a_dst, std::int64_t num_src,
                std::int64_t num_dst, std::int64_t heads, std::int64_t head_dim, float* scores,
                cudaStream_t stream);
// Softmax over each destination's slots (attention, pre_leaky) and the weighted sum (out).
void gat_attention(const AttentionEdgesOnDevice& edges, const float* scores, const float* z,
                   std::int64_t heads, std::int64_t head_dim, float* attention, float* pre_leaky,
                   float* out, cudaStream_t stream);
// grad_z and score_grads from grad_out; edge_grads (num_slots x heads) is scratch.
void gat_attention_backward(const AttentionEdgesOnDevice& edges, const float* grad_out,
                            const float* z, const float* attention, const float* pre_leaky,
                            std::int64_t heads, std::int64_t head_dim, float* edge_grads,
                            float* grad_z, float* score_grads, cudaStream_t stream);
void gat_scores_backward(const float* z, const float* score_grads, const float* a_src,
                         const float* a_dst, std::int64_t num_src, std::int64_t num_dst,
                         std::int64_t heads, std::int64_t head_dim, float* grad_z,
                         float* grad_a_src, float* grad_a_dst, cudaStream_t stream);

}  // namespace gnnbed::cuda
