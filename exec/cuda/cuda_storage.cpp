#include "exec/cuda/cuda_storage.hpp"

#include <cstdint>
#include <limits>
#include <new>

#include "exec/cuda/cuda_device.hpp"

namespace gnnbed::cuda {

StreamContext::StreamContext(int device) : device_(device) {
  check(cudaSetDevice(device_), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  // Keep freed memory in the pool: per-op temporaries then reuse it without going to the driver.
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device_), "cudaDeviceGetDefaultMemPool");
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
        "cudaMemPoolSetAttribute");
}

StreamContext::~StreamContext() {
  static_cast<void>(cudaStreamSynchronize(stream_));
  static_cast<void>(cudaStreamDestroy(stream_));
}

MatrixStorage::MatrixStorage(std::shared_ptr<StreamContext> context)
    : context_(std::move(context)) {}

MatrixStorage::~MatrixStorage() {
  // Destructors must not throw; a failing free at exit has nothing left to corrupt.
  if (data_ != nullptr) static_cast<void>(cudaFreeAsync(data_, context_->stream()));
}

float* MatrixStorage::ensure(std::int64_t count) {
  if (count <= capacity_) return data_;
  if (data_ != nullptr) check(cudaFreeAsync(data_, context_->stream()), "cudaFreeAsync");
  data_ = nullptr;
  capacity_ = 0;
  void* memory = nullptr;
  check(
      cudaMallocAsync(&memory, static_cast<std::size_t>(count) * sizeof(float), context_->stream()),
      "cudaMallocAsync");
  data_ = static_cast<float*>(memory);
  capacity_ = count;
  return data_;
}

void MatrixStorage::copy_to_host(float* host, std::int64_t count) {
  if (count <= 0) return;
  // Host code may read a matrix from any thread; the stream's device must be the current one.
  check(cudaSetDevice(context_->device()), "cudaSetDevice");
  check(cudaMemcpyAsync(host, data_, static_cast<std::size_t>(count) * sizeof(float),
                        cudaMemcpyDeviceToHost, context_->stream()),
        "cudaMemcpyAsync (to the host)");
  check(cudaStreamSynchronize(context_->stream()), "cudaStreamSynchronize");
}

MatrixStorage& DeviceMatrices::storage_of(const Matrix& m) {
  auto* storage = dynamic_cast<MatrixStorage*>(m.device_storage());
  if (storage == nullptr || storage->context() != context_.get()) {
    m.attach_device_storage(std::make_unique<MatrixStorage>(context_));
    storage = static_cast<MatrixStorage*>(m.device_storage());
  }
  return *storage;
}

MatrixStorage& DeviceMatrices::current(const Matrix& m) {
  MatrixStorage& storage = storage_of(m);
  if (!m.device_current()) {
    float* device = storage.ensure(m.size());
    if (m.size() > 0) {
      // Asynchronous from page-locked memory: the host does not write m before the op's end.
      check(cudaMemcpyAsync(device, m.host_values_as_is(),
                            static_cast<std::size_t>(m.size()) * sizeof(float),
                            cudaMemcpyHostToDevice, context_->stream()),
            "cudaMemcpyAsync (to the device)");
    }
    m.mark_device_current();
  }
  return storage;
}

const float* DeviceMatrices::read(const Matrix& m) { return current(m).data(); }

float* DeviceMatrices::write(Matrix& m, std::int64_t rows, std::int64_t cols) {
  float* device = storage_of(m).ensure(rows * cols);
  m.mark_written_on_device(rows, cols);
  return device;
}

float* DeviceMatrices::update(Matrix& m) {
  MatrixStorage& storage = current(m);
  m.mark_written_on_device(m.rows(), m.cols());
  return storage.data();
}

namespace {

class PinnedMemory final : public std::pmr::memory_resource {
  void* do_allocate(std::size_t bytes, std::size_t) override {
    void* memory = nullptr;
    if (cudaMallocHost(&memory, bytes) != cudaSuccess) throw std::bad_alloc();
    return memory;
  }
  void do_deallocate(void* memory, std::size_t, std::size_t) override {
    static_cast<void>(cudaFreeHost(memory));
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace

std::pmr::memory_resource& pinned_memory() {
  static PinnedMemory memory;
  return memory;
}

}  // namespace gnnbed::cuda
