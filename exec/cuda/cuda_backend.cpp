#include "exec/cuda/cuda_backend.hpp"

#include <cublas_v2.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exec/cuda/cublas_check.hpp"
#include "exec/cuda/cuda_device.hpp"
#include "exec/cuda/cuda_kernels.cuh"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

using cuda::check_cublas;

// The device buffers one call uses; each keeps its allocation for the next call.
enum Slot : std::size_t {
  kFirst,   // a / x / logits / value
  kSecond,  // b / bias / grad / output
  kThird,   // c / y / labels / first moment
  kFourth,  // CSR offsets / row ids / second moment / per-row losses
  kFifth,   // CSR columns / hits
  kSixth,   // CSR weights
  kNumSlots
};

class CudaBackend final : public ComputeBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    description_ =
        "cuda:" + std::to_string(device_) + " (" + cuda::device_description(device_) + ")";
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cublas(cublasCreate(&cublas_), "cublasCreate");
    check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
    // Plain float32 arithmetic: TF32 tensor cores would change results beyond float32 tolerance.
    check_cublas(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  ~CudaBackend() override {
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cublasDestroy(cublas_));
    static_cast<void>(cudaStreamDestroy(stream_));
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return description_; }
  bool is_gpu() const override { return true; }

  void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c, float alpha,
            float beta) override {
    const auto [m, n, k] = cpu::gemm_shape(a, transpose_a, b, transpose_b, c, beta);
    if (m == 0 || n == 0) return;
    if (k == 0) {
      if (beta == 0.0f) c.fill(0.0f);
      return;
    }
    // cuBLAS's 32-bit interface takes int dimensions and leading dimensions.
    for (const std::int64_t extent : {m, n, k, a.cols, b.cols}) {
      if (extent > std::numeric_limits<int>::max()) {
        throw Error("gemm: dimension " + std::to_string(extent) + " exceeds cuBLAS's int range");
      }
    }
    const float* a_device = upload(a.data, a.rows * a.cols, kFirst);
    const float* b_device = upload(b.data, b.rows * b.cols, kSecond);
    float* c_device =
        beta == 0.0f ? buffer<float>(kThird, c.size()) : upload(c.data(), c.size(), kThird);
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    check_cublas(cublasSgemm(cublas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                             static_cast<int>(m), static_cast<int>(k), &alpha, b_device,
                             static_cast<int>(b.cols), a_device, static_cast<int>(a.cols), &beta,
                             c_device, static_cast<int>(n)),
                 "cublasSgemm");
    download(c_device, c.data(), c.size());
  }

  void spmm(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) override {
    cpu::check_spmm(a, x);
    y.reshape_for_overwrite(a.rows, x.cols());
    if (y.size() == 0) return;
    const float* x_device = upload(x.data(), x.size(), kFirst);
    float* y_device = buffer<float>(kThird, y.size());
    const std::int64_t* offsets = upload(a.offsets.data(), a.rows + 1, kFourth);
    const std::int32_t* columns = upload(a.columns.data(), a.nonzeros(), kFifth);
    const float* weights = upload(a.weights.data(), a.nonzeros(), kSixth);
    cuda::spmm_csr(a.rows, x.cols(), offsets, columns, weights, x_device, y_device, stream_);
    download(y_device, y.data(), y.size());
  }

  void add_row_vector(Matrix& y, const Matrix& bias) override {
    if (bias.rows() != 1 || bias.cols() != y.cols())
      throw Error("add_row_vector: bias shape mismatch");
    float* y_device = upload(y.data(), y.size(), kFirst);
    const float* bias_device = upload(bias.data(), bias.size(), kSecond);
    cuda::add_row_vector(y_device, bias_device, y.rows(), y.cols(), stream_);
    download(y_device, y.data(), y.size());
  }

  void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) override {
    if (bias_grad.rows() != 1 || bias_grad.cols() != grad.cols()) {
      throw Error("accumulate_column_sums: shape mismatch");
    }
    const float* grad_device = upload(grad.data(), grad.size(), kFirst);
    float* sums_device = upload(bias_grad.data(), bias_grad.size(), kSecond);
    cuda::accumulate_column_sums(grad_device, grad.rows(), grad.cols(), sums_device, stream_);
    download(sums_device, bias_grad.data(), bias_grad.size());
  }

  void scale(Matrix& x, float factor) override {
    float* x_device = upload(x.data(), x.size(), kFirst);
    cuda::scale(x_device, x.size(), factor, stream_);
    download(x_device, x.data(), x.size());
  }

  void add_in_place(Matrix& y, const Matrix& x) override {
    if (y.rows() != x.rows() || y.cols() != x.cols()) throw Error("add_in_place: shape mismatch");
    float* y_device = upload(y.data(), y.size(), kFirst);
    const float* x_device = upload(x.data(), x.size(), kSecond);
    cuda::add_in_place(y_device, x_device, y.size(), stream_);
    download(y_device, y.data(), y.size());
  }

  void relu_forward(Matrix& x) override {
    float* x_device = upload(x.data(), x.size(), kFirst);
    cuda::relu_forward(x_device, x.size(), stream_);
    download(x_device, x.data(), x.size());
  }

  void relu_backward(const Matrix& output, Matrix& grad) override {
    if (output.rows() != grad.rows() || output.cols() != grad.cols()) {
      throw Error("relu_backward: shape mismatch");
    }
    const float* output_device = upload(output.data(), output.size(), kSecond);
    float* grad_device = upload(grad.data(), grad.size(), kFirst);
    cuda::relu_backward(output_device, grad_device, grad.size(), stream_);
    download(grad_device, grad.data(), grad.size());
  }

  void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                       std::uint64_t key, std::int64_t column_offset) override {
    dropout(x, row_ids, rate, key, column_offset);
  }
  void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                        std::uint64_t key, std::int64_t column_offset) override {
    dropout(grad, row_ids, rate, key, column_offset);
  }

  double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                               Matrix& grad, std::int64_t& correct) override {
    cpu::check_labels(logits, labels);
    const std::int64_t rows = logits.rows();
    grad.reset(rows, logits.cols());
    correct = 0;
    if (rows == 0) return 0.0;
    const float* logits_device = upload(logits.data(), logits.size(), kFirst);
    float* grad_device = buffer<float>(kSecond, grad.size());
    const std::int32_t* labels_device =
        upload(labels.data(), static_cast<std::int64_t>(labels.size()), kThird);
    double* losses_device = buffer<double>(kFourth, rows);
    std::int32_t* hits_device = buffer<std::int32_t>(kFifth, rows);
    const double inverse_rows = 1.0 / static_cast<double>(rows);
    cuda::softmax_cross_entropy(logits_device, labels_device, rows, logits.cols(), inverse_rows,
                                grad_device, losses_device, hits_device, stream_);
    std::vector<double> losses(static_cast<std::size_t>(rows));
    std::vector<std::int32_t> hits(static_cast<std::size_t>(rows));
    copy_back(losses_device, losses.data(), rows);
    copy_back(hits_device, hits.data(), rows);
    download(grad_device, grad.data(), grad.size());
    // Summed on the host in row order: the loss does not depend on the GPU's reduction order.
    double loss = 0.0;
    for (std::size_t i = 0; i < losses.size(); ++i) {
      loss += losses[i];
      correct += hits[i];
    }
    return loss * inverse_rows;
  }

  void sgd_step(std::span<float> value, std::span<const float> grad, std::span<float> velocity,
                float learning_rate, float momentum) override {
    const auto count = static_cast<std::int64_t>(value.size());
    if (grad.size() != value.size() || velocity.size() != value.size()) {
      throw Error("sgd_step: " + std::to_string(value.size()) + " values, " +
                  std::to_string(grad.size()) + " gradients, " + std::to_string(velocity.size()) +
                  " velocities");
    }
    float* value_device = upload(value.data(), count, kFirst);
    const float* grad_device = upload(grad.data(), count, kSecond);
    float* velocity_device = upload(velocity.data(), count, kThird);
    cuda::sgd_step(value_device, grad_device, velocity_device, count, learning_rate, momentum,
                   stream_);
    copy_back(velocity_device, velocity.data(), count);
    download(value_device, value.data(), count);
  }

  void adam_step(std::span<float> value, std::span<const float> grad, std::span<float> first_moment,
                 std::span<float> second_moment, const AdamStep& step) override {
    const auto count = static_cast<std::int64_t>(value.size());
    if (grad.size() != value.size() || first_moment.size() != value.size() ||
        second_moment.size() != value.size()) {
      throw Error("adam_step: moments and gradients must have the parameter's " +
                  std::to_string(value.size()) + " entries");
    }
    float* value_device = upload(value.data(), count, kFirst);
    const float* grad_device = upload(grad.data(), count, kSecond);
    float* first_device = upload(first_moment.data(), count, kThird);
    float* second_device = upload(second_moment.data(), count, kFourth);
    cuda::adam_step(value_device, grad_device, first_device, second_device, count, step.beta1,
                    step.beta2, step.epsilon, step.step_size, step.correction2, stream_);
    copy_back(first_device, first_moment.data(), count);
    copy_back(second_device, second_moment.data(), count);
    download(value_device, value.data(), count);
  }

  void synchronize() override {
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  template <typename T>
  T* buffer(Slot slot, std::int64_t count) {
    return buffers_[slot].ensure_elements<T>(static_cast<std::size_t>(count));
  }

  // Queues a host-to-device copy of `count` elements into the slot's buffer.
  template <typename T>
  T* upload(const T* host, std::int64_t count, Slot slot) {
    T* device = buffer<T>(slot, count);
    if (count > 0) {
      cuda::check(cudaMemcpyAsync(device, host, static_cast<std::size_t>(count) * sizeof(T),
                                  cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync (to the device)");
    }
    return device;
  }

  // Queues a device-to-host copy (the host memory must stay alive until the next download).
  template <typename T>
  void copy_back(const T* device, T* host, std::int64_t count) {
    cuda::check(cudaGetLastError(), "a CUDA kernel launch");
    if (count == 0) return;
    cuda::check(cudaMemcpyAsync(host, device, static_cast<std::size_t>(count) * sizeof(T),
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (to the host)");
  }

  // The last copy of a call: returns once every queued copy and kernel has finished, so the
  // caller's host matrices hold the results.
  template <typename T>
  void download(const T* device, T* host, std::int64_t count) {
    copy_back(device, host, count);
    synchronize();
  }

  void dropout(Matrix& x, std::span<const std::int32_t> row_ids, float rate, std::uint64_t key,
               std::int64_t column_offset) {
    cpu::check_dropout_rows(x, row_ids);
    if (rate <= 0.0f || x.size() == 0) return;
    const auto threshold =
        static_cast<std::uint64_t>(std::lround(static_cast<double>(rate) * 65536.0));
    float* x_device = upload(x.data(), x.size(), kFirst);
    const std::int32_t* ids_device =
        upload(row_ids.data(), static_cast<std::int64_t>(row_ids.size()), kFourth);
    cuda::dropout(x_device, x.rows(), x.cols(), ids_device, threshold, 1.0f / (1.0f - rate), key,
                  column_offset, stream_);
    download(x_device, x.data(), x.size());
  }

  int device_;
  std::string description_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::array<cuda::Buffer, kNumSlots> buffers_;
};

}  // namespace

std::unique_ptr<ComputeBackend> make_cuda_backend(int device) {
  return std::make_unique<CudaBackend>(device);
}

}  // namespace gnnbed
