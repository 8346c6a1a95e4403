#pragma once
// CUDA runtime helpers shared by the CUDA backend and the NCCL transport: error checking, device
// memory that grows on demand, pinned host memory.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace gnnbed::cuda {

// Throws gnnbed::Error "<call> failed: <CUDA's message>" unless `code` is cudaSuccess.
void check(cudaError_t code, const char* call);

enum class Memory {
  device,       // cudaMalloc
  pinned_host,  // cudaMallocHost: page-locked, so copies to and from it are asynchronous DMA
};

// Memory reallocated only when a request outgrows it (so that per-op buffers do not pay
// cudaMalloc's synchronisation on every op). Not copyable.
class Buffer {
 public:
  explicit Buffer(Memory memory = Memory::device) : memory_(memory) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // At least `size_bytes` (contents unspecified after growth).
  void* ensure(std::size_t size_bytes);
  template <typename T>
  T* ensure_elements(std::size_t count) {
    return static_cast<T*>(ensure(count * sizeof(T)));
  }

 private:
  void release();

  Memory memory_;
  void* data_ = nullptr;
  std::size_t capacity_bytes_ = 0;
};

// "NVIDIA H100 80GB HBM3 (sm_90)" for device `device`.
std::string device_description(int device);

}  // namespace gnnbed::cuda
