#pragma once
// Full-graph training on a partitioned graph (ROC): every rank computes its own nodes at every
// layer from their in-edges and the representations of their in-neighbours, some of which other
// ranks own (the halo). A rank's share of the graph is one block used by every layer: its nodes as
// destinations, in increasing id order, with all their in-edges; the sources are its nodes, then
// the halo in order of first appearance (as make_block numbers them). The block carries the whole
// graph's GCN degree of every source, so that a GCN layer normalises as on the whole graph.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "workloads/graph.hpp"
#include "workloads/partition.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

// Blocks of full in-neighbourhoods, numbered as make_block numbers them (destinations first, then
// every other in-neighbour in order of first appearance), built in time linear in their edges: a
// scratch array maps node ids to block positions and is cleared after each.
class NeighbourhoodBlockBuilder {
 public:
  explicit NeighbourhoodBlockBuilder(const Graph& structure);
  // `structure` must hold the in-edges of `dst` (distinct ids).
  Block build(std::span<const NodeId> dst);

 private:
  const Graph& structure_;
  std::vector<std::int32_t> local_;
};

// GCN's normalisation degree of every node of the whole graph: its out-edges plus a self loop (what
// gcn_source_degrees counts on full_graph_block).
std::vector<std::int32_t> gcn_degrees(const Graph& graph);

// The share of the nodes `owned` (increasing ids), from a structure that holds at least their
// in-edges; `degrees` (per node id) are the whole graph's GCN degrees.
Block local_graph_block(const Graph& structure, std::span<const NodeId> owned,
                        std::span<const std::int32_t> degrees);

// Every rank's share of `graph` (the whole graph), in rank order; `degrees` are the graph's GCN
// degrees (gcn_degrees).
std::vector<std::shared_ptr<const Block>> local_graph_blocks(const Graph& graph,
                                                             const NodePartition& partition,
                                                             std::span<const std::int32_t> degrees);

}  // namespace gnnbed
