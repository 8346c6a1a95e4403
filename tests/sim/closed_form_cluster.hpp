#pragma once
// The cluster of the replay's closed-form tests (test_replay_closed_form.cpp,
// test_replay_point_to_point.cpp): SimGrid's CM02 model without cross traffic, under which a
// transfer over a route takes exactly the sum of its links' latencies + size / the narrowest
// bandwidth, and one cost for every costed op kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/cluster.hpp"
#include "sim/cost_model/cost_model.hpp"
#include "strategies/plan/plan.hpp"

namespace gnnbed::closed_form {

inline constexpr double kDeviceBandwidth = 8e9;  // bytes/s
inline constexpr double kDeviceLatency = 2e-6;
inline constexpr double kNicGbps = 10;
inline constexpr double kNicBandwidth = kNicGbps * 1e9 / 8;
inline constexpr double kNicLatency = 5e-6;
inline constexpr double kTolerance = 1e-9;

inline nlohmann::json every_kind_cost() {
  nlohmann::json costs = nlohmann::json::object();
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (!is_costed(kind)) continue;
    costs[std::string(to_string(kind))] = {
        {"fixed_seconds", 3e-6},           {"dense_flops_per_second", 2e11},
        {"sparse_flops_per_second", 3e10}, {"memory_bytes_per_second", 5e10},
        {"sampled_edges_per_second", 4e7}, {"planned_nodes_per_second", 2e7}};
  }
  return costs;
}

// `patch` is merged into the document (RFC 7386), for the fields a test is about.
inline ClusterSpec cluster(int machines, int ranks_per_machine,
                           const std::string& device_kind = "cpu",
                           const nlohmann::json& patch = nlohmann::json::object()) {
  nlohmann::json document = {
      {"name", "closed-form"},
      {"machines", machines},
      {"ranks_per_machine", ranks_per_machine},
      {"host", {{"cores", 4}, {"memory_bytes", 1LL << 36}, {"cost_model", every_kind_cost()}}},
      {"device",
       {{"kind", device_kind}, {"memory_bytes", 1LL << 34}, {"cost_model", every_kind_cost()}}},
      {"device_link",
       {{"bandwidth_bytes_per_second", kDeviceBandwidth}, {"latency_seconds", kDeviceLatency}}},
      {"nic", {{"bandwidth_gbps", kNicGbps}, {"latency_seconds", kNicLatency}}},
      {"network", {{"topology", "switch"}, {"model", "CM02"}}}};
  document.merge_patch(patch);
  return cluster_from_json(document, "test");
}

// Seconds for `bytes` between devices of two machines: device link, two NIC links, device link.
inline double remote_seconds(double bytes) {
  return 2 * kDeviceLatency + 2 * kNicLatency + bytes / std::min(kDeviceBandwidth, kNicBandwidth);
}

inline Plan empty_plan(int rank, int num_ranks) {
  Plan plan;
  plan.strategy = "closed-form";
  plan.rank = rank;
  plan.num_ranks = num_ranks;
  return plan;
}

inline void expect_relative(double actual, double expected) {
  EXPECT_NEAR(actual, expected, kTolerance * expected) << "expected " << expected;
}

}  // namespace gnnbed::closed_form
