#include "exec/distributed/local_store.hpp"

#include <algorithm>

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
  const bool sparse = shard_.sparse_features != nullptr;
  const std::size_t replicas =
      sparse ? shard_.sparse_replica_features.size() : shard_.replica_features.size();
  if (replicas != placement.feature_replicas.size() && !shard_.generated_features &&
      shard_.has_features()) {
    throw Error("rank " + std::to_string(shard_.rank) + "'s shard lists " +
                std::to_string(placement.feature_replicas.size()) + " feature replicas and holds " +
                std::to_string(replicas));
  }
  table_of_part_.assign(num_parts, -1);
  auto add_table = [&](int part, const FeaturePlacement& held, const SharedArray<float>* stored,
                       const SparseFeatures* sparse_rows) {
    if (held.owned_rows_only)
      table_of_part_[static_cast<std::size_t>(part)] = static_cast<int>(tables_.size());
    tables_.push_back({held, stored != nullptr && stored->size() > 0 ? stored->data() : nullptr,
                       sparse_rows, part});
  };
  add_table(shard_.rank, placement.features, &shard_.stored_features, shard_.sparse_features.get());
  for (std::size_t i = 0; i < placement.feature_replicas.size(); ++i) {
    const FeatureReplica& replica = placement.feature_replicas[i];
    add_table(replica.part, replica.placement,
              i < shard_.replica_features.size() ? &shard_.replica_features[i] : nullptr,
              i < shard_.sparse_replica_features.size() ? shard_.sparse_replica_features[i].get()
                                                        : nullptr);
  }
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

LocalStore::HeldRow LocalStore::held_row(const FeatureTable& piece_table, NodeId v) const {
  if (!piece_table.placement.owned_rows_only) return {&piece_table, v};
  const std::int32_t place = position_[static_cast<std::size_t>(v)];
  if (place >= 0) return {&piece_table, place};
  const int table = table_of_part_[static_cast<std::size_t>(shard_.partition.owner(v))];
  return {&tables_[static_cast<std::size_t>(table)], -2 - place};
}

void LocalStore::gather_features(std::span<const NodeId> nodes, std::int64_t column_begin,
                                 std::int64_t column_end, float* out) const {
  const std::vector<ColumnPiece> pieces = pieces_for(nodes, column_begin, column_end);
  if (shard_.generated_features) {
    shard_.generated_features->gather(nodes, static_cast<int>(column_begin),
                                      static_cast<int>(column_end), out);
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
    if (piece.table->sparse != nullptr) {
      gather_sparse_piece(nodes, piece, target, out_width);
      continue;
    }
    gather_float_rows(count, piece_width, target, out_width, [&](std::int64_t i) {
      const HeldRow at = held_row(*piece.table, nodes[static_cast<std::size_t>(i)]);
      return at.table->stored + at.row * width + offset;
    });
  }
}

void LocalStore::gather_sparse_piece(std::span<const NodeId> nodes, const ColumnPiece& piece,
                                     float* target, std::int64_t out_width) const {
  const std::int64_t offset = piece.begin - piece.table->placement.column_begin;
  const std::int64_t piece_width = piece.end - piece.begin;
  const auto count = static_cast<std::int64_t>(nodes.size());
#pragma omp parallel for schedule(static) if (count > 4096)
  for (std::int64_t i = 0; i < count; ++i) {
    const HeldRow at = held_row(*piece.table, nodes[static_cast<std::size_t>(i)]);
    const SparseFeatures& rows = *at.table->sparse;
    float* row_out = target + i * out_width;
    std::fill_n(row_out, piece_width, 0.0f);
    const auto row = static_cast<std::size_t>(at.row);
    for (auto e = rows.offsets()[row]; e < rows.offsets()[row + 1]; ++e) {
      const std::int64_t column = rows.columns()[static_cast<std::size_t>(e)] - offset;
      if (column >= 0 && column < piece_width)
        row_out[column] = rows.values()[static_cast<std::size_t>(e)];
    }
  }
}

SparseMatrix LocalStore::gather_sparse_features(std::span<const NodeId> nodes) const {
  if (!shard_.sparse_features) {
    throw Error("rank " + std::to_string(shard_.rank) +
                " holds its features as dense rows, not sparse ones");
  }
  // Every row and column held (or Error naming what is missing), in one table's rows.
  const std::vector<ColumnPiece> pieces = pieces_for(nodes, 0, shard_.feature_dim);
  if (pieces.size() != 1 || pieces.front().table->placement.column_begin != 0) {
    throw Error("rank " + std::to_string(shard_.rank) +
                " holds slices of the feature columns: sparse rows are gathered whole");
  }
  SparseMatrix out;
  out.rows = static_cast<std::int64_t>(nodes.size());
  out.cols = shard_.feature_dim;
  out.offsets.reserve(nodes.size() + 1);
  for (const NodeId v : nodes) {
    const HeldRow at = held_row(*pieces.front().table, v);
    const SparseFeatures& rows = *at.table->sparse;
    const auto row = static_cast<std::size_t>(at.row);
    const auto begin = static_cast<std::size_t>(rows.offsets()[row]);
    const auto end = static_cast<std::size_t>(rows.offsets()[row + 1]);
    out.columns.insert(out.columns.end(), rows.columns().begin() + begin,
                       rows.columns().begin() + end);
    out.weights.insert(out.weights.end(), rows.values().begin() + begin,
                       rows.values().begin() + end);
    out.offsets.push_back(static_cast<std::int64_t>(out.columns.size()));
  }
  return out;
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
  if (shard_.sparse_features) {
    std::int64_t bytes = 0;
    for (const FeatureTable& table : tables_) bytes += table.sparse->stored_bytes();
    return bytes;
  }
  std::size_t values = shard_.stored_features.size();
  for (const SharedArray<float>& replica : shard_.replica_features) values += replica.size();
  return static_cast<std::int64_t>(values * sizeof(float));
}

}  // namespace gnnbed
