#pragma once
// The graph every engine works on: compressed sparse rows over *in*-edges, so that aggregating a
// node's neighbourhood reads its in-neighbours contiguously. Offsets are 64-bit (billions of
// edges), node ids 32-bit (up to 2^31 - 1 nodes). An undirected graph stores both directions.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "workloads/shared_array.hpp"

namespace gnnbed {

using NodeId = std::int32_t;
using EdgeIndex = std::int64_t;

class Graph {
 public:
  Graph() = default;

  // Validates the arrays (throws InputError naming `origin`): offsets has num_nodes + 1 entries,
  // starts at 0, never decreases and ends at sources.size(); every source id is in range.
  Graph(SharedArray<EdgeIndex> offsets, SharedArray<NodeId> sources, const std::string& origin);

  std::int64_t num_nodes() const { return num_nodes_; }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(sources_.size()); }

  std::span<const NodeId> in_neighbors(NodeId v) const {
    const auto begin = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v)]);
    const auto end = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v) + 1]);
    return sources_.span().subspan(begin, end - begin);
  }
  std::int64_t in_degree(NodeId v) const {
    return offsets_[static_cast<std::size_t>(v) + 1] - offsets_[static_cast<std::size_t>(v)];
  }

  std::span<const EdgeIndex> offsets() const { return offsets_.span(); }
  std::span<const NodeId> sources() const { return sources_.span(); }

  // True when every edge u->v has its reverse v->u (neighbour lists must be sorted, as the
  // builder leaves them).
  bool is_symmetric() const;

 private:
  std::int64_t num_nodes_ = 0;
  SharedArray<EdgeIndex> offsets_{std::vector<EdgeIndex>{0}};
  SharedArray<NodeId> sources_;
};

struct EdgeListOptions {
  bool symmetrize = true;        // add v->u for every u->v (undirected input)
  bool drop_self_loops = false;  // remove u->u
  bool deduplicate = true;       // keep one copy of repeated edges
};

// Builds the in-edge CSR of the edges src[i] -> dst[i]. Each node's in-neighbours come out sorted,
// so the result does not depend on input order or thread count. Ids must lie in [0, num_nodes)
// (throws InputError naming `origin` otherwise).
Graph build_graph(std::int64_t num_nodes, std::span<const NodeId> src, std::span<const NodeId> dst,
                  const EdgeListOptions& options, const std::string& origin);

// The 32-bit node-id limit, checked wherever a node count comes from outside.
void check_node_count(std::int64_t num_nodes, const std::string& origin);

}  // namespace gnnbed
