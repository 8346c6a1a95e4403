#pragma once
// What the bytes a plan moves are: every communication op names its kind, and engines count
// bytes per kind, so runs report traffic as structure / features / activations / gradients /
// weights / embeddings / control.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gnnbed {

enum class Traffic : std::uint8_t {
  structure,    // graph structure: sampling requests and replies, node-id lists, pushed blocks
  features,     // input node features
  activations,  // hidden representations (P3's partial activations)
  gradients,    // gradients of activations and of weights
  weights,      // model weights
  embeddings,   // entity embeddings with their optimizer state (PBG's partition swaps)
  control,      // coordination messages of a strategy's servers (PBG's lock requests and grants)
};
inline constexpr std::size_t kNumTrafficKinds = 7;

std::string_view to_string(Traffic kind);
// Throws ConfigError naming `field` for an unknown name.
Traffic traffic_from_string(std::string_view name, const std::string& field);

// Bytes per traffic kind.
struct TrafficBytes {
  std::array<std::int64_t, kNumTrafficKinds> bytes{};

  std::int64_t& operator[](Traffic kind) { return bytes[static_cast<std::size_t>(kind)]; }
  std::int64_t operator[](Traffic kind) const { return bytes[static_cast<std::size_t>(kind)]; }
  std::int64_t total() const;
  TrafficBytes& operator+=(const TrafficBytes& other);
  TrafficBytes operator-(const TrafficBytes& other) const;
  bool operator==(const TrafficBytes& other) const = default;
  nlohmann::json to_json() const;  // {"structure": ..., ..., "total": ...}
};

}  // namespace gnnbed
