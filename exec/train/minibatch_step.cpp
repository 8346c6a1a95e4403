#include "exec/train/minibatch_step.hpp"

#include <vector>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {

StepResult accumulate_gradients(Model& model, const FeatureStore& features,
                                std::span<const std::int32_t> labels, const MiniBatch& batch,
                                double loss_scale, std::uint64_t dropout_key) {
  StepResult result;
  if (batch.seeds.empty()) return result;
  Stopwatch phase;
  const auto inputs = batch.input_nodes();
  const InputRows input = InputRows::gather(features, inputs);
  std::vector<std::int32_t> seed_labels;
  for (const NodeId v : batch.seeds) seed_labels.push_back(labels[static_cast<std::size_t>(v)]);
  result.gather_seconds = phase.seconds();
  phase.restart();
  std::vector<const Block*> blocks;
  for (const Block& block : batch.blocks) blocks.push_back(&block);
  const Matrix logits = model.forward(blocks, input, true, dropout_key);
  Matrix grad;
  const double mean = cpu::softmax_cross_entropy(logits, seed_labels, grad, result.correct);
  const double rows = static_cast<double>(seed_labels.size());
  cpu::scale(grad, static_cast<float>(rows * loss_scale));
  result.loss = mean * rows * loss_scale;
  model.backward(grad);
  result.compute_seconds = phase.seconds();
  return result;
}

}  // namespace gnnbed
