#pragma once
// SANCUS's staleness-aware skip-broadcast (strategies/sancus.cpp), its three bounds and options.
#include <cstdint>
#include <memory>
#include <optional>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

// When a rank broadcasts its block of a layer's input rather than letting its peers go on with the
// copy they hold (strategies/sancus_bounds.hpp decides).
enum class SancusBound : std::uint8_t {
  epochs,    // SCS-E: every staleness_epochs + 1 epochs, the first included
  adaptive,  // SCS-A: once the rank has computed staleness_epochs epochs with a stale peer copy
  change,    // SCS-H: when the block changed by more than change_threshold since the peers' copy
};

struct SancusOptions {
  SancusBound bound = SancusBound::epochs;
  // SCS-E's and SCS-A's ε (distribution.sancus_staleness_epochs). For SCS-E, 0: every epoch,
  // the CAGNET-like baseline.
  int staleness_epochs = 0;
  // SCS-H's δ: the relative change (Frobenius norm) that makes a rank broadcast a block.
  double change_threshold = 0;
  // SCS-H where the run's values are not there to measure (the simulator): the chance that a
  // block changed by more than δ in an epoch, drawn per rank, layer and epoch from the seed.
  std::optional<double> broadcast_fraction;

  // Whether peers ever compute with stale copies (every bound but SCS-E with ε = 0). Then the
  // features, which never change, are broadcast once, in the run's first epoch.
  bool skips() const { return bound != SancusBound::epochs || staleness_epochs > 0; }
  // SCS-E: whether the ranks broadcast in `epoch` (counted from 1; the same for every rank: SCS-E's
  // check needs no data).
  bool broadcasts(int epoch) const { return (epoch - 1) % (staleness_epochs + 1) == 0; }
};

// The options `distribution` sets for sancus; ConfigError for an option it does not take.
SancusOptions sancus_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_sancus_strategy(const SancusOptions& options);

// Which rank broadcast which layer's block in a sancus plan of this rank, read from its exchanges:
// [layer][rank] (layer 0: the features). For tests and reports.
std::vector<std::vector<char>> sancus_broadcasts(const Plan& plan, int num_layers);

}  // namespace gnnbed
