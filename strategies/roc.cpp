// ROC-like full-graph training [P3 paper, sections 5.9 and 6; ROC: Jia et al., MLSys 2020]. The
// graph is partitioned across ranks (ROC's partitioners: roc_partition.hpp) and every epoch is one
// step on the whole graph: each rank computes its own nodes at every layer from their in-edges
// (full_graph.hpp). Every layer needs the representations of the rank's remote in-neighbours (the
// halo): at the first layer their features, pulled from their owners as DGL pulls them; at later
// layers their activations, which every owner sends to the ranks whose halo holds its nodes.
// Backward, the gradients of the halo's rows go back to their owners, who add them to their own.
// The weights are replicated and their gradients all-reduced. Data moves every layer, every
// epoch: what P3's comparison with ROC turns on. ROC's memory manager (keeping tensors in host
// memory and moving them to the GPU as needed) is not modelled: every tensor lives on the device.
#include <algorithm>
#include <numeric>

#include "strategies/model_ops.hpp"
#include "strategies/strategy.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// The halo grouped by owner: the nodes each peer owns (ids, in source order) and where they sit
// among the block's sources.
struct Halo {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<std::vector<std::int32_t>> positions;
};

Halo halo_of(const StrategyContext& context, const Block& block, int rank) {
  const auto num_ranks = static_cast<std::size_t>(context.num_ranks);
  Halo halo{std::vector<std::vector<std::int32_t>>(num_ranks),
            std::vector<std::vector<std::int32_t>>(num_ranks)};
  for (std::int64_t s = block.num_dst; s < block.num_src(); ++s) {
    const NodeId v = block.src_nodes[static_cast<std::size_t>(s)];
    const int owner = context.partition.owner(v);
    if (owner == rank) throw Error("roc: node " + std::to_string(v) + " is both own and halo");
    halo.ids[static_cast<std::size_t>(owner)].push_back(v);
    halo.positions[static_cast<std::size_t>(owner)].push_back(static_cast<std::int32_t>(s));
  }
  return halo;
}

// Where `nodes` (the rank's own) sit among the block's destinations (increasing ids).
std::vector<std::int32_t> own_positions(const Block& block, std::span<const NodeId> nodes,
                                        const std::string& what) {
  const auto own = block.dst_nodes();
  std::vector<std::int32_t> positions;
  positions.reserve(nodes.size());
  for (const NodeId v : nodes) {
    const auto it = std::lower_bound(own.begin(), own.end(), v);
    if (it == own.end() || *it != v) {
      throw Error("roc: " + what + " names node " + std::to_string(v) + ", which this rank lacks");
    }
    positions.push_back(static_cast<std::int32_t>(it - own.begin()));
  }
  return positions;
}

const Block& local_block(const RankIteration& iteration) {
  if (!iteration.local_block) {
    throw Error("roc plans need the rank's share of the graph (RankIteration::local_block)");
  }
  return *iteration.local_block;
}

// scatter_add_rows of (positions, rows) pairs into `output`.
Op scatter_add_op(const PlanBuilder& builder, std::string label, std::vector<int> pairs,
                  int output) {
  Op op;
  op.kind = OpKind::scatter_add_rows;
  op.label = std::move(label);
  op.inputs = std::move(pairs);
  op.outputs = {output};
  // The output written once; every added row read, with its target read and written.
  op.memory_bytes = builder.tensor(output).bytes();
  for (std::size_t i = 1; i < op.inputs.size(); i += 2) {
    op.memory_bytes += 3 * builder.tensor(op.inputs[i]).bytes();
  }
  return op;
}

// A new tensor holding the rows of `source` at `positions` (gather_rows).
int rows_for(PlanBuilder& builder, std::string name, int positions, int source) {
  const int output =
      builder.add_dense(name, builder.tensor(positions).rows, builder.tensor(source).cols);
  builder.add_op(gather_rows_op(builder, "gather " + name, positions, source, output));
  return output;
}

// Rows between peers: to each peer q the rows of `source` at positions send[q]; from it as many
// rows as receive[q] has positions. Returns `pairs` followed by (receive[q], rows from q) for
// every peer, for a scatter_add_rows.
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

class RocStrategy final : public Strategy {
 public:
  std::string name() const override { return "roc"; }
  bool full_graph() const override { return true; }

  void check(const StrategyContext& context) const override {
    require(context.feature_dim >= 1, "workload.features", "roc needs node features");
    require(context.partition.num_parts() == context.num_ranks, "partition",
            "has " + std::to_string(context.partition.num_parts()) + " parts for " +
                std::to_string(context.num_ranks) + " ranks");
  }

  FeaturePlacement feature_placement(const StrategyContext& context, int /*rank*/) const override {
    return {true, 0, context.feature_dim};
  }

  std::vector<ParameterSpec> parameters(const StrategyContext& context,
                                        int /*rank*/) const override {
    return full_model_parameters(context.model);
  }

  // To each owner: the ids of its nodes in this rank's halo, in source order.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    return Announcement(halo_of(context, local_block(iteration), iteration.rank).ids);
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& requests, const Announcement& received) const override {
    const int rank = iteration.rank;
    const int num_ranks = context.num_ranks;
    const ModelSpec& spec = context.model;
    const Block& block = local_block(iteration);
    const std::int64_t num_own = block.num_dst;
    PlanBuilder builder(name(), rank, num_ranks, iteration.epoch, iteration.iteration);
    const std::vector<ParameterSpec> parameters = this->parameters(context, rank);
    for (const ParameterSpec& p : parameters) builder.add_parameter(p);

    const OwnBatchTensors own = add_own_batch(builder, context, iteration);
    TensorSpec shared;
    shared.name = "local block";
    shared.kind = TensorKind::block;
    shared.rows = block.num_dst;
    shared.cols = block.num_src();
    shared.block = iteration.local_block;
    const int graph = builder.add_tensor(std::move(shared));
    const Halo halo = halo_of(context, block, rank);
    const AnnouncementTensors announced = add_announcement(builder, requests, received, rank);
    builder.end_prologue();

    // Row positions every layer reuses: the rank's own rows, each peer's halo rows among the
    // sources, and the rows of the rank's own nodes each peer asked for.
    std::vector<std::int32_t> iota(static_cast<std::size_t>(num_own));
    std::iota(iota.begin(), iota.end(), 0);
    const int own_rows = builder.add_index("own positions", std::move(iota));
    std::vector<int> halo_rows(static_cast<std::size_t>(num_ranks), -1);
    std::vector<int> served_rows(static_cast<std::size_t>(num_ranks), -1);
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      const std::string peer = "rank " + std::to_string(q);
      halo_rows[slot] = builder.add_index("halo positions of " + peer, halo.positions[slot]);
      served_rows[slot] =
          builder.add_index("positions asked for by " + peer,
                            own_positions(block, received[slot], "the halo announced by " + peer));
    }

    // Layer 0's input: own features from the store, the halo's pulled from their owners.
    const int dim = context.feature_dim;
    const int own_ids = builder.add_index(
        "own nodes", std::vector<std::int32_t>(block.dst_nodes().begin(), block.dst_nodes().end()));
    // One rank has no halo: its own rows are the whole input (sources begin with the own nodes),
    // so they are gathered straight into it rather than copied there a second time.
    const bool no_halo = num_ranks == 1;
    if (no_halo && block.num_src() != num_own) {
      throw Error("roc: one rank's block has " + std::to_string(block.num_src()) + " sources but " +
                  std::to_string(num_own) + " own nodes");
    }
    const int own_features = no_halo ? builder.add_dense("layer0 input", num_own, dim)
                                     : builder.add_dense("own features", num_own, dim);
    builder.add_op(
        gather_features_op("gather own features", own_ids, own_features, 0, dim, num_own));
    const std::vector<int> pulled =
        emit_feature_pull(builder, "pull halo features", requests, received, announced, dim, rank);
    int input = own_features;
    if (!no_halo) {
      input = builder.add_dense("layer0 input", block.num_src(), dim);
      Op assemble;
      assemble.kind = OpKind::scatter_rows;
      assemble.stream = Stream::copy;
      assemble.label = "assemble layer0 input";
      assemble.inputs = {own_rows, own_features};
      for (int q = 0; q < num_ranks; ++q) {
        if (q == rank) continue;
        assemble.inputs.push_back(halo_rows[static_cast<std::size_t>(q)]);
        assemble.inputs.push_back(pulled[static_cast<std::size_t>(q)]);
      }
      assemble.outputs = {input};
      assemble.memory_bytes = 2 * builder.tensor(input).bytes();
      builder.add_op(std::move(assemble));
    }
    emit_copy_to_device(builder, input, "copy layer0 input to device");

    // Forward: the halo's activations before every later layer.
    ModelEmitter model(builder, spec, iteration.dropout_key);
    int output = model.forward_layer(0, graph, input);
    for (int l = 1; l < spec.num_layers(); ++l) {
      int layer_input = output;
      if (num_ranks > 1) {
        const std::string layer = "layer" + std::to_string(l);
        std::vector<int> pairs =
            exchange_rows(builder, layer + " halo activations", Traffic::activations, rank,
                          served_rows, halo_rows, output, {own_rows, output});
        layer_input = builder.add_dense(layer + " input", block.num_src(), spec.layer(l).in_dim);
        builder.add_op(
            scatter_add_op(builder, "assemble " + layer + " input", std::move(pairs), layer_input));
      }
      output = model.forward_layer(l, graph, layer_input);
    }

    // The loss of the rank's training nodes; their gradient back among all its nodes.
    const int last = spec.num_layers() - 1;
    const int train_rows = builder.add_index(
        "training positions", own_positions(block, iteration.batch.seeds, "the training nodes"));
    const int train_logits = rows_for(builder, "training logits", train_rows, output);
    const int grad_train = model.loss(train_logits, own.seeds, iteration.loss_scale);
    int grad = builder.add_dense("layer" + std::to_string(last) + ".out.grad", num_own,
                                 builder.tensor(output).cols);
    builder.add_op(
        scatter_add_op(builder, "scatter training gradients", {train_rows, grad_train}, grad));

    // Backward: the halo's gradients go back to their owners after every layer but the first.
    for (int l = last; l >= 0; --l) {
      const int grad_input = model.backward_layer(l, grad, l > 0);
      if (l == 0) break;
      if (num_ranks == 1) {
        grad = grad_input;
        continue;
      }
      const std::string layer = "layer" + std::to_string(l);
      const int own_gradients =
          rows_for(builder, layer + " own input gradients", own_rows, grad_input);
      std::vector<int> pairs =
          exchange_rows(builder, layer + " halo gradients", Traffic::gradients, rank, halo_rows,
                        served_rows, grad_input, {own_rows, own_gradients});
      grad = builder.add_dense("layer" + std::to_string(l - 1) + ".out.grad", num_own,
                               spec.layer(l).in_dim);
      builder.add_op(
          scatter_add_op(builder, "add " + layer + " halo gradients", std::move(pairs), grad));
    }

    emit_all_reduce_and_step(builder, parameters, rank, num_ranks, model.gradient_ops());
    return builder.finish();
  }
};

}  // namespace

std::unique_ptr<Strategy> make_roc_strategy() { return std::make_unique<RocStrategy>(); }

}  // namespace gnnbed
