#pragma once
// A node-classification workload: structure, features, labels and a train/validation/test split.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/features.hpp"
#include "workloads/graph.hpp"
#include "workloads/shared_array.hpp"

namespace gnnbed {

struct Split {
  std::vector<NodeId> train;
  std::vector<NodeId> val;
  std::vector<NodeId> test;
};

struct Dataset {
  std::string name;
  Graph graph;
  std::shared_ptr<const FeatureStore> features;  // null for a structure-only workload
  SharedArray<std::int32_t> labels;              // one per node, -1 = unlabelled
  int num_classes = 0;
  Split split;

  std::int64_t num_nodes() const { return graph.num_nodes(); }
  int feature_dim() const { return features ? features->dim() : 0; }

  // Checks that the parts agree (throws InputError naming `origin` and the part at fault): one
  // label and one feature row per node, labels in [-1, num_classes), split ids in range, distinct,
  // in one split only, and labelled.
  void validate(const std::string& origin) const;

  // Counts and descriptions for results and the human summary.
  nlohmann::json summary() const;
};

// Splits nodes with a label into train/val/test at random (seeded): the first `num_train` of a
// seeded permutation train, the next `num_val` validate, the next `num_test` test.
Split random_split(std::span<const std::int32_t> labels, std::int64_t num_train,
                   std::int64_t num_val, std::int64_t num_test, std::uint64_t seed);

}  // namespace gnnbed
