#pragma once
// Workloads sized like the P3 paper's datasets (R-MAT structure, generated labels and features),
// with a scale factor applied to node, edge and split counts (average degree is kept).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/dataset.hpp"

namespace gnnbed {

struct PresetSpec {
  std::string name;
  std::string modelled_on;  // the real dataset and where its numbers come from
  std::int64_t num_nodes;
  std::int64_t num_undirected_edges;
  int feature_dim;
  int num_classes;
  std::int64_t num_train, num_val, num_test;
  // R-MAT quadrant probabilities of the structure (d = 1 - a - b - c).
  double rmat_a = 0.57, rmat_b = 0.19, rmat_c = 0.19;
};

const std::vector<PresetSpec>& presets();

// Throws ConfigError listing the known names when `name` is not one.
const PresetSpec& find_preset(std::string_view name);

// The counts of `spec` multiplied by `scale` (0 < scale <= 1 normally; at least 1 of each).
PresetSpec scaled(const PresetSpec& spec, double scale);

// R-MAT structure, uniform labels and class-conditional generated features (so that training on
// a preset learns something), a seeded random split.
Dataset generate_preset(const PresetSpec& spec, std::uint64_t seed);

}  // namespace gnnbed
