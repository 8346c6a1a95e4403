#include "sim/tools/point_store.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"

namespace gnnbed {

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  try {
    std::size_t used = 0;
    const unsigned long long index = std::stoull(text.substr(0, slash), &used);
    if (slash == std::string::npos || used != slash) throw std::invalid_argument("format");
    const std::string count_text = text.substr(slash + 1);
    const unsigned long long count = std::stoull(count_text, &used);
    if (used != count_text.size() || count == 0 || index >= count) {
      throw std::invalid_argument("range");
    }
    shard.index = static_cast<std::size_t>(index);
    shard.count = static_cast<std::size_t>(count);
  } catch (const std::exception&) {
    throw ConfigError("shard", "'" + text + "' is not K/N with 0 <= K < N (this process's share)");
  }
  return shard;
}

std::string content_hash(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, "", "cannot open");
  std::uint64_t hash = 14695981039346656037ull;
  for (auto it = std::istreambuf_iterator<char>(in); it != std::istreambuf_iterator<char>(); ++it) {
    hash = (hash ^ static_cast<unsigned char>(*it)) * 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

PointStore::PointStore(std::filesystem::path folder, nlohmann::json sweep)
    : folder_(std::move(folder)), sweep_(std::move(sweep)) {}

std::filesystem::path PointStore::file(std::size_t index) const {
  return folder_ / ("point-" + std::to_string(index) + ".json");
}

std::optional<nlohmann::json> PointStore::load(std::size_t index, const std::string& label) const {
  const std::filesystem::path path = file(index);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path);
  nlohmann::json stored;
  try {
    stored = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(path.string(), 0, "", std::string("not a point's result: ") + error.what());
  }
  if (!stored.is_object() || !stored.contains("sweep") || !stored.contains("document")) {
    throw InputError(path.string(), 0, "", "not a point's result (no sweep or document)");
  }
  if (stored["sweep"] != sweep_) {
    throw ConfigError("points-dir",
                      path.string() +
                          " belongs to another sweep (another configuration, "
                          "cluster, calibration or list of points): use a new folder");
  }
  if (stored.value("point", "") != label) {
    throw ConfigError("points-dir", path.string() + " holds point '" + stored.value("point", "") +
                                        "', not '" + label + "'");
  }
  return stored["document"];
}

void PointStore::save(std::size_t index, const std::string& label,
                      const nlohmann::json& document) const {
  const nlohmann::json stored = {
      {"sweep", sweep_}, {"index", index}, {"point", label}, {"document", document}};
  write_text_file_atomically(file(index), stored.dump() + "\n");
}

}  // namespace gnnbed
