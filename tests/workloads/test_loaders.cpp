#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/support/expect_input_error.hpp"
#include "tests/support/npz_writer.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/load_ogb_npz.hpp"
#include "workloads/loaders.hpp"
#include "workloads/npz_reader.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

using testing::bundled_dataset;
using testing::npy_float64;
using testing::npy_int64;
using testing::TemporaryDirectory;
using testing::write_gzip;
using testing::write_npz;

std::vector<EdgeIndex> offsets_of(const Graph& graph) {
  return {graph.offsets().begin(), graph.offsets().end()};
}
std::vector<NodeId> sources_of(const Graph& graph) {
  return {graph.sources().begin(), graph.sources().end()};
}
std::vector<std::int32_t> labels_of(const Dataset& dataset) {
  return {dataset.labels.begin(), dataset.labels.end()};
}
std::vector<float> features_of(const Dataset& dataset) {
  std::vector<NodeId> nodes(static_cast<std::size_t>(dataset.num_nodes()));
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  std::vector<float> values(nodes.size() * static_cast<std::size_t>(dataset.feature_dim()));
  dataset.features->gather(nodes, values.data());
  return values;
}
std::int64_t self_loops(const Graph& graph) {
  std::int64_t count = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    const auto row = graph.in_neighbors(v);
    count += std::count(row.begin(), row.end(), v);
  }
  return count;
}
std::map<std::int32_t, std::int64_t> label_histogram(const Dataset& dataset) {
  std::map<std::int32_t, std::int64_t> histogram;
  for (const std::int32_t label : dataset.labels) ++histogram[label];
  return histogram;
}
std::int64_t nonzeros(const Dataset& dataset) {
  const auto values = features_of(dataset);
  return std::count_if(values.begin(), values.end(), [](float x) { return x != 0.0f; });
}

// ---------------------------------------------------------------- bundled Planetoid datasets

TEST(LoadPlanetoidTsv, CoraHasThePublishedCounts) {
  const Dataset cora = load_planetoid_tsv(bundled_dataset("cora"));
  EXPECT_EQ(cora.name, "cora");
  EXPECT_EQ(cora.num_nodes(), 2708);
  EXPECT_EQ(cora.graph.num_edges(), 10556);
  EXPECT_EQ(self_loops(cora.graph), 0);
  EXPECT_TRUE(cora.graph.is_symmetric());
  EXPECT_EQ(cora.feature_dim(), 1433);
  EXPECT_EQ(nonzeros(cora), 49216);
  const auto values = features_of(cora);
  EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float x) { return x == 0 || x == 1; }));
  EXPECT_EQ(cora.num_classes, 7);
  EXPECT_EQ(label_histogram(cora),
            (std::map<std::int32_t, std::int64_t>{
                {0, 351}, {1, 217}, {2, 418}, {3, 818}, {4, 426}, {5, 298}, {6, 180}}));
  ASSERT_EQ(cora.split.train.size(), 140u);
  ASSERT_EQ(cora.split.val.size(), 500u);
  ASSERT_EQ(cora.split.test.size(), 1000u);
  for (NodeId i = 0; i < 140; ++i) EXPECT_EQ(cora.split.train[static_cast<std::size_t>(i)], i);
  for (NodeId i = 0; i < 500; ++i) EXPECT_EQ(cora.split.val[static_cast<std::size_t>(i)], 140 + i);
  EXPECT_EQ(cora.split.test.front(), 1708);
  EXPECT_EQ(cora.split.test.back(), 2707);
  // Planetoid's training set has 20 nodes per class.
  std::map<std::int32_t, int> per_class;
  for (const NodeId v : cora.split.train) ++per_class[cora.labels[static_cast<std::size_t>(v)]];
  for (const auto& [label, count] : per_class) EXPECT_EQ(count, 20) << "class " << label;
  // First lines of edges.tsv and features_sparse.tsv: 0-633, 0-1862, 0-2582; node 0 has 19, 81.
  const auto row0 = cora.graph.in_neighbors(0);
  const std::vector<NodeId> first_neighbors = {633, 1862, 2582};
  EXPECT_TRUE(
      std::includes(row0.begin(), row0.end(), first_neighbors.begin(), first_neighbors.end()));
  EXPECT_EQ(values[19], 1.0f);
  EXPECT_EQ(values[81], 1.0f);
  EXPECT_EQ(values[20], 0.0f);
}

TEST(LoadPlanetoidTsv, CiteseerKeepsSelfLoopsAndUnlabelledNodes) {
  const Dataset citeseer = load_planetoid_tsv(bundled_dataset("citeseer"));
  EXPECT_EQ(citeseer.name, "citeseer");
  EXPECT_EQ(citeseer.num_nodes(), 3327);
  EXPECT_EQ(citeseer.graph.num_edges(), 2 * 4552 + 124);
  EXPECT_EQ(self_loops(citeseer.graph), 124);
  EXPECT_TRUE(citeseer.graph.is_symmetric());
  EXPECT_EQ(citeseer.feature_dim(), 3703);
  EXPECT_EQ(nonzeros(citeseer), 105165);
  EXPECT_EQ(citeseer.num_classes, 6);
  EXPECT_EQ(label_histogram(citeseer),
            (std::map<std::int32_t, std::int64_t>{
                {-1, 15}, {0, 249}, {1, 590}, {2, 668}, {3, 701}, {4, 596}, {5, 508}}));
  EXPECT_EQ(citeseer.labels[2407], -1);
  EXPECT_EQ(citeseer.split.train.size(), 120u);
  EXPECT_EQ(citeseer.split.val.size(), 500u);
  EXPECT_EQ(citeseer.split.test.size(), 1000u);
}

TEST(LoadPlanetoidTsv, PubmedComesWithoutFeatures) {
  const Dataset pubmed = load_planetoid_tsv(bundled_dataset("pubmed"));
  EXPECT_EQ(pubmed.num_nodes(), 19717);
  EXPECT_EQ(pubmed.graph.num_edges(), 2 * 44324 + 3);
  EXPECT_EQ(self_loops(pubmed.graph), 3);
  EXPECT_EQ(pubmed.features, nullptr);
  EXPECT_EQ(pubmed.feature_dim(), 0);
  EXPECT_EQ(pubmed.num_classes, 3);
  EXPECT_EQ(label_histogram(pubmed),
            (std::map<std::int32_t, std::int64_t>{{0, 4103}, {1, 7739}, {2, 7875}}));
  EXPECT_EQ(pubmed.split.train.size(), 60u);
  EXPECT_EQ(pubmed.split.val.size(), 500u);
  EXPECT_EQ(pubmed.split.test.size(), 1000u);
}

// ---------------------------------------------------------------- hand-made Planetoid layout

void write_tiny_planetoid(const TemporaryDirectory& dir, const std::string& feature_format) {
  dir.write("tiny/meta.tsv",
            "num_nodes\t5\nnum_features\t3\nnum_classes\t2\n"
            "num_undirected_edges\t4\nnum_self_loops\t1\nfeature_format\t" +
                feature_format + "\nnum_train\t2\n");
  dir.write("tiny/edges.tsv", "0\t1\n1\t2\n2\t2\n3\t4\n");
  dir.write("tiny/features_sparse.tsv", "0\t0\t1\n0\t2\t0.5\n3\t1\t2.5\n4\t2\t-1\n");
  dir.write("tiny/labels.tsv", "0\t0\n1\t1\n2\t-1\n3\t1\n4\t0\n");
  dir.write("tiny/split.tsv", "0\ttrain\n1\tval\n3\ttest\n4\ttrain\n");
}

const std::vector<float> kTinyFeatures = {1, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0, 2.5f, 0, 0, 0, -1};

TEST(LoadPlanetoidTsv, TinyDatasetExactly) {
  TemporaryDirectory dir;
  write_tiny_planetoid(dir, "features_sparse.tsv (node<TAB>feature<TAB>value)");
  // A trailing separator must not change the dataset's name.
  const Dataset tiny = load_planetoid_tsv(dir.path().string() + "/tiny/");
  EXPECT_EQ(tiny.name, "tiny");
  EXPECT_EQ(offsets_of(tiny.graph), (std::vector<EdgeIndex>{0, 1, 3, 5, 6, 7}));
  EXPECT_EQ(sources_of(tiny.graph), (std::vector<NodeId>{1, 0, 2, 1, 2, 4, 3}));
  EXPECT_EQ(tiny.num_classes, 2);
  EXPECT_EQ(labels_of(tiny), (std::vector<std::int32_t>{0, 1, -1, 1, 0}));
  EXPECT_EQ(features_of(tiny), kTinyFeatures);
  EXPECT_EQ(tiny.split.train, (std::vector<NodeId>{0, 4}));
  EXPECT_EQ(tiny.split.val, (std::vector<NodeId>{1}));
  EXPECT_EQ(tiny.split.test, (std::vector<NodeId>{3}));
}

// Feature lines in any order (nodes out of order, a node's columns unsorted) give the rows the
// same lines in node and column order give, kept sparse.
TEST(LoadPlanetoidTsv, SparseFeatureLinesInAnyOrderGiveTheSameRows) {
  const auto write = [](const TemporaryDirectory& dir, const std::string& name,
                        const std::vector<std::string>& lines) {
    write_tiny_planetoid(dir, "features_sparse.tsv");
    dir.write("tiny/meta.tsv",
              "num_nodes\t5\nnum_features\t64\nnum_classes\t2\n"
              "num_feature_nonzeros\t6\nfeature_format\tfeatures_sparse.tsv\n");
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    dir.write("tiny/features_sparse.tsv", text);
    std::filesystem::rename(dir.path() / "tiny", dir.path() / name);
  };
  TemporaryDirectory dir;
  write(dir, "ordered", {"0\t3\t1", "0\t40\t2", "1\t7\t3", "3\t1\t4", "3\t63\t5", "4\t0\t6"});
  write(dir, "shuffled", {"3\t63\t5", "0\t40\t2", "4\t0\t6", "0\t3\t1", "1\t7\t3", "3\t1\t4"});
  write(dir, "late", {"0\t40\t2", "0\t3\t1", "3\t1\t4", "4\t0\t6", "1\t7\t3", "3\t63\t5"});
  const Dataset ordered = load_planetoid_tsv(dir.path() / "ordered");
  ASSERT_NE(dynamic_cast<const SparseFeatures*>(ordered.features.get()), nullptr);
  EXPECT_EQ(features_of(ordered)[40], 2.0f);
  EXPECT_EQ(features_of(ordered)[3 * 64 + 63], 5.0f);
  for (const char* name : {"shuffled", "late"}) {
    const Dataset other = load_planetoid_tsv(dir.path() / name);
    const auto* sparse = dynamic_cast<const SparseFeatures*>(other.features.get());
    ASSERT_NE(sparse, nullptr) << name;
    EXPECT_EQ(features_of(other), features_of(ordered)) << name;
    const SparseMatrixView rows = sparse->view();
    EXPECT_EQ(std::vector<std::int32_t>(rows.columns.begin(), rows.columns.end()),
              (std::vector<std::int32_t>{3, 40, 7, 1, 63, 0}))
        << name;
  }
}

TEST(LoadPlanetoidTsv, DenseFeaturesBinIsMappedAndChecked) {
  TemporaryDirectory dir;
  write_tiny_planetoid(dir, "features.bin (float32 rows)");
  std::filesystem::remove(dir.path() / "tiny/features_sparse.tsv");
  dir.write("tiny/features.bin", std::string(reinterpret_cast<const char*>(kTinyFeatures.data()),
                                             kTinyFeatures.size() * sizeof(float)));
  const Dataset tiny = load_planetoid_tsv(dir.path() / "tiny");
  EXPECT_EQ(tiny.feature_dim(), 3);
  EXPECT_EQ(features_of(tiny), kTinyFeatures);
}

TEST(LoadPlanetoidTsv, MissingFeatureFormatGivesNoFeatures) {
  TemporaryDirectory dir;
  write_tiny_planetoid(dir, "MISSING");
  const Dataset tiny = load_planetoid_tsv(dir.path() / "tiny");
  EXPECT_EQ(tiny.features, nullptr);
  EXPECT_EQ(tiny.graph.num_edges(), 7);
}

// ---------------------------------------------------------------- SNAP edge lists

const std::string kEdgeList =
    "# a SNAP-style header\n% and a Matrix-Market-style comment\n1 2\n\t2\t3  \n\n   \n3 1\n"
    "1 2\n4 4\n";

TEST(LoadEdgeList, CommentsBlankLinesDuplicatesAndSelfLoops) {
  TemporaryDirectory dir;
  const auto path = dir.write("graph.txt", kEdgeList);
  const Graph graph = load_edge_list(path, {});
  EXPECT_EQ(graph.num_nodes(), 5);  // max id + 1: node 0 is isolated
  EXPECT_EQ(offsets_of(graph), (std::vector<EdgeIndex>{0, 0, 2, 4, 6, 7}));
  EXPECT_EQ(sources_of(graph), (std::vector<NodeId>{2, 3, 1, 3, 1, 2, 4}));
}

TEST(LoadEdgeList, DirectedAndWithoutSelfLoops) {
  TemporaryDirectory dir;
  const auto path = dir.write("graph.txt", kEdgeList);
  EdgeListFileOptions directed;
  directed.symmetrize = false;
  const Graph graph = load_edge_list(path, directed);
  EXPECT_EQ(offsets_of(graph), (std::vector<EdgeIndex>{0, 0, 1, 2, 3, 4}));
  EXPECT_EQ(sources_of(graph), (std::vector<NodeId>{3, 1, 2, 4}));
  EdgeListFileOptions no_loops;
  no_loops.drop_self_loops = true;
  EXPECT_EQ(offsets_of(load_edge_list(path, no_loops)), (std::vector<EdgeIndex>{0, 0, 2, 4, 6, 6}));
}

TEST(LoadEdgeList, GzipGivesTheSameGraph) {
  TemporaryDirectory dir;
  write_gzip(dir.path() / "graph.txt.gz", kEdgeList);
  const Graph graph = load_edge_list(dir.path() / "graph.txt.gz", {});
  EXPECT_EQ(offsets_of(graph), (std::vector<EdgeIndex>{0, 0, 2, 4, 6, 7}));
  EXPECT_EQ(sources_of(graph), (std::vector<NodeId>{2, 3, 1, 3, 1, 2, 4}));
}

TEST(LoadEdgeList, RelabelNumbersDistinctIdsInIncreasingOrder) {
  TemporaryDirectory dir;
  const auto path = dir.write("big_ids.txt", "1000000000000 5\n5 77\n77 1000000000000\n");
  EdgeListFileOptions options;
  options.relabel = true;
  options.symmetrize = false;
  // 5 -> 0, 77 -> 1, 10^12 -> 2: edges 2->0, 0->1, 1->2.
  const Graph graph = load_edge_list(path, options);
  EXPECT_EQ(offsets_of(graph), (std::vector<EdgeIndex>{0, 1, 2, 3}));
  EXPECT_EQ(sources_of(graph), (std::vector<NodeId>{2, 0, 1}));

  const auto sparse = dir.write("sparse_ids.txt", "10 30\n30 20\n");
  EXPECT_EQ(load_edge_list(sparse, {}).num_nodes(), 31);
  EXPECT_EQ(load_edge_list(sparse, options).num_nodes(), 3);
}

TEST(LoadEdgeList, RelabelOfSmallDenseIds) {
  TemporaryDirectory dir;
  // Ids no larger than twice the edge count take the lookup-table path: 1 -> 0, 3 -> 1, 5 -> 2.
  const auto path = dir.write("dense_ids.txt", "3 1\n1 3\n5 3\n");
  EdgeListFileOptions options;
  options.relabel = true;
  options.symmetrize = false;
  const Graph graph = load_edge_list(path, options);
  EXPECT_EQ(offsets_of(graph), (std::vector<EdgeIndex>{0, 1, 3, 3}));
  EXPECT_EQ(sources_of(graph), (std::vector<NodeId>{1, 0, 2}));
}

// ---------------------------------------------------------------- OGB raw layout

struct OgbTree {
  std::string edges = "0,1\n1,2\n3,4\n4,0\n";
  std::string num_nodes = "6\n";
  std::string labels = "0\n3.0\nnan\n1\n2\n0\n";
  std::string features = "0.5,-1\n1,2\n0,0\n3.25,4\n-5,6e-1\n7,8\n";
  std::string train = "0\n1\n";
  std::string valid = "3\n";
  std::string test = "4\n5\n";
};

// Writes the tree under dir/name, each file plain or gzipped.
std::filesystem::path write_ogb(const TemporaryDirectory& dir, const std::string& name,
                                const OgbTree& tree, bool gzipped) {
  const std::pair<std::string, const std::string*> files[] = {
      {"raw/edge.csv", &tree.edges},         {"raw/num-node-list.csv", &tree.num_nodes},
      {"raw/node-label.csv", &tree.labels},  {"raw/node-feat.csv", &tree.features},
      {"split/time/train.csv", &tree.train}, {"split/time/valid.csv", &tree.valid},
      {"split/time/test.csv", &tree.test}};
  for (const auto& [relative, content] : files) {
    if (gzipped) {
      write_gzip(dir.path() / name / (relative + ".gz"), *content);
    } else {
      dir.write(name + "/" + relative, *content);
    }
  }
  return dir.path() / name;
}

void expect_tiny_ogb(const Dataset& dataset) {
  EXPECT_EQ(dataset.num_nodes(), 6);
  EXPECT_EQ(offsets_of(dataset.graph), (std::vector<EdgeIndex>{0, 2, 4, 5, 6, 8, 8}));
  EXPECT_EQ(sources_of(dataset.graph), (std::vector<NodeId>{1, 4, 0, 2, 1, 4, 0, 3}));
  EXPECT_EQ(labels_of(dataset), (std::vector<std::int32_t>{0, 3, -1, 1, 2, 0}));
  EXPECT_EQ(dataset.num_classes, 4);
  EXPECT_EQ(features_of(dataset),
            (std::vector<float>{0.5f, -1, 1, 2, 0, 0, 3.25f, 4, -5, 0.6f, 7, 8}));
  EXPECT_EQ(dataset.split.train, (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(dataset.split.val, (std::vector<NodeId>{3}));
  EXPECT_EQ(dataset.split.test, (std::vector<NodeId>{4, 5}));
}

TEST(LoadOgb, PlainTree) {
  TemporaryDirectory dir;
  const Dataset dataset = load_ogb(write_ogb(dir, "ogbn_tiny", {}, false), {});
  EXPECT_EQ(dataset.name, "ogbn_tiny");
  expect_tiny_ogb(dataset);
}

TEST(LoadOgb, GzippedTree) {
  TemporaryDirectory dir;
  expect_tiny_ogb(load_ogb(write_ogb(dir, "ogbn_tiny", {}, true), {}));
}

TEST(LoadOgb, WithoutNumNodeListOrFeaturesAndDirected) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, "d", {}, false);
  std::filesystem::remove(root / "raw/num-node-list.csv");
  std::filesystem::remove(root / "raw/node-feat.csv");
  OgbOptions options;
  options.symmetrize = false;
  const Dataset dataset = load_ogb(root, options);
  EXPECT_EQ(dataset.num_nodes(), 6);  // one label line per node
  EXPECT_EQ(dataset.features, nullptr);
  EXPECT_EQ(offsets_of(dataset.graph), (std::vector<EdgeIndex>{0, 1, 2, 3, 3, 4, 4}));
  EXPECT_EQ(sources_of(dataset.graph), (std::vector<NodeId>{4, 0, 1, 3}));
}

TEST(LoadOgb, PlainFileWinsOverGzipWhenBothExist) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, "d", {}, false);
  write_gzip(root / "raw/node-label.csv.gz", "1\n1\n1\n1\n1\n1\n");
  EXPECT_EQ(labels_of(load_ogb(root, {})), (std::vector<std::int32_t>{0, 3, -1, 1, 2, 0}));
}

TEST(LoadOgb, SplitIsChosenByNameWhenThereAreSeveral) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, "d", {}, false);
  dir.write("d/split/random/train.csv", "5\n");
  dir.write("d/split/random/valid.csv", "4\n");
  dir.write("d/split/random/test.csv", "0\n3\n");
  try {
    load_ogb(root, {});
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.ogb_split") << "the configuration field that sets it";
    EXPECT_NE(std::string(error.what()).find("random, time"), std::string::npos) << error.what();
  }
  OgbOptions options;
  options.split_name = "random";
  const Dataset dataset = load_ogb(root, options);
  EXPECT_EQ(dataset.split.train, (std::vector<NodeId>{5}));
  EXPECT_EQ(dataset.split.test, (std::vector<NodeId>{0, 3}));
  options.split_name = "scaffold";
  EXPECT_THROW(load_ogb(root, options), ConfigError);
}

// ---------------------------------------------------------------- OGB's NumPy layout

// tests/workloads/data/ogb_npz (make_fixtures.py writes them): the tiny tree as .npz archives.
std::filesystem::path npz_fixture(const std::string& name) {
  return std::filesystem::path(GNNBED_SOURCE_DIR) / "tests/workloads/data/ogb_npz" / name;
}

// The tiny tree's splits, with raw/data.npz and raw/node-label.npz copied from the fixtures.
std::filesystem::path write_ogb_npz(const TemporaryDirectory& dir, const std::string& data,
                                    const std::string& labels) {
  const OgbTree tree;
  dir.write("npz/split/time/train.csv", tree.train);
  dir.write("npz/split/time/valid.csv", tree.valid);
  dir.write("npz/split/time/test.csv", tree.test);
  std::filesystem::create_directories(dir.path() / "npz/raw");
  std::filesystem::copy_file(npz_fixture(data), dir.path() / "npz/raw/data.npz");
  std::filesystem::copy_file(npz_fixture(labels), dir.path() / "npz/raw/node-label.npz");
  return dir.path() / "npz";
}

TEST(LoadOgbNpz, DeflatedArchivesInCOrderGiveTheCsvTreesDataset) {
  TemporaryDirectory dir;
  expect_tiny_ogb(load_ogb(write_ogb_npz(dir, "deflated-data.npz", "deflated-node-label.npz"), {}));
}

TEST(LoadOgbNpz, StoredZip64ArchivesInFortranOrderGiveTheCsvTreesDataset) {
  TemporaryDirectory dir;
  expect_tiny_ogb(load_ogb(write_ogb_npz(dir, "zip64-data.npz", "zip64-node-label.npz"), {}));
}

TEST(LoadOgbNpz, HalfPrecisionValuesConvertExactly) {
  NpzArchive archive(npz_fixture("half.npz"));
  EXPECT_EQ(archive.arrays(), (std::vector<std::string>{"values"}));
  std::vector<double> values;
  archive.read_reals("values", [&](std::span<const double> chunk) {
    values.insert(values.end(), chunk.begin(), chunk.end());
  });
  // Normal, negative, the largest half, the smallest subnormal, infinity.
  EXPECT_EQ(values, (std::vector<double>{1.5, -2, 65504, std::ldexp(1.0, -24),
                                         std::numeric_limits<double>::infinity()}));
  EXPECT_THROW(archive.read_integers("values", [](std::span<const std::int64_t>) {}), InputError);
}

// Each bad archive is refused with the archive and the array in the message.
void expect_refused(const std::filesystem::path& root, const std::string& words) {
  try {
    load_ogb(root, {});
    FAIL() << "no exception";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    EXPECT_NE(error.file().find(".npz"), std::string::npos) << error.file();
  }
}

TEST(LoadOgbNpz, BadArchivesAreRefusedSayingWhereAndWhy) {
  TemporaryDirectory a;
  expect_refused(write_ogb_npz(a, "bad-id-data.npz", "deflated-node-label.npz"),
                 "node id 6 at element 6 is outside [0, 6)");
  TemporaryDirectory b;
  expect_refused(write_ogb_npz(b, "deflated-data.npz", "bad-crc-node-label.npz"), "CRC-32");
  TemporaryDirectory c;
  expect_refused(write_ogb_npz(c, "deflated-data.npz", "big-endian-node-label.npz"), "big-endian");
  TemporaryDirectory d;
  expect_refused(write_ogb_npz(d, "truncated-data.npz", "deflated-node-label.npz"),
                 "not a zip archive");
  TemporaryDirectory e;
  const auto root = write_ogb_npz(e, "deflated-data.npz", "deflated-node-label.npz");
  std::filesystem::remove(root / "raw/node-label.npz");
  expect_refused(root, "no such file");
}

// ---------------------------------------------------------------- edge_index streamed into the CSR

// Edges over `num_nodes` ids with repeats and every seventh a self loop, the same on every
// platform (mt19937's raw output).
struct RandomEdges {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
};
RandomEdges random_edges(std::uint32_t num_nodes, std::size_t count, std::uint32_t seed) {
  std::mt19937 random(seed);
  RandomEdges edges;
  for (std::size_t e = 0; e < count; ++e) {
    edges.src.push_back(static_cast<NodeId>(random() % num_nodes));
    edges.dst.push_back(e % 7 == 0 ? edges.src.back() : static_cast<NodeId>(random() % num_nodes));
  }
  return edges;
}

// raw/data.npz with `edges` as edge_index, in C or Fortran order, and raw/node-label.npz with a
// label per node, every member stored or deflated.
std::filesystem::path write_npz_edges(const TemporaryDirectory& dir, std::int64_t num_nodes,
                                      const RandomEdges& edges, bool fortran_order, bool deflated) {
  std::vector<std::int64_t> ids;
  if (fortran_order) {
    for (std::size_t e = 0; e < edges.src.size(); ++e) {
      ids.push_back(edges.src[e]);
      ids.push_back(edges.dst[e]);
    }
  } else {
    ids.assign(edges.src.begin(), edges.src.end());
    ids.insert(ids.end(), edges.dst.begin(), edges.dst.end());
  }
  const std::vector<std::int64_t> count{num_nodes};
  const auto num_edges = static_cast<std::int64_t>(edges.src.size());
  write_npz(dir.path() / "raw/data.npz",
            {{"num_nodes_list", npy_int64({1}, false, count)},
             {"edge_index", npy_int64({2, num_edges}, fortran_order, ids)}},
            deflated);
  const std::vector<double> labels(static_cast<std::size_t>(num_nodes), 0.0);
  write_npz(dir.path() / "raw/node-label.npz", {{"node_label", npy_float64({num_nodes}, labels)}},
            deflated);
  return dir.path() / "raw";
}

TEST(LoadOgbNpz, StreamedEdgeIndexGivesBuildGraphsCsr) {
  // 150,000 edges: three of the reader's chunks (65,536 int64 columns), the last one partial.
  constexpr std::uint32_t kNodes = 500;
  const RandomEdges edges = random_edges(kNodes, 150'000, 28);
  for (const bool fortran_order : {false, true}) {
    for (const bool deflated : {false, true}) {
      TemporaryDirectory dir;
      const auto raw = write_npz_edges(dir, kNodes, edges, fortran_order, deflated);
      for (const bool symmetrize : {false, true}) {
        SCOPED_TRACE(std::string(fortran_order ? "Fortran" : "C") + " order, " +
                     (deflated ? "deflated" : "stored") + (symmetrize ? ", symmetrized" : ""));
        EdgeListOptions options;
        options.symmetrize = symmetrize;
        const Graph expected = build_graph(kNodes, edges.src, edges.dst, options, "lists");
        const Graph graph = read_ogb_npz(raw, symmetrize).graph;
        EXPECT_EQ(offsets_of(graph), offsets_of(expected));
        EXPECT_EQ(sources_of(graph), sources_of(expected));
      }
    }
  }
}

// The tiny tree with raw/data.npz replaced by a stored archive of `members`.
std::filesystem::path write_ogb_data_npz(
    const TemporaryDirectory& dir,
    const std::vector<std::pair<std::string, std::string>>& members) {
  const auto root = write_ogb_npz(dir, "deflated-data.npz", "deflated-node-label.npz");
  write_npz(root / "raw/data.npz", members, false);
  return root;
}

// The tiny tree's edges as edge_index in C order.
const std::vector<std::int64_t> kTinyEdgeIndex{0, 1, 3, 4, 1, 2, 4, 0};

TEST(LoadOgbNpz, MoreNodesThan32BitIdsHoldAreRefusedNamingNumNodesList) {
  const std::vector<std::int64_t> too_many{std::int64_t{std::numeric_limits<NodeId>::max()} + 1};
  TemporaryDirectory dir;
  const auto root =
      write_ogb_data_npz(dir, {{"num_nodes_list", npy_int64({1}, false, too_many)},
                               {"edge_index", npy_int64({2, 4}, false, kTinyEdgeIndex)}});
  testing::expect_input_error([&] { load_ogb(root, {}); }, "data.npz:num_nodes_list", 0,
                              "num_nodes_list", "2147483648 nodes do not fit 32-bit node ids");
}

TEST(LoadOgbNpz, AnEdgeIndexShapeBeyondItsBytesIsRefusedNamingTheShape) {
  const std::vector<std::int64_t> six{6};
  // 2 x 2^62 int64 ids overflow a 64-bit byte count; 2 x 2^59 make 2^63 bytes, past int64; 2 x 100
  // are more than the member's 4 edges.
  for (const std::int64_t edges :
       {std::int64_t{1} << 62, std::int64_t{1} << 59, std::int64_t{100}}) {
    SCOPED_TRACE(edges);
    TemporaryDirectory dir;
    const auto root =
        write_ogb_data_npz(dir, {{"num_nodes_list", npy_int64({1}, false, six)},
                                 {"edge_index", npy_int64({2, edges}, false, kTinyEdgeIndex)}});
    testing::expect_input_error([&] { load_ogb(root, {}); }, "data.npz:edge_index", 0, "shape",
                                "but the member holds 64");
  }
}

// An id changed within range: only the checksum, combined over the streams that read the two rows,
// can tell.
TEST(LoadOgbNpz, ADamagedIdInEitherRowFailsTheChecksum) {
  const std::vector<std::int64_t> six{6};
  const std::string edge_index = npy_int64({2, 4}, false, kTinyEdgeIndex);
  for (const std::size_t element : {1, 5}) {  // a source 1 -> 0, a destination 2 -> 3
    SCOPED_TRACE(element);
    TemporaryDirectory dir;
    const auto root = write_ogb_data_npz(
        dir, {{"num_nodes_list", npy_int64({1}, false, six)}, {"edge_index", edge_index}});
    const auto path = root / "raw/data.npz";
    std::string archive;
    {
      std::ifstream in(path, std::ios::binary);
      archive.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::size_t data = archive.find(edge_index) + edge_index.size() - 64;
    archive[data + 8 * element] = static_cast<char>(archive[data + 8 * element] ^ 1);
    std::ofstream(path, std::ios::binary) << archive;
    expect_refused(root, "CRC-32");
  }
}

}  // namespace
}  // namespace gnnbed
