#pragma once
// Dense float32 matrices, row-major: node representations (one row per node) and weights.
//
// A matrix has host storage and, once a GPU backend has used it, a device copy (DeviceStorage,
// implemented by exec/cuda). Either copy may be the current one, as in Kokkos's DualView: GPU
// kernels write the device copy and mark the host's stale; host accessors bring the host copy up
// to date first (one download) and, when they hand out writable memory, mark the device's stale,
// so the next kernel uploads it again. A matrix a GPU never touched has no device copy, and its
// accessors cost one branch. Tensors therefore stay on the device across ops, and host code that
// reads them (communication, host-side layers) stays correct without knowing where they are.
#include <atomic>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <span>
#include <vector>

namespace gnnbed {

// A GPU backend's copy of a matrix's values.
class DeviceStorage {
 public:
  virtual ~DeviceStorage() = default;
  // Copies the first `count` values into `host`, after every write queued to them.
  virtual void copy_to_host(float* host, std::int64_t count) = 0;
};

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::int64_t rows, std::int64_t cols)
      : rows_(rows), cols_(cols), values_(static_cast<std::size_t>(rows * cols), 0.0f) {}
  // Copies are host matrices (with the default host memory), whatever the source's residence.
  Matrix(const Matrix& other);
  Matrix& operator=(const Matrix& other);
  Matrix(Matrix&& other) noexcept;
  // Not noexcept: into a matrix in other host memory, the values are copied (allocating).
  Matrix& operator=(Matrix&& other);
  ~Matrix() = default;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t size() const { return rows_ * cols_; }
  std::int64_t bytes() const { return size() * static_cast<std::int64_t>(sizeof(float)); }

  // Host access. The const forms bring the host copy up to date; the others also make the host
  // copy the only current one.
  float* data() { return writable_host(); }
  const float* data() const { return readable_host(); }
  std::span<float> values() { return {writable_host(), static_cast<std::size_t>(size())}; }
  std::span<const float> values() const {
    return {readable_host(), static_cast<std::size_t>(size())};
  }
  float* row(std::int64_t i) { return writable_host() + i * cols_; }
  const float* row(std::int64_t i) const { return readable_host() + i * cols_; }
  float& operator()(std::int64_t i, std::int64_t j) { return writable_host()[i * cols_ + j]; }
  float operator()(std::int64_t i, std::int64_t j) const { return readable_host()[i * cols_ + j]; }

  // Reshapes to rows x cols with every entry zero (reusing the allocation when it is big enough).
  void reset(std::int64_t rows, std::int64_t cols);
  // Reshapes to rows x cols leaving the entries unspecified, for outputs that the caller
  // overwrites in full: a reused allocation is neither zeroed nor page-faulted again.
  void reshape_for_overwrite(std::int64_t rows, std::int64_t cols);
  void fill(float value);
  // Becomes a copy of `other`, reusing this matrix's allocation when it is big enough (so that
  // per-step buffers do not page-fault on every step).
  void copy_from(const Matrix& other);

  // For GPU backends. The device copy (null until a backend attaches one); attaching replaces
  // any earlier one, whose values must not be the only current ones.
  DeviceStorage* device_storage() const { return device_.get(); }
  void attach_device_storage(std::unique_ptr<DeviceStorage> storage) const;
  bool device_current() const {
    return device_ != nullptr && device_current_.load(std::memory_order_acquire);
  }
  // The host values as they are (the backend uploads them when !device_current(), when they are
  // current).
  const float* host_values_as_is() const { return values_.data(); }
  // After an upload: both copies are current.
  void mark_device_current() const { device_current_.store(true, std::memory_order_release); }
  // After kernels wrote the device copy, shaped rows x cols: the host copy is stale.
  void mark_written_on_device(std::int64_t rows, std::int64_t cols);
  // Frees the host copy when the device copy is current (a table kept on the GPU; a no-op
  // otherwise): host access downloads it again.
  void release_host_copy();
  // Moves the host storage into `memory` (page-locked memory, from which copies to the device
  // are DMA), keeping the values; later growth allocates there too.
  void use_host_memory(std::pmr::memory_resource* memory);
  std::pmr::memory_resource* host_memory() const { return values_.get_allocator().resource(); }

 private:
  const float* readable_host() const {
    if (!host_current_.load(std::memory_order_acquire)) refresh_host();
    return values_.data();
  }
  float* writable_host() {
    readable_host();
    device_current_.store(false, std::memory_order_release);
    return values_.data();
  }
  // Downloads the device copy (thread-safe: host loops may read rows from several threads).
  void refresh_host() const;

  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  // Sized to size() whenever host_current_ (resized on download otherwise).
  mutable std::pmr::vector<float> values_;
  mutable std::unique_ptr<DeviceStorage> device_;
  mutable std::atomic<bool> host_current_{true};
  mutable std::atomic<bool> device_current_{false};
};

// A read-only view of consecutive leading rows of a row-major matrix (for example the
// destination-node prefix of a block's source rows), usable wherever a kernel only reads its
// input. A view of a Matrix keeps the matrix, so that a GPU backend reads its device copy; a view
// of raw host memory has none.
class MatrixView {
 public:
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  MatrixView() = default;
  MatrixView(const float* values, std::int64_t num_rows, std::int64_t num_cols)
      : rows(num_rows), cols(num_cols), host_(values) {}
  // Implicit on purpose: every Matrix is readable as a view.
  MatrixView(const Matrix& m) : rows(m.rows()), cols(m.cols()), matrix_(&m) {}

  MatrixView first_rows(std::int64_t count) const {
    MatrixView prefix = *this;
    prefix.rows = count;
    return prefix;
  }
  // The host values (brought up to date when the view is of a Matrix).
  const float* data() const { return matrix_ != nullptr ? matrix_->data() : host_; }
  // The viewed matrix, or null for a view of raw memory.
  const Matrix* matrix() const { return matrix_; }

 private:
  const float* host_ = nullptr;
  const Matrix* matrix_ = nullptr;
};

// Entries uniform in [low, high), entry i a pure function of (seed, i).
Matrix uniform_matrix(std::int64_t rows, std::int64_t cols, float low, float high,
                      std::uint64_t seed);

}  // namespace gnnbed
