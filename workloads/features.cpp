#include "workloads/features.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/parallel_copy.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

void check_feature_columns(int dim, int column_begin, int column_end) {
  if (column_begin < 0 || column_end > dim || column_begin > column_end) {
    throw Error("feature columns [" + std::to_string(column_begin) + ", " +
                std::to_string(column_end) + ") are outside [0, " + std::to_string(dim) + ")");
  }
}

std::string non_finite_feature(std::span<const float> values, int dim) {
  const auto count = static_cast<std::int64_t>(values.size());
  std::int64_t first = count;
#pragma omp parallel for schedule(static) reduction(min : first) if (count > 65536)
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[static_cast<std::size_t>(i)])) first = std::min(first, i);
  }
  if (first == count || dim <= 0) return "";
  std::ostringstream text;
  text << "node " << first / dim << " feature " << first % dim << " is "
       << values[static_cast<std::size_t>(first)];
  return text.str();
}

StoredFeatures::StoredFeatures(std::int64_t num_nodes, int dim, SharedArray<float> values)
    : num_nodes_(num_nodes), dim_(dim), values_(std::move(values)) {
  if (dim <= 0)
    throw Error("stored features need a positive dimension, got " + std::to_string(dim));
  if (static_cast<std::int64_t>(values_.size()) != num_nodes * dim) {
    throw Error("stored features hold " + std::to_string(values_.size()) + " values, expected " +
                std::to_string(num_nodes) + " x " + std::to_string(dim));
  }
}

void StoredFeatures::gather(std::span<const NodeId> nodes, int column_begin, int column_end,
                            float* out) const {
  check_feature_columns(dim_, column_begin, column_end);
  const std::int64_t width = column_end - column_begin;
  const float* const first = values_.data() + column_begin;
  gather_float_rows(static_cast<std::int64_t>(nodes.size()), width, out, width,
                    [&](std::int64_t i) {
                      return first + static_cast<std::int64_t>(nodes[static_cast<std::size_t>(i)]) *
                                         static_cast<std::int64_t>(dim_);
                    });
}

double StoredFeatures::nonzero_group_fraction() const {
  if (num_nodes_ == 0 || dim_ == 0) return 1.0;
  const std::int64_t groups_per_row = (dim_ + kDropoutGroupEntries - 1) / kDropoutGroupEntries;
  std::int64_t nonzero_groups = 0;
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    const std::span<const float> values = row(static_cast<NodeId>(v));
    for (std::int64_t begin = 0; begin < dim_; begin += kDropoutGroupEntries) {
      const std::int64_t end = std::min<std::int64_t>(dim_, begin + kDropoutGroupEntries);
      for (std::int64_t j = begin; j < end; ++j) {
        if (values[static_cast<std::size_t>(j)] != 0.0f) {
          ++nonzero_groups;
          break;
        }
      }
    }
  }
  return static_cast<double>(nonzero_groups) / static_cast<double>(num_nodes_ * groups_per_row);
}

std::int64_t StoredFeatures::stored_bytes() const {
  return static_cast<std::int64_t>(values_.size() * sizeof(float));
}

nlohmann::json StoredFeatures::describe() const {
  return {
      {"kind", "stored"}, {"dtype", "float32"}, {"dim", dim_}, {"row_normalized", row_normalized_}};
}

StoredFeatures StoredFeatures::row_normalized() const {
  std::vector<float> scaled(values_.begin(), values_.end());
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    float* row_values =
        scaled.data() + static_cast<std::size_t>(v) * static_cast<std::size_t>(dim_);
    double sum = 0;
    for (int j = 0; j < dim_; ++j) sum += row_values[j];
    if (sum == 0) continue;
    const auto inverse = static_cast<float>(1.0 / sum);
    for (int j = 0; j < dim_; ++j) row_values[j] *= inverse;
  }
  StoredFeatures result(num_nodes_, dim_, SharedArray(std::move(scaled)));
  result.row_normalized_ = true;
  return result;
}

namespace {

constexpr std::uint64_t kColumnStride = 0x9e3779b97f4a7c15ULL;

// Mean 0, variance 1: four 16-bit uniforms summed (Irwin-Hall), centred and scaled.
float unit_noise(std::uint64_t bits) {
  constexpr float kScale = 1.7320508f / 65536.0f;  // sqrt(3) / 2^16
  const auto sum = static_cast<float>((bits & 0xffff) + ((bits >> 16) & 0xffff) +
                                      ((bits >> 32) & 0xffff) + (bits >> 48));
  return (sum + 2.0f) * kScale - 2.0f * 1.7320508f;
}

}  // namespace

void require_memory_for_generated_features(std::int64_t num_classes, int dim,
                                           const std::string& file) {
  require_memory_for(num_classes * dim * static_cast<std::int64_t>(sizeof(float)),
                     "generated features' class means (num_classes x feature_dim floats)", file, 0,
                     "feature_dim");
}

GeneratedFeatures::GeneratedFeatures(int dim, SharedArray<std::int32_t> labels, float signal,
                                     std::uint64_t seed)
    : dim_(dim), labels_(std::move(labels)), signal_(signal), seed_(seed) {
  if (dim <= 0)
    throw Error("generated features need a positive dimension, got " + std::to_string(dim));
  std::int32_t max_label = -1;
  for (const std::int32_t label : labels_) max_label = std::max(max_label, label);
  const auto num_classes = static_cast<std::size_t>(max_label + 1);
  class_means_.resize(num_classes * static_cast<std::size_t>(dim));
  for (std::size_t c = 0; c < num_classes; ++c) {
    for (int j = 0; j < dim; ++j) {
      const std::uint64_t sign_bits =
          hash_mix(seed_ ^ 0x5eed5eed5eed5eedULL, c, static_cast<std::uint64_t>(j));
      class_means_[c * static_cast<std::size_t>(dim) + static_cast<std::size_t>(j)] =
          (sign_bits & 1) != 0 ? signal_ : -signal_;
    }
  }
}

float GeneratedFeatures::value(NodeId v, int column) const {
  const std::uint64_t row_key = hash_mix(seed_, static_cast<std::uint64_t>(v));
  const float noise =
      unit_noise(splitmix64(row_key + static_cast<std::uint64_t>(column) * kColumnStride));
  const std::int32_t label = labels_[static_cast<std::size_t>(v)];
  return label < 0 ? noise : noise + class_mean(label, column);
}

void GeneratedFeatures::gather(std::span<const NodeId> nodes, int column_begin, int column_end,
                               float* out) const {
  check_feature_columns(dim_, column_begin, column_end);
  const auto width = static_cast<std::size_t>(column_end - column_begin);
  const auto count = static_cast<std::int64_t>(nodes.size());
#pragma omp parallel for schedule(static) if (count > 256)
  for (std::int64_t i = 0; i < count; ++i) {
    float* row_out = out + static_cast<std::size_t>(i) * width;
    const NodeId v = nodes[static_cast<std::size_t>(i)];
    const std::uint64_t row_key = hash_mix(seed_, static_cast<std::uint64_t>(v));
    const std::int32_t label = labels_[static_cast<std::size_t>(v)];
    for (int j = column_begin; j < column_end; ++j) {
      const float noise =
          unit_noise(splitmix64(row_key + static_cast<std::uint64_t>(j) * kColumnStride));
      row_out[j - column_begin] = label < 0 ? noise : noise + class_mean(label, j);
    }
  }
}

nlohmann::json GeneratedFeatures::describe() const {
  return {{"kind", "generated"}, {"dim", dim_}, {"signal", signal_}, {"seed", seed_}};
}

}  // namespace gnnbed
