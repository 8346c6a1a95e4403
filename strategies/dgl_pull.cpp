// DGL-style feature pull (data parallel) [P3 paper, section 2.2]. Graph structure and features are
// partitioned together: a node's features live with its owner. Every rank samples the
// computation graph of its own seeds, pulls the features of every input node it does not own
// from the node's owner (a request of node ids, a reply of feature rows), runs the whole model on
// its mini-batch, and all-reduces the weight gradients. With caching (P3 section 3.4, which DGL
// itself does not do), a rank also holds copies of other ranks' feature rows
// (`context.feature_replicas`) and pulls the others from the members of its group that hold them.
//
// Prefetching (DglPullOptions::prefetch; plan.hpp): a plan of two stages. Stage 0 gathers the
// rows peers asked for and starts the pull; stage 1 assembles the input and runs the model, the
// all-reduce and the step. Round k of the schedule starts mini-batch k's pull and then computes
// mini-batch k - 1, whose rows arrived while mini-batch k - 2 computed. The model is all in the
// last stage, so every mini-batch reads the weights after the previous one's step, as without
// prefetching: training computes the same values, only the pull overlaps compute.
#include "strategies/dgl_pull.hpp"

#include "strategies/model_ops.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

class DglPullStrategy final : public Strategy {
 public:
  explicit DglPullStrategy(const DglPullOptions& options) : options_(options) {}

  std::string name() const override { return "dgl-pull"; }

  int pipeline_depth() const override { return options_.prefetch ? 1 : 0; }

  void check(const StrategyContext& context) const override {
    check_features_and_parts(context, name());
  }

  FeaturePlacement feature_placement(const StrategyContext& context, int /*rank*/) const override {
    return {true, 0, context.feature_dim};
  }

  bool uses_feature_replicas() const override { return true; }

  std::vector<ParameterSpec> parameters(const StrategyContext& context,
                                        int /*rank*/) const override {
    return full_model_parameters(context.model);
  }

  // To each owner (with caching: to the rank of this rank's group that holds the node's rows): the
  // ids of the input nodes whose rows this rank does not hold, in input order.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    std::vector<std::vector<std::int32_t>> requests(static_cast<std::size_t>(context.num_ranks));
    for (const NodeId v : iteration.batch.input_nodes()) {
      const int server =
          context.feature_replicas.server(iteration.rank, context.partition.owner(v));
      if (server != iteration.rank) requests[static_cast<std::size_t>(server)].push_back(v);
    }
    return Announcement(std::move(requests));
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& requests, const Announcement& received) const override {
    const int rank = iteration.rank;
    const int num_ranks = context.num_ranks;
    PlanBuilder builder(name(), rank, num_ranks, iteration.epoch, iteration.iteration);
    if (options_.prefetch) builder.set_pipeline(1, iteration.step);
    const std::vector<ParameterSpec> parameters = this->parameters(context, rank);
    for (const ParameterSpec& p : parameters) builder.add_parameter(p);

    const OwnBatchTensors own = add_own_batch(builder, context, iteration);
    const AnnouncementTensors announced = add_announcement(builder, requests, received, rank);
    builder.end_prologue();

    // Where every input row comes from: this rank's store (its own rows and its copies), or the
    // reply of the rank it asked (in request order, which is input order).
    const auto inputs = iteration.batch.input_nodes();
    std::vector<std::int32_t> local_ids;
    std::vector<std::int32_t> local_positions;
    std::vector<std::vector<std::int32_t>> remote_positions(static_cast<std::size_t>(num_ranks));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int server = context.feature_replicas.server(rank, context.partition.owner(inputs[i]));
      if (server == rank) {
        local_ids.push_back(inputs[i]);
        local_positions.push_back(static_cast<std::int32_t>(i));
      } else {
        remote_positions[static_cast<std::size_t>(server)].push_back(static_cast<std::int32_t>(i));
      }
    }
    // Every input node's holder was looked up, here and in announce.
    builder.add_planned_nodes(static_cast<std::int64_t>(inputs.size()));
    // One rank holds every input row: they are gathered in input order straight into the input,
    // with no assembly to copy them a second time. (With peers, every rank keeps the assembly,
    // even when its rows happen to be all local, so that the ranks' plans have the same ops.)
    const bool all_local = num_ranks == 1;
    const int local_features = add_feature_rows(
        builder, context, all_local ? "input features" : "local input features", local_ids);
    emit_gather_feature_rows(builder, "gather local features",
                             builder.add_index("local inputs", std::move(local_ids)),
                             local_features);

    // Serve the peers' requests, then exchange feature rows.
    const std::vector<int> pulled_features =
        emit_feature_pull(builder, context, "pull features", requests, received, announced, rank);

    // The model's stage: with prefetching the pull stays in flight until the next round.
    if (options_.prefetch) builder.set_stage(1);
    if (all_local) return finish_plan(builder, context, iteration, own, parameters, local_features);
    const int input = add_feature_rows(builder, context, "input features", inputs);
    std::vector<int> pairs = {
        builder.add_index("local input positions", std::move(local_positions)), local_features};
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      pairs.push_back(builder.add_index("input positions from rank " + std::to_string(q),
                                        std::move(remote_positions[slot])));
      pairs.push_back(pulled_features[slot]);
    }
    builder.add_op(
        scatter_rows_op(builder, "assemble input features", std::move(pairs), input, Stream::copy));
    return finish_plan(builder, context, iteration, own, parameters, input);
  }

 private:
  // The copy of the input to the device, the model on it, the all-reduce and the step.
  static Plan finish_plan(PlanBuilder& builder, const StrategyContext& context,
                          const RankIteration& iteration, const OwnBatchTensors& own,
                          const std::vector<ParameterSpec>& parameters, int input) {
    emit_copy_to_device(builder, input, "copy input features to device");
    ModelEmitter model(builder, context.model, iteration.dropout_key);
    const int logits = model.forward(own.blocks, input, 0);
    const int grad = model.loss(logits, own.seeds, iteration.loss_scale);
    model.backward(grad, 0, false);
    emit_all_reduce_and_step(builder, parameters, iteration.rank, context.num_ranks,
                             context.all_reduce_ranks_per_machine(), model.gradient_ops());
    Plan plan = builder.finish();
    if (plan.pipeline_depth > 0) add_prefetch_iteration_deps(plan);
    return plan;
  }

  // A prefetching plan's model work (its first op that touches parameters) reads the weights after
  // the previous mini-batch's step.
  static void add_prefetch_iteration_deps(Plan& plan) {
    int step = -1;
    int first_model_op = -1;
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      if (first_model_op < 0 && touches_parameters(op)) first_model_op = static_cast<int>(i);
      if (op.kind == OpKind::optimizer_step) step = static_cast<int>(i);
    }
    add_iteration_deps(plan, {first_model_op}, step, 1);
  }

  DglPullOptions options_;
};

}  // namespace

DglPullOptions dgl_pull_options(const DistributionConfig& distribution) {
  require(!distribution.pipeline, "distribution.pipeline",
          "pipelining is P3's: dgl-pull has no pipelined plans (it overlaps its feature pull with "
          "compute through distribution.prefetch)");
  return {distribution.prefetch};
}

std::unique_ptr<Strategy> make_dgl_pull_strategy(const DglPullOptions& options) {
  return std::make_unique<DglPullStrategy>(options);
}

}  // namespace gnnbed
