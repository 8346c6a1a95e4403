#pragma once
// Pieces every strategy's plan starts with: the tensors of the rank's own mini-batch and the
// `sample` prologue op that produced them.
#include <span>
#include <string>
#include <vector>

#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

struct OwnBatchTensors {
  int seeds = -1;
  std::vector<int> blocks;  // blocks[l] feeds layer l
  int sample_op = -1;
};

// ConfigError unless the run has node features and one node partition part per rank (what every
// strategy here needs); `strategy` names it in the message.
void check_features_and_parts(const StrategyContext& context, const std::string& strategy);

// Adds the seeds and block tensors of `iteration.batch` and the `sample` op that produced them.
OwnBatchTensors add_own_batch(PlanBuilder& builder, const StrategyContext& context,
                              const RankIteration& iteration);

// The announcement exchange as a prologue op (all_to_all of structure), with index tensors
// holding each payload: sent[q] (the payload for q) and received[q]; -1 for the rank itself. With
// `relays`, two prologue ops: the exchange across machines, whose slots hold the payloads that
// travel straight (to a relay or within the sender's machine), then the one within machines, whose
// slots hold the stacks a relay forwards (shape only: the engines build them).
struct AnnouncementTensors {
  std::vector<int> sent;
  std::vector<int> received;
  int op = -1;
};
AnnouncementTensors add_announcement(PlanBuilder& builder, const Announcement& sent,
                                     const Announcement& received, int rank,
                                     const std::optional<AnnouncementRelays>& relays = {});

// A tensor for the feature rows of `nodes`, every column: sparse rows sized by their stored
// entries where the run keeps them sparse (StrategyContext::sparse_feature_rows), else dense.
int add_feature_rows(PlanBuilder& builder, const StrategyContext& context, std::string name,
                     std::span<const NodeId> nodes);
// Gathers the feature rows of `nodes` (index tensor `ids`) from this rank's store into `output`.
int emit_gather_feature_rows(PlanBuilder& builder, std::string label, int ids, int output);
// The first layer's input for its dropout, from `kept`, an input kept on the device from one
// plan to the next (persistent), which dropout must not write into: `kept` itself without
// dropout, else a copy of its every row made on the device (dense or sparse rows as `kept`).
int first_layer_input_from_kept(PlanBuilder& builder, const StrategyContext& context, int kept);
// The tensor, rows x cols, that (positions, rows) `pairs` are placed into: sparse rows holding
// every part's entries where the parts are sparse rows, else dense.
int add_assembled_rows(PlanBuilder& builder, std::string name, const std::vector<int>& pairs,
                       std::int64_t rows, std::int64_t cols);

// A feature pull after the announcement of its requests: for every peer, gathers the rows of the
// nodes it asked for (`received`, held in `announced.received`) and sends them, and receives the
// rows of the nodes this rank asked it for (`requests`), every column, as add_feature_rows holds
// them (sparse rows travel as their entries). One all_to_all of feature traffic labelled `label`;
// returns the received rows per peer (-1 for the rank itself).
std::vector<int> emit_feature_pull(PlanBuilder& builder, const StrategyContext& context,
                                   std::string label, const Announcement& requests,
                                   const Announcement& received,
                                   const AnnouncementTensors& announced, int rank);

// The dependencies across iterations of a pipelined plan: the ops `weight_readers` (a mini-batch's
// first reads of the weights) wait for the optimizer step `step` of the plan `readers_back`
// iterations earlier, and every step for the previous one. A rank's plans have the same ops in
// every iteration (ranks without seeds run empty batches), so an earlier plan's step is at the same
// index (engines check that it is an optimizer step). Iterations before the epoch's first have
// drained and get no dependency. Validates the plan.
void add_iteration_deps(Plan& plan, const std::vector<int>& weight_readers, int step,
                        int readers_back);

}  // namespace gnnbed
