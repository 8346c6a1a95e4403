// PBG's sampled evaluation (sampled_ranking.hpp).
#include "exec/embedding/sampled_ranking.hpp"

#include <algorithm>
#include <vector>

#include "exec/embedding/ranking_support.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// Every row the protocol reads, gathered once: sources, targets, then each chunk's uniform
// candidates for the target side and for the source side.
struct CandidateRows {
  std::size_t n = 0;
  int uniform = 0;
  int dimension = 0;
  std::vector<std::int32_t> ids;
  std::vector<float> rows;

  std::size_t source_at(std::size_t i) const { return i; }
  std::size_t target_at(std::size_t i) const { return n + i; }
  std::size_t uniform_at(std::size_t chunk, bool target_side) const {
    return 2 * n + (2 * chunk + (target_side ? 0 : 1)) * static_cast<std::size_t>(uniform);
  }
  const float* row(std::size_t at) const { return &rows[at * static_cast<std::size_t>(dimension)]; }
};

CandidateRows gather_candidates(std::span<const Triple> held_out,
                                const EntityPartitioning& partitioning, PartitionStore& store,
                                int dimension, const SampledCandidates& sampled) {
  CandidateRows c;
  c.n = held_out.size();
  c.uniform = sampled.uniform;
  c.dimension = dimension;
  for (const Triple& e : held_out) c.ids.push_back(e.source);
  for (const Triple& e : held_out) c.ids.push_back(e.target);
  const auto chunks =
      (c.n + static_cast<std::size_t>(sampled.chunk) - 1) / static_cast<std::size_t>(sampled.chunk);
  const auto entities = static_cast<std::uint64_t>(partitioning.num_entities());
  for (std::size_t k = 0; k < chunks; ++k) {
    Rng rng(hash_mix(sampled.seed, k));
    for (int j = 0; j < 2 * sampled.uniform; ++j) {
      c.ids.push_back(static_cast<std::int32_t>(rng.below(entities)));
    }
  }
  c.rows = gather_entity_rows(c.ids, partitioning, store, dimension);
  return c;
}

struct SideRanking {
  std::span<const Triple> held_out;
  const KnownEdges& known;
  const RelationParameters& relations;
  Scoring scoring;
};

// Ranks the edges [begin, end) (chunk k) on one side against the chunk's other ends and the
// chunk's uniform candidates.
void rank_chunk_side(const SideRanking& s, const CandidateRows& c, std::size_t k, std::size_t begin,
                     std::size_t end, bool rank_targets, LinkRankingMetrics& metrics) {
  const auto d = static_cast<std::size_t>(c.dimension);
  const std::size_t size = end - begin;
  std::vector<std::size_t> candidates;
  for (std::size_t i = begin; i < end; ++i) {
    candidates.push_back(rank_targets ? c.target_at(i) : c.source_at(i));
  }
  for (int j = 0; j < c.uniform; ++j) {
    candidates.push_back(c.uniform_at(k, rank_targets) + static_cast<std::size_t>(j));
  }
  std::vector<float> queries(size * d);
  std::vector<float> rows(candidates.size() * d);
  for (std::size_t i = 0; i < size; ++i) {
    const Triple& edge = s.held_out[begin + i];
    const float* own = c.row(rank_targets ? c.source_at(begin + i) : c.target_at(begin + i));
    const float* r = s.relations.empty() ? nullptr : s.relations.of(edge.relation);
    for (std::size_t j = 0; j < d; ++j) {
      queries[i * d + j] = own[j] + (r == nullptr ? 0.0f : (rank_targets ? r[j] : -r[j]));
    }
  }
  for (std::size_t m = 0; m < candidates.size(); ++m) {
    std::copy_n(c.row(candidates[m]), d, &rows[m * d]);
  }
  std::vector<float> scores(size * candidates.size());
  pairwise_scores(s.scoring, queries.data(), static_cast<int>(size), rows.data(),
                  static_cast<int>(candidates.size()), c.dimension, scores.data());
  for (std::size_t i = 0; i < size; ++i) {
    const Triple& edge = s.held_out[begin + i];
    const std::int32_t truth = rank_targets ? edge.target : edge.source;
    const std::int32_t query_entity = rank_targets ? edge.source : edge.target;
    const auto others = s.known.other_ends(edge, rank_targets);
    const float positive = scores[i * candidates.size() + i];
    std::int64_t raw = 0;
    std::int64_t filtered = 0;
    for (std::size_t m = 0; m < candidates.size(); ++m) {
      const std::int32_t entity = c.ids[candidates[m]];
      if (m == i || entity == truth || !(scores[i * candidates.size() + m] > positive)) continue;
      ++raw;
      if (entity != query_entity && !std::binary_search(others.begin(), others.end(), entity)) {
        ++filtered;
      }
    }
    add_rank(metrics.raw, raw);
    add_rank(metrics.filtered, filtered);
  }
}

}  // namespace

LinkRankingMetrics rank_held_out_sampled(std::span<const Triple> held_out,
                                         const KnownEdgeLists& known,
                                         const EntityPartitioning& partitioning,
                                         PartitionStore& store, const RelationParameters& relations,
                                         Scoring scoring, const SampledCandidates& sampled) {
  LinkRankingMetrics metrics;
  if (held_out.empty()) return metrics;
  const CandidateRows rows =
      gather_candidates(held_out, partitioning, store, relations.dimension, sampled);
  const KnownEdges known_edges(known, held_out);
  const SideRanking side{held_out, known_edges, relations, scoring};
  const auto chunk = static_cast<std::size_t>(sampled.chunk);
  for (std::size_t begin = 0, k = 0; begin < held_out.size(); begin += chunk, ++k) {
    const std::size_t end = std::min(begin + chunk, held_out.size());
    rank_chunk_side(side, rows, k, begin, end, true, metrics);
    rank_chunk_side(side, rows, k, begin, end, false, metrics);
  }
  metrics.rankings = static_cast<std::int64_t>(2 * held_out.size());
  divide(metrics.raw, static_cast<double>(metrics.rankings));
  divide(metrics.filtered, static_cast<double>(metrics.rankings));
  return metrics;
}

}  // namespace gnnbed
