#pragma once
// Link-prediction quality on held-out edges: every held-out edge's target ranked among all
// entities as targets of its source, and its source among all entities as sources of its target;
// the mean reciprocal rank (MRR) and Hits@k over both rankings. A rank is 1 + the number of other
// entities that score strictly higher: all of them (raw), or all but those that complete another
// known edge, trained or held out, and the query's own entity (filtered: the usual protocol for
// knowledge graphs, the one PBG's paper reports; an entity is not its own candidate, since a dot
// product or a small translation scores an entity with itself above any neighbour).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "exec/embedding/bucket_training.hpp"
#include "exec/embedding/partition_store.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {

struct RankSummary {
  double mrr = 0;
  double hits_at_1 = 0;
  double hits_at_10 = 0;
  nlohmann::json to_json() const;
};

struct LinkRankingMetrics {
  RankSummary filtered;
  RankSummary raw;
  std::int64_t rankings = 0;  // two per held-out edge
  nlohmann::json to_json() const;
};

// Ranks `held_out` (global entity ids) with the embeddings in `store`, holding one partition at
// a time, so a store that swaps to disk never holds more than it does in training. The
// embeddings' width is `relations.dimension` (set for every scoring).
// Every true edge, in the lists it is kept in (training and held out), not copied into one.
using KnownEdgeLists = std::vector<std::span<const Triple>>;

// `known` holds every true edge (training and held out) for the filtered ranking.
LinkRankingMetrics rank_held_out(std::span<const Triple> held_out, const KnownEdgeLists& known,
                                 const EntityPartitioning& partitioning, PartitionStore& store,
                                 const RelationParameters& relations, Scoring scoring);

}  // namespace gnnbed
