#include "exec/tensor.hpp"

#include "workloads/common/random.hpp"

namespace gnnbed {

Matrix uniform_matrix(std::int64_t rows, std::int64_t cols, float low, float high,
                      std::uint64_t seed) {
  Matrix m(rows, cols);
  const double width = static_cast<double>(high) - static_cast<double>(low);
  for (std::int64_t i = 0; i < m.size(); ++i) {
    const double u = unit_double(hash_mix(seed, static_cast<std::uint64_t>(i)));
    m.data()[i] = static_cast<float>(static_cast<double>(low) + u * width);
  }
  return m;
}

}  // namespace gnnbed
