#pragma once
// Builds the SimGrid platform of a cluster: per machine a full zone holding its CPU host (the
// zone's gateway) and one host per rank's device, with a device link per device (PCIe, or the
// ranks' shared memory) and, when the cluster has one, a peer link per device (NVLink) for
// device-to-device routes; machines joined through their NICs by one switch (a star zone) or a
// fat tree. Hosts compute at kWorkUnitsPerSecond, so an op of d seconds is d * kWorkUnitsPerSecond
// units of work.
#include <simgrid/forward.h>

#include <vector>

#include "sim/cluster.hpp"

namespace gnnbed {

inline constexpr double kWorkUnitsPerSecond = 1e9;

struct Platform {
  std::vector<simgrid::s4u::Host*> machine_hosts;  // per machine: its CPU
  std::vector<simgrid::s4u::Host*> device_hosts;   // per rank
  // With ClusterSpec::shared_cores: the one multi-core host all ranks compute on, so that more
  // busy ranks than cores share the cores as the OS scheduler shares them.
  simgrid::s4u::Host* shared_compute_host = nullptr;
};

// Sets the SimGrid configuration the cluster asks for and creates its platform; call once, after
// the engine exists and before any actor. Returns the settings made (for the result's record).
nlohmann::json configure_network_model(const ClusterSpec& cluster);
Platform build_platform(const ClusterSpec& cluster);

}  // namespace gnnbed
