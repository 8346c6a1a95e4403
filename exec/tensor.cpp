#include "exec/tensor.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// Serialises downloads: several host threads may read rows of one stale matrix at once.
std::mutex& download_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

Matrix::Matrix(const Matrix& other)
    : rows_(other.rows_), cols_(other.cols_), values_(other.data(), other.data() + other.size()) {}

Matrix& Matrix::operator=(const Matrix& other) {
  if (this != &other) copy_from(other);
  return *this;
}

Matrix::Matrix(Matrix&& other) noexcept
    : rows_(other.rows_),
      cols_(other.cols_),
      values_(std::move(other.values_)),
      device_(std::move(other.device_)),
      host_current_(other.host_current_.load(std::memory_order_acquire)),
      device_current_(other.device_current_.load(std::memory_order_acquire)) {
  other.rows_ = 0;
  other.cols_ = 0;
  other.values_.clear();
  other.host_current_.store(true, std::memory_order_release);
  other.device_current_.store(false, std::memory_order_release);
}

Matrix& Matrix::operator=(Matrix&& other) {
  if (this == &other) return *this;
  rows_ = other.rows_;
  cols_ = other.cols_;
  // Element-wise when the two host memories differ (a page-locked destination stays one).
  values_ = std::move(other.values_);
  device_ = std::move(other.device_);
  host_current_.store(other.host_current_.load(std::memory_order_acquire),
                      std::memory_order_release);
  device_current_.store(other.device_current_.load(std::memory_order_acquire),
                        std::memory_order_release);
  other.rows_ = 0;
  other.cols_ = 0;
  other.values_.clear();
  other.host_current_.store(true, std::memory_order_release);
  other.device_current_.store(false, std::memory_order_release);
  return *this;
}

void Matrix::reset(std::int64_t rows, std::int64_t cols) {
  rows_ = rows;
  cols_ = cols;
  values_.assign(static_cast<std::size_t>(rows * cols), 0.0f);
  host_current_.store(true, std::memory_order_release);
  device_current_.store(false, std::memory_order_release);
}

void Matrix::reshape_for_overwrite(std::int64_t rows, std::int64_t cols) {
  rows_ = rows;
  cols_ = cols;
  values_.resize(static_cast<std::size_t>(rows * cols));
  host_current_.store(true, std::memory_order_release);
  device_current_.store(false, std::memory_order_release);
}

void Matrix::fill(float value) {
  values_.assign(static_cast<std::size_t>(size()), value);
  host_current_.store(true, std::memory_order_release);
  device_current_.store(false, std::memory_order_release);
}

void Matrix::copy_from(const Matrix& other) {
  if (this == &other) return;
  const float* source = other.data();
  rows_ = other.rows_;
  cols_ = other.cols_;
  values_.assign(source, source + other.size());
  host_current_.store(true, std::memory_order_release);
  device_current_.store(false, std::memory_order_release);
}

void Matrix::attach_device_storage(std::unique_ptr<DeviceStorage> storage) const {
  static_cast<void>(readable_host());  // the old device copy may hold the current values
  device_ = std::move(storage);
  device_current_.store(false, std::memory_order_release);
}

void Matrix::mark_written_on_device(std::int64_t rows, std::int64_t cols) {
  rows_ = rows;
  cols_ = cols;
  host_current_.store(false, std::memory_order_release);
  device_current_.store(true, std::memory_order_release);
}

void Matrix::release_host_copy() {
  if (!device_current()) return;
  host_current_.store(false, std::memory_order_release);
  values_ = std::pmr::vector<float>(values_.get_allocator());  // same memory: the old is freed
}

void Matrix::use_host_memory(std::pmr::memory_resource* memory) {
  if (host_memory() == memory) return;
  std::pmr::vector<float> moved(memory);
  if (host_current_.load(std::memory_order_acquire)) moved.assign(values_.begin(), values_.end());
  // A vector's memory resource is fixed at construction (polymorphic allocators never
  // propagate on assignment): construct the member again from one in the new memory.
  std::destroy_at(&values_);
  std::construct_at(&values_, std::move(moved));
}

void Matrix::refresh_host() const {
  const std::lock_guard<std::mutex> lock(download_mutex());
  if (host_current_.load(std::memory_order_acquire)) return;
  values_.resize(static_cast<std::size_t>(size()));
  device_->copy_to_host(values_.data(), size());
  host_current_.store(true, std::memory_order_release);
}

Matrix uniform_matrix(std::int64_t rows, std::int64_t cols, float low, float high,
                      std::uint64_t seed) {
  Matrix m(rows, cols);
  float* values = m.data();
  const double width = static_cast<double>(high) - static_cast<double>(low);
  for (std::int64_t i = 0; i < m.size(); ++i) {
    const double u = unit_double(hash_mix(seed, static_cast<std::uint64_t>(i)));
    values[i] = static_cast<float>(static_cast<double>(low) + u * width);
  }
  return m;
}

}  // namespace gnnbed
