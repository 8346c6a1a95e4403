#include "exec/cuda/cuda_backend.hpp"

#include <cublas_v2.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exec/cuda/cublas_check.hpp"
#include "exec/cuda/cuda_device.hpp"
#include "exec/cuda/cuda_gat.cuh"
#include "exec/cuda/cuda_kernels.cuh"
#include "exec/cuda/cuda_storage.hpp"
#include "exec/cuda/cuda_transpose.cuh"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

using cuda::check_cublas;

// Device buffers for the operands that are not matrices (sparse structure, labels, row ids,
// per-row results) and for views of raw host memory; each keeps its allocation for the next call.
enum Slot : std::size_t {
  kFirst,    // gemm's a
  kSecond,   // gemm's b
  kOffsets,  // CSR offsets / per-row losses
  kColumns,  // CSR columns / row ids / labels
  kWeights,  // CSR weights / hits
  // GAT's attention: its edges grouped by source, and per-slot scratch.
  kSourceOffsets,
  kSourceSlots,
  kSlotDestinations,
  kEdgeGrads,
  kColumnChunkSums,  // accumulate_column_sums' per-chunk sums
  // spmm_transposed's transpose, and the scratch it is built in.
  kTransposedOffsets,
  kTransposedColumns,
  kTransposedWeights,
  kTransposeScratch,
  kNumSlots
};

// cpu::check_lengths for an optimiser's matrices.
void check_lengths(const Matrix& value, const Matrix& grad, const Matrix& state, const char* what) {
  cpu::check_lengths(static_cast<std::size_t>(value.size()), static_cast<std::size_t>(grad.size()),
                     static_cast<std::size_t>(state.size()), what);
}

class CudaBackend final : public ComputeBackend {
 public:
  explicit CudaBackend(int device)
      : context_(std::make_shared<cuda::StreamContext>(device)), matrices_(context_) {
    description_ = "cuda:" + std::to_string(device) + " (" + cuda::device_description(device) + ")";
    check_cublas(cublasCreate(&cublas_), "cublasCreate");
    check_cublas(cublasSetStream(cublas_, stream()), "cublasSetStream");
    // Plain float32 arithmetic: TF32 tensor cores would change results beyond float32 tolerance.
    check_cublas(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  ~CudaBackend() override {
    static_cast<void>(cudaStreamSynchronize(stream()));
    static_cast<void>(cublasDestroy(cublas_));
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return description_; }
  bool is_gpu() const override { return true; }

  void gemm(MatrixView a, bool transpose_a, MatrixView b, bool transpose_b, Matrix& c, float alpha,
            float beta) override {
    const auto [m, n, k] = cpu::gemm_dimensions(a, transpose_a, b, transpose_b, c, beta);
    if (m == 0 || n == 0 || k == 0) {
      // Nothing to multiply: the CPU's result (a zero product) without a kernel.
      if (beta == 0.0f) c.reset(m, n);
      return;
    }
    // cuBLAS's 32-bit interface takes int dimensions and leading dimensions.
    for (const std::int64_t extent : {m, n, k, a.cols, b.cols}) {
      if (extent > std::numeric_limits<int>::max()) {
        throw Error("gemm: dimension " + std::to_string(extent) + " exceeds cuBLAS's int range");
      }
    }
    const float* a_device = read(a, kFirst);
    const float* b_device = read(b, kSecond);
    float* c_device = beta == 0.0f ? matrices_.write(c, m, n) : matrices_.update(c);
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    check_cublas(cublasSgemm(cublas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                             static_cast<int>(m), static_cast<int>(k), &alpha, b_device,
                             static_cast<int>(b.cols), a_device, static_cast<int>(a.cols), &beta,
                             c_device, static_cast<int>(n)),
                 "cublasSgemm");
  }

  void spmm(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) override {
    cpu::check_spmm(a, x);
    const float* x_device = matrices_.read(x);
    float* y_device = matrices_.write(y, a.rows, x.cols());
    if (y.size() == 0) return;
    const CsrOnDevice csr = upload_csr(a);
    cuda::spmm_csr(a.rows, x.cols(), csr.offsets, csr.columns, csr.weights, x_device, y_device,
                   stream());
  }

  // The transpose is built on the device: on the host it took longer than the product (about
  // 1 ms for a products-like first layer's 225,000 edges).
  void spmm_transposed(const cpu::SparseMatrix& a, const Matrix& x, Matrix& y) override {
    cpu::check_spmm_transposed(a, x);
    if (a.nonzeros() > std::numeric_limits<std::int32_t>::max()) {
      spmm(a.transposed(), x, y);
      return;
    }
    const float* x_device = matrices_.read(x);
    float* y_device = matrices_.write(y, a.cols, x.cols());
    if (y.size() == 0) return;
    const CsrOnDevice transposed = transpose_on_device(a, upload_csr(a));
    cuda::spmm_csr(a.cols, x.cols(), transposed.offsets, transposed.columns, transposed.weights,
                   x_device, y_device, stream());
  }

  void add_row_vector(Matrix& y, const Matrix& bias) override {
    if (bias.rows() != 1 || bias.cols() != y.cols())
      throw Error("add_row_vector: bias shape mismatch");
    const float* bias_device = matrices_.read(bias);
    cuda::add_row_vector(matrices_.update(y), bias_device, y.rows(), y.cols(), stream());
  }

  void accumulate_column_sums(const Matrix& grad, Matrix& bias_grad) override {
    if (bias_grad.rows() != 1 || bias_grad.cols() != grad.cols()) {
      throw Error("accumulate_column_sums: shape mismatch");
    }
    const float* grad_device = matrices_.read(grad);
    double* chunk_sums =
        buffer<double>(kColumnChunkSums, cpu::column_sum_chunks(grad.rows()) * grad.cols());
    cuda::accumulate_column_sums(grad_device, grad.rows(), grad.cols(), cpu::kColumnSumChunkRows,
                                 chunk_sums, matrices_.update(bias_grad), stream());
  }

  void scale(Matrix& x, float factor) override {
    cuda::scale(matrices_.update(x), x.size(), factor, stream());
  }

  void add_in_place(Matrix& y, const Matrix& x) override {
    if (y.rows() != x.rows() || y.cols() != x.cols()) throw Error("add_in_place: shape mismatch");
    const float* x_device = matrices_.read(x);
    cuda::add_in_place(matrices_.update(y), x_device, y.size(), stream());
  }

  void add_to_first_rows(Matrix& y, const Matrix& x) override {
    cpu::check_first_rows(y, x);
    const float* x_device = matrices_.read(x);
    // Row-major: the first rows of y are its first x.size() entries.
    cuda::add_in_place(matrices_.update(y), x_device, x.size(), stream());
  }

  void relu_forward(Matrix& x) override {
    cuda::relu_forward(matrices_.update(x), x.size(), stream());
  }

  void relu_backward(const Matrix& output, Matrix& grad) override {
    if (output.rows() != grad.rows() || output.cols() != grad.cols()) {
      throw Error("relu_backward: shape mismatch");
    }
    const float* output_device = matrices_.read(output);
    cuda::relu_backward(output_device, matrices_.update(grad), grad.size(), stream());
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
                               Matrix& grad, std::int64_t& correct) override;

  void gat_scores(const Matrix& z, const Matrix& a_src, const Matrix& a_dst, std::int64_t num_dst,
                  Matrix& scores) override {
    cpu::check_gat_scores(z, a_src, a_dst, num_dst);
    const std::int64_t heads = a_src.rows();
    const float* z_device = matrices_.read(z);
    const float* src_device = matrices_.read(a_src);
    const float* dst_device = matrices_.read(a_dst);
    cuda::gat_scores(z_device, src_device, dst_device, z.rows(), num_dst, heads, a_src.cols(),
                     matrices_.write(scores, z.rows() + num_dst, heads), stream());
  }

  void gat_attention(const cpu::AttentionEdges& edges, const Matrix& scores, const Matrix& z,
                     Matrix& attention, Matrix& pre_leaky, Matrix& out) override {
    cpu::check_gat_attention(edges, scores, z);
    const std::int64_t heads = scores.cols();
    const cuda::AttentionEdgesOnDevice on_device = upload_edges(edges, false);
    const float* scores_device = matrices_.read(scores);
    const float* z_device = matrices_.read(z);
    cuda::gat_attention(on_device, scores_device, z_device, heads, z.cols() / heads,
                        matrices_.write(attention, edges.num_slots(), heads),
                        matrices_.write(pre_leaky, edges.num_slots(), heads),
                        matrices_.write(out, edges.num_dst, z.cols()), stream());
  }

  void gat_attention_backward(const cpu::AttentionEdges& edges, const Matrix& grad_out,
                              const Matrix& z, const Matrix& attention, const Matrix& pre_leaky,
                              Matrix& grad_z, Matrix& score_grads) override {
    cpu::check_gat_attention_backward(edges, grad_out, z, attention, pre_leaky);
    const std::int64_t heads = attention.cols();
    const cuda::AttentionEdgesOnDevice on_device = upload_edges(edges, true);
    const float* grad_out_device = matrices_.read(grad_out);
    const float* z_device = matrices_.read(z);
    const float* attention_device = matrices_.read(attention);
    const float* pre_leaky_device = matrices_.read(pre_leaky);
    cuda::gat_attention_backward(
        on_device, grad_out_device, z_device, attention_device, pre_leaky_device, heads,
        z.cols() / heads, buffer<float>(kEdgeGrads, edges.num_slots() * heads),
        matrices_.write(grad_z, edges.num_src, z.cols()),
        matrices_.write(score_grads, edges.num_src + edges.num_dst, heads), stream());
  }

  void gat_scores_backward(const Matrix& z, const Matrix& score_grads, const Matrix& a_src,
                           const Matrix& a_dst, std::int64_t num_dst, Matrix& grad_z,
                           Matrix& grad_a_src, Matrix& grad_a_dst) override {
    cpu::check_gat_scores_backward(z, score_grads, a_src, a_dst, num_dst, grad_z, grad_a_src,
                                   grad_a_dst);
    const std::int64_t heads = a_src.rows();
    const std::int64_t head_dim = a_src.cols();
    const float* z_device = matrices_.read(z);
    const float* score_grads_device = matrices_.read(score_grads);
    const float* src_device = matrices_.read(a_src);
    const float* dst_device = matrices_.read(a_dst);
    cuda::gat_scores_backward(z_device, score_grads_device, src_device, dst_device, z.rows(),
                              num_dst, heads, head_dim, matrices_.update(grad_z),
                              matrices_.update(grad_a_src), matrices_.update(grad_a_dst), stream());
  }

  void sgd_step(Matrix& value, const Matrix& grad, Matrix& velocity, float learning_rate,
                float momentum) override {
    check_lengths(value, grad, velocity, "sgd_step");
    const float* grad_device = matrices_.read(grad);
    cuda::sgd_step(matrices_.update(value), grad_device, matrices_.update(velocity), value.size(),
                   learning_rate, momentum, stream());
  }

  void adam_step(Matrix& value, const Matrix& grad, Matrix& first_moment, Matrix& second_moment,
                 const AdamStep& step) override {
    check_lengths(value, grad, first_moment, "adam_step");
    check_lengths(value, grad, second_moment, "adam_step");
    const float* grad_device = matrices_.read(grad);
    cuda::adam_step(matrices_.update(value), grad_device, matrices_.update(first_moment),
                    matrices_.update(second_moment), value.size(), step.beta1, step.beta2,
                    step.epsilon, step.step_size, step.correction2, stream());
  }

  void gather_rows(const Matrix& source, std::span<const std::int32_t> rows,
                   std::int64_t column_begin, std::int64_t column_end, Matrix& out) override {
    cpu::check_gather_rows(source, rows, column_begin, column_end);
    const auto count = static_cast<std::int64_t>(rows.size());
    const std::int64_t width = column_end - column_begin;
    const float* source_device = matrices_.read(source);
    float* out_device = matrices_.write(out, count, width);
    const std::int32_t* rows_device = upload(rows.data(), count, kColumns);
    cuda::gather_rows(source_device, source.cols(), rows_device, count, column_begin, width,
                      out_device, stream());
  }

  bool holds_feature_table(std::int64_t bytes) const override {
    if (!feature_tables_allowed()) return false;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    cuda::check(cudaSetDevice(context_->device()), "cudaSetDevice");
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    // Half: activations, gradients and the memory pool need the rest.
    return bytes <= static_cast<std::int64_t>(free_bytes / 2);
  }

  void use_transfer_memory(Matrix& m) override { m.use_host_memory(&cuda::pinned_memory()); }
  void copy_to_device(const Matrix& m) override { matrices_.read(m); }

  void synchronize() override {
    cuda::check(cudaGetLastError(), "a CUDA kernel launch");
    cuda::check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
  }

 private:
  cudaStream_t stream() const { return context_->stream(); }

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
                                  cudaMemcpyHostToDevice, stream()),
                  "cudaMemcpyAsync (to the device)");
    }
    return device;
  }

  struct CsrOnDevice {
    const std::int64_t* offsets;
    const std::int32_t* columns;
    const float* weights;
  };

  CsrOnDevice upload_csr(const cpu::SparseMatrix& a) {
    return {upload(a.offsets.data(), a.rows + 1, kOffsets),
            upload(a.columns.data(), a.nonzeros(), kColumns),
            upload(a.weights.data(), a.nonzeros(), kWeights)};
  }

  // `a`'s transpose, from its copy on the device, in the transpose's slots.
  CsrOnDevice transpose_on_device(const cpu::SparseMatrix& a, const CsrOnDevice& csr) {
    auto* offsets = buffer<std::int64_t>(kTransposedOffsets, a.cols + 1);
    auto* columns = buffer<std::int32_t>(kTransposedColumns, a.nonzeros());
    auto* weights = buffer<float>(kTransposedWeights, a.nonzeros());
    const std::size_t scratch_bytes = cuda::transpose_csr_scratch_bytes(a.nonzeros(), a.cols);
    void* scratch =
        buffer<unsigned char>(kTransposeScratch, static_cast<std::int64_t>(scratch_bytes));
    cuda::transpose_csr(a.rows, a.cols, a.nonzeros(), csr.offsets, csr.columns, csr.weights,
                        offsets, columns, weights, scratch, scratch_bytes, stream());
    return {offsets, columns, weights};
  }

  // GAT's edges on the device; with `by_source`, their grouping by source too (the backward's).
  cuda::AttentionEdgesOnDevice upload_edges(const cpu::AttentionEdges& edges, bool by_source) {
    cuda::AttentionEdgesOnDevice on_device;
    on_device.num_dst = edges.num_dst;
    on_device.num_src = edges.num_src;
    on_device.offsets = upload(edges.offsets.data(), edges.num_dst + 1, kOffsets);
    on_device.sources = upload(edges.sources.data(), edges.num_slots(), kColumns);
    if (!by_source) return on_device;
    // Pageable host vectors: the copies are staged before cudaMemcpyAsync returns, so the
    // grouping may go out of scope while they are queued.
    const cpu::SlotsBySource grouped = cpu::slots_by_source(edges);
    on_device.source_offsets = upload(grouped.offsets.data(), edges.num_src + 1, kSourceOffsets);
    on_device.source_slots = upload(grouped.slots.data(), edges.num_slots(), kSourceSlots);
    on_device.slot_destinations =
        upload(grouped.slot_destinations.data(), edges.num_slots(), kSlotDestinations);
    return on_device;
  }

  // A view's values on the device: its matrix's device copy, or raw host memory uploaded.
  const float* read(MatrixView view, Slot slot) {
    if (view.matrix() != nullptr) return matrices_.read(*view.matrix());
    return upload(view.data(), view.rows * view.cols, slot);
  }

  // Copies `count` elements back and waits for them (and for everything queued before).
  template <typename T>
  void download(const T* device, T* host, std::int64_t count) {
    cuda::check(cudaGetLastError(), "a CUDA kernel launch");
    if (count > 0) {
      cuda::check(cudaMemcpyAsync(host, device, static_cast<std::size_t>(count) * sizeof(T),
                                  cudaMemcpyDeviceToHost, stream()),
                  "cudaMemcpyAsync (to the host)");
    }
    synchronize();
  }

  void dropout(Matrix& x, std::span<const std::int32_t> row_ids, float rate, std::uint64_t key,
               std::int64_t column_offset) {
    cpu::check_dropout_rows(x, row_ids);
    if (rate <= 0.0f || x.size() == 0) return;
    const auto threshold =
        static_cast<std::uint64_t>(std::lround(static_cast<double>(rate) * 65536.0));
    const std::int32_t* ids_device =
        upload(row_ids.data(), static_cast<std::int64_t>(row_ids.size()), kColumns);
    cuda::dropout(matrices_.update(x), x.rows(), x.cols(), ids_device, threshold,
                  1.0f / (1.0f - rate), key, column_offset, stream());
  }

  std::shared_ptr<cuda::StreamContext> context_;
  cuda::DeviceMatrices matrices_;
  std::string description_;
  cublasHandle_t cublas_ = nullptr;
  std::array<cuda::Buffer, kNumSlots> buffers_;
};

double CudaBackend::softmax_cross_entropy(const Matrix& logits,
                                          std::span<const std::int32_t> labels, Matrix& grad,
                                          std::int64_t& correct) {
  cpu::check_labels(logits, labels);
  const std::int64_t rows = logits.rows();
  correct = 0;
  if (rows == 0) {
    grad.reset(0, logits.cols());
    return 0.0;
  }
  const float* logits_device = matrices_.read(logits);
  float* grad_device = matrices_.write(grad, rows, logits.cols());
  const std::int32_t* labels_device =
      upload(labels.data(), static_cast<std::int64_t>(labels.size()), kColumns);
  double* losses_device = buffer<double>(kOffsets, rows);
  std::int32_t* hits_device = buffer<std::int32_t>(kWeights, rows);
  const double inverse_rows = 1.0 / static_cast<double>(rows);
  cuda::softmax_cross_entropy(logits_device, labels_device, rows, logits.cols(), inverse_rows,
                              grad_device, losses_device, hits_device, stream());
  std::vector<double> losses(static_cast<std::size_t>(rows));
  std::vector<std::int32_t> hits(static_cast<std::size_t>(rows));
  download(losses_device, losses.data(), rows);
  download(hits_device, hits.data(), rows);
  // Summed on the host in row order: the loss does not depend on the GPU's reduction order.
  double loss = 0.0;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    loss += losses[i];
    correct += hits[i];
  }
  return loss * inverse_rows;
}

}  // namespace

std::unique_ptr<ComputeBackend> make_cuda_backend(int device) {
  return std::make_unique<CudaBackend>(device);
}

}  // namespace gnnbed
