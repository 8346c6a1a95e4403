// Graphs of any size: the id permutation and Poisson draws they are built from, R-MAT drawn row by
// row, and the three storages of one graph (memory, memory-mapped file, implicit) giving the same
// lists and the same samples; ids checked on use; the preset cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/binary_format.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/poisson.hpp"
#include "workloads/id_permutation.hpp"
#include "workloads/presets.hpp"
#include "workloads/rmat_rows.hpp"
#include "workloads/sampler.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

std::vector<NodeId> list_of(const Graph& graph, NodeId v) {
  std::vector<NodeId> list(static_cast<std::size_t>(graph.in_degree(v)));
  graph.copy_in_neighbors(v, list.data());
  return list;
}

RmatRowsParams small_rows(std::int64_t nodes, std::int64_t edges) {
  RmatRowsParams params;
  params.num_nodes = nodes;
  params.num_edges = edges;
  params.seed = 11;
  return params;
}

TEST(IdPermutation, IsABijectionAndItsInverseUndoesIt) {
  for (const std::int64_t n : {1, 2, 3, 1000, 4096, 5003}) {
    const IdPermutation permutation(n, 42);
    std::vector<char> hit(static_cast<std::size_t>(n), 0);
    for (std::int64_t id = 0; id < n; ++id) {
      const std::uint64_t image = permutation(static_cast<std::uint64_t>(id));
      ASSERT_LT(image, static_cast<std::uint64_t>(n));
      EXPECT_EQ(hit[image], 0) << "n " << n << " image " << image << " taken twice";
      hit[image] = 1;
      EXPECT_EQ(permutation.inverse(image), static_cast<std::uint64_t>(id));
    }
  }
}

// Sample mean and variance of 200,000 draws lie within 5 standard errors of the mean's; the draws
// are a fixed function of their seeds, so this cannot flake.
TEST(Poisson, DrawsHaveThePoissonMeanAndVarianceAtSmallAndLargeMeans) {
  constexpr int kDraws = 200000;
  for (const double mean : {0.3, 4.0, 9.99, 10.0, 57.5, 12345.0}) {
    double sum = 0;
    double sum_squares = 0;
    for (int i = 0; i < kDraws; ++i) {
      const auto k = static_cast<double>(poisson(mean, static_cast<std::uint64_t>(i) * 7919 + 1));
      ASSERT_GE(k, 0);
      sum += k;
      sum_squares += k * k;
    }
    const double sample_mean = sum / kDraws;
    const double sample_variance = sum_squares / kDraws - sample_mean * sample_mean;
    EXPECT_NEAR(sample_mean, mean, 5 * std::sqrt(mean / kDraws)) << "mean " << mean;
    // The variance of a sample variance is about 2 mean^2 / N (+ mean / N).
    EXPECT_NEAR(sample_variance, mean, 5 * std::sqrt((2 * mean * mean + mean) / kDraws))
        << "mean " << mean;
  }
  EXPECT_EQ(poisson(0.0, 3), 0);
}

TEST(RmatRows, DegreesFollowTheRowMarginalAndEdgesTheirExpectedTotal) {
  const RmatRowsParams params = small_rows(5000, 200000);
  const RmatRowsGenerator generator(params);
  const std::vector<EdgeIndex> offsets = rmat_rows_offsets(generator);
  const auto total = static_cast<double>(offsets.back());
  EXPECT_NEAR(total, 200000.0, 5 * std::sqrt(200000.0));
  // The expected degrees of the in-range rows sum to the expected total exactly.
  const auto levels =
      static_cast<int>(std::bit_width(static_cast<std::uint64_t>(params.num_nodes - 1)));
  double expected_total = 0;
  for (std::uint64_t row = 0; row < static_cast<std::uint64_t>(params.num_nodes); ++row) {
    expected_total += generator.expected_in_degree(std::popcount(row));
  }
  EXPECT_NEAR(expected_total, 200000.0, 1e-6 * 200000.0);
  // The hub (row 0, all zero bits) is the node of largest expected degree; its drawn degree is
  // its own Poisson draw.
  double largest = 0;
  for (int k = 0; k <= levels; ++k) largest = std::max(largest, generator.expected_in_degree(k));
  EXPECT_DOUBLE_EQ(largest, generator.expected_in_degree(0));
  std::int64_t max_degree = 0;
  for (std::size_t v = 0; v + 1 < offsets.size(); ++v) {
    max_degree = std::max(max_degree, offsets[v + 1] - offsets[v]);
  }
  EXPECT_NEAR(static_cast<double>(max_degree), largest, 6 * std::sqrt(largest) + 1);
}

TEST(RmatRows, SourcesAreInRangeNotSelfLoopsAndAsSkewedAsTheDegrees) {
  const RmatRowsParams params = small_rows(3000, 120000);
  const Graph graph = materialized_rmat_rows_graph(params);
  std::vector<std::int64_t> out_degree(static_cast<std::size_t>(graph.num_nodes()), 0);
  std::int64_t self_loops = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    for (const NodeId u : graph.in_neighbors(v)) {
      ASSERT_GE(u, 0);
      ASSERT_LT(u, graph.num_nodes());
      self_loops += u == v;
      ++out_degree[static_cast<std::size_t>(u)];
    }
  }
  EXPECT_EQ(self_loops, 0);
  // With b = c the out-degrees follow the in-degrees' distribution: the largest of each agree.
  std::int64_t max_in = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) max_in = std::max(max_in, graph.in_degree(v));
  const std::int64_t max_out = *std::max_element(out_degree.begin(), out_degree.end());
  EXPECT_NEAR(static_cast<double>(max_out) / static_cast<double>(max_in), 1.0, 0.15);
}

TEST(RmatRows, MemoryFileAndImplicitStoragesHoldTheSameListsAndGiveTheSameSamples) {
  const RmatRowsParams params = small_rows(4000, 100000);
  const Graph in_memory = materialized_rmat_rows_graph(params);
  const Graph implicit = implicit_rmat_rows_graph(params);
  ASSERT_TRUE(implicit.is_implicit());
  ASSERT_FALSE(in_memory.is_implicit());

  TemporaryDirectory directory;
  Dataset dataset;
  dataset.name = "rows";
  dataset.graph = implicit;
  const std::filesystem::path path = directory.path() / "rows.bin";
  std::int64_t last_progress = 0;
  write_binary_workload(dataset, path,
                        [&](std::int64_t done, std::int64_t) { last_progress = done; });
  EXPECT_EQ(last_progress, implicit.num_edges());
  // Checked on use (threshold 0), as a billion-edge file would be.
  const Dataset mapped = load_binary_workload(path, 0);
  EXPECT_EQ(mapped.graph.describe_storage()["source_ids_checked"], "on use");

  ASSERT_EQ(implicit.num_edges(), in_memory.num_edges());
  ASSERT_EQ(mapped.graph.num_edges(), in_memory.num_edges());
  for (NodeId v = 0; v < in_memory.num_nodes(); ++v) {
    const std::vector<NodeId> stored(in_memory.in_neighbors(v).begin(),
                                     in_memory.in_neighbors(v).end());
    ASSERT_EQ(list_of(implicit, v), stored) << "node " << v;
    ASSERT_EQ(list_of(mapped.graph, v), stored) << "node " << v;
  }

  std::vector<NodeId> seeds(500);
  std::iota(seeds.begin(), seeds.end(), NodeId{100});
  for (const Graph* graph : {&implicit, &mapped.graph}) {
    const MiniBatch expected = NeighborSampler(in_memory, {10, 5}, 3).sample(seeds, 9);
    const MiniBatch actual = NeighborSampler(*graph, {10, 5}, 3).sample(seeds, 9);
    for (std::size_t b = 0; b < expected.blocks.size(); ++b) {
      EXPECT_EQ(actual.blocks[b].src_nodes, expected.blocks[b].src_nodes);
      EXPECT_EQ(actual.blocks[b].offsets, expected.blocks[b].offsets);
      EXPECT_EQ(actual.blocks[b].src_index, expected.blocks[b].src_index);
    }
  }
}

TEST(RmatRows, AnImplicitGraphKeepsItsOffsetsInAFileForTheNextRun) {
  TemporaryDirectory directory;
  const std::string file = (directory.path() / "rows.offsets").string();
  const RmatRowsParams params = small_rows(3000, 40000);
  const Graph first = implicit_rmat_rows_graph(params, file, {});
  ASSERT_TRUE(std::filesystem::exists(file));
  const Graph second = implicit_rmat_rows_graph(params, file, {});
  EXPECT_EQ(second.origin(), file) << "mapped from the file, not drawn again";
  const Graph reference = implicit_rmat_rows_graph(params);
  EXPECT_TRUE(std::equal(second.offsets().begin(), second.offsets().end(),
                         reference.offsets().begin(), reference.offsets().end()));
  EXPECT_EQ(list_of(second, 17), list_of(reference, 17));
  RmatRowsParams other = params;
  other.seed = 12;
  try {
    (void)implicit_rmat_rows_graph(other, file, {});
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(error.field(), "header");
  }
  std::filesystem::resize_file(file, 5000);
  EXPECT_THROW((void)implicit_rmat_rows_graph(params, file, {}), InputError);
}

TEST(RmatRows, WholeListAccessToAnImplicitGraphNamesTheGraphAndTheWayOut) {
  const Graph implicit = implicit_rmat_rows_graph(small_rows(100, 500));
  try {
    (void)implicit.sources();
    FAIL() << "expected Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("implicit"), std::string::npos) << message;
    EXPECT_NE(message.find("storage=file"), std::string::npos) << message;
  }
  EXPECT_THROW((void)full_graph_block(implicit), Error);
}

TEST(RmatRows, UnusableParametersNameTheirField) {
  RmatRowsParams params = small_rows(10, 10);
  params.a = 0.9;
  params.b = 0.2;
  try {
    RmatRowsGenerator generator(params);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "rmat.d");
  }
  params = small_rows(10, -1);
  EXPECT_THROW(RmatRowsGenerator{params}, ConfigError);
  params = small_rows(std::int64_t{3} << 31, 10);
  EXPECT_THROW(RmatRowsGenerator{params}, InputError);
}

// A graph whose ids are checked on use: a bad id is found by the sampler when it draws it (from
// inside the parallel drawing, in a batch of many chunks) and by the first whole-list access.
TEST(SourceCheckOnUse, TheSamplerAndWholeListAccessReportABadIdNamingTheFile) {
  std::vector<EdgeIndex> offsets(1001);
  std::vector<NodeId> sources;
  for (NodeId v = 0; v < 1000; ++v) {
    offsets[static_cast<std::size_t>(v)] = static_cast<EdgeIndex>(sources.size());
    sources.push_back((v + 1) % 1000);
  }
  offsets[1000] = static_cast<EdgeIndex>(sources.size());
  sources[777] = 5000;  // node 777's only in-neighbour
  const Graph graph(SharedArray<EdgeIndex>(offsets), SharedArray<NodeId>(sources), "broken.bin",
                    SourceCheck::on_use);
  std::vector<NodeId> seeds(1000);
  std::iota(seeds.begin(), seeds.end(), NodeId{0});
  try {
    (void)NeighborSampler(graph, {1}, 1).sample(seeds, 0);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), "broken.bin");
    EXPECT_EQ(error.field(), "sources");
    EXPECT_NE(std::string(error.what()).find("5000"), std::string::npos);
  }
  std::vector<NodeId> clean_seeds = {1, 2, 3};
  EXPECT_NO_THROW((void)NeighborSampler(graph, {1}, 1).sample(clean_seeds, 0));
  EXPECT_THROW((void)graph.sources(), InputError);
  EXPECT_THROW((void)graph.in_neighbors(3), InputError);
}

TEST(SectionFile, AFileLargerThanTheFreeSpaceIsRefusedBeforeAnythingIsWritten) {
  TemporaryDirectory directory;
  const std::filesystem::path path = directory.path() / "huge.bin";
  try {
    require_free_space(path, std::uint64_t{1} << 62);
    FAIL() << "expected SystemError";
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SectionFile, TemporariesOfDeadWritersAreRemovedAndLiveOnesKept) {
  TemporaryDirectory directory;
  const std::filesystem::path path = directory.path() / "graph.bin";
  // Pid 2^22 + 1 is above Linux's largest pid, so no process has it.
  const auto dead = directory.write(".graph.bin.tmp4194305", "partial");
  const auto live = directory.write(".graph.bin.tmp" + std::to_string(getpid()), "partial");
  const auto other = directory.write(".other.bin.tmp4194305", "partial");
  remove_stale_temporaries(path);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
}

PresetSpec tiny_papers() { return scaled(find_preset("papers-like"), 0.0001); }

TEST(PresetStorage, TheFileStorageGeneratesOnceAndMapsTheCachedFileAfter) {
  TemporaryDirectory directory;
  PresetOptions options;
  options.storage = GraphStorage::file;
  options.cache_directory = directory.path().string();
  const PresetSpec spec = tiny_papers();
  const std::string path = preset_cache_file(spec, 5, options.cache_directory);
  const Dataset first = generate_preset(spec, 5, options);
  ASSERT_TRUE(std::filesystem::exists(path));
  const auto written = std::filesystem::last_write_time(path);
  const Dataset second = generate_preset(spec, 5, options);
  EXPECT_EQ(std::filesystem::last_write_time(path), written);

  PresetOptions in_memory;
  in_memory.storage = GraphStorage::memory;
  const Dataset reference = generate_preset(spec, 5, in_memory);
  ASSERT_EQ(second.graph.num_edges(), reference.graph.num_edges());
  for (NodeId v = 0; v < reference.num_nodes(); ++v) {
    ASSERT_EQ(list_of(second.graph, v), list_of(reference.graph, v));
  }
  EXPECT_EQ(second.split.train, reference.split.train);
  // Another seed or size is another file.
  EXPECT_NE(preset_cache_file(spec, 6, options.cache_directory), path);
  EXPECT_NE(
      preset_cache_file(scaled(find_preset("papers-like"), 0.0002), 5, options.cache_directory),
      path);
}

TEST(PresetStorage, ATruncatedCacheFileIsAnInputErrorNamingIt) {
  TemporaryDirectory directory;
  PresetOptions options;
  options.storage = GraphStorage::file;
  options.cache_directory = directory.path().string();
  const PresetSpec spec = tiny_papers();
  (void)generate_preset(spec, 5, options);
  const std::string path = preset_cache_file(spec, 5, options.cache_directory);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  try {
    (void)generate_preset(spec, 5, options);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), path);
  }
}

TEST(PresetStorage, AutoIsMemoryWhenSmallAndImplicitForBillionEdgePresets) {
  EXPECT_EQ(resolve_storage(find_preset("products-like"), GraphStorage::automatic),
            GraphStorage::memory);
  for (const char* name : {"papers-like", "uk-like", "uk-union-like", "facebook-like"}) {
    EXPECT_EQ(resolve_storage(find_preset(name), GraphStorage::automatic), GraphStorage::implicit)
        << name;
  }
  EXPECT_EQ(resolve_storage(tiny_papers(), GraphStorage::automatic), GraphStorage::memory);
}

TEST(PresetStorage, StorageTheSourceCannotHaveIsAConfigErrorNamingTheField) {
  WorkloadConfig config;
  config.source = "products-like";
  config.scale = 0.001;
  config.storage = "implicit";
  try {
    (void)load_workload(config);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.storage");
  }
  config.source = "cora";
  config.storage = "file";
  EXPECT_THROW((void)load_workload(config), ConfigError);
  config.storage = "disk";
  EXPECT_THROW((void)load_workload(config), ConfigError);
}

}  // namespace
}  // namespace gnnbed
