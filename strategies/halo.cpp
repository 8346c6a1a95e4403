#include "strategies/halo.hpp"

#include <algorithm>
#include <numeric>

#include "strategies/model_ops.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {

Halo halo_of(const StrategyContext& context, const Block& block, int rank) {
  const auto num_ranks = static_cast<std::size_t>(context.num_ranks);
  Halo halo{std::vector<std::vector<std::int32_t>>(num_ranks),
            std::vector<std::vector<std::int32_t>>(num_ranks)};
  for (std::int64_t s = block.num_dst; s < block.num_src(); ++s) {
    const NodeId v = block.src_nodes[static_cast<std::size_t>(s)];
    const int owner = context.partition.owner(v);
    if (owner == rank) {
      throw Error("node " + std::to_string(v) + " of rank " + std::to_string(rank) +
                  "'s share of the graph is both its own and in its halo");
    }
    halo.ids[static_cast<std::size_t>(owner)].push_back(v);
    halo.positions[static_cast<std::size_t>(owner)].push_back(static_cast<std::int32_t>(s));
  }
  return halo;
}

std::vector<std::int32_t> own_positions(const Block& block, std::span<const NodeId> nodes,
                                        const std::string& what) {
  const auto own = block.dst_nodes();
  std::vector<std::int32_t> positions;
  positions.reserve(nodes.size());
  for (const NodeId v : nodes) {
    const auto it = std::lower_bound(own.begin(), own.end(), v);
    if (it == own.end() || *it != v) {
      throw Error(what + " names node " + std::to_string(v) + ", which this rank lacks");
    }
    positions.push_back(static_cast<std::int32_t>(it - own.begin()));
  }
  return positions;
}

const Block& local_block(const RankIteration& iteration) {
  if (!iteration.local_block) {
    throw Error("full-graph plans need the rank's share of the graph (RankIteration::local_block)");
  }
  return *iteration.local_block;
}

int add_local_block(PlanBuilder& builder, const RankIteration& iteration) {
  local_block(iteration);  // Error naming what is missing when the engine gave no share
  return builder.add_block("local block", iteration.local_block);
}

void HaloStrategy::check(const StrategyContext& context) const {
  check_features_and_parts(context, name());
}

FeaturePlacement HaloStrategy::feature_placement(const StrategyContext& context,
                                                 int /*rank*/) const {
  return {true, 0, context.feature_dim};
}

std::vector<ParameterSpec> HaloStrategy::parameters(const StrategyContext& context,
                                                    int /*rank*/) const {
  return full_model_parameters(context.model);
}

Announcement HaloStrategy::announce(const StrategyContext& context,
                                    const RankIteration& iteration) const {
  return Announcement(halo_of(context, local_block(iteration), iteration.rank).ids);
}

int rows_for(PlanBuilder& builder, std::string name, int positions, int source) {
  const int output =
      builder.add_dense(name, builder.tensor(positions).rows, builder.tensor(source).cols);
  builder.add_op(gather_rows_op(builder, "gather " + name, positions, source, output));
  return output;
}

std::vector<int> exchange_rows(PlanBuilder& builder, const std::string& label, Traffic traffic,
                               int rank, const std::vector<int>& send,
                               const std::vector<int>& receive, int source,
                               std::vector<int> pairs) {
  const int num_ranks = static_cast<int>(send.size());
  Op op = exchange_op(label, traffic, num_ranks);
  for (int q = 0; q < num_ranks; ++q) {
    if (q == rank) continue;
    const auto slot = static_cast<std::size_t>(q);
    op.inputs[slot] =
        rows_for(builder, label + " for rank " + std::to_string(q), send[slot], source);
    op.outputs[slot] =
        builder.add_dense(label + " from rank " + std::to_string(q),
                          builder.tensor(receive[slot]).rows, builder.tensor(source).cols);
    op.bytes_to[slot] = builder.tensor(op.inputs[slot]).bytes();
    op.bytes_from[slot] = builder.tensor(op.outputs[slot]).bytes();
    pairs.push_back(receive[slot]);
    pairs.push_back(op.outputs[slot]);
  }
  builder.add_op(std::move(op));
  return pairs;
}

OwnerRows owner_rows(const NodePartition& partition) {
  OwnerRows rows{std::vector<std::int32_t>(static_cast<std::size_t>(partition.num_nodes())),
                 std::vector<std::int64_t>(static_cast<std::size_t>(partition.num_parts()), 0)};
  for (NodeId v = 0; v < partition.num_nodes(); ++v) {
    std::int64_t& next = rows.rows_of_rank[static_cast<std::size_t>(partition.owner(v))];
    rows.row_of_node[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(next++);
  }
  return rows;
}

void refuse_mini_batch_options(const DistributionConfig& distribution,
                               const std::string& strategy) {
  require(!distribution.pipeline, "distribution.pipeline",
          "pipelining is P3's: " + strategy + " has no pipelined plans");
  require(!distribution.prefetch, "distribution.prefetch",
          "prefetching is dgl-pull's: " + strategy +
              " trains on the full graph, with no next mini-batch to fetch ahead");
}

std::string peer_name(int q) { return "rank " + std::to_string(q); }

HaloPlanner::HaloPlanner(const StrategyContext& context, const RankIteration& iteration,
                         std::string strategy)
    : context_(context),
      iteration_(iteration),
      block_(local_block(iteration)),
      rank_(iteration.rank),
      num_ranks_(context.num_ranks),
      strategy_(strategy),
      builder_(std::move(strategy), iteration.rank, context.num_ranks, iteration.epoch,
               iteration.iteration),
      model_(builder_, context.model, iteration.dropout_key) {}

Plan HaloPlanner::build(const Announcement& requests, const Announcement& received) {
  requests_ = &requests;
  received_ = &received;
  const std::vector<ParameterSpec> parameters = full_model_parameters(context_.model);
  for (const ParameterSpec& p : parameters) builder_.add_parameter(p);
  const OwnBatchTensors own = add_own_batch(builder_, context_, iteration_);
  const int graph = add_local_block(builder_, iteration_);
  announced_ = add_announcement(builder_, exchanged_sent_ ? *exchanged_sent_ : requests,
                                exchanged_received_ ? *exchanged_received_ : received, rank_);
  builder_.end_prologue();
  add_positions();

  int output = model_.forward_layer(0, graph, device_first_layer_input());
  for (int l = 1; l < context_.model.num_layers(); ++l) {
    output = model_.forward_layer(l, graph, layer_input(l, output, Traffic::activations));
  }
  backward_and_step(output, own.seeds, parameters);
  return builder_.finish();
}

void HaloPlanner::add_positions() {
  std::vector<std::int32_t> iota(static_cast<std::size_t>(block_.num_dst));
  std::iota(iota.begin(), iota.end(), 0);
  own_rows_ = builder_.add_index("own positions", std::move(iota));
  halo_ = halo_of(context_, block_, rank_);
  halo_rows_.assign(static_cast<std::size_t>(num_ranks_), -1);
  served_rows_.assign(static_cast<std::size_t>(num_ranks_), -1);
  for (int q = 0; q < num_ranks_; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    halo_rows_[slot] =
        builder_.add_index("halo positions of " + peer_name(q), halo_.positions[slot]);
    served_rows_[slot] =
        builder_.add_index("positions asked for by " + peer_name(q),
                           own_positions(block_, (*received_)[slot],
                                         strategy_ + ": the halo announced by " + peer_name(q)));
  }
}

int HaloPlanner::device_first_layer_input() {
  const bool keeps = num_ranks_ > 1 && keeps_first_layer_input();
  if (keeps && reuses_first_layer_input()) {
    const int kept =
        takes_sparse_features()
            ? add_feature_rows(builder_, context_, "layer0 input", block_.src_nodes)
            : builder_.add_dense("layer0 input", block_.num_src(), context_.feature_dim);
    return first_layer_input_from_kept(builder_, context_, builder_.persistent(kept));
  }
  const int input = first_layer_input();
  emit_copy_to_device(builder_, input, "copy layer0 input to device");
  return keeps ? first_layer_input_from_kept(builder_, context_, builder_.persistent(input))
               : input;
}

int HaloPlanner::first_layer_input() {
  const std::span<const NodeId> own = block_.dst_nodes();
  const int own_ids =
      builder_.add_index("own nodes", std::vector<std::int32_t>(own.begin(), own.end()));
  // One rank has no halo: its own rows are the whole input (the sources begin with the own
  // nodes), so they are gathered straight into it.
  const std::string name = num_ranks_ == 1 ? "layer0 input" : "own features";
  const int own_features =
      takes_sparse_features()
          ? add_feature_rows(builder_, context_, name, own)
          : builder_.add_dense(name, static_cast<std::int64_t>(own.size()), context_.feature_dim);
  emit_gather_feature_rows(builder_, "gather own features", own_ids, own_features);
  return layer_input(0, own_features, Traffic::features);
}

int HaloPlanner::assemble(const std::string& name, int layer, std::vector<int> pairs,
                          std::int64_t rows, std::int64_t cols) {
  const int output = add_assembled_rows(builder_, name, pairs, rows, cols);
  if (layer > 0 && builder_.tensor(output).kind == TensorKind::dense) {
    builder_.add_op(scatter_add_op(builder_, "assemble " + name, std::move(pairs), output));
    return output;
  }
  builder_.add_op(
      scatter_rows_op(builder_, "assemble " + name, std::move(pairs), output, Stream::copy));
  return output;
}

int emit_training_loss(PlanBuilder& builder, ModelEmitter& model, const RankIteration& iteration,
                       int seeds, int logits, std::int64_t rows, const std::string& strategy) {
  const int last = model.num_layers() - 1;
  const int train_rows = builder.add_index(
      "training positions", own_positions(local_block(iteration), iteration.batch.seeds,
                                          strategy + ": the training nodes"));
  const int train_logits = rows_for(builder, "training logits", train_rows, logits);
  const int grad_train = model.loss(train_logits, seeds, iteration.loss_scale);
  const int grad = builder.add_dense("layer" + std::to_string(last) + ".out.grad", rows,
                                     builder.tensor(logits).cols);
  builder.add_op(
      scatter_add_op(builder, "scatter training gradients", {train_rows, grad_train}, grad));
  return grad;
}

void HaloPlanner::backward_and_step(int output, int seeds,
                                    const std::vector<ParameterSpec>& parameters) {
  const int last = context_.model.num_layers() - 1;
  int grad =
      emit_training_loss(builder_, model_, iteration_, seeds, output, block_.num_dst, strategy_);
  for (int l = last; l > 0; --l) {
    const int grad_input = model_.backward_layer(l, grad, true);
    grad = num_ranks_ == 1 ? grad_input : own_input_gradient(l, grad_input);
  }
  model_.backward_layer(0, grad, false);
  emit_all_reduce_and_step(builder_, parameters, rank_, num_ranks_,
                           context_.all_reduce_ranks_per_machine(), model_.gradient_ops());
}

}  // namespace gnnbed
