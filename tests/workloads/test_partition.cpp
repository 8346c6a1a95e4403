#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/generators.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

template <typename Body>
void expect_config_error(Body body, const std::string& field, const std::string& mentions = "") {
  try {
    body();
    FAIL() << "expected ConfigError on field " << field;
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field);
    EXPECT_NE(std::string(error.what()).find(mentions), std::string::npos) << error.what();
  }
}

Graph undirected(std::int64_t num_nodes, const std::vector<std::pair<NodeId, NodeId>>& edges) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (const auto& [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  return build_graph(num_nodes, src, dst, EdgeListOptions{}, "test graph");
}

Graph directed(std::int64_t num_nodes, const std::vector<std::pair<NodeId, NodeId>>& edges) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (const auto& [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  EdgeListOptions options;
  options.symmetrize = false;
  return build_graph(num_nodes, src, dst, options, "test graph");
}

// Two 5-cliques {0..4} and {5..9} joined by the bridge 4 - 5.
std::vector<std::pair<NodeId, NodeId>> two_cliques() {
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (const NodeId base : {0, 5}) {
    for (NodeId i = 0; i < 5; ++i) {
      for (NodeId j = i + 1; j < 5; ++j) edges.emplace_back(base + i, base + j);
    }
  }
  edges.emplace_back(4, 5);
  return edges;
}

Graph grid(NodeId side) {
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (NodeId r = 0; r < side; ++r) {
    for (NodeId c = 0; c < side; ++c) {
      const NodeId v = r * side + c;
      if (c + 1 < side) edges.emplace_back(v, v + 1);
      if (r + 1 < side) edges.emplace_back(v, v + side);
    }
  }
  return undirected(static_cast<std::int64_t>(side) * side, edges);
}

TEST(HashPartition, DeterministicAndBalanced) {
  const NodePartition partition = NodePartition::hashed(100000, 4, 17);
  const NodePartition again = NodePartition::hashed(100000, 4, 17);
  const NodePartition other = NodePartition::hashed(100000, 4, 18);
  EXPECT_TRUE(partition.is_hashed());
  EXPECT_EQ(partition.num_parts(), 4);
  EXPECT_EQ(partition.num_nodes(), 100000);
  std::vector<std::int64_t> counts(4, 0);
  int differ = 0;
  for (NodeId v = 0; v < 100000; ++v) {
    const int owner = partition.owner(v);
    ASSERT_GE(owner, 0);
    ASSERT_LT(owner, 4);
    ASSERT_EQ(owner, again.owner(v));
    differ += owner != other.owner(v);
    ++counts[static_cast<std::size_t>(owner)];
  }
  EXPECT_GT(differ, 50000);  // about 3/4 of the nodes move under another seed
  for (const std::int64_t count : counts) EXPECT_NEAR(static_cast<double>(count), 25000, 750);

  std::vector<NodeId> all;
  for (int p = 0; p < 4; ++p) {
    const std::vector<NodeId> nodes = partition.nodes_of(p);
    EXPECT_EQ(static_cast<std::int64_t>(nodes.size()), counts[static_cast<std::size_t>(p)]);
    EXPECT_TRUE(std::is_sorted(nodes.begin(), nodes.end()));
    for (const NodeId v : nodes) EXPECT_EQ(partition.owner(v), p);
    all.insert(all.end(), nodes.begin(), nodes.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<NodeId> expected(100000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(NodePartition, ExplicitOwnersAreValidated) {
  const NodePartition partition = NodePartition::explicit_owners(3, {0, 2, 1, 2});
  EXPECT_FALSE(partition.is_hashed());
  EXPECT_EQ(partition.num_nodes(), 4);
  EXPECT_EQ(partition.owner(1), 2);
  EXPECT_EQ(partition.nodes_of(2), (std::vector<NodeId>{1, 3}));
  expect_config_error(
      [] {
        NodePartition::explicit_owners(3, {0, 1, 3, 0});
      },
      "partition.owners", "node 2 has owner 3");
  expect_config_error(
      [] {
        NodePartition::explicit_owners(3, {0, -1});
      },
      "partition.owners", "node 1 has owner -1");
  expect_config_error([] { NodePartition::explicit_owners(0, {}); }, "num_parts");
  expect_config_error([] { NodePartition::hashed(10, 0, 1); }, "num_parts");
  expect_config_error([] { NodePartition::hashed(-1, 2, 1); }, "num_nodes");
  expect_config_error([&] { partition.nodes_of(3); }, "part");
}

TEST(Partitioners, RegistryByName) {
  EXPECT_EQ(partitioner_names(), (std::vector<std::string>{"hash", "metis", "contiguous"}));
  for (const std::string& name : partitioner_names()) {
    EXPECT_EQ(make_partitioner(name)->name(), name);
  }
  expect_config_error([] { make_partitioner("random-walk"); }, "partitioner", "hash, metis");
}

TEST(Partitioners, ContiguousGivesEveryPartAnEqualRangeOfConsecutiveIds) {
  const Graph graph = build_graph(10, std::vector<NodeId>{0}, std::vector<NodeId>{1}, {}, "ten");
  const NodePartition partition = make_partitioner("contiguous")->partition(graph, 3, 1);
  std::vector<int> owners;
  for (NodeId v = 0; v < 10; ++v) owners.push_back(partition.owner(v));
  EXPECT_EQ(owners, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
}

TEST(Partitioners, RunPartitionerReportsTheMethod) {
  const Graph graph = grid(20);
  const PartitionResult result = run_partitioner(*make_partitioner("hash"), graph, 4, 3);
  EXPECT_TRUE(result.partition.is_hashed());
  EXPECT_EQ(result.report.method, "hash");
  EXPECT_EQ(result.report.num_parts, 4);
  EXPECT_GE(result.report.seconds, 0);
  EXPECT_EQ(std::accumulate(result.report.nodes_per_part.begin(),
                            result.report.nodes_per_part.end(), std::int64_t{0}),
            400);
}

TEST(Metis, CutsTheBridgeBetweenTwoCliques) {
  const Graph graph = undirected(10, two_cliques());
  const PartitionResult result = run_partitioner(*make_partitioner("metis"), graph, 2, 1);
  const NodePartition& partition = result.partition;
  for (NodeId v = 1; v < 5; ++v) EXPECT_EQ(partition.owner(v), partition.owner(0));
  for (NodeId v = 6; v < 10; ++v) EXPECT_EQ(partition.owner(v), partition.owner(5));
  EXPECT_NE(partition.owner(0), partition.owner(5));
  EXPECT_EQ(result.report.edge_cut, 2);  // the bridge's two CSR entries
  EXPECT_EQ(result.report.method, "metis");
  EXPECT_DOUBLE_EQ(result.report.node_balance, 1.0);
}

TEST(Metis, SymmetrizesADirectedGraph) {
  // Only one direction of every edge is stored; METIS still sees the two cliques.
  const Graph graph = directed(10, two_cliques());
  ASSERT_FALSE(graph.is_symmetric());
  const PartitionResult result = run_partitioner(*make_partitioner("metis"), graph, 2, 1);
  EXPECT_NE(result.partition.owner(0), result.partition.owner(5));
  EXPECT_EQ(result.report.edge_cut, 1);
}

TEST(Metis, SelfLoopsAreIgnored) {
  std::vector<std::pair<NodeId, NodeId>> edges = two_cliques();
  for (NodeId v = 0; v < 10; ++v) edges.emplace_back(v, v);
  const Graph graph = undirected(10, edges);
  const PartitionResult result = run_partitioner(*make_partitioner("metis"), graph, 2, 1);
  EXPECT_EQ(result.report.edge_cut, 2);
}

TEST(Metis, OnePartNeedsNoMetis) {
  const Graph graph = grid(5);
  const NodePartition partition = make_partitioner("metis")->partition(graph, 1, 1);
  EXPECT_EQ(partition.num_nodes(), 25);
  for (NodeId v = 0; v < 25; ++v) EXPECT_EQ(partition.owner(v), 0);
  expect_config_error([&] { make_partitioner("metis")->partition(graph, 0, 1); }, "num_parts");
}

TEST(Metis, BeatsHashOnAGridAndIsDeterministic) {
  const Graph graph = grid(60);
  const PartitionResult metis = run_partitioner(*make_partitioner("metis"), graph, 4, 5);
  const PartitionResult hash = run_partitioner(*make_partitioner("hash"), graph, 4, 5);
  // A 60 x 60 grid in 4 blocks cuts about 2 x 60 edges (240 entries); a random assignment cuts
  // 3/4 of all 14160 entries.
  EXPECT_LT(metis.report.edge_cut, 400);
  EXPECT_GT(hash.report.edge_cut, 10000);
  EXPECT_LT(metis.report.replication_factor, hash.report.replication_factor);
  EXPECT_LE(metis.report.node_balance, 1.05);
  const NodePartition again = make_partitioner("metis")->partition(graph, 4, 5);
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    ASSERT_EQ(again.owner(v), metis.partition.owner(v));
  }
}

TEST(Metis, BeatsHashOnAHomophilousCsbm) {
  CsbmParams params;
  params.num_nodes = 20000;
  params.num_classes = 4;
  params.homophily = 0.9;
  const Dataset dataset = generate_csbm(params);
  const PartitionResult metis = run_partitioner(*make_partitioner("metis"), dataset.graph, 4, 1);
  const PartitionResult hash = run_partitioner(*make_partitioner("hash"), dataset.graph, 4, 1);
  EXPECT_LT(metis.report.edge_cut_fraction, 0.5 * hash.report.edge_cut_fraction);
}

TEST(PartitionReport, ExactMetricsOnAHandMadeGraph) {
  // Directed edges 0->1, 0->2, 1->2, 2->3, 3->4, 4->0, 0->3; owners 0 0 1 1 2.
  const Graph graph = directed(5, {{0, 1}, {0, 2}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 3}});
  const NodePartition partition = NodePartition::explicit_owners(3, {0, 0, 1, 1, 2});
  const PartitionReport report = evaluate_partition(graph, partition, "by hand", 0.5);
  EXPECT_EQ(report.method, "by hand");
  EXPECT_EQ(report.num_parts, 3);
  EXPECT_DOUBLE_EQ(report.seconds, 0.5);
  // Cut: 0->2, 1->2, 3->4, 4->0, 0->3.
  EXPECT_EQ(report.edge_cut, 5);
  EXPECT_DOUBLE_EQ(report.edge_cut_fraction, 5.0 / 7.0);
  EXPECT_EQ(report.nodes_per_part, (std::vector<std::int64_t>{2, 2, 1}));
  // In-edges: part 0 holds 4->0, 0->1; part 1 holds 0->2, 1->2, 2->3, 0->3; part 2 holds 3->4.
  EXPECT_EQ(report.edges_per_part, (std::vector<std::int64_t>{2, 4, 1}));
  EXPECT_DOUBLE_EQ(report.node_balance, 2.0 / (5.0 / 3.0));
  EXPECT_DOUBLE_EQ(report.edge_balance, 4.0 / (7.0 / 3.0));
  // Halo copies: (0 in part 1) once although 0 has two out-neighbours there, (1 in part 1),
  // (3 in part 2), (4 in part 0).
  EXPECT_DOUBLE_EQ(report.replication_factor, (5.0 + 4.0) / 5.0);

  const nlohmann::json json = report.to_json();
  EXPECT_EQ(json.at("edge_cut"), 5);
  EXPECT_EQ(json.at("method"), "by hand");
  EXPECT_EQ(json.at("edges_per_part"), nlohmann::json::array({2, 4, 1}));
  EXPECT_DOUBLE_EQ(json.at("replication_factor").get<double>(), 1.8);
}

TEST(PartitionReport, OnePartHasNoCutAndNoCopies) {
  const Graph graph = grid(10);
  const PartitionReport report =
      evaluate_partition(graph, NodePartition::hashed(100, 1, 1), "hash", 0);
  EXPECT_EQ(report.edge_cut, 0);
  EXPECT_DOUBLE_EQ(report.replication_factor, 1.0);
  EXPECT_DOUBLE_EQ(report.node_balance, 1.0);
  EXPECT_EQ(report.edges_per_part, (std::vector<std::int64_t>{graph.num_edges()}));
}

TEST(PartitionReport, HashedEqualsTheSameOwnersGivenExplicitly) {
  const Graph graph = grid(30);
  const NodePartition hashed = NodePartition::hashed(graph.num_nodes(), 3, 8);
  std::vector<std::int32_t> owners;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) owners.push_back(hashed.owner(v));
  const PartitionReport a = evaluate_partition(graph, hashed, "hash", 0);
  const PartitionReport b =
      evaluate_partition(graph, NodePartition::explicit_owners(3, owners), "hash", 0);
  EXPECT_EQ(a.to_json(), b.to_json());
  // Brute force replication: for every node the set of other parts among its out-neighbours.
  std::int64_t copies = 0;
  for (NodeId u = 0; u < graph.num_nodes(); ++u) {
    std::vector<int> parts;
    for (const NodeId v : graph.in_neighbors(u)) {  // symmetric: in-neighbours = out-neighbours
      if (hashed.owner(v) != hashed.owner(u)) parts.push_back(hashed.owner(v));
    }
    std::sort(parts.begin(), parts.end());
    copies += std::unique(parts.begin(), parts.end()) - parts.begin();
  }
  EXPECT_DOUBLE_EQ(a.replication_factor, static_cast<double>(900 + copies) / 900.0);
}

TEST(PartitionReport, RejectsAPartitionOfAnotherSize) {
  const Graph graph = grid(4);
  expect_config_error(
      [&] { evaluate_partition(graph, NodePartition::hashed(15, 2, 1), "hash", 0); }, "partition",
      "15 nodes");
}

TEST(FeatureColumnSplit, RangesWidthsAndBytes) {
  const FeatureColumnSplit split(100, 3);
  EXPECT_EQ(split.dim(), 100);
  EXPECT_EQ(split.num_parts(), 3);
  EXPECT_EQ(split.begin(0), 0);
  EXPECT_EQ(split.end(0), 34);
  EXPECT_EQ(split.begin(1), 34);
  EXPECT_EQ(split.end(1), 67);
  EXPECT_EQ(split.begin(2), 67);
  EXPECT_EQ(split.end(2), 100);
  EXPECT_EQ(split.width(0), 34);
  EXPECT_EQ(split.width(2), 33);
  EXPECT_EQ(split.bytes(0, 1000), 34 * 1000 * 4);
  EXPECT_EQ(split.bytes(1, 2449029), std::int64_t{33} * 2449029 * 4);

  const FeatureColumnSplit even(128, 4);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(even.width(p), 32);

  const nlohmann::json json = split.to_json(10);
  EXPECT_EQ(json.at("parts").size(), 3u);
  EXPECT_EQ(json.at("parts")[1].at("column_begin"), 34);
  EXPECT_EQ(json.at("parts")[1].at("bytes"), 33 * 10 * 4);

  expect_config_error([] { FeatureColumnSplit(100, 0); }, "num_parts");
  // More parts than columns: one column each for the first three, none for the last.
  const FeatureColumnSplit narrow(3, 4);
  EXPECT_EQ(narrow.begin(2), 2);
  EXPECT_EQ(narrow.width(2), 1);
  EXPECT_EQ(narrow.begin(3), 3);
  EXPECT_EQ(narrow.width(3), 0);
  EXPECT_EQ(narrow.bytes(3, 1000), 0);
  expect_config_error([] { FeatureColumnSplit(-1, 4); }, "feature_dim");
  expect_config_error([&] { (void)split.begin(3); }, "part");
  expect_config_error([&] { (void)split.end(-1); }, "part");
}

}  // namespace
}  // namespace gnnbed
