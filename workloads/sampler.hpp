#pragma once
// Neighbour sampling into message-flow blocks, as DGL's samplers produce them.
//
// Fanouts are listed by hop from the seeds, as the P3 paper writes them: (25, 10) samples at most
// 25 in-neighbours of every seed, then at most 10 of each of those. A fanout of -1 takes the full
// neighbourhood. Sampling is uniform without replacement and a pure function of
// (seed, batch key, hop, node): the neighbours drawn for a node do not depend on which rank or
// thread draws them, or on what else is in the batch.
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/graph.hpp"

namespace gnnbed {

// One layer of a mini-batch's computation graph. `src_nodes` are global ids; the first
// `num_dst` of them are the destination nodes (so a node's own representation sits at the same
// local index on both sides). Edges are grouped by destination: the in-edges of local destination
// d are src_index[offsets[d] .. offsets[d+1]), each a local index into src_nodes.
struct Block {
  std::vector<NodeId> src_nodes;
  std::int64_t num_dst = 0;
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int32_t> src_index;
  // GCN's normalisation degree of every source in the whole graph (its out-edges plus a self loop)
  // when the block is one rank's share of a full graph and must keep the whole graph's
  // normalisation; empty when the block is normalised on its own edges (sampled blocks, or the
  // whole graph itself).
  std::vector<std::int32_t> source_degrees;

  std::int64_t num_src() const { return static_cast<std::int64_t>(src_nodes.size()); }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(src_index.size()); }
  std::span<const NodeId> dst_nodes() const {
    return std::span<const NodeId>(src_nodes).first(static_cast<std::size_t>(num_dst));
  }
};

// blocks[0] consumes the input features (its src_nodes are the input nodes); blocks[L-1]
// produces the seeds' outputs (its destination nodes are the seeds, in order).
struct MiniBatch {
  std::vector<NodeId> seeds;
  std::vector<Block> blocks;

  std::span<const NodeId> input_nodes() const { return blocks.front().src_nodes; }
};

// The whole graph as one block: every node is a destination and a source, with all its
// in-edges. Full-graph training stacks one of these per layer.
Block full_graph_block(const Graph& graph);

class NeighborSampler {
 public:
  NeighborSampler(const Graph& graph, std::vector<int> fanouts, std::uint64_t seed);

  // Samples the computation graph of `seeds` (distinct ids). `batch_key` tells batches apart
  // (for example epoch * batches_per_epoch + batch), so each gets its own random draws.
  // Thread-safe: concurrent calls may sample different batches.
  MiniBatch sample(std::span<const NodeId> seeds, std::uint64_t batch_key) const;

  const std::vector<int>& fanouts() const { return fanouts_; }
  int num_layers() const { return static_cast<int>(fanouts_.size()); }

 private:
  const Graph* graph_;
  std::vector<int> fanouts_;
  std::uint64_t seed_;
};

// The block whose destinations are `dst_nodes` (distinct) and whose destination d has the in-
// neighbours neighbors[offsets[d] .. offsets[d+1]), numbered as NeighborSampler numbers them:
// destinations first, then every other neighbour in order of first appearance. For assembling a
// block whose neighbours were drawn elsewhere (on the ranks that own the nodes).
Block make_block(std::span<const NodeId> dst_nodes, std::span<const std::int64_t> offsets,
                 std::span<const NodeId> neighbors);

// Draws the sampled in-neighbours of `node` at `hop` (0 = the seeds' hop) into `out` (appended),
// exactly as NeighborSampler does; the building block for sampling on the rank that owns `node`.
void sample_in_neighbors(const Graph& graph, NodeId node, int fanout, std::uint64_t seed,
                         std::uint64_t batch_key, int hop, std::vector<NodeId>& out);

}  // namespace gnnbed
