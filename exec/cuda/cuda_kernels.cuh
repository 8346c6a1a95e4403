#pragma once
// The CUDA kernels behind CudaBackend (cuda_backend.hpp): plain device pointers and a stream, no
// project types, so that nvcc compiles one small translation unit. It is compiled with
// -fmad=false: the CPU kernels (x86-64, no -march) round every multiply and add separately, and
// so must these for element-wise results to match them bit for bit. Every function only enqueues
// work on `stream`; the caller checks cudaGetLastError and synchronizes. Sizes are in elements.
#include <cuda_runtime.h>

#include <cstdint>

namespace gnnbed::cuda {

// y (rows x width) = A x for a CSR matrix A (rows x ?) with int64 offsets, int32 columns and
// float weights; x is (?, width) row-major. Each output entry sums its row's entries in CSR
// order, as cpu::spmm does, so results match it to rounding of the same sequence of additions.
void spmm_csr(std::int64_t rows, std::int64_t width, const std::int64_t* offsets,
              const std::int32_t* columns, const float* weights, const float* x, float* y,
              cudaStream_t stream);

// y[i, j] += bias[j].
void add_row_vector(float* y, const float* bias, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream);
// bias_grad[j] += sum over i of grad[i, j], in the CPU's order (cpu::kColumnSumChunkRows): in
// double per chunk of `chunk_rows` rows, into chunk_sums (ceil(rows / chunk_rows) x cols), then
// over the chunks in order.
void accumulate_column_sums(const float* grad, std::int64_t rows, std::int64_t cols,
                            std::int64_t chunk_rows, double* chunk_sums, float* bias_grad,
                            cudaStream_t stream);
// out (count x width) = columns [column_begin, column_begin + width) of source's rows `rows`
// (source row-major with source_cols columns; rows checked by the caller).
void gather_rows(const float* source, std::int64_t source_cols, const std::int32_t* rows,
                 std::int64_t count, std::int64_t column_begin, std::int64_t width, float* out,
                 cudaStream_t stream);
void scale(float* x, std::int64_t count, float factor, cudaStream_t stream);
void add_in_place(float* y, const float* x, std::int64_t count, cudaStream_t stream);
void relu_forward(float* x, std::int64_t count, cudaStream_t stream);
void relu_backward(const float* output, float* grad, std::int64_t count, cudaStream_t stream);

// cpu::dropout_forward's mask, bit for bit (the same splitmix64-based hash_mix of (key, row id,
// column group)); applied to every entry, which equals the CPU's skipping of all-zero groups.
void dropout(float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* row_ids,
             std::uint64_t threshold, float scale, std::uint64_t key, std::int64_t column_offset,
             cudaStream_t stream);

// Per row: loss[i] = log-sum-exp(z_i) - z_i[label_i] and hit[i] = (arg-max == label, first
// maximum wins); grad = (softmax - one_hot) * inverse_rows. In double precision like the CPU.
void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::int64_t rows,
                           std::int64_t cols, double inverse_rows, float* grad, double* loss,
                           std::int32_t* hit, cudaStream_t stream);

void sgd_step(float* value, const float* grad, float* velocity, std::int64_t count,
              float learning_rate, float momentum, cudaStream_t stream);
void adam_step(float* value, const float* grad, float* first_moment, float* second_moment,
               std::int64_t count, double beta1, double beta2, double epsilon, double step_size,
               double correction2, cudaStream_t stream);

}  // namespace gnnbed::cuda
