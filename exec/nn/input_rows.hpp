#pragma once
// A model's input rows: dense, or sparse where the workload's features are stored sparse
// (SparseFeatures), so that the first layer multiplies bag-of-words rows without densifying them.
// Sparse rows are either gathered (a mini-batch's) or, when every node is wanted in node order
// (full-graph training and evaluation), the store's own arrays read in place.
#include <optional>
#include <span>

#include "exec/kernels/cpu_kernels.hpp"
#include "exec/tensor.hpp"
#include "workloads/features.hpp"

namespace gnnbed {

class InputRows {
 public:
  InputRows() = default;
  explicit InputRows(Matrix dense) : dense_(std::move(dense)) {}
  explicit InputRows(cpu::SparseMatrix sparse) : gathered_(std::move(sparse)), is_sparse_(true) {}

  // The features of `nodes`, in that order: sparse rows when the store holds them sparse, then a
  // view of the store itself when `nodes` is every node in order (keep `features` alive, unchanged,
  // while the rows are in use).
  static InputRows gather(const FeatureStore& features, std::span<const NodeId> nodes);

  bool is_sparse() const { return is_sparse_; }
  std::int64_t rows() const { return is_sparse_ ? sparse().rows : dense_.rows(); }
  bool empty() const { return rows() == 0; }
  const Matrix& dense() const { return dense_; }
  // The sparse rows, valid while this object lives.
  cpu::SparseMatrixView sparse() const {
    return in_place_.has_value() ? *in_place_ : cpu::SparseMatrixView(gathered_);
  }

 private:
  explicit InputRows(cpu::SparseMatrixView in_place) : in_place_(in_place), is_sparse_(true) {}

  Matrix dense_;
  cpu::SparseMatrix gathered_;
  std::optional<cpu::SparseMatrixView> in_place_;  // every row of the store, not copied
  bool is_sparse_ = false;
};

}  // namespace gnnbed
