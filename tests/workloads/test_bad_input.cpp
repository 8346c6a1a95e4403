// Every kind of bad input, for every loader: the exception type, and a message that names the
// file, the line (where one applies) and the field at fault.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "tests/support/expect_input_error.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/binary_format.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/loaders.hpp"

namespace gnnbed {
namespace {

using testing::expect_input_error;
using testing::TemporaryDirectory;
using testing::write_gzip;

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Half of a gzip stream of a long edge list.
void write_truncated_gzip(const TemporaryDirectory& dir, const std::string& relative,
                          char separator) {
  std::string content;
  for (int i = 0; i < 100000; ++i) {
    content += std::to_string(i % 997) + separator + std::to_string(i * 31 % 1009) + "\n";
  }
  const auto whole = dir.path() / "whole.gz";
  write_gzip(whole, content);
  const std::string bytes = read_bytes(whole);
  std::filesystem::remove(whole);
  dir.write(relative, bytes.substr(0, bytes.size() / 2));
}

// ---------------------------------------------------------------- Planetoid TSV

using Files = std::map<std::string, std::string>;

// A valid 5-node dataset (the one test_loaders checks exactly) with some files replaced.
std::filesystem::path write_planetoid(const TemporaryDirectory& dir, const Files& replaced = {}) {
  Files files = {{"meta.tsv",
                  "num_nodes\t5\nnum_features\t3\nnum_classes\t2\nnum_undirected_edges\t4\n"
                  "feature_format\tfeatures_sparse.tsv\n"},
                 {"edges.tsv", "0\t1\n1\t2\n2\t2\n3\t4\n"},
                 {"features_sparse.tsv", "0\t0\t1\n0\t2\t0.5\n3\t1\t2.5\n4\t2\t-1\n"},
                 {"labels.tsv", "0\t0\n1\t1\n2\t-1\n3\t1\n4\t0\n"},
                 {"split.tsv", "0\ttrain\n1\tval\n3\ttest\n4\ttrain\n"}};
  for (const auto& [name, content] : replaced) files[name] = content;
  for (const auto& [name, content] : files) dir.write("tiny/" + name, content);
  return dir.path() / "tiny";
}

TEST(BadPlanetoid, TheValidBaseLoads) {
  TemporaryDirectory dir;
  EXPECT_EQ(load_planetoid_tsv(write_planetoid(dir)).num_nodes(), 5);
}

TEST(BadPlanetoid, MalformedLines) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"edges.tsv", "0\t1\n1 2\n2\t2\n3\t4\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "edges.tsv", 2, "src",
                     "'1 2' is not an integer");
  write_planetoid(dir, {{"labels.tsv", "0\t0\n1\t1\t7\n2\t-1\n3\t1\n4\t0\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "labels.tsv", 2, "",
                     "unexpected extra fields: '7'");
  write_planetoid(dir, {{"meta.tsv", "num_nodes 5\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 1, "key",
                     "expected 'key<TAB>value'");
}

TEST(BadPlanetoid, NonNumericFields) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"labels.tsv", "0\t0\n1\t1\n2\tcat\n3\t1\n4\t0\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "labels.tsv", 3, "class",
                     "'cat' is not an integer");
  write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t1\n0\t2\thalf\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 2, "value",
                     "'half' is not a number");
  write_planetoid(dir, {{"meta.tsv", "num_nodes\tfive\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 1, "num_nodes",
                     "'five' is not an integer");
}

// Finite as doubles, infinite as the float32 the loaders keep.
TEST(BadPlanetoid, FeatureValuesBeyondFloat32) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t1\n0\t2\t1e300\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 2, "value",
                     "1e+300 is outside float32's range");
  write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t-3.5e38\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 1, "value",
                     "-3.5e+38 is outside float32's range");
  write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t3.4e38\n"}});
  EXPECT_EQ(load_planetoid_tsv(root).num_nodes(), 5) << "float32's largest values load";
}

TEST(BadPlanetoid, IdsOutOfRange) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"edges.tsv", "0\t1\n1\t2\n2\t2\n3\t5\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "edges.tsv", 4, "dst",
                     "node id 5 is outside [0, 5)");
  write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t1\n0\t3\t0.5\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 2, "feature",
                     "column 3 is outside [0, 3)");
  write_planetoid(dir, {{"labels.tsv", "0\t0\n1\t2\n2\t-1\n3\t1\n4\t0\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "labels.tsv", 2, "class",
                     "2 is outside [-1, 2)");
  write_planetoid(dir, {{"split.tsv", "0\ttrain\n-1\tval\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "split.tsv", 2, "node",
                     "node id -1 is outside [0, 5)");
  write_planetoid(dir, {{"split.tsv", "0\ttraining\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "split.tsv", 1, "split",
                     "'training' is not one of train, val, test");
}

TEST(BadPlanetoid, CountsThatDisagreeWithMeta) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(
      dir, {{"meta.tsv",
             "num_nodes\t5\nnum_features\t3\nnum_classes\t2\nnum_undirected_edges\t5\n"
             "feature_format\tfeatures_sparse.tsv\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 4, "num_undirected_edges",
                     "says 5 but");
  try {
    load_planetoid_tsv(root);
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("edges.tsv has 4 lines"), std::string::npos);
  }
  write_planetoid(dir, {{"meta.tsv",
                         "num_nodes\t5\nnum_features\t3\nnum_classes\t2\nnum_train\t3\n"
                         "feature_format\tfeatures_sparse.tsv\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 4, "num_train", "says 3 but");
  // labels.tsv one line short of num_nodes: the missing node is named.
  write_planetoid(dir, {{"labels.tsv", "0\t0\n1\t1\n3\t1\n4\t0\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "labels.tsv", 0, "node",
                     "node 2 has no line (4 lines for 5 nodes");
}

TEST(BadPlanetoid, DuplicateLines) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"labels.tsv", "0\t0\n1\t1\n2\t-1\n1\t1\n4\t0\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "labels.tsv", 4, "node",
                     "node 1 is listed twice (first on line 2)");
  // The same undirected edge in the other direction; meta states no count, so the duplicate
  // itself is what is found.
  write_planetoid(dir, {{"meta.tsv",
                         "num_nodes\t5\nnum_features\t3\nnum_classes\t2\n"
                         "feature_format\tfeatures_sparse.tsv\n"},
                        {"edges.tsv", "0\t1\n1\t2\n2\t2\n3\t4\n2\t1\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "edges.tsv", 5, "src",
                     "edge 1 - 2 is listed twice (also on line 2)");
  write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t1\n3\t1\t2.5\n0\t0\t1\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 3, "feature",
                     "node 0 feature 0 is listed twice");
  write_planetoid(dir, {{"split.tsv", "0\ttrain\n1\tval\n0\ttest\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "split.tsv", 3, "node",
                     "node 0 is listed twice (first on line 1)");
  write_planetoid(dir, {{"meta.tsv", "num_nodes\t5\nnum_nodes\t6\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 2, "num_nodes", "listed twice");
}

TEST(BadPlanetoid, SplitNodeWithoutLabel) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"split.tsv", "0\ttrain\n2\tval\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "split.tsv", 2, "node",
                     "node 2 has no label");
}

TEST(BadPlanetoid, MissingOrUnknownMetaKeys) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"meta.tsv", "num_nodes\t5\nnum_features\t3\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 0, "num_classes",
                     "missing (required key)");
  write_planetoid(dir, {{"meta.tsv",
                         "num_nodes\t5\nnum_features\t3\nnum_classes\t2\n"
                         "feature_format\tfeatures.npy\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 4, "feature_format",
                     "'features.npy' names no known format");
  write_planetoid(dir, {{"meta.tsv", "num_nodes\t0\nnum_features\t3\nnum_classes\t2\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 1, "num_nodes",
                     "0 is outside [1, 2147483647]");
}

TEST(BadPlanetoid, EmptyFiles) {
  for (const std::string name :
       {"meta.tsv", "edges.tsv", "features_sparse.tsv", "labels.tsv", "split.tsv"}) {
    TemporaryDirectory dir;
    const auto root = write_planetoid(dir, {{name, ""}});
    expect_input_error([&] { load_planetoid_tsv(root); }, name, 0, "", "file is empty");
  }
}

TEST(BadPlanetoid, TruncatedFiles) {
  TemporaryDirectory dir;
  const auto root = write_planetoid(dir, {{"features_sparse.tsv", "0\t0\t1\n0\t2\t0.5\n3\t1"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features_sparse.tsv", 3, "value",
                     "missing");
  write_planetoid(dir, {{"edges.tsv", "0\t1\n1\t2\n2\t2\n3\t"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "edges.tsv", 4, "dst", "is empty");
  // features.bin one float short.
  write_planetoid(dir, {{"meta.tsv",
                         "num_nodes\t5\nnum_features\t3\nnum_classes\t2\n"
                         "feature_format\tfeatures.bin\n"},
                        {"features.bin", std::string(14 * sizeof(float), '\0')}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "features.bin", 0, "",
                     "has 56 bytes, expected 5 nodes x 3 features x 4 bytes = 60");
}

TEST(BadPlanetoid, MissingDirectoryOrFile) {
  TemporaryDirectory dir;
  expect_input_error([&] { load_planetoid_tsv(dir.path() / "nowhere"); }, "nowhere", 0, "",
                     "no such directory");
  const auto root = write_planetoid(dir);
  std::filesystem::remove(root / "split.tsv");
  expect_input_error([&] { load_planetoid_tsv(root); }, "split.tsv", 0, "", "no such file");
}

// ---------------------------------------------------------------- SNAP edge lists

TEST(BadEdgeList, MalformedLines) {
  TemporaryDirectory dir;
  const auto path = dir.write("g.txt", "# header\n1 2 0.5\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 2, "",
                     "expected exactly 2 fields (src dst), got more: '1 2 0.5'");
  dir.write("g.txt", "1 2\n3\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 2, "dst", "missing");
}

TEST(BadEdgeList, NonNumericFields) {
  TemporaryDirectory dir;
  const auto path = dir.write("g.txt", "1 2\n\n3 x4\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 3, "dst",
                     "'x4' is not an integer");
  dir.write("g.txt", "1,2\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 1, "src",
                     "'1,2' is not an integer");
}

TEST(BadEdgeList, IdsOutOfRange) {
  TemporaryDirectory dir;
  const auto path = dir.write("g.txt", "1 2\n-1 2\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 2, "src",
                     "node id -1 is negative");
  dir.write("g.txt", "1 2\n2 3000000000\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 2, "dst",
                     "node id 3000000000 does not fit 32-bit node ids");
  EdgeListFileOptions relabel;
  relabel.relabel = true;
  EXPECT_EQ(load_edge_list(path, relabel).num_nodes(), 3);
  dir.write("g.txt", "1 99999999999999999999\n");
  expect_input_error([&] { load_edge_list(path, relabel); }, "g.txt", 1, "dst",
                     "out of the 64-bit integer range");
}

TEST(BadEdgeList, EmptyFileAndNoEdges) {
  TemporaryDirectory dir;
  const auto path = dir.write("g.txt", "");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 0, "", "file is empty");
  dir.write("g.txt", "# only\n% comments\n\n");
  expect_input_error([&] { load_edge_list(path, {}); }, "g.txt", 0, "", "no edges");
}

TEST(BadEdgeList, TruncatedGzip) {
  TemporaryDirectory dir;
  write_truncated_gzip(dir, "g.txt.gz", ' ');
  try {
    load_edge_list(dir.path() / "g.txt.gz", {});
    FAIL() << "no exception";
  } catch (const InputError& error) {
    EXPECT_EQ(std::filesystem::path(error.file()).filename(), "g.txt.gz");
    EXPECT_GT(error.line(), 1);
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
}

// ---------------------------------------------------------------- OGB raw layout

// A valid 6-node OGB tree (the one test_loaders checks exactly) with some files replaced.
std::filesystem::path write_ogb(const TemporaryDirectory& dir, const Files& replaced = {}) {
  Files files = {{"raw/edge.csv", "0,1\n1,2\n3,4\n4,0\n"},
                 {"raw/num-node-list.csv", "6\n"},
                 {"raw/node-label.csv", "0\n3.0\nnan\n1\n2\n0\n"},
                 {"raw/node-feat.csv", "0.5,-1\n1,2\n0,0\n3.25,4\n-5,6e-1\n7,8\n"},
                 {"split/time/train.csv", "0\n1\n"},
                 {"split/time/valid.csv", "3\n"},
                 {"split/time/test.csv", "4\n5\n"}};
  for (const auto& [name, content] : replaced) files[name] = content;
  for (const auto& [name, content] : files) dir.write("ogb/" + name, content);
  return dir.path() / "ogb";
}

TEST(BadOgb, TheValidBaseLoads) {
  TemporaryDirectory dir;
  EXPECT_EQ(load_ogb(write_ogb(dir), {}).num_nodes(), 6);
}

TEST(BadOgb, MalformedLines) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/edge.csv", "0,1\n1;2\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "edge.csv", 2, "src", "'1;2' is not an integer");
  write_ogb(dir, {{"raw/edge.csv", "0,1\n1,2,3\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "edge.csv", 2, "", "unexpected extra fields");
  write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,2\n0\n3.25,4\n-5,6e-1\n7,8\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 3, "feature[1]", "missing");
  write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,2\n0,0\n3.25,4,1\n-5,6e-1\n7,8\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 4, "",
                     "more than 2 values (the first row has 2)");
}

TEST(BadOgb, NonNumericFields) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/node-label.csv", "0\n3.0\nnan\ncat\n2\n0\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-label.csv", 4, "label",
                     "'cat' is not a class number");
  write_ogb(dir, {{"raw/node-label.csv", "0\n2.5\nnan\n1\n2\n0\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-label.csv", 2, "label",
                     "'2.5' is not a class number");
  write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,two\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 2, "feature[1]",
                     "'two' is not a number");
  write_ogb(dir, {{"split/time/valid.csv", "3.0\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "valid.csv", 1, "node",
                     "'3.0' is not an integer");
}

TEST(BadOgb, FeatureValuesBeyondFloat32) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,3.5e38\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 2, "feature[1]",
                     "3.5e+38 is outside float32's range");
}

TEST(BadOgb, IdsOutOfRange) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/edge.csv", "0,1\n1,2\n3,6\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "edge.csv", 3, "dst",
                     "node id 6 is outside [0, 6)");
  write_ogb(dir, {{"split/time/test.csv", "4\n-5\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "test.csv", 2, "node",
                     "node id -5 is outside [0, 6)");
  write_ogb(dir, {{"raw/node-label.csv", "0\n3.0\nnan\n-2\n2\n0\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-label.csv", 4, "label", "'-2' is outside");
}

TEST(BadOgb, CountsThatDisagree) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/num-node-list.csv", "7\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-label.csv", 0, "label",
                     "6 lines for 7 nodes");
  write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,2\n0,0\n3.25,4\n-5,6e-1\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 0, "", "5 rows for 6 nodes");
  write_ogb(dir, {{"raw/node-feat.csv", "0.5,-1\n1,2\n0,0\n3.25,4\n-5,6e-1\n7,8\n9,9\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "node-feat.csv", 7, "",
                     "more rows than the 6 nodes");
  write_ogb(dir, {{"raw/num-node-list.csv", "6\n6\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "num-node-list.csv", 2, "num_nodes",
                     "only single-graph datasets");
}

TEST(BadOgb, DuplicateOrUnlabelledSplitNodes) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"split/time/test.csv", "4\n1\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "test.csv", 2, "node",
                     "node 1 is already listed in train.csv");
  write_ogb(dir, {{"split/time/valid.csv", "2\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "valid.csv", 1, "node", "node 2 has no label");
}

TEST(BadOgb, EmptyFiles) {
  for (const std::string name : {"raw/edge.csv", "raw/node-label.csv", "raw/node-feat.csv",
                                 "raw/num-node-list.csv", "split/time/train.csv"}) {
    TemporaryDirectory dir;
    const auto root = write_ogb(dir, {{name, ""}});
    expect_input_error([&] { load_ogb(root, {}); }, std::filesystem::path(name).filename(), 0, "",
                       "file is empty");
  }
}

TEST(BadOgb, TruncatedGzipAndMissingFiles) {
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/num-node-list.csv", "1009\n"}});
  std::filesystem::remove(root / "raw/edge.csv");
  std::filesystem::remove(root / "raw/node-feat.csv");
  std::string labels;
  for (int i = 0; i < 1009; ++i) labels += "1\n";
  dir.write("ogb/raw/node-label.csv", labels);
  write_truncated_gzip(dir, "ogb/raw/edge.csv.gz", ',');
  try {
    load_ogb(root, {});
    FAIL() << "no exception";
  } catch (const InputError& error) {
    EXPECT_EQ(std::filesystem::path(error.file()).filename(), "edge.csv.gz");
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
  std::filesystem::remove(root / "raw/node-label.csv");
  expect_input_error([&] { load_ogb(root, {}); }, "node-label.csv", 0, "",
                     "no such file (nor node-label.csv.gz)");
  std::filesystem::remove_all(root / "split");
  expect_input_error([&] { load_ogb(root, {}); }, "split", 0, "", "no such directory");
}

// ---------------------------------------------------------------- errors deep in large files

// Large files are parsed in pieces on several threads; the error must still be the first one in
// the file, with its line. Each case runs with one thread and with four, which must agree.
template <typename Action>
void expect_input_error_on_any_threads(Action action, const std::string& file_name,
                                       std::int64_t line, const std::string& field,
                                       const std::string& problem) {
  const int threads_before = omp_get_max_threads();
  for (const int threads : {1, 4}) {
    omp_set_num_threads(threads);
    SCOPED_TRACE(std::to_string(threads) + " thread(s)");
    expect_input_error(action, file_name, line, field, problem);
  }
  omp_set_num_threads(threads_before);
}

// A Planetoid folder of 20,000 nodes and 200,000 feature lines (several pieces of a block), with
// the feature lines numbered in `replaced` changed.
std::filesystem::path write_large_planetoid(const TemporaryDirectory& dir,
                                            const std::map<int, std::string>& replaced) {
  constexpr int kNodes = 20000;
  std::string features;
  std::string labels;
  int line = 0;
  for (int v = 0; v < kNodes; ++v) {
    for (int j = 0; j < 10; ++j) {
      ++line;
      const auto change = replaced.find(line);
      features += change != replaced.end()
                      ? change->second
                      : std::to_string(v) + "\t" + std::to_string(j * 5 + v % 5) + "\t0.25";
      features += "\n";
    }
    labels += std::to_string(v) + "\t" + std::to_string(v % 2) + "\n";
  }
  return write_planetoid(dir, {{"meta.tsv",
                                "num_nodes\t20000\nnum_features\t50\nnum_classes\t2\n"
                                "feature_format\tfeatures_sparse.tsv\n"},
                               {"features_sparse.tsv", features},
                               {"labels.tsv", labels}});
}

TEST(BadInLargeFiles, PlanetoidFeaturesNameTheFirstBadLine) {
  TemporaryDirectory dir;
  const auto root = write_large_planetoid(dir, {{180000, "17999\t3\tx"}});
  expect_input_error_on_any_threads([&] { load_planetoid_tsv(root); }, "features_sparse.tsv",
                                    180000, "value", "'x' is not a number");
  // A duplicate (found in file order, after parsing) before a bad value, and after one.
  write_large_planetoid(dir, {{150000, "0\t0\t1"}, {180000, "17999\t3\tx"}});
  expect_input_error_on_any_threads([&] { load_planetoid_tsv(root); }, "features_sparse.tsv",
                                    150000, "feature", "node 0 feature 0 is listed twice");
  write_large_planetoid(dir, {{150000, "14999\t3\t1\textra"}, {180000, "0\t0\t1"}});
  expect_input_error_on_any_threads([&] { load_planetoid_tsv(root); }, "features_sparse.tsv",
                                    150000, "", "unexpected extra fields: 'extra'");
  // On one line, the duplicate is found before the extra field, as line by line.
  write_large_planetoid(dir, {{150000, "0\t0\t1\textra"}});
  expect_input_error_on_any_threads([&] { load_planetoid_tsv(root); }, "features_sparse.tsv",
                                    150000, "feature", "listed twice");
}

TEST(BadInLargeFiles, EdgeListNamesTheFirstBadLineAmongComments) {
  TemporaryDirectory dir;
  std::string content;
  for (int i = 1; i <= 300000; ++i) {
    if (i == 250000) {
      content += "12 x\n";
    } else if (i == 280000) {
      content += "1 2 3\n";
    } else {
      content += i % 1000 == 0 ? "# comment\n"
                               : std::to_string(i % 977) + "\t" + std::to_string(i % 1013) + "\n";
    }
  }
  const auto path = dir.write("g.txt", content);
  expect_input_error_on_any_threads([&] { load_edge_list(path, {}); }, "g.txt", 250000, "dst",
                                    "'x' is not an integer");
}

TEST(BadInLargeFiles, OgbFeaturesNameTheFirstBadRow) {
  TemporaryDirectory dir;
  std::string labels;
  std::string features;
  for (int v = 0; v < 30000; ++v) {
    labels += std::to_string(v % 3) + "\n";
    const std::string value = v == 21000 ? "nan" : std::to_string(v % 7) + ".5";
    features += "1,2,3," + value + ",5,6,7,8,9,10\n";
  }
  Files files = {{"raw/num-node-list.csv", "30000\n"},
                 {"raw/node-label.csv", labels},
                 {"raw/node-feat.csv", features}};
  const auto root = write_ogb(dir, files);
  expect_input_error_on_any_threads([&] { load_ogb(root, {}); }, "node-feat.csv", 21001,
                                    "feature[3]", "'nan' is not finite");
  files["raw/node-feat.csv"] = features + "1,2,3,4,5,6,7,8,9,10\n";
  write_ogb(dir, files);
  expect_input_error_on_any_threads([&] { load_ogb(root, {}); }, "node-feat.csv", 21001,
                                    "feature[3]", "'nan' is not finite");
  features.replace(features.find("nan"), 3, "4");
  files["raw/node-feat.csv"] = features + "1,2,3,4,5,6,7,8,9,10\n";
  write_ogb(dir, files);
  expect_input_error_on_any_threads([&] { load_ogb(root, {}); }, "node-feat.csv", 30001, "",
                                    "more rows than the 30000 nodes");
}

// ---------------------------------------------------------------- binary workload files

struct BinaryFixture {
  TemporaryDirectory dir;
  std::filesystem::path path = dir.path() / "tiny.gnnbed";
  std::string bytes;

  BinaryFixture() {
    write_binary_workload(load_planetoid_tsv(write_planetoid(dir)), path);
    bytes = read_bytes(path);
  }
  std::uint64_t u64_at(std::size_t offset) const {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
  }
  template <typename T>
  void patch(std::size_t offset, T value) {
    std::memcpy(bytes.data() + offset, &value, sizeof value);
  }
  void save(const std::string& content) const { dir.write("tiny.gnnbed", content); }
};

// Section table entries (documented in docs/binary_format.md): offset at 232 + 16 s.
constexpr std::size_t kSourcesEntry = 232 + 16 * 1;

TEST(BadBinary, TruncatedInsideASection) {
  BinaryFixture fixture;
  const std::uint64_t sources_at = fixture.u64_at(kSourcesEntry);
  const std::uint64_t sources_bytes = fixture.u64_at(kSourcesEntry + 8);
  ASSERT_EQ(sources_bytes, 7u * 4);
  fixture.save(fixture.bytes.substr(0, sources_at + 10));
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "sources",
                     "section 'sources' ends at byte " + std::to_string(sources_at + 28) +
                         " but the file has " + std::to_string(sources_at + 10) +
                         " bytes (truncated?)");
}

TEST(BadBinary, TruncatedHeaderOrPadding) {
  BinaryFixture fixture;
  fixture.save(fixture.bytes.substr(0, 100));
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "header",
                     "the file has 100 bytes, fewer than the");
  // Only the padding after the last section is gone: the size recorded in the header tells.
  fixture.save(fixture.bytes.substr(0, fixture.bytes.size() - 1));
  expect_input_error(
      [&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "file_bytes",
      "bytes but it has " + std::to_string(fixture.bytes.size() - 1) + " (truncated?)");
  fixture.save("");
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "",
                     "file is empty");
}

TEST(BadBinary, WrongMagicOrVersion) {
  BinaryFixture fixture;
  fixture.save("num_nodes\t5\n" + std::string(4096, ' '));
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "magic",
                     "not a gnnbed binary workload");
  fixture.patch<std::uint32_t>(8, 2);
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0,
                     "format_version", "version 2, this build reads version 1");
  fixture.patch<std::uint32_t>(8, 1);
  fixture.patch<std::uint32_t>(12, 0x04030201);
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "byte_order",
                     "another byte order");
}

TEST(BadBinary, CountsThatDisagreeWithSectionLengths) {
  BinaryFixture fixture;
  fixture.patch<std::int64_t>(40, 6);  // num_edges
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "sources",
                     "section holds 28 bytes but num_edges implies 24");
  fixture.patch<std::int64_t>(40, 7);
  fixture.patch<std::int64_t>(48, 6);  // num_train > num_nodes
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "num_train",
                     "6 is outside [0, num_nodes = 5]");
}

TEST(BadBinary, IdsOutOfRange) {
  BinaryFixture fixture;
  fixture.patch<std::int32_t>(fixture.u64_at(kSourcesEntry) + 8, 5);
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "sources",
                     "edge 2 has source id 5 outside [0, 5)");
  BinaryFixture labels;
  const std::uint64_t labels_at = labels.u64_at(232 + 16 * 2);
  labels.patch<std::int32_t>(labels_at + 4, 9);
  labels.save(labels.bytes);
  expect_input_error([&] { load_binary_workload(labels.path); }, "tiny.gnnbed", 0, "labels",
                     "node 1 has label 9 outside [-1, 2)");
}

TEST(BadBinary, FeatureValuesThatAreNotFinite) {
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    BinaryFixture fixture;
    const std::uint64_t features_at = fixture.u64_at(232 + 16 * 6);
    fixture.patch<float>(features_at + 4 * (3 * 3 + 1), bad);  // node 3, feature 1
    fixture.save(fixture.bytes);
    expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "features",
                       "node 3 feature 1 is");
  }
}

TEST(BadBinary, NothingHalfWritten) {
  BinaryFixture fixture;
  // A writer that fails after writing half of another valid workload file.
  EXPECT_THROW(write_file_atomically(fixture.path,
                                     [&](std::ostream& out) {
                                       out.write(fixture.bytes.data(), 5000);
                                       throw SystemError("disk vanished");
                                     }),
               SystemError);
  EXPECT_EQ(read_bytes(fixture.path), fixture.bytes);
  EXPECT_EQ(load_binary_workload(fixture.path).num_nodes(), 5);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(fixture.path.parent_path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 2u);  // tiny/ and tiny.gnnbed, no temporary
  // A dataset that cannot be written leaves the earlier file too.
  Dataset unwritable = load_binary_workload(fixture.path);
  unwritable.name = std::string(200, 'n');
  EXPECT_THROW(write_binary_workload(unwritable, fixture.path), Error);
  EXPECT_EQ(read_bytes(fixture.path), fixture.bytes);
}

// ---------------------------------------------------------------- impossible sizes

// GNNBED_MEMORY_LIMIT_BYTES makes "more than memory holds" the same on every machine.
TEST(ImpossibleSizes, AnIdThatMakesMoreNodesThanMemoryHoldsNamesItsLine) {
  const testing::ScopedEnvironment limit(kMemoryLimitVariable, std::to_string(1 << 30));
  TemporaryDirectory dir;
  dir.write("edges.txt", "0 1\n2000000000 3\n4 5\n");
  expect_input_error([&] { load_edge_list(dir.path() / "edges.txt", {}); }, "edges.txt", 2, "",
                     "node id 2000000000 makes 2000000001 nodes");
  expect_input_error([&] { load_edge_list(dir.path() / "edges.txt", {}); }, "edges.txt", 2, "",
                     "more than the 1.0 GiB of memory available (GNNBED_MEMORY_LIMIT_BYTES)");
}

TEST(ImpossibleSizes, AnOgbNodeCountBeyondMemoryNamesItsLine) {
  const testing::ScopedEnvironment limit(kMemoryLimitVariable, std::to_string(1 << 30));
  TemporaryDirectory dir;
  const auto root = write_ogb(dir, {{"raw/num-node-list.csv", "2000000000\n"}});
  expect_input_error([&] { load_ogb(root, {}); }, "num-node-list.csv", 1, "num_nodes",
                     "2000000000 nodes would need");
}

// Within the limit the same file loads: the limit, not the file, refused it above.
TEST(ImpossibleSizes, TheMemoryLimitIsWhatRefusesAFileThatFitsWithoutIt) {
  TemporaryDirectory dir;
  dir.write("edges.txt", "0 1\n100000 3\n");
  {
    const testing::ScopedEnvironment limit(kMemoryLimitVariable, "100000");
    expect_input_error([&] { load_edge_list(dir.path() / "edges.txt", {}); }, "edges.txt", 2, "",
                       "(GNNBED_MEMORY_LIMIT_BYTES)");
  }
  const testing::ScopedEnvironment limit(kMemoryLimitVariable, std::to_string(1 << 30));
  EXPECT_EQ(load_edge_list(dir.path() / "edges.txt", {}).num_nodes(), 100001);
}

TEST(ImpossibleSizes, AMemoryLimitThatIsNotAWholeNumberOfBytesIsNamed) {
  for (const char* value : {"12GB", "-1", "1e9", "99999999999999999999"}) {
    const testing::ScopedEnvironment limit(kMemoryLimitVariable, value);
    try {
      available_memory_bytes();
      ADD_FAILURE() << value << " accepted";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "GNNBED_MEMORY_LIMIT_BYTES");
      EXPECT_NE(std::string(error.what()).find(value), std::string::npos) << error.what();
    }
  }
}

// Generated features are kept as parameters; their class means (num_classes x feature_dim floats)
// are bounded by nothing else in the file. Both sizes are checked before the means are built.
TEST(ImpossibleSizes, GeneratedFeaturesBeyondMemoryAreNamedNotAllocated) {
  const testing::ScopedEnvironment limit(kMemoryLimitVariable, std::to_string(1 << 30));
  BinaryFixture fixture;
  Dataset generated = load_binary_workload(fixture.path);
  generated.features = std::make_shared<const GeneratedFeatures>(3, generated.labels, 0.5f, 7);
  write_binary_workload(generated, fixture.path);
  fixture.bytes = read_bytes(fixture.path);
  const std::string valid = fixture.bytes;
  fixture.patch<std::int32_t>(84, 2'000'000'000);  // feature_dim
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "feature_dim",
                     "generated features' class means (num_classes x feature_dim floats) need");
  // A label far beyond num_classes is named as a label, before it could size the means.
  fixture.bytes = valid;
  fixture.patch<std::int32_t>(fixture.u64_at(232 + 16 * 2), 2'000'000'000);
  fixture.save(fixture.bytes);
  expect_input_error([&] { load_binary_workload(fixture.path); }, "tiny.gnnbed", 0, "labels",
                     "node 0 has label 2000000000");
}

TEST(ImpossibleSizes, MoreClassesThanNodesAreRefused) {
  TemporaryDirectory dir;
  const auto root =
      write_planetoid(dir, {{"meta.tsv",
                             "num_nodes\t5\nnum_features\t3\nnum_classes\t2000000000\n"
                             "num_undirected_edges\t4\nfeature_format\tfeatures_sparse.tsv\n"}});
  expect_input_error([&] { load_planetoid_tsv(root); }, "meta.tsv", 3, "num_classes",
                     "2000000000 is outside [1, 5]");
}

// ---------------------------------------------------------------- messages

TEST(ErrorMessages, AreOneLineWithTheirControlBytesShown) {
  const char raw[] = "value 'gc\0n'\nend";
  const std::string with_nul(raw, sizeof(raw) - 1);
  EXPECT_EQ(std::string(Error(with_nul).what()), "value 'gc\\x00n'\\x0aend");
}

TEST(ErrorMessages, AHugeLineIsCutInTheMiddle) {
  TemporaryDirectory dir;
  const std::string huge(3'000'000, '7');
  const auto root = write_planetoid(dir, {{"edges.tsv", "0\t1\n" + huge + "\t2\n"}});
  try {
    load_planetoid_tsv(root);
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_LT(message.size(), 1100u);
    EXPECT_NE(message.find("edges.tsv:2"), std::string::npos) << "the place stays";
    EXPECT_NE(message.find("bytes cut"), std::string::npos) << message;
    EXPECT_EQ(error.line(), 2);
  }
}

TEST(ErrorMessages, InvalidJsonSaysWhatWasWrong) {
  try {
    parse_json_text("{\"model\": {\"hidden\": N}}", "e.json");
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("e.json:1: field 'column 22': invalid JSON: syntax error"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("invalid literal; last read: '\"hidden\": N'"), std::string::npos)
        << message;
  }
}

// Valid JSON syntax that nlohmann cannot hold (a number beyond a double) is an input error too.
TEST(ErrorMessages, AJsonNumberBeyondADoubleIsAnInputError) {
  try {
    parse_json_text("{\"model\": {\"hidden\": 4294967296e300}}", "e.json");
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.file(), "e.json");
    EXPECT_NE(message.find("unreadable JSON"), std::string::npos) << message;
    EXPECT_NE(message.find("number overflow"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace gnnbed
