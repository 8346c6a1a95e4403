#pragma once
// Comparing one distributed training step with the single-process reference (for tests that link
// the CPU engine): the gradients every rank ends with (weight decay added) and the weights after
// the optimizer step must equal the reference model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "exec/nn/layers.hpp"
#include "exec/train/optimizer.hpp"
#include "strategies/config/training_config.hpp"

namespace gnnbed::testing {

// `reference` holds the reference step's gradients (before weight decay) and the weights before
// the step. The gradients must agree with the reference's plus weight decay, to a tolerance
// relative to the largest. The weights after the step must be what the optimizer makes of the
// weights before it and the gradients the ranks ended with: stepping the reference's own gradients
// instead would compare noise wherever a gradient is near zero (Adam's first step moves a weight by
// about the learning rate whatever its gradient's size, so a gradient of 1e-9 and one of -1e-9
// move it in opposite directions). Leaves `reference` stepped that way, so that a test of several
// steps goes on from the weights the ranks hold.
inline void expect_same_step(const std::vector<Parameter>& gradients,
                             const std::vector<Parameter>& weights,
                             const std::vector<Parameter*>& reference,
                             const TrainingConfig& training) {
  apply_weight_decay(reference, training);
  auto find = [](const std::vector<Parameter>& all, const std::string& name) {
    return std::find_if(all.begin(), all.end(), [&](const Parameter& p) { return p.name == name; });
  };
  for (Parameter* expected : reference) {
    const auto match = find(gradients, expected->name);
    ASSERT_NE(match, gradients.end()) << expected->name;
    ASSERT_EQ(match->grad.size(), expected->grad.size()) << expected->name;
    double largest = 0;
    for (std::int64_t i = 0; i < expected->grad.size(); ++i)
      largest = std::max(largest, std::abs(static_cast<double>(expected->grad.data()[i])));
    ASSERT_GT(largest, 0) << expected->name << ": an all-zero gradient would make this check empty";
    for (std::int64_t i = 0; i < expected->grad.size(); ++i) {
      ASSERT_NEAR(match->grad.data()[i], expected->grad.data()[i], 1e-6 + 1e-4 * largest)
          << expected->name << " entry " << i;
    }
    expected->grad = match->grad;
  }
  make_optimizer(training)->step(reference);
  for (const Parameter* updated : reference) {
    const auto match = find(weights, updated->name);
    ASSERT_NE(match, weights.end()) << updated->name;
    for (std::int64_t i = 0; i < updated->value.size(); ++i) {
      ASSERT_NEAR(match->value.data()[i], updated->value.data()[i], 1e-5)
          << "weights after the step: " << updated->name << " entry " << i;
    }
  }
}

}  // namespace gnnbed::testing
