#pragma once
// What one rank keeps of the workload, read through the interfaces the executor, the sampler and
// the evaluator use: the graph structure it samples from (all of it, or the in-edges of the nodes
// it owns and of the parts it holds copies of), the node features its strategy places on it (and
// its copies of other ranks' features, with caching), and the labels and split of the nodes it
// owns. Built from the rank's shard (loaded from a sharded workload, or cut from a whole Dataset,
// which the caller may then drop). Reads outside what the rank holds throw Error: a plan that
// needs them is wrong.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strategies/strategy.hpp"
#include "workloads/dataset.hpp"
#include "workloads/rank_shard.hpp"

namespace gnnbed {

class LocalStore {
 public:
  explicit LocalStore(RankShard shard);
  // Cuts `rank`'s shard from the whole dataset.
  LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
             const FeaturePlacement& placement);

  int rank() const { return shard_.rank; }
  const Graph& structure() const { return shard_.structure; }
  const FeaturePlacement& placement() const { return shard_.placement.features; }
  const NodePartition& partition() const { return shard_.partition; }
  const RankShard& shard() const { return shard_; }

  // The nodes this rank owns, in increasing id order, and v's place among them (-1 when another
  // rank owns v).
  std::span<const NodeId> owned_nodes() const { return owned_; }
  std::int32_t owned_position(NodeId v) const {
    return std::max(position_[static_cast<std::size_t>(v)], std::int32_t{-1});
  }

  // Features of `nodes`, columns [column_begin, column_end), row-major into `out`, from the rank's
  // own placement or its copies of other ranks'.
  void gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                       std::int64_t column_end, float* out) const;
  // Whether the rank's features are sparse rows (RankShard::sparse_features).
  bool holds_sparse_features() const { return shard_.sparse_features != nullptr; }
  // The feature rows of `nodes` as sparse rows, every column, in that order (Error unless
  // holds_sparse_features(), or where the rank does not hold a row).
  SparseMatrix gather_sparse_features(std::span<const NodeId> nodes) const;
  // The nodes whose features gather_features gives for the rank's own columns
  // (placement().column_begin to column_end), in increasing id order: every node for column
  // slices; the owned nodes and those of parts the rank holds copies of for feature rows.
  std::vector<NodeId> held_feature_nodes() const;
  // Label of a node this rank owns.
  std::int32_t label(NodeId v) const;

  // Bytes of structure and stored features held, copies included (generated features count
  // nothing).
  std::int64_t structure_bytes() const;
  std::int64_t feature_bytes() const;

 private:
  // One part's features as placed: its nodes' rows, or every node's columns.
  struct FeatureTable {
    FeaturePlacement placement;
    const float* stored = nullptr;           // null for generated and sparse features
    const SparseFeatures* sparse = nullptr;  // sparse features' placed rows
    int part = 0;                            // whose features (feature rows: whose nodes' rows)
  };
  // Where a node's row is: its table (the piece's, or for feature rows its owner's copy) and row.
  struct HeldRow {
    const FeatureTable* table = nullptr;
    std::int64_t row = 0;
  };

  // Columns [begin, end) of one table.
  struct ColumnPiece {
    const FeatureTable* table = nullptr;
    std::int64_t begin = 0;
    std::int64_t end = 0;
  };

  // Where `nodes`' columns [column_begin, column_end) are held, in column order (feature rows:
  // one piece, the rank's own table standing for every part's), or Error naming what is missing.
  std::vector<ColumnPiece> pieces_for(std::span<const NodeId> nodes, std::int64_t column_begin,
                                      std::int64_t column_end) const;

  HeldRow held_row(const FeatureTable& piece_table, NodeId v) const;
  // A piece of sparse rows written dense into `target` (rows out_width apart).
  void gather_sparse_piece(std::span<const NodeId> nodes, const ColumnPiece& piece, float* target,
                           std::int64_t out_width) const;

  // Feature rows: whether the rank holds v's row (its own, or a copy of its owner's part).
  bool holds_row_of(NodeId v) const {
    return position_[static_cast<std::size_t>(v)] >= 0 ||
           table_of_part_[static_cast<std::size_t>(shard_.partition.owner(v))] >= 0;
  }

  RankShard shard_;
  std::vector<NodeId> owned_;
  // Every node's place p among its owner's nodes: p for the rank's own nodes, -2 - p for others'.
  std::vector<std::int32_t> position_;
  std::vector<FeatureTable> tables_;  // the rank's own placement first, then its copies
  std::vector<int> table_of_part_;    // feature rows: the table holding each part's, -1 if none
};

}  // namespace gnnbed
