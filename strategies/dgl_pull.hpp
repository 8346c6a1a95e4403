#pragma once
// DGL-style feature pull (strategies/dgl_pull.cpp) and its options.
#include <memory>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

struct DglPullOptions {
  // Pull the next mini-batch's input features while this one computes (distribution.prefetch):
  // plans of two stages, the pull in the first and the model in the second.
  bool prefetch = false;
};

// The options `distribution` sets for dgl-pull (distribution.prefetch); ConfigError for an option
// dgl-pull does not take (distribution.pipeline).
DglPullOptions dgl_pull_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_dgl_pull_strategy(const DglPullOptions& options);

}  // namespace gnnbed
