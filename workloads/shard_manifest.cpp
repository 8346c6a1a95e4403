// The manifest of a sharded workload (manifest.json) and the layout it records.
#include <cstdio>
#include <limits>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/partition.hpp"
#include "workloads/shard_format.hpp"

namespace gnnbed {
namespace {

constexpr const char* kManifestFormat = "gnnbed-shards";
constexpr int kManifestVersion = 1;

std::string hex64(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Typed access to the manifest's fields, every failure an InputError naming the file and field.
class ManifestReader {
 public:
  explicit ManifestReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw InputError(file_, 0, field, problem);
  }

  const nlohmann::json& at(const nlohmann::json& object, const std::string& where,
                           const std::string& key) const {
    const std::string field = where.empty() ? key : where + "." + key;
    if (!object.is_object()) fail(where, "is not a JSON object");
    const auto it = object.find(key);
    if (it == object.end()) fail(field, "is missing");
    return *it;
  }

  std::string text(const nlohmann::json& object, const std::string& where,
                   const std::string& key) const {
    const nlohmann::json& value = at(object, where, key);
    if (!value.is_string()) fail(field(where, key), "is not a string");
    return value.get<std::string>();
  }

  std::int64_t integer(const nlohmann::json& object, const std::string& where,
                       const std::string& key, std::int64_t low, std::int64_t high) const {
    const nlohmann::json& value = at(object, where, key);
    if (!value.is_number_integer()) fail(field(where, key), "is not an integer");
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(high)) {
      fail(field(where, key), value.dump() + " is outside [" + std::to_string(low) + ", " +
                                  std::to_string(high) + "]");
    }
    const auto number = value.get<std::int64_t>();
    if (number < low || number > high) {
      fail(field(where, key), std::to_string(number) + " is outside [" + std::to_string(low) +
                                  ", " + std::to_string(high) + "]");
    }
    return number;
  }

  std::uint64_t unsigned_integer(const nlohmann::json& object, const std::string& where,
                                 const std::string& key) const {
    const nlohmann::json& value = at(object, where, key);
    if (!value.is_number_unsigned()) fail(field(where, key), "is not a non-negative integer");
    return value.get<std::uint64_t>();
  }

  std::uint64_t hex(const nlohmann::json& object, const std::string& where,
                    const std::string& key) const {
    const std::string value = text(object, where, key);
    std::size_t used = 0;
    std::uint64_t number = 0;
    try {
      number = std::stoull(value, &used, 16);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.size() != 18 || value.rfind("0x", 0) != 0 || used != value.size()) {
      fail(field(where, key),
           "'" + value + "' is not a 64-bit hexadecimal number (0x + 16 digits)");
    }
    return number;
  }

  static std::string field(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  std::string file_;
};

}  // namespace

nlohmann::json ShardLayout::to_json() const {
  return {{"num_shards", num_shards},
          {"partitioner", partitioner},
          {"partition_seed", partition_seed},
          {"structure", structure},
          {"features", features}};
}

ShardPlacement shard_placement(const ShardLayout& layout, int feature_dim, int rank) {
  require(layout.num_shards >= 1, "shards",
          "must be at least 1, got " + std::to_string(layout.num_shards));
  require_one_of("structure", layout.structure, {"replicated", "partitioned"});
  require_one_of("feature-layout", layout.features, {"rows", "columns"});
  ShardPlacement placement;
  placement.structure_partitioned = layout.structure == "partitioned";
  if (layout.features == "rows" || feature_dim == 0) {
    placement.features = {layout.features == "rows", 0, feature_dim};
    return placement;
  }
  const FeatureColumnSplit split(feature_dim, layout.num_shards);
  placement.features = {false, split.begin(rank), split.end(rank)};
  return placement;
}

nlohmann::json ShardManifest::to_json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const Entry& entry : shards) {
    entries.push_back({{"file", entry.file},
                       {"file_bytes", entry.file_bytes},
                       {"header_fnv1a64", hex64(entry.header_checksum)},
                       {"num_owned", entry.num_owned},
                       {"num_edges", entry.num_edges},
                       {"num_train", entry.split.train},
                       {"num_val", entry.split.val},
                       {"num_test", entry.split.test}});
  }
  return {{"format", kManifestFormat},
          {"format_version", kManifestVersion},
          {"dataset", dataset},
          {"layout", layout.to_json()},
          {"shards", entries}};
}

ShardManifest read_shard_manifest(const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "manifest.json";
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(path.string(), 0, "",
                     std::filesystem::is_directory(directory)
                         ? "no such file: not a sharded workload (write one with workload "
                           "convert --shards N)"
                         : "no such file: " + directory.string() + " is not a directory");
  }
  const nlohmann::json document = parse_json_file(path);
  const ManifestReader reader(path.string());
  if (reader.text(document, "", "format") != kManifestFormat) {
    reader.fail("format", "is not '" + std::string(kManifestFormat) + "'");
  }
  const std::int64_t version =
      reader.integer(document, "", "format_version", 0, std::numeric_limits<std::int32_t>::max());
  if (version != kManifestVersion) {
    reader.fail("format_version", "version " + std::to_string(version) +
                                      ", this build reads version " +
                                      std::to_string(kManifestVersion));
  }
  ShardManifest manifest;
  manifest.directory = directory;
  manifest.dataset = reader.at(document, "", "dataset");
  constexpr std::int64_t kMaxNodes = std::numeric_limits<NodeId>::max();
  reader.text(manifest.dataset, "dataset", "name");
  const std::int64_t num_nodes =
      reader.integer(manifest.dataset, "dataset", "num_nodes", 0, kMaxNodes);
  reader.integer(manifest.dataset, "dataset", "num_edges", 0,
                 std::numeric_limits<std::int64_t>::max());
  reader.integer(manifest.dataset, "dataset", "feature_dim", 0,
                 std::numeric_limits<std::int32_t>::max());
  reader.integer(manifest.dataset, "dataset", "num_classes", 0,
                 std::numeric_limits<std::int32_t>::max());
  for (const char* part : {"num_train", "num_val", "num_test"}) {
    reader.integer(manifest.dataset, "dataset", part, 0, num_nodes);
  }

  const nlohmann::json& layout = reader.at(document, "", "layout");
  manifest.layout.num_shards = static_cast<int>(
      reader.integer(layout, "layout", "num_shards", 1, std::max<std::int64_t>(1, num_nodes)));
  manifest.layout.partitioner = reader.text(layout, "layout", "partitioner");
  manifest.layout.partition_seed = reader.unsigned_integer(layout, "layout", "partition_seed");
  manifest.layout.structure = reader.text(layout, "layout", "structure");
  manifest.layout.features = reader.text(layout, "layout", "features");
  if (manifest.layout.structure != "replicated" && manifest.layout.structure != "partitioned") {
    reader.fail("layout.structure",
                "'" + manifest.layout.structure + "' is not 'replicated' or 'partitioned'");
  }
  if (manifest.layout.features != "rows" && manifest.layout.features != "columns") {
    reader.fail("layout.features", "'" + manifest.layout.features + "' is not 'rows' or 'columns'");
  }

  const nlohmann::json& shards = reader.at(document, "", "shards");
  if (!shards.is_array()) reader.fail("shards", "is not an array");
  if (static_cast<std::int64_t>(shards.size()) != manifest.layout.num_shards) {
    reader.fail("shards", "lists " + std::to_string(shards.size()) +
                              " shards, layout.num_shards is " +
                              std::to_string(manifest.layout.num_shards));
  }
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const std::string where = "shards[" + std::to_string(r) + "]";
    ShardManifest::Entry entry;
    entry.file = reader.text(shards[r], where, "file");
    if (entry.file.empty() || std::filesystem::path(entry.file).has_parent_path()) {
      reader.fail(where + ".file", "'" + entry.file + "' is not a file name in the directory");
    }
    entry.file_bytes = reader.unsigned_integer(shards[r], where, "file_bytes");
    entry.header_checksum = reader.hex(shards[r], where, "header_fnv1a64");
    entry.num_owned = reader.integer(shards[r], where, "num_owned", 0, num_nodes);
    entry.num_edges =
        reader.integer(shards[r], where, "num_edges", 0, std::numeric_limits<std::int64_t>::max());
    entry.split.train = reader.integer(shards[r], where, "num_train", 0, num_nodes);
    entry.split.val = reader.integer(shards[r], where, "num_val", 0, num_nodes);
    entry.split.test = reader.integer(shards[r], where, "num_test", 0, num_nodes);
    manifest.shards.push_back(std::move(entry));
  }
  return manifest;
}

}  // namespace gnnbed
