#pragma once
// One mini-batch's forward and backward through a single-process model: the building block of
// single-process mini-batch training and the reference every distributed strategy is checked
// against (a data-parallel step over N ranks is the sum of N of these, each with its own
// mini-batch, the loss scaled by 1 / (seeds over all ranks)).
#include <cstdint>
#include <span>

#include "exec/nn/model.hpp"
#include "workloads/features.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

struct StepResult {
  double loss = 0;           // sum over the batch's seeds of their loss, times loss_scale
  std::int64_t correct = 0;  // seeds whose prediction was right
  double gather_seconds = 0;
  double compute_seconds = 0;
};

// Adds the batch's gradients to the model's (zero them first for a fresh step). `labels` holds
// one label per node id. Dropout masks are keyed on `dropout_key`.
StepResult accumulate_gradients(Model& model, const FeatureStore& features,
                                std::span<const std::int32_t> labels, const MiniBatch& batch,
                                double loss_scale, std::uint64_t dropout_key);

}  // namespace gnnbed
