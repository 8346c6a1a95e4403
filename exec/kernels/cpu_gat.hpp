#pragma once
// GAT's attention (exec/nn/gat_layer.hpp) as kernels, so that it runs where the layer's products
// run: the CPU's here, the GPU's in exec/cuda. Per head k, with z = h W (the head's columns of
// it), for destination v and each of its sources u (its in-edges, then itself):
//   pre_vu = score_dst(v, k) + score_src(u, k),  e_vu = LeakyReLU_0.2(pre_vu),
//   alpha_vu = softmax over u of e_vu,  out_v = sum_u alpha_vu z_u.
// Scores are [source rows (num_src); destination rows (num_dst)] x heads; the attention and the
// sums before LeakyReLU have a row per edge slot (AttentionEdges) and a column per head.
#include <cstdint>
#include <vector>

#include "exec/tensor.hpp"

namespace gnnbed::cpu {

// The edges attention runs over, destination by destination: row v's slots are its sources in
// the block's order, then v itself (the self loop; destinations are the first sources).
struct AttentionEdges {
  std::int64_t num_dst = 0;
  std::int64_t num_src = 0;
  std::vector<std::int64_t> offsets{0};  // num_dst + 1
  std::vector<std::int32_t> sources;     // per slot

  std::int64_t num_slots() const { return static_cast<std::int64_t>(sources.size()); }
};

// The slots grouped by source, each group in slot order (the order in which the CPU's backward
// adds a source's terms), and each slot's destination: for kernels that sum per source.
struct SlotsBySource {
  std::vector<std::int64_t> offsets;            // num_src + 1
  std::vector<std::int64_t> slots;              // grouped by source
  std::vector<std::int32_t> slot_destinations;  // per slot
};
SlotsBySource slots_by_source(const AttentionEdges& edges);

// Check every shape the kernels below rely on (Error naming the kernel and the operand), for
// every backend that runs them.
void check_attention(const AttentionEdges& edges, const Matrix& z, std::int64_t heads,
                     const char* what);
void check_gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst,
                      std::int64_t num_dst);
void check_gat_attention(const AttentionEdges& edges, const Matrix& scores, const Matrix& z);
void check_gat_attention_backward(const AttentionEdges& edges, const Matrix& grad_out,
                                  const Matrix& z, const Matrix& attention,
                                  const Matrix& pre_leaky);
void check_gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                               const Matrix& a_dst, std::int64_t num_dst, const Matrix& grad_z,
                               const Matrix& grad_a_src, const Matrix& grad_a_dst);

// scores (num_src + num_dst) x heads: a_src[k] . z_u for every source, then a_dst[k] . z_v for
// every destination (the first num_dst rows of z). a_src, a_dst are heads x head width.
void gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst, std::int64_t num_dst,
                Matrix& scores);
// The softmax over each destination's slots and the weighted sum: attention and pre_leaky become
// num_slots x heads, out num_dst x width.
void gat_attention(const AttentionEdges& edges, const Matrix& scores, const Matrix& z,
                   Matrix& attention, Matrix& pre_leaky, Matrix& out);
// From d(loss)/d(out): grad_z (num_src x width) = the part through the weighted sum, and the
// scores' gradients (scores' shape).
void gat_attention_backward(const AttentionEdges& edges, const Matrix& grad_out, const Matrix& z,
                            const Matrix& attention, const Matrix& pre_leaky, Matrix& grad_z,
                            Matrix& score_grads);
// The scores' gradients reach z (grad_z +=) and the attention vectors (grad_a_src, grad_a_dst +=,
// summed over sources in row order).
void gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                         const Matrix& a_dst, std::int64_t num_dst, Matrix& grad_z,
                         Matrix& grad_a_src, Matrix& grad_a_dst);

}  // namespace gnnbed::cpu
