#pragma once
// A sweep's points kept one file per point in a folder (simulate --points-dir), so that a sweep
// can be spread over the machines of a cluster (--shard K/N: this process computes the points
// whose index is K modulo N) and taken up again after a machine failed: a point whose file is
// there is not computed again. Each file says which sweep it belongs to (everything that decides
// a point's result: the configuration, the cluster and its settings, the calibration's contents,
// the points), and a file of another sweep is refused rather than mixed in.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gnnbed {

// "K/N" with 0 <= K < N; ConfigError naming --shard otherwise.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
  bool owns(std::size_t point) const { return point % count == index; }
};
Shard parse_shard(const std::string& text);

// A 64-bit FNV-1a hash of a file's bytes, as hex: the same on every machine.
std::string content_hash(const std::filesystem::path& path);

class PointStore {
 public:
  // `sweep` identifies the sweep (what decides its points' results).
  PointStore(std::filesystem::path folder, nlohmann::json sweep);

  // The point's result document, when its file is there; throws ConfigError when the file
  // belongs to another sweep or another point, InputError when it is unreadable.
  std::optional<nlohmann::json> load(std::size_t index, const std::string& label) const;
  // Writes the point's file (atomically).
  void save(std::size_t index, const std::string& label, const nlohmann::json& document) const;

 private:
  std::filesystem::path file(std::size_t index) const;

  std::filesystem::path folder_;
  nlohmann::json sweep_;
};

}  // namespace gnnbed
