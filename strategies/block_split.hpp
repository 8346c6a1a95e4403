#pragma once
// A block's destinations split by what their sources wait for: the destinations whose every
// source (their own row and each in-neighbour's) is at hand, and the others. Each part is a block
// of its own over the same edges, so a layer over the two parts computes what it computes over the
// whole block, destination by destination (a destination's aggregation, GCN's normalisation and
// GAT's softmax read only its own in-edges). A strategy computes the first part while the sources
// of the second are still moving (NeutronStar's overlap of communication with compute).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "workloads/sampler.hpp"

namespace gnnbed {

// One part of a split block.
struct BlockPart {
  std::shared_ptr<const Block> block;
  std::vector<std::int32_t> destinations;  // each destination's position among the whole block's
  std::vector<std::int32_t> sources;       // each source's position among the whole block's
};

struct BlockSplit {
  BlockPart ready;    // every source at hand
  BlockPart waiting;  // at least one source not
};

// Splits `block` by `at_hand` (one flag per source of the block). Each part numbers its sources
// as blocks do: its destinations first (in the block's order), then the other in-neighbours in
// order of first appearance; it keeps the block's source degrees (GCN's normalisation over the
// whole graph) where the block has them. Error when `at_hand` is not one flag per source.
BlockSplit split_by_sources_at_hand(const Block& block, const std::vector<bool>& at_hand);

}  // namespace gnnbed
