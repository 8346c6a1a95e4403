// SANCUS: staleness-aware communication-avoiding full-graph training [Peng et al., VLDB 2022;
// ALGORITHMS.md]. The nodes are split into blocks of rows, one per rank, and every epoch is one
// step on the whole graph: each rank computes its own nodes at every layer from their in-edges
// (full_graph.hpp), with a full copy of the weights, whose gradients are all-reduced.
//
// Before every layer a rank broadcasts its whole block of the layer's input (the features, then
// its activations) to every peer, as CAGNET's 1-D algorithm does, and every rank keeps the copy it
// received last of each peer's block (persistent tensors, plan.hpp). Backward, the gradients of
// the rows a rank read from a peer's block go back to that peer, which keeps them likewise. With
// skip-broadcast, in the epochs where the staleness bound allows (SancusOptions) nothing moves:
// every rank computes with its peers' copies from the last broadcast, and adds their gradients
// from then, while its own rows are always fresh. SCS-E's bound (every ε + 1 epochs) is known when
// the plan is built; SCS-A's and SCS-H's depend on the run and are not built yet.
//
// Where ours differs: SANCUS broadcasts gradient blocks too, relying on the symmetric normalised
// adjacency (A^T = A) to compute the input gradients of its own rows from them; we send each
// owner the gradient rows of its nodes a rank read (as ROC does), which works on directed graphs
// and moves at most what the broadcast moves. The broadcast is modelled as pairwise sends of the
// block to every peer: per rank the bytes of a ring broadcast.
#include "strategies/sancus.hpp"

#include "strategies/halo.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// One rank's plan for one epoch: broadcasts into the kept copies (or, in a skipped epoch, none),
// the halo's rows read from the copies.
class SancusPlanner final : public HaloPlanner {
 public:
  SancusPlanner(const StrategyContext& context, const RankIteration& iteration, bool broadcast)
      : HaloPlanner(context, iteration, "sancus"), broadcast_(broadcast) {}

 private:
  // With peers: their blocks (broadcast now, or the copies from the last broadcast) placed at the
  // halo's rows.
  int layer_input(int layer, int own, Traffic traffic) override;
  // The own rows' gradients plus what the peers sent back for the rows they read (now, or at the
  // last broadcast).
  int own_input_gradient(int layer, int grad_input) override;
  // Per peer, the rows of its nodes in this rank's halo within the peer's block (index tensors,
  // added at the first layer), and every rank's block size.
  void add_block_rows();

  const bool broadcast_;
  std::vector<std::int64_t> rows_of_rank_;
  std::vector<int> block_rows_;
};

void SancusPlanner::add_block_rows() {
  const OwnerRows owners = owner_rows(context_.partition);
  rows_of_rank_ = owners.rows_of_rank;
  block_rows_.assign(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    std::vector<std::int32_t> rows;
    rows.reserve(halo_.ids[slot].size());
    for (const NodeId v : halo_.ids[slot]) {
      rows.push_back(owners.row_of_node[static_cast<std::size_t>(v)]);
    }
    block_rows_[slot] =
        builder_.add_index("halo rows in the block of " + peer_name(q), std::move(rows));
  }
}

int SancusPlanner::layer_input(int layer, int own, Traffic traffic) {
  if (num_ranks_ == 1) return own;
  if (block_rows_.empty()) add_block_rows();
  const std::string name = "layer" + std::to_string(layer);
  const std::int64_t width = builder_.tensor(own).cols;
  Op broadcast = exchange_op("broadcast " + name + " block", traffic, num_ranks_);
  std::vector<int> copies(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    copies[slot] =
        builder_.add_persistent(name + " block of " + peer_name(q), rows_of_rank_[slot], width);
    broadcast.inputs[slot] = own;
    broadcast.outputs[slot] = copies[slot];
    broadcast.bytes_to[slot] = builder_.tensor(own).bytes();
    broadcast.bytes_from[slot] = builder_.tensor(copies[slot]).bytes();
  }
  if (broadcast_) builder_.add_op(std::move(broadcast));
  std::vector<int> pairs = {own_rows_, own};
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    pairs.push_back(halo_rows_[slot]);
    pairs.push_back(
        rows_for(builder_, name + " rows of " + peer_name(q), block_rows_[slot], copies[slot]));
  }
  return assemble(name + " input", layer, std::move(pairs), block_.num_src(), width);
}

int SancusPlanner::own_input_gradient(int layer, int grad_input) {
  const std::string name = "layer" + std::to_string(layer);
  const std::int64_t width = builder_.tensor(grad_input).cols;
  Op send_back = exchange_op("return " + name + " halo gradients", Traffic::gradients, num_ranks_);
  std::vector<int> pairs = {
      own_rows_, rows_for(builder_, name + " own input gradients", own_rows_, grad_input)};
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    const int copy = builder_.add_persistent(name + " input gradients from " + peer_name(q),
                                             builder_.tensor(served_rows_[slot]).rows, width);
    if (broadcast_) {
      send_back.inputs[slot] = rows_for(builder_, name + " halo gradients for " + peer_name(q),
                                        halo_rows_[slot], grad_input);
      send_back.outputs[slot] = copy;
      send_back.bytes_to[slot] = builder_.tensor(send_back.inputs[slot]).bytes();
      send_back.bytes_from[slot] = builder_.tensor(copy).bytes();
    }
    pairs.push_back(served_rows_[slot]);
    pairs.push_back(copy);
  }
  if (broadcast_) builder_.add_op(std::move(send_back));
  const int grad =
      builder_.add_dense("layer" + std::to_string(layer - 1) + ".out.grad", block_.num_dst, width);
  builder_.add_op(scatter_add_op(builder_, "add " + name + " halo gradients", pairs, grad));
  return grad;
}

class SancusStrategy final : public HaloStrategy {
 public:
  explicit SancusStrategy(const SancusOptions& options) : options_(options) {}

  std::string name() const override { return "sancus"; }
  int epoch_cycle() const override { return options_.staleness_epochs + 1; }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& requests, const Announcement& received) const override {
    return SancusPlanner(context, iteration, options_.broadcasts(iteration.epoch))
        .build(requests, received);
  }

 private:
  SancusOptions options_;
};

}  // namespace

SancusOptions sancus_options(const DistributionConfig& distribution) {
  refuse_mini_batch_options(distribution, "sancus");
  return {distribution.sancus_staleness_epochs};
}

std::unique_ptr<Strategy> make_sancus_strategy(const SancusOptions& options) {
  return std::make_unique<SancusStrategy>(options);
}

}  // namespace gnnbed
