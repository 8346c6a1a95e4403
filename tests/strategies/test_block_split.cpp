// A block split by the sources at hand: each destination lands in the ready part exactly when its
// own row and every in-neighbour's are at hand, and each part keeps the destination's in-edges
// (as node ids, in order) and the block's source degrees, so a layer computes the same rows.
#include <gtest/gtest.h>

#include "strategies/block_split.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// Destinations 10, 11, 12, 13 (sources 0-3), then sources 20 and 21 (4 and 5).
Block example() {
  Block block;
  block.src_nodes = {10, 11, 12, 13, 20, 21};
  block.num_dst = 4;
  // 10 <- 11, 20; 11 <- 12; 12 <- (none); 13 <- 21, 10
  block.offsets = {0, 2, 3, 3, 5};
  block.src_index = {1, 4, 2, 5, 0};
  block.source_degrees = {3, 2, 2, 1, 5, 4};
  return block;
}

std::vector<std::vector<NodeId>> in_neighbours(const Block& block) {
  std::vector<std::vector<NodeId>> lists;
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    std::vector<NodeId>& list = lists.emplace_back();
    for (auto e = block.offsets[static_cast<std::size_t>(d)];
         e < block.offsets[static_cast<std::size_t>(d) + 1]; ++e) {
      list.push_back(
          block.src_nodes[static_cast<std::size_t>(block.src_index[static_cast<std::size_t>(e)])]);
    }
  }
  return lists;
}

TEST(BlockSplit, DestinationsWhoseSourcesAreAllAtHandAreReady) {
  const Block block = example();
  // Source 20 (position 4) is not at hand, nor is 13's own row (position 3).
  const BlockSplit split = split_by_sources_at_hand(block, {true, true, true, false, false, true});
  EXPECT_EQ(split.ready.destinations, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(split.waiting.destinations, (std::vector<std::int32_t>{0, 3}));
  const Block& ready = *split.ready.block;
  EXPECT_EQ(ready.num_dst, 2);
  EXPECT_EQ(ready.src_nodes, (std::vector<NodeId>{11, 12}));
  EXPECT_EQ(split.ready.sources, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(ready.source_degrees, (std::vector<std::int32_t>{2, 2}));
  const Block& waiting = *split.waiting.block;
  EXPECT_EQ(waiting.src_nodes, (std::vector<NodeId>{10, 13, 11, 20, 21}));
  EXPECT_EQ(split.waiting.sources, (std::vector<std::int32_t>{0, 3, 1, 4, 5}));
  EXPECT_EQ(waiting.source_degrees, (std::vector<std::int32_t>{3, 1, 2, 5, 4}));
  const std::vector<std::vector<NodeId>> whole = in_neighbours(block);
  const std::vector<std::vector<NodeId>> ready_lists = in_neighbours(ready);
  const std::vector<std::vector<NodeId>> waiting_lists = in_neighbours(waiting);
  EXPECT_EQ(ready_lists[0], whole[1]);
  EXPECT_EQ(ready_lists[1], whole[2]);
  EXPECT_EQ(waiting_lists[0], whole[0]);
  EXPECT_EQ(waiting_lists[1], whole[3]);
}

TEST(BlockSplit, EverythingAtHandLeavesNothingWaiting) {
  const BlockSplit split = split_by_sources_at_hand(example(), std::vector<bool>(6, true));
  EXPECT_EQ(split.ready.block->num_dst, 4);
  EXPECT_EQ(split.waiting.block->num_dst, 0);
  EXPECT_TRUE(split.waiting.block->src_nodes.empty());
  EXPECT_EQ(split.waiting.block->offsets, (std::vector<std::int64_t>{0}));
}

TEST(BlockSplit, OneFlagPerSourceIsRequired) {
  EXPECT_THROW(split_by_sources_at_hand(example(), {true, true}), Error);
}

}  // namespace
}  // namespace gnnbed
