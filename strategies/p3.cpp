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
// GAT's first layer is not linear in its input: the softmax of its attention needs whole scores
// a . z with z = x W. The scores and, given the attention coefficients, the aggregation are linear
// though (exec/nn/gat_layer.hpp), so the layer runs in two steps around a sum, as P3's API lets a
// developer mark the tensors that need one (its section 3.5): each rank computes partial scores
// from its slice, the owner pulls and sums them and pushes the scores back, and each rank then
// computes its partial activations, which the owner pulls as above. Backward likewise: from the
// pushed gradient each rank computes partial gradients of the scores, which the owner sums and
// pushes back before each rank finishes its weight gradients. The scores are one value per input
// row and head, but they cross the network four times per batch, so with few features p3 moves
// more than dgl-pull (docs/plans.md). The attention vectors are held whole and all-reduced.
//
// Pipelining [P3 section 3.3] (P3Options::pipeline_depth > 0; plan.hpp): the plan's ops fall into
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
#include "strategies/p3.hpp"

#include <algorithm>

#include "strategies/model_ops.hpp"
#include "strategies/p3_exchanges.hpp"
#include "strategies/plan/block_codec.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

// The first layer's weights whose rows index the feature columns: the ones P3 splits (not GAT's
// attention vectors, which every rank holds whole).
std::vector<std::string> column_split_weights(const ModelSpec& spec) {
  std::vector<std::string> names;
  for (const ParameterShape& shape : spec.parameters(0)) {
    if (shape.input_rows) names.push_back(parameter_name(0, shape.name));
  }
  return names;
}

// The first-layer graphs of the batches this rank computes for, as their owners pushed them.
std::vector<int> pushed_first_blocks(PlanBuilder& builder, const RankIteration& iteration,
                                     const std::vector<std::vector<ColumnRange>>& columns,
                                     const AnnouncementTensors& announced,
                                     const OwnBatchTensors& own) {
  std::vector<int> blocks(columns.size(), -1);
  for (std::size_t q = 0; q < columns.size(); ++q) {
    if (columns[q].empty()) continue;
    blocks[q] = static_cast<int>(q) == iteration.rank
                    ? own.blocks.front()
                    : builder.add_block("rank " + std::to_string(q) + " block0",
                                        decode_block(*builder.tensor(announced.received[q]).index,
                                                     "p3 push from rank " + std::to_string(q)));
  }
  return blocks;
}

// The same graphs derived here: every owner announced its seeds, and sampling them again from
// this rank's copy of the structure, with the iteration's shared key, gives the owner's batch.
// One prologue op does the sampling; its work is every derived batch's sampled edges (all hops:
// the first layer's frontier grows from the later ones).
std::vector<int> derived_first_blocks(PlanBuilder& builder, const StrategyContext& context,
                                      const RankIteration& iteration,
                                      const std::vector<std::vector<ColumnRange>>& columns,
                                      const AnnouncementTensors& announced,
                                      const OwnBatchTensors& own) {
  if (!iteration.derive_first_layer) {
    throw Error("p3: deriving other ranks' first-layer graphs needs the engine's sampler");
  }
  std::vector<int> blocks(columns.size(), -1);
  Op derive;
  derive.kind = OpKind::sample;
  derive.stream = Stream::sampler;
  derive.label = "derive first-layer graphs";
  derive.traffic = Traffic::structure;
  derive.bytes_to.assign(static_cast<std::size_t>(context.num_ranks), 0);
  derive.bytes_from.assign(static_cast<std::size_t>(context.num_ranks), 0);
  for (std::size_t q = 0; q < columns.size(); ++q) {
    if (columns[q].empty()) continue;
    if (static_cast<int>(q) == iteration.rank) {
      blocks[q] = own.blocks.front();
      continue;
    }
    const std::vector<std::int32_t>& seeds = *builder.tensor(announced.received[q]).index;
    DerivedFirstLayer derived = iteration.derive_first_layer(static_cast<int>(q), seeds);
    derive.sampled_edges += derived.sampled_edges;
    blocks[q] =
        builder.add_block("rank " + std::to_string(q) + " block0", std::move(derived.block));
    derive.inputs.push_back(announced.received[q]);
    derive.outputs.push_back(blocks[q]);
  }
  if (!derive.outputs.empty()) builder.add_op(std::move(derive));
  return blocks;
}

class P3Strategy final : public Strategy {
 public:
  explicit P3Strategy(const P3Options& options) : options_(options) {}

  std::string name() const override { return "p3"; }
  int pipeline_depth() const override { return options_.pipeline_depth; }
  bool derives_peer_first_layers() const override { return options_.derive_first_layer; }

  void check(const StrategyContext& context) const override {
    check_features_and_parts(context, name());
  }

  FeaturePlacement feature_placement(const StrategyContext& context, int rank) const override {
    const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
    return {false, split.begin(rank), split.end(rank)};
  }

  bool uses_feature_replicas() const override { return true; }

  std::vector<ParameterSpec> parameters(const StrategyContext& context, int rank) const override {
    const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
    const std::vector<std::string> split_weights = column_split_weights(context.model);
    std::vector<ParameterSpec> all;
    for (int l = 0; l < context.model.num_layers(); ++l) {
      for (ParameterSpec& p : full_parameters(context.model, l)) {
        const bool column_split =
            std::find(split_weights.begin(), split_weights.end(), p.name) != split_weights.end();
        if (column_split && !context.feature_replicas.any()) {
          p.row_begin = split.begin(rank);
          p.row_end = split.end(rank);
        }
        all.push_back(std::move(p));
      }
    }
    return all;
  }

  // With partial results summed within machines, what an owner announces crosses the network once
  // per machine too, through the relay that forwards its pushes there.
  std::optional<AnnouncementRelays> announcement_relays(
      const StrategyContext& context) const override {
    const int ranks_per_machine = relay_machines(context);
    if (!options_.sum_within_machine || ranks_per_machine == 1) return std::nullopt;
    return AnnouncementRelays(
        context.num_ranks, ranks_per_machine,
        [&context, ranks_per_machine](int machine, int sender) {
          return machine_relay(context, ranks_per_machine, machine, sender);
        },
        [&context](int sender, int receiver) { return computes_for(context, receiver, sender); });
  }

  // The first layer's computation graph, to every rank that computes partial activations for it;
  // or, where the ranks derive it (P3Options::derive_first_layer), only the seeds it grows from.
  Announcement announce(const StrategyContext& context,
                        const RankIteration& iteration) const override {
    const auto encoded = std::make_shared<const std::vector<std::int32_t>>(
        options_.derive_first_layer
            ? std::vector<std::int32_t>(iteration.batch.seeds.begin(), iteration.batch.seeds.end())
            : encode_block(iteration.batch.blocks.front()));
    Announcement pushes(static_cast<std::size_t>(context.num_ranks));
    for (int q = 0; q < context.num_ranks; ++q) {
      if (q != iteration.rank && computes_for(context, q, iteration.rank))
        pushes.set(static_cast<std::size_t>(q), encoded);
    }
    return pushes;
  }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& sent, const Announcement& received) const override {
    const int rank = iteration.rank;
    const int num_ranks = context.num_ranks;
    const ModelSpec& spec = context.model;
    const int hidden = spec.layer(0).out_dim;

    PlanBuilder builder(name(), rank, num_ranks, iteration.epoch, iteration.iteration);
    const int depth = options_.pipeline_depth;
    const bool pipelined = depth > 0;
    if (pipelined) builder.set_pipeline(depth, iteration.step);
    const std::vector<ParameterSpec> parameters = this->parameters(context, rank);
    for (const ParameterSpec& p : parameters) builder.add_parameter(p);
    const OwnBatchTensors own = add_own_batch(builder, context, iteration);
    const AnnouncementTensors announced =
        add_announcement(builder, sent, received, rank, announcement_relays(context));
    // The mini-batches this rank computes first-layer partial activations for (every rank's
    // without caching), over which columns, and their first-layer computation graphs.
    std::vector<std::vector<ColumnRange>> columns(static_cast<std::size_t>(num_ranks));
    for (int q = 0; q < num_ranks; ++q) {
      columns[static_cast<std::size_t>(q)] = columns_computed(context, rank, q);
    }
    const std::vector<int> first_blocks =
        options_.derive_first_layer
            ? derived_first_blocks(builder, context, iteration, columns, announced, own)
            : pushed_first_blocks(builder, iteration, columns, announced, own);
    builder.end_prologue();

    // Layer 1 model parallel: partial results of the held feature columns, for every batch this
    // rank computes for; several column ranges of one batch are summed before they travel. GAT's
    // layer first syncs its attention scores (SyncedLayer): the ranks' partial scores go to the
    // owner, which sums them and pushes the scores back, and the partial activations follow.
    const bool synced = spec.kind() == ModelKind::gat;
    const int heads = spec.layer(0).heads;
    const std::vector<std::string> weight_names = column_split_weights(spec);
    const Block& own_first = iteration.batch.blocks.front();
    OwnerExchanges exchanges(builder, context, rank, first_blocks, own_first,
                             options_.sum_within_machine);
    ModelEmitter model(builder, spec, iteration.dropout_key);
    std::vector<int> first_weight_readers;  // the stage-0 layer ops (pipelining)
    std::vector<std::vector<int>> slices(static_cast<std::size_t>(num_ranks));
    std::vector<std::vector<int>> partials(static_cast<std::size_t>(num_ranks));
    // A partial layer op for batch q's j-th column range.
    auto partial_layer_op = [&](OpKind kind, int q, std::size_t j, const std::string& step) {
      const ColumnRange range = columns[static_cast<std::size_t>(q)][j];
      Op op;
      op.kind = kind;
      op.label = "layer0.partial_" + step + " for rank " + std::to_string(q) +
                 column_suffix(columns[static_cast<std::size_t>(q)], j);
      op.layer = 0;
      op.instance = partial_instance(q, j, num_ranks);
      op.partial = true;
      op.column_begin = range.begin;
      op.column_end = range.end;
      op.parameters = weight_names;
      return op;
    };
    auto block_of = [&](int q) -> const Block& {
      return *builder.tensor(first_blocks[static_cast<std::size_t>(q)]).block;
    };
    auto width_of = [&](int q, std::size_t j) {
      const ColumnRange range = columns[static_cast<std::size_t>(q)][j];
      return static_cast<int>(range.end - range.begin);
    };
    for (int q = 0; q < num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      const std::string batch = "rank " + std::to_string(q);
      for (std::size_t j = 0; j < columns[slot].size(); ++j) {
        const Block& block = block_of(q);
        const ColumnRange range = columns[slot][j];
        const std::string part = column_suffix(columns[slot], j);
        const int slice =
            builder.add_dense(batch + " input slice" + part, block.num_src(), width_of(q, j));
        Op gather;
        gather.kind = OpKind::gather_features;
        gather.stream = Stream::copy;
        gather.label = "gather feature slice for " + batch + part;
        gather.set_input(Input::ids, first_blocks[slot]);
        gather.outputs = {slice};
        gather.column_begin = range.begin;
        gather.column_end = range.end;
        gather.memory_bytes = 2 * block.num_src() * width_of(q, j) * kFloatBytes;
        builder.add_op(std::move(gather));
        emit_copy_to_device(builder, slice,
                            "copy feature slice for " + batch + part + " to device");
        if (spec.dropout() > 0) model.dropout(slice, first_blocks[slot], 0, range.begin);
        Op forward = partial_layer_op(OpKind::layer_forward, q, j, synced ? "scores" : "forward");
        forward.set_input(Input::block, first_blocks[slot]);
        forward.set_input(Input::tensor, slice);
        if (synced) {
          forward.sync_step = 1;
          forward.outputs = {builder.add_dense(batch + " partial attention scores" + part,
                                               OwnerExchanges::score_rows(block), heads)};
          set_layer_work(forward, spec.split_forward_work(0, block.num_dst, block.num_src(),
                                                          block.num_edges(), width_of(q, j))
                                      .to_sync);
        } else {
          forward.outputs = {
              builder.add_dense(batch + " partial activations" + part, block.num_dst, hidden)};
          set_layer_work(forward, spec.forward_work(0, block.num_dst, block.num_src(),
                                                    block.num_edges(), width_of(q, j)));
        }
        partials[slot].push_back(forward.outputs.front());
        first_weight_readers.push_back(builder.add_op(std::move(forward)));
        slices[slot].push_back(slice);
      }
    }
    const std::size_t own_slot = static_cast<std::size_t>(rank);
    if (synced) {
      const std::vector<int> pulled_scores =
          exchanges.pull("partial attention scores", Traffic::activations,
                         exchanges.outgoing(partials, "partial attention scores"),
                         &OwnerExchanges::score_rows, heads);
      const int scores = exchanges.sum("layer0.sum_partial_scores", "layer0 attention scores",
                                       partials[own_slot], pulled_scores, {});
      const std::vector<int> scores_for = exchanges.push(
          "attention scores", Traffic::activations, scores, heads, &OwnerExchanges::score_rows);
      for (int q = 0; q < num_ranks; ++q) {
        const auto slot = static_cast<std::size_t>(q);
        partials[slot].clear();
        for (std::size_t j = 0; j < columns[slot].size(); ++j) {
          const Block& block = block_of(q);
          Op attend = partial_layer_op(OpKind::layer_forward, q, j, "attention");
          attend.sync_step = 2;
          attend.set_input(Input::block, first_blocks[slot]);
          attend.set_input(Input::tensor, scores_for[slot]);
          attend.outputs = {builder.add_dense("rank " + std::to_string(q) + " partial activations" +
                                                  column_suffix(columns[slot], j),
                                              block.num_dst, hidden)};
          set_layer_work(attend, spec.split_forward_work(0, block.num_dst, block.num_src(),
                                                         block.num_edges(), width_of(q, j))
                                     .from_sync);
          partials[slot].push_back(attend.outputs.front());
          builder.add_op(std::move(attend));
        }
      }
    }

    // Pull: every rank sends the partial activations of rank q's batch to q.
    const std::vector<int> pulled =
        exchanges.pull("partial activations", Traffic::activations,
                       exchanges.outgoing(partials, "partial activations"),
                       &OwnerExchanges::destination_rows, hidden);
    if (pipelined) builder.set_stage(1);

    const std::string bias = parameter_name(0, "b");
    const bool has_bias = spec.layer(0).bias;
    const int first_out =
        exchanges.sum("layer0.sum_partials", "layer0.out", partials[own_slot], pulled,
                      has_bias ? std::vector<std::string>{bias} : std::vector<std::string>{});

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
      bias_grad.set_input(Input::gradient, grad_first_out);
      bias_grad.parameters = {bias};
      bias_grad.memory_bytes = builder.tensor(grad_first_out).bytes();
      gradient_ops.push_back(builder.add_op(std::move(bias_grad)));
    }

    // Push the first layer's activation gradient to every rank that computed partial activations
    // for this batch.
    const std::vector<int> pushed =
        exchanges.push("layer0 gradients", Traffic::gradients, grad_first_out, hidden,
                       &OwnerExchanges::destination_rows);
    if (pipelined) builder.set_stage(2);

    // GAT: the partial gradients of the attention scores, summed by the owner and pushed back.
    std::vector<int> score_grads_for;
    if (synced) {
      std::vector<std::vector<int>> partial_grads(static_cast<std::size_t>(num_ranks));
      for (int q = 0; q < num_ranks; ++q) {
        const auto slot = static_cast<std::size_t>(q);
        for (std::size_t j = 0; j < columns[slot].size(); ++j) {
          const Block& block = block_of(q);
          Op backward = partial_layer_op(OpKind::layer_backward, q, j, "score_backward");
          backward.sync_step = 1;
          backward.input_grad = false;
          backward.set_input(Input::gradient, pushed[slot]);
          backward.set_input(Input::block, first_blocks[slot]);
          backward.set_input(Input::tensor, slices[slot][j]);
          backward.outputs = {builder.add_dense("rank " + std::to_string(q) +
                                                    " partial score gradients" +
                                                    column_suffix(columns[slot], j),
                                                OwnerExchanges::score_rows(block), heads)};
          set_layer_work(backward,
                         spec.split_backward_work(0, block.num_dst, block.num_src(),
                                                  block.num_edges(), false, width_of(q, j))
                             .to_sync);
          partial_grads[slot].push_back(backward.outputs.front());
          builder.add_op(std::move(backward));
        }
      }
      const std::vector<int> pulled_grads =
          exchanges.pull("partial score gradients", Traffic::gradients,
                         exchanges.outgoing(partial_grads, "partial score gradients"),
                         &OwnerExchanges::score_rows, heads);
      const int score_grads =
          exchanges.sum("layer0.sum_partial_score_gradients", "layer0 score gradients",
                        partial_grads[own_slot], pulled_grads, {});
      score_grads_for = exchanges.push("score gradients", Traffic::gradients, score_grads, heads,
                                       &OwnerExchanges::score_rows);
    }

    // Finish layer 1's backward for the weight rows of the computed columns, for every batch.
    for (int q = 0; q < num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      for (std::size_t j = 0; j < columns[slot].size(); ++j) {
        const Block& block = block_of(q);
        Op backward = partial_layer_op(OpKind::layer_backward, q, j, "backward");
        backward.input_grad = false;
        if (synced) {
          backward.sync_step = 2;
          backward.set_input(Input::gradient, score_grads_for[slot]);
          backward.set_input(Input::block, first_blocks[slot]);
          backward.set_input(Input::tensor, slices[slot][j]);
          set_layer_work(backward,
                         spec.split_backward_work(0, block.num_dst, block.num_src(),
                                                  block.num_edges(), false, width_of(q, j))
                             .from_sync);
        } else {
          backward.set_input(Input::gradient, pushed[slot]);
          backward.set_input(Input::block, first_blocks[slot]);
          backward.set_input(Input::tensor, slices[slot][j]);
          set_layer_work(backward, spec.backward_work(0, block.num_dst, block.num_src(),
                                                      block.num_edges(), false, width_of(q, j)));
        }
        gradient_ops.push_back(builder.add_op(std::move(backward)));
      }
    }

    // The data-parallel parameters: all but the first layer's weights, unless they are held whole.
    std::vector<std::string> reduced;
    for (const ParameterSpec& p : parameters) {
      const bool split =
          std::find(weight_names.begin(), weight_names.end(), p.name) != weight_names.end();
      if (!split || context.feature_replicas.any()) reduced.push_back(p.name);
    }
    const int reduce = emit_all_reduce(builder, parameters, reduced, rank, num_ranks,
                                       context.all_reduce_ranks_per_machine(), gradient_ops);
    std::vector<int> step_deps = gradient_ops;
    step_deps.push_back(reduce);
    if (pipelined) builder.set_stage(depth);
    const int step = emit_optimizer_step(builder, parameters, step_deps);
    Plan plan = builder.finish();
    // Mini-batch t starts with the weights after step t - depth - 1 (versions count steps).
    if (pipelined) add_iteration_deps(plan, first_weight_readers, step, depth + 1);
    return plan;
  }

 private:
  // Which use of the first layer a partial op is: batch q's j-th column range (q without caching).
  static int partial_instance(int q, std::size_t j, int num_ranks) {
    return q + static_cast<int>(j) * num_ranks;
  }

  // Names the j-th of a batch's column ranges where there are several.
  static std::string column_suffix(const std::vector<ColumnRange>& ranges, std::size_t j) {
    if (ranges.size() == 1) return "";
    return " columns [" + std::to_string(ranges[j].begin) + ", " + std::to_string(ranges[j].end) +
           ")";
  }

  P3Options options_;
};

}  // namespace

P3Options p3_options(const DistributionConfig& distribution) {
  require(!distribution.prefetch, "distribution.prefetch",
          "prefetching is dgl-pull's: p3 overlaps its transfers with compute through its pipeline "
          "(distribution.pipeline)");
  P3Options options;
  if (distribution.pipeline) options.pipeline_depth = kPipelineDepth;
  options.derive_first_layer = distribution.p3_first_layer == "derive";
  options.sum_within_machine = distribution.p3_partials == "machine";
  require(!options.sum_within_machine || distribution.cache_budget_bytes == 0 ||
              distribution.cache == "structure",
          "distribution.p3_partials",
          "'machine' relays partial results through each machine's ranks; with copies of the "
          "column slices (caching) a batch's first layer runs within its owner's group instead");
  return options;
}

std::unique_ptr<Strategy> make_p3_strategy(const P3Options& options) {
  return std::make_unique<P3Strategy>(options);
}

}  // namespace gnnbed
