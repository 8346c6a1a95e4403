#include <cuda_runtime.h>

#include "exec/cuda/cuda_grid.cuh"
#include "exec/cuda/cuda_kernels.cuh"
// hash_mix is constexpr: with --expt-relaxed-constexpr the device calls the very function the CPU
// dropout calls, so the masks cannot drift apart.
#include "workloads/common/random.hpp"

namespace gnnbed::cuda {
namespace {

// One warp-wide slice of columns per row: threadIdx.x walks the columns, threadIdx.y picks the
// row, so reads of x rows are coalesced.
constexpr int kSpmmRowsPerBlock = 8;

__global__ void spmm_kernel(std::int64_t rows, std::int64_t width, const std::int64_t* offsets,
                            const std::int32_t* columns, const float* weights, const float* x,
                            float* y) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kSpmmRowsPerBlock + threadIdx.y;
  if (r >= rows) return;
  const std::int64_t begin = offsets[r];
  const std::int64_t end = offsets[r + 1];
  for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    float sum = 0.0f;
    for (std::int64_t e = begin; e < end; ++e) sum += weights[e] * x[columns[e] * width + j];
    y[r * width + j] = sum;
  }
}

__global__ void add_row_vector_kernel(float* y, const float* bias, std::int64_t rows,
                                      std::int64_t cols) {
  for (std::int64_t i = first_index(); i < rows * cols; i += stride()) y[i] += bias[i % cols];
}

// One thread per chunk and column; neighbouring threads read neighbouring columns of a row.
__global__ void chunk_column_sums_kernel(const float* grad, std::int64_t rows, std::int64_t cols,
                                         std::int64_t chunk_rows, std::int64_t chunks,
                                         double* chunk_sums) {
  for (std::int64_t t = first_index(); t < chunks * cols; t += stride()) {
    const std::int64_t chunk = t / cols;
    const std::int64_t j = t % cols;
    const std::int64_t end = min(rows, (chunk + 1) * chunk_rows);
    double sum = 0.0;
    for (std::int64_t i = chunk * chunk_rows; i < end; ++i) sum += grad[i * cols + j];
    chunk_sums[t] = sum;
  }
}

__global__ void add_chunk_sums_kernel(const double* chunk_sums, std::int64_t chunks,
                                      std::int64_t cols, float* bias_grad) {
  for (std::int64_t j = first_index(); j < cols; j += stride()) {
    double sum = 0.0;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) sum += chunk_sums[chunk * cols + j];
    bias_grad[j] += static_cast<float>(sum);
  }
}

__global__ void gather_rows_kernel(const float* source, std::int64_t source_cols,
                                   const std::int32_t* rows, std::int64_t count,
                                   std::int64_t column_begin, std::int64_t width, float* out) {
  for (std::int64_t i = first_index(); i < count * width; i += stride()) {
    const std::int64_t row = rows[i / width];
    out[i] = source[row * source_cols + column_begin + i % width];
  }
}

__global__ void scale_kernel(float* x, std::int64_t count, float factor) {
  for (std::int64_t i = first_index(); i < count; i += stride()) x[i] *= factor;
}

__global__ void add_kernel(float* y, const float* x, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += stride()) y[i] += x[i];
}

__global__ void relu_kernel(float* x, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += stride()) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* output, float* grad, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += stride()) {
    if (output[i] <= 0.0f) grad[i] = 0.0f;
  }
}

__global__ void dropout_kernel(float* x, std::int64_t rows, std::int64_t cols,
                               const std::int32_t* row_ids, std::uint64_t threshold, float scale,
                               std::uint64_t key, std::int64_t column_offset) {
  for (std::int64_t i = first_index(); i < rows * cols; i += stride()) {
    const std::int64_t global = i % cols + column_offset;
    const auto id = static_cast<std::uint64_t>(row_ids[i / cols]);
    const std::uint64_t bits =
        hash_mix(key, id, static_cast<std::uint64_t>(global / kDropoutGroupEntries)) >>
        (16 * (global % kDropoutGroupEntries));
    x[i] = (bits & 0xffff) >= threshold ? x[i] * scale : 0.0f;
  }
}

__global__ void softmax_cross_entropy_kernel(const float* logits, const std::int32_t* labels,
                                             std::int64_t rows, std::int64_t cols,
                                             double inverse_rows, float* grad, double* loss,
                                             std::int32_t* hit) {
  for (std::int64_t i = first_index(); i < rows; i += stride()) {
    const float* z = logits + i * cols;
    const std::int32_t label = labels[i];
    std::int64_t arg_max = 0;
    for (std::int64_t j = 1; j < cols; ++j) {
      if (z[j] > z[arg_max]) arg_max = j;
    }
    const double max_logit = z[arg_max];
    double sum = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) sum += exp(static_cast<double>(z[j]) - max_logit);
    const double log_sum = log(sum) + max_logit;
    loss[i] = log_sum - static_cast<double>(z[label]);
    hit[i] = arg_max == label ? 1 : 0;
    float* g = grad + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double probability = exp(static_cast<double>(z[j]) - log_sum);
      g[j] = static_cast<float>((probability - (j == label ? 1.0 : 0.0)) * inverse_rows);
    }
  }
}

__global__ void sgd_kernel(float* value, const float* grad, float* velocity, std::int64_t count,
                           float learning_rate, float momentum) {
  for (std::int64_t i = first_index(); i < count; i += stride()) {
    velocity[i] = momentum * velocity[i] + grad[i];
    value[i] -= learning_rate * velocity[i];
  }
}

__global__ void adam_kernel(float* value, const float* grad, float* first_moment,
                            float* second_moment, std::int64_t count, double beta1, double beta2,
                            double epsilon, double step_size, double correction2) {
  for (std::int64_t i = first_index(); i < count; i += stride()) {
    const double g = grad[i];
    first_moment[i] = static_cast<float>(beta1 * first_moment[i] + (1.0 - beta1) * g);
    second_moment[i] = static_cast<float>(beta2 * second_moment[i] + (1.0 - beta2) * g * g);
    const double denominator = sqrt(second_moment[i] / correction2) + epsilon;
    value[i] = static_cast<float>(value[i] - step_size * first_moment[i] / denominator);
  }
}

}  // namespace

void spmm_csr(std::int64_t rows, std::int64_t width, const std::int64_t* offsets,
              const std::int32_t* columns, const float* weights, const float* x, float* y,
              cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  const dim3 block(32, kSpmmRowsPerBlock);
  const auto grid = static_cast<unsigned>((rows + kSpmmRowsPerBlock - 1) / kSpmmRowsPerBlock);
  spmm_kernel<<<grid, block, 0, stream>>>(rows, width, offsets, columns, weights, x, y);
}

void add_row_vector(float* y, const float* bias, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream) {
  if (rows * cols == 0) return;
  add_row_vector_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(y, bias, rows, cols);
}

void accumulate_column_sums(const float* grad, std::int64_t rows, std::int64_t cols,
                            std::int64_t chunk_rows, double* chunk_sums, float* bias_grad,
                            cudaStream_t stream) {
  if (cols == 0 || rows == 0) return;
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  chunk_column_sums_kernel<<<blocks_for(chunks * cols), kThreads, 0, stream>>>(
      grad, rows, cols, chunk_rows, chunks, chunk_sums);
  add_chunk_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(chunk_sums, chunks, cols,
                                                                   bias_grad);
}

void gather_rows(const float* source, std::int64_t source_cols, const std::int32_t* rows,
                 std::int64_t count, std::int64_t column_begin, std::int64_t width, float* out,
                 cudaStream_t stream) {
  if (count == 0 || width == 0) return;
  gather_rows_kernel<<<blocks_for(count * width), kThreads, 0, stream>>>(
      source, source_cols, rows, count, column_begin, width, out);
}

void scale(float* x, std::int64_t count, float factor, cudaStream_t stream) {
  if (count == 0) return;
  scale_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, count, factor);
}

void add_in_place(float* y, const float* x, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  add_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, x, count);
}

void relu_forward(float* x, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  relu_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, count);
}

void relu_backward(const float* output, float* grad, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  relu_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(output, grad, count);
}

void dropout(float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* row_ids,
             std::uint64_t threshold, float scale, std::uint64_t key, std::int64_t column_offset,
             cudaStream_t stream) {
  if (rows * cols == 0) return;
  dropout_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(
      x, rows, cols, row_ids, threshold, scale, key, column_offset);
}

void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::int64_t rows,
                           std::int64_t cols, double inverse_rows, float* grad, double* loss,
                           std::int32_t* hit, cudaStream_t stream) {
  if (rows == 0) return;
  softmax_cross_entropy_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(
      logits, labels, rows, cols, inverse_rows, grad, loss, hit);
}

void sgd_step(float* value, const float* grad, float* velocity, std::int64_t count,
              float learning_rate, float momentum, cudaStream_t stream) {
  if (count == 0) return;
  sgd_kernel<<<blocks_for(count), kThreads, 0, stream>>>(value, grad, velocity, count,
                                                         learning_rate, momentum);
}

void adam_step(float* value, const float* grad, float* first_moment, float* second_moment,
               std::int64_t count, double beta1, double beta2, double epsilon, double step_size,
               double correction2, cudaStream_t stream) {
  if (count == 0) return;
  adam_kernel<<<blocks_for(count), kThreads, 0, stream>>>(value, grad, first_moment, second_moment,
                                                          count, beta1, beta2, epsilon, step_size,
                                                          correction2);
}

}  // namespace gnnbed::cuda
