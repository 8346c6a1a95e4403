#pragma once
// One interface over the compute kernels that layers, optimisers and the plan executor run, with
// a CPU implementation (the cpu:: kernels) and, in builds with CUDA, a CUDA one
// (exec/cuda/cuda_backend.hpp). Following DGL's convention, callers name the operation and the
// backend decides where it runs, so a CPU-only build needs no CUDA and tests run the same body on
// both.
//
// Operands are host matrices (exec/tensor.hpp) on every backend: see docs/gpu.md for why, and for
// what the CUDA backend does with them. Results are in their host matrices when a call returns.
// Shapes are checked as the cpu:: kernels check them; a mismatch throws gnnbed::Error.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

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
  virtual void add_row_vector(Matrix& y, const Matrix& bias) = 0;
  virtual void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) = 0;
  virtual void scale(Matrix& x, float factor) = 0;
  virtual void add_in_place(Matrix& y, const Matrix& x) = 0;
  virtual void relu_forward(Matrix& x) = 0;
  virtual void relu_backward(const Matrix& output, Matrix& grad) = 0;
  virtual void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                               std::uint64_t key, std::int64_t column_offset = 0) = 0;
  virtual void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                                std::uint64_t key, std::int64_t column_offset = 0) = 0;
  virtual double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                                       Matrix& grad, std::int64_t& correct) = 0;

  // Optimiser updates of one parameter (all spans the same length):
  // SGD with momentum: velocity = momentum * velocity + grad; value -= learning_rate * velocity.
  virtual void sgd_step(std::span<float> value, std::span<const float> grad,
                        std::span<float> velocity, float learning_rate, float momentum) = 0;
  // Adam: first/second moments updated from grad, value moved by step_size * m / (sqrt(v /
  // correction2) + epsilon), in double precision per entry.
  virtual void adam_step(std::span<float> value, std::span<const float> grad,
                         std::span<float> first_moment, std::span<float> second_moment,
                         const AdamStep& step) = 0;

  // Waits until every queued kernel has finished (a no-op on the CPU), so that an op's measured
  // time includes its kernels.
  virtual void synchronize() = 0;
};

// The CPU backend: stateless, shared by every caller in the process.
ComputeBackend& cpu_backend();
// A CPU backend of one's own (for code that owns whichever backend it chose).
std::unique_ptr<ComputeBackend> make_cpu_backend();

}  // namespace gnnbed
