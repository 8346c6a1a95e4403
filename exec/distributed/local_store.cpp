#include "exec/distributed/local_store.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/common/errors.hpp"
#include "workloads/common/parallel_copy.hpp"

namespace gnnbed {

LocalStore::LocalStore(RankShard shard) : shard_(std::move(shard)) {
  const auto n = static_cast<std::size_t>(shard_.num_nodes());
  const auto num_parts = static_cast<std::size_t>(shard_.partition.num_parts());
  position_.assign(n, 0);
  std::vector<std::int32_t> next(num_parts, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const auto owner = static_cast<std::size_t>(shard_.partition.owner(static_cast<NodeId>(v)));
    const std::int32_t place = next[owner]++;
    if (static_cast<int>(owner) == shard_.rank) {
      position_[v] = place;
      owned_.push_back(static_cast<NodeId>(v));
    } else {
      position_[v] = -2 - place;
    }
  }
  if (static_cast<std::int64_t>(owned_.size()) != shard_.num_owned) {
    throw Error("rank " + std::to_string(shard_.rank) + "'s shard says it owns " +
                std::to_string(shard_.num_owned) + " nodes, its partition gives it " +
                std::to_string(owned_.size()));
  }
  const ShardPlacement& placement = shard_.placement;
  if (shard_.replica_features.size() != placement.feature_replicas.size() &&
      !shard_.generated_features && !shard_.sparse_features && shard_.has_features()) {
    throw Error("rank " + std::to_string(shard_.rank) + "'s shard lists " +
                std::to_string(placement.feature_replicas.size()) + " feature replicas and holds " +
                std::to_string(shard_.replica_features.size()));
  }
  table_of_part_.assign(num_parts, -1);
  auto add_table = [&](int part, const FeaturePlacement& held, const SharedArray<float>* stored) {
    if (held.owned_rows_only)
      table_of_part_[static_cast<std::size_t>(part)] = static_cast<int>(tables_.size());
    tables_.push_back(
        {held, stored != nullptr && stored->size() > 0 ? stored->data() : nullptr, part});
  };
  add_table(shard_.rank, placement.features, &shard_.stored_features);
  for (std::size_t i = 0; i < placement.feature_replicas.size(); ++i) {
    const FeatureReplica& replica = placement.feature_replicas[i];
    add_table(replica.part, replica.placement,
              i < shard_.replica_features.size() ? &shard_.replica_features[i] : nullptr);
  }
  if (shard_.sparse_features) sparse_held_bytes_ = held_sparse_bytes();
}

std::int64_t LocalStore::held_sparse_bytes() const {
  const SparseFeatures& sparse = *shard_.sparse_features;
  const std::span<const std::int64_t> offsets = sparse.offsets();
  const std::span<const std::int32_t> columns = sparse.columns();
  std::vector<NodeId> every(static_cast<std::size_t>(shard_.num_nodes()));
  std::iota(every.begin(), every.end(), NodeId{0});
  std::int64_t rows = 0;
  std::int64_t entries = 0;
  for (const FeatureTable& table : tables_) {
    const FeaturePlacement& held = table.placement;
    const std::vector<NodeId> nodes =
        held.owned_rows_only ? shard_.partition.nodes_of(table.part) : every;
    rows += static_cast<std::int64_t>(nodes.size());
    for (const NodeId v : nodes) {
      const auto row = static_cast<std::size_t>(v);
      const auto* begin = columns.data() + offsets[row];
      const auto* end = columns.data() + offsets[row + 1];
      // A row's columns increase: the held ones are a range of them.
      entries += std::lower_bound(begin, end, held.column_end) -
                 std::lower_bound(begin, end, held.column_begin);
    }
  }
  return rows * static_cast<std::int64_t>(sizeof(std::int64_t)) +
         entries * static_cast<std::int64_t>(sizeof(std::int32_t) + sizeof(float));
}

LocalStore::LocalStore(const Dataset& dataset, const StrategyContext& context, int rank,
                       const FeaturePlacement& placement)
    : LocalStore(cut_shard(dataset, context.partition, rank,
                           {context.structure_partitioned, placement, {}, {}})) {}

std::vector<LocalStore::ColumnPiece> LocalStore::pieces_for(std::span<const NodeId> nodes,
                                                            std::int64_t column_begin,
                                                            std::int64_t column_end) const {
  const int rank = shard_.rank;
  const FeaturePlacement& own = tables_.front().placement;
  if (column_begin > column_end) {
    throw Error("rank " + std::to_string(rank) + " was asked for feature columns [" +
                std::to_string(column_begin) + ", " + std::to_string(column_end) + ")");
  }
  std::vector<ColumnPiece> pieces;
  if (own.owned_rows_only) {
    // Every node's row from its owner's table, each of which holds the same columns.
    if (column_begin < own.column_begin || column_end > own.column_end) {
      throw Error("rank " + std::to_string(rank) + " holds feature columns [" +
                  std::to_string(own.column_begin) + ", " + std::to_string(own.column_end) +
                  "), not [" + std::to_string(column_begin) + ", " + std::to_string(column_end) +
                  ")");
    }
    for (const NodeId v : nodes) {
      if (!holds_row_of(v)) {
        const int owner = shard_.partition.owner(v);
        throw Error("rank " + std::to_string(rank) + " does not hold the features of node " +
                    std::to_string(v) + " (owned by rank " + std::to_string(owner) + ")");
      }
    }
    pieces.push_back({&tables_.front(), column_begin, column_end});
    return pieces;
  }
  // Column slices: consecutive pieces of the range from the slices that hold them.
  for (std::int64_t at = column_begin; at < column_end;) {
    const auto holder = std::find_if(tables_.begin(), tables_.end(), [&](const FeatureTable& t) {
      return t.placement.column_begin <= at && at < t.placement.column_end;
    });
    if (holder == tables_.end()) {
      throw Error("rank " + std::to_string(rank) + " holds feature columns [" +
                  std::to_string(own.column_begin) + ", " + std::to_string(own.column_end) + ")" +
                  (tables_.size() > 1 ? " and copies of other ranks'" : "") + ", not column " +
                  std::to_string(at) + " of [" + std::to_string(column_begin) + ", " +
                  std::to_string(column_end) + ")");
    }
    pieces.push_back({&*holder, at, std::min(column_end, holder->placement.column_end)});
    at = pieces.back().end;
  }
  return pieces;
}

void LocalStore::gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                                 std::int64_t column_end, float* out) const {
  const std::vector<ColumnPiece> pieces = pieces_for(nodes, column_begin, column_end);
  if (shard_.generated_features || shard_.sparse_features) {
    const FeatureStore& whole = shard_.generated_features
                                    ? static_cast<const FeatureStore&>(*shard_.generated_features)
                                    : *shard_.sparse_features;
    whole.gather(nodes, static_cast<int>(column_begin), static_cast<int>(column_end), out);
    return;
  }
  const std::int64_t out_width = column_end - column_begin;
  const auto count = static_cast<std::int64_t>(nodes.size());
  for (const ColumnPiece& piece : pieces) {
    const FeaturePlacement& held = piece.table->placement;
    const std::int64_t width = held.column_end - held.column_begin;
    const std::int64_t offset = piece.begin - held.column_begin;
    const std::int64_t piece_width = piece.end - piece.begin;
    float* const target = out + (piece.begin - column_begin);
    gather_float_rows(count, piece_width, target, out_width, [&](std::int64_t i) {
      const NodeId v = nodes[static_cast<std::size_t>(i)];
      const float* stored = piece.table->stored;
      std::int64_t row = v;
      if (held.owned_rows_only) {
        const std::int32_t place = position_[static_cast<std::size_t>(v)];
        row = place >= 0 ? place : -2 - place;
        if (place < 0) {
          stored = tables_[static_cast<std::size_t>(
                               table_of_part_[static_cast<std::size_t>(shard_.partition.owner(v))])]
                       .stored;
        }
      }
      return stored + row * width + offset;
    });
  }
}

SparseMatrix LocalStore::gather_sparse_features(std::span<const NodeId> nodes) const {
  if (!shard_.sparse_features) {
    throw Error("rank " + std::to_string(shard_.rank) +
                " holds its features as dense rows, not sparse ones");
  }
  pieces_for(nodes, 0, shard_.feature_dim);  // every row and column held, or Error naming it
  return shard_.sparse_features->gather_rows(nodes);
}

std::vector<NodeId> LocalStore::held_feature_nodes() const {
  const auto n = static_cast<NodeId>(shard_.num_nodes());
  std::vector<NodeId> nodes;
  for (NodeId v = 0; v < n; ++v) {
    if (!placement().owned_rows_only || holds_row_of(v)) nodes.push_back(v);
  }
  return nodes;
}

std::int32_t LocalStore::label(NodeId v) const {
  const std::int32_t position = owned_position(v);
  if (position < 0) {
    throw Error("rank " + std::to_string(shard_.rank) + " asked for the label of node " +
                std::to_string(v) + ", which rank " + std::to_string(shard_.partition.owner(v)) +
                " owns");
  }
  return shard_.labels.empty() ? -1 : shard_.labels[static_cast<std::size_t>(position)];
}

std::int64_t LocalStore::structure_bytes() const {
  return static_cast<std::int64_t>(shard_.structure.offsets().size_bytes() +
                                   shard_.structure.sources().size_bytes());
}

std::int64_t LocalStore::feature_bytes() const {
  if (shard_.sparse_features) return sparse_held_bytes_;
  std::size_t values = shard_.stored_features.size();
  for (const SharedArray<float>& replica : shard_.replica_features) values += replica.size();
  return static_cast<std::int64_t>(values * sizeof(float));
}

}  // namespace gnnbed
