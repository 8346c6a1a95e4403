#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {
namespace {

struct Edges {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
};

// 0->1, 1->2, 2->0, a repeated 0->1 and a self loop 1->1.
Edges small_edges() { return {{0, 1, 2, 0, 1}, {1, 2, 0, 1, 1}}; }

EdgeListOptions options(bool symmetrize, bool drop_self_loops, bool deduplicate) {
  EdgeListOptions result;
  result.symmetrize = symmetrize;
  result.drop_self_loops = drop_self_loops;
  result.deduplicate = deduplicate;
  return result;
}

std::vector<std::vector<NodeId>> rows(const Graph& graph) {
  std::vector<std::vector<NodeId>> result;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    const auto row = graph.in_neighbors(v);
    result.emplace_back(row.begin(), row.end());
  }
  return result;
}

using Rows = std::vector<std::vector<NodeId>>;

template <typename Body>
void expect_input_error(Body body, const std::string& file, const std::string& field,
                        const std::string& mentions) {
  try {
    body();
    FAIL() << "expected InputError on " << file << " field " << field;
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(error.field(), field);
    const std::string message = error.what();
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find(field), std::string::npos) << message;
    EXPECT_NE(message.find(mentions), std::string::npos) << message;
  }
}

TEST(BuildGraph, SymmetrizedDeduplicatedWithSelfLoops) {
  const Edges edges = small_edges();
  const Graph graph = build_graph(3, edges.src, edges.dst, options(true, false, true), "g");
  EXPECT_EQ(graph.num_nodes(), 3);
  // The self loop appears once: symmetrizing does not double it.
  EXPECT_EQ(rows(graph), (Rows{{1, 2}, {0, 1, 2}, {0, 1}}));
  EXPECT_EQ(std::vector<EdgeIndex>(graph.offsets().begin(), graph.offsets().end()),
            (std::vector<EdgeIndex>{0, 2, 5, 7}));
  EXPECT_EQ(graph.num_edges(), 7);
  EXPECT_EQ(graph.in_degree(1), 3);
  EXPECT_TRUE(graph.is_symmetric());
}

TEST(BuildGraph, SelfLoopsDropped) {
  const Edges edges = small_edges();
  const Graph graph = build_graph(3, edges.src, edges.dst, options(true, true, true), "g");
  EXPECT_EQ(rows(graph), (Rows{{1, 2}, {0, 2}, {0, 1}}));
}

TEST(BuildGraph, DuplicatesKeptWhenAsked) {
  const Edges edges = small_edges();
  const Graph graph = build_graph(3, edges.src, edges.dst, options(true, false, false), "g");
  EXPECT_EQ(rows(graph), (Rows{{1, 1, 2}, {0, 0, 1, 2}, {0, 1}}));
  EXPECT_EQ(graph.num_edges(), 9);
}

TEST(BuildGraph, DirectedKeepsInEdgesOnly) {
  const Edges edges = small_edges();
  const Graph graph = build_graph(3, edges.src, edges.dst, options(false, false, true), "g");
  EXPECT_EQ(rows(graph), (Rows{{2}, {0, 1}, {1}}));
  EXPECT_FALSE(graph.is_symmetric());
}

TEST(BuildGraph, RowsSortedWhateverTheInputOrder) {
  const Edges forward{{0, 1, 2, 3, 4, 0, 3}, {4, 4, 4, 4, 0, 2, 1}};
  Edges reversed = forward;
  std::reverse(reversed.src.begin(), reversed.src.end());
  std::reverse(reversed.dst.begin(), reversed.dst.end());
  const Graph a = build_graph(5, forward.src, forward.dst, options(true, false, true), "a");
  const Graph b = build_graph(5, reversed.src, reversed.dst, options(true, false, true), "b");
  EXPECT_EQ(rows(a), rows(b));
  EXPECT_EQ(rows(a)[4], (std::vector<NodeId>{0, 1, 2, 3}));
  for (const auto& row : rows(a)) EXPECT_TRUE(std::is_sorted(row.begin(), row.end()));
}

TEST(BuildGraph, IsolatedNodesAndEmptyGraphs) {
  const std::vector<NodeId> none;
  const Graph empty = build_graph(0, none, none, EdgeListOptions{}, "empty");
  EXPECT_EQ(empty.num_nodes(), 0);
  EXPECT_EQ(empty.num_edges(), 0);
  EXPECT_TRUE(empty.is_symmetric());
  const Graph isolated = build_graph(4, none, none, EdgeListOptions{}, "isolated");
  EXPECT_EQ(isolated.num_nodes(), 4);
  EXPECT_EQ(isolated.in_degree(3), 0);
  const Graph defaulted;
  EXPECT_EQ(defaulted.num_nodes(), 0);
  EXPECT_EQ(defaulted.num_edges(), 0);
}

TEST(BuildGraph, IdsOutOfRangeNameTheOrigin) {
  const std::vector<NodeId> src{0, 1, 5};
  const std::vector<NodeId> dst{1, 2, 0};
  expect_input_error([&] { build_graph(3, src, dst, EdgeListOptions{}, "edges.tsv"); }, "edges.tsv",
                     "edges", "edge 2 (5 -> 0)");
  const std::vector<NodeId> in_range{0, 1, 2};
  const std::vector<NodeId> negative{0, -1, 1};
  expect_input_error([&] { build_graph(3, in_range, negative, EdgeListOptions{}, "edges.tsv"); },
                     "edges.tsv", "edges", "edge 1 (1 -> -1)");
  const std::vector<NodeId> short_list{0};
  expect_input_error([&] { build_graph(3, src, short_list, EdgeListOptions{}, "edges.tsv"); },
                     "edges.tsv", "edges", "differ in length");
  expect_input_error([&] { build_graph(-1, {}, {}, EdgeListOptions{}, "meta.json"); }, "meta.json",
                     "num_nodes", "-1");
  const std::int64_t too_many = std::int64_t{std::numeric_limits<NodeId>::max()} + 1;
  expect_input_error([&] { check_node_count(too_many, "meta.json"); }, "meta.json", "num_nodes",
                     std::to_string(too_many));
}

// Yields the edges in chunks of 7, the last chunk first: a stream need not keep the lists' order.
EdgeStream chunked_backwards(const Edges& edges) {
  return [&edges](const EdgeChunkVisitor& visit) {
    const std::span<const NodeId> src(edges.src);
    const std::span<const NodeId> dst(edges.dst);
    constexpr std::size_t kChunk = 7;
    for (std::size_t end = src.size(); end > 0;) {
      const std::size_t begin = end > kChunk ? end - kChunk : 0;
      visit(src.subspan(begin, end - begin), dst.subspan(begin, end - begin));
      end = begin;
    }
  };
}

TEST(BuildGraph, FromAStreamGivesTheListsCsr) {
  Edges edges;
  for (NodeId e = 0; e < 600; ++e) {  // repeats, and a self loop every fifth edge
    edges.src.push_back((e * 37) % 40);
    edges.dst.push_back(e % 5 == 0 ? edges.src.back() : (e * 11 + 3) % 40);
  }
  for (const bool symmetrize : {false, true}) {
    for (const bool drop_self_loops : {false, true}) {
      for (const bool deduplicate : {false, true}) {
        const EdgeListOptions chosen = options(symmetrize, drop_self_loops, deduplicate);
        const Graph lists = build_graph(40, edges.src, edges.dst, chosen, "lists");
        const Graph streamed = build_graph(40, chunked_backwards(edges), chosen, "stream");
        EXPECT_EQ(std::vector<EdgeIndex>(streamed.offsets().begin(), streamed.offsets().end()),
                  std::vector<EdgeIndex>(lists.offsets().begin(), lists.offsets().end()));
        EXPECT_EQ(rows(streamed), rows(lists));
      }
    }
  }
}

// The second pass places what the first counted: more or fewer edges then are refused, not written.
TEST(BuildGraph, AStreamThatChangesBetweenPassesIsRefused) {
  const Edges edges = small_edges();
  for (const std::size_t second_pass_edges : {std::size_t{4}, std::size_t{6}}) {
    Edges second = edges;
    second.src.resize(second_pass_edges, 2);
    second.dst.resize(second_pass_edges, 2);
    int pass = 0;
    const EdgeStream changing = [&](const EdgeChunkVisitor& visit) {
      const Edges& yielded = ++pass == 1 ? edges : second;
      visit(yielded.src, yielded.dst);
    };
    expect_input_error([&] { build_graph(3, changing, EdgeListOptions{}, "stream"); }, "stream",
                       "edges", "second pass");
  }
}

Graph from_arrays(std::vector<EdgeIndex> offsets, std::vector<NodeId> sources) {
  return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)), "csr.bin");
}

TEST(GraphConstructor, AcceptsAValidCsr) {
  const Graph graph = from_arrays({0, 1, 1, 3}, {2, 0, 1});
  EXPECT_EQ(graph.num_nodes(), 3);
  EXPECT_EQ(graph.num_edges(), 3);
  EXPECT_EQ(rows(graph), (Rows{{2}, {}, {0, 1}}));
}

TEST(GraphConstructor, RejectsInconsistentArrays) {
  expect_input_error([] { from_arrays({}, {}); }, "csr.bin", "offsets", "empty");
  expect_input_error(
      [] {
        from_arrays({1, 2}, {0, 0});
      },
      "csr.bin", "offsets", "does not start at 0");
  expect_input_error(
      [] {
        from_arrays({0, 1, 2}, {0, 0, 1});
      },
      "csr.bin", "offsets", "ends at 2 but there are 3 edges");
  expect_input_error(
      [] {
        from_arrays({0, 2, 1, 3}, {0, 0, 1});
      },
      "csr.bin", "offsets", "decreases after node 1");
  expect_input_error(
      [] {
        from_arrays({0, 1, 2}, {0, 2});
      },
      "csr.bin", "sources", "edge 1 has source id 2");
  expect_input_error([] { from_arrays({0, 1}, {-3}); }, "csr.bin", "sources", "-3");
}

TEST(GraphSymmetry, DetectsAMissingReverseEdge) {
  EXPECT_TRUE(from_arrays({0, 1, 2}, {1, 0}).is_symmetric());
  EXPECT_FALSE(from_arrays({0, 1, 1}, {1}).is_symmetric());
  // A self loop is its own reverse.
  EXPECT_TRUE(from_arrays({0, 1}, {0}).is_symmetric());
}

}  // namespace
}  // namespace gnnbed
