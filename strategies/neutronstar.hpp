#pragma once
// NeutronStar's dependency management (strategies/neutronstar.cpp) and its options.
#include <memory>
#include <string>

#include "strategies/config/experiment_config.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

struct NeutronStarOptions {
  // How a rank gets the embeddings of its remote dependencies (distribution.neutronstar):
  // "cache" (DepCache: recompute them from its copy of their neighbourhood), "communicate"
  // (DepComm: fetch them from their owners every layer) or "hybrid" (per layer and dependency,
  // whichever the cost model below finds cheaper).
  std::string dependencies = "hybrid";
  // NeutronStar's cost model, per value of an embedding: computing a vertex again (Tv), aggregating
  // an edge (Te) and moving it between machines (Tc), in seconds (distribution.neutronstar_*).
  // The defaults are one 10 Gbit/s link against a P100's dense and sparse rates.
  double vertex_seconds = 2.5e-11;
  double edge_seconds = 1.0e-11;
  double transfer_seconds = 3.2e-9;
};

// The options `distribution` sets for neutronstar; ConfigError for an option it does not take.
NeutronStarOptions neutronstar_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_neutronstar_strategy(const NeutronStarOptions& options);

}  // namespace gnnbed
