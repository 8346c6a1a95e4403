#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/binary_format.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/loaders.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

using testing::bundled_dataset;
using testing::TemporaryDirectory;

template <typename T>
std::vector<T> to_vector(std::span<const T> values) {
  return {values.begin(), values.end()};
}

std::vector<float> all_features(const Dataset& dataset) {
  std::vector<NodeId> nodes(static_cast<std::size_t>(dataset.num_nodes()));
  for (std::size_t v = 0; v < nodes.size(); ++v) nodes[v] = static_cast<NodeId>(v);
  std::vector<float> values(nodes.size() * static_cast<std::size_t>(dataset.feature_dim()));
  dataset.features->gather(nodes, values.data());
  return values;
}

void expect_same(const Dataset& expected, const Dataset& actual) {
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.num_classes, expected.num_classes);
  EXPECT_EQ(to_vector(actual.graph.offsets()), to_vector(expected.graph.offsets()));
  EXPECT_EQ(to_vector(actual.graph.sources()), to_vector(expected.graph.sources()));
  EXPECT_EQ(to_vector(actual.labels.span()), to_vector(expected.labels.span()));
  EXPECT_EQ(actual.split.train, expected.split.train);
  EXPECT_EQ(actual.split.val, expected.split.val);
  EXPECT_EQ(actual.split.test, expected.split.test);
  ASSERT_EQ(actual.features == nullptr, expected.features == nullptr);
  if (expected.features) {
    EXPECT_EQ(actual.features->describe(), expected.features->describe());
    EXPECT_EQ(actual.features->stored_bytes(), expected.features->stored_bytes());
    EXPECT_EQ(all_features(actual), all_features(expected));
  }
}

bool page_aligned(const void* data) { return reinterpret_cast<std::uintptr_t>(data) % 4096 == 0; }

// A random graph with labels (some missing), a seeded split and generated features.
Dataset generated_dataset() {
  constexpr std::int64_t kNodes = 1000;
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (std::uint64_t e = 0; e < 5000; ++e) {
    src.push_back(static_cast<NodeId>(hash_mix(11, e, 0) % kNodes));
    dst.push_back(static_cast<NodeId>(hash_mix(11, e, 1) % kNodes));
  }
  std::vector<std::int32_t> labels(kNodes);
  for (std::size_t v = 0; v < labels.size(); ++v) {
    labels[v] = v % 10 == 3 ? -1 : static_cast<std::int32_t>(hash_mix(5, v) % 5);
  }
  Dataset dataset;
  dataset.name = "generated-1k";
  dataset.graph = build_graph(kNodes, src, dst, {}, "test");
  dataset.labels = SharedArray(std::move(labels));
  dataset.num_classes = 5;
  dataset.features = std::make_shared<const GeneratedFeatures>(16, dataset.labels, 0.75f, 99);
  dataset.split = random_split(dataset.labels.span(), 100, 100, 200, 3);
  return dataset;
}

TEST(BinaryFormat, CoraRoundTripIsExactAndViewsTheMapping) {
  TemporaryDirectory dir;
  const Dataset cora = load_planetoid_tsv(bundled_dataset("cora"));
  const auto path = dir.path() / "cora.gnnbed";
  write_binary_workload(cora, path);
  Graph kept;
  {
    const Dataset loaded = load_binary_workload(path);
    expect_same(cora, loaded);
    // Sections start on page boundaries of the mapping; copies into vectors would not.
    EXPECT_TRUE(page_aligned(loaded.graph.offsets().data()));
    EXPECT_TRUE(page_aligned(loaded.graph.sources().data()));
    EXPECT_TRUE(page_aligned(loaded.labels.data()));
    // Cora's bag-of-words features load sparse and stay sparse, their CSR arrays mapped.
    const auto& sparse = dynamic_cast<const SparseFeatures&>(*loaded.features);
    EXPECT_TRUE(page_aligned(sparse.offsets().data()));
    EXPECT_EQ(sparse.nonzeros(), 49216);
    kept = loaded.graph;
  }
  // The views keep the mapping alive after the dataset is gone.
  EXPECT_EQ(to_vector(kept.sources()), to_vector(cora.graph.sources()));
}

TEST(BinaryFormat, DenseStoredFeaturesRoundTrip) {
  TemporaryDirectory dir;
  Dataset cora = load_planetoid_tsv(bundled_dataset("cora"));
  std::vector<float> values = all_features(cora);
  cora.features = std::make_shared<const StoredFeatures>(cora.num_nodes(), cora.feature_dim(),
                                                         SharedArray(std::move(values)));
  const auto path = dir.path() / "cora-dense.gnnbed";
  write_binary_workload(cora, path);
  const Dataset loaded = load_binary_workload(path);
  expect_same(cora, loaded);
  const auto& stored = dynamic_cast<const StoredFeatures&>(*loaded.features);
  EXPECT_TRUE(page_aligned(stored.values().data()));
}

// A sparse features section whose CSR arrays disagree is refused with the file and the field.
TEST(BinaryFormat, CorruptSparseFeaturesAreRefused) {
  TemporaryDirectory dir;
  const Dataset cora = load_planetoid_tsv(bundled_dataset("cora"));
  const auto path = dir.path() / "cora.gnnbed";
  write_binary_workload(cora, path);
  std::uint64_t features_offset = 0;
  {
    std::ifstream in(path, std::ios::binary);
    in.seekg(232 + 16 * 6);
    in.read(reinterpret_cast<char*>(&features_offset), sizeof features_offset);
  }
  // Row 0's end (row 1's offset) set beyond the last entry.
  const std::int64_t bad_offset = 1'000'000;
  {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(features_offset + 8));
    file.write(reinterpret_cast<const char*>(&bad_offset), sizeof bad_offset);
  }
  try {
    load_binary_workload(path);
    FAIL() << "loaded a corrupt sparse features section";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("cora.gnnbed"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("features"), std::string::npos) << error.what();
  }
}

TEST(BinaryFormat, GeneratedFeaturesRoundTripFromTheirParameters) {
  TemporaryDirectory dir;
  const Dataset dataset = generated_dataset();
  const auto path = dir.path() / "generated.gnnbed";
  write_binary_workload(dataset, path);
  const Dataset loaded = load_binary_workload(path);
  expect_same(dataset, loaded);
  const auto& features = dynamic_cast<const GeneratedFeatures&>(*loaded.features);
  EXPECT_EQ(features.seed(), 99u);
  EXPECT_EQ(features.signal(), 0.75f);
  EXPECT_EQ(features.dim(), 16);
  // Generated features take no room: the file is the header and six sections, each padded to
  // whole 4096-byte blocks.
  auto blocks = [](std::uint64_t bytes) { return (bytes + 4095) / 4096 * 4096; };
  const auto n = static_cast<std::uint64_t>(dataset.num_nodes());
  const auto m = static_cast<std::uint64_t>(dataset.graph.num_edges());
  EXPECT_EQ(std::filesystem::file_size(path), 4096 + blocks(8 * (n + 1)) + blocks(4 * m) +
                                                  blocks(4 * n) + blocks(4 * 100) +
                                                  blocks(4 * 100) + blocks(4 * 200));
}

TEST(BinaryFormat, StructureOnlyRoundTrip) {
  TemporaryDirectory dir;
  Dataset structure;
  structure.name = "edges-only";
  const std::vector<NodeId> src = {0, 1, 2, 5};
  const std::vector<NodeId> dst = {1, 2, 0, 5};
  structure.graph = build_graph(7, src, dst, {}, "test");
  write_binary_workload(structure, dir.path() / "s.gnnbed");
  const Dataset loaded = load_binary_workload(dir.path() / "s.gnnbed");
  expect_same(structure, loaded);
  EXPECT_EQ(loaded.num_nodes(), 7);
  EXPECT_TRUE(loaded.labels.empty());
  EXPECT_EQ(loaded.features, nullptr);
}

template <typename T>
T field_at(const std::string& bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

TEST(BinaryFormat, HeaderFieldsSitAtTheDocumentedOffsets) {
  TemporaryDirectory dir;
  const auto path = dir.path() / "cora.gnnbed";
  write_binary_workload(load_planetoid_tsv(bundled_dataset("cora")), path);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  ASSERT_EQ(bytes.size() % 4096, 0u);
  EXPECT_EQ(bytes.substr(0, 8), "GNNBEDW1");
  EXPECT_EQ(field_at<std::uint32_t>(bytes, 8), 1u);
  EXPECT_EQ(field_at<std::uint32_t>(bytes, 12), 0x01020304u);
  EXPECT_EQ(field_at<std::uint64_t>(bytes, 16), 4096u);
  EXPECT_EQ(field_at<std::uint64_t>(bytes, 24), bytes.size());
  EXPECT_EQ(field_at<std::int64_t>(bytes, 32), 2708);
  EXPECT_EQ(field_at<std::int64_t>(bytes, 40), 10556);
  EXPECT_EQ(field_at<std::int64_t>(bytes, 48), 140);
  EXPECT_EQ(field_at<std::int64_t>(bytes, 56), 500);
  EXPECT_EQ(field_at<std::int64_t>(bytes, 64), 1000);
  EXPECT_EQ(field_at<std::int32_t>(bytes, 72), 7);
  EXPECT_EQ(field_at<std::uint32_t>(bytes, 76), 1u);  // has labels
  EXPECT_EQ(field_at<std::uint32_t>(bytes, 80), 3u);  // sparse features
  EXPECT_EQ(field_at<std::int32_t>(bytes, 84), 1433);
  EXPECT_EQ(field_at<std::uint64_t>(bytes, 88), 49216u);  // their non-zeros
  EXPECT_EQ(std::string(bytes.data() + 104), "cora");
  // Section table at 232: (offset, length) pairs for offsets, sources, labels, train, val, test,
  // features, each starting at the first 4096-byte boundary after the one before.
  const std::uint64_t lengths[] = {2709 * 8, 10556 * 4,           2708 * 4, 140 * 4, 500 * 4,
                                   1000 * 4, 2709 * 8 + 49216 * 8};
  std::uint64_t offset = 4096;
  for (std::size_t s = 0; s < 7; ++s) {
    EXPECT_EQ(field_at<std::uint64_t>(bytes, 232 + 16 * s), offset) << "section " << s;
    EXPECT_EQ(field_at<std::uint64_t>(bytes, 240 + 16 * s), lengths[s]) << "section " << s;
    offset = (offset + lengths[s] + 4095) / 4096 * 4096;
  }
  EXPECT_EQ(offset, bytes.size());
  // The first CSR source of node 0 is its smallest neighbour.
  const std::uint64_t sources_at = field_at<std::uint64_t>(bytes, 232 + 16);
  EXPECT_EQ(field_at<std::int32_t>(bytes, sources_at), 633);
  // The features section: row offsets, then columns (node 0's first two are 19 and 81).
  const std::uint64_t features_at = field_at<std::uint64_t>(bytes, 232 + 16 * 6);
  EXPECT_EQ(field_at<std::int64_t>(bytes, features_at), 0);
  EXPECT_EQ(field_at<std::int64_t>(bytes, features_at + 2708 * 8), 49216);
  EXPECT_EQ(field_at<std::int32_t>(bytes, features_at + 2709 * 8), 19);
  EXPECT_EQ(field_at<std::int32_t>(bytes, features_at + 2709 * 8 + 4), 81);
}

TEST(BinaryFormat, GeneratedFeaturesFromOtherLabelsAreRefused) {
  TemporaryDirectory dir;
  Dataset dataset = generated_dataset();
  std::vector<std::int32_t> other(static_cast<std::size_t>(dataset.num_nodes()), 0);
  dataset.features =
      std::make_shared<const GeneratedFeatures>(16, SharedArray(std::move(other)), 2.0f, 99);
  EXPECT_THROW(write_binary_workload(dataset, dir.path() / "x.gnnbed"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.gnnbed"));
}

TEST(BinaryFormat, RewritingReplacesTheFile) {
  TemporaryDirectory dir;
  const auto path = dir.path() / "w.gnnbed";
  write_binary_workload(load_planetoid_tsv(bundled_dataset("cora")), path);
  const Dataset generated = generated_dataset();
  write_binary_workload(generated, path);
  expect_same(generated, load_binary_workload(path));
}

}  // namespace
}  // namespace gnnbed
