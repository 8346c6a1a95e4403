#pragma once
// The launch shape every kernel of exec/cuda uses: grid-stride loops over a flat index, with
// enough blocks to fill an H100 (132 SMs) several times over.
#include <cuda_runtime.h>

#include <cstdint>

namespace gnnbed::cuda {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;

inline unsigned blocks_for(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

__device__ inline std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace gnnbed::cuda
