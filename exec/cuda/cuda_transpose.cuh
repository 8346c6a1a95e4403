#pragma once
// A CSR matrix's transpose built on the device (the backward pass's aggregation), with the same
// result as cpu::SparseMatrix::transposed: each transposed row lists its entries in increasing
// column order, because a stable radix sort by column keeps the rows' order. Plain pointers and a
// stream, as in cuda_kernels.cuh; sizes in elements.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gnnbed::cuda {

// Device scratch that transpose_csr needs for `nonzeros` entries and `cols` columns, in bytes.
std::size_t transpose_csr_scratch_bytes(std::int64_t nonzeros, std::int64_t cols);

// (offsets, columns, weights) is rows x cols with int64 offsets and int32 columns; the transpose
// (cols x rows) goes to out_offsets (cols + 1), out_columns and out_weights (nonzeros each).
// nonzeros must be below 2^31 (edge positions are sorted as int32).
void transpose_csr(std::int64_t rows, std::int64_t cols, std::int64_t nonzeros,
                   const std::int64_t* offsets, const std::int32_t* columns, const float* weights,
                   std::int64_t* out_offsets, std::int32_t* out_columns, float* out_weights,
                   void* scratch, std::size_t scratch_bytes, cudaStream_t stream);

}  // namespace gnnbed::cuda
