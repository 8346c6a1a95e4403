#pragma once
// One interface over the compute kernels that layers, optimisers and the plan executor run, with
// a CPU implementation (the cpu:: kernels) and, in builds with CUDA, a CUDA one
// (exec/cuda/cuda_backend.hpp). Following DGL's convention, callers name the operation and the
// backend decides where it runs, so a CPU-only build needs no CUDA and tests run the same body on
// both.
//
// Operands are Matrix objects on every backend. The CUDA backend works on their device copies
// (exec/tensor.hpp): it uploads an operand only when its host values are newer, and leaves
// results on the device, where the next kernel finds them and host code that reads them brings
// them back. Shapes are checked as the cpu:: kernels check them; a mismatch throws gnnbed::Error.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "exec/kernels/cpu_gat.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/tensor.hpp"

namespace gnnbed {

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  // "cpu", or "cuda:<device> (<device name>)".
  virtual std::string name() const = 0;
  // True when kernels run on a GPU (then `synchronize` matters for timing).
  virtual bool is_gpu() const = 0;

  // The operations of exec/kernels/cpu_kernels.hpp, same contracts.
  virtual void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c,
                    float alpha = 1.0f, float beta = 0.0f) = 0;
  virtual void spmm(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) = 0;
  // y = transpose(a) x: spmm(a.transposed(), x, y), bit for bit (a backward pass's aggregation).
  virtual void spmm_transposed(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) = 0;
  // spmm and spmm_transposed on sparse input rows read in place (the feature store's arrays, or
  // dropout's values over them), their columns increasing within each row. The CPU backend reads
  // the view and builds no transpose (cpu::spmm_transposed_sorted); by default the rows are
  // copied into a SparseMatrix for the two above.
  virtual void spmm_rows(cpu::SparseMatrixView x, const Matrix& w, Matrix& y);
  virtual void spmm_rows_transposed(cpu::SparseMatrixView x, const Matrix& g, Matrix& y);
  // spmm and spmm_transposed by a block's aggregation held without stored weights. The CPU
  // backend reads the block in place (cpu::aggregate, cpu::aggregate_transposed); by default the
  // weights are materialized for the two above: the same bits either way.
  virtual void aggregate(const cpu::ScaledAdjacency& a, const Matrix& x, Matrix& y);
  virtual void aggregate_transposed(const cpu::ScaledAdjacency& a, const Matrix& x, Matrix& y);
  virtual void add_row_vector(Matrix& y, const Matrix& bias) = 0;
  virtual void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) = 0;
  virtual void scale(Matrix& x, float factor) = 0;
  virtual void add_in_place(Matrix& y, const Matrix& x) = 0;
  // y's first x.rows() rows += x (y at least as tall, equally wide): a block's destination nodes
  // are the first rows of its source side.
  virtual void add_to_first_rows(Matrix& y, const Matrix& x) = 0;
  virtual void relu_forward(Matrix& x) = 0;
  virtual void relu_backward(const Matrix& output, Matrix& grad) = 0;
  virtual void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                               std::uint64_t key, std::int64_t column_offset = 0) = 0;
  virtual void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                                std::uint64_t key, std::int64_t column_offset = 0) = 0;
  virtual double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                                       Matrix& grad, std::int64_t& correct) = 0;

  // GAT's attention (exec/kernels/cpu_gat.hpp, same contracts), so that on a GPU it runs beside
  // the layer's products instead of bringing z to the host and its gradient back.
  virtual void gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst,
                          std::int64_t num_dst, Matrix& scores) = 0;
  virtual void gat_attention(const cpu::AttentionEdges& edges, const Matrix& scores,
                             const Matrix& z, Matrix& attention, Matrix& pre_leaky,
                             Matrix& out) = 0;
  virtual void gat_attention_backward(const cpu::AttentionEdges& edges, const Matrix& grad_out,
                                      const Matrix& z, const Matrix& attention,
                                      const Matrix& pre_leaky, Matrix& grad_z,
                                      Matrix& score_grads) = 0;
  virtual void gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                                   const Matrix& a_dst, std::int64_t num_dst, Matrix& grad_z,
                                   Matrix& grad_a_src, Matrix& grad_a_dst) = 0;

  // Optimiser updates of one parameter (all the same size):
  // SGD with momentum: velocity = momentum * velocity + grad; value -= learning_rate * velocity.
  virtual void sgd_step(Matrix& value, const Matrix& grad, Matrix& velocity, float learning_rate,
                        float momentum) = 0;
  // Adam: first/second moments updated from grad, value moved by step_size * m / (sqrt(v /
  // correction2) + epsilon), in double precision per entry.
  virtual void adam_step(Matrix& value, const Matrix& grad, Matrix& first_moment,
                         Matrix& second_moment, const AdamStep& step) = 0;

  // out = columns [column_begin, column_end) of source's rows `rows` (each checked against
  // source's rows). On a GPU both stay there: a feature table held on the device (below) gives
  // mini-batch inputs without crossing PCIe.
  virtual void gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                           std::int64_t column_begin, std::int64_t column_end, Matrix& out) = 0;
  // Whether a table of `bytes` of feature rows should live on this backend's device, so that
  // mini-batch inputs are gathered there: never on the CPU; on a GPU when allowed (the default;
  // run_experiment --device-features host forbids it) and it takes at most half of the device's
  // free memory.
  virtual bool holds_feature_table(std::int64_t bytes) const = 0;
  void allow_feature_tables(bool allowed) { feature_tables_allowed_ = allowed; }

  // Mini-batch inputs. use_transfer_memory gives `m` host memory from which copies to the device
  // are DMA (page-locked), for a matrix the host writes every iteration (gathered features);
  // copy_to_device uploads `m` now if its host values are newer (the plans' copy_to_device op),
  // so that the copy is timed as a copy and not inside the first kernel that reads `m`. Both are
  // no-ops on the CPU.
  virtual void use_transfer_memory(Matrix& m) = 0;
  virtual void copy_to_device(const Matrix& m) = 0;

  // Waits until every queued kernel has finished (a no-op on the CPU), so that an op's measured
  // time includes its kernels.
  virtual void synchronize() = 0;

 protected:
  bool feature_tables_allowed() const { return feature_tables_allowed_; }

 private:
  bool feature_tables_allowed_ = true;
};

// The CPU backend: stateless, shared by every caller in the process.
ComputeBackend& cpu_backend();
// A CPU backend of one's own (for code that owns whichever backend it chose).
std::unique_ptr<ComputeBackend> make_cpu_backend();

}  // namespace gnnbed
