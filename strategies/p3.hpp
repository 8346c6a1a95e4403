#pragma once
// P3 (strategies/p3.cpp) and its options.
#include <memory>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

struct P3Options {
  // Section 3.3: earlier mini-batches in flight while a new one starts (kPipelineDepth), 0: none.
  int pipeline_depth = 0;
  // How a rank learns the first-layer graphs of its peers' mini-batches: false, pushed by their
  // owners (section 3.2); true, sampled again from their seeds (distribution.p3_first_layer).
  bool derive_first_layer = false;
  // Partial results summed within each machine before they cross the network, and what the owner
  // pushes back crossing it once per machine (distribution.p3_partials "machine";
  // strategies/p3_exchanges.hpp).
  bool sum_within_machine = false;
};

// The options `distribution` sets for P3 (distribution.pipeline, distribution.p3_first_layer);
// ConfigError for an option P3 does not take (distribution.prefetch).
P3Options p3_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_p3_strategy(const P3Options& options);

}  // namespace gnnbed
