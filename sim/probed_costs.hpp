#pragma once
// Costs that strategies probe on the machines they run on, derived here from the modelled
// cluster. NeutronStar measures its cost model's Tv, Te and Tc on a small graph before it trains
// (§4, ALGORITHMS.md); the simulator knows what such a probe would find from the cluster's cost
// model (a calibration's, with --calibration) and links, so a sweep over bandwidth or devices
// probes every point's cluster anew.
#include <nlohmann/json.hpp>

#include "sim/cluster.hpp"
#include "strategies/config/experiment_config.hpp"

namespace gnnbed {

struct NeutronStarCosts {
  double vertex_seconds = 0;    // Tv: a value of a vertex computed again (its row times W)
  double edge_seconds = 0;      // Te: a value aggregated over an edge
  double transfer_seconds = 0;  // Tc: a value moved between machines
};

// On `cluster`'s devices, for layers `hidden` wide: Tv the device's layer_forward time for a
// value's product with `hidden` weights (2 hidden flops) and its read and write (8 bytes); Te for
// a multiply-add over an edge (2 sparse flops); Tc a float32 over the narrowest link between two
// machines' ranks (device link or NIC).
NeutronStarCosts neutronstar_costs(const ClusterSpec& cluster, int hidden);

// `config` with every probed option it leaves unset (NeutronStar's costs) set from `cluster`;
// `probed` gets the fields set, by name (an empty object when none).
ExperimentConfig with_probed_costs(ExperimentConfig config, const ClusterSpec& cluster,
                                   nlohmann::json& probed);

}  // namespace gnnbed
