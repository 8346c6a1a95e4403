#pragma once
// gnnbed's sharded workload: a directory with a manifest (manifest.json: the dataset's summary,
// the layout the shards were cut for, and per shard its file, size and header checksum) and one
// binary file per rank holding exactly that rank's RankShard, in the section layout of the binary
// workload format. The layout (number of shards, partitioner and its seed, structure replicated
// or partitioned, feature rows or columns) is fixed when the shards are written; a run checks it
// against its own configuration. Loading maps the rank's file and validates it whole. Sparse
// features (bag of words) stay sparse: the placed rows as CSR, with every node's entries. See
// docs/binary_format.md.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "workloads/dataset.hpp"
#include "workloads/rank_shard.hpp"

namespace gnnbed {

struct ShardLayout {
  int num_shards = 1;
  std::string partitioner = "hash";  // see partitioner_names()
  std::uint64_t partition_seed = 1;
  std::string structure = "replicated";  // or "partitioned": each shard holds its nodes' in-edges
  std::string features = "rows";  // or "columns": each shard holds a slice of every node's features

  bool operator==(const ShardLayout& other) const = default;
  nlohmann::json to_json() const;
};

// What rank `rank` holds under `layout` of a workload with `feature_dim` feature columns: feature
// rows of its own nodes, or its share of the columns as P3 splits them (FeatureColumnSplit).
ShardPlacement shard_placement(const ShardLayout& layout, int feature_dim, int rank);

struct ShardManifest {
  struct Entry {
    std::string file;  // relative to the directory
    std::uint64_t file_bytes = 0;
    std::uint64_t header_checksum = 0;  // FNV-1a (64-bit) of the 4096 header bytes
    // What the shard holds, for people reading the manifest (the loader checks them too).
    std::int64_t num_owned = 0;
    std::int64_t num_edges = 0;  // CSR entries in the shard
    SplitCounts split;
  };

  std::filesystem::path directory;
  nlohmann::json dataset;  // Dataset::summary() of the whole workload
  ShardLayout layout;
  std::vector<Entry> shards;  // one per rank

  nlohmann::json to_json() const;
};

// Partitions `dataset` as `layout` says and writes every rank's shard, then the manifest (each
// file atomically; the manifest last, so a directory with a manifest has all of its shards).
// Throws ConfigError for a layout that does not fit the dataset.
ShardManifest write_shards(const Dataset& dataset, const ShardLayout& layout,
                           const std::filesystem::path& directory);

// The manifest's header_fnv1a64 of a shard: FNV-1a (64-bit) of the file's 4096 header bytes.
std::uint64_t shard_header_checksum(std::span<const std::byte> header);

// Reads and checks `directory`/manifest.json; throws InputError naming the file and the field.
ShardManifest read_shard_manifest(const std::filesystem::path& directory);

// Maps shard `rank` of the set and validates it whole against itself and the manifest; throws
// InputError naming the file and the header field or section at fault.
RankShard load_shard(const ShardManifest& manifest, int rank);

}  // namespace gnnbed
