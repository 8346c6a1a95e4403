#include "sim/probed_costs.hpp"

#include <algorithm>

#include "strategies/model_ops.hpp"

namespace gnnbed {
namespace {

constexpr auto kBytesPerValue = static_cast<double>(kFloatBytes);

// `units` of work at `rate` per second; nothing where the cost model has no such term.
double seconds_at(double rate, double units) { return rate > 0 ? units / rate : 0; }

}  // namespace

NeutronStarCosts neutronstar_costs(const ClusterSpec& cluster, int hidden) {
  const std::optional<OpCost>& forward = cluster.device_cost_model.cost(OpKind::layer_forward);
  const OpCost cost = forward.value_or(OpCost{});
  NeutronStarCosts costs;
  costs.vertex_seconds = seconds_at(cost.dense_flops_per_second, 2.0 * hidden) +
                         seconds_at(cost.memory_bytes_per_second, 2 * kBytesPerValue);
  // Te is per edge and value: a multiply-add, and the edge's own entry shared by `hidden` values.
  costs.edge_seconds = seconds_at(cost.sparse_flops_per_second, 2) +
                       seconds_at(cost.sparse_entries_per_second, 1.0 / std::max(1, hidden));
  const double narrowest = std::min(cluster.device_link.bandwidth_bytes_per_second,
                                    cluster.nic.bandwidth_bytes_per_second);
  costs.transfer_seconds = kBytesPerValue / narrowest;
  return costs;
}

ExperimentConfig with_probed_costs(ExperimentConfig config, const ClusterSpec& cluster,
                                   nlohmann::json& probed) {
  probed = nlohmann::json::object();
  if (config.distribution.strategy != "neutronstar") return config;
  const NeutronStarCosts costs = neutronstar_costs(cluster, config.model.hidden);
  DistributionConfig& distribution = config.distribution;
  for (const auto& [field, value, probe] :
       {std::tuple{"neutronstar_vertex_seconds", &distribution.neutronstar_vertex_seconds,
                   costs.vertex_seconds},
        std::tuple{"neutronstar_edge_seconds", &distribution.neutronstar_edge_seconds,
                   costs.edge_seconds},
        std::tuple{"neutronstar_transfer_seconds", &distribution.neutronstar_transfer_seconds,
                   costs.transfer_seconds}}) {
    // A cost model without the term leaves the option's default: a probe that measured nothing.
    if (value->has_value() || probe <= 0) continue;
    *value = probe;
    probed[field] = probe;
  }
  return config;
}

}  // namespace gnnbed
