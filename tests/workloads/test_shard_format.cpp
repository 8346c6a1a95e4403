// The sharded workload format: every shard holds exactly its rank's part of the whole dataset
// (owners, structure rows, labels, split, feature rows or column slice), byte for byte, for both
// structure modes, both feature layouts and both partitioners, and equal to cut_shard (what a
// rank's LocalStore of the whole dataset is built from); stored features are mapped, not copied;
// bad and mismatched shard sets are rejected naming the file and the field.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <numeric>

#include "tests/support/bundled_workload.hpp"
#include "tests/support/expect_input_error.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/section_file.hpp"
#include "workloads/shard_format.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

using testing::expect_input_error;
using testing::TemporaryDirectory;

const Dataset& cora() { return testing::bundled_workload("cora"); }

// Generated features, which a shard keeps as parameters (plus, for a column slice, every node's
// label, the generator's input).
const Dataset& csbm() {
  static const Dataset dataset = testing::csbm_workload(600, 4, 12);
  return dataset;
}

template <typename T>
std::vector<T> to_vector(std::span<const T> values) {
  return {values.begin(), values.end()};
}

std::vector<NodeId> in_neighbors(const Graph& graph, NodeId v) {
  const auto span = graph.in_neighbors(v);
  return {span.begin(), span.end()};
}

std::vector<float> gather(const FeatureStore& features, std::span<const NodeId> nodes,
                          std::int64_t begin, std::int64_t end) {
  std::vector<float> values(nodes.size() * static_cast<std::size_t>(end - begin));
  features.gather(nodes, static_cast<int>(begin), static_cast<int>(end), values.data());
  return values;
}

bool page_aligned(const void* data) { return reinterpret_cast<std::uintptr_t>(data) % 4096 == 0; }

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

struct RoundTripCase {
  std::string dataset;
  ShardLayout layout;
};

class ShardRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(ShardRoundTrip, EveryShardHoldsExactlyItsRanksPart) {
  const Dataset& dataset = GetParam().dataset == "cora" ? cora() : csbm();
  const ShardLayout& layout = GetParam().layout;
  const int num_shards = layout.num_shards;
  const TemporaryDirectory dir;
  const ShardManifest written = write_shards(dataset, layout, dir.path() / "set");
  const ShardManifest manifest = read_shard_manifest(dir.path() / "set");
  EXPECT_EQ(manifest.layout, layout);
  EXPECT_EQ(manifest.dataset, dataset.summary());
  EXPECT_EQ(manifest.to_json(), written.to_json());
  ASSERT_EQ(manifest.shards.size(), static_cast<std::size_t>(num_shards));

  const NodePartition partition = make_partitioner(layout.partitioner)
                                      ->partition(dataset.graph, num_shards, layout.partition_seed);
  const bool partitioned = layout.structure == "partitioned";
  std::int64_t owned_total = 0;
  for (int r = 0; r < num_shards; ++r) {
    SCOPED_TRACE("shard " + std::to_string(r));
    const RankShard shard = load_shard(manifest, r);
    EXPECT_EQ(std::filesystem::file_size(dir.path() / "set" / manifest.shards[r].file),
              manifest.shards[r].file_bytes);
    EXPECT_EQ(shard.name, dataset.name);
    EXPECT_EQ(shard.num_classes, dataset.num_classes);
    EXPECT_EQ(shard.num_edges, dataset.graph.num_edges());
    ASSERT_EQ(shard.num_nodes(), dataset.num_nodes());
    EXPECT_EQ(shard.partition.is_hashed(), layout.partitioner == "hash");
    const std::vector<NodeId> owned = partition.nodes_of(r);
    EXPECT_EQ(shard.partition.nodes_of(r), owned);
    EXPECT_EQ(shard.num_owned, static_cast<std::int64_t>(owned.size()));
    EXPECT_EQ(manifest.shards[r].num_owned, shard.num_owned);
    owned_total += shard.num_owned;

    // Structure: every node's in-edges, or exactly the owned nodes'.
    for (NodeId v = 0; v < dataset.num_nodes(); ++v) {
      const bool held = !partitioned || partition.owner(v) == r;
      ASSERT_EQ(in_neighbors(shard.structure, v),
                held ? in_neighbors(dataset.graph, v) : std::vector<NodeId>{})
          << "node " << v;
    }
    // Labels and split of the owned nodes; every shard's split counts.
    std::vector<std::int32_t> labels;
    for (const NodeId v : owned) labels.push_back(dataset.labels[static_cast<std::size_t>(v)]);
    EXPECT_EQ(to_vector(shard.labels.span()), labels);
    auto owned_part = [&](const std::vector<NodeId>& part, int rank) {
      std::vector<NodeId> mine;
      for (const NodeId v : part) {
        if (partition.owner(v) == rank) mine.push_back(v);
      }
      return mine;
    };
    EXPECT_EQ(shard.split.train, owned_part(dataset.split.train, r));
    EXPECT_EQ(shard.split.val, owned_part(dataset.split.val, r));
    EXPECT_EQ(shard.split.test, owned_part(dataset.split.test, r));
    ASSERT_EQ(shard.split_counts.size(), static_cast<std::size_t>(num_shards));
    for (int q = 0; q < num_shards; ++q) {
      const SplitCounts expected{
          static_cast<std::int64_t>(owned_part(dataset.split.train, q).size()),
          static_cast<std::int64_t>(owned_part(dataset.split.val, q).size()),
          static_cast<std::int64_t>(owned_part(dataset.split.test, q).size())};
      EXPECT_EQ(shard.split_counts[static_cast<std::size_t>(q)], expected) << "of shard " << q;
    }

    // Features: the owned rows, or every node's slice of the columns as P3 splits them.
    const FeaturePlacement& placement = shard.placement.features;
    const int dim = dataset.feature_dim();
    const bool rows = layout.features == "rows";
    EXPECT_EQ(placement.owned_rows_only, rows);
    EXPECT_EQ(placement.column_begin, rows ? 0 : FeatureColumnSplit(dim, num_shards).begin(r));
    EXPECT_EQ(placement.column_end, rows ? dim : FeatureColumnSplit(dim, num_shards).end(r));
    std::vector<NodeId> held = owned;
    if (!rows) {
      held.resize(static_cast<std::size_t>(dataset.num_nodes()));
      std::iota(held.begin(), held.end(), NodeId{0});
    }
    const std::vector<float> expected =
        gather(*dataset.features, held, placement.column_begin, placement.column_end);
    if (shard.generated_features) {
      EXPECT_EQ(
          gather(*shard.generated_features, held, placement.column_begin, placement.column_end),
          expected);
      EXPECT_TRUE(shard.stored_features.empty());
    } else if (shard.sparse_features) {
      // The placed part as sparse rows (Cora's bag of words), column 0 being column_begin.
      std::vector<NodeId> placed_rows(held.size());
      std::iota(placed_rows.begin(), placed_rows.end(), NodeId{0});
      EXPECT_EQ(gather(*shard.sparse_features, placed_rows, 0,
                       static_cast<int>(placement.column_end - placement.column_begin)),
                expected);
      EXPECT_TRUE(shard.stored_features.empty());
      const auto& whole = dynamic_cast<const SparseFeatures&>(*dataset.features);
      ASSERT_EQ(shard.feature_row_entries.size(), static_cast<std::size_t>(dataset.num_nodes()));
      for (std::size_t v = 0; v < shard.feature_row_entries.size(); ++v) {
        ASSERT_EQ(shard.feature_row_entries[v], whole.offsets()[v + 1] - whole.offsets()[v]);
      }
    } else {
      ASSERT_EQ(shard.stored_features.size(), expected.size());
      EXPECT_EQ(std::memcmp(shard.stored_features.data(), expected.data(),
                            expected.size() * sizeof(float)),
                0);
      EXPECT_TRUE(page_aligned(shard.stored_features.data())) << "mapped, not copied";
    }

    // What a LocalStore of the whole dataset is built from.
    const RankShard cut = cut_shard(dataset, partition, r, shard.placement);
    EXPECT_EQ(to_vector(shard.structure.offsets()), to_vector(cut.structure.offsets()));
    EXPECT_EQ(to_vector(shard.structure.sources()), to_vector(cut.structure.sources()));
    EXPECT_EQ(to_vector(shard.labels.span()), to_vector(cut.labels.span()));
    EXPECT_EQ(to_vector(shard.stored_features.span()), to_vector(cut.stored_features.span()));
    if (cut.sparse_features) {
      ASSERT_TRUE(shard.sparse_features);
      EXPECT_EQ(to_vector(shard.sparse_features->offsets()),
                to_vector(cut.sparse_features->offsets()));
      EXPECT_EQ(to_vector(shard.sparse_features->columns()),
                to_vector(cut.sparse_features->columns()));
      EXPECT_EQ(to_vector(shard.sparse_features->values()),
                to_vector(cut.sparse_features->values()));
    }
    EXPECT_EQ(shard.split_counts, cut.split_counts);
    EXPECT_EQ(shard.placement.structure_partitioned, cut.placement.structure_partitioned);
  }
  EXPECT_EQ(owned_total, dataset.num_nodes());
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ShardRoundTrip,
    ::testing::Values(RoundTripCase{"cora", {1, "hash", 1, "replicated", "rows"}},
                      RoundTripCase{"cora", {2, "hash", 3, "replicated", "rows"}},
                      RoundTripCase{"cora", {3, "metis", 1, "partitioned", "columns"}},
                      RoundTripCase{"cora", {4, "hash", 2, "partitioned", "rows"}},
                      RoundTripCase{"csbm", {2, "metis", 5, "replicated", "columns"}},
                      RoundTripCase{"csbm", {3, "hash", 1, "partitioned", "rows"}},
                      // More shards than the 12 feature columns: the 13th holds none.
                      RoundTripCase{"csbm", {13, "hash", 1, "partitioned", "columns"}}));

TEST(ShardFormat, LayoutsThatDoNotFitAreConfigErrors) {
  const TemporaryDirectory dir;
  auto field_of = [&](const ShardLayout& layout) {
    try {
      write_shards(csbm(), layout, dir.path() / "bad");
    } catch (const ConfigError& error) {
      return error.field();
    }
    return std::string("(none)");
  };
  EXPECT_EQ(field_of({0, "hash", 1, "replicated", "rows"}), "shards");
  EXPECT_EQ(field_of({601, "hash", 1, "replicated", "rows"}), "shards");
  EXPECT_EQ(field_of({2, "spectral", 1, "replicated", "rows"}), "partitioner");
  EXPECT_EQ(field_of({2, "hash", 1, "both", "rows"}), "structure");
  EXPECT_EQ(field_of({2, "hash", 1, "replicated", "diagonal"}), "feature-layout");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "bad" / "manifest.json"));
}

// A written set of two shards (explicit owners, Cora's sparse features) to break.
struct ShardSet {
  TemporaryDirectory dir;
  std::filesystem::path path = dir.path() / "set";
  ShardManifest manifest = write_shards(cora(), {2, "metis", 1, "partitioned", "rows"}, path);

  std::filesystem::path file(int rank) const {
    return path / manifest.shards[static_cast<std::size_t>(rank)].file;
  }
  // The start of section s of shard `rank` (section table at 312 + 16 s, docs/binary_format.md).
  std::uint64_t section_offset(int rank, std::size_t s) const {
    const std::string bytes = read_bytes(file(rank));
    std::uint64_t offset = 0;
    std::memcpy(&offset, bytes.data() + 312 + 16 * s, sizeof offset);
    return offset;
  }
  template <typename T>
  void patch(int rank, std::uint64_t offset, T value) const {
    std::string bytes = read_bytes(file(rank));
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    write_bytes(file(rank), bytes);
  }
  nlohmann::json manifest_json() const { return parse_json_file(path / "manifest.json"); }
  void save_manifest(const nlohmann::json& json) const {
    std::ofstream(path / "manifest.json", std::ios::trunc) << json.dump(2);
  }
  void load(int rank) const { load_shard(read_shard_manifest(path), rank); }
  // Records shard `rank`'s header checksum in the manifest, as a conversion that wrote the
  // patched header would have: its other checks are then what stands between it and a load.
  void sign(int rank) const {
    const std::string bytes = read_bytes(file(rank));
    ShardManifest signed_manifest = manifest;
    signed_manifest.shards[static_cast<std::size_t>(rank)].header_checksum =
        shard_header_checksum(std::as_bytes(std::span(bytes.data(), kFileHeaderBytes)));
    save_manifest(signed_manifest.to_json());
  }
};

constexpr std::size_t kOwners = 0;
constexpr std::size_t kLabels = 3;
constexpr std::size_t kTrain = 4;
constexpr std::size_t kSplitCounts = 7;
constexpr std::size_t kFeatures = 8;
constexpr std::size_t kFeatureEntries = 10;

// Sparse features: the placed rows' CSR (mapped, checked whole) and every node's entries, which
// agree with the owned rows and lie within the feature columns.
TEST(BadShards, SparseRowsAndTheirEntriesAreChecked) {
  const ShardSet set;
  const std::string zero = read_bytes(set.file(0));
  const RankShard shard = load_shard(set.manifest, 0);
  ASSERT_TRUE(shard.sparse_features);
  const NodeId first = shard.partition.nodes_of(0).front();
  const std::int32_t entries = shard.feature_row_entries[static_cast<std::size_t>(first)];
  set.patch<std::int32_t>(0, set.section_offset(0, kFeatureEntries) + 4 * first, entries + 1);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "feature_entries",
                     "node " + std::to_string(first) + " has " + std::to_string(entries + 1) +
                         " entries, its placed row " + std::to_string(entries));
  write_bytes(set.file(0), zero);
  const NodeId foreign = shard.partition.nodes_of(1).front();
  set.patch<std::int32_t>(0, set.section_offset(0, kFeatureEntries) + 4 * foreign, 5000);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "feature_entries",
                     "node " + std::to_string(foreign) + " has 5000 entries, outside [0, 1433]");
  write_bytes(set.file(0), zero);
  // The first entry's column, after the placed rows' offsets.
  const auto rows = static_cast<std::uint64_t>(shard.num_owned);
  set.patch<std::int32_t>(0, set.section_offset(0, kFeatures) + 8 * (rows + 1), 1433);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "features", "outside [0, 1433)");
}

TEST(BadShards, AMissingOrBrokenManifestNamesTheField) {
  ShardSet set;
  const nlohmann::json good = set.manifest_json();
  std::filesystem::remove(set.path / "manifest.json");
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0, "",
                     "not a sharded workload");
  set.save_manifest(good);
  EXPECT_NO_THROW(set.load(1));

  nlohmann::json json = good;
  json["layout"].erase("structure");
  set.save_manifest(json);
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0, "layout.structure",
                     "is missing");
  json = good;
  json["layout"]["num_shards"] = "two";
  set.save_manifest(json);
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0,
                     "layout.num_shards", "is not an integer");
  json = good;
  json["shards"].erase(1);
  set.save_manifest(json);
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0, "shards",
                     "lists 1 shards, layout.num_shards is 2");
  json = good;
  json["shards"][0]["header_fnv1a64"] = "0x12";
  set.save_manifest(json);
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0,
                     "shards[0].header_fnv1a64", "not a 64-bit hexadecimal number");
  json = good;
  json["format"] = "gnnbed-workload";
  set.save_manifest(json);
  expect_input_error([&] { read_shard_manifest(set.path); }, "manifest.json", 0, "format",
                     "is not 'gnnbed-shards'");
}

TEST(BadShards, SwappedTruncatedOrForeignFilesAreRejected) {
  const ShardSet set;
  const std::string zero = read_bytes(set.file(0));
  const std::string one = read_bytes(set.file(1));
  write_bytes(set.file(0), one);
  write_bytes(set.file(1), zero);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "shard",
                     "holds shard 1 but the manifest lists it as shard 0");
  write_bytes(set.file(0), zero);
  write_bytes(set.file(1), one.substr(0, one.size() - 4096));
  expect_input_error(
      [&] { set.load(1); }, "shard-1.gnnbed", 0, "file_bytes",
      "bytes but the file has " + std::to_string(one.size() - 4096) + " (truncated?)");
  write_bytes(set.file(1), one);
  // A header that changed since the manifest was written: a shard of another conversion.
  set.patch<float>(1, 136, 0.5f);
  expect_input_error([&] { set.load(1); }, "shard-1.gnnbed", 0, "header",
                     "checksum differs from the manifest's");
  write_bytes(set.file(1), "GNNBEDW1" + one.substr(8));
  expect_input_error([&] { set.load(1); }, "shard-1.gnnbed", 0, "magic",
                     "not a gnnbed workload shard");
  write_bytes(set.file(1), one);
  EXPECT_NO_THROW(set.load(1));
}

TEST(BadShards, ContentsOutsideTheShardAreRejected) {
  const ShardSet set;
  const std::string zero = read_bytes(set.file(0));
  set.patch<std::int32_t>(0, set.section_offset(0, kOwners) + 4 * 5, 9);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "owners",
                     "node 5 has owner 9 outside [0, 2)");
  write_bytes(set.file(0), zero);
  set.patch<std::int32_t>(0, set.section_offset(0, kLabels), 7);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "labels",
                     "entry 0 has label 7 outside [-1, 7)");
  write_bytes(set.file(0), zero);
  const NodeId foreign = load_shard(set.manifest, 1).split.train.front();
  set.patch<std::int32_t>(0, set.section_offset(0, kTrain), foreign);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "train",
                     "node " + std::to_string(foreign) + " belongs to shard 1, not to this one");
}

// A shard header keeps num_classes at byte 96 (Header in workloads/shard_format.cpp).
TEST(BadShards, AClassCountBeyondTheNodesIsNamedInASignedHeader) {
  const ShardSet set;
  set.patch<std::int32_t>(0, 96, 2'000'000'000);
  set.sign(0);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "num_classes",
                     "2000000000 in the file, 7 in the manifest");
  nlohmann::json manifest = set.manifest_json();
  manifest["dataset"]["num_classes"] = 2'000'000'000;
  set.save_manifest(manifest);
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "num_classes",
                     "2000000000 is outside [0, num_nodes = 2708]");
}

// Split counts near 2^63 would overflow their sum (undefined behaviour, found by fuzzing): each
// is bounded by the node count first.
TEST(BadShards, SplitCountsBeyondTheNodesAreNamedBeforeTheyAreSummed) {
  const ShardSet set;
  set.patch<std::int64_t>(0, set.section_offset(0, kSplitCounts) + 8 * 3,
                          std::int64_t{8'000'000'000'000'000'000});
  expect_input_error([&] { set.load(0); }, "shard-0.gnnbed", 0, "split_counts",
                     "shard 1 has a count of 8000000000000000000, outside [0, num_nodes = 2708]");
}

TEST(BadShards, ASourceThatOnlyRunExperimentReadsSaysSo) {
  WorkloadConfig config;
  config.source = "shards";
  config.path = "somewhere";
  try {
    load_workload(config);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.source");
    EXPECT_NE(std::string(error.what()).find("run_experiment"), std::string::npos);
  }
}

}  // namespace
}  // namespace gnnbed
