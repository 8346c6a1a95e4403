#pragma once
// Full-neighbourhood distributed inference (evaluation) as one plan per rank, which exec/ runs and
// sim/ replays like a training plan. Layer by layer, each rank computes the representations of
// the nodes it owns (for the last layer, its validation and test nodes) a chunk of destinations at
// a time, from its full in-neighbourhoods: the inputs it lacks come from the ranks that hold them
// (feature rows from their owners or feature columns from every rank, as the strategy placed
// them; hidden rows from their owners). A layer narrower than its input (out < in; not GAT, whose
// attention needs the rows) multiplies first: the products H W are formed where H is held (for a
// column slice: partial products, summed at the owners, as P3 does) and the narrower products
// travel instead of the rows. Blocks carry the whole graph's GCN degrees, so a GCN layer
// normalises as on the whole graph. The result equals single-process full-graph inference up to
// float rounding.
//
// Planning takes the two steps of training's (strategy.hpp): every rank announces to each peer
// the nodes it will ask it for, chunk by chunk, with a header of its chunk counts (every rank
// takes part in every chunk's exchange, with no destinations once it has run out); then every
// rank builds its plan from its own chunks and its peers' announcements. The plan does not depend
// on the parameters' values, so a run builds it once and runs it at every evaluation.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strategies/announcement.hpp"
#include "strategies/config/model_spec.hpp"
#include "strategies/plan/plan.hpp"
#include "workloads/graph.hpp"
#include "workloads/partition.hpp"
#include "workloads/rank_shard.hpp"  // FeaturePlacement
#include "workloads/sampler.hpp"

namespace gnnbed {

// What one rank's evaluation plan is made from.
struct EvaluationShare {
  int rank = 0;
  ModelSpec model;
  NodePartition partition;
  std::vector<FeaturePlacement> placements;  // every rank's features
  // Holds at least the in-edges of `owned` (and must outlive the planner).
  const Graph* structure = nullptr;
  std::vector<NodeId> owned;    // the rank's nodes, increasing
  std::vector<NodeId> targets;  // its validation nodes, then its test nodes
  // The whole graph's GCN degree of every node (gcn_degrees), for GCN-normalised models.
  std::shared_ptr<const std::vector<std::int32_t>> gcn_degrees;
};

class EvaluationPlanner {
 public:
  // Cuts the destinations into chunks and builds their blocks. Throws Error when the placements
  // neither give every rank its own nodes' rows nor cover the columns in rank order.
  explicit EvaluationPlanner(EvaluationShare share);
  ~EvaluationPlanner();
  EvaluationPlanner(const EvaluationPlanner&) = delete;
  EvaluationPlanner& operator=(const EvaluationPlanner&) = delete;

  // What this rank tells every peer (entry [rank] empty).
  const Announcement& announcement() const;
  // The rank's plan, from every peer's announcement to it (received[q] from q). Its last op
  // writes the logits of `targets`, one row each, in order.
  Plan plan(const Announcement& received) const;

  struct State;  // defined in inference.cpp

 private:
  std::unique_ptr<State> state_;
};

// Throws Error unless `placements` give every rank the rows of its own nodes, or column slices
// that cover `feature_dim` in rank order.
void check_evaluation_placements(const std::vector<FeaturePlacement>& placements,
                                 std::int64_t feature_dim);

}  // namespace gnnbed
