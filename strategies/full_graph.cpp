#include "strategies/full_graph.hpp"

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::vector<std::int32_t> gcn_degrees(const Graph& graph) {
  std::vector<std::int32_t> degrees(static_cast<std::size_t>(graph.num_nodes()), 1);
  for (const NodeId s : graph.sources()) ++degrees[static_cast<std::size_t>(s)];
  return degrees;
}

namespace {

Block with_degrees(Block block, std::span<const std::int32_t> degrees) {
  block.source_degrees.reserve(block.src_nodes.size());
  for (const NodeId s : block.src_nodes) {
    block.source_degrees.push_back(degrees[static_cast<std::size_t>(s)]);
  }
  return block;
}

void check_degrees(const Graph& structure, std::span<const std::int32_t> degrees) {
  require(static_cast<std::int64_t>(degrees.size()) == structure.num_nodes(), "degrees",
          std::to_string(degrees.size()) + " degrees for " + std::to_string(structure.num_nodes()) +
              " nodes");
}

}  // namespace

NeighbourhoodBlockBuilder::NeighbourhoodBlockBuilder(const Graph& structure)
    : structure_(structure), local_(static_cast<std::size_t>(structure.num_nodes()), -1) {}

Block NeighbourhoodBlockBuilder::build(std::span<const NodeId> dst) {
  Block block;
  block.num_dst = static_cast<std::int64_t>(dst.size());
  block.src_nodes.assign(dst.begin(), dst.end());
  for (std::size_t d = 0; d < dst.size(); ++d) {
    local_[static_cast<std::size_t>(dst[d])] = static_cast<std::int32_t>(d);
  }
  block.offsets.reserve(dst.size() + 1);
  for (const NodeId v : dst) {
    for (const NodeId u : structure_.in_neighbors(v)) {
      std::int32_t& local = local_[static_cast<std::size_t>(u)];
      if (local < 0) {
        local = static_cast<std::int32_t>(block.src_nodes.size());
        block.src_nodes.push_back(u);
      }
      block.src_index.push_back(local);
    }
    block.offsets.push_back(static_cast<std::int64_t>(block.src_index.size()));
  }
  for (const NodeId u : block.src_nodes) local_[static_cast<std::size_t>(u)] = -1;
  return block;
}

Block local_graph_block(const Graph& structure, std::span<const NodeId> owned,
                        std::span<const std::int32_t> degrees) {
  check_degrees(structure, degrees);
  return with_degrees(NeighbourhoodBlockBuilder(structure).build(owned), degrees);
}

std::vector<std::shared_ptr<const Block>> local_graph_blocks(
    const Graph& graph, const NodePartition& partition, std::span<const std::int32_t> degrees) {
  check_degrees(graph, degrees);
  std::vector<std::vector<NodeId>> owned(static_cast<std::size_t>(partition.num_parts()));
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    owned[static_cast<std::size_t>(partition.owner(v))].push_back(v);
  }
  NeighbourhoodBlockBuilder builder(graph);
  std::vector<std::shared_ptr<const Block>> blocks;
  for (const std::vector<NodeId>& nodes : owned) {
    blocks.push_back(std::make_shared<const Block>(with_degrees(builder.build(nodes), degrees)));
  }
  return blocks;
}

}  // namespace gnnbed
