#include "exec/kernels/compute_backend.hpp"

namespace gnnbed {
namespace {

class CpuBackend final : public ComputeBackend {
 public:
  std::string name() const override { return "cpu"; }
  bool is_gpu() const override { return false; }
  void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c, float alpha,
            float beta) override {
    cpu::gemm(a, transpose_a, b, transpose_b, c, alpha, beta);
  }
  void spmm(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) override { cpu::spmm(a, x, y); }
  void spmm_transposed(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) override {
    cpu::check_spmm_transposed(a, x);
    cpu::spmm(a.transposed(), x, y);
  }
  void spmm_rows(cpu::SparseMatrixView x, const Matrix& w, Matrix& y) override {
    cpu::spmm(x, w, y);
  }
  void spmm_rows_transposed(cpu::SparseMatrixView x, const Matrix& g, Matrix& y) override {
    cpu::spmm_transposed_sorted(x, g, y);
  }
  void aggregate(const cpu::ScaledAdjacency& a, const Matrix& x, Matrix& y) override {
    cpu::aggregate(a, x, y);
  }
  void aggregate_transposed(const cpu::ScaledAdjacency& a, const Matrix& x, Matrix& y) override {
    cpu::aggregate_transposed(a, x, y);
  }
  void add_row_vector(Matrix& y, const Matrix& bias) override { cpu::add_row_vector(y, bias); }
  void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) override {
    cpu::accumulate_column_sums(grad, bias_grad);
  }
  void scale(Matrix& x, float factor) override { cpu::scale(x, factor); }
  void add_in_place(Matrix& y, const Matrix& x) override { cpu::add_in_place(y, x); }
  void add_to_first_rows(Matrix& y, const Matrix& x) override { cpu::add_to_first_rows(y, x); }
  void relu_forward(Matrix& x) override { cpu::relu_forward(x); }
  void relu_backward(const Matrix& output, Matrix& grad) override {
    cpu::relu_backward(output, grad);
  }
  void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                       std::uint64_t key, std::int64_t column_offset) override {
    cpu::dropout_forward(x, row_ids, rate, key, column_offset);
  }
  void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                        std::uint64_t key, std::int64_t column_offset) override {
    cpu::dropout_backward(grad, row_ids, rate, key, column_offset);
  }
  double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                               Matrix& grad, std::int64_t& correct) override {
    return cpu::softmax_cross_entropy(logits, labels, grad, correct);
  }
  void gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst, std::int64_t num_dst,
                  Matrix& scores) override {
    cpu::gat_scores(z, a_src, a_dst, num_dst, scores);
  }
  void gat_attention(const cpu::AttentionEdges& edges, const Matrix& scores, const Matrix& z,
                     Matrix& attention, Matrix& pre_leaky, Matrix& out) override {
    cpu::gat_attention(edges, scores, z, attention, pre_leaky, out);
  }
  void gat_attention_backward(const cpu::AttentionEdges& edges, const Matrix& grad_out,
                              const Matrix& z, const Matrix& attention, const Matrix& pre_leaky,
                              Matrix& grad_z, Matrix& score_grads) override {
    cpu::gat_attention_backward(edges, grad_out, z, attention, pre_leaky, grad_z, score_grads);
  }
  void gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                           const Matrix& a_dst, std::int64_t num_dst, Matrix& grad_z,
                           Matrix& grad_a_src, Matrix& grad_a_dst) override {
    cpu::gat_scores_backward(z, score_grads, a_src, a_dst, num_dst, grad_z, grad_a_src, grad_a_dst);
  }
  void sgd_step(Matrix& value, const Matrix& grad, Matrix& velocity, float learning_rate,
                float momentum) override {
    cpu::sgd_step(value.values(), grad.values(), velocity.values(), learning_rate, momentum);
  }
  void adam_step(Matrix& value, const Matrix& grad, Matrix& first_moment, Matrix& second_moment,
                 const AdamStep& step) override {
    cpu::adam_step(value.values(), grad.values(), first_moment.values(), second_moment.values(),
                   step);
  }
  void gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                   std::int64_t column_begin, std::int64_t column_end, Matrix& out) override {
    cpu::gather_rows(source, rows, column_begin, column_end, out);
  }
  bool holds_feature_table(std::int64_t) const override { return false; }
  void use_transfer_memory(Matrix&) override {}
  void copy_to_device(const Matrix&) override {}
  void synchronize() override {}
};

}  // namespace

void ComputeBackend::spmm_rows(cpu::SparseMatrixView x, const Matrix& w, Matrix& y) {
  spmm(x.copy(), w, y);
}

void ComputeBackend::spmm_rows_transposed(cpu::SparseMatrixView x, const Matrix& g, Matrix& y) {
  spmm_transposed(x.copy(), g, y);
}

void ComputeBackend::aggregate(const cpu::ScaledAdjacency& a, const Matrix& x, Matrix& y) {
  spmm(a.materialized(), x, y);
}

void ComputeBackend::aggregate_transposed(const cpu::ScaledAdjacency& a, const Matrix& x,
                                          Matrix& y) {
  spmm_transposed(a.materialized(), x, y);
}

ComputeBackend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

std::unique_ptr<ComputeBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gnnbed
