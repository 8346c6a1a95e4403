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
  double vertex_seconds = kDefaultVertexSeconds;
  double edge_seconds = kDefaultEdgeSeconds;
  double transfer_seconds = kDefaultTransferSeconds;
  // Whether a layer's destinations that read no fetched dependency are computed while the fetch
  // moves (distribution.neutronstar_overlap).
  bool overlap = false;

  // Where no probe sets them (run_experiment, unless the configuration does): near what simulate
  // probes on the p3-cluster preset at hidden 16 (sim/probed_costs.hpp: a P100's Tv 2.8e-11 and
  // Te 1.7e-11 s, a float32 over 10 Gbit/s 3.2e-9 s).
  static constexpr double kDefaultVertexSeconds = 2.5e-11;
  static constexpr double kDefaultEdgeSeconds = 1.0e-11;
  static constexpr double kDefaultTransferSeconds = 3.2e-9;
};

// The options `distribution` sets for neutronstar; ConfigError for an option it does not take.
NeutronStarOptions neutronstar_options(const DistributionConfig& distribution);

std::unique_ptr<Strategy> make_neutronstar_strategy(const NeutronStarOptions& options);

}  // namespace gnnbed
