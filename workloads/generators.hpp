#pragma once
// Synthetic workloads, each a pure function of its parameters and seed.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/dataset.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {

// Recursive-matrix (R-MAT / Kronecker) power-law graph: undirected, no self loops, no duplicate
// edges, exactly `num_undirected_edges` edges (2x that many CSR entries), node ids randomly
// permuted so that the high-degree nodes are not all at small ids.
struct RmatParams {
  std::int64_t num_nodes = 0;
  std::int64_t num_undirected_edges = 0;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c (Graph500's values)
  std::uint64_t seed = 1;
};
Graph generate_rmat(const RmatParams& params);

// Throws ConfigError naming the field (rmat.a ... rmat.d, d = 1 - a - b - c) unless every
// quadrant probability lies in [0, 1].
void check_rmat_probabilities(double a, double b, double c);

// One label per node, uniform over classes, from the seed.
std::vector<std::int32_t> generate_labels(std::int64_t num_nodes, int num_classes,
                                          std::uint64_t seed);

// Contextual stochastic block model: a learnable graph without a download. Labels uniform over
// classes; each undirected edge joins two nodes of the same class with probability `homophily`,
// else two nodes of different classes; features are GeneratedFeatures with `feature_signal`.
struct CsbmParams {
  std::int64_t num_nodes = 0;
  double average_degree = 10;  // undirected edges = num_nodes * average_degree / 2
  int num_classes = 2;
  double homophily = 0.8;
  int feature_dim = 16;
  float feature_signal = 0.5f;
  double train_fraction = 0.1, val_fraction = 0.1, test_fraction = 0.2;
  std::uint64_t seed = 1;
};
Dataset generate_csbm(const CsbmParams& params);

}  // namespace gnnbed
