#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/generators.hpp"
#include "workloads/partition.hpp"
#include "workloads/presets.hpp"

namespace gnnbed {
namespace {

std::vector<EdgeIndex> offsets_of(const Graph& graph) {
  return {graph.offsets().begin(), graph.offsets().end()};
}
std::vector<NodeId> sources_of(const Graph& graph) {
  return {graph.sources().begin(), graph.sources().end()};
}

// Every row strictly increasing (so no duplicates) and without the node itself.
void expect_simple(const Graph& graph) {
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    const auto row = graph.in_neighbors(v);
    for (std::size_t i = 0; i < row.size(); ++i) {
      ASSERT_NE(row[i], v) << "self loop at node " << v;
      if (i > 0) {
        ASSERT_LT(row[i - 1], row[i]) << "row " << v << " unsorted or duplicated";
      }
    }
  }
}

template <typename Body>
void expect_config_error(Body body, const std::string& field) {
  try {
    body();
    FAIL() << "expected ConfigError on field " << field;
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field);
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

RmatParams rmat(std::int64_t nodes, std::int64_t edges, std::uint64_t seed = 7) {
  RmatParams params;
  params.num_nodes = nodes;
  params.num_undirected_edges = edges;
  params.seed = seed;
  return params;
}

TEST(Rmat, ExactEdgeCountSimpleAndSymmetric) {
  // 3000 is not a power of two: ids past it are redrawn.
  const Graph graph = generate_rmat(rmat(3000, 20000));
  EXPECT_EQ(graph.num_nodes(), 3000);
  EXPECT_EQ(graph.num_edges(), 40000);
  EXPECT_TRUE(graph.is_symmetric());
  expect_simple(graph);
}

TEST(Rmat, DeterministicForASeedAndDifferentAcrossSeeds) {
  const Graph first = generate_rmat(rmat(5000, 40000, 11));
  const Graph again = generate_rmat(rmat(5000, 40000, 11));
  const Graph other = generate_rmat(rmat(5000, 40000, 12));
  EXPECT_EQ(offsets_of(first), offsets_of(again));
  EXPECT_EQ(sources_of(first), sources_of(again));
  EXPECT_NE(sources_of(first), sources_of(other));
}

TEST(Rmat, IndependentOfThreadCount) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Graph serial = generate_rmat(rmat(100000, 600000, 3));
  omp_set_num_threads(2);
  const Graph parallel = generate_rmat(rmat(100000, 600000, 3));
  omp_set_num_threads(threads);
  EXPECT_EQ(offsets_of(serial), offsets_of(parallel));
  EXPECT_EQ(sources_of(serial), sources_of(parallel));
}

TEST(Rmat, PowerLawSkewWithHubsSpreadOverIds) {
  const std::int64_t n = 1 << 14;
  const Graph graph = generate_rmat(rmat(n, 16 * n));
  std::vector<NodeId> by_degree(static_cast<std::size_t>(n));
  std::iota(by_degree.begin(), by_degree.end(), 0);
  std::sort(by_degree.begin(), by_degree.end(),
            [&](NodeId x, NodeId y) { return graph.in_degree(x) > graph.in_degree(y); });
  const double average = static_cast<double>(graph.num_edges()) / static_cast<double>(n);
  EXPECT_GT(static_cast<double>(graph.in_degree(by_degree[0])), 20 * average);
  // Unpermuted R-MAT puts every hub among the smallest ids; after the permutation the chance that
  // the 16 largest hubs all land in the lowest eighth of ids is 8^-16.
  EXPECT_TRUE(
      std::any_of(by_degree.begin(), by_degree.begin() + 16, [&](NodeId v) { return v >= n / 8; }));
  // Many nodes have (almost) no edges: the median degree is far below the average.
  EXPECT_LT(static_cast<double>(graph.in_degree(by_degree[static_cast<std::size_t>(n / 2)])),
            average / 2);
}

TEST(Rmat, CompleteGraphOnFewNodesIsReachable) {
  const Graph graph = generate_rmat(rmat(8, 28));
  EXPECT_EQ(graph.num_edges(), 56);
  for (NodeId v = 0; v < 8; ++v) EXPECT_EQ(graph.in_degree(v), 7);
}

TEST(Rmat, EmptyAndTinyGraphs) {
  EXPECT_EQ(generate_rmat(rmat(0, 0)).num_nodes(), 0);
  const Graph single = generate_rmat(rmat(1, 0));
  EXPECT_EQ(single.num_nodes(), 1);
  EXPECT_EQ(single.num_edges(), 0);
  const Graph pair = generate_rmat(rmat(2, 1));
  EXPECT_EQ(sources_of(pair), (std::vector<NodeId>{1, 0}));
}

TEST(Rmat, RejectsImpossibleRequests) {
  expect_config_error([] { generate_rmat(rmat(8, 29)); }, "rmat.num_undirected_edges");
  expect_config_error([] { generate_rmat(rmat(100, -1)); }, "rmat.num_undirected_edges");
  RmatParams bad = rmat(100, 10);
  bad.a = 0.9;  // d = 1 - 0.9 - 0.19 - 0.19 < 0
  expect_config_error([&] { generate_rmat(bad); }, "rmat.d");
  bad.a = -0.1;
  expect_config_error([&] { generate_rmat(bad); }, "rmat.a");
  EXPECT_THROW(generate_rmat(rmat(-5, 0)), InputError);
}

TEST(Rmat, TooDenseForTheSkewIsAConfigError) {
  // Every node pair is allowed, but with an extreme skew the far corner of the adjacency matrix
  // is essentially never drawn: the generator must give up with a clear error, not loop forever.
  RmatParams skewed = rmat(256, 256 * 255 / 2);
  skewed.a = 0.97;
  skewed.b = 0.01;
  skewed.c = 0.01;
  expect_config_error([&] { generate_rmat(skewed); }, "rmat.num_undirected_edges");
}

double same_community_share(const Graph& graph, const std::vector<std::int32_t>& community) {
  std::int64_t same = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    for (const NodeId u : graph.in_neighbors(v))
      same += community[static_cast<std::size_t>(u)] == community[static_cast<std::size_t>(v)];
  }
  return static_cast<double>(same) / static_cast<double>(graph.num_edges());
}

RmatParams with_communities(RmatParams params, int count, double homophily) {
  params.num_communities = count;
  params.edge_homophily = homophily;
  return params;
}

TEST(Rmat, CommunitiesJoinTheAskedShareOfEdgesAndKeepTheSkew) {
  const std::int64_t n = 1 << 14;
  const RmatParams params = with_communities(rmat(n, 16 * n), 8, 0.8);
  const Graph graph = generate_rmat(params);
  expect_simple(graph);
  EXPECT_TRUE(graph.is_symmetric());
  EXPECT_EQ(graph.num_edges(), 32 * n);
  const std::vector<std::int32_t> community = rmat_communities(params);
  std::vector<std::int64_t> sizes(8, 0);
  for (const std::int32_t c : community) ++sizes[static_cast<std::size_t>(c)];
  EXPECT_EQ(*std::min_element(sizes.begin(), sizes.end()), n / 8);
  EXPECT_EQ(*std::max_element(sizes.begin(), sizes.end()), n / 8);
  // Exactly round(0.8 M) of the M undirected edges, each two CSR entries.
  EXPECT_DOUBLE_EQ(same_community_share(graph, community),
                   static_cast<double>(2 * std::llround(0.8 * 16 * n)) / (32.0 * n));
  // No edge is left where R-MAT's correlated low bits would put it: 0 means none inside.
  EXPECT_EQ(
      same_community_share(generate_rmat(with_communities(rmat(n, 16 * n), 8, 0.0)), community),
      0.0);
  const double average = static_cast<double>(graph.num_edges()) / static_cast<double>(n);
  std::int64_t largest = 0;
  for (NodeId v = 0; v < n; ++v) largest = std::max<std::int64_t>(largest, graph.in_degree(v));
  EXPECT_GT(static_cast<double>(largest), 20 * average);
  EXPECT_EQ(sources_of(graph), sources_of(generate_rmat(params)));
}

TEST(Rmat, MetisCutsAlongCommunitiesAndFindsNoneInPlainRmat) {
  const std::int64_t n = 1 << 14;
  const auto metis = make_partitioner("metis");
  auto cut = [&](const RmatParams& params) {
    return run_partitioner(*metis, generate_rmat(params), 4, 1).report.edge_cut_fraction;
  };
  // 8 communities joined by 90 % of the edges fit 4 parts two by two: about 3/4 of the other
  // 10 % cross parts. Without communities a 4-way cut keeps little more than hash's 1/4 inside.
  EXPECT_LT(cut(with_communities(rmat(n, 8 * n), 8, 0.9)), 0.15);
  EXPECT_GT(cut(rmat(n, 8 * n)), 0.4);
}

TEST(Rmat, RejectsCommunitiesItCannotPlace) {
  expect_config_error([] { generate_rmat(with_communities(rmat(10, 20), 11, 0.5)); },
                      "rmat.num_communities");
  expect_config_error([] { generate_rmat(with_communities(rmat(100, 200), 4, -0.2)); },
                      "rmat.edge_homophily");
  expect_config_error([] { generate_rmat(with_communities(rmat(100, 200), 4, 1.5)); },
                      "rmat.edge_homophily");
  expect_config_error([] { rmat_communities(with_communities(rmat(100, 200), -1, 0.5)); },
                      "rmat.num_communities");
  EXPECT_EQ(rmat_communities(rmat(5, 4)), std::vector<std::int32_t>(5, 0));
}

TEST(Labels, UniformDeterministicAndInRange) {
  const auto labels = generate_labels(100000, 10, 5);
  EXPECT_EQ(labels, generate_labels(100000, 10, 5));
  EXPECT_NE(labels, generate_labels(100000, 10, 6));
  std::vector<int> counts(10, 0);
  for (const auto label : labels) {
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 10);
    ++counts[static_cast<std::size_t>(label)];
  }
  for (const int count : counts) {
    EXPECT_GT(count, 9400);
    EXPECT_LT(count, 10600);
  }
  expect_config_error([] { generate_labels(10, 0, 1); }, "num_classes");
}

CsbmParams csbm(std::int64_t nodes, std::uint64_t seed = 21) {
  CsbmParams params;
  params.num_nodes = nodes;
  params.average_degree = 10;
  params.num_classes = 4;
  params.homophily = 0.8;
  params.feature_dim = 16;
  params.feature_signal = 0.5f;
  params.seed = seed;
  return params;
}

TEST(Csbm, ShapeCountsAndSplit) {
  const Dataset dataset = generate_csbm(csbm(10001));
  EXPECT_EQ(dataset.name, "csbm");
  EXPECT_EQ(dataset.num_nodes(), 10001);
  EXPECT_EQ(dataset.graph.num_edges(), 2 * 50005);  // 10001 * 10 / 2 undirected edges
  EXPECT_TRUE(dataset.graph.is_symmetric());
  expect_simple(dataset.graph);
  EXPECT_EQ(dataset.num_classes, 4);
  EXPECT_EQ(dataset.feature_dim(), 16);
  EXPECT_EQ(dataset.split.train.size(), 1000u);
  EXPECT_EQ(dataset.split.val.size(), 1000u);
  EXPECT_EQ(dataset.split.test.size(), 2000u);
  EXPECT_NO_THROW(dataset.validate("csbm"));
}

TEST(Csbm, HomophilyIsWhatWasAskedAndNeighboursPredictLabels) {
  const Dataset dataset = generate_csbm(csbm(20000));
  const Graph& graph = dataset.graph;
  std::int64_t same = 0;
  std::int64_t majority_correct = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    int votes[4] = {0, 0, 0, 0};
    for (const NodeId u : graph.in_neighbors(v)) {
      ++votes[dataset.labels[static_cast<std::size_t>(u)]];
      same += dataset.labels[static_cast<std::size_t>(u)] ==
              dataset.labels[static_cast<std::size_t>(v)];
    }
    const auto best = static_cast<int>(std::max_element(votes, votes + 4) - votes);
    majority_correct +=
        graph.in_degree(v) > 0 && best == dataset.labels[static_cast<std::size_t>(v)];
  }
  EXPECT_NEAR(static_cast<double>(same) / static_cast<double>(graph.num_edges()), 0.8, 0.02);
  // Chance is 1/4; a majority vote over ~10 neighbours that agree 80 % of the time is nearly
  // always right.
  EXPECT_GT(static_cast<double>(majority_correct) / static_cast<double>(graph.num_nodes()), 0.85);
}

TEST(Csbm, NoHomophilyGivesNoSameClassEdges) {
  CsbmParams params = csbm(5000);
  params.homophily = 0;
  const Dataset dataset = generate_csbm(params);
  for (NodeId v = 0; v < dataset.graph.num_nodes(); ++v) {
    for (const NodeId u : dataset.graph.in_neighbors(v)) {
      ASSERT_NE(dataset.labels[static_cast<std::size_t>(u)],
                dataset.labels[static_cast<std::size_t>(v)]);
    }
  }
}

// Mean of every feature column over the nodes of each class.
std::vector<std::vector<double>> class_means(const Dataset& dataset) {
  const int dim = dataset.feature_dim();
  std::vector<NodeId> all(static_cast<std::size_t>(dataset.num_nodes()));
  std::iota(all.begin(), all.end(), 0);
  std::vector<float> values(all.size() * static_cast<std::size_t>(dim));
  dataset.features->gather(all, values.data());
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(dataset.num_classes),
                                        std::vector<double>(static_cast<std::size_t>(dim), 0));
  std::vector<double> counts(static_cast<std::size_t>(dataset.num_classes), 0);
  for (std::size_t v = 0; v < all.size(); ++v) {
    const auto c = static_cast<std::size_t>(dataset.labels[v]);
    counts[c] += 1;
    for (std::size_t j = 0; j < static_cast<std::size_t>(dim); ++j) {
      sums[c][j] += values[v * static_cast<std::size_t>(dim) + j];
    }
  }
  for (std::size_t c = 0; c < sums.size(); ++c) {
    for (double& sum : sums[c]) sum /= counts[c];
  }
  return sums;
}

TEST(Csbm, FeatureClassMeansSeparate) {
  const Dataset dataset = generate_csbm(csbm(20000));
  const auto means = class_means(dataset);
  // ~5000 nodes per class: the noise in a class mean has standard deviation 0.014.
  for (const auto& mean : means) {
    for (const double m : mean) EXPECT_NEAR(std::abs(m), 0.5, 0.08);
  }
  // Classes differ in the sign of some columns (all 16 agreeing has probability 2^-16).
  int differing = 0;
  for (std::size_t j = 0; j < means[0].size(); ++j)
    differing += (means[0][j] > 0) != (means[1][j] > 0);
  EXPECT_GT(differing, 0);

  CsbmParams noise = csbm(20000);
  noise.feature_signal = 0;
  for (const auto& mean : class_means(generate_csbm(noise))) {
    for (const double m : mean) EXPECT_LT(std::abs(m), 0.08);
  }
}

TEST(Csbm, DeterministicForASeed) {
  const Dataset first = generate_csbm(csbm(3000, 4));
  const Dataset again = generate_csbm(csbm(3000, 4));
  const Dataset other = generate_csbm(csbm(3000, 5));
  EXPECT_EQ(sources_of(first.graph), sources_of(again.graph));
  EXPECT_EQ(first.split.train, again.split.train);
  EXPECT_TRUE(std::equal(first.labels.begin(), first.labels.end(), again.labels.begin()));
  EXPECT_NE(sources_of(first.graph), sources_of(other.graph));
  EXPECT_NE(first.split.train, other.split.train);
}

TEST(Csbm, RejectsBadParameters) {
  CsbmParams params = csbm(100);
  params.homophily = 1.5;
  expect_config_error([&] { generate_csbm(params); }, "csbm.homophily");
  params = csbm(100);
  params.num_classes = 0;
  expect_config_error([&] { generate_csbm(params); }, "csbm.num_classes");
  params = csbm(100);
  params.train_fraction = 0.7;
  params.test_fraction = 0.5;
  expect_config_error([&] { generate_csbm(params); }, "csbm.test_fraction");
  params = csbm(10);
  params.average_degree = 20;  // 100 edges on 10 nodes: at most 45 exist
  expect_config_error([&] { generate_csbm(params); }, "csbm.average_degree");
}

TEST(Presets, PaperSizedCounts) {
  const PresetSpec& products = find_preset("products-like");
  EXPECT_EQ(products.num_nodes, 2449029);
  EXPECT_EQ(products.num_undirected_edges, 61859140);
  EXPECT_EQ(products.feature_dim, 100);
  EXPECT_EQ(products.num_classes, 47);
  EXPECT_EQ(products.num_train, 196615);
  EXPECT_EQ(products.num_val, 39323);
  EXPECT_EQ(products.num_test, 2213091);
  const PresetSpec& papers = find_preset("papers-like");
  EXPECT_EQ(papers.num_nodes, 111059956);
  EXPECT_EQ(papers.num_undirected_edges, 1615685872);
  EXPECT_EQ(papers.num_classes, 172);
  EXPECT_EQ(papers.num_train + papers.num_val + papers.num_test, 1207179 + 125265 + 214338);
  const PresetSpec& uk = find_preset("uk-like");
  EXPECT_EQ(uk.num_nodes, 77741046);
  EXPECT_EQ(uk.num_undirected_edges, 2965197340);
  EXPECT_EQ(uk.feature_dim, 256);
  EXPECT_EQ(uk.num_classes, 64);
  EXPECT_EQ(uk.num_train, 845015);  // papers' 1.087 % of nodes
  EXPECT_EQ(uk.num_val, 87684);
  EXPECT_EQ(uk.num_test, 150035);
  const PresetSpec& facebook = find_preset("facebook-like");
  EXPECT_EQ(facebook.num_nodes, 30700000);
  EXPECT_EQ(facebook.num_undirected_edges, 10000000000);
  EXPECT_EQ(facebook.num_train, 333697);
  const PresetSpec& uk_union = find_preset("uk-union-like");
  EXPECT_EQ(uk_union.num_nodes, 133633040);
  EXPECT_EQ(uk_union.num_undirected_edges, 5507679822);
  EXPECT_EQ(uk_union.feature_dim, 256);
  EXPECT_EQ(presets().size(), 5u);
  for (const PresetSpec& spec : presets()) EXPECT_FALSE(spec.modelled_on.empty());
}

TEST(Presets, UnknownNameListsTheKnownOnes) {
  try {
    find_preset("reddit-like");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "preset");
    const std::string message = error.what();
    EXPECT_NE(message.find("reddit-like"), std::string::npos);
    EXPECT_NE(message.find("products-like"), std::string::npos);
    EXPECT_NE(message.find("facebook-like"), std::string::npos);
  }
}

TEST(Presets, ScaledCounts) {
  const PresetSpec& products = find_preset("products-like");
  const PresetSpec small = scaled(products, 0.001);
  EXPECT_EQ(small.name, "products-like@0.001");
  EXPECT_EQ(small.num_nodes, 2449);
  EXPECT_EQ(small.num_undirected_edges, 61859);
  EXPECT_EQ(small.num_train, 197);
  EXPECT_EQ(small.num_val, 39);
  EXPECT_EQ(small.num_test, 2213);
  EXPECT_EQ(small.feature_dim, 100);
  EXPECT_EQ(scaled(products, 1.0).name, "products-like");

  // At a tiny scale the counts are clamped to what the graph can hold.
  const PresetSpec tiny = scaled(products, 1e-7);
  EXPECT_EQ(tiny.num_nodes, 1);
  EXPECT_EQ(tiny.num_undirected_edges, 0);
  EXPECT_LE(tiny.num_train + tiny.num_val + tiny.num_test, 1);
  const PresetSpec few = scaled(products, 2e-6);  // 5 nodes, 124 edges requested
  EXPECT_EQ(few.num_nodes, 5);
  EXPECT_EQ(few.num_undirected_edges, 10);
  EXPECT_LE(few.num_train + few.num_val + few.num_test, 5);

  expect_config_error([&] { scaled(products, 0); }, "scale");
  expect_config_error([&] { scaled(products, -1); }, "scale");
  expect_config_error([&] { scaled(products, 1000); }, "scale");
}

TEST(Presets, GeneratedPresetMatchesItsSpec) {
  const PresetSpec spec = scaled(find_preset("products-like"), 0.001);
  const Dataset dataset = generate_preset(spec, 9);
  EXPECT_EQ(dataset.name, "products-like@0.001");
  EXPECT_EQ(dataset.num_nodes(), spec.num_nodes);
  EXPECT_EQ(dataset.graph.num_edges(), 2 * spec.num_undirected_edges);
  EXPECT_TRUE(dataset.graph.is_symmetric());
  expect_simple(dataset.graph);
  EXPECT_EQ(dataset.feature_dim(), 100);
  EXPECT_EQ(dataset.num_classes, 47);
  EXPECT_EQ(static_cast<std::int64_t>(dataset.split.train.size()), spec.num_train);
  EXPECT_EQ(static_cast<std::int64_t>(dataset.split.val.size()), spec.num_val);
  EXPECT_EQ(static_cast<std::int64_t>(dataset.split.test.size()), spec.num_test);
  EXPECT_EQ(dataset.features->describe().at("signal"), 0.25f);
  EXPECT_NO_THROW(dataset.validate("preset"));

  const Dataset again = generate_preset(spec, 9);
  EXPECT_EQ(sources_of(dataset.graph), sources_of(again.graph));
  EXPECT_EQ(dataset.split.test, again.split.test);
  EXPECT_NE(sources_of(dataset.graph), sources_of(generate_preset(spec, 10).graph));
}

TEST(Presets, ProductsClassesAreItsCommunities) {
  PresetSpec spec = scaled(find_preset("products-like"), 0.02);
  const Dataset dataset = generate_preset(spec, 3);
  const std::vector<std::int32_t> labels(dataset.labels.span().begin(),
                                         dataset.labels.span().end());
  EXPECT_NEAR(same_community_share(dataset.graph, labels), spec.edge_homophily, 1e-6);
  spec.edge_homophily = 0;
  const Dataset independent = generate_preset(spec, 3);
  const std::vector<std::int32_t> uniform(independent.labels.span().begin(),
                                          independent.labels.span().end());
  EXPECT_NEAR(same_community_share(independent.graph, uniform), 1.0 / 47, 0.01);

  spec.edge_homophily = 1.01;
  expect_config_error([&] { generate_preset(spec, 3); }, "workload.edge_homophily");
  PresetSpec papers = scaled(find_preset("papers-like"), 0.0001);
  papers.edge_homophily = 0.5;
  expect_config_error([&] { generate_preset(papers, 3); }, "workload.edge_homophily");
}

}  // namespace
}  // namespace gnnbed
