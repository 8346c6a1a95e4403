#include "strategies/block_split.hpp"

#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// Whether destination `d` of `block` reads only sources at hand: its own row (blocks number the
// destinations first among the sources) and every in-neighbour's.
bool reads_only_at_hand(const Block& block, std::int64_t d, const std::vector<bool>& at_hand) {
  if (!at_hand[static_cast<std::size_t>(d)]) return false;
  const auto first = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(d)]);
  const auto last = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(d) + 1]);
  for (std::size_t e = first; e < last; ++e) {
    if (!at_hand[static_cast<std::size_t>(block.src_index[e])]) return false;
  }
  return true;
}

// The block of `block`'s destinations at `destinations` (increasing positions), with their
// in-edges; `part.sources` says where each of its sources sits among the block's.
BlockPart part_of(const Block& block, std::vector<std::int32_t> destinations) {
  BlockPart part;
  part.destinations = std::move(destinations);
  Block sub;
  sub.num_dst = static_cast<std::int64_t>(part.destinations.size());
  sub.offsets.reserve(part.destinations.size() + 1);
  // The position of each of the block's sources in the part (-1: not one of its sources yet).
  std::vector<std::int32_t> position(block.src_nodes.size(), -1);
  const auto add_source = [&](std::int32_t source) {
    std::int32_t& at = position[static_cast<std::size_t>(source)];
    if (at < 0) {
      at = static_cast<std::int32_t>(part.sources.size());
      part.sources.push_back(source);
      sub.src_nodes.push_back(block.src_nodes[static_cast<std::size_t>(source)]);
    }
    return at;
  };
  for (const std::int32_t d : part.destinations) add_source(d);
  for (const std::int32_t d : part.destinations) {
    const auto first = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(d)]);
    const auto last = static_cast<std::size_t>(block.offsets[static_cast<std::size_t>(d) + 1]);
    for (std::size_t e = first; e < last; ++e)
      sub.src_index.push_back(add_source(block.src_index[e]));
    sub.offsets.push_back(static_cast<std::int64_t>(sub.src_index.size()));
  }
  if (!block.source_degrees.empty()) {
    sub.source_degrees.reserve(part.sources.size());
    for (const std::int32_t s : part.sources) {
      sub.source_degrees.push_back(block.source_degrees[static_cast<std::size_t>(s)]);
    }
  }
  part.block = std::make_shared<const Block>(std::move(sub));
  return part;
}

}  // namespace

BlockSplit split_by_sources_at_hand(const Block& block, const std::vector<bool>& at_hand) {
  if (static_cast<std::int64_t>(at_hand.size()) != block.num_src()) {
    throw Error("split_by_sources_at_hand: " + std::to_string(at_hand.size()) +
                " flags for a block of " + std::to_string(block.num_src()) + " sources");
  }
  std::vector<std::int32_t> ready;
  std::vector<std::int32_t> waiting;
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    (reads_only_at_hand(block, d, at_hand) ? ready : waiting)
        .push_back(static_cast<std::int32_t>(d));
  }
  return {part_of(block, std::move(ready)), part_of(block, std::move(waiting))};
}

}  // namespace gnnbed
