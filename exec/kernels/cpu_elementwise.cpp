#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed::cpu {
namespace {

// Dropout's mask bits for one row: hash_mix(key, id, group) for each group of
// kDropoutGroupEntries columns, 16 bits per entry. The row's prefix of the hash is computed once
// and each group's position part comes from a table, so that a group costs two splitmix64 steps
// rather than five (the same value: random.hpp's identities).
class DropoutRowBits {
 public:
  // Position parts of the groups holding columns [column_begin, column_end).
  DropoutRowBits(std::int64_t column_begin, std::int64_t column_end)
      : first_group_(column_begin / kDropoutGroupEntries) {
    const std::int64_t last_group = (column_end + kDropoutGroupEntries - 1) / kDropoutGroupEntries;
    for (std::int64_t g = first_group_; g < last_group; ++g) {
      positions_.push_back(hash_mix_position(static_cast<std::uint64_t>(g)));
    }
  }

  static std::uint64_t row_seed(std::uint64_t key, std::uint64_t id) {
    return hash_mix_prefix(key, id);
  }
  // The group's hash (hash_mix(key, id, group)), shifted so that its low 16 bits decide `column`.
  std::uint64_t bits(std::uint64_t row_seed, std::int64_t column) const {
    const std::int64_t group = column / kDropoutGroupEntries;
    const std::uint64_t position = positions_[static_cast<std::size_t>(group - first_group_)];
    return splitmix64(splitmix64(row_seed ^ position)) >> (16 * (column % kDropoutGroupEntries));
  }

 private:
  std::int64_t first_group_;
  std::vector<std::uint64_t> positions_;
};

// `value` where `keep`, else +0: a select by bit mask rather than a branch, which a random mask
// would mispredict at every other entry (SparseMatrixView::weight selects the same way).
inline float kept_or_zero(float value, bool keep) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(keep);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(value) & mask);
}

// `value`, or +0 where `bits`' low 16 bits fall below `threshold`.
inline float masked(float value, std::uint64_t bits, std::uint64_t threshold) {
  return kept_or_zero(value, (bits & 0xffff) >= threshold);
}

std::uint64_t dropout_threshold(float rate) {
  return static_cast<std::uint64_t>(std::lround(static_cast<double>(rate) * 65536.0));
}

// Applies inverted dropout to the rows of `source` and writes them to `x` (which may be `source`
// itself: in place). With `skip_zero_groups` (forward only), groups of zeros are copied without
// hashing: they stay zero whatever the mask, which makes dropout on sparse bag-of-words features
// cheap. Reading one matrix while writing the other saves a pass over memory against a copy
// followed by dropout in place.
void apply_dropout(const Matrix& source, Matrix& x, std::span<const std::int32_t> row_ids,
                   float rate, std::uint64_t key, std::int64_t column_offset,
                   bool skip_zero_groups) {
  check_dropout_rows(source, row_ids);
  if (&source != &x) x.reshape_for_overwrite(source.rows(), source.cols());
  if (rate <= 0.0f) {
    if (&source != &x) std::copy(source.values().begin(), source.values().end(), x.data());
    return;
  }
  const float scale = 1.0f / (1.0f - rate);
  const std::uint64_t threshold = dropout_threshold(rate);
  const std::int64_t cols = x.cols();
  const DropoutRowBits mask(column_offset, column_offset + cols);
  const float* const from_values = source.data();
  float* const to_values = x.data();
#pragma omp parallel for schedule(static) if (x.size() > 16384)
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    const float* from = from_values + i * cols;
    float* to = to_values + i * cols;
    const std::uint64_t row_seed = DropoutRowBits::row_seed(
        key, static_cast<std::uint64_t>(row_ids[static_cast<std::size_t>(i)]));
    // Column j of this matrix is column j + column_offset of the full feature matrix.
    std::int64_t j = 0;
    while (j < cols) {
      const std::int64_t global = j + column_offset;
      const std::int64_t group = global / kDropoutGroupEntries;
      const std::int64_t end = std::min(cols, (group + 1) * kDropoutGroupEntries - column_offset);
      if (skip_zero_groups &&
          std::all_of(from + j, from + end, [](float value) { return value == 0.0f; })) {
        std::fill(to + j, to + end, 0.0f);
        j = end;
        continue;
      }
      std::uint64_t bits = mask.bits(row_seed, global);
      for (; j < end; ++j, bits >>= 16) to[j] = masked(from[j] * scale, bits, threshold);
    }
  }
}

}  // namespace

void check_dropout_rows(const Matrix& x, std::span<const std::int32_t> row_ids) {
  if (static_cast<std::int64_t>(row_ids.size()) != x.rows()) {
    throw Error("dropout: " + std::to_string(row_ids.size()) + " row ids for " +
                std::to_string(x.rows()) + " rows");
  }
}

void check_labels(const Matrix& logits, std::span<const std::int32_t> labels) {
  if (static_cast<std::int64_t>(labels.size()) != logits.rows()) {
    throw Error("softmax_cross_entropy: " + std::to_string(labels.size()) + " labels for " +
                std::to_string(logits.rows()) + " rows");
  }
  for (const std::int32_t label : labels) {
    if (label < 0 || label >= logits.cols()) {
      throw Error("softmax_cross_entropy: label " + std::to_string(label) + " outside [0, " +
                  std::to_string(logits.cols()) + ")");
    }
  }
}

void relu_forward(Matrix& x) {
  float* values = x.data();
  const std::int64_t count = x.size();
#pragma omp parallel for schedule(static) if (count > 65536)
  for (std::int64_t i = 0; i < count; ++i) values[i] = std::max(values[i], 0.0f);
}

void relu_backward(const Matrix& output, Matrix& grad) {
  if (output.rows() != grad.rows() || output.cols() != grad.cols()) {
    throw Error("relu_backward: shape mismatch");
  }
  const float* out = output.data();
  float* g = grad.data();
  const std::int64_t count = grad.size();
#pragma omp parallel for schedule(static) if (count > 65536)
  for (std::int64_t i = 0; i < count; ++i) {
    if (out[i] <= 0.0f) g[i] = 0.0f;
  }
}

void dropout_forward_copy(const Matrix& x, Matrix& out, std::span<const std::int32_t> row_ids,
                          float rate, std::uint64_t key) {
  apply_dropout(x, out, row_ids, rate, key, 0, true);
}

namespace {

void check_sparse_dropout_rows(SparseMatrixView x, std::span<const std::int32_t> row_ids) {
  if (static_cast<std::int64_t>(row_ids.size()) != x.rows) {
    throw Error("dropout: " + std::to_string(row_ids.size()) + " row ids for " +
                std::to_string(x.rows) + " sparse rows");
  }
}

// Calls keep(entry, kept) for every stored entry of `x` with dropout's decision for it (rate > 0):
// dropout_forward's mask at the entry's row id and column. The entries are cut into ranges of
// whole 64-entry words, one per thread, so that a mask of one bit per entry is written without
// two threads sharing a word.
template <typename Keep>
void decide_sparse_dropout(SparseMatrixView x, std::span<const std::int32_t> row_ids, float rate,
                           std::uint64_t key, Keep keep) {
  check_sparse_dropout_rows(x, row_ids);
  if (x.nonzeros() == 0) return;
  const std::uint64_t threshold = dropout_threshold(rate);
  const DropoutRowBits mask(0, x.cols);
  const std::int64_t first_entry = x.offsets.front();
  const std::int64_t end_entry = x.offsets.back();
  const std::int64_t words = (end_entry + 63) / 64 - first_entry / 64;
  const int parts = x.nonzeros() > 16384 ? omp_get_max_threads() : 1;
#pragma omp parallel for schedule(static, 1) num_threads(parts)
  for (int p = 0; p < parts; ++p) {
    const std::int64_t begin = std::max(first_entry, (first_entry / 64 + words * p / parts) * 64);
    const std::int64_t end = std::min(end_entry, (first_entry / 64 + words * (p + 1) / parts) * 64);
    if (begin >= end) continue;
    // The row holding entry `begin`: the last whose offset is at most begin.
    auto row = static_cast<std::int64_t>(
        std::upper_bound(x.offsets.begin(), x.offsets.end(), begin) - x.offsets.begin() - 1);
    for (std::int64_t e = begin; e < end; ++row) {
      const std::uint64_t row_seed = DropoutRowBits::row_seed(
          key, static_cast<std::uint64_t>(row_ids[static_cast<std::size_t>(row)]));
      const std::int64_t row_end = std::min(end, x.offsets[static_cast<std::size_t>(row) + 1]);
      for (; e < row_end; ++e) {
        const auto entry = static_cast<std::size_t>(e);
        keep(entry, (mask.bits(row_seed, x.columns[entry]) & 0xffff) >= threshold);
      }
    }
  }
}

}  // namespace

void dropout_forward_sparse(SparseMatrix& x, std::span<const std::int32_t> row_ids, float rate,
                            std::uint64_t key) {
  if (rate <= 0.0f) {
    check_sparse_dropout_rows(x, row_ids);
    return;
  }
  const float scale = 1.0f / (1.0f - rate);
  float* const weights = x.weights.data();
  decide_sparse_dropout(x, row_ids, rate, key, [&](std::size_t entry, bool kept) {
    weights[entry] = kept_or_zero(weights[entry] * scale, kept);
  });
}

SparseMatrixView dropout_sparse_view(SparseMatrixView x, std::span<const std::int32_t> row_ids,
                                     float rate, std::uint64_t key,
                                     std::vector<std::uint64_t>& kept_bits) {
  if (rate <= 0.0f || x.nonzeros() == 0) {
    check_sparse_dropout_rows(x, row_ids);
    return x;
  }
  kept_bits.assign((static_cast<std::size_t>(x.offsets.back()) + 63) / 64, 0);
  std::uint64_t* const words = kept_bits.data();
  decide_sparse_dropout(x, row_ids, rate, key, [&](std::size_t entry, bool kept) {
    words[entry / 64] |= static_cast<std::uint64_t>(kept) << (entry % 64);
  });
  return x.with_dropout(kept_bits, 1.0f / (1.0f - rate));
}

void dropout_forward(Matrix& x, std::span<const std::int32_t> row_ids, float rate,
                     std::uint64_t key, std::int64_t column_offset) {
  apply_dropout(x, x, row_ids, rate, key, column_offset, true);
}

void dropout_backward(Matrix& grad, std::span<const std::int32_t> row_ids, float rate,
                      std::uint64_t key, std::int64_t column_offset) {
  apply_dropout(grad, grad, row_ids, rate, key, column_offset, false);
}

double softmax_cross_entropy(const Matrix& logits, std::span<const std::int32_t> labels,
                             Matrix& grad, std::int64_t& correct) {
  const std::int64_t rows = logits.rows();
  const std::int64_t cols = logits.cols();
  check_labels(logits, labels);
  grad.reset(rows, cols);
  if (rows == 0) {
    correct = 0;
    return 0.0;
  }
  const double inverse_rows = 1.0 / static_cast<double>(rows);
  double loss = 0.0;
  std::int64_t hits = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss, hits) if (rows > 1024)
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* z = logits.row(i);
    const std::int32_t label = labels[static_cast<std::size_t>(i)];
    const float* max_position = std::max_element(z, z + cols);
    if (max_position - z == label) ++hits;
    const double max_logit = *max_position;
    double sum = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(z[j]) - max_logit);
    const double log_sum = std::log(sum) + max_logit;
    loss += log_sum - static_cast<double>(z[label]);
    float* g = grad.row(i);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double probability = std::exp(static_cast<double>(z[j]) - log_sum);
      g[j] = static_cast<float>((probability - (j == label ? 1.0 : 0.0)) * inverse_rows);
    }
  }
  correct = hits;
  return loss * inverse_rows;
}

std::int64_t count_correct(const Matrix& logits, std::span<const std::int32_t> labels) {
  return count_correct(logits, 0, labels);
}

std::int64_t count_correct(const Matrix& logits, std::int64_t first_row,
                           std::span<const std::int32_t> labels) {
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const float* z = logits.row(first_row + static_cast<std::int64_t>(i));
    if (std::max_element(z, z + logits.cols()) - z == labels[i]) ++hits;
  }
  return hits;
}

}  // namespace gnnbed::cpu
