#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "exec/cuda/cuda_grid.cuh"
#include "exec/cuda/cuda_transpose.cuh"

namespace gnnbed::cuda {
namespace {

// The scratch's parts, each aligned for any element type: the row of every entry, the entries'
// positions before and after sorting, the sorted columns, and CUB's own temporary storage.
struct TransposeScratch {
  std::int32_t* row_of_entry;
  std::int32_t* positions;
  std::int32_t* sorted_positions;
  std::int32_t* sorted_columns;
  void* cub_storage;
  std::size_t cub_bytes;
};

constexpr std::size_t kAlignment = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// Bits that hold every column index (the radix sort looks at no more).
int column_bits(std::int64_t cols) {
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) < cols) ++bits;
  return bits;
}

std::size_t cub_sort_bytes(std::int64_t nonzeros, std::int64_t cols) {
  std::size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const std::int32_t*>(nullptr),
      static_cast<std::int32_t*>(nullptr), static_cast<const std::int32_t*>(nullptr),
      static_cast<std::int32_t*>(nullptr), static_cast<int>(nonzeros), 0, column_bits(cols));
  return bytes;
}

std::size_t cub_scan_bytes(std::int64_t cols) {
  std::size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<std::int64_t*>(nullptr),
                                static_cast<std::int64_t*>(nullptr), static_cast<int>(cols + 1));
  return bytes;
}

TransposeScratch carve(void* scratch, std::size_t scratch_bytes, std::int64_t nonzeros) {
  const std::size_t entries = aligned(static_cast<std::size_t>(nonzeros) * sizeof(std::int32_t));
  auto* bytes = static_cast<unsigned char*>(scratch);
  TransposeScratch parts{};
  parts.row_of_entry = reinterpret_cast<std::int32_t*>(bytes);
  parts.positions = reinterpret_cast<std::int32_t*>(bytes + entries);
  parts.sorted_positions = reinterpret_cast<std::int32_t*>(bytes + 2 * entries);
  parts.sorted_columns = reinterpret_cast<std::int32_t*>(bytes + 3 * entries);
  parts.cub_storage = bytes + 4 * entries;
  parts.cub_bytes = scratch_bytes - 4 * entries;
  return parts;
}

__global__ void rows_of_entries_kernel(const std::int64_t* offsets, std::int64_t rows,
                                       std::int32_t* row_of_entry, std::int32_t* positions) {
  for (std::int64_t r = first_index(); r < rows; r += stride()) {
    for (std::int64_t e = offsets[r]; e < offsets[r + 1]; ++e) {
      row_of_entry[e] = static_cast<std::int32_t>(r);
      positions[e] = static_cast<std::int32_t>(e);
    }
  }
}

// counts[c + 1] = entries in column c (integer atomics: the same counts in any order).
__global__ void count_columns_kernel(const std::int32_t* columns, std::int64_t nonzeros,
                                     unsigned long long* counts) {
  for (std::int64_t e = first_index(); e < nonzeros; e += stride()) {
    atomicAdd(counts + columns[e] + 1, 1ULL);
  }
}

__global__ void place_entries_kernel(const std::int32_t* sorted_positions,
                                     const std::int32_t* row_of_entry, const float* weights,
                                     std::int64_t nonzeros, std::int32_t* out_columns,
                                     float* out_weights) {
  for (std::int64_t slot = first_index(); slot < nonzeros; slot += stride()) {
    const std::int32_t e = sorted_positions[slot];
    out_columns[slot] = row_of_entry[e];
    out_weights[slot] = weights[e];
  }
}

}  // namespace

std::size_t transpose_csr_scratch_bytes(std::int64_t nonzeros, std::int64_t cols) {
  const std::size_t entries = aligned(static_cast<std::size_t>(nonzeros) * sizeof(std::int32_t));
  const std::size_t sort = cub_sort_bytes(nonzeros, cols);
  const std::size_t scan = cub_scan_bytes(cols);
  return 4 * entries + aligned(sort > scan ? sort : scan);
}

void transpose_csr(std::int64_t rows, std::int64_t cols, std::int64_t nonzeros,
                   const std::int64_t* offsets, const std::int32_t* columns, const float* weights,
                   std::int64_t* out_offsets, std::int32_t* out_columns, float* out_weights,
                   void* scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  cudaMemsetAsync(out_offsets, 0, static_cast<std::size_t>(cols + 1) * sizeof(std::int64_t),
                  stream);
  if (nonzeros == 0) return;
  TransposeScratch parts = carve(scratch, scratch_bytes, nonzeros);
  rows_of_entries_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(
      offsets, rows, parts.row_of_entry, parts.positions);
  // Stable: entries of one column keep their order in `columns`, which is row order.
  cub::DeviceRadixSort::SortPairs(parts.cub_storage, parts.cub_bytes, columns, parts.sorted_columns,
                                  parts.positions, parts.sorted_positions,
                                  static_cast<int>(nonzeros), 0, column_bits(cols), stream);
  place_entries_kernel<<<blocks_for(nonzeros), kThreads, 0, stream>>>(
      parts.sorted_positions, parts.row_of_entry, weights, nonzeros, out_columns, out_weights);
  static_assert(sizeof(unsigned long long) == sizeof(std::int64_t));
  count_columns_kernel<<<blocks_for(nonzeros), kThreads, 0, stream>>>(
      columns, nonzeros, reinterpret_cast<unsigned long long*>(out_offsets));
  cub::DeviceScan::InclusiveSum(parts.cub_storage, parts.cub_bytes, out_offsets, out_offsets,
                                static_cast<int>(cols + 1), stream);
}

}  // namespace gnnbed::cuda
