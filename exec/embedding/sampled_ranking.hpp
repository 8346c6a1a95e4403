#pragma once
// PBG's evaluation protocol: each held-out edge ranked, not against every entity
// (link_ranking.hpp), but against sampled candidates: the other held-out edges of its chunk and
// uniformly drawn entities (PBG's eval_num_batch_negs and eval_num_uniform_negs, 1000 each), on
// both sides. It costs O(held-out edges x candidates) whatever the number of entities, so graphs of
// millions of entities can be evaluated; its ranks are lower than full ranking's, and only
// comparable between runs with the same candidates. Raw and filtered as in link_ranking.hpp; a
// candidate that is the edge's own true end is not a negative and is skipped.
#include <cstdint>
#include <span>

#include "exec/embedding/link_ranking.hpp"

namespace gnnbed {

struct SampledCandidates {
  int chunk = 1000;    // held-out edges that are each other's candidates
  int uniform = 1000;  // uniform entities per chunk and side
  std::uint64_t seed = 1;
};

LinkRankingMetrics rank_held_out_sampled(std::span<const Triple> held_out,
                                         const KnownEdgeLists& known,
                                         const EntityPartitioning& partitioning,
                                         PartitionStore& store, const RelationParameters& relations,
                                         Scoring scoring, const SampledCandidates& candidates);

}  // namespace gnnbed
