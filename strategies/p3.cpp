// P3's push-pull parallelism [P3 paper, section 3]. Structure is partitioned by a random hash of
// the node id; features are split along the feature dimension, so every rank holds a slice of
// the columns of every node and features never cross the network. Every rank samples its own
// mini-batch and pushes the first layer's computation graph to every rank. The first layer runs
// model parallel: each rank computes, for every rank's mini-batch, the partial activations of its
// feature slice (its rows of the first layer's weights, no bias); the owner of a mini-batch pulls
// and sums them, adds the bias and continues data parallel. Backward runs data parallel down to
// the first layer, whose activation gradient the owner pushes to every rank; each rank then
// finishes the first layer's backward for its weight slice. Only the data-parallel parameters are
// all-reduced. With more ranks than feature columns, the ranks past the last column hold none and
// take no share of the first layer (columns_computed).
//
// Pipelining [P3 section 3.3] (context.pipeline_depth > 0; plan.hpp): the plan's ops fall into
// P3's four phases, the pipeline's stages: 0 the model-parallel forward (gather, partial layer,
// the pull of partial activations), 1 the data-parallel forward and backward (down to the push of
// the first layer's gradients), 2 the model-parallel backward (partial layer backward, then the
// all-reduce), 3 the optimizer step. Round k of the static schedule runs stage 0 of mini-batch k,
// the data-parallel passes of k - 1 (whose partial activations arrived while k - 1's model-parallel
// forward and earlier work ran), the model-parallel backward of k - 2 and the step of k - 3: two
// forward and two backward phases per round, the pull, push and all-reduce of one round
// overlapping the next round's compute. The stage-0 layer ops of mini-batch t read the weights of
// step t - 4's result (an iteration dependency on that step) and the steps run in order.
//
// Caching [P3 section 3.4, docs/plans.md]: with copies of other ranks' column slices
// (`context.feature_replicas`), the first layer of a mini-batch runs model parallel within its
// owner's group only: each slice's partial activations are computed by the group member that
// holds the slice (the owner itself for the slices it holds), so the computation graph goes to
// fewer ranks and fewer partial activations come back; a group of one runs the first layer data
// parallel. The first layer's weights are then held whole by every rank and all-reduced with the
// others, since every group computes gradients for every column.
#include <algorithm>

#include "strategies/block_codec.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/strategy.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

// Feature columns [begin, end).
struct ColumnRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The columns whose partial activations `rank` computes for `owner`'s mini-batch: the slices it
// serves to `owner`, adjacent ones merged (without caching: the rank's own slice, for every
// owner). Empty when it computes none, as for a rank without columns: with more ranks than
// feature columns, the first layer of every batch runs on the ranks that hold one (or, with
// feature copies, on the members of the owner's group that do).
std::vector<ColumnRange> columns_computed(const StrategyContext& context, int rank, int owner) {
  const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
  // A rank serves only slices it holds; looking at those alone keeps planning every rank of a
  // thousand linear in the ranks per peer.
  std::vector<int> held = context.feature_replicas.cached(rank);
  held.insert(std::lower_bound(held.begin(), held.end(), rank), rank);
  std::vector<ColumnRange> ranges;
  for (const int part : held) {
    if (split.width(part) == 0 || context.feature_replicas.server(owner, part) != rank) continue;
    if (!ranges.empty() && ranges.back().end == split.begin(part)) {
      ranges.back().end = split.end(part);
    } else {
      ranges.push_back({split.begin(part), split.end(part)});
    }
  }
  return ranges;
}

bool computes_for(const StrategyContext& context, int rank, int owner) {
  return !columns_computed(context, rank, owner).empty();
}

class P3Strategy final : public Strategy {
 public:
  std::string name() const override { return "p3"; }

  void check(const StrategyContext& context) const override {
    require(context.feature_dim >= 1, "workload.features", "p3 needs node features");
    // GAT's attention needs whole rows of the first layer's product, which a column slice does not
    // give; P3's split of it (partial scores, then partial aggregations) is not built.
    require(context.model.kind() != ModelKind::gat, "model.kind",
            "p3 does not split GAT's first layer yet; use dgl-pull or roc");
    require(context.partition.num_parts() == context.num_ranks, "partition",
            "has " + std::to_string(context.partition.num_parts()) + " parts for " +
                std::to_string(context.num_ranks) + " ranks");
  }

  FeaturePlacement feature_placement(const StrategyContext& context, int rank) const override {
    const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
    return {false, split.begin(rank), split.end(rank)};
  }

  bool uses_feature_replicas() const override { return true; }

  std::vector<ParameterSpec> parameters(const StrategyContext& context, int rank) const override {
    const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
    std::vector<ParameterSpec> all;
    for (int l = 0; l < context.model.num_layers(); ++l) {
      for (ParameterSpec& p : full_parameters(context.model, l)) {
        if (l == 0 && p.is_weight && !context.feature_replicas.any()) {
          p.row_begin = split.begin(rank);
          p.row_end = split.end(rank);
        }
        all.push_back(std::move(p));
      }
    }
    return all;
  }

  // The first layer's computation graph, to every rank that computes partial activations for it.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    const auto encoded = std::make_shared<const std::vector<std::int32_t>>(
        encode_block(iteration.batch.blocks.front()));
    Announcement pushes(static_cast<std::size_t>(context.num_ranks));
    for (int q = 0; q < context.num_ranks; ++q) {
      if (q != iteration.rank && computes_for(context, q, iteration.rank))
        pushes.set(static_cast<std::size_t>(q), encoded);
    }
    return pushes;
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& received) const override {
    const int rank = iteration.rank;
    const int num_ranks = context.num_ranks;
    const ModelSpec& spec = context.model;
    const int hidden = spec.layer(0).out_dim;

    PlanBuilder builder(name(), rank, num_ranks, iteration.epoch, iteration.iteration);
    const int depth = context.pipeline_depth;
    const bool pipelined = depth > 0;
    if (pipelined) builder.set_pipeline(depth, iteration.step);
    const std::vector<ParameterSpec> parameters = this->parameters(context, rank);
    for (const ParameterSpec& p : parameters) builder.add_parameter(p);
    const OwnBatchTensors own = add_own_batch(builder, context, iteration);
    const AnnouncementTensors announced =
        add_announcement(builder, announce(context, iteration), received, rank);
    builder.end_prologue();

    // The mini-batches this rank computes first-layer partial activations for (every rank's
    // without caching), over which columns, and their first-layer computation graphs.
    std::vector<std::vector<ColumnRange>> columns(static_cast<std::size_t>(num_ranks));
    std::vector<int> first_blocks(static_cast<std::size_t>(num_ranks), -1);
    for (int q = 0; q < num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      columns[slot] = columns_computed(context, rank, q);
      if (columns[slot].empty()) continue;
      first_blocks[slot] =
          q == rank
              ? own.blocks.front()
              : builder.add_block("rank " + std::to_string(q) + " block0",
                                  decode_block(*builder.tensor(announced.received[slot]).index,
                                               "p3 push from rank " + std::to_string(q)));
    }

    // Layer 1 model parallel: partial activations of the held feature columns, for every batch
    // this rank computes for; several column ranges of one batch are summed before they travel.
    std::vector<std::string> weight_names;
    for (const ParameterSpec& p : parameters) {
      if (p.layer == 0 && p.is_weight) weight_names.push_back(p.name);
    }
    ModelEmitter model(builder, spec, iteration.dropout_key);
    std::vector<int> first_weight_readers;  // the stage-0 layer ops (pipelining)
    std::vector<std::vector<int>> slices(static_cast<std::size_t>(num_ranks));
    std::vector<std::vector<int>> partials(static_cast<std::size_t>(num_ranks));
    std::vector<int> outgoing(static_cast<std::size_t>(num_ranks), -1);
    for (int q = 0; q < num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      if (columns[slot].empty()) continue;
      const Block& block = *builder.tensor(first_blocks[slot]).block;
      const std::string batch = "rank " + std::to_string(q);
      for (std::size_t j = 0; j < columns[slot].size(); ++j) {
        const ColumnRange range = columns[slot][j];
        const std::int64_t width = range.end - range.begin;
        const std::string part = columns[slot].size() == 1
                                     ? ""
                                     : " columns [" + std::to_string(range.begin) + ", " +
                                           std::to_string(range.end) + ")";
        const int slice = builder.add_dense(batch + " input slice" + part, block.num_src(), width);
        Op gather;
        gather.kind = OpKind::gather_features;
        gather.stream = Stream::copy;
        gather.label = "gather feature slice for " + batch + part;
        gather.inputs = {first_blocks[slot]};
        gather.outputs = {slice};
        gather.column_begin = range.begin;
        gather.column_end = range.end;
        gather.memory_bytes = 2 * block.num_src() * width * kFloatBytes;
        builder.add_op(std::move(gather));
        emit_copy_to_device(builder, slice,
                            "copy feature slice for " + batch + part + " to device");
        if (spec.dropout() > 0) model.dropout(slice, first_blocks[slot], 0, range.begin);
        const int partial =
            builder.add_dense(batch + " partial activations" + part, block.num_dst, hidden);
        Op forward;
        forward.kind = OpKind::layer_forward;
        forward.label = "layer0.partial_forward for " + batch + part;
        forward.inputs = {first_blocks[slot], slice};
        forward.outputs = {partial};
        forward.layer = 0;
        forward.instance = partial_instance(q, j, num_ranks);
        forward.partial = true;
        forward.column_begin = range.begin;
        forward.column_end = range.end;
        forward.parameters = weight_names;
        set_layer_work(forward, spec.forward_work(0, block.num_dst, block.num_src(),
                                                  block.num_edges(), static_cast<int>(width)));
        first_weight_readers.push_back(builder.add_op(std::move(forward)));
        slices[slot].push_back(slice);
        partials[slot].push_back(partial);
      }
      outgoing[slot] = partials[slot].front();
      if (q != rank && partials[slot].size() > 1) {
        outgoing[slot] =
            builder.add_dense(batch + " summed partial activations", block.num_dst, hidden);
        Op sum;
        sum.kind = OpKind::add_partials;
        sum.label = "sum partial activations for " + batch;
        sum.inputs = partials[slot];
        sum.outputs = {outgoing[slot]};
        sum.memory_bytes = static_cast<std::int64_t>(sum.inputs.size() + 1) *
                           builder.tensor(outgoing[slot]).bytes();
        builder.add_op(std::move(sum));
      }
    }

    // Pull: every rank sends the partial activations of rank q's batch to q.
    const Block& own_first = iteration.batch.blocks.front();
    Op pull = exchange_op("pull partial activations", Traffic::activations, num_ranks);
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      if (outgoing[slot] >= 0) {
        pull.inputs[slot] = outgoing[slot];
        pull.bytes_to[slot] = builder.tensor(outgoing[slot]).bytes();
      }
      if (computes_for(context, q, rank)) {
        pull.outputs[slot] = builder.add_dense("partial activations from rank " + std::to_string(q),
                                               own_first.num_dst, hidden);
        pull.bytes_from[slot] = own_first.num_dst * hidden * kFloatBytes;
      }
    }
    const std::vector<int> pulled = pull.outputs;
    builder.add_op(std::move(pull));
    if (pipelined) builder.set_stage(1);

    const std::string bias = parameter_name(0, "b");
    const bool has_bias = spec.layer(0).bias;
    const int first_out = builder.add_dense("layer0.out", own_first.num_dst, hidden);
    Op sum;
    sum.kind = OpKind::add_partials;
    sum.label = "layer0.sum_partials";
    sum.inputs = partials[static_cast<std::size_t>(rank)];
    for (const int t : pulled) {
      if (t >= 0) sum.inputs.push_back(t);
    }
    sum.outputs = {first_out};
    if (has_bias) sum.parameters = {bias};
    sum.memory_bytes =
        static_cast<std::int64_t>(sum.inputs.size() + 1) * builder.tensor(first_out).bytes();
    builder.add_op(std::move(sum));

    // Layers 2..K data parallel.
    int grad_first_out = -1;
    std::vector<int> gradient_ops;
    if (spec.num_layers() == 1) {
      grad_first_out = model.loss(first_out, own.seeds, iteration.loss_scale);
    } else {
      const bool relu = spec.layer(0).relu;
      if (relu) model.relu(0, first_out);
      const std::vector<int> upper_blocks(own.blocks.begin() + 1, own.blocks.end());
      const int logits = model.forward(upper_blocks, first_out, 1);
      const int grad = model.loss(logits, own.seeds, iteration.loss_scale);
      grad_first_out = model.backward(grad, 1, true);
      if (relu) model.relu_backward(0, grad_first_out, first_out);
      gradient_ops = model.gradient_ops();
    }
    if (has_bias) {
      Op bias_grad;
      bias_grad.kind = OpKind::bias_backward;
      bias_grad.label = "layer0.bias_backward";
      bias_grad.inputs = {grad_first_out};
      bias_grad.parameters = {bias};
      bias_grad.memory_bytes = builder.tensor(grad_first_out).bytes();
      gradient_ops.push_back(builder.add_op(std::move(bias_grad)));
    }

    // Push the first layer's activation gradient to every rank that computed partial activations
    // for this batch.
    Op push = exchange_op("push layer0 gradients", Traffic::gradients, num_ranks);
    for (int q = 0; q < num_ranks; ++q) {
      if (q == rank) continue;
      const auto slot = static_cast<std::size_t>(q);
      if (computes_for(context, q, rank)) {
        push.inputs[slot] = grad_first_out;
        push.bytes_to[slot] = builder.tensor(grad_first_out).bytes();
      }
      if (first_blocks[slot] >= 0) {
        const std::int64_t their_rows = builder.tensor(first_blocks[slot]).rows;
        push.outputs[slot] = builder.add_dense("layer0 gradients from rank " + std::to_string(q),
                                               their_rows, hidden);
        push.bytes_from[slot] = their_rows * hidden * kFloatBytes;
      }
    }
    std::vector<int> pushed = push.outputs;
    pushed[static_cast<std::size_t>(rank)] = grad_first_out;
    builder.add_op(std::move(push));
    if (pipelined) builder.set_stage(2);

    // Finish layer 1's backward for the weight rows of the computed columns, for every batch.
    for (int q = 0; q < num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      if (columns[slot].empty()) continue;
      const Block& block = *builder.tensor(first_blocks[slot]).block;
      for (std::size_t j = 0; j < columns[slot].size(); ++j) {
        const ColumnRange range = columns[slot][j];
        Op backward;
        backward.kind = OpKind::layer_backward;
        backward.label = "layer0.partial_backward for rank " + std::to_string(q) +
                         (columns[slot].size() == 1 ? ""
                                                    : " columns [" + std::to_string(range.begin) +
                                                          ", " + std::to_string(range.end) + ")");
        backward.inputs = {pushed[slot], first_blocks[slot], slices[slot][j]};
        backward.layer = 0;
        backward.instance = partial_instance(q, j, num_ranks);
        backward.partial = true;
        backward.input_grad = false;
        backward.column_begin = range.begin;
        backward.column_end = range.end;
        backward.parameters = weight_names;
        set_layer_work(backward,
                       spec.backward_work(0, block.num_dst, block.num_src(), block.num_edges(),
                                          false, static_cast<int>(range.end - range.begin)));
        gradient_ops.push_back(builder.add_op(std::move(backward)));
      }
    }

    // The data-parallel parameters: all but the first layer's weights, unless they are held whole.
    std::vector<std::string> reduced;
    for (const ParameterSpec& p : parameters) {
      if (!(p.layer == 0 && p.is_weight) || context.feature_replicas.any())
        reduced.push_back(p.name);
    }
    const int reduce = emit_all_reduce(builder, parameters, reduced, rank, num_ranks, gradient_ops);
    std::vector<int> step_deps = gradient_ops;
    step_deps.push_back(reduce);
    if (pipelined) builder.set_stage(depth);
    const int step = emit_optimizer_step(builder, parameters, step_deps);
    Plan plan = builder.finish();
    if (pipelined) add_iteration_deps(plan, first_weight_readers, step, depth);
    return plan;
  }

  bool supports_pipelining() const override { return true; }

 private:
  // The dependencies across iterations of a pipelined plan. A rank's plans have the same ops in
  // every iteration (ranks without seeds run empty batches), so the optimizer step of an earlier
  // plan is at the same index `step` (engines check that it is an optimizer step). Iterations
  // before the epoch's first have drained and need no dependency.
  static void add_iteration_deps(Plan& plan, const std::vector<int>& first_weight_readers, int step,
                                 int depth) {
    // Mini-batch t starts with the weights after step t - depth - 1 (versions count steps).
    if (plan.iteration >= depth + 1) {
      for (const int op : first_weight_readers) {
        plan.ops[static_cast<std::size_t>(op)].iteration_deps.push_back({depth + 1, step});
      }
    }
    // Steps apply in order.
    if (plan.iteration >= 1)
      plan.ops[static_cast<std::size_t>(step)].iteration_deps.push_back({1, step});
    plan.validate();
  }

  // Which use of the first layer a partial op is: batch q's j-th column range (q without caching).
  static int partial_instance(int q, std::size_t j, int num_ranks) {
    return q + static_cast<int>(j) * num_ranks;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_p3_strategy() { return std::make_unique<P3Strategy>(); }

}  // namespace gnnbed
