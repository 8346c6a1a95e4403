#pragma once
// SANCUS's staleness-aware skip-broadcast (strategies/sancus.cpp) and its options.
#include <memory>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

struct SancusOptions {
  // SCS-E's bound ε (distribution.sancus_staleness_epochs): a rank's peers may compute with its
  // embeddings (and it with their gradients) up to this many epochs old, so every rank broadcasts
  // in every (ε + 1)-th epoch, the first included, and skips in between. 0: every epoch, the
  // CAGNET-like baseline.
  int staleness_epochs = 0;

  // Whether the ranks broadcast in `epoch` (counted from 1; the same for every rank: SCS-E's check
  // needs no data).
  bool broadcasts(int epoch) const { return (epoch - 1) % (staleness_epochs + 1) == 0; }
};

// The options `distribution` sets for sancus; ConfigError for an option it does not take.
SancusOptions sancus_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_sancus_strategy(const SancusOptions& options);

}  // namespace gnnbed
