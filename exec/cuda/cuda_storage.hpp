#pragma once
// Device copies of matrices for the CUDA backend (exec/tensor.hpp's DeviceStorage), and the
// page-locked host memory that mini-batch inputs are gathered into.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <memory_resource>

#include "exec/tensor.hpp"

namespace gnnbed::cuda {

// One backend's device and stream, shared by the backend and every device copy it made, so that
// a copy that outlives its backend can still be read back and freed.
class StreamContext {
 public:
  explicit StreamContext(int device);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

// A matrix's device copy: stream-ordered allocations from the device's memory pool (no
// synchronisation per allocation, freed memory kept for the next), reallocated only to grow.
class MatrixStorage final : public DeviceStorage {
 public:
  explicit MatrixStorage(std::shared_ptr<StreamContext> context);
  ~MatrixStorage() override;
  MatrixStorage(const MatrixStorage&) = delete;
  MatrixStorage& operator=(const MatrixStorage&) = delete;

  // Room for `count` floats (contents unspecified after growth).
  float* ensure(std::int64_t count);
  float* data() const { return data_; }
  const StreamContext* context() const { return context_.get(); }

  void copy_to_host(float* host, std::int64_t count) override;

 private:
  std::shared_ptr<StreamContext> context_;
  float* data_ = nullptr;
  std::int64_t capacity_ = 0;
};

// The backend's view of a matrix's device copy, attaching one (of this context) when missing.
// read: current device values (uploaded when the host's are newer); write: room for rows x cols
// that kernels overwrite (the host copy becomes stale); update: read, then the kernels' changes
// make the host copy stale.
class DeviceMatrices {
 public:
  explicit DeviceMatrices(std::shared_ptr<StreamContext> context) : context_(std::move(context)) {}
  const float* read(const Matrix& m);
  float* write(Matrix& m, std::int64_t rows, std::int64_t cols);
  float* update(Matrix& m);

 private:
  MatrixStorage& storage_of(const Matrix& m);
  // m's device copy, uploaded first when the host holds newer values.
  MatrixStorage& current(const Matrix& m);

  std::shared_ptr<StreamContext> context_;
};

// Page-locked host memory (cudaMallocHost), for matrices whose copies to the device should be
// DMA. Process-wide: matrices in it may outlive any backend.
std::pmr::memory_resource& pinned_memory();

}  // namespace gnnbed::cuda
