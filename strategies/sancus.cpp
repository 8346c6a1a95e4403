// SANCUS: staleness-aware communication-avoiding full-graph training [Peng et al., VLDB 2022;
// ALGORITHMS.md]. The nodes are split into blocks of rows, one per rank, and every epoch is one
// step on the whole graph: each rank computes its own nodes at every layer from their in-edges
// (full_graph.hpp), with a full copy of the weights, whose gradients are all-reduced.
//
// Before every layer a rank broadcasts its whole block of the layer's input (the features, then
// its activations) to every peer, as CAGNET's 1-D algorithm does, and every rank keeps the copy it
// received last of each peer's block (persistent tensors, plan.hpp). Sparse feature rows
// (bag-of-words) are broadcast and kept sparse: a peer's block costs its non-zeros, not its width.
// Backward, the gradients of the rows a rank read from a peer's block go back to that peer, which
// keeps them likewise. With skip-broadcast, a rank whose staleness bound allows it
// (sancus_bounds.hpp: SCS-E, SCS-A or SCS-H, decided per rank and layer before the epoch and
// announced) sends nothing: its peers compute with their copies of its block from its last
// broadcast, and it adds their gradients from then, while every rank's own rows are always fresh.
//
// Where ours differs: SANCUS broadcasts gradient blocks too, relying on the symmetric normalised
// adjacency (A^T = A) to compute the input gradients of its own rows from them; we send each
// owner the gradient rows of its nodes a rank read (as ROC does) when the owner broadcast the
// layer, which works on directed graphs and moves at most what the broadcast moves. The broadcast
// is modelled as pairwise sends of the block to every peer: per rank the bytes of a ring
// broadcast.
#include "strategies/sancus.hpp"

#include <algorithm>

#include "strategies/halo.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/sancus_bounds.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// SCS-H's epochs replayed by the simulator: its decisions are drawn, so no shorter cycle repeats.
constexpr int kChangeBoundEpochs = 4;

bool any_broadcast(const std::vector<char>& layer) {
  return std::any_of(layer.begin(), layer.end(), [](char b) { return b != 0; });
}

// One rank's plan for one epoch: the broadcasts its bound and its peers' decided (into the kept
// copies), the halo's rows read from the copies.
class SancusPlanner final : public HaloPlanner {
 public:
  SancusPlanner(const StrategyContext& context, const RankIteration& iteration,
                SancusBroadcasts broadcasts, bool keeps_computed_blocks, bool skips)
      : HaloPlanner(context, iteration, "sancus"),
        broadcasts_(std::move(broadcasts)),
        keeps_computed_blocks_(keeps_computed_blocks),
        skips_(skips) {}

 private:
  // With peers: their blocks (broadcast now, or the copies from their last broadcast) placed at
  // the halo's rows.
  int layer_input(int layer, int own, Traffic traffic) override;
  // The own rows' gradients plus what the peers sent back for the rows they read (now, or when
  // this rank last broadcast the layer).
  int own_input_gradient(int layer, int grad_input) override;
  // Per peer, the rows of its nodes in this rank's halo within the peer's block (index tensors,
  // added at the first layer), and every rank's block size.
  void add_block_rows();
  // SCS-H: the own block of `layer` kept as computed, and as sent when broadcast.
  void keep_own_block(int layer, int own);
  // The kept copy of peer q's block of `layer`'s input, and the rows of it this rank reads: sparse
  // rows like the own block's where the features are sparse.
  int kept_block(const std::string& name, int q, int own);
  int halo_rows_of(const std::string& name, int q, int copy);
  bool takes_sparse_features() const override { return true; }
  // The features never change: with skipping they move in the first epoch only, and the first
  // layer's input built then is kept on the device; without, it is built every epoch.
  bool keeps_first_layer_input() const override { return skips_; }
  bool reuses_first_layer_input() const override { return !any_broadcast(broadcasts_.front()); }

  const SancusBroadcasts broadcasts_;
  const bool keeps_computed_blocks_;
  const bool skips_;
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

void SancusPlanner::keep_own_block(int layer, int own) {
  const TensorSpec& block = builder_.tensor(own);
  const std::int64_t rows = block.rows;
  const std::int64_t width = block.cols;
  const int computed =
      builder_.add_persistent(computed_block_name(layer, iteration_.epoch), rows, width);
  builder_.add_persistent(computed_block_name(layer, iteration_.epoch + 1), rows, width);
  const int sent = builder_.add_persistent(sent_block_name(layer), rows, width);
  const std::string name = "layer" + std::to_string(layer) + " own block";
  builder_.add_op(
      gather_rows_op(builder_, "keep " + name + " as computed", own_rows_, own, computed));
  if (broadcasts_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(rank_)]) {
    builder_.add_op(gather_rows_op(builder_, "keep " + name + " as sent", own_rows_, own, sent));
  }
}

int SancusPlanner::layer_input(int layer, int own, Traffic traffic) {
  if (num_ranks_ == 1) return own;
  if (block_rows_.empty()) add_block_rows();
  const std::string name = "layer" + std::to_string(layer);
  const std::int64_t width = builder_.tensor(own).cols;
  const std::vector<char>& sends = broadcasts_[static_cast<std::size_t>(layer)];
  if (layer > 0 && keeps_computed_blocks_) keep_own_block(layer, own);
  Op broadcast = exchange_op("broadcast " + name + " block", traffic, num_ranks_);
  std::vector<int> copies(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    copies[slot] = kept_block(name, q, own);
    if (sends[static_cast<std::size_t>(rank_)]) {
      broadcast.inputs[slot] = own;
      broadcast.bytes_to[slot] = builder_.tensor(own).bytes();
    }
    if (sends[slot]) {
      broadcast.outputs[slot] = copies[slot];
      broadcast.bytes_from[slot] = builder_.tensor(copies[slot]).bytes();
    }
  }
  // Every rank plans the op when any rank broadcasts: the exchange is one all-to-all for all.
  if (any_broadcast(sends)) builder_.add_op(std::move(broadcast));
  std::vector<int> pairs = {own_rows_, own};
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    pairs.push_back(halo_rows_[slot]);
    pairs.push_back(halo_rows_of(name, q, copies[slot]));
  }
  return assemble(name + " input", layer, std::move(pairs), block_.num_src(), width);
}

int SancusPlanner::kept_block(const std::string& name, int q, int own) {
  const auto slot = static_cast<std::size_t>(q);
  const std::string copy = name + " block of " + peer_name(q);
  if (builder_.tensor(own).kind != TensorKind::sparse) {
    return builder_.add_persistent(copy, rows_of_rank_[slot], builder_.tensor(own).cols);
  }
  // A block's rows are its owner's nodes in increasing id (owner_rows), as nodes_of lists them.
  return builder_.persistent(
      add_feature_rows(builder_, context_, copy, context_.partition.nodes_of(q)));
}

int SancusPlanner::halo_rows_of(const std::string& name, int q, int copy) {
  const auto slot = static_cast<std::size_t>(q);
  const std::string rows = name + " rows of " + peer_name(q);
  if (builder_.tensor(copy).kind != TensorKind::sparse) {
    return rows_for(builder_, rows, block_rows_[slot], copy);
  }
  const int output = add_feature_rows(builder_, context_, rows, halo_.ids[slot]);
  Op gather = gather_rows_op(builder_, "gather " + rows, block_rows_[slot], copy, output);
  gather.stream = Stream::copy;  // sparse rows stay on the host, as the features they are
  builder_.add_op(std::move(gather));
  return output;
}

int SancusPlanner::own_input_gradient(int layer, int grad_input) {
  const std::string name = "layer" + std::to_string(layer);
  const std::int64_t width = builder_.tensor(grad_input).cols;
  const std::vector<char>& sent = broadcasts_[static_cast<std::size_t>(layer)];
  Op send_back = exchange_op("return " + name + " halo gradients", Traffic::gradients, num_ranks_);
  std::vector<int> pairs = {
      own_rows_, rows_for(builder_, name + " own input gradients", own_rows_, grad_input)};
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    const int copy = builder_.add_persistent(name + " input gradients from " + peer_name(q),
                                             builder_.tensor(served_rows_[slot]).rows, width);
    // The rows read from a fresh block go back fresh; an owner that did not broadcast goes on
    // with what came back when it last did.
    if (sent[slot]) {
      send_back.inputs[slot] = rows_for(builder_, name + " halo gradients for " + peer_name(q),
                                        halo_rows_[slot], grad_input);
      send_back.bytes_to[slot] = builder_.tensor(send_back.inputs[slot]).bytes();
    }
    if (sent[static_cast<std::size_t>(rank_)]) {
      send_back.outputs[slot] = copy;
      send_back.bytes_from[slot] = builder_.tensor(copy).bytes();
    }
    pairs.push_back(served_rows_[slot]);
    pairs.push_back(copy);
  }
  if (any_broadcast(sent)) builder_.add_op(std::move(send_back));
  const int grad =
      builder_.add_dense("layer" + std::to_string(layer - 1) + ".out.grad", block_.num_dst, width);
  builder_.add_op(scatter_add_op(builder_, "add " + name + " halo gradients", pairs, grad));
  return grad;
}

class SancusStrategy final : public HaloStrategy {
 public:
  explicit SancusStrategy(const SancusOptions& options) : options_(options) {}

  std::string name() const override { return "sancus"; }
  int epoch_cycle() const override {
    return options_.bound == SancusBound::change ? kChangeBoundEpochs
                                                 : options_.staleness_epochs + 1;
  }
  bool carries_state() const override { return options_.skips(); }

  // The halo, and with skipping the rank's decisions for the epoch in front of every payload.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    Announcement halo = HaloStrategy::announce(context, iteration);
    if (!options_.skips()) return halo;
    return with_broadcasts(halo, own_broadcasts(options_, context, iteration), iteration.rank);
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& sent, const Announcement& received) const override {
    const int num_layers = context.model.num_layers();
    if (!options_.skips()) {
      const SancusBroadcasts every(static_cast<std::size_t>(num_layers),
                                   std::vector<char>(received.size(), 1));
      return SancusPlanner(context, iteration, every, false, false).build(sent, received);
    }
    DecodedAnnouncements decoded = decode_broadcasts(sent, received, iteration.rank, num_layers);
    std::vector<char> reads_from(decoded.sent.size(), 0);
    for (std::size_t q = 0; q < reads_from.size(); ++q) reads_from[q] = !decoded.sent[q].empty();
    SancusPlanner planner(context, iteration, decoded.broadcasts,
                          options_.bound == SancusBound::change, true);
    planner.announced_as(sent, received);
    Plan plan = planner.build(decoded.sent, decoded.received);
    plan.carried_state = next_sancus_state(iteration, decoded.broadcasts, reads_from);
    return plan;
  }

 private:
  SancusOptions options_;
};

SancusBound sancus_bound(const std::string& name) {
  if (name == "adaptive") return SancusBound::adaptive;
  if (name == "change") return SancusBound::change;
  return SancusBound::epochs;
}

}  // namespace

SancusOptions sancus_options(const DistributionConfig& distribution) {
  refuse_mini_batch_options(distribution, "sancus");
  require_one_of("distribution.sancus_bound", distribution.sancus_bound,
                 {"epochs", "adaptive", "change"});
  SancusOptions options;
  options.bound = sancus_bound(distribution.sancus_bound);
  options.staleness_epochs = distribution.sancus_staleness_epochs;
  options.change_threshold = distribution.sancus_change_threshold.value_or(0);
  options.broadcast_fraction = distribution.sancus_broadcast_fraction;
  return options;
}

std::unique_ptr<Strategy> make_sancus_strategy(const SancusOptions& options) {
  return std::make_unique<SancusStrategy>(options);
}

std::vector<std::vector<char>> sancus_broadcasts(const Plan& plan, int num_layers) {
  SancusBroadcasts broadcasts = broadcasts_in_state(plan.carried_state);
  if (broadcasts.empty()) {
    broadcasts.assign(static_cast<std::size_t>(num_layers),
                      std::vector<char>(static_cast<std::size_t>(plan.num_ranks), 1));
  }
  return broadcasts;
}

}  // namespace gnnbed
