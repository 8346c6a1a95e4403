// The files of a sharded workload: one per rank, in the section layout of the binary workload
// format (docs/binary_format.md). Loading trusts nothing: the header is checked against the
// manifest (by checksum and field by field), every count against the section table and the file,
// and every array against the others, as the binary format's loader does.
#include "workloads/shard_format.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "workloads/binary_format.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/section_file.hpp"
#include "workloads/sparse_section.hpp"

namespace gnnbed {
std::uint64_t shard_header_checksum(std::span<const std::byte> header) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const std::byte b : header) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

constexpr char kMagic[8] = {'G', 'N', 'N', 'B', 'E', 'D', 'S', '1'};
constexpr std::uint32_t kFormatVersion = 2;  // 2: sparse features and their row entries
constexpr std::size_t kNameBytes = 128;
constexpr std::size_t kPartitionerBytes = 32;

constexpr std::uint32_t kHasLabels = 1;
constexpr std::uint32_t kStructurePartitioned = 2;
constexpr std::uint32_t kFeatureColumns = 4;
constexpr std::uint32_t kExplicitOwners = 8;
constexpr std::uint32_t kKnownFlags = 15;

enum class FeatureKind : std::uint32_t { none = 0, stored = 1, generated = 2, sparse = 3 };

enum Section : std::size_t {
  kOwners,
  kOffsets,
  kSources,
  kLabels,
  kTrain,
  kVal,
  kTest,
  kSplitCounts,
  kFeatures,
  kFeatureLabels,
  kFeatureEntries,
  kCount
};
constexpr const char* kSectionNames[kCount] = {
    "owners", "offsets",      "sources",  "labels",         "train",          "val",
    "test",   "split_counts", "features", "feature_labels", "feature_entries"};

// Written and read with memcpy: a standard-layout struct without padding, little-endian.
struct Header {
  FilePreamble preamble;
  std::int64_t num_nodes;
  std::int64_t num_edges;    // CSR entries in this file
  std::int64_t total_edges;  // CSR entries of the whole graph
  std::int64_t num_owned;
  std::int64_t num_train;
  std::int64_t num_val;
  std::int64_t num_test;
  std::int32_t shard;
  std::int32_t num_shards;
  std::int32_t num_classes;
  std::uint32_t flags;
  std::uint32_t feature_kind;
  std::int32_t feature_dim;
  std::int64_t column_begin;
  std::int64_t column_end;
  std::uint64_t feature_seed;
  float feature_signal;
  std::uint32_t reserved;
  std::uint64_t partition_seed;
  char partitioner[kPartitionerBytes];
  char name[kNameBytes];
  SectionEntry sections[kCount];
};
static_assert(offsetof(Header, num_nodes) == 32);
static_assert(offsetof(Header, shard) == 88);
static_assert(offsetof(Header, column_begin) == 112);
static_assert(offsetof(Header, partition_seed) == 144);
static_assert(offsetof(Header, partitioner) == 152);
static_assert(offsetof(Header, name) == 184);
static_assert(offsetof(Header, sections) == 312);
static_assert(sizeof(Header) == 488);

using HeaderBlock = std::array<std::byte, kFileHeaderBytes>;

std::string shard_file_name(int rank) { return "shard-" + std::to_string(rank) + ".gnnbed"; }

void copy_text(const std::string& text, char* field, std::size_t field_bytes, const char* what) {
  if (text.size() >= field_bytes) {
    throw Error(std::string(what) + " '" + text + "' is longer than the shard format's " +
                std::to_string(field_bytes - 1) + " bytes");
  }
  std::memcpy(field, text.data(), text.size());
}

std::vector<std::int32_t> owners_of(const NodePartition& partition) {
  std::vector<std::int32_t> owners(static_cast<std::size_t>(partition.num_nodes()));
  for (std::size_t v = 0; v < owners.size(); ++v)
    owners[v] = partition.owner(static_cast<NodeId>(v));
  return owners;
}

ShardManifest::Entry write_shard_file(const RankShard& shard, const ShardLayout& layout,
                                      std::span<const std::int32_t> generator_labels,
                                      const std::filesystem::path& path) {
  Header header{};
  header.preamble = make_preamble(kMagic, kFormatVersion);
  header.num_nodes = shard.num_nodes();
  header.num_edges = shard.structure.num_edges();
  header.total_edges = shard.num_edges;
  header.num_owned = shard.num_owned;
  header.num_train = static_cast<std::int64_t>(shard.split.train.size());
  header.num_val = static_cast<std::int64_t>(shard.split.val.size());
  header.num_test = static_cast<std::int64_t>(shard.split.test.size());
  header.shard = shard.rank;
  header.num_shards = shard.partition.num_parts();
  header.num_classes = shard.num_classes;
  header.flags = (shard.labels.empty() ? 0 : kHasLabels) |
                 (shard.placement.structure_partitioned ? kStructurePartitioned : 0) |
                 (shard.placement.features.owned_rows_only ? 0 : kFeatureColumns) |
                 (shard.partition.is_hashed() ? 0 : kExplicitOwners);
  header.feature_dim = shard.feature_dim;
  header.column_begin = shard.placement.features.column_begin;
  header.column_end = shard.placement.features.column_end;
  header.partition_seed = layout.partition_seed;
  copy_text(layout.partitioner, header.partitioner, kPartitionerBytes, "partitioner");
  copy_text(shard.name, header.name, kNameBytes, "dataset name");

  const std::vector<std::int32_t> owners =
      shard.partition.is_hashed() ? std::vector<std::int32_t>{} : owners_of(shard.partition);
  std::vector<std::int64_t> split_counts;
  for (const SplitCounts& counts : shard.split_counts) {
    split_counts.insert(split_counts.end(), {counts.train, counts.val, counts.test});
  }
  std::span<const std::byte> payload[kCount] = {
      section_bytes(std::span<const std::int32_t>(owners)),
      section_bytes(shard.structure.offsets()),
      section_bytes(shard.structure.sources()),
      section_bytes(shard.labels.span()),
      section_bytes(std::span<const NodeId>(shard.split.train)),
      section_bytes(std::span<const NodeId>(shard.split.val)),
      section_bytes(std::span<const NodeId>(shard.split.test)),
      section_bytes(std::span<const std::int64_t>(split_counts)),
      section_bytes(shard.stored_features.span()),
      {},
      section_bytes(shard.feature_row_entries.span())};
  if (shard.generated_features) {
    header.feature_kind = static_cast<std::uint32_t>(FeatureKind::generated);
    header.feature_seed = shard.generated_features->seed();
    header.feature_signal = shard.generated_features->signal();
    if (!shard.placement.features.owned_rows_only)
      payload[kFeatureLabels] = section_bytes(generator_labels);
  } else if (shard.sparse_features) {
    header.feature_kind = static_cast<std::uint32_t>(FeatureKind::sparse);
    header.feature_seed = static_cast<std::uint64_t>(shard.sparse_features->nonzeros());
  } else if (shard.has_features()) {
    header.feature_kind = static_cast<std::uint32_t>(FeatureKind::stored);
  }
  SectionPayload payloads[kCount];
  for (std::size_t s = 0; s < kCount; ++s) payloads[s] = SectionPayload::of(payload[s]);
  if (shard.sparse_features) payloads[kFeatures] = sparse_features_payload(*shard.sparse_features);
  header.preamble.file_bytes = lay_out_sections(payloads, header.sections);
  HeaderBlock block{};
  std::memcpy(block.data(), &header, sizeof header);
  write_sectioned_file(path, block, header.sections, payloads, header.preamble.file_bytes);
  return {path.filename().string(),
          header.preamble.file_bytes,
          shard_header_checksum(block),
          header.num_owned,
          header.num_edges,
          {header.num_train, header.num_val, header.num_test}};
}

// Checks and views one shard file. Every failure is an InputError naming the file and the field.
class ShardReader {
 public:
  ShardReader(const ShardManifest& manifest, int rank)
      : manifest_(manifest),
        rank_(rank),
        file_(MappedFile::open(manifest.directory /
                               manifest.shards[static_cast<std::size_t>(rank)].file)),
        origin_(file_->file()) {}

  RankShard read() {
    check_header();
    check_counts();
    check_sections();
    return check_contents();
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw InputError(origin_, 0, field, problem);
  }

  const ShardManifest::Entry& entry() const {
    return manifest_.shards[static_cast<std::size_t>(rank_)];
  }

  // The header against the manifest: this rank's shard, of this conversion.
  void check_header() {
    check_preamble(*file_, sizeof(Header), kMagic, kFormatVersion, "a gnnbed workload shard");
    std::memcpy(&header_, file_->data(), sizeof header_);
    if (header_.shard != rank_) {
      fail("shard", "the file holds shard " + std::to_string(header_.shard) +
                        " but the manifest lists it as shard " + std::to_string(rank_) +
                        " (files renamed or swapped?)");
    }
    if (file_->size_bytes() != entry().file_bytes) {
      fail("file_bytes",
           "the manifest lists " + std::to_string(entry().file_bytes) + " bytes but the file has " +
               std::to_string(file_->size_bytes()) +
               (file_->size_bytes() < entry().file_bytes ? " (truncated?)"
                                                         : " (from another conversion?)"));
    }
    if (file_->size_bytes() < kFileHeaderBytes) {
      fail("header", "the file has " + std::to_string(file_->size_bytes()) +
                         " bytes, fewer than the 4096-byte header (truncated?)");
    }
    const std::uint64_t checksum = shard_header_checksum({file_->data(), kFileHeaderBytes});
    if (checksum != entry().header_checksum) {
      fail("header",
           "its checksum differs from the manifest's header_fnv1a64 (a shard of "
           "another conversion, or a changed file)");
    }
    if (std::memchr(header_.name, 0, kNameBytes) == nullptr) fail("name", "is not NUL-terminated");
    if (std::memchr(header_.partitioner, 0, kPartitionerBytes) == nullptr) {
      fail("partitioner", "is not NUL-terminated");
    }
    const nlohmann::json& dataset = manifest_.dataset;
    const ShardLayout& layout = manifest_.layout;
    auto agree = [&](const char* field, bool same, const std::string& file_value,
                     const std::string& manifest_value) {
      if (!same) {
        fail(field, file_value + " in the file, " + manifest_value + " in the manifest");
      }
    };
    agree("name", dataset.at("name") == std::string(header_.name), header_.name,
          dataset.at("name").dump());
    agree("num_nodes", dataset.at("num_nodes") == header_.num_nodes,
          std::to_string(header_.num_nodes), dataset.at("num_nodes").dump());
    agree("total_edges", dataset.at("num_edges") == header_.total_edges,
          std::to_string(header_.total_edges), dataset.at("num_edges").dump());
    agree("feature_dim", dataset.at("feature_dim") == header_.feature_dim,
          std::to_string(header_.feature_dim), dataset.at("feature_dim").dump());
    agree("num_classes", dataset.at("num_classes") == header_.num_classes,
          std::to_string(header_.num_classes), dataset.at("num_classes").dump());
    agree("num_shards", header_.num_shards == layout.num_shards, std::to_string(header_.num_shards),
          std::to_string(layout.num_shards));
    agree("partitioner", layout.partitioner == header_.partitioner, header_.partitioner,
          layout.partitioner);
    agree("partition_seed", header_.partition_seed == layout.partition_seed,
          std::to_string(header_.partition_seed), std::to_string(layout.partition_seed));
    const bool partitioned = (header_.flags & kStructurePartitioned) != 0;
    agree("flags", partitioned == (layout.structure == "partitioned"),
          partitioned ? "partitioned structure" : "replicated structure",
          "structure " + layout.structure);
    const bool columns = (header_.flags & kFeatureColumns) != 0;
    agree("flags", columns == (layout.features == "columns"),
          columns ? "feature columns" : "feature rows", "features " + layout.features);
    agree("num_owned", header_.num_owned == entry().num_owned, std::to_string(header_.num_owned),
          std::to_string(entry().num_owned));
    agree("num_edges", header_.num_edges == entry().num_edges, std::to_string(header_.num_edges),
          std::to_string(entry().num_edges));
    const SplitCounts split{header_.num_train, header_.num_val, header_.num_test};
    agree("num_train", split == entry().split,
          std::to_string(split.train) + "/" + std::to_string(split.val) + "/" +
              std::to_string(split.test) + " train/val/test nodes",
          std::to_string(entry().split.train) + "/" + std::to_string(entry().split.val) + "/" +
              std::to_string(entry().split.test));
    const bool explicit_owners = (header_.flags & kExplicitOwners) != 0;
    agree("flags", explicit_owners == (layout.partitioner != "hash"),
          explicit_owners ? "explicit owners" : "hashed owners",
          "partitioner " + layout.partitioner);
  }

  void check_counts() {
    const std::int64_t n = header_.num_nodes;
    if (n < 0 || n > std::numeric_limits<NodeId>::max()) {
      fail("num_nodes", std::to_string(n) + " is outside [0, 2^31 - 1]");
    }
    if (header_.num_shards < 1 || header_.num_shards > std::max<std::int64_t>(1, n)) {
      fail("num_shards", std::to_string(header_.num_shards) + " is outside [1, num_nodes]");
    }
    constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max() / 8;
    for (const auto& [field, count] :
         {std::pair<const char*, std::int64_t>{"num_edges", header_.num_edges},
          {"total_edges", header_.total_edges}}) {
      if (count < 0 || count > kMaxCount) {
        fail(field, std::to_string(count) + " is not a valid edge count");
      }
    }
    if (header_.num_owned < 0 || header_.num_owned > n) {
      fail("num_owned", std::to_string(header_.num_owned) +
                            " is outside [0, num_nodes = " + std::to_string(n) + "]");
    }
    for (const auto& [field, count] :
         {std::pair<const char*, std::int64_t>{"num_train", header_.num_train},
          {"num_val", header_.num_val},
          {"num_test", header_.num_test}}) {
      if (count < 0 || count > header_.num_owned) {
        fail(field, std::to_string(count) +
                        " is outside [0, num_owned = " + std::to_string(header_.num_owned) + "]");
      }
    }
    if (header_.num_classes < 0 || header_.num_classes > std::max<std::int64_t>(n, 1)) {
      fail("num_classes", std::to_string(header_.num_classes) + " is outside [0, num_nodes = " +
                              std::to_string(n) + "]: every class needs a node");
    }
    if ((header_.flags & ~kKnownFlags) != 0) {
      fail("flags", "unknown bits set (" + std::to_string(header_.flags) + ")");
    }
    const bool partitioned = (header_.flags & kStructurePartitioned) != 0;
    if (!partitioned && header_.num_edges != header_.total_edges) {
      fail("num_edges", std::to_string(header_.num_edges) +
                            " CSR entries, but a shard with replicated structure holds all " +
                            std::to_string(header_.total_edges));
    }
    if (header_.feature_kind > static_cast<std::uint32_t>(FeatureKind::sparse)) {
      fail("feature_kind", std::to_string(header_.feature_kind) + " is not 0, 1, 2 or 3");
    }
    kind_ = static_cast<FeatureKind>(header_.feature_kind);
    if (kind_ == FeatureKind::generated && !std::isfinite(header_.feature_signal)) {
      fail("feature_signal", "is not finite");
    }
    if (kind_ == FeatureKind::none ? header_.feature_dim != 0 : header_.feature_dim <= 0) {
      fail("feature_dim", std::to_string(header_.feature_dim) + " does not suit feature kind " +
                              std::to_string(header_.feature_kind));
    }
    if (kind_ == FeatureKind::generated && (header_.flags & kHasLabels) == 0) {
      fail("feature_kind", "generated features need labels, but the file has none");
    }
    if (kind_ == FeatureKind::generated) {
      require_memory_for_generated_features(header_.num_classes, header_.feature_dim, origin_);
    }
    const ShardLayout& layout = manifest_.layout;
    const ShardPlacement expected = shard_placement(layout, header_.feature_dim, rank_);
    if (header_.column_begin != expected.features.column_begin ||
        header_.column_end != expected.features.column_end) {
      fail("column_begin", "columns [" + std::to_string(header_.column_begin) + ", " +
                               std::to_string(header_.column_end) + "), but feature layout " +
                               layout.features + " gives shard " + std::to_string(rank_) +
                               " columns [" + std::to_string(expected.features.column_begin) +
                               ", " + std::to_string(expected.features.column_end) + ")");
    }
    placement_ = expected;
    if (kind_ == FeatureKind::sparse) check_sparse_count();
  }

  // Sparse features keep their entries' count in feature_seed: at most every placed cell.
  void check_sparse_count() {
    const bool columns = (header_.flags & kFeatureColumns) != 0;
    const auto rows = static_cast<std::uint64_t>(columns ? header_.num_nodes : header_.num_owned);
    const auto width = static_cast<std::uint64_t>(header_.column_end - header_.column_begin);
    if (width > 0 && header_.feature_seed / width > rows) {
      fail("feature_seed", "sparse features' " + std::to_string(header_.feature_seed) +
                               " entries exceed the " + std::to_string(rows) + " x " +
                               std::to_string(width) + " placed cells");
    }
    if (width == 0 && header_.feature_seed != 0) {
      fail("feature_seed", "sparse entries in a shard that holds no feature columns");
    }
  }

  void check_sections() {
    const auto n = static_cast<std::uint64_t>(header_.num_nodes);
    const auto owned = static_cast<std::uint64_t>(header_.num_owned);
    const bool has_labels = (header_.flags & kHasLabels) != 0;
    const bool columns = (header_.flags & kFeatureColumns) != 0;
    const auto width = static_cast<std::uint64_t>(header_.column_end - header_.column_begin);
    const std::uint64_t feature_rows = columns ? n : owned;
    const std::uint64_t expected[kCount] = {
        (header_.flags & kExplicitOwners) != 0 ? n * sizeof(std::int32_t) : 0,
        (n + 1) * sizeof(EdgeIndex),
        static_cast<std::uint64_t>(header_.num_edges) * sizeof(NodeId),
        has_labels ? owned * sizeof(std::int32_t) : 0,
        static_cast<std::uint64_t>(header_.num_train) * sizeof(NodeId),
        static_cast<std::uint64_t>(header_.num_val) * sizeof(NodeId),
        static_cast<std::uint64_t>(header_.num_test) * sizeof(NodeId),
        static_cast<std::uint64_t>(header_.num_shards) * 3 * sizeof(std::int64_t),
        kind_ == FeatureKind::stored   ? feature_rows * width * sizeof(float)
        : kind_ == FeatureKind::sparse ? sparse_section_bytes(feature_rows, header_.feature_seed)
                                       : 0,
        kind_ == FeatureKind::generated && columns ? n * sizeof(std::int32_t) : 0,
        kind_ == FeatureKind::sparse ? n * sizeof(std::int32_t) : 0};
    const char* implied_by[kCount] = {"explicit owners x num_nodes",
                                      "num_nodes + 1",
                                      "num_edges",
                                      "num_owned",
                                      "num_train",
                                      "num_val",
                                      "num_test",
                                      "num_shards x 3",
                                      columns ? "num_nodes x columns" : "num_owned x feature_dim",
                                      "generated features in columns x num_nodes",
                                      "sparse features x num_nodes"};
    ExpectedSection sections[kCount];
    for (std::size_t s = 0; s < kCount; ++s) {
      sections[s] = {kSectionNames[s], expected[s], implied_by[s]};
    }
    check_section_table(*file_, header_.sections, sections, header_.preamble.file_bytes);
    for (const Section s : {kOwners, kOffsets, kSources, kLabels, kFeatureLabels}) {
      file_->prefetch(header_.sections[s].offset_bytes, header_.sections[s].length_bytes);
    }
  }

  template <typename T>
  SharedArray<T> view(Section s) const {
    return view_section<T>(file_, header_.sections[s]);
  }

  NodePartition check_owners() const {
    const std::int64_t n = header_.num_nodes;
    if ((header_.flags & kExplicitOwners) == 0) {
      return NodePartition::hashed(n, header_.num_shards, header_.partition_seed);
    }
    const auto owners = view<std::int32_t>(kOwners);
    for (std::size_t v = 0; v < owners.size(); ++v) {
      if (owners[v] < 0 || owners[v] >= header_.num_shards) {
        fail("owners", "node " + std::to_string(v) + " has owner " + std::to_string(owners[v]) +
                           " outside [0, " + std::to_string(header_.num_shards) + ")");
      }
    }
    return NodePartition::explicit_owners(header_.num_shards,
                                          std::vector<std::int32_t>(owners.begin(), owners.end()));
  }

  RankShard check_contents() {
    RankShard shard;
    shard.name = header_.name;
    shard.rank = rank_;
    shard.num_classes = header_.num_classes;
    shard.feature_dim = header_.feature_dim;
    shard.num_edges = header_.total_edges;
    shard.placement = placement_;
    shard.num_owned = header_.num_owned;
    shard.partition = check_owners();
    const auto n = static_cast<std::size_t>(header_.num_nodes);
    // position[v]: v's place among the owned nodes (increasing id order), -1 for others.
    std::vector<std::int32_t> position(n, -1);
    std::int32_t owned = 0;
    for (std::size_t v = 0; v < n; ++v) {
      if (shard.partition.owner(static_cast<NodeId>(v)) == rank_) position[v] = owned++;
    }
    if (owned != header_.num_owned) {
      fail("num_owned", std::to_string(header_.num_owned) + ", but the partition gives shard " +
                            std::to_string(rank_) + " " + std::to_string(owned) + " nodes");
    }

    shard.structure = Graph(view<EdgeIndex>(kOffsets), view<NodeId>(kSources), origin_);
    if (shard.placement.structure_partitioned) {
      for (std::size_t v = 0; v < n; ++v) {
        if (position[v] < 0 && shard.structure.in_degree(static_cast<NodeId>(v)) != 0) {
          fail("offsets", "node " + std::to_string(v) + " belongs to shard " +
                              std::to_string(shard.partition.owner(static_cast<NodeId>(v))) +
                              " but has in-edges here (partitioned structure keeps the owned "
                              "nodes' in-edges only)");
        }
      }
    }
    if ((header_.flags & kHasLabels) != 0) {
      shard.labels = view<std::int32_t>(kLabels);
      check_labels(shard.labels.span(), "labels");
    }
    check_split(shard, position);
    check_split_counts(shard);
    if (kind_ == FeatureKind::stored) {
      shard.stored_features = view<float>(kFeatures);
      const std::string bad = non_finite_feature(shard.stored_features.span(), header_.feature_dim);
      if (!bad.empty()) fail("features", bad);
    }
    if (kind_ == FeatureKind::generated) shard.generated_features = generator(shard, position);
    if (kind_ == FeatureKind::sparse) check_sparse_features(shard);
    return shard;
  }

  // The placed rows as sparse rows, and every node's entries: in [0, feature_dim], and with
  // feature rows equal to each owned row's (a column slice holds at most a node's entries).
  void check_sparse_features(RankShard& shard) const {
    const bool columns = (header_.flags & kFeatureColumns) != 0;
    const std::int64_t rows = columns ? header_.num_nodes : header_.num_owned;
    shard.sparse_features = view_sparse_features(
        file_, header_.sections[kFeatures], rows,
        static_cast<int>(header_.column_end - header_.column_begin), header_.feature_seed);
    shard.feature_row_entries = view<std::int32_t>(kFeatureEntries);
    const std::span<const std::int32_t> entries = shard.feature_row_entries.span();
    const std::span<const std::int64_t> offsets = shard.sparse_features->offsets();
    const std::vector<NodeId> held =
        columns ? std::vector<NodeId>{} : shard.partition.nodes_of(rank_);
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto row = static_cast<std::size_t>(r);
      const auto v = static_cast<std::size_t>(columns ? r : held[row]);
      const std::int64_t placed = offsets[row + 1] - offsets[row];
      if (columns ? placed > entries[v] : placed != entries[v]) {
        fail("feature_entries", "node " + std::to_string(v) + " has " + std::to_string(entries[v]) +
                                    " entries, its placed row " + std::to_string(placed));
      }
    }
    for (std::size_t v = 0; v < entries.size(); ++v) {
      if (entries[v] < 0 || entries[v] > header_.feature_dim) {
        fail("feature_entries", "node " + std::to_string(v) + " has " + std::to_string(entries[v]) +
                                    " entries, outside [0, " + std::to_string(header_.feature_dim) +
                                    "]");
      }
    }
  }

  void check_labels(std::span<const std::int32_t> labels, const std::string& field) const {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] < -1 || labels[i] >= header_.num_classes) {
        fail(field, "entry " + std::to_string(i) + " has label " + std::to_string(labels[i]) +
                        " outside [-1, " + std::to_string(header_.num_classes) + ")");
      }
    }
  }

  void check_split(RankShard& shard, const std::vector<std::int32_t>& position) const {
    const auto n = static_cast<std::int64_t>(position.size());
    std::vector<char> seen(position.size(), 0);
    const std::pair<Section, std::vector<NodeId>*> parts[] = {
        {kTrain, &shard.split.train}, {kVal, &shard.split.val}, {kTest, &shard.split.test}};
    for (const auto& [section, ids] : parts) {
      const std::string field = kSectionNames[section];
      for (const NodeId v : view<NodeId>(section)) {
        if (v < 0 || v >= n) {
          fail(field, "node id " + std::to_string(v) + " outside [0, " + std::to_string(n) + ")");
        }
        const auto index = static_cast<std::size_t>(v);
        if (position[index] < 0) {
          fail(field, "node " + std::to_string(v) + " belongs to shard " +
                          std::to_string(shard.partition.owner(v)) + ", not to this one");
        }
        if (seen[index] != 0) fail(field, "node " + std::to_string(v) + " is listed twice");
        seen[index] = 1;
        if (shard.labels.empty() || shard.labels[static_cast<std::size_t>(position[index])] < 0) {
          fail(field, "node " + std::to_string(v) + " has no label");
        }
        ids->push_back(v);
      }
    }
  }

  void check_split_counts(RankShard& shard) const {
    const auto counts = view<std::int64_t>(kSplitCounts);
    SplitCounts total;
    for (std::size_t r = 0; r < counts.size() / 3; ++r) {
      const SplitCounts entry{counts[3 * r], counts[3 * r + 1], counts[3 * r + 2]};
      // Each count within [0, num_nodes] also keeps their sums from overflowing.
      for (const std::int64_t count : {entry.train, entry.val, entry.test}) {
        if (count < 0 || count > header_.num_nodes) {
          fail("split_counts",
               "shard " + std::to_string(r) + " has a count of " + std::to_string(count) +
                   ", outside [0, num_nodes = " + std::to_string(header_.num_nodes) + "]");
        }
      }
      total.train += entry.train;
      total.val += entry.val;
      total.test += entry.test;
      shard.split_counts.push_back(entry);
    }
    const SplitCounts mine{header_.num_train, header_.num_val, header_.num_test};
    if (shard.split_counts[static_cast<std::size_t>(rank_)] != mine) {
      fail("split_counts", "the entry of shard " + std::to_string(rank_) +
                               " disagrees with num_train, num_val and num_test");
    }
    const nlohmann::json& dataset = manifest_.dataset;
    if (dataset.at("num_train") != total.train || dataset.at("num_val") != total.val ||
        dataset.at("num_test") != total.test) {
      fail("split_counts", "sum to " + std::to_string(total.train) + "/" +
                               std::to_string(total.val) + "/" + std::to_string(total.test) +
                               " train/val/test nodes, the manifest's dataset has " +
                               dataset.at("num_train").dump() + "/" + dataset.at("num_val").dump() +
                               "/" + dataset.at("num_test").dump());
    }
  }

  // The generator reads the label of every node whose features it computes: every node's for a
  // column slice (stored in the file), the owned nodes' for owned rows (the others stay -1 and
  // are never read).
  std::shared_ptr<const GeneratedFeatures> generator(
      const RankShard& shard, const std::vector<std::int32_t>& position) const {
    SharedArray<std::int32_t> labels;
    if (!shard.placement.features.owned_rows_only) {
      labels = view<std::int32_t>(kFeatureLabels);
      check_labels(labels.span(), "feature_labels");
      for (std::size_t v = 0; v < position.size(); ++v) {
        if (position[v] >= 0 && labels[v] != shard.labels[static_cast<std::size_t>(position[v])]) {
          fail("feature_labels",
               "node " + std::to_string(v) + " has label " + std::to_string(labels[v]) +
                   ", the labels section says " +
                   std::to_string(shard.labels[static_cast<std::size_t>(position[v])]));
        }
      }
    } else {
      std::vector<std::int32_t> scattered(position.size(), -1);
      for (std::size_t v = 0; v < position.size(); ++v) {
        if (position[v] >= 0) scattered[v] = shard.labels[static_cast<std::size_t>(position[v])];
      }
      labels = SharedArray(std::move(scattered));
    }
    return std::make_shared<const GeneratedFeatures>(header_.feature_dim, std::move(labels),
                                                     header_.feature_signal, header_.feature_seed);
  }

  const ShardManifest& manifest_;
  int rank_;
  std::shared_ptr<const MappedFile> file_;
  std::string origin_;
  Header header_{};
  FeatureKind kind_ = FeatureKind::none;
  ShardPlacement placement_;
};

}  // namespace

ShardManifest write_shards(const Dataset& dataset, const ShardLayout& layout,
                           const std::filesystem::path& directory) {
  require_little_endian_host();
  dataset.validate("dataset '" + dataset.name + "'");
  require(
      layout.num_shards >= 1 && layout.num_shards <= std::max<std::int64_t>(1, dataset.num_nodes()),
      "shards",
      std::to_string(layout.num_shards) + " shards for " + std::to_string(dataset.num_nodes()) +
          " nodes: every shard must own a node");
  const auto generated = std::dynamic_pointer_cast<const GeneratedFeatures>(dataset.features);
  if (generated) check_generated_labels(dataset, *generated);
  std::vector<ShardPlacement> placements;
  for (int r = 0; r < layout.num_shards; ++r) {
    placements.push_back(shard_placement(layout, dataset.feature_dim(), r));
  }
  const NodePartition partition =
      make_partitioner(layout.partitioner)
          ->partition(dataset.graph, layout.num_shards, layout.partition_seed);
  ShardManifest manifest;
  manifest.directory = directory;
  manifest.dataset = dataset.summary();
  manifest.layout = layout;
  for (int r = 0; r < layout.num_shards; ++r) {
    const RankShard shard =
        cut_shard(dataset, partition, r, placements[static_cast<std::size_t>(r)]);
    manifest.shards.push_back(
        write_shard_file(shard, layout, dataset.labels.span(), directory / shard_file_name(r)));
  }
  write_text_file_atomically(directory / "manifest.json", manifest.to_json().dump(2) + "\n");
  return manifest;
}

RankShard load_shard(const ShardManifest& manifest, int rank) {
  require_little_endian_host();
  if (rank < 0 || rank >= static_cast<int>(manifest.shards.size())) {
    throw ConfigError("ranks", "rank " + std::to_string(rank) + " has no shard: " +
                                   (manifest.directory / "manifest.json").string() + " lists " +
                                   std::to_string(manifest.shards.size()));
  }
  return ShardReader(manifest, rank).read();
}

}  // namespace gnnbed
