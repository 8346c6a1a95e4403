#pragma once
// A model's input rows: dense, or sparse where the workload's features are stored sparse
// (SparseFeatures), so that the first layer multiplies bag-of-words rows without densifying them.
#include <span>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/tensor.hpp"
#include "workloads/features.hpp"

namespace gnnbed {

class InputRows {
 public:
  InputRows() = default;
  explicit InputRows(Matrix dense) : dense_(std::move(dense)) {}
  explicit InputRows(cpu::SparseMatrix sparse) : sparse_(std::move(sparse)), is_sparse_(true) {}

  // The features of `nodes`, in that order: sparse rows when the store holds them sparse.
  static InputRows gather(const FeatureStore& features, std::span<const NodeId> nodes);

  bool is_sparse() const { return is_sparse_; }
  std::int64_t rows() const { return is_sparse_ ? sparse_.rows : dense_.rows(); }
  bool empty() const { return rows() == 0; }
  const Matrix& dense() const { return dense_; }
  const cpu::SparseMatrix& sparse() const { return sparse_; }

 private:
  Matrix dense_;
  cpu::SparseMatrix sparse_;
  bool is_sparse_ = false;
};

}  // namespace gnnbed
