#include "sim/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

constexpr double kBitsPerByte = 8;
constexpr double kGiga = 1e9;
// A log-sd of 0.5 already makes one op in twenty 2.3 times its mean; beyond it, a model of
// per-op noise is no longer what the cluster needs.
constexpr double kLargestComputeJitter = 0.5;
// A machine ten times slower than its calibration is another machine: calibrate it.
constexpr double kLargestTimeFactor = 10;
// Linux's time slices are milliseconds; a tenth of a second is no longer a scheduler's.
constexpr double kLargestTimeSliceSeconds = 0.1;

constexpr double kSlowestLinkBytesPerSecond = 1e3;
constexpr double kFastestLinkBytesPerSecond = 1e15;
constexpr double kLongestLatencySeconds = 10;
// A day: far beyond any transport's timeout.
constexpr double kLongestFailureDetectionSeconds = 86400;

// A failure time (fails_at_seconds): a simulated time, not negative.
void require_failure_time(const std::optional<double>& seconds, const std::string& field) {
  require(!seconds || (std::isfinite(*seconds) && *seconds >= 0), field,
          "must be a simulated time in seconds, 0 or more");
}

// Ranges SimGrid's solver handles (far beyond them, its precision gives out and it aborts).
// `gbps`: the field holds Gbit/s, as a NIC's does.
void require_link_bandwidth(double bytes_per_second, const std::string& field, bool gbps) {
  require(bytes_per_second >= kSlowestLinkBytesPerSecond &&
              bytes_per_second <= kFastestLinkBytesPerSecond,
          field,
          gbps ? "must be between 8e-6 and 8e6 Gbit/s" : "must be between 1e3 and 1e15 bytes/s");
}
void require_link_latency(double seconds, const std::string& field) {
  require(seconds >= 0 && seconds <= kLongestLatencySeconds, field,
          "must be between 0 and 10 seconds");
}

LinkSpec link_from_json(const nlohmann::json& object, const std::string& where) {
  LinkSpec link;
  JsonFieldReader reader(object, where);
  reader.read("bandwidth_bytes_per_second", link.bandwidth_bytes_per_second);
  reader.read("latency_seconds", link.latency_seconds);
  reader.finish();
  require_link_bandwidth(link.bandwidth_bytes_per_second, reader.path("bandwidth_bytes_per_second"),
                         false);
  require_link_latency(link.latency_seconds, reader.path("latency_seconds"));
  return link;
}

nlohmann::json to_json(const LinkSpec& link) {
  return {{"bandwidth_bytes_per_second", link.bandwidth_bytes_per_second},
          {"latency_seconds", link.latency_seconds}};
}

void read_nic(const nlohmann::json& object, const std::string& where, ClusterSpec& cluster) {
  double gbps = 0;
  LinkSpec& nic = cluster.nic;
  JsonFieldReader reader(object, where);
  reader.read("bandwidth_gbps", gbps);
  reader.read("latency_seconds", nic.latency_seconds);
  reader.read("cpu_seconds_per_byte", cluster.nic_cpu_seconds_per_byte);
  reader.read("progress_window_bytes", cluster.progress_window_bytes);
  reader.read("count", cluster.nics_per_machine);
  reader.read("gpu_direct", cluster.gpu_direct);
  reader.finish();
  require_link_bandwidth(gbps * kGiga / kBitsPerByte, reader.path("bandwidth_gbps"), true);
  require_link_latency(nic.latency_seconds, reader.path("latency_seconds"));
  require(cluster.nic_cpu_seconds_per_byte >= 0, reader.path("cpu_seconds_per_byte"),
          "must not be negative");
  require(cluster.progress_window_bytes >= 0, reader.path("progress_window_bytes"),
          "must not be negative (0: transfers progress on their own)");
  nic.bandwidth_bytes_per_second = gbps * kGiga / kBitsPerByte;
}

std::vector<unsigned int> positive_counts(const nlohmann::json& object, const std::string& field) {
  if (!object.is_array() || object.empty()) {
    throw ConfigError(field, "must be a non-empty array of positive integers");
  }
  std::vector<unsigned int> counts;
  for (const auto& value : object) {
    const auto count = json_integer<unsigned int>(value, field);
    if (count < 1) throw ConfigError(field, "must be a non-empty array of positive integers");
    counts.push_back(count);
  }
  return counts;
}

void read_network(const nlohmann::json& object, ClusterSpec& cluster) {
  JsonFieldReader reader(object, "network");
  reader.read("topology", cluster.topology);
  reader.read("model", cluster.network_model);
  reader.read("crosstraffic", cluster.crosstraffic);
  if (const nlohmann::json* tree = reader.child("fat_tree"); tree != nullptr && !tree->is_null()) {
    JsonFieldReader tree_reader(*tree, "network.fat_tree");
    for (const auto& [key, counts] :
         {std::pair{"down", &cluster.fat_tree.down}, std::pair{"up", &cluster.fat_tree.up},
          std::pair{"link_count", &cluster.fat_tree.link_count}}) {
      const nlohmann::json* value = tree_reader.child(key);
      if (value == nullptr || value->is_null()) {
        throw ConfigError(tree_reader.path(key), "is required for a fat tree");
      }
      *counts = positive_counts(*value, tree_reader.path(key));
    }
    tree_reader.finish();
  }
  reader.finish();
  require_one_of("network.topology", cluster.topology, {"switch", "fat-tree"});
  require_one_of("network.model", cluster.network_model, {"CM02", "LV08", "SMPI"});
}

PcieSwitchSpec pcie_switch_from_json(const nlohmann::json& object) {
  PcieSwitchSpec pcie;
  JsonFieldReader reader(object, "pcie_switch");
  reader.read("devices_per_switch", pcie.devices_per_switch);
  const nlohmann::json* uplink = reader.child("uplink");
  if (uplink == nullptr || uplink->is_null())
    throw ConfigError("pcie_switch.uplink", "is required");
  pcie.uplink = link_from_json(*uplink, "pcie_switch.uplink");
  reader.finish();
  require(pcie.devices_per_switch >= 1, "pcie_switch.devices_per_switch",
          "must be at least 1 (leave pcie_switch out for none)");
  return pcie;
}

// A deviating link's fields, each optional; `gbps`: the NIC's bandwidth is in Gbit/s, as the
// cluster's own.
LinkChange link_change_from_json(const nlohmann::json& object, const std::string& where,
                                 bool gbps) {
  LinkChange change;
  JsonFieldReader reader(object, where);
  const std::string bandwidth_key = gbps ? "bandwidth_gbps" : "bandwidth_bytes_per_second";
  std::optional<double> bandwidth;
  reader.read(bandwidth_key, bandwidth);
  reader.read("latency_seconds", change.latency_seconds);
  reader.read("fails_at_seconds", change.fails_at_seconds);
  reader.finish();
  require_failure_time(change.fails_at_seconds, reader.path("fails_at_seconds"));
  if (bandwidth) {
    change.bandwidth_bytes_per_second = gbps ? *bandwidth * kGiga / kBitsPerByte : *bandwidth;
    require_link_bandwidth(*change.bandwidth_bytes_per_second, reader.path(bandwidth_key), gbps);
  }
  if (change.latency_seconds) {
    require_link_latency(*change.latency_seconds, reader.path("latency_seconds"));
  }
  return change;
}

Deviation deviation_from_json(const nlohmann::json& object, const std::string& where) {
  Deviation deviation;
  JsonFieldReader reader(object, where);
  for (const auto& [key, index] :
       {std::pair{"machine", &deviation.machine}, std::pair{"rank", &deviation.rank}}) {
    const nlohmann::json* value = reader.child(key);
    if (value != nullptr && !value->is_null()) *index = json_integer<int>(*value, reader.path(key));
  }
  reader.read("compute_time_factor", deviation.compute_time_factor);
  reader.read("fails_at_seconds", deviation.fails_at_seconds);
  require_failure_time(deviation.fails_at_seconds, reader.path("fails_at_seconds"));
  if (const nlohmann::json* nic = reader.child("nic"); nic != nullptr && !nic->is_null())
    deviation.nic = link_change_from_json(*nic, reader.path("nic"), true);
  if (const nlohmann::json* link = reader.child("device_link"); link != nullptr && !link->is_null())
    deviation.device_link = link_change_from_json(*link, reader.path("device_link"), false);
  reader.finish();
  require(deviation.machine.has_value() != deviation.rank.has_value(), where,
          "names exactly one part: a machine or a rank");
  require(deviation.compute_time_factor > 0 && deviation.compute_time_factor <= kLargestTimeFactor,
          reader.path("compute_time_factor"), "must be above 0 and at most 10");
  require(deviation.nic.empty() || deviation.machine.has_value(), reader.path("nic"),
          "belongs to a machine: a rank has no NIC of its own");
  require(deviation.device_link.empty() || deviation.rank.has_value(), reader.path("device_link"),
          "belongs to a rank: name the rank whose link differs");
  return deviation;
}

std::vector<Deviation> deviations_from_json(const nlohmann::json& list) {
  if (!list.is_array()) throw ConfigError("deviations", "must be an array of parts");
  std::vector<Deviation> deviations;
  for (std::size_t i = 0; i < list.size(); ++i) {
    deviations.push_back(deviation_from_json(list[i], "deviations[" + std::to_string(i) + "]"));
  }
  return deviations;
}

nlohmann::json to_json(const LinkChange& change, bool gbps) {
  nlohmann::json document = nlohmann::json::object();
  if (change.bandwidth_bytes_per_second) {
    if (gbps) {
      document["bandwidth_gbps"] = *change.bandwidth_bytes_per_second * kBitsPerByte / kGiga;
    } else {
      document["bandwidth_bytes_per_second"] = *change.bandwidth_bytes_per_second;
    }
  }
  if (change.latency_seconds) document["latency_seconds"] = *change.latency_seconds;
  if (change.fails_at_seconds) document["fails_at_seconds"] = *change.fails_at_seconds;
  return document;
}

nlohmann::json to_json(const Deviation& deviation) {
  nlohmann::json document = nlohmann::json::object();
  if (deviation.machine) document["machine"] = *deviation.machine;
  if (deviation.rank) document["rank"] = *deviation.rank;
  if (deviation.compute_time_factor != 1)
    document["compute_time_factor"] = deviation.compute_time_factor;
  if (deviation.fails_at_seconds) document["fails_at_seconds"] = *deviation.fails_at_seconds;
  if (!deviation.nic.empty()) document["nic"] = to_json(deviation.nic, true);
  if (!deviation.device_link.empty())
    document["device_link"] = to_json(deviation.device_link, false);
  return document;
}

// Every deviation names a part the cluster has, and no part twice.
void validate_deviations(const ClusterSpec& cluster) {
  std::map<std::string, std::size_t> first_of_part;
  for (std::size_t i = 0; i < cluster.deviations.size(); ++i) {
    const Deviation& deviation = cluster.deviations[i];
    const std::string where = "deviations[" + std::to_string(i) + "]";
    if (deviation.machine) {
      require(
          *deviation.machine >= 0 && *deviation.machine < cluster.machines, where + ".machine",
          "must be a machine of the cluster (0 to " + std::to_string(cluster.machines - 1) + ")");
    } else {
      require(
          *deviation.rank >= 0 && *deviation.rank < cluster.num_ranks(), where + ".rank",
          "must be a rank of the cluster (0 to " + std::to_string(cluster.num_ranks() - 1) + ")");
    }
    const auto [earlier, inserted] = first_of_part.emplace(deviation.part(), i);
    require(inserted, where,
            deviation.part() + " already deviates in deviations[" +
                std::to_string(earlier->second) + "]: say everything about a part in one entry");
  }
}

// Rails of equal size; NICs a fat tree's leaves can carry.
void validate_nics(const ClusterSpec& cluster) {
  require(
      cluster.nics_per_machine >= 1 && cluster.ranks_per_machine % cluster.nics_per_machine == 0,
      "nic.count",
      "must divide ranks_per_machine (" + std::to_string(cluster.ranks_per_machine) +
          "): every NIC carries as many ranks");
  require(!cluster.gpu_direct || cluster.device_kind == DeviceKind::gpu, "nic.gpu_direct",
          "needs GPUs (device.kind gpu): CPU ranks send from host memory");
  // A fat tree's leaf is one machine behind one link of the NIC's bandwidth (its limiter): it has
  // no room for rails, nor for a route from a GPU to the NIC that bypasses the machine's CPU.
  require(cluster.topology != "fat-tree" || cluster.nics_per_machine == 1, "nic.count",
          "must be 1 with network.topology fat-tree (a leaf has one link)");
  require(cluster.topology != "fat-tree" || !cluster.gpu_direct, "nic.gpu_direct",
          "needs network.topology switch (a fat tree's leaf reaches its machine at the CPU)");
}

void validate(const ClusterSpec& cluster) {
  require(cluster.machines >= 1, "machines", "must be at least 1");
  require(cluster.ranks_per_machine >= 1, "ranks_per_machine", "must be at least 1");
  require(cluster.host_cores >= 1, "host.cores", "must be at least 1");
  require(cluster.shared_cores >= 0, "shared_cores", "must be 0 (none) or a number of cores");
  require(cluster.rank_speed_spread >= 0 && cluster.rank_speed_spread <= kLargestRankSpeedSpread,
          "rank_speed_spread", "must be between 0 (identical ranks) and 0.25");
  require(cluster.compute_time_factor > 0 && cluster.compute_time_factor <= kLargestTimeFactor,
          "compute_time_factor", "must be above 0 and at most 10");
  require(cluster.compute_jitter >= 0 && cluster.compute_jitter <= kLargestComputeJitter,
          "compute_jitter", "must be between 0 (none) and 0.5");
  require(cluster.shared_core_time_slice_seconds >= 0 &&
              cluster.shared_core_time_slice_seconds <= kLargestTimeSliceSeconds,
          "shared_core_time_slice_seconds", "must be between 0 (processor sharing) and 0.1");
  require(cluster.shared_core_time_slice_seconds == 0 || cluster.shared_cores > 0,
          "shared_core_time_slice_seconds", "needs shared_cores: only shared cores time slice");
  require(cluster.device_memory_bytes > 0, "device.memory_bytes", "must be positive");
  require(cluster.host_memory_bytes_per_second == 0 ||
              (cluster.host_memory_bytes_per_second >= kSlowestLinkBytesPerSecond &&
               cluster.host_memory_bytes_per_second <= kFastestLinkBytesPerSecond),
          "host.memory_bandwidth_bytes_per_second",
          "must be 0 (not modelled) or between 1e3 and 1e15 bytes/s");
  validate_nics(cluster);
  validate_deviations(cluster);
  require(cluster.failure_detection_seconds >= 0 &&
              cluster.failure_detection_seconds <= kLongestFailureDetectionSeconds,
          "failure_detection_seconds", "must be between 0 (at once) and 86400 seconds");
  if (cluster.topology == "fat-tree") {
    const FatTreeSpec& tree = cluster.fat_tree;
    require(!tree.down.empty() && tree.down.size() == tree.up.size() &&
                tree.down.size() == tree.link_count.size(),
            "network.fat_tree", "needs down, up and link_count of one length (the levels)");
    std::int64_t leaves = 1;
    for (const unsigned int d : tree.down) leaves *= d;
    require(leaves == cluster.machines, "network.fat_tree.down",
            "the product of the down counts (" + std::to_string(leaves) +
                " leaves) must equal the number of machines (" + std::to_string(cluster.machines) +
                ")");
  }
  const CostModel& device = cluster.device_cost_model;
  const CostModel& host =
      cluster.device_kind == DeviceKind::gpu ? cluster.host_cost_model : cluster.device_cost_model;
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (!is_costed(kind)) continue;
    const bool on_host = cluster.runs_on_host(kind);
    require(
        (on_host ? host : device).cost(kind).has_value(),
        std::string(on_host ? "host" : "device") + ".cost_model." + std::string(to_string(kind)),
        "is missing: every op kind needs a cost");
  }
  require(!cluster.device_keeps_features || device.cost(OpKind::gather_features).has_value() ||
              device.cost(OpKind::gather_rows).has_value(),
          "device.cost_model.gather_rows",
          "is missing: a device that keeps the features (device.keeps_features) gathers inputs");
}

}  // namespace

bool ClusterSpec::keeps_features(std::int64_t feature_bytes) const {
  return device_kind == DeviceKind::gpu && device_keeps_features &&
         feature_bytes <= device_memory_bytes / 2;
}

bool ClusterSpec::runs_on_host(OpKind kind, bool features_on_device) const {
  return device_kind == DeviceKind::gpu &&
         (kind == OpKind::sample || kind == OpKind::scatter_rows || kind == OpKind::train_bucket ||
          (kind == OpKind::gather_features && !features_on_device));
}

LinkSpec LinkChange::applied_to(LinkSpec link) const {
  if (bandwidth_bytes_per_second) link.bandwidth_bytes_per_second = *bandwidth_bytes_per_second;
  if (latency_seconds) link.latency_seconds = *latency_seconds;
  return link;
}

std::string Deviation::part() const {
  return machine ? "machine " + std::to_string(*machine) : "rank " + std::to_string(rank.value());
}

LinkSpec ClusterSpec::nic_of(int machine) const {
  for (const Deviation& deviation : deviations) {
    if (deviation.machine == machine) return deviation.nic.applied_to(nic);
  }
  return nic;
}

int ClusterSpec::nic_index_of(int rank) const {
  return rank % ranks_per_machine / (ranks_per_machine / nics_per_machine);
}

LinkSpec ClusterSpec::device_link_of(int rank) const {
  for (const Deviation& deviation : deviations) {
    if (deviation.rank == rank) return deviation.device_link.applied_to(device_link);
  }
  return device_link;
}

std::vector<PartFailure> ClusterSpec::failures() const {
  using Kind = PartFailure::Kind;
  std::vector<PartFailure> failures;
  for (const Deviation& deviation : deviations) {
    const int index = deviation.machine ? *deviation.machine : deviation.rank.value();
    if (deviation.fails_at_seconds) {
      failures.push_back({deviation.machine ? Kind::machine : Kind::rank, index,
                          *deviation.fails_at_seconds, deviation.part()});
    }
    if (deviation.nic.fails_at_seconds) {
      failures.push_back(
          {Kind::nic, index, *deviation.nic.fails_at_seconds, "the NIC of " + deviation.part()});
    }
    if (deviation.device_link.fails_at_seconds) {
      failures.push_back({Kind::device_link, index, *deviation.device_link.fails_at_seconds,
                          "the device link of " + deviation.part()});
    }
  }
  std::stable_sort(
      failures.begin(), failures.end(),
      [](const PartFailure& a, const PartFailure& b) { return a.at_seconds < b.at_seconds; });
  return failures;
}

double ClusterSpec::compute_factor(int rank, bool on_host) const {
  double factor = compute_time_factor;
  if (rank_speed_spread > 0) {
    factor *= 1 + rank_speed_spread * normal_order_score(rank, num_ranks());
  }
  const bool device_only = on_host && device_kind == DeviceKind::gpu;
  for (const Deviation& deviation : deviations) {
    if ((deviation.rank == rank && !device_only) || deviation.machine == machine_of(rank)) {
      factor *= deviation.compute_time_factor;
    }
  }
  return factor;
}

double ClusterSpec::jitter_factor(int rank, std::int64_t iteration, std::int64_t op) const {
  if (compute_jitter == 0) return 1;
  const double z = standard_normal(hash_mix(compute_jitter_seed, static_cast<std::uint64_t>(rank),
                                            static_cast<std::uint64_t>(iteration),
                                            static_cast<std::uint64_t>(op)));
  // exp(s z) has mean exp(s^2 / 2): dividing it out keeps the cost model's time the mean.
  return std::exp(compute_jitter * z - 0.5 * compute_jitter * compute_jitter);
}

double ClusterSpec::compute_seconds(const Op& op, bool features_on_device) const {
  const bool on_host = runs_on_host(op.kind, features_on_device);
  const CostModel& model = on_host ? host_cost_model : device_cost_model;
  const OpKind kind = op.kind == OpKind::gather_features && !on_host &&
                              !model.cost(OpKind::gather_features).has_value()
                          ? OpKind::gather_rows
                          : op.kind;
  // Named only on failure: the replay costs every op through here.
  const auto field = [&] {
    return std::string(on_host ? "host" : "device") + ".cost_model." + std::string(to_string(kind));
  };
  const std::optional<OpCost>& cost = model.cost(kind);
  if (!cost) {
    throw ConfigError(field(),
                      "is missing: the plans have " + std::string(to_string(op.kind)) + " ops");
  }
  try {
    return cost->seconds(work_of(op, model.caches().shared_by(cache_sharers(on_host))));
  } catch (const Error& error) {
    throw ConfigError(field(), "op '" + op.label + "': " + error.what());
  }
}

CacheSharers ClusterSpec::cache_sharers(bool on_host) const {
  if (!on_host && device_kind == DeviceKind::gpu) return {1, 1};
  if (shared_cores > 0) return {std::min(num_ranks(), shared_cores), num_ranks()};
  return {ranks_per_machine, ranks_per_machine};
}

ClusterSpec cluster_from_json(const nlohmann::json& document, const std::string& origin) {
  try {
    ClusterSpec cluster;
    JsonFieldReader reader(document, "");
    reader.read("name", cluster.name);
    reader.read("description", cluster.description);
    reader.read("machines", cluster.machines);
    reader.read("ranks_per_machine", cluster.ranks_per_machine);
    reader.read("shared_cores", cluster.shared_cores);
    reader.read("shared_core_time_slice_seconds", cluster.shared_core_time_slice_seconds);
    reader.read("rank_speed_spread", cluster.rank_speed_spread);
    reader.read("compute_time_factor", cluster.compute_time_factor);
    reader.read("compute_jitter", cluster.compute_jitter);
    reader.read("compute_jitter_seed", cluster.compute_jitter_seed);
    reader.read("failure_detection_seconds", cluster.failure_detection_seconds);
    if (const nlohmann::json* host = reader.child("host"); host != nullptr && !host->is_null()) {
      JsonFieldReader host_reader(*host, "host");
      host_reader.read("cores", cluster.host_cores);
      host_reader.read("memory_bytes", cluster.host_memory_bytes);
      host_reader.read("memory_bandwidth_bytes_per_second", cluster.host_memory_bytes_per_second);
      if (const nlohmann::json* costs = host_reader.child("cost_model"); costs && !costs->is_null())
        cluster.host_cost_model = CostModel::from_json(*costs, "host.cost_model");
      host_reader.finish();
    }
    const nlohmann::json* device = reader.child("device");
    if (device == nullptr || device->is_null()) throw ConfigError("device", "is required");
    JsonFieldReader device_reader(*device, "device");
    std::string kind = "cpu";
    device_reader.read("kind", kind);
    require_one_of("device.kind", kind, {"gpu", "cpu"});
    cluster.device_kind = kind == "gpu" ? DeviceKind::gpu : DeviceKind::cpu;
    device_reader.read("name", cluster.device_name);
    device_reader.read("memory_bytes", cluster.device_memory_bytes);
    device_reader.read("keeps_features", cluster.device_keeps_features);
    if (const nlohmann::json* costs = device_reader.child("cost_model"); costs && !costs->is_null())
      cluster.device_cost_model = CostModel::from_json(*costs, "device.cost_model");
    device_reader.finish();
    const nlohmann::json* device_link = reader.child("device_link");
    if (device_link == nullptr || device_link->is_null())
      throw ConfigError("device_link", "is required");
    cluster.device_link = link_from_json(*device_link, "device_link");
    if (const nlohmann::json* peer = reader.child("peer_link"); peer != nullptr && !peer->is_null())
      cluster.peer_link = link_from_json(*peer, "peer_link");
    if (const nlohmann::json* pcie = reader.child("pcie_switch");
        pcie != nullptr && !pcie->is_null())
      cluster.pcie_switch = pcie_switch_from_json(*pcie);
    const nlohmann::json* nic = reader.child("nic");
    if (nic == nullptr || nic->is_null()) throw ConfigError("nic", "is required");
    read_nic(*nic, "nic", cluster);
    if (const nlohmann::json* network = reader.child("network"); network && !network->is_null())
      read_network(*network, cluster);
    if (const nlohmann::json* list = reader.child("deviations"); list && !list->is_null())
      cluster.deviations = deviations_from_json(*list);
    reader.finish();
    validate(cluster);
    return cluster;
  } catch (const ConfigError& error) {
    throw ConfigError(error.field(), error.problem() + " (cluster " + origin + ")");
  }
}

nlohmann::json ClusterSpec::to_json() const {
  nlohmann::json document = {
      {"name", name},
      {"description", description},
      {"machines", machines},
      {"ranks_per_machine", ranks_per_machine},
      {"host",
       {{"cores", host_cores},
        {"memory_bytes", host_memory_bytes},
        {"cost_model", host_cost_model.to_json()}}},
      {"device",
       {{"kind", device_kind == DeviceKind::gpu ? "gpu" : "cpu"},
        {"name", device_name},
        {"memory_bytes", device_memory_bytes},
        {"keeps_features", device_keeps_features},
        {"cost_model", device_cost_model.to_json()}}},
      {"device_link", gnnbed::to_json(device_link)},
      {"nic",
       {{"bandwidth_gbps", nic.bandwidth_bytes_per_second * kBitsPerByte / kGiga},
        {"latency_seconds", nic.latency_seconds},
        {"cpu_seconds_per_byte", nic_cpu_seconds_per_byte},
        {"progress_window_bytes", progress_window_bytes},
        {"count", nics_per_machine},
        {"gpu_direct", gpu_direct}}},
      {"network",
       {{"topology", topology}, {"model", network_model}, {"crosstraffic", uses_crosstraffic()}}}};
  if (peer_link) document["peer_link"] = gnnbed::to_json(*peer_link);
  if (host_memory_bytes_per_second > 0) {
    document["host"]["memory_bandwidth_bytes_per_second"] = host_memory_bytes_per_second;
  }
  if (pcie_switch.devices_per_switch > 0) {
    document["pcie_switch"] = {{"devices_per_switch", pcie_switch.devices_per_switch},
                               {"uplink", gnnbed::to_json(pcie_switch.uplink)}};
  }
  if (shared_cores > 0) document["shared_cores"] = shared_cores;
  if (shared_core_time_slice_seconds > 0) {
    document["shared_core_time_slice_seconds"] = shared_core_time_slice_seconds;
  }
  if (rank_speed_spread > 0) document["rank_speed_spread"] = rank_speed_spread;
  if (compute_time_factor != 1) document["compute_time_factor"] = compute_time_factor;
  if (compute_jitter > 0) {
    document["compute_jitter"] = compute_jitter;
    document["compute_jitter_seed"] = compute_jitter_seed;
  }
  if (failure_detection_seconds > 0)
    document["failure_detection_seconds"] = failure_detection_seconds;
  if (!deviations.empty()) {
    document["deviations"] = nlohmann::json::array();
    for (const Deviation& deviation : deviations) {
      document["deviations"].push_back(gnnbed::to_json(deviation));
    }
  }
  if (topology == "fat-tree") {
    document["network"]["fat_tree"] = {
        {"down", fat_tree.down}, {"up", fat_tree.up}, {"link_count", fat_tree.link_count}};
  }
  return document;
}

std::filesystem::path cluster_preset_directory() {
  if (const char* overridden = std::getenv("GNNBED_CLUSTER_PRESETS");
      overridden != nullptr && *overridden != '\0') {
    return overridden;
  }
  return GNNBED_CLUSTER_PRESETS_DIR;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  const std::filesystem::path directory = cluster_preset_directory();
  if (!std::filesystem::is_directory(directory)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

ClusterSpec load_cluster(const std::string& source, const std::vector<std::string>& overrides) {
  std::filesystem::path path = source;
  if (source.find('/') == std::string::npos && path.extension() != ".json") {
    path = cluster_preset_directory() / (source + ".json");
    if (!std::filesystem::exists(path)) {
      std::string known;
      for (const std::string& name : cluster_preset_names())
        known += (known.empty() ? "" : ", ") + name;
      throw ConfigError("cluster",
                        "'" + source + "' is neither a preset (" + known + ") nor a JSON file");
    }
  }
  nlohmann::json document = parse_json_file(path);
  for (const std::string& setting : overrides) {
    const auto equals = setting.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw ConfigError("cluster setting", "'" + setting + "' is not FIELD=VALUE");
    }
    set_json_path(document, setting.substr(0, equals), setting.substr(equals + 1));
  }
  return cluster_from_json(document, path.string());
}

ClusterSpec apply_calibration(ClusterSpec cluster, const Calibration& calibration) {
  // calibrate times the GNN engine's ops, not PBG's training of a bucket: a calibration without
  // that keeps the cluster's (from its host where a GPU cluster runs it).
  const std::optional<OpCost> bucket =
      (cluster.runs_on_host(OpKind::train_bucket) ? cluster.host_cost_model
                                                  : cluster.device_cost_model)
          .cost(OpKind::train_bucket);
  cluster.device_cost_model = calibration.cost_model;
  cluster.host_cost_model = calibration.cost_model;
  if (bucket && !calibration.cost_model.cost(OpKind::train_bucket)) {
    cluster.device_cost_model.set(OpKind::train_bucket, *bucket);
    cluster.host_cost_model.set(OpKind::train_bucket, *bucket);
  }
  // Calibrated on a GPU, ops ran there and inputs crossed the measured host-to-device copies; on
  // CPUs, the device link is the calibrated transport.
  cluster.device_kind = calibration.device_link ? DeviceKind::gpu : DeviceKind::cpu;
  // calibrate's engine kept the features on the GPU, as run_experiment does by default.
  cluster.device_keeps_features = calibration.device_link.has_value();
  const NetworkCalibration& link =
      calibration.device_link ? *calibration.device_link : calibration.network;
  cluster.device_link = {link.bandwidth_bytes_per_second, link.latency_seconds};
  validate(cluster);
  return cluster;
}

}  // namespace gnnbed
