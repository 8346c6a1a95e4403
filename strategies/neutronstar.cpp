// NeutronStar's hybrid dependency management [Wang et al., SIGMOD 2022; ALGORITHMS.md]: full-graph
// training in which every rank computes its own nodes at every layer, as ROC does, but decides for
// each remote dependency (a node of a peer whose embedding one of its layers reads) whether to
// fetch the embedding from its owner every layer (DepComm: ROC's halo exchange, with the
// gradients sent back) or to compute it again itself from a copy of the dependency's
// neighbourhood (DepCache: redundant computation, nothing moves during the epoch). The hybrid
// chooses per layer and dependency with NeutronStar's cost model and greedy order: recomputing u
// costs d (Tv |V(u)| + Te |E(u)|) for the vertices V(u) it needs that the layer below does not
// compute anyway and its in-edges E(u), fetching it costs Tc d; the cheapest to recompute go
// first, each making its neighbours available to the next.
//
// A rank's layer l computes its own nodes, then the remote ones it recomputes for layer l + 1
// (increasing ids), from every in-neighbour of those (full_graph.hpp's numbering, the whole
// graph's GCN degrees). The features of every remote node its first layer reads are copied from
// their owners in the first epoch into persistent tensors (plan.hpp) and read from there after:
// features never change, so a copy is NeutronStar's replicated dependency and costs nothing after
// the first epoch, in every mode (DepComm included, unlike roc, which pulls them every epoch).
// Gradients flow back only along what was fetched; what a rank recomputed it differentiates
// itself, so the sum over ranks of the weight gradients is the single-process one.
//
// Overlap (NeutronStarOptions::overlap): a layer's destinations whose every source was computed
// here run while the fetch moves, and the others once it has arrived; backward, the others first,
// so that the fetched rows' gradients go back while the rest is computed (block_split.hpp: exact
// for every model, GAT's softmax included). NeutronStar overlaps by source instead, aggregating
// each peer's chunk as it arrives, which needs a layer split around a sum over source chunks that
// the engines do not have. The fetches run in the pairwise all-to-all's ring order with
// distribution.all_to_all_block_steps 1; the lock-free queues are the engines' business; Tv, Te
// and Tc are options (NeutronStarOptions), which simulate probes from its cluster.
#include "strategies/neutronstar.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "strategies/block_split.hpp"
#include "strategies/full_graph.hpp"
#include "strategies/halo.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

using PeerIds = std::vector<std::vector<std::int32_t>>;  // [peer]: node ids

// Which nodes a rank computes at every layer and where every remote source comes from.
struct Dependencies {
  std::vector<std::shared_ptr<const Block>> blocks;  // [layer]: own nodes, then recomputed ones
  std::vector<PeerIds> fetched;  // [layer][peer]: its nodes whose layer input is fetched
                                 // (layer 0: whose features are copied), in source order
};

class DependencyPlanner {
 public:
  DependencyPlanner(const StrategyContext& context, const RankIteration& iteration,
                    const NeutronStarOptions& options)
      : context_(context), iteration_(iteration), options_(options) {}

  Dependencies plan() const;

 private:
  // The remote sources of `block` that layer - 1 computes again; the rest are fetched.
  std::vector<NodeId> recomputed(int layer, const Block& block) const;
  std::vector<NodeId> cheapest_to_recompute(int layer, std::span<const NodeId> remote) const;

  const StrategyContext& context_;
  const RankIteration& iteration_;
  const NeutronStarOptions& options_;
};

Dependencies DependencyPlanner::plan() const {
  const int num_layers = context_.model.num_layers();
  const Block& own_block = local_block(iteration_);
  const std::vector<NodeId> own(own_block.dst_nodes().begin(), own_block.dst_nodes().end());
  Dependencies dependencies;
  dependencies.blocks.resize(static_cast<std::size_t>(num_layers));
  dependencies.fetched.resize(static_cast<std::size_t>(num_layers));
  std::vector<NodeId> destinations = own;
  for (int l = num_layers - 1; l >= 0; --l) {
    const auto slot = static_cast<std::size_t>(l);
    dependencies.blocks[slot] =
        destinations.size() == own.size()
            ? iteration_.local_block
            : std::make_shared<const Block>(
                  local_graph_block(*iteration_.structure, destinations, *iteration_.gcn_degrees));
    const Block& block = *dependencies.blocks[slot];
    const std::vector<NodeId> again = l > 0 ? recomputed(l, block) : std::vector<NodeId>{};
    PeerIds& fetched = dependencies.fetched[slot];
    fetched.assign(static_cast<std::size_t>(context_.num_ranks), {});
    const std::unordered_set<NodeId> chosen(again.begin(), again.end());
    for (const NodeId v : block.src_nodes) {
      const int owner = context_.partition.owner(v);
      if (owner != iteration_.rank && !chosen.contains(v))
        fetched[static_cast<std::size_t>(owner)].push_back(v);
    }
    destinations = own;
    destinations.insert(destinations.end(), again.begin(), again.end());
  }
  return dependencies;
}

std::vector<NodeId> DependencyPlanner::recomputed(int layer, const Block& block) const {
  std::vector<NodeId> remote;
  for (const NodeId v : block.src_nodes) {
    if (context_.partition.owner(v) != iteration_.rank) remote.push_back(v);
  }
  if (options_.dependencies == "communicate" || remote.empty()) return {};
  std::vector<NodeId> chosen =
      options_.dependencies == "cache" ? remote : cheapest_to_recompute(layer, remote);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<NodeId> DependencyPlanner::cheapest_to_recompute(int layer,
                                                             std::span<const NodeId> remote) const {
  const Graph& graph = *iteration_.structure;
  // What layer - 1 computes anyway: the own nodes' layer inputs, their own and their neighbours'.
  const Block& own = local_block(iteration_);
  std::unordered_set<NodeId> available(own.src_nodes.begin(), own.src_nodes.end());
  const double below = context_.model.layer(layer - 1).in_dim;
  const auto recompute_cost = [&](NodeId u) {
    std::int64_t missing = available.contains(u) ? 0 : 1;
    for (const NodeId w : graph.in_neighbors(u)) missing += available.contains(w) ? 0 : 1;
    return below * (options_.vertex_seconds * static_cast<double>(missing) +
                    options_.edge_seconds * static_cast<double>(graph.in_neighbors(u).size()));
  };
  const double fetch_cost = options_.transfer_seconds * context_.model.layer(layer).in_dim;
  std::vector<std::pair<double, NodeId>> order;
  order.reserve(remote.size());
  for (const NodeId u : remote) order.emplace_back(recompute_cost(u), u);
  std::sort(order.begin(), order.end());
  std::vector<NodeId> chosen;
  // A cost only falls as more becomes available, so each is looked at again when its turn comes.
  for (const auto& entry : order) {
    const NodeId u = entry.second;
    if (recompute_cost(u) >= fetch_cost) continue;
    chosen.push_back(u);
    available.insert(u);
    for (const NodeId w : graph.in_neighbors(u)) available.insert(w);
  }
  return chosen;
}

// A peer's announcement: for every layer, how many of this rank's nodes it fetches, then their
// ids (layer 0: whose features it copies).
std::vector<std::int32_t> encode_fetched(const Dependencies& dependencies, int peer) {
  std::vector<std::int32_t> payload;
  for (const PeerIds& layer : dependencies.fetched) {
    const std::vector<std::int32_t>& ids = layer[static_cast<std::size_t>(peer)];
    payload.push_back(static_cast<std::int32_t>(ids.size()));
    payload.insert(payload.end(), ids.begin(), ids.end());
  }
  return payload;
}

std::vector<std::vector<std::int32_t>> decode_fetched(const std::vector<std::int32_t>& payload,
                                                      int num_layers, int peer) {
  std::vector<std::vector<std::int32_t>> layers;
  std::size_t at = 0;
  for (int l = 0; l < num_layers; ++l) {
    if (at >= payload.size() || payload[at] < 0 ||
        static_cast<std::size_t>(payload[at]) > payload.size() - at - 1) {
      throw Error("neutronstar: the announcement of rank " + std::to_string(peer) +
                  " ends before layer " + std::to_string(l) + "'s dependencies");
    }
    const auto count = static_cast<std::size_t>(payload[at]);
    const auto first = payload.begin() + static_cast<std::ptrdiff_t>(at + 1);
    layers.emplace_back(first, first + static_cast<std::ptrdiff_t>(count));
    at += count + 1;
  }
  return layers;
}

// Source positions by node id, of one layer's block.
std::unordered_map<NodeId, std::int32_t> source_positions(const Block& block) {
  std::unordered_map<NodeId, std::int32_t> positions;
  positions.reserve(block.src_nodes.size());
  for (std::size_t s = 0; s < block.src_nodes.size(); ++s) {
    positions.emplace(block.src_nodes[s], static_cast<std::int32_t>(s));
  }
  return positions;
}

std::vector<std::int32_t> positions_of(const std::unordered_map<NodeId, std::int32_t>& positions,
                                       std::span<const std::int32_t> ids) {
  std::vector<std::int32_t> out;
  out.reserve(ids.size());
  for (const std::int32_t v : ids) out.push_back(positions.at(v));
  return out;
}

// One rank's plan for one epoch, from its dependencies and what every peer fetches from it.
class NeutronStarPlanner {
 public:
  NeutronStarPlanner(const StrategyContext& context, const RankIteration& iteration,
                     std::shared_ptr<const Dependencies> dependencies, const Announcement& received,
                     bool overlap)
      : context_(context),
        iteration_(iteration),
        rank_(iteration.rank),
        num_ranks_(context.num_ranks),
        overlap_(overlap),
        dependencies_(std::move(dependencies)),
        builder_("neutronstar", iteration.rank, context.num_ranks, iteration.epoch,
                 iteration.iteration),
        model_(builder_, context.model, iteration.dropout_key) {
    served_.resize(static_cast<std::size_t>(num_ranks_));
    for (int q = 0; q < num_ranks_; ++q) {
      if (q == rank_) continue;
      served_[static_cast<std::size_t>(q)] =
          decode_fetched(received[static_cast<std::size_t>(q)], context.model.num_layers(), q);
    }
  }

  Plan build(const Announcement& requests, const Announcement& received);

 private:
  const Block& block(int layer) const {
    return *dependencies_->blocks[static_cast<std::size_t>(layer)];
  }
  const std::vector<std::int32_t>& fetched(int layer, int q) const {
    return dependencies_->fetched[static_cast<std::size_t>(layer)][static_cast<std::size_t>(q)];
  }
  const std::vector<std::int32_t>& served(int layer, int q) const {
    return served_[static_cast<std::size_t>(q)][static_cast<std::size_t>(layer)];
  }
  // Per peer, one layer's rows that move, as index tensors shared by forward and backward:
  // `served`, where the own nodes the peer fetches sit among the layer below's destinations (the
  // own prefix); `fetched`, where the nodes fetched from it sit among the layer's sources.
  struct PeerRows {
    std::vector<int> served;
    std::vector<int> fetched;
  };
  const PeerRows& peer_rows(int layer);
  // Only the `served` half (the overlap fetches into its own positions).
  const std::vector<int>& served_rows(int layer);
  // A layer's destinations split for the overlap (block_split.hpp): the ready part reads only
  // rows the layer below computed here and runs while the fetch moves; the waiting part reads
  // fetched rows too. As plan tensors: blocks, and index tensors of positions.
  struct LayerSplit {
    int ready_block = -1;
    int waiting_block = -1;
    int ready_destinations = -1;    // the ready part's destinations among the layer's
    int waiting_destinations = -1;  // the waiting part's
    int ready_rows_below = -1;      // each ready source's row among the layer below's outputs
    int waiting_local = -1;         // the waiting sources computed below, among its sources
    int waiting_rows_below = -1;    // and their rows below
    std::vector<int> fetched;       // per peer: where its rows sit among the waiting sources
  };
  // The layer's split, or nullptr where it computes as one block: without overlap, on one rank,
  // at the first layer (whose dependencies' features are copied once, not fetched) and where
  // either part would be empty.
  const LayerSplit* layer_split(int layer);
  std::optional<LayerSplit> make_split(int layer);
  // Layer `layer` forward from the layer below's output `below`; its backward from the gradient of
  // its output, returning the gradient of the layer below's output.
  int forward(int layer, int below);
  int backward(int layer, int grad_output);
  int overlapped_forward(int layer, int below, const LayerSplit& split);
  int overlapped_backward(int layer, int grad_output, const LayerSplit& split);
  int first_layer_input();
  // Writes the first layer's input over its sources (`input`): the own features and the
  // dependencies', copied from their owners.
  void assemble_first_layer_input(int input);
  // Layer `layer`'s input over its sources, from the layer below's output `below` and what
  // the owners of the fetched dependencies send.
  int layer_input(int layer, int below);
  // The gradient of the layer below's output, from the gradient of layer `layer`'s input.
  int output_gradient(int layer, int grad_input);
  // (source positions, destination-below positions) of the sources the layer below computes.
  // Built once per layer and shared by forward and backward.
  std::pair<int, int> local_rows(int layer);
  // Per source of the layer's block, its row among the layer below's destinations where that
  // layer computes it here, else -1 (it is fetched). Built once per layer.
  const std::vector<std::int32_t>& rows_below(int layer);
  const std::unordered_map<NodeId, std::int32_t>& positions(int layer);

  const StrategyContext& context_;
  const RankIteration& iteration_;
  const int rank_;
  const int num_ranks_;
  const bool overlap_;
  const std::shared_ptr<const Dependencies> dependencies_;
  PlanBuilder builder_;
  ModelEmitter model_;
  std::vector<std::vector<std::vector<std::int32_t>>> served_;       // [peer][layer]
  std::vector<int> graphs_;                                          // block tensor per layer
  std::vector<std::unordered_map<NodeId, std::int32_t>> positions_;  // [layer], when built
  std::vector<std::pair<int, int>> local_rows_;                      // [layer], when built
  std::vector<PeerRows> peer_rows_;                                  // [layer], when built
  std::vector<std::vector<std::int32_t>> rows_below_;                // [layer], when built
  std::vector<std::optional<std::optional<LayerSplit>>> splits_;     // [layer], when decided
};

Plan NeutronStarPlanner::build(const Announcement& requests, const Announcement& received) {
  const std::vector<ParameterSpec> parameters = full_model_parameters(context_.model);
  for (const ParameterSpec& p : parameters) builder_.add_parameter(p);
  const OwnBatchTensors own = add_own_batch(builder_, context_, iteration_);
  for (int l = 0; l < context_.model.num_layers(); ++l) {
    graphs_.push_back(builder_.add_block("layer" + std::to_string(l) + " block",
                                         dependencies_->blocks[static_cast<std::size_t>(l)]));
  }
  add_announcement(builder_, requests, received, rank_);
  builder_.end_prologue();

  const int input = first_layer_input();
  int output = model_.forward_layer(0, graphs_.front(), input);
  const int last = context_.model.num_layers() - 1;
  for (int l = 1; l <= last; ++l) output = forward(l, output);
  int grad = emit_training_loss(builder_, model_, iteration_, own.seeds, output,
                                block(last).num_dst, "neutronstar");
  for (int l = last; l > 0; --l) grad = backward(l, grad);
  model_.backward_layer(0, grad, false);
  emit_all_reduce_and_step(builder_, parameters, rank_, num_ranks_,
                           context_.all_reduce_ranks_per_machine(), model_.gradient_ops());
  return builder_.finish();
}

const NeutronStarPlanner::PeerRows& NeutronStarPlanner::peer_rows(int layer) {
  served_rows(layer);
  PeerRows& built = peer_rows_[static_cast<std::size_t>(layer)];
  if (!built.fetched.empty()) return built;
  const std::string name = "layer" + std::to_string(layer);
  built.fetched.assign(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    built.fetched[static_cast<std::size_t>(q)] =
        builder_.add_index(name + " positions fetched from " + peer_name(q),
                           positions_of(positions(layer), fetched(layer, q)));
  }
  return built;
}

const std::vector<int>& NeutronStarPlanner::served_rows(int layer) {
  peer_rows_.resize(dependencies_->blocks.size());
  PeerRows& built = peer_rows_[static_cast<std::size_t>(layer)];
  if (!built.served.empty()) return built.served;
  const std::string name = "layer" + std::to_string(layer);
  built.served.assign(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    built.served[static_cast<std::size_t>(q)] = builder_.add_index(
        name + " positions fetched by " + peer_name(q),
        own_positions(local_block(iteration_), served(layer, q),
                      "neutronstar: the dependencies announced by " + peer_name(q)));
  }
  return built.served;
}

// The first layer's input never changes (features, own and the dependencies'): assembled and moved
// to the device in the first epoch and kept there (persistent), as NeutronStar keeps its
// partition's features in GPU memory. Dropout writes into its input, so with dropout every epoch
// works on a copy made on the device.
int NeutronStarPlanner::first_layer_input() {
  const Block& first = block(0);
  // Feature rows are sparse where the run keeps them sparse (add_feature_rows), dense otherwise.
  const int kept =
      builder_.persistent(add_feature_rows(builder_, context_, "layer0 input", first.src_nodes));
  if (iteration_.epoch <= 1) {
    assemble_first_layer_input(kept);
    emit_copy_to_device(builder_, kept, "copy layer0 input to device");
  }
  return first_layer_input_from_kept(builder_, context_, kept);
}

// Gathers the own features and copies the dependencies' from their owners (the only epoch that
// moves features), then writes every row of `input`.
void NeutronStarPlanner::assemble_first_layer_input(int input) {
  const Block& first = block(0);
  std::vector<std::int32_t> own_ids;
  std::vector<std::int32_t> own_rows;
  for (std::size_t s = 0; s < first.src_nodes.size(); ++s) {
    if (context_.partition.owner(first.src_nodes[s]) != rank_) continue;
    own_ids.push_back(first.src_nodes[s]);
    own_rows.push_back(static_cast<std::int32_t>(s));
  }
  const bool all_own = static_cast<std::int64_t>(own_rows.size()) == first.num_src();
  const int own_features =
      all_own ? input : add_feature_rows(builder_, context_, "own features", own_ids);
  emit_gather_feature_rows(builder_, "gather own features",
                           builder_.add_index("own source nodes", std::move(own_ids)),
                           own_features);
  if (all_own) return;
  Op copy = exchange_op("copy dependency features", Traffic::features, num_ranks_);
  const auto& positions = this->positions(0);
  std::vector<int> pairs = {builder_.add_index("own source positions", std::move(own_rows)),
                            own_features};
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    copy.outputs[slot] = add_feature_rows(builder_, context_,
                                          "dependency features of " + peer_name(q), fetched(0, q));
    copy.inputs[slot] = add_feature_rows(builder_, context_,
                                         "dependency features for " + peer_name(q), served(0, q));
    emit_gather_feature_rows(builder_, "gather dependency features for " + peer_name(q),
                             builder_.add_index("dependencies of " + peer_name(q), served(0, q)),
                             copy.inputs[slot]);
    copy.bytes_to[slot] = builder_.tensor(copy.inputs[slot]).bytes();
    copy.bytes_from[slot] = builder_.tensor(copy.outputs[slot]).bytes();
    pairs.push_back(builder_.add_index("dependency positions of " + peer_name(q),
                                       positions_of(positions, fetched(0, q))));
    pairs.push_back(copy.outputs[slot]);
  }
  builder_.add_op(std::move(copy));
  builder_.add_op(
      scatter_rows_op(builder_, "assemble layer0 input", std::move(pairs), input, Stream::copy));
}

const std::unordered_map<NodeId, std::int32_t>& NeutronStarPlanner::positions(int layer) {
  positions_.resize(dependencies_->blocks.size());
  auto& built = positions_[static_cast<std::size_t>(layer)];
  if (built.empty()) built = source_positions(block(layer));
  return built;
}

const std::vector<std::int32_t>& NeutronStarPlanner::rows_below(int layer) {
  rows_below_.resize(dependencies_->blocks.size());
  auto& built = rows_below_[static_cast<std::size_t>(layer)];
  if (!built.empty() || block(layer).src_nodes.empty()) return built;
  const Block& here = block(layer);
  const auto& below = positions(layer - 1);
  built.assign(here.src_nodes.size(), -1);
  for (std::size_t s = 0; s < here.src_nodes.size(); ++s) {
    const auto it = below.find(here.src_nodes[s]);
    if (it != below.end() && it->second < block(layer - 1).num_dst) built[s] = it->second;
  }
  return built;
}

std::pair<int, int> NeutronStarPlanner::local_rows(int layer) {
  local_rows_.resize(dependencies_->blocks.size(), {-1, -1});
  auto& built = local_rows_[static_cast<std::size_t>(layer)];
  if (built.first >= 0) return built;
  const std::vector<std::int32_t>& below = rows_below(layer);
  std::vector<std::int32_t> sources;
  std::vector<std::int32_t> destinations;
  for (std::size_t s = 0; s < below.size(); ++s) {
    if (below[s] < 0) continue;
    sources.push_back(static_cast<std::int32_t>(s));
    destinations.push_back(below[s]);
  }
  const std::string name = "layer" + std::to_string(layer);
  built = {builder_.add_index(name + " sources computed below", std::move(sources)),
           builder_.add_index(name + " their rows below", std::move(destinations))};
  return built;
}

int NeutronStarPlanner::layer_input(int layer, int below) {
  const std::string name = "layer" + std::to_string(layer);
  const auto [sources, rows_below] = local_rows(layer);
  std::vector<int> pairs = {sources,
                            rows_for(builder_, name + " computed rows", rows_below, below)};
  if (num_ranks_ > 1) {
    const PeerRows& moved = peer_rows(layer);
    pairs = exchange_rows(builder_, name + " fetch dependencies", Traffic::activations, rank_,
                          moved.served, moved.fetched, below, std::move(pairs));
  }
  const int input =
      builder_.add_dense(name + " input", block(layer).num_src(), builder_.tensor(below).cols);
  builder_.add_op(scatter_add_op(builder_, "assemble " + name + " input", std::move(pairs), input));
  return input;
}

int NeutronStarPlanner::output_gradient(int layer, int grad_input) {
  const std::string name = "layer" + std::to_string(layer);
  const auto [sources, rows_below] = local_rows(layer);
  std::vector<int> pairs = {rows_below,
                            rows_for(builder_, name + " computed gradients", sources, grad_input)};
  if (num_ranks_ > 1) {
    const PeerRows& moved = peer_rows(layer);
    pairs = exchange_rows(builder_, name + " dependency gradients", Traffic::gradients, rank_,
                          moved.fetched, moved.served, grad_input, std::move(pairs));
  }
  const int grad = builder_.add_dense("layer" + std::to_string(layer - 1) + ".out.grad",
                                      block(layer - 1).num_dst, builder_.tensor(grad_input).cols);
  builder_.add_op(scatter_add_op(builder_, "add " + name + " gradients", std::move(pairs), grad));
  return grad;
}

const LayerUse kReadyPart{0, " (ready)"};
const LayerUse kWaitingPart{1, " (waiting)"};

int NeutronStarPlanner::forward(int layer, int below) {
  if (const LayerSplit* split = layer_split(layer)) return overlapped_forward(layer, below, *split);
  return model_.forward_layer(layer, graphs_[static_cast<std::size_t>(layer)],
                              layer_input(layer, below));
}

int NeutronStarPlanner::backward(int layer, int grad_output) {
  if (const LayerSplit* split = layer_split(layer)) {
    return overlapped_backward(layer, grad_output, *split);
  }
  return output_gradient(layer, model_.backward_layer(layer, grad_output, true));
}

const NeutronStarPlanner::LayerSplit* NeutronStarPlanner::layer_split(int layer) {
  if (!overlap_ || num_ranks_ == 1 || layer == 0) return nullptr;
  splits_.resize(dependencies_->blocks.size());
  auto& decided = splits_[static_cast<std::size_t>(layer)];
  if (!decided) decided = make_split(layer);
  return decided->has_value() ? &**decided : nullptr;
}

std::optional<NeutronStarPlanner::LayerSplit> NeutronStarPlanner::make_split(int layer) {
  const std::vector<std::int32_t>& below = rows_below(layer);
  std::vector<bool> at_hand(below.size());
  for (std::size_t s = 0; s < below.size(); ++s) at_hand[s] = below[s] >= 0;
  BlockSplit parts = split_by_sources_at_hand(block(layer), at_hand);
  if (parts.ready.destinations.empty() || parts.waiting.destinations.empty()) return std::nullopt;
  const std::string name = "layer" + std::to_string(layer);
  LayerSplit split;
  split.ready_block = builder_.add_block(name + " ready block", parts.ready.block);
  split.waiting_block = builder_.add_block(name + " waiting block", parts.waiting.block);
  split.ready_destinations =
      builder_.add_index(name + " ready destinations", std::move(parts.ready.destinations));
  split.waiting_destinations =
      builder_.add_index(name + " waiting destinations", std::move(parts.waiting.destinations));
  std::vector<std::int32_t> ready_rows;
  ready_rows.reserve(parts.ready.sources.size());
  for (const std::int32_t s : parts.ready.sources)
    ready_rows.push_back(below[static_cast<std::size_t>(s)]);
  split.ready_rows_below = builder_.add_index(name + " ready sources below", std::move(ready_rows));
  std::vector<std::int32_t> local;
  std::vector<std::int32_t> local_rows;
  std::unordered_map<NodeId, std::int32_t> fetched_at;  // a fetched node's waiting source
  for (std::size_t i = 0; i < parts.waiting.sources.size(); ++i) {
    const auto s = static_cast<std::size_t>(parts.waiting.sources[i]);
    if (below[s] >= 0) {
      local.push_back(static_cast<std::int32_t>(i));
      local_rows.push_back(below[s]);
    } else {
      fetched_at.emplace(block(layer).src_nodes[s], static_cast<std::int32_t>(i));
    }
  }
  split.waiting_local =
      builder_.add_index(name + " waiting sources computed below", std::move(local));
  split.waiting_rows_below = builder_.add_index(name + " their rows below", std::move(local_rows));
  split.fetched.assign(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    split.fetched[static_cast<std::size_t>(q)] =
        builder_.add_index(name + " waiting positions fetched from " + peer_name(q),
                           positions_of(fetched_at, fetched(layer, q)));
  }
  return split;
}

// The fetch starts first and the ready part runs while it moves; the waiting part runs once its
// rows are there. The output is the two parts' rows in the layer's destination order.
int NeutronStarPlanner::overlapped_forward(int layer, int below, const LayerSplit& split) {
  const std::string name = "layer" + std::to_string(layer);
  std::vector<int> pairs =
      exchange_rows(builder_, name + " fetch dependencies", Traffic::activations, rank_,
                    served_rows(layer), split.fetched, below, {});
  const int ready_input =
      rows_for(builder_, name + " input (ready)", split.ready_rows_below, below);
  const int ready = model_.forward_layer(layer, split.ready_block, ready_input, kReadyPart);
  pairs.push_back(split.waiting_local);
  pairs.push_back(
      rows_for(builder_, name + " computed rows (waiting)", split.waiting_rows_below, below));
  const int waiting_input = builder_.add_dense(
      name + " input (waiting)", builder_.tensor(split.waiting_block).block->num_src(),
      builder_.tensor(below).cols);
  builder_.add_op(
      scatter_add_op(builder_, "assemble " + name + " input", std::move(pairs), waiting_input));
  const int waiting = model_.forward_layer(layer, split.waiting_block, waiting_input, kWaitingPart);
  const int output =
      builder_.add_dense(name + ".out", block(layer).num_dst, builder_.tensor(ready).cols);
  builder_.add_op(
      scatter_rows_op(builder_, "assemble " + name + " output",
                      {split.ready_destinations, ready, split.waiting_destinations, waiting},
                      output, Stream::compute));
  return output;
}

// The waiting part first, so that its fetched rows' gradients go back to their owners while the
// ready part's are computed.
int NeutronStarPlanner::overlapped_backward(int layer, int grad_output, const LayerSplit& split) {
  const std::string name = "layer" + std::to_string(layer);
  const int waiting = model_.backward_layer(layer,
                                            rows_for(builder_, name + " output gradient (waiting)",
                                                     split.waiting_destinations, grad_output),
                                            true, kWaitingPart);
  std::vector<int> pairs =
      exchange_rows(builder_, name + " dependency gradients", Traffic::gradients, rank_,
                    split.fetched, served_rows(layer), waiting, {});
  const int ready = model_.backward_layer(
      layer,
      rows_for(builder_, name + " output gradient (ready)", split.ready_destinations, grad_output),
      true, kReadyPart);
  const int waiting_local =
      rows_for(builder_, name + " computed gradients (waiting)", split.waiting_local, waiting);
  pairs.insert(pairs.end(),
               {split.ready_rows_below, ready, split.waiting_rows_below, waiting_local});
  const int grad = builder_.add_dense("layer" + std::to_string(layer - 1) + ".out.grad",
                                      block(layer - 1).num_dst, builder_.tensor(ready).cols);
  builder_.add_op(scatter_add_op(builder_, "add " + name + " gradients", std::move(pairs), grad));
  return grad;
}

class NeutronStarStrategy final : public HaloStrategy {
 public:
  explicit NeutronStarStrategy(NeutronStarOptions options) : options_(std::move(options)) {}

  std::string name() const override { return "neutronstar"; }

  void check(const StrategyContext& context) const override {
    HaloStrategy::check(context);
    require(options_.dependencies == "communicate" || !context.structure_partitioned,
            "distribution.structure",
            "neutronstar with dependencies '" + options_.dependencies +
                "' computes remote nodes from their neighbourhoods: it needs the structure "
                "replicated");
  }

  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    const std::shared_ptr<const Dependencies> dependencies = dependencies_of(context, iteration);
    std::vector<std::vector<std::int32_t>> payloads(static_cast<std::size_t>(context.num_ranks));
    for (int q = 0; q < context.num_ranks; ++q) {
      if (q != iteration.rank)
        payloads[static_cast<std::size_t>(q)] = encode_fetched(*dependencies, q);
    }
    return Announcement(std::move(payloads));
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& requests, const Announcement& received) const override {
    return NeutronStarPlanner(context, iteration, dependencies_of(context, iteration), received,
                              options_.overlap)
        .build(requests, received);
  }

 private:
  // A rank's dependencies are the same every epoch (its share of the graph, the partition and the
  // model do not change), and NeutronStar works them out once, before training: the last rank's
  // are kept, so that a rank's engine computes them once per run and its announcement and plan
  // share them. A process runs one rank; the simulator, planning the ranks in turn, keeps one at
  // a time (not every rank's blocks at once).
  std::shared_ptr<const Dependencies> dependencies_of(const StrategyContext& context,
                                                      const RankIteration& iteration) const {
    const std::lock_guard<std::mutex> lock(kept_.mutex);
    if (kept_.dependencies == nullptr || kept_.context != &context ||
        kept_.rank != iteration.rank || kept_.share != iteration.local_block) {
      kept_.dependencies = std::make_shared<const Dependencies>(
          DependencyPlanner(context, iteration, options_).plan());
      kept_.context = &context;
      kept_.rank = iteration.rank;
      kept_.share = iteration.local_block;
    }
    return kept_.dependencies;
  }

  NeutronStarOptions options_;
  struct Kept {
    std::mutex mutex;
    std::shared_ptr<const Dependencies> dependencies;
    const StrategyContext* context = nullptr;
    int rank = -1;
    std::shared_ptr<const Block> share;  // held, so that its address names it
  };
  mutable Kept kept_;
};

}  // namespace

NeutronStarOptions neutronstar_options(const DistributionConfig& distribution) {
  refuse_mini_batch_options(distribution, "neutronstar");
  NeutronStarOptions options;
  options.dependencies = distribution.neutronstar_dependencies;
  options.vertex_seconds = distribution.neutronstar_vertex_seconds.value_or(options.vertex_seconds);
  options.edge_seconds = distribution.neutronstar_edge_seconds.value_or(options.edge_seconds);
  options.transfer_seconds =
      distribution.neutronstar_transfer_seconds.value_or(options.transfer_seconds);
  options.overlap = distribution.neutronstar_overlap;
  return options;
}

std::unique_ptr<Strategy> make_neutronstar_strategy(const NeutronStarOptions& options) {
  return std::make_unique<NeutronStarStrategy>(options);
}

}  // namespace gnnbed
