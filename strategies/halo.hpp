#pragma once
// Plan pieces the full-graph strategies share (roc, sancus, neutronstar): a rank computes its own
// nodes at every layer on its share of the graph (full_graph.hpp), whose sources beyond its own
// nodes are the halo, owned by its peers.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strategies/model_ops.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"
#include "strategies/strategy_common.hpp"

namespace gnnbed {

// The halo grouped by owner: the nodes each peer owns (ids, in source order) and where they sit
// among the block's sources.
struct Halo {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<std::vector<std::int32_t>> positions;
};
Halo halo_of(const StrategyContext& context, const Block& block, int rank);

// Where `nodes` (the rank's own) sit among the block's destinations (increasing ids); Error
// naming `what` for a node the rank lacks.
std::vector<std::int32_t> own_positions(const Block& block, std::span<const NodeId> nodes,
                                        const std::string& what);

// The rank's share of the graph; Error when the engine gave none.
const Block& local_block(const RankIteration& iteration);

// The block tensor of the rank's share of the graph, shared with `iteration` rather than copied.
int add_local_block(PlanBuilder& builder, const RankIteration& iteration);

// A full-graph strategy whose ranks own rows of the node partition with their features and hold
// the whole model (data parallel), and announce their halo: to each owner the ids of its nodes in
// the rank's halo, in source order (the rows whose representations the rank reads from it, and
// whose gradients go back to it). Subclasses plan the layers.
class HaloStrategy : public Strategy {
 public:
  bool full_graph() const override { return true; }
  void check(const StrategyContext& context) const override;
  FeaturePlacement feature_placement(const StrategyContext& context, int rank) const override;
  std::vector<ParameterSpec> parameters(const StrategyContext& context, int rank) const override;
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override;
};

// ConfigError for the mini-batch strategies' options (P3's pipelining, dgl-pull's prefetching),
// which full-graph `strategy` does not take.
void refuse_mini_batch_options(const DistributionConfig& distribution, const std::string& strategy);

// One rank's plan for one epoch of a HaloStrategy: the prologue (sample, announcement), the row
// positions every layer reuses, the own features, every layer's forward on the rank's share, the
// loss of its training nodes, every layer's backward and the all-reduce and step. What moves
// between the ranks, and where the halo's rows come from, is the subclass's.
class HaloPlanner {
 public:
  HaloPlanner(const StrategyContext& context, const RankIteration& iteration, std::string strategy);
  virtual ~HaloPlanner() = default;
  HaloPlanner(const HaloPlanner&) = delete;
  HaloPlanner& operator=(const HaloPlanner&) = delete;

  // `requests`: what this rank announced (its halo's ids per owner); `received`: what every peer
  // announced to it (the ids of its own nodes the peer reads).
  Plan build(const Announcement& requests, const Announcement& received);
  // The announcements as the ranks exchanged them, where they carry more than the halo (SANCUS's
  // decisions in front): the plan's announce op moves these. Before build; they must outlive it.
  void announced_as(const Announcement& sent, const Announcement& received) {
    exchanged_sent_ = &sent;
    exchanged_received_ = &received;
  }

 protected:
  // The input of `layer` over the block's sources from the rank's own rows `own` (layer 0: its
  // features; later: the previous layer's output), `traffic` naming what moves. One rank: `own`.
  virtual int layer_input(int layer, int own, Traffic traffic) = 0;
  // The gradient of the output of layer - 1 over the own nodes, from the gradient of layer
  // `layer`'s input over the block's sources (with peers: the halo's rows go back to their owners).
  virtual int own_input_gradient(int layer, int grad_input) = 0;

  // Whether layer_input(0, ...) takes the own features as sparse rows where the run keeps them
  // sparse (StrategyContext::sparse_feature_rows); otherwise they are gathered dense.
  virtual bool takes_sparse_features() const { return false; }
  // Whether the first layer's input, once built, is kept on the device (persistent) for the
  // rank's later plans, and whether this plan reuses the kept one (nothing in it changed since it
  // was built). Neither: it is built and copied to the device every epoch.
  virtual bool keeps_first_layer_input() const { return false; }
  virtual bool reuses_first_layer_input() const { return false; }

  // Assembles a layer's input (or an own gradient) from (positions, rows) pairs: on the host for
  // the features (layer 0, before the copy to the device), on the device after. Sparse rows (the
  // features) assemble into sparse rows holding every part's entries.
  int assemble(const std::string& name, int layer, std::vector<int> pairs, std::int64_t rows,
               std::int64_t cols);

  const StrategyContext& context_;
  const RankIteration& iteration_;
  const Block& block_;
  const int rank_;
  const int num_ranks_;
  const std::string strategy_;
  PlanBuilder builder_;
  ModelEmitter model_;
  const Announcement* requests_ = nullptr;
  const Announcement* received_ = nullptr;
  const Announcement* exchanged_sent_ = nullptr;
  const Announcement* exchanged_received_ = nullptr;
  AnnouncementTensors announced_;
  int own_rows_ = -1;             // the own nodes' rows among the sources (the first ones)
  std::vector<int> halo_rows_;    // per peer: its nodes' rows among the block's sources
  std::vector<int> served_rows_;  // per peer: the rows of own nodes it reads
  Halo halo_;

 private:
  void add_positions();
  int first_layer_input();
  // The first layer's input on the device: built and copied, or kept from an earlier plan; with
  // dropout (which writes into its input) a copy of the kept one.
  int device_first_layer_input();
  void backward_and_step(int output, int seeds, const std::vector<ParameterSpec>& parameters);
};

// "rank q", for labels.
std::string peer_name(int q);

// A new tensor holding the rows of `source` at `positions` (gather_rows).
int rows_for(PlanBuilder& builder, std::string name, int positions, int source);

// Rows between peers, in one all_to_all labelled `label`: to each peer q the rows of `source` at
// positions send[q]; from it as many rows as receive[q] has positions. Returns `pairs` followed by
// (receive[q], rows from q) for every peer, for a scatter_add_rows.
std::vector<int> exchange_rows(PlanBuilder& builder, const std::string& label, Traffic traffic,
                               int rank, const std::vector<int>& send,
                               const std::vector<int>& receive, int source, std::vector<int> pairs);

// The loss of the rank's training nodes, whose rows are among the first of `logits` (the last
// layer's destinations begin with the rank's own nodes, in increasing ids, as in its share of the
// graph); returns its gradient over all `rows` of the last layer's output. `strategy` names the
// planner in errors.
int emit_training_loss(PlanBuilder& builder, ModelEmitter& model, const RankIteration& iteration,
                       int seeds, int logits, std::int64_t rows, const std::string& strategy);

// Where every node's row sits in its owner's share of a layer (the owner's nodes in increasing id
// order, as its block's destinations), and how many nodes each rank owns. Linear in the nodes.
struct OwnerRows {
  std::vector<std::int32_t> row_of_node;
  std::vector<std::int64_t> rows_of_rank;
};
OwnerRows owner_rows(const NodePartition& partition);

}  // namespace gnnbed
