#include "strategies/plan/traffic.hpp"

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr std::array<std::string_view, kNumTrafficKinds> kNames = {
    "structure", "features", "activations", "gradients", "weights", "embeddings", "control"};

}  // namespace

std::string_view to_string(Traffic kind) { return kNames[static_cast<std::size_t>(kind)]; }

Traffic traffic_from_string(std::string_view name, const std::string& field) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Traffic>(i);
  }
  throw ConfigError(field, "'" + std::string(name) +
                               "' is not a traffic kind (structure, features, activations, "
                               "gradients, weights, embeddings, control)");
}

std::int64_t TrafficBytes::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t b : bytes) sum += b;
  return sum;
}

TrafficBytes& TrafficBytes::operator+=(const TrafficBytes& other) {
  for (std::size_t i = 0; i < kNumTrafficKinds; ++i) bytes[i] += other.bytes[i];
  return *this;
}

TrafficBytes TrafficBytes::operator-(const TrafficBytes& other) const {
  TrafficBytes result = *this;
  for (std::size_t i = 0; i < kNumTrafficKinds; ++i) result.bytes[i] -= other.bytes[i];
  return result;
}

nlohmann::json TrafficBytes::to_json() const {
  nlohmann::json object = nlohmann::json::object();
  for (std::size_t i = 0; i < kNumTrafficKinds; ++i) object[std::string(kNames[i])] = bytes[i];
  object["total"] = total();
  return object;
}

}  // namespace gnnbed
