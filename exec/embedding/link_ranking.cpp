// Ranking held-out edges against every entity (link_ranking.hpp).
#include "exec/embedding/link_ranking.hpp"

#include <algorithm>
#include <vector>

#include "exec/embedding/ranking_support.hpp"

namespace gnnbed {
namespace {

// Queries ranked in blocks of this many, against blocks of this many entities of one partition
// (a block of scores is 16 MiB, whatever the partition's size).
constexpr std::size_t kQueryBlock = 256;
constexpr std::int64_t kEntityBlock = 16384;

// The held-out edges' query vectors for both sides, their positives' scores, and the counts of
// entities scoring above them.
struct Queries {
  int dimension = 0;
  std::vector<float> for_target;  // s + r: ranks targets
  std::vector<float> for_source;  // t - r: ranks sources
  std::vector<float> target_score;
  std::vector<float> source_score;
  std::vector<std::int64_t> above_target;  // raw counts
  std::vector<std::int64_t> above_source;
  std::vector<std::int64_t> known_above_target;  // of those, entities of other known edges
  std::vector<std::int64_t> known_above_source;
};

Queries build_queries(std::span<const Triple> held_out, const EntityPartitioning& partitioning,
                      PartitionStore& store, const RelationParameters& relations, Scoring scoring) {
  Queries q;
  const std::size_t n = held_out.size();
  const int d = relations.dimension;
  q.dimension = d;
  const auto width = static_cast<std::size_t>(d);
  // Sources then targets, in one pass over the partitions.
  std::vector<std::int32_t> ends(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    ends[i] = held_out[i].source;
    ends[n + i] = held_out[i].target;
  }
  const std::vector<float> rows = gather_entity_rows(ends, partitioning, store, d);
  const auto middle = rows.begin() + static_cast<std::ptrdiff_t>(n * width);
  q.for_target.assign(rows.begin(), middle);
  const std::vector<float> targets(middle, rows.end());
  q.for_source = targets;
  q.target_score.resize(n);
  q.source_score.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    float* to_target = &q.for_target[i * width];
    float* to_source = &q.for_source[i * width];
    if (!relations.empty()) {
      const float* r = relations.of(held_out[i].relation);
      for (int j = 0; j < d; ++j) {
        to_target[j] += r[j];
        to_source[j] -= r[j];
      }
    }
    // f(s + r, t) = f(t - r, s): one score for both sides.
    pairwise_scores(scoring, to_target, 1, &targets[i * width], 1, d, &q.target_score[i]);
    q.source_score[i] = q.target_score[i];
  }
  q.above_target.assign(n, 0);
  q.above_source.assign(n, 0);
  q.known_above_target.assign(n, 0);
  q.known_above_source.assign(n, 0);
  return q;
}

// What one partition's scores are compared for.
struct RankingPass {
  std::span<const Triple> held_out;
  const EntityPartitioning& partitioning;
  const KnownEdges& known;
  Scoring scoring;
};

// Entities [begin, begin + count) of partition `partition`, the candidates scored at once.
struct EntityBlock {
  int partition = 0;
  const PartitionTable& table;
  std::int64_t begin = 0;
  std::int64_t count = 0;

  // `entity`'s place in the block, or -1 when it is not in it.
  std::int64_t place(const EntityPartitioning& partitioning, std::int32_t entity) const {
    if (partitioning.partition_of(entity) != partition) return -1;
    const std::int64_t at = partitioning.offset_of(entity) - begin;
    return at >= 0 && at < count ? at : -1;
  }
};

// Counts, for queries [first, first + count), the block's entities that score above the
// positive, leaving the positive itself out, and how many of those complete another known edge.
void count_above(const RankingPass& pass, const EntityBlock& block, bool rank_targets,
                 std::size_t first, std::size_t count, Queries& q) {
  const auto rows = static_cast<std::size_t>(block.count);
  std::vector<float> scores(count * rows);
  const std::vector<float>& vectors = rank_targets ? q.for_target : q.for_source;
  pairwise_scores(pass.scoring, &vectors[first * static_cast<std::size_t>(q.dimension)],
                  static_cast<int>(count), block.table.row(block.begin), static_cast<int>(rows),
                  q.dimension, scores.data());
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = first + k;
    const Triple& edge = pass.held_out[i];
    const std::int32_t truth = rank_targets ? edge.target : edge.source;
    const float positive = rank_targets ? q.target_score[i] : q.source_score[i];
    const float* row = &scores[k * rows];
    const auto scores_above = [&](std::int32_t entity) -> std::int64_t {
      const std::int64_t at = block.place(pass.partitioning, entity);
      return at >= 0 && row[at] > positive ? 1 : 0;
    };
    std::int64_t above = 0;
    for (std::size_t e = 0; e < rows; ++e) above += static_cast<std::int64_t>(row[e] > positive);
    above -= scores_above(truth);
    std::int64_t known_above = 0;
    const auto others = pass.known.other_ends(edge, rank_targets);
    for (const std::int32_t other : others) known_above += other == truth ? 0 : scores_above(other);
    // The query's own entity, unless a known edge of it to itself was counted just now.
    const std::int32_t query_entity = rank_targets ? edge.source : edge.target;
    if (query_entity != truth && !std::binary_search(others.begin(), others.end(), query_entity)) {
      known_above += scores_above(query_entity);
    }
    (rank_targets ? q.above_target : q.above_source)[i] += above;
    (rank_targets ? q.known_above_target : q.known_above_source)[i] += known_above;
  }
}

}  // namespace

nlohmann::json RankSummary::to_json() const {
  return {{"mrr", mrr}, {"hits_at_1", hits_at_1}, {"hits_at_10", hits_at_10}};
}

nlohmann::json LinkRankingMetrics::to_json() const {
  return {{"filtered", filtered.to_json()}, {"raw", raw.to_json()}, {"rankings", rankings}};
}

LinkRankingMetrics rank_held_out(std::span<const Triple> held_out, const KnownEdgeLists& known,
                                 const EntityPartitioning& partitioning, PartitionStore& store,
                                 const RelationParameters& relations, Scoring scoring) {
  LinkRankingMetrics metrics;
  if (held_out.empty()) return metrics;
  Queries q = build_queries(held_out, partitioning, store, relations, scoring);
  const KnownEdges known_edges(known, held_out);
  const RankingPass pass{held_out, partitioning, known_edges, scoring};
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    const int hold[] = {p};
    store.hold(hold);
    const PartitionTable& table = store.table(p);
    for (std::int64_t begin = 0; begin < table.rows; begin += kEntityBlock) {
      const EntityBlock block{p, table, begin, std::min(kEntityBlock, table.rows - begin)};
      for (std::size_t first = 0; first < held_out.size(); first += kQueryBlock) {
        const std::size_t count = std::min(kQueryBlock, held_out.size() - first);
        count_above(pass, block, true, first, count, q);
        count_above(pass, block, false, first, count, q);
      }
    }
  }
  for (std::size_t i = 0; i < held_out.size(); ++i) {
    add_rank(metrics.raw, q.above_target[i]);
    add_rank(metrics.raw, q.above_source[i]);
    add_rank(metrics.filtered, q.above_target[i] - q.known_above_target[i]);
    add_rank(metrics.filtered, q.above_source[i] - q.known_above_source[i]);
  }
  metrics.rankings = static_cast<std::int64_t>(2 * held_out.size());
  divide(metrics.raw, static_cast<double>(metrics.rankings));
  divide(metrics.filtered, static_cast<double>(metrics.rankings));
  return metrics;
}

}  // namespace gnnbed
