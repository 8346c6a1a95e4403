#include "strategies/strategy_common.hpp"

#include "strategies/model_ops.hpp"

namespace gnnbed {

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

AnnouncementTensors add_announcement(PlanBuilder& builder, const Announcement& sent,
                                     const Announcement& received, int rank) {
  const std::size_t num_ranks = sent.size();
  AnnouncementTensors tensors;
  tensors.sent.assign(num_ranks, -1);
  tensors.received.assign(num_ranks, -1);
  Op op = exchange_op("announce", Traffic::structure, static_cast<int>(num_ranks));
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (static_cast<int>(q) == rank) continue;
    tensors.sent[q] = builder.add_index("announce.to" + std::to_string(q), sent[q]);
    tensors.received[q] = builder.add_index("announce.from" + std::to_string(q), received[q]);
    op.bytes_to[q] = announcement_bytes(sent[q]);
    op.bytes_from[q] = announcement_bytes(received[q]);
  }
  op.inputs = tensors.sent;
  op.outputs = tensors.received;
  tensors.op = builder.add_op(std::move(op));
  return tensors;
}

}  // namespace gnnbed
