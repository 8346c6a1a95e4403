#include "exec/cuda/cuda_device.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"

namespace gnnbed::cuda {

void check(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  throw Error(std::string(call) + " failed: " + cudaGetErrorString(code));
}

Buffer::~Buffer() {
  // Destructors must not throw; a failing free at exit has nothing left to corrupt.
  if (data_ == nullptr) return;
  static_cast<void>(memory_ == Memory::device ? cudaFree(data_) : cudaFreeHost(data_));
}

void Buffer::release() {
  if (data_ == nullptr) return;
  if (memory_ == Memory::device) {
    check(cudaFree(data_), "cudaFree");
  } else {
    check(cudaFreeHost(data_), "cudaFreeHost");
  }
  data_ = nullptr;
  capacity_bytes_ = 0;
}

void* Buffer::ensure(std::size_t size_bytes) {
  if (size_bytes <= capacity_bytes_ && data_ != nullptr) return data_;
  release();
  // Grow by half again, so that slowly growing tensors reallocate O(log n) times.
  const std::size_t wanted = std::max<std::size_t>(size_bytes + size_bytes / 2, 256);
  if (memory_ == Memory::device) {
    check(cudaMalloc(&data_, wanted), "cudaMalloc");
  } else {
    check(cudaMallocHost(&data_, wanted), "cudaMallocHost");
  }
  capacity_bytes_ = wanted;
  return data_;
}

std::string device_description(int device) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return std::string(properties.name) + " (sm_" + std::to_string(properties.major) +
         std::to_string(properties.minor) + ")";
}

}  // namespace gnnbed::cuda
