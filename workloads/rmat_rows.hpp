#pragma once
// R-MAT drawn row by row: a directed R-MAT multigraph whose every in-neighbour list is a pure
// function of (parameters, node, position in the list). The same graph can therefore be computed
// on demand (an implicit graph: nothing stored but O(nodes) offsets), streamed to a binary file in
// node order with O(nodes) memory, or built in memory, with identical content all three ways.
//
// R-MAT (Chakrabarti, Zhan and Faloutsos) drops M edges into a 2^L x 2^L adjacency matrix, each by
// choosing one of four quadrants (probabilities a, b, c, d) at each of L levels. Its edge multiset
// can be drawn row by row instead. The number of edges that land in row r is Binomial(M, p_r) with
// p_r = (a+b)^(zero bits of r) (c+d)^(one bits of r); we draw Poisson(M p_r), which differs from it
// by O(p_r). Given its row, an edge's column bit at each level is 1 with probability b / (a+b)
// under a row bit 0 and d / (c+d) under a row bit 1. Row r holds the in-edges of node perm(r) and
// a column c is the source perm(c), perm being a seeded permutation of the ids (as in
// generate_rmat, which also keeps rows and columns inside [0, n)): rows by normalising p_r over
// the rows in range, columns and self loops by redrawing.
//
// Unlike generate_rmat the graph is directed (u in v's list does not put v in u's) and a list may
// name a source twice, as R-MAT's ball dropping does before deduplication. With b = c, in- and
// out-degrees follow one distribution, as in the symmetrised graphs the P3 paper trains on;
// docs/large_graphs.md measures how close the large presets come to the real graphs.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/common/progress.hpp"
#include "workloads/graph.hpp"
#include "workloads/id_permutation.hpp"

namespace gnnbed {

struct RmatRowsParams {
  std::int64_t num_nodes = 0;
  // Expected CSR entries (in-edges); the drawn total differs by about its square root.
  std::int64_t num_edges = 0;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c
  std::uint64_t seed = 1;
};

class RmatRowsGenerator final : public NeighborGenerator {
 public:
  // Throws ConfigError naming the field when a parameter is unusable.
  explicit RmatRowsGenerator(const RmatRowsParams& params);

  std::int64_t in_degree(NodeId v) const;
  // The j-th in-neighbour of v (for any j >= 0; the graph uses j < in_degree(v)).
  NodeId source(NodeId v, std::int64_t j) const;

  void sources_at(NodeId v, EdgeIndex row_begin, std::span<const EdgeIndex> positions,
                  NodeId* out) const override;
  nlohmann::json describe() const override;

  const RmatRowsParams& params() const { return params_; }
  // Expected in-degree of the nodes whose R-MAT row has `one_bits` bits set.
  double expected_in_degree(int one_bits) const;

 private:
  NodeId column_for_row(std::uint64_t row, std::uint64_t stream) const;

  RmatRowsParams params_;
  int levels_ = 0;
  IdPermutation permutation_;
  std::vector<double> mean_degree_by_one_bits_;  // index: set bits of the row, 0..levels_
  std::uint64_t column_one_threshold_[2] = {};   // 16-bit fixed point, under row bit 0 / 1
  std::uint64_t degree_seed_ = 0;
  std::uint64_t edge_seed_ = 0;
};

// Every node's in-degree, as CSR offsets (n + 1 entries), computed in parallel.
std::vector<EdgeIndex> rmat_rows_offsets(const RmatRowsGenerator& generator,
                                         const ProgressCallback& progress = {});

// The graph with its lists computed on demand (only the offsets are held).
Graph implicit_rmat_rows_graph(const RmatRowsParams& params, const ProgressCallback& progress = {});

// The same, with the offsets kept in `offsets_file`: mapped from it when it exists, else computed
// and written to it (atomically), so that later runs skip the degree pass. InputError for a
// damaged file or one written for other parameters.
Graph implicit_rmat_rows_graph(const RmatRowsParams& params, const std::string& offsets_file,
                               const ProgressCallback& progress);

// The same graph with every list computed once and held in memory.
Graph materialized_rmat_rows_graph(const RmatRowsParams& params);

}  // namespace gnnbed
