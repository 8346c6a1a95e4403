#pragma once
// Node features, either stored (float32, row-major, owned or memory-mapped) or generated on demand
// from (seed, node, column) so that a papers-scale workload needs no feature storage at all.
// Strategies read features through `gather`, by rows and by a column range: DGL-style pull reads
// whole rows, P3 reads its slice of the feature dimension.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "workloads/graph.hpp"
#include "workloads/shared_array.hpp"

namespace gnnbed {

class FeatureStore {
 public:
  virtual ~FeatureStore() = default;

  virtual std::int64_t num_nodes() const = 0;
  virtual int dim() const = 0;

  // Writes the features of `nodes`, columns [column_begin, column_end), row-major into `out`
  // (nodes.size() x (column_end - column_begin) floats).
  virtual void gather(std::span<const NodeId> nodes, int column_begin, int column_end,
                      float* out) const = 0;

  // Bytes of feature storage held in memory or mapped (0 for generated features).
  virtual std::int64_t stored_bytes() const = 0;

  // What the features are, for results and summaries.
  virtual nlohmann::json describe() const = 0;

  // The fraction of the rows' groups of kDropoutGroupEntries entries that hold a nonzero entry:
  // about 0.05 for bag-of-words features, 1 for dense ones. 1 unless the store knows better
  // (computed features are dense).
  virtual double nonzero_group_fraction() const { return 1.0; }

  void gather(std::span<const NodeId> nodes, float* out) const { gather(nodes, 0, dim(), out); }
};

// Checks a gather's column range [column_begin, column_end) against `dim`; throws Error.
void check_feature_columns(int dim, int column_begin, int column_end);

// Checks stored feature values (num_nodes x dim, row-major), as every loader must: "" when every
// value is finite, else "node N feature J is V" for the first that is not (one parallel pass).
std::string non_finite_feature(std::span<const float> values, int dim);

class StoredFeatures final : public FeatureStore {
 public:
  // `values` holds num_nodes x dim floats, row-major.
  StoredFeatures(std::int64_t num_nodes, int dim, SharedArray<float> values);
  using FeatureStore::gather;

  std::int64_t num_nodes() const override { return num_nodes_; }
  int dim() const override { return dim_; }
  void gather(std::span<const NodeId> nodes, int column_begin, int column_end,
              float* out) const override;
  std::int64_t stored_bytes() const override;
  nlohmann::json describe() const override;
  // One pass over the stored values.
  double nonzero_group_fraction() const override;

  std::span<const float> values() const { return values_.span(); }
  std::span<const float> row(NodeId v) const {
    return values_.span().subspan(static_cast<std::size_t>(v) * static_cast<std::size_t>(dim_),
                                  static_cast<std::size_t>(dim_));
  }

  // A copy with every row scaled to sum to 1 (rows that sum to 0 stay 0), as Kipf & Welling
  // preprocess bag-of-words features.
  StoredFeatures row_normalized() const;

 private:
  std::int64_t num_nodes_;
  int dim_;
  SharedArray<float> values_;
  bool row_normalized_ = false;
};

// For readers of files that keep generated features as parameters: their class means take
// num_classes x dim floats, which nothing else in such a file bounds. Throws InputError naming
// `file` and feature_dim when that is more memory than is available.
void require_memory_for_generated_features(std::int64_t num_classes, int dim,
                                           const std::string& file);

// Class-conditional features, computed on demand: feature j of node v is
//   signal * mean(label(v), j) + noise(seed, v, j),
// where mean(c, j) = +-1 (a seeded sign per class and column) and the noise has mean 0 and
// variance 1: the sum of four uniform 16-bit draws from one hash, centred and scaled (Irwin-Hall,
// close to a standard normal within +-3.46). One hash and no transcendental function per entry
// keeps on-demand features about as cheap to read as stored ones. With signal 0 the features are
// pure noise; nodes without a label (-1) get noise only.
class GeneratedFeatures final : public FeatureStore {
 public:
  GeneratedFeatures(int dim, SharedArray<std::int32_t> labels, float signal, std::uint64_t seed);
  using FeatureStore::gather;

  std::int64_t num_nodes() const override { return static_cast<std::int64_t>(labels_.size()); }
  int dim() const override { return dim_; }
  void gather(std::span<const NodeId> nodes, int column_begin, int column_end,
              float* out) const override;
  // The class-mean table (num_classes x dim signs) is computed, not stored per node.
  std::int64_t stored_bytes() const override { return 0; }
  nlohmann::json describe() const override;

  float signal() const { return signal_; }
  std::uint64_t seed() const { return seed_; }

  // The value of one entry; gather() computes exactly this.
  float value(NodeId v, int column) const;

 private:
  // signal * mean(c, j) for every class c and column j, row-major.
  float class_mean(std::int32_t label, int column) const {
    return class_means_[static_cast<std::size_t>(label) * static_cast<std::size_t>(dim_) +
                        static_cast<std::size_t>(column)];
  }

  int dim_;
  SharedArray<std::int32_t> labels_;
  float signal_;
  std::uint64_t seed_;
  std::vector<float> class_means_;
};

}  // namespace gnnbed
