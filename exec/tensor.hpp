#pragma once
// Dense float32 matrices, row-major: node representations (one row per node) and weights.
#include <cstdint>
#include <span>
#include <vector>

namespace gnnbed {

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::int64_t rows, std::int64_t cols)
      : rows_(rows), cols_(cols), values_(static_cast<std::size_t>(rows * cols), 0.0f) {}

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t size() const { return rows_ * cols_; }
  std::int64_t bytes() const { return size() * static_cast<std::int64_t>(sizeof(float)); }

  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }

  float* row(std::int64_t i) { return values_.data() + i * cols_; }
  const float* row(std::int64_t i) const { return values_.data() + i * cols_; }
  float& operator()(std::int64_t i, std::int64_t j) {
    return values_[static_cast<std::size_t>(i * cols_ + j)];
  }
  float operator()(std::int64_t i, std::int64_t j) const {
    return values_[static_cast<std::size_t>(i * cols_ + j)];
  }

  // Reshapes to rows x cols with every entry zero (reusing the allocation when it is big enough).
  void reset(std::int64_t rows, std::int64_t cols) {
    rows_ = rows;
    cols_ = cols;
    values_.assign(static_cast<std::size_t>(rows * cols), 0.0f);
  }
  // Reshapes to rows x cols leaving the entries unspecified, for outputs that the caller
  // overwrites in full: a reused allocation is neither zeroed nor page-faulted again.
  void reshape_for_overwrite(std::int64_t rows, std::int64_t cols) {
    rows_ = rows;
    cols_ = cols;
    values_.resize(static_cast<std::size_t>(rows * cols));
  }
  void fill(float value) { values_.assign(values_.size(), value); }
  // Becomes a copy of `other`, reusing this matrix's allocation when it is big enough (so that
  // per-step buffers do not page-fault on every step).
  void copy_from(const Matrix& other) {
    rows_ = other.rows_;
    cols_ = other.cols_;
    values_.assign(other.values_.begin(), other.values_.end());
  }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<float> values_;
};

// A read-only view of consecutive rows of a row-major matrix (for example the destination-node
// prefix of a block's source rows), usable wherever a kernel only reads its input.
struct MatrixView {
  const float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  MatrixView() = default;
  MatrixView(const float* values, std::int64_t num_rows, std::int64_t num_cols)
      : data(values), rows(num_rows), cols(num_cols) {}
  // Implicit on purpose: every Matrix is readable as a view.
  MatrixView(const Matrix& m) : data(m.data()), rows(m.rows()), cols(m.cols()) {}

  MatrixView first_rows(std::int64_t count) const { return {data, count, cols}; }
};

// Entries uniform in [low, high), entry i a pure function of (seed, i).
Matrix uniform_matrix(std::int64_t rows, std::int64_t cols, float low, float high,
                      std::uint64_t seed);

}  // namespace gnnbed
