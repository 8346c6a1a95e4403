#pragma once
// NeutronStar's dependency management (strategies/neutronstar.cpp) and its options.
#include <memory>
#include <string>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

// Set from the configuration (neutronstar_options), where the defaults are.
struct NeutronStarOptions {
  // How a rank gets the embeddings of its remote dependencies (distribution.neutronstar):
  // "cache" (DepCache: recompute them from its copy of their neighbourhood), "communicate"
  // (DepComm: fetch them from their owners every layer) or "hybrid" (per layer and dependency,
  // whichever the cost model below finds cheaper).
  std::string dependencies;
  // NeutronStar's cost model, per value of an embedding: computing a vertex again (Tv), aggregating
  // an edge (Te) and moving it between machines (Tc), in seconds (distribution.neutronstar_*).
  double vertex_seconds = 0;
  double edge_seconds = 0;
  double transfer_seconds = 0;
};

// The options `distribution` sets for neutronstar; ConfigError for an option it does not take.
NeutronStarOptions neutronstar_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_neutronstar_strategy(const NeutronStarOptions& options);

}  // namespace gnnbed
