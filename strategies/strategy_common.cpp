#include "strategies/strategy_common.hpp"

#include <numeric>

#include "strategies/model_ops.hpp"

namespace gnnbed {

void check_features_and_parts(const StrategyContext& context, const std::string& strategy) {
  require(context.feature_dim >= 1, "workload.features", strategy + " needs node features");
  require(context.partition.num_parts() == context.num_ranks, "partition",
          "has " + std::to_string(context.partition.num_parts()) + " parts for " +
              std::to_string(context.num_ranks) + " ranks");
}

OwnBatchTensors add_own_batch(PlanBuilder& builder, const StrategyContext& context,
                              const RankIteration& iteration) {
  OwnBatchTensors tensors;
  tensors.seeds = builder.add_index("seeds", iteration.batch.seeds);
  Op sample;
  sample.kind = OpKind::sample;
  sample.stream = Stream::sampler;
  sample.label = "sample";
  sample.traffic = Traffic::structure;
  sample.inputs = {tensors.seeds};
  sample.sampling_hops = iteration.sampling_hops;
  for (std::size_t l = 0; l < iteration.batch.blocks.size(); ++l) {
    const Block& block = iteration.batch.blocks[l];
    sample.sampled_edges += block.num_edges();
    tensors.blocks.push_back(builder.add_block("block" + std::to_string(l), block));
  }
  sample.outputs = tensors.blocks;
  sample.bytes_to.assign(static_cast<std::size_t>(context.num_ranks), 0);
  sample.bytes_from.assign(static_cast<std::size_t>(context.num_ranks), 0);
  tensors.sample_op = builder.add_op(std::move(sample));
  return tensors;
}

namespace {

// The exchange within machines of relayed announcements: per mate, the stack this rank forwards to
// it and the one it forwards here.
void add_relayed_announcements(PlanBuilder& builder, const AnnouncementRelays& relays,
                               const Announcement& received, int rank) {
  const std::vector<std::int64_t> bytes_to = relays.within_bytes_to(received, rank);
  const std::vector<std::int64_t> bytes_from = relays.within_bytes_from(received, rank);
  const auto num_ranks = static_cast<int>(received.size());
  Op op = exchange_op("relay announcements", Traffic::structure, num_ranks);
  op.ranks_per_machine = relays.ranks_per_machine();
  const auto stack = [&builder](const std::string& name, std::int64_t bytes) {
    if (bytes == 0) return -1;
    TensorSpec tensor;
    tensor.name = name;
    tensor.kind = TensorKind::index;
    tensor.rows = bytes / static_cast<std::int64_t>(sizeof(std::int32_t));
    tensor.cols = 1;
    return builder.add_tensor(std::move(tensor));
  };
  for (int q = 0; q < num_ranks; ++q) {
    const auto slot = static_cast<std::size_t>(q);
    op.bytes_to[slot] = bytes_to[slot];
    op.bytes_from[slot] = bytes_from[slot];
    op.inputs[slot] = stack("announce.relayed.to" + std::to_string(q), bytes_to[slot]);
    op.outputs[slot] = stack("announce.relayed.from" + std::to_string(q), bytes_from[slot]);
  }
  builder.add_op(std::move(op));
}

}  // namespace

AnnouncementTensors add_announcement(PlanBuilder& builder, const Announcement& sent,
                                     const Announcement& received, int rank,
                                     const std::optional<AnnouncementRelays>& relays) {
  const std::size_t num_ranks = sent.size();
  AnnouncementTensors tensors;
  tensors.sent.assign(num_ranks, -1);
  tensors.received.assign(num_ranks, -1);
  Op op = exchange_op("announce", Traffic::structure, static_cast<int>(num_ranks));
  for (std::size_t q = 0; q < num_ranks; ++q) {
    const auto peer = static_cast<int>(q);
    if (peer == rank) continue;
    tensors.sent[q] = builder.add_index("announce.to" + std::to_string(q), sent.shared(q));
    tensors.received[q] =
        builder.add_index("announce.from" + std::to_string(q), received.shared(q));
    if (!relays || relays->first_hop(rank, peer)) {
      op.inputs[q] = tensors.sent[q];
      op.bytes_to[q] = announcement_bytes(sent[q]);
    }
    if (!relays || relays->first_hop(peer, rank)) {
      op.outputs[q] = tensors.received[q];
      op.bytes_from[q] = announcement_bytes(received[q]);
    }
  }
  tensors.op = builder.add_op(std::move(op));
  if (relays) add_relayed_announcements(builder, *relays, received, rank);
  return tensors;
}

int add_feature_rows(PlanBuilder& builder, const StrategyContext& context, std::string name,
                     std::span<const NodeId> nodes) {
  const auto rows = static_cast<std::int64_t>(nodes.size());
  if (!context.sparse_feature_rows())
    return builder.add_dense(std::move(name), rows, context.feature_dim);
  return builder.add_sparse(std::move(name), rows, context.feature_dim,
                            context.feature_entries(nodes));
}

int emit_gather_feature_rows(PlanBuilder& builder, std::string label, int ids, int output) {
  const TensorSpec& rows = builder.tensor(output);
  Op op = gather_features_op(std::move(label), ids, output, 0, rows.cols, rows.rows);
  op.memory_bytes = 2 * rows.bytes();  // read from the store and written
  return builder.add_op(std::move(op));
}

int first_layer_input_from_kept(PlanBuilder& builder, const StrategyContext& context, int kept) {
  if (context.model.dropout() == 0) return kept;
  const TensorSpec spec = builder.tensor(kept);
  std::vector<std::int32_t> every_row(static_cast<std::size_t>(spec.rows));
  std::iota(every_row.begin(), every_row.end(), 0);
  const std::string name = spec.name + " (dropout)";
  const int input = spec.kind == TensorKind::sparse
                        ? builder.add_sparse(name, spec.rows, spec.cols, spec.entries)
                        : builder.add_dense(name, spec.rows, spec.cols);
  builder.add_op(gather_rows_op(builder, "copy " + spec.name,
                                builder.add_index(spec.name + " rows", std::move(every_row)), kept,
                                input));
  return input;
}

int add_assembled_rows(PlanBuilder& builder, std::string name, const std::vector<int>& pairs,
                       std::int64_t rows, std::int64_t cols) {
  if (builder.tensor(pairs.at(1)).kind != TensorKind::sparse)
    return builder.add_dense(std::move(name), rows, cols);
  std::int64_t entries = 0;
  for (std::size_t i = 1; i < pairs.size(); i += 2) entries += builder.tensor(pairs[i]).entries;
  return builder.add_sparse(std::move(name), rows, cols, entries);
}

std::vector<int> emit_feature_pull(PlanBuilder& builder, const StrategyContext& context,
                                   std::string label, const Announcement& requests,
                                   const Announcement& received,
                                   const AnnouncementTensors& announced, int rank) {
  const int num_ranks = static_cast<int>(requests.size());
  Op pull = exchange_op(std::move(label), Traffic::features, num_ranks);
  for (int q = 0; q < num_ranks; ++q) {
    if (q == rank) continue;
    const auto slot = static_cast<std::size_t>(q);
    const std::string peer = "rank " + std::to_string(q);
    pull.inputs[slot] = add_feature_rows(builder, context, "features for " + peer, received[slot]);
    emit_gather_feature_rows(builder, "gather features for " + peer, announced.received[slot],
                             pull.inputs[slot]);
    pull.outputs[slot] =
        add_feature_rows(builder, context, "features from " + peer, requests[slot]);
    pull.bytes_to[slot] = builder.tensor(pull.inputs[slot]).bytes();
    pull.bytes_from[slot] = builder.tensor(pull.outputs[slot]).bytes();
  }
  std::vector<int> pulled = pull.outputs;
  builder.add_op(std::move(pull));
  return pulled;
}

void add_iteration_deps(Plan& plan, const std::vector<int>& weight_readers, int step,
                        int readers_back) {
  if (plan.iteration >= readers_back) {
    for (const int op : weight_readers) {
      plan.ops[static_cast<std::size_t>(op)].iteration_deps.push_back({readers_back, step});
    }
  }
  if (plan.iteration >= 1)
    plan.ops[static_cast<std::size_t>(step)].iteration_deps.push_back({1, step});
  plan.validate();
}

}  // namespace gnnbed
