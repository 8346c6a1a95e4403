#pragma once
// Builds the SimGrid platform of a cluster: per machine a full zone holding its CPU host and one
// host per rank's device, with a device link per device (PCIe, or the ranks' shared memory), the
// uplinks of its PCIe switches and its memory bus when the cluster has them, and a peer link per
// device (NVLink) for device-to-device routes when it has one; machines joined through their NICs
// by one switch (a star zone) or a fat tree. Behind one switch, a machine's NICs are inside its
// zone, between its hosts and a router that stands for its ports on the switch (the zone's
// gateway), so each rank leaves over its own NIC (rails); in a fat tree the CPU is the gateway
// and the NIC the leaf's link. Hosts compute at kWorkUnitsPerSecond, so an op of d seconds is
// d * kWorkUnitsPerSecond units of work.
#include <simgrid/forward.h>

#include <vector>

#include "sim/cluster.hpp"

namespace gnnbed {

inline constexpr double kWorkUnitsPerSecond = 1e9;

struct Platform {
  std::vector<simgrid::s4u::Host*> machine_hosts;  // per machine: its CPU
  std::vector<simgrid::s4u::Host*> device_hosts;   // per rank
  // With ClusterSpec::shared_cores: one single-core host per core, rank r computing on core
  // r mod shared_cores, so that the ranks of a core share it (ClusterSpec says why per core).
  std::vector<simgrid::s4u::Host*> shared_cores;
  // Per machine its NICs, per rank its device link: what a failure of them turns off.
  std::vector<std::vector<simgrid::s4u::Link*>> nics;
  std::vector<simgrid::s4u::Link*> device_links;
  // Per rank, where CPU ranks' transports progress only in their calls
  // (ClusterSpec::progress_window_bytes): a link on every route of the rank's transfers, both
  // directions, unbounded until the replay stalls it while the rank computes. Empty otherwise.
  std::vector<simgrid::s4u::Link*> transport_gates;
  double open_gate_bytes_per_second = 0;  // a gate's bandwidth while open: it bounds no transfer
  // A host that never fails, for the actor that applies the cluster's failures (it only sleeps).
  simgrid::s4u::Host* observer = nullptr;
};

// Turns `link` off in both directions (a split-duplex link is two).
void turn_off(simgrid::s4u::Link* link);
// Whether the cluster's ranks have transport gates: CPU ranks whose transport progresses only in
// its calls (ClusterSpec::progress_window_bytes).
bool has_transport_gates(const ClusterSpec& cluster);

// Sets the SimGrid configuration the cluster asks for and creates its platform; call once, after
// the engine exists and before any actor. Returns the settings made (for the result's record).
nlohmann::json configure_network_model(const ClusterSpec& cluster);
Platform build_platform(const ClusterSpec& cluster);

}  // namespace gnnbed
