#include <algorithm>
#include <string>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed::cpu {

void check_spmm(const SparseMatrix& a, const Matrix& x) {
  if (x.rows() != a.cols) {
    throw Error("spmm: sparse matrix has " + std::to_string(a.cols) +
                " columns but the dense input has " + std::to_string(x.rows()) + " rows");
  }
}

void check_spmm_transposed(const SparseMatrix& a, const Matrix& x) {
  if (x.rows() != a.rows) {
    throw Error("spmm_transposed: sparse matrix has " + std::to_string(a.rows) +
                " rows but the dense input has " + std::to_string(x.rows()) + " rows");
  }
}

void spmm(const SparseMatrix& a, const Matrix& x, Matrix& y) {
  check_spmm(a, x);
  const std::int64_t width = x.cols();
  y.reset(a.rows, width);
  // Raw pointers taken once: Matrix's accessors check residency (exec/tensor.hpp) on each call.
  float* const y_values = y.data();
  const float* const x_values = x.data();
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t r = 0; r < a.rows; ++r) {
    float* out = y_values + r * width;
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const float w = a.weights[static_cast<std::size_t>(e)];
      const float* in = x_values + a.columns[static_cast<std::size_t>(e)] * width;
      for (std::int64_t j = 0; j < width; ++j) out[j] += w * in[j];
    }
  }
}

Matrix densified(const SparseMatrix& a) {
  Matrix dense(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    float* row = dense.row(r);
    for (auto e = a.offsets[static_cast<std::size_t>(r)];
         e < a.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      row[a.columns[static_cast<std::size_t>(e)]] = a.weights[static_cast<std::size_t>(e)];
    }
  }
  return dense;
}

}  // namespace gnnbed::cpu
