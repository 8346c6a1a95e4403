// DGL-style feature pull (data parallel) [P3 paper, section 2.2]. Graph structure and features are
// partitioned together: a node's features live with its owner. Every rank samples the
// computation graph of its own seeds, pulls the features of every input node it does not own
// from the node's owner (a request of node ids, a reply of feature rows), runs the whole model on
// its mini-batch, and all-reduces the weight gradients.
#include "strategies/model_ops.hpp"
#include "strategies/strategy.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

class DglPullStrategy final : public Strategy {
 public:
  std::string name() const override { return "dgl-pull"; }

  void check(const StrategyContext& context) const override {
    require(context.feature_dim >= 1, "workload.features", "dgl-pull needs node features");
    require(context.partition.num_parts() == context.num_ranks, "partition",
            "has " + std::to_string(context.partition.num_parts()) + " parts for " +
                std::to_string(context.num_ranks) + " ranks");
  }

  FeaturePlacement feature_placement(const StrategyContext& context, int /*rank*/) const override {
    return {true, 0, context.feature_dim};
  }

  std::vector<ParameterSpec> parameters(const StrategyContext& context,
                                        int /*rank*/) const override {
    std::vector<ParameterSpec> all;
    for (int l = 0; l < context.model.num_layers(); ++l) {
      for (ParameterSpec& p : full_parameters(context.model, l)) all.push_back(std::move(p));
    }
    return all;
  }

  // To each owner: the ids of its nodes among this rank's input nodes, in input order.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    Announcement requests(static_cast<std::size_t>(context.num_ranks));
    for (const NodeId v : iteration.batch.input_nodes()) {
      const int owner = context.partition.owner(v);
      if (owner != iteration.rank) requests[static_cast<std::size_t>(owner)].push_back(v);
    }
    return requests;
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& received) const override {
    const int rank = iteration.rank;
    const int num_ranks = context.num_ranks;
    const int dim = context.feature_dim;
    PlanBuilder builder(name(), rank, num_ranks, iteration.epoch, iteration.iteration);
    const std::vector<ParameterSpec> parameters = this->parameters(context, rank);
    for (const ParameterSpec& p : parameters) builder.add_parameter(p);

    const OwnBatchTensors own = add_own_batch(builder, context, iteration);
    const Announcement requests = announce(context, iteration);
    const AnnouncementTensors announced = add_announcement(builder, requests, received, rank);
    builder.end_prologue();

    // Where every input row comes from: this rank's store, or the owner's reply (in request
    // order, which is input order).
    const auto inputs = iteration.batch.input_nodes();
    std::vector<std::int32_t> local_ids;
    std::vector<std::int32_t> local_positions;
    std::vector<std::vector<std::int32_t>> remote_positions(static_cast<std::size_t>(num_ranks));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int owner = context.partition.owner(inputs[i]);
      if (owner == rank) {
        local_ids.push_back(inputs[i]);
        local_positions.push_back(static_cast<std::int32_t>(i));
      } else {
        remote_positions[static_cast<std::size_t>(owner)].push_back(static_cast<std::int32_t>(i));
      }
    }
    const auto num_local = static_cast<std::int64_t>(local_ids.size());
    const int local_ids_tensor = builder.add_index("local inputs", std::move(local_ids));
    const int local_features = builder.add_dense("local input features", num_local, dim);
    builder.add_op(
        gather_op("gather local features", local_ids_tensor, local_features, dim, num_local));

    // Serve the peers' requests, then exchange feature rows.
    Op pull = exchange_op("pull features", Traffic::features, num_ranks);
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      const auto served = static_cast<std::int64_t>(received[slot].size());
      const auto pulled = static_cast<std::int64_t>(requests[slot].size());
      pull.inputs[slot] = builder.add_dense("features for rank " + std::to_string(q), served, dim);
      builder.add_op(gather_op("gather features for rank " + std::to_string(q),
                               announced.received[slot], pull.inputs[slot], dim, served));
      pull.outputs[slot] =
          builder.add_dense("features from rank " + std::to_string(q), pulled, dim);
      pull.bytes_to[slot] = served * dim * kFloatBytes;
      pull.bytes_from[slot] = pulled * dim * kFloatBytes;
    }
    const std::vector<int> pulled_features = pull.outputs;
    builder.add_op(std::move(pull));

    const auto num_inputs = static_cast<std::int64_t>(inputs.size());
    const int input = builder.add_dense("input features", num_inputs, dim);
    Op assemble;
    assemble.kind = OpKind::scatter_rows;
    assemble.stream = Stream::copy;
    assemble.label = "assemble input features";
    assemble.inputs = {builder.add_index("local input positions", std::move(local_positions)),
                       local_features};
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      assemble.inputs.push_back(builder.add_index("input positions from rank " + std::to_string(q),
                                                  std::move(remote_positions[slot])));
      assemble.inputs.push_back(pulled_features[slot]);
    }
    assemble.outputs = {input};
    assemble.memory_bytes = 2 * num_inputs * dim * kFloatBytes;
    builder.add_op(std::move(assemble));
    emit_copy_to_device(builder, input, "copy input features to device");

    ModelEmitter model(builder, context.model, iteration.dropout_key);
    const int logits = model.forward(own.blocks, input, 0);
    const int grad = model.loss(logits, own.seeds, iteration.loss_scale);
    model.backward(grad, 0, false);
    std::vector<std::string> names;
    for (const ParameterSpec& p : parameters) names.push_back(p.name);
    const int reduce =
        emit_all_reduce(builder, parameters, names, rank, num_ranks, model.gradient_ops());
    emit_optimizer_step(builder, parameters, {reduce});
    return builder.finish();
  }

 private:
  static Op gather_op(std::string label, int ids, int output, int dim, std::int64_t rows) {
    Op op;
    op.kind = OpKind::gather_features;
    op.stream = Stream::copy;
    op.label = std::move(label);
    op.inputs = {ids};
    op.outputs = {output};
    op.column_begin = 0;
    op.column_end = dim;
    op.memory_bytes = 2 * rows * dim * kFloatBytes;
    return op;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_dgl_pull_strategy() { return std::make_unique<DglPullStrategy>(); }

}  // namespace gnnbed
