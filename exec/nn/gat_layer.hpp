#pragma once
// GAT's layer (Velickovic et al., ICLR 2018; ModelKind::gat): `heads` attention heads over a
// block's in-edges plus each destination's self loop. Per head k, with z = h W (the head's
// columns of it):
//   e_vu = LeakyReLU_0.2(a_dst_k . z_v + a_src_k . z_u),  alpha_vu = softmax over u of e_vu,
//   out_v = sum_u alpha_vu z_u (+ b),
// heads side by side. The weight product and the attention (exec/kernels/cpu_gat.hpp) run on the
// backend, so that on a GPU the layer's tensors stay there.
//
// Split by input columns (P3), z = sum over slices of h_s W_s, so the scores a . z are sums of
// partial scores, and given the coefficients alpha the output is a sum of partial aggregations;
// backward, the coefficients' gradients g_v . z_u are sums too, and the softmax and LeakyReLU
// backward are linear in them given alpha. So the layer syncs at the scores (SyncedLayer): the
// forward's first step gives the scores, [source scores (num_src rows); destination scores
// (num_dst rows)] x heads; the backward's first step gives the scores' gradients, same shape.
#include "exec/nn/layers.hpp"

namespace gnnbed {

class GatLayer final : public GnnLayer, public SyncedLayer {
 public:
  // `bias` may be null (a partial layer). `heads` divides the weight's columns.
  GatLayer(int heads, Parameter& weight, Parameter& attention_src, Parameter& attention_dst,
           Parameter* bias, ComputeBackend& backend);
  Matrix forward(const Block& block, const Matrix& h_src) override;
  Matrix backward(const Matrix& grad_out, bool want_input_grad) override;

  Matrix forward_to_sync(const Block& block, const Matrix& h_src) override;
  Matrix forward_from_sync(const Matrix& scores) override;
  Matrix backward_to_sync(const Matrix& grad_out) override;
  Matrix backward_from_sync(const Matrix& score_grads, bool want_input_grad) override;

 private:
  // Error unless `synced` (scores or their gradients) has a row per source and destination and a
  // column per head.
  void check_synced(const Matrix& synced, const char* what) const;

  int heads_;
  Parameter& weight_;
  Parameter& attention_src_;
  Parameter& attention_dst_;
  Parameter* bias_;
  ComputeBackend& backend_;
  // Kept from step to step.
  const Matrix* h_src_ = nullptr;
  cpu::AttentionEdges edges_;  // the block's edges, each destination's self loop last
  Matrix z_;                   // num_src x (heads x head width)
  Matrix attention_;           // alpha, per edge slot and head
  Matrix pre_leaky_;           // the scores' sums before LeakyReLU, likewise
  Matrix grad_z_;              // the backward's part through the aggregation
};

}  // namespace gnnbed
