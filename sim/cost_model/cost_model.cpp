#include "sim/cost_model/cost_model.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdio>

#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

constexpr const char* kCalibrationFormat = "gnnbed-calibration";
constexpr int kCalibrationVersion = 1;
constexpr const char* kCachesKey = "caches";

CacheSizes caches_from_json(const nlohmann::json& object, const std::string& where) {
  CacheSizes caches;
  JsonFieldReader reader(object, where);
  reader.read("near_bytes", caches.near_bytes);
  reader.read("far_bytes", caches.far_bytes);
  reader.finish();
  for (const auto& [key, bytes] :
       {std::pair{"near_bytes", caches.near_bytes}, {"far_bytes", caches.far_bytes}}) {
    require(bytes >= 0 && std::isfinite(bytes), reader.path(key),
            "must be a number of bytes, at least 0 (0: the level is not modelled)");
  }
  return caches;
}

// `rate_key` names the rate as cost-model files spell it, so that a missing one can be added.
double term_seconds(double work, double rate, const char* work_name, const char* rate_key) {
  if (work == 0) return 0;
  if (rate <= 0) {
    char amount[32];
    std::snprintf(amount, sizeof(amount), "%.0f", work);
    throw Error(std::string("cost model has no ") + rate_key + " for the op's " + amount + " " +
                work_name + " (calibrate again, or set it)");
  }
  return work / rate;
}

OpKind op_kind_from_name(const std::string& name, const std::string& where) {
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    if (to_string(static_cast<OpKind>(k)) == name) return static_cast<OpKind>(k);
  }
  throw ConfigError(where + "." + name, "is not an op kind");
}

}  // namespace

double uncached_fraction(double table_bytes, double cache_bytes) {
  if (cache_bytes <= 0 || table_bytes <= cache_bytes) return 0;
  return 1 - cache_bytes / table_bytes;
}

CacheSizes CacheSizes::shared_by(const CacheSharers& sharers) const {
  return {near_bytes / std::max(sharers.near, 1), far_bytes / std::max(sharers.far, 1)};
}

void set_cache_misses(OpWork& work, double rows, double table_bytes, const CacheSizes& caches) {
  work.near_cache_misses = rows * uncached_fraction(table_bytes, caches.near_bytes);
  work.far_cache_misses = rows * uncached_fraction(table_bytes, caches.far_bytes);
}

OpWork work_of(const Op& op, const CacheSizes& caches) {
  OpWork work{op.flops - op.sparse_flops,
              op.sparse_flops,
              static_cast<double>(op.memory_bytes),
              static_cast<double>(op.sampled_edges),
              static_cast<double>(op.planned_nodes),
              static_cast<double>(op.sparse_entries)};
  set_cache_misses(work, static_cast<double>(op.gathered_rows),
                   static_cast<double>(op.gathered_table_bytes), caches);
  return work;
}

OpWork& OpWork::operator+=(const OpWork& other) {
  dense_flops += other.dense_flops;
  sparse_flops += other.sparse_flops;
  memory_bytes += other.memory_bytes;
  sampled_edges += other.sampled_edges;
  planned_nodes += other.planned_nodes;
  sparse_entries += other.sparse_entries;
  near_cache_misses += other.near_cache_misses;
  far_cache_misses += other.far_cache_misses;
  return *this;
}

double OpCost::work_seconds(const OpWork& work) const {
  return term_seconds(work.dense_flops, dense_flops_per_second, "dense FLOPs",
                      "dense_flops_per_second") +
         term_seconds(work.sparse_flops, sparse_flops_per_second, "sparse FLOPs",
                      "sparse_flops_per_second") +
         term_seconds(work.memory_bytes, memory_bytes_per_second, "memory bytes",
                      "memory_bytes_per_second") +
         term_seconds(work.sampled_edges, sampled_edges_per_second, "sampled edges",
                      "sampled_edges_per_second") +
         term_seconds(work.planned_nodes, planned_nodes_per_second, "planned nodes",
                      "planned_nodes_per_second") +
         (sparse_entries_per_second > 0 ? work.sparse_entries / sparse_entries_per_second : 0.0) +
         (near_cache_misses_per_second > 0 ? work.near_cache_misses / near_cache_misses_per_second
                                           : 0.0) +
         (far_cache_misses_per_second > 0 ? work.far_cache_misses / far_cache_misses_per_second
                                          : 0.0);
}

nlohmann::json OpCost::to_json() const {
  nlohmann::json object = {{"fixed_seconds", fixed_seconds}};
  if (dense_flops_per_second > 0) object["dense_flops_per_second"] = dense_flops_per_second;
  if (sparse_flops_per_second > 0) object["sparse_flops_per_second"] = sparse_flops_per_second;
  if (memory_bytes_per_second > 0) object["memory_bytes_per_second"] = memory_bytes_per_second;
  if (sampled_edges_per_second > 0) object["sampled_edges_per_second"] = sampled_edges_per_second;
  if (planned_nodes_per_second > 0) object["planned_nodes_per_second"] = planned_nodes_per_second;
  if (sparse_entries_per_second > 0)
    object["sparse_entries_per_second"] = sparse_entries_per_second;
  if (near_cache_misses_per_second > 0)
    object["near_cache_misses_per_second"] = near_cache_misses_per_second;
  if (far_cache_misses_per_second > 0)
    object["far_cache_misses_per_second"] = far_cache_misses_per_second;
  return object;
}

OpCost OpCost::from_json(const nlohmann::json& object, const std::string& where) {
  OpCost cost;
  JsonFieldReader reader(object, where);
  reader.read("fixed_seconds", cost.fixed_seconds);
  reader.read("dense_flops_per_second", cost.dense_flops_per_second);
  reader.read("sparse_flops_per_second", cost.sparse_flops_per_second);
  reader.read("memory_bytes_per_second", cost.memory_bytes_per_second);
  reader.read("sampled_edges_per_second", cost.sampled_edges_per_second);
  reader.read("planned_nodes_per_second", cost.planned_nodes_per_second);
  reader.read("sparse_entries_per_second", cost.sparse_entries_per_second);
  reader.read("near_cache_misses_per_second", cost.near_cache_misses_per_second);
  reader.read("far_cache_misses_per_second", cost.far_cache_misses_per_second);
  reader.finish();
  // Ranges the simulator's arithmetic handles: a rate is 0 (no such work), or at least 1 per
  // second and finite (calibration writes the largest double for work it found free); a fixed
  // cost is at most a minute.
  require(cost.fixed_seconds >= 0 && cost.fixed_seconds <= 60, reader.path("fixed_seconds"),
          "must be between 0 and 60 seconds");
  for (const auto& [key, rate] :
       {std::pair{"dense_flops_per_second", cost.dense_flops_per_second},
        {"sparse_flops_per_second", cost.sparse_flops_per_second},
        {"memory_bytes_per_second", cost.memory_bytes_per_second},
        {"sampled_edges_per_second", cost.sampled_edges_per_second},
        {"planned_nodes_per_second", cost.planned_nodes_per_second},
        {"sparse_entries_per_second", cost.sparse_entries_per_second},
        {"near_cache_misses_per_second", cost.near_cache_misses_per_second},
        {"far_cache_misses_per_second", cost.far_cache_misses_per_second}}) {
    require(rate == 0 || (rate >= 1 && std::isfinite(rate)), reader.path(key),
            "must be 0 (no such work) or a finite rate of at least 1 per second");
  }
  return cost;
}

double CostModel::seconds(const Op& op, const CacheSharers& sharers) const {
  const std::optional<OpCost>& entry = cost(op.kind);
  if (!entry) {
    throw Error("cost model has no entry for op kind '" + std::string(to_string(op.kind)) +
                "' (op '" + op.label + "')");
  }
  try {
    return entry->seconds(work_of(op, caches_.shared_by(sharers)));
  } catch (const Error& error) {
    throw Error("op '" + op.label + "': " + error.what());
  }
}

nlohmann::json CostModel::to_json() const {
  nlohmann::json object = nlohmann::json::object();
  if (caches_ != CacheSizes{}) {
    object[kCachesKey] = {{"near_bytes", caches_.near_bytes}, {"far_bytes", caches_.far_bytes}};
  }
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    if (costs_[k]) object[std::string(to_string(static_cast<OpKind>(k)))] = costs_[k]->to_json();
  }
  return object;
}

CostModel CostModel::from_json(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) throw ConfigError(where, "must be an object of op kinds");
  CostModel model;
  for (const auto& [name, entry] : object.items()) {
    if (name == kCachesKey) {
      model.caches_ = caches_from_json(entry, where + "." + name);
      continue;
    }
    const OpKind kind = op_kind_from_name(name, where);
    if (!is_costed(kind)) {
      throw ConfigError(where + "." + name, "is moved as bytes over modelled links, not costed");
    }
    model.set(kind, OpCost::from_json(entry, where + "." + name));
  }
  return model;
}

void CostModel::merge(const CostModel& overrides) {
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    if (overrides.costs_[k]) costs_[k] = overrides.costs_[k];
  }
  if (overrides.caches_ != CacheSizes{}) caches_ = overrides.caches_;
}

bool is_costed(OpKind kind) { return !is_communication(kind) && kind != OpKind::copy_to_device; }

double normal_order_score(int position, int count) {
  if (count < 2) return 0;
  const double quantile = (position + 1 - 0.375) / (count + 0.25);
  return boost::math::quantile(boost::math::normal(), quantile);
}

nlohmann::json NetworkCalibration::to_json() const {
  return {{"latency_seconds", latency_seconds},
          {"bandwidth_bytes_per_second", bandwidth_bytes_per_second}};
}

NetworkCalibration NetworkCalibration::from_json(const nlohmann::json& object,
                                                 const std::string& where) {
  NetworkCalibration network;
  JsonFieldReader reader(object, where);
  reader.read("latency_seconds", network.latency_seconds);
  reader.read("bandwidth_bytes_per_second", network.bandwidth_bytes_per_second);
  reader.finish();
  require(network.latency_seconds >= 0, reader.path("latency_seconds"), "must not be negative");
  require(network.bandwidth_bytes_per_second > 0, reader.path("bandwidth_bytes_per_second"),
          "must be positive");
  return network;
}

nlohmann::json Calibration::to_json() const {
  nlohmann::json document = {
      {"format", kCalibrationFormat},     {"version", kCalibrationVersion},
      {"provenance", provenance},         {"cost_model", cost_model.to_json()},
      {"network", network.to_json()},     {"rank_speed_spread", rank_speed_spread},
      {"compute_jitter", compute_jitter}, {"fits", fits}};
  if (device_link) document["device_link"] = device_link->to_json();
  return document;
}

Calibration read_calibration(const std::filesystem::path& path) {
  const nlohmann::json document = parse_json_file(path);
  const std::string origin = path.string();
  try {
    if (!document.is_object() || document.value("format", "") != kCalibrationFormat) {
      throw InputError(origin, 0, "format", std::string("is not \"") + kCalibrationFormat + "\"");
    }
    if (json_integer_or<int>(document, "version", 0) != kCalibrationVersion) {
      throw InputError(origin, 0, "version",
                       "must be " + std::to_string(kCalibrationVersion) + " (this build's)");
    }
    Calibration calibration;
    calibration.cost_model = CostModel::from_json(document.at("cost_model"), "cost_model");
    calibration.network = NetworkCalibration::from_json(document.at("network"), "network");
    // Files from before it was measured have none: identical ranks.
    calibration.rank_speed_spread = document.value("rank_speed_spread", 0.0);
    if (!(calibration.rank_speed_spread >= 0)) {
      throw InputError(origin, 0, "rank_speed_spread", "must not be negative");
    }
    calibration.compute_jitter = document.value("compute_jitter", 0.0);
    if (!(calibration.compute_jitter >= 0)) {
      throw InputError(origin, 0, "compute_jitter", "must not be negative");
    }
    if (document.contains("device_link")) {
      calibration.device_link =
          NetworkCalibration::from_json(document.at("device_link"), "device_link");
    }
    calibration.fits = document.value("fits", nlohmann::json::object());
    calibration.provenance = document.value("provenance", nlohmann::json::object());
    return calibration;
  } catch (const ConfigError& error) {
    throw InputError(origin, 0, error.field(), error.problem());
  } catch (const nlohmann::json::exception& error) {
    throw InputError(origin, 0, "calibration", error.what());
  }
}

void write_calibration(const Calibration& calibration, const std::filesystem::path& path) {
  write_text_file_atomically(path, calibration.to_json().dump(2) + "\n");
}

}  // namespace gnnbed
