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
//
// R-MAT alone has little community structure, so a partitioner such as METIS finds little to
// cut along. With `num_communities` > 1 every node belongs to one of that many equal-sized
// communities and a share `edge_homophily` of the edges joins two nodes of one community,
// as the edges of real graphs mostly join nodes of one class: an edge is drawn as in R-MAT, and
// its second end then moves into (or out of) the first end's community at about the same place
// in R-MAT's recursive order, which keeps the degree distribution close to plain R-MAT's.
// The edges inside and those outside are drawn apart, so the share is exact.
struct RmatParams {
  std::int64_t num_nodes = 0;
  std::int64_t num_undirected_edges = 0;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c (Graph500's values)
  std::uint64_t seed = 1;
  int num_communities = 0;    // 0 or 1: no communities
  double edge_homophily = 0;  // in [0, 1] when there are communities
};
Graph generate_rmat(const RmatParams& params);

// The community of every node of generate_rmat(params): all 0 without communities.
std::vector<std::int32_t> rmat_communities(const RmatParams& params);

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
