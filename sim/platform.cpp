#include "sim/platform.hpp"

#include <algorithm>
#include <simgrid/s4u.hpp>
#include <string>

namespace gnnbed {
namespace sg4 = simgrid::s4u;
namespace {

using simgrid::kernel::routing::NetPoint;

sg4::Link* split_duplex(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec) {
  return zone->create_split_duplex_link(name, spec.bandwidth_bytes_per_second)
      ->set_latency(spec.latency_seconds)
      ->seal();
}

// The links inside one machine.
struct MachineLinks {
  std::vector<sg4::Link*> device;  // per device: its lanes (to its PCIe switch, or to the CPU)
  std::vector<sg4::Link*> peer;    // per device: NVLink, when the cluster has it
  std::vector<sg4::Link*> uplink;  // per PCIe switch: to the CPU
  sg4::Link* memory = nullptr;     // the memory bus every DMA crosses, when modelled
  std::vector<sg4::Link*> nic;     // the machine's NICs, when they are inside its zone
  // Per device, its transport's gate (Platform::transport_gates), when the cluster has them.
  std::vector<sg4::Link*> gate;
};

// The links a device's transfers enter first: its transport's gate, when it has one.
std::vector<sg4::LinkInRoute> gate_of(const MachineLinks& links, std::size_t device) {
  if (links.gate.empty()) return {};
  return {sg4::LinkInRoute(links.gate[device])};
}

// A device's route to its machine's CPU: its lanes, its switch's uplink and the memory bus.
std::vector<sg4::LinkInRoute> device_to_cpu(const ClusterSpec& cluster, const MachineLinks& links,
                                            std::size_t device) {
  std::vector<sg4::LinkInRoute> route = gate_of(links, device);
  route.emplace_back(links.device[device], sg4::LinkInRoute::Direction::UP);
  if (const int per_switch = cluster.pcie_switch.devices_per_switch; per_switch > 0) {
    route.emplace_back(links.uplink[device / static_cast<std::size_t>(per_switch)],
                       sg4::LinkInRoute::Direction::UP);
  }
  if (links.memory != nullptr) route.emplace_back(links.memory);
  return route;
}

// Routes between a machine's devices and its CPU, and between its devices: a device reaches the
// CPU over its lanes, its switch's uplink and the memory bus; two devices over NVLink when they
// have it, else through their switch (one switch) or the CPU's root complex.
void add_machine_routes(const ClusterSpec& cluster, sg4::NetZone* zone, const sg4::Host* cpu,
                        const std::vector<sg4::Host*>& devices, const MachineLinks& links) {
  using Direction = sg4::LinkInRoute::Direction;
  const int per_switch = cluster.pcie_switch.devices_per_switch;
  const auto switch_of = [&](std::size_t d) { return d / static_cast<std::size_t>(per_switch); };
  for (std::size_t i = 0; i < devices.size(); ++i) {
    zone->add_route(devices[i]->get_netpoint(), cpu->get_netpoint(), nullptr, nullptr,
                    device_to_cpu(cluster, links, i), true);
    for (std::size_t j = i + 1; j < devices.size(); ++j) {
      std::vector<sg4::LinkInRoute> between = gate_of(links, i);
      if (cluster.peer_link) {
        between.emplace_back(links.peer[i], Direction::UP);
        between.emplace_back(links.peer[j], Direction::DOWN);
      } else {
        between.emplace_back(links.device[i], Direction::UP);
        if (per_switch > 0 && switch_of(i) != switch_of(j)) {
          between.emplace_back(links.uplink[switch_of(i)], Direction::UP);
          between.emplace_back(links.uplink[switch_of(j)], Direction::DOWN);
        }
        between.emplace_back(links.device[j], Direction::DOWN);
      }
      for (const sg4::LinkInRoute& gate : gate_of(links, j)) between.push_back(gate);
      zone->add_route(devices[i]->get_netpoint(), devices[j]->get_netpoint(), nullptr, nullptr,
                      between, true);
    }
  }
}

// The machine's NICs inside its zone, and a router beyond them that stands for the machine's
// ports on the switch: the CPU reaches it over the first NIC, a device over its own (through host
// memory as its copies go, or straight from its lanes with GPUDirect RDMA). Returns the router.
NetPoint* add_nic_routes(const ClusterSpec& cluster, sg4::NetZone* zone, const sg4::Host* cpu,
                         const std::vector<sg4::Host*>& devices, MachineLinks& links, int machine) {
  const std::string name = "machine" + std::to_string(machine);
  for (int k = 0; k < cluster.nics_per_machine; ++k) {
    const std::string suffix = cluster.nics_per_machine > 1 ? std::to_string(k) : "";
    links.nic.push_back(split_duplex(zone, name + "-nic" + suffix, cluster.nic_of(machine)));
  }
  NetPoint* router = zone->create_router(name + "-ports");
  using Direction = sg4::LinkInRoute::Direction;
  zone->add_route(cpu->get_netpoint(), router, nullptr, nullptr, {{links.nic[0], Direction::UP}},
                  true);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::vector<sg4::LinkInRoute> route = gate_of(links, i);
    route.emplace_back(links.device[i], Direction::UP);
    if (!cluster.gpu_direct) route = device_to_cpu(cluster, links, i);
    const int rank = machine * cluster.ranks_per_machine + static_cast<int>(i);
    route.emplace_back(links.nic[static_cast<std::size_t>(cluster.nic_index_of(rank))],
                       Direction::UP);
    zone->add_route(devices[i]->get_netpoint(), router, nullptr, nullptr, route, true);
  }
  return router;
}

// One machine: its CPU host and its ranks' devices; with `nics_inside` its NICs too, and the
// router beyond them is the zone's gateway, else its CPU is. Returns the zone's netpoint and its
// gateway.
std::pair<NetPoint*, NetPoint*> build_machine(const ClusterSpec& cluster, sg4::NetZone* parent,
                                              int machine, Platform& platform, bool nics_inside) {
  const std::string name = "machine" + std::to_string(machine);
  sg4::NetZone* zone = sg4::create_full_zone(name);
  zone->set_parent(parent);
  sg4::Host* cpu = zone->create_host(name + "-cpu", kWorkUnitsPerSecond)
                       ->set_core_count(cluster.host_cores)
                       ->seal();
  platform.machine_hosts[static_cast<std::size_t>(machine)] = cpu;
  if (machine == 0) {
    // Only executions (or sleeps) run on them, so they need no routes.
    for (int core = 0; core < cluster.shared_cores; ++core) {
      platform.shared_cores.push_back(
          zone->create_host("shared-core" + std::to_string(core), kWorkUnitsPerSecond)->seal());
    }
    platform.observer = zone->create_host("failure-observer", kWorkUnitsPerSecond)->seal();
  }
  std::vector<sg4::Host*> devices;
  MachineLinks links;
  for (int d = 0; d < cluster.ranks_per_machine; ++d) {
    const std::string device_name = name + "-device" + std::to_string(d);
    const int rank = machine * cluster.ranks_per_machine + d;
    devices.push_back(zone->create_host(device_name, kWorkUnitsPerSecond)->seal());
    platform.device_hosts[static_cast<std::size_t>(rank)] = devices.back();
    links.device.push_back(split_duplex(zone, device_name + "-link", cluster.device_link_of(rank)));
    platform.device_links[static_cast<std::size_t>(rank)] = links.device.back();
    if (!platform.transport_gates.empty()) {
      // One link for both directions: were it split, a flow would also cross its reverse half
      // for TCP's acknowledgements (cross traffic), and SimGrid 3.32 would apply the gate's
      // bandwidth changes to the flow's LV08 penalty twice where it counted them once.
      links.gate.push_back(
          zone->create_link(device_name + "-transport", platform.open_gate_bytes_per_second)
              ->seal());
      platform.transport_gates[static_cast<std::size_t>(rank)] = links.gate.back();
    }
    if (cluster.peer_link) {
      links.peer.push_back(split_duplex(zone, device_name + "-peer", *cluster.peer_link));
    }
    if (cluster.pcie_switch.devices_per_switch > 0 &&
        d % cluster.pcie_switch.devices_per_switch == 0) {
      links.uplink.push_back(split_duplex(zone,
                                          name + "-switch" + std::to_string(links.uplink.size()),
                                          cluster.pcie_switch.uplink));
    }
  }
  if (cluster.host_memory_bytes_per_second > 0) {
    links.memory =
        zone->create_link(name + "-memory", cluster.host_memory_bytes_per_second)->seal();
  }
  add_machine_routes(cluster, zone, cpu, devices, links);
  NetPoint* gateway = cpu->get_netpoint();
  if (nics_inside) {
    gateway = add_nic_routes(cluster, zone, cpu, devices, links, machine);
    platform.nics[static_cast<std::size_t>(machine)] = links.nic;
  }
  zone->seal();
  return {zone->get_netpoint(), gateway};
}

}  // namespace

bool has_transport_gates(const ClusterSpec& cluster) {
  return cluster.progress_window_bytes > 0 && cluster.device_kind == DeviceKind::cpu;
}

nlohmann::json configure_network_model(const ClusterSpec& cluster) {
  // With CM02 (no cross traffic) a transfer takes exactly latency + size / bandwidth: the
  // closed form the tests check. The TCP window bound (gamma / 2 latency) would cap fast links
  // with long latencies below their bandwidth; RDMA fabrics have no such window.
  nlohmann::json settings = {{"network/model", cluster.network_model},
                             {"network/crosstraffic", cluster.uses_crosstraffic() ? "1" : "0"},
                             {"network/TCP-gamma", "1e12"},
                             {"surf/precision", "1e-12"}};
  // Transport gates (Platform::transport_gates) change a link's bandwidth while flows cross it;
  // SimGrid 3.32's lazy updates then lose a flow whose latency had not yet elapsed (it never
  // ends), so their clusters re-solve every flow at every event instead.
  if (has_transport_gates(cluster)) settings["network/optim"] = "Full";
  for (const auto& [key, value] : settings.items()) {
    sg4::Engine::set_config(key + ":" + value.get<std::string>());
  }
  return settings;
}

void turn_off(sg4::Link* link) {
  if (auto* duplex = dynamic_cast<sg4::SplitDuplexLink*>(link); duplex != nullptr) {
    duplex->get_link_up()->turn_off();
    duplex->get_link_down()->turn_off();
    return;
  }
  link->turn_off();
}

Platform build_platform(const ClusterSpec& cluster) {
  Platform platform;
  platform.machine_hosts.resize(static_cast<std::size_t>(cluster.machines));
  platform.device_hosts.resize(static_cast<std::size_t>(cluster.num_ranks()));
  platform.nics.resize(static_cast<std::size_t>(cluster.machines));
  platform.device_links.resize(static_cast<std::size_t>(cluster.num_ranks()));
  if (has_transport_gates(cluster)) {
    platform.transport_gates.resize(static_cast<std::size_t>(cluster.num_ranks()));
    // A thousand times the fastest link a rank's transfers cross: never the bottleneck of all its
    // transfers at once, both ways.
    platform.open_gate_bytes_per_second =
        1e3 * std::max(cluster.nic.bandwidth_bytes_per_second,
                       cluster.device_link.bandwidth_bytes_per_second);
  }
  const double nic_bandwidth = cluster.nic.bandwidth_bytes_per_second;
  if (cluster.topology == "fat-tree") {
    const FatTreeSpec& tree = cluster.fat_tree;
    // SimGrid numbers the leaves from 0: machine `id`, whose NIC is the leaf's limiter link
    // (switches, numbered after the leaves, have one too, at the NIC's bandwidth). The tree's own
    // links carry the cluster's NIC latency; a deviating NIC adds what it has beyond.
    sg4::ClusterCallbacks callbacks(
        [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
          return build_machine(cluster, zone, static_cast<int>(id), platform, false);
        },
        {},
        [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
          const bool machine = id < platform.nics.size();
          const LinkSpec nic = machine ? cluster.nic_of(static_cast<int>(id)) : cluster.nic;
          sg4::Link* link =
              zone->create_link("nic" + std::to_string(id), nic.bandwidth_bytes_per_second)
                  ->set_latency(std::max(0.0, nic.latency_seconds - cluster.nic.latency_seconds))
                  ->seal();
          if (machine) platform.nics[id] = {link};
          return link;
        });
    sg4::create_fatTree_zone(
        "fabric", nullptr,
        {static_cast<unsigned int>(tree.down.size()), tree.down, tree.up, tree.link_count},
        callbacks, nic_bandwidth, cluster.nic.latency_seconds,
        sg4::Link::SharingPolicy::SPLITDUPLEX)
        ->seal();
    return platform;
  }
  sg4::NetZone* fabric = sg4::create_star_zone("fabric");
  for (int m = 0; m < cluster.machines; ++m) {
    const auto [zone, gateway] = build_machine(cluster, fabric, m, platform, true);
    // The switch itself is not a bottleneck: the machine's links end at its ports.
    fabric->add_route(zone, nullptr, gateway, nullptr, {}, true);
  }
  fabric->seal();
  return platform;
}

}  // namespace gnnbed
