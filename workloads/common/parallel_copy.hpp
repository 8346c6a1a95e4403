#pragma once
// When a copy of rows (a feature gather, a scatter) is worth spreading over threads: copies are
// bound by memory bandwidth, which one core of a server cannot saturate, and an OpenMP parallel
// region costs a few microseconds to open, which a copy of this many bytes amortises.
#include <cstdint>
#include <cstring>

namespace gnnbed {

inline constexpr std::int64_t kParallelCopyBytes = 64 * 1024;

inline bool worth_parallel_copy(std::int64_t rows, std::int64_t bytes_per_row) {
  return rows > 1 && rows * bytes_per_row >= kParallelCopyBytes;
}

// Random row gathers are bound by memory latency rather than bandwidth unless several rows are in
// flight at once: a gather asks for the row this many places ahead of the one it copies.
inline constexpr std::int64_t kPrefetchRowsAhead = 8;

// Asks the caches for the `bytes` at `address` (one request per 64-byte line), for reading.
inline void prefetch_bytes(const void* address, std::int64_t bytes) {
  const char* const first = static_cast<const char*>(address);
  for (std::int64_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(first + offset);
}

// Row i of `out` (at out + i * out_stride) = the `width` floats at row_address(i), for i in
// [0, count): the one gather loop of feature stores, rank stores and kernels. Parallel when
// worth_parallel_copy; each thread asks for the row kPrefetchRowsAhead places ahead.
template <typename RowAddress>
void gather_float_rows(std::int64_t count, std::int64_t width, float* out, std::int64_t out_stride,
                       const RowAddress& row_address) {
  const auto row_bytes =
      static_cast<std::int64_t>(width * static_cast<std::int64_t>(sizeof(float)));
  const bool parallel = worth_parallel_copy(count, row_bytes);
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchRowsAhead < count)
      prefetch_bytes(row_address(i + kPrefetchRowsAhead), row_bytes);
    std::memcpy(out + i * out_stride, row_address(i), static_cast<std::size_t>(row_bytes));
  }
}

}  // namespace gnnbed
