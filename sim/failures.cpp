#include "sim/failures.hpp"

#include <simgrid/s4u.hpp>

namespace gnnbed {
namespace sg4 = simgrid::s4u;

void turn_off_part(const PartFailure& failure, const ClusterSpec& cluster,
                   const Platform& platform) {
  const auto index = static_cast<std::size_t>(failure.index);
  switch (failure.kind) {
    case PartFailure::Kind::rank:
      platform.device_hosts[index]->turn_off();
      return;
    case PartFailure::Kind::machine:
      for (int d = 0; d < cluster.ranks_per_machine; ++d) {
        const auto rank = static_cast<std::size_t>(failure.index * cluster.ranks_per_machine + d);
        platform.device_hosts[rank]->turn_off();
      }
      platform.machine_hosts[index]->turn_off();
      return;
    case PartFailure::Kind::nic:
      for (sg4::Link* nic : platform.nics[index]) turn_off(nic);
      return;
    case PartFailure::Kind::device_link:
      turn_off(platform.device_links[index]);
      return;
  }
}

void start_failures(const ClusterSpec& cluster, const Platform& platform,
                    std::function<void(const PartFailure&)> failed,
                    std::function<void()> stopping) {
  std::vector<PartFailure> failures = cluster.failures();
  if (failures.empty()) return;
  sg4::Actor::create("failures", platform.observer,
                     [&cluster, &platform, failures = std::move(failures),
                      failed = std::move(failed), stopping = std::move(stopping)] {
                       for (const PartFailure& failure : failures) {
                         sg4::this_actor::sleep_until(failure.at_seconds);
                         turn_off_part(failure, cluster, platform);
                         failed(failure);
                       }
                       sg4::this_actor::sleep_for(cluster.failure_detection_seconds);
                       stopping();
                       sg4::Actor::kill_all();
                     })
      ->daemonize();
}

}  // namespace gnnbed
