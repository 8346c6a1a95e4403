#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {
namespace {

using Edges = std::vector<std::pair<NodeId, NodeId>>;

Graph make_graph(std::int64_t num_nodes, const Edges& edges, EdgeListOptions options) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  for (const auto& [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  return build_graph(num_nodes, src, dst, options, "test graph");
}

Graph make_directed(std::int64_t num_nodes, const Edges& edges) {
  return make_graph(num_nodes, edges, EdgeListOptions{.symmetrize = false});
}

// Undirected graph with `num_edges` hash-drawn edges (self loops and repeats possible, the
// builder keeps one copy).
Graph random_graph(std::int64_t num_nodes, std::int64_t num_edges, std::uint64_t seed) {
  std::vector<NodeId> src(static_cast<std::size_t>(num_edges));
  std::vector<NodeId> dst(static_cast<std::size_t>(num_edges));
  const auto n = static_cast<std::uint64_t>(num_nodes);
  for (std::size_t e = 0; e < src.size(); ++e) {
    src[e] = static_cast<NodeId>(hash_mix(seed, e, 0) % n);
    dst[e] = static_cast<NodeId>(hash_mix(seed, e, 1) % n);
  }
  return build_graph(num_nodes, src, dst, EdgeListOptions{}, "random graph");
}

std::vector<NodeId> random_seeds(std::int64_t num_nodes, std::size_t count, std::uint64_t seed) {
  std::vector<NodeId> nodes(static_cast<std::size_t>(num_nodes));
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  Rng rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    std::swap(nodes[i], nodes[i + rng.below(nodes.size() - i)]);
  }
  nodes.resize(count);
  return nodes;
}

// Global ids of the sampled in-neighbours of local destination d.
std::vector<NodeId> sampled_neighbors(const Block& block, std::int64_t d) {
  std::vector<NodeId> out;
  for (auto e = block.offsets[static_cast<std::size_t>(d)];
       e < block.offsets[static_cast<std::size_t>(d) + 1]; ++e) {
    out.push_back(
        block.src_nodes[static_cast<std::size_t>(block.src_index[static_cast<std::size_t>(e)])]);
  }
  return out;
}

std::int64_t expected_degree(const Graph& graph, NodeId v, int fanout) {
  const std::int64_t degree = graph.in_degree(v);
  return fanout < 0 ? degree : std::min<std::int64_t>(degree, fanout);
}

void check_block(const Graph& graph, const Block& block, int fanout) {
  ASSERT_LE(block.num_dst, block.num_src());
  ASSERT_EQ(block.offsets.size(), static_cast<std::size_t>(block.num_dst) + 1);
  EXPECT_EQ(block.offsets.front(), 0);
  EXPECT_EQ(block.offsets.back(), block.num_edges());
  const std::set<NodeId> unique_src(block.src_nodes.begin(), block.src_nodes.end());
  EXPECT_EQ(unique_src.size(), block.src_nodes.size()) << "src_nodes repeat a node";
  for (const auto index : block.src_index) {
    ASSERT_GE(index, 0);
    ASSERT_LT(index, block.num_src());
  }
  std::vector<char> used(block.src_nodes.size(), 0);
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    const auto i = static_cast<std::size_t>(d);
    ASSERT_LE(block.offsets[i], block.offsets[i + 1]);
    const NodeId v = block.src_nodes[i];
    EXPECT_EQ(block.offsets[i + 1] - block.offsets[i], expected_degree(graph, v, fanout))
        << "destination " << v;
    const auto in = graph.in_neighbors(v);
    std::vector<NodeId> drawn = sampled_neighbors(block, d);
    for (const NodeId u : drawn) {
      EXPECT_TRUE(std::binary_search(in.begin(), in.end(), u)) << u << " -> " << v << " is no edge";
    }
    std::sort(drawn.begin(), drawn.end());
    EXPECT_EQ(std::adjacent_find(drawn.begin(), drawn.end()), drawn.end())
        << "destination " << v << " drew a neighbour twice";
    for (auto e = block.offsets[i]; e < block.offsets[i + 1]; ++e) {
      used[static_cast<std::size_t>(block.src_index[static_cast<std::size_t>(e)])] = 1;
    }
  }
  // Sources beyond the destinations exist only because some edge brought them in.
  for (auto s = static_cast<std::size_t>(block.num_dst); s < used.size(); ++s) {
    EXPECT_TRUE(used[s]) << "source " << block.src_nodes[s] << " has no edge";
  }
}

void check_batch(const Graph& graph, const MiniBatch& batch, std::span<const NodeId> seeds,
                 const std::vector<int>& fanouts) {
  const auto num_layers = fanouts.size();
  ASSERT_EQ(batch.blocks.size(), num_layers);
  EXPECT_EQ(batch.seeds, std::vector<NodeId>(seeds.begin(), seeds.end()));
  const auto last_dst = batch.blocks.back().dst_nodes();
  EXPECT_EQ(std::vector<NodeId>(last_dst.begin(), last_dst.end()), batch.seeds);
  for (std::size_t l = 0; l < num_layers; ++l) {
    SCOPED_TRACE("block " + std::to_string(l));
    check_block(graph, batch.blocks[l], fanouts[num_layers - 1 - l]);
    if (l + 1 < num_layers) {
      const auto dst = batch.blocks[l].dst_nodes();
      EXPECT_EQ(std::vector<NodeId>(dst.begin(), dst.end()), batch.blocks[l + 1].src_nodes);
    }
  }
  EXPECT_EQ(batch.input_nodes().data(), batch.blocks.front().src_nodes.data());
}

bool same_batch(const MiniBatch& a, const MiniBatch& b) {
  if (a.seeds != b.seeds || a.blocks.size() != b.blocks.size()) return false;
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    const Block& x = a.blocks[l];
    const Block& y = b.blocks[l];
    if (x.src_nodes != y.src_nodes || x.num_dst != y.num_dst || x.offsets != y.offsets ||
        x.src_index != y.src_index) {
      return false;
    }
  }
  return true;
}

// Restores the OpenMP thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(omp_get_max_threads()) {}
  ~ThreadCountGuard() { omp_set_num_threads(saved_); }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int saved_;
};

TEST(FullGraphBlock, EqualsTheCsr) {
  const Graph graph = make_directed(4, {{0, 1}, {0, 2}, {1, 2}, {3, 0}, {2, 2}});
  const Block block = full_graph_block(graph);
  EXPECT_EQ(block.num_dst, 4);
  EXPECT_EQ(block.src_nodes, (std::vector<NodeId>{0, 1, 2, 3}));
  EXPECT_EQ(block.offsets, (std::vector<std::int64_t>{0, 1, 2, 5, 5}));
  EXPECT_EQ(block.src_index, (std::vector<std::int32_t>{3, 0, 0, 1, 2}));
}

TEST(SampleInNeighbors, TakesEveryNeighbourWhenTheFanoutCoversTheDegree) {
  const Graph graph = make_directed(5, {{4, 0}, {1, 0}, {3, 0}, {2, 1}});
  for (const int fanout : {-1, 3, 7}) {
    std::vector<NodeId> out{42};
    sample_in_neighbors(graph, 0, fanout, 1, 2, 0, out);
    EXPECT_EQ(out, (std::vector<NodeId>{42, 1, 3, 4})) << "fanout " << fanout;
  }
  std::vector<NodeId> out;
  sample_in_neighbors(graph, 2, 5, 1, 2, 0, out);
  EXPECT_TRUE(out.empty());
  sample_in_neighbors(graph, 0, 0, 1, 2, 0, out);
  EXPECT_TRUE(out.empty());
}

// Node 0 with in-neighbours 1 .. degree.
Graph star_graph(NodeId degree) {
  Edges edges;
  for (NodeId u = 1; u <= degree; ++u) edges.emplace_back(u, 0);
  return make_directed(degree + 1, edges);
}

TEST(SampleInNeighbors, DrawsDistinctNeighboursInCsrOrder) {
  // The sampler marks picks in a stack bitmap up to degree 1024; above, it scans the picks when
  // there are at most 64 of them and uses a heap bitmap otherwise. Every path must hold.
  for (const NodeId degree : {300, 3000}) {
    const Graph graph = star_graph(degree);
    for (const int fanout : {1, 3, 64, 65, 150, degree - 1}) {
      for (std::uint64_t key = 0; key < 20; ++key) {
        std::vector<NodeId> out;
        sample_in_neighbors(graph, 0, fanout, 7, key, 1, out);
        ASSERT_EQ(out.size(), static_cast<std::size_t>(fanout));
        EXPECT_TRUE(std::adjacent_find(out.begin(), out.end(), std::greater_equal<>()) == out.end())
            << "degree " << degree << " fanout " << fanout << " key " << key
            << ": not strictly increasing";
        EXPECT_GE(out.front(), 1);
        EXPECT_LE(out.back(), degree);
      }
    }
  }
}

// The documented draw, written plainly: Floyd's algorithm over edge positions with an Rng seeded
// by hash_mix(seed, batch_key, hop, node), neighbours emitted in CSR order.
std::vector<NodeId> reference_draw(const Graph& graph, NodeId node, int fanout, std::uint64_t seed,
                                   std::uint64_t batch_key, int hop) {
  const auto neighbors = graph.in_neighbors(node);
  const auto degree = static_cast<std::uint64_t>(neighbors.size());
  if (fanout < 0 || degree <= static_cast<std::uint64_t>(fanout)) {
    return std::vector<NodeId>(neighbors.begin(), neighbors.end());
  }
  Rng rng(
      hash_mix(seed, batch_key, static_cast<std::uint64_t>(hop), static_cast<std::uint64_t>(node)));
  std::set<std::uint64_t> chosen;
  for (std::uint64_t j = degree - static_cast<std::uint64_t>(fanout); j < degree; ++j) {
    const std::uint64_t t = rng.below(j + 1);
    chosen.insert(chosen.count(t) != 0 ? j : t);
  }
  std::vector<NodeId> out;
  for (const std::uint64_t position : chosen) out.push_back(neighbors[position]);
  return out;
}

TEST(SampleInNeighbors, MatchesThePlainFloydDraw) {
  for (const NodeId degree : {10, 1024, 1025, 3000}) {
    const Graph graph = star_graph(degree);
    for (const int fanout : {1, 3, 9, 64, 65, 500, degree - 1}) {
      if (fanout >= degree) continue;
      for (std::uint64_t key = 0; key < 10; ++key) {
        std::vector<NodeId> out;
        sample_in_neighbors(graph, 0, fanout, 3, key, 2, out);
        ASSERT_EQ(out, reference_draw(graph, 0, fanout, 3, key, 2))
            << "degree " << degree << " fanout " << fanout << " key " << key;
      }
    }
  }
}

TEST(SampleInNeighbors, IsAPureFunctionOfSeedKeyHopAndNode) {
  const Graph graph = random_graph(200, 4000, 3);
  std::vector<NodeId> a;
  std::vector<NodeId> b;
  sample_in_neighbors(graph, 17, 5, 11, 4, 1, a);
  sample_in_neighbors(graph, 17, 5, 11, 4, 1, b);
  EXPECT_EQ(a, b);
  ASSERT_GT(graph.in_degree(17), 20);
  int differing_seed = 0;
  int differing_key = 0;
  int differing_hop = 0;
  for (std::uint64_t i = 0; i < 20; ++i) {
    std::vector<NodeId> other;
    sample_in_neighbors(graph, 17, 5, 11 + 1 + i, 4, 1, other);
    differing_seed += other != a;
    other.clear();
    sample_in_neighbors(graph, 17, 5, 11, 4 + 1 + i, 1, other);
    differing_key += other != a;
    other.clear();
    sample_in_neighbors(graph, 17, 5, 11, 4, 2 + static_cast<int>(i), other);
    differing_hop += other != a;
  }
  // Two draws of 5 out of > 20 neighbours agree with probability < 1e-4.
  EXPECT_EQ(differing_seed, 20);
  EXPECT_EQ(differing_key, 20);
  EXPECT_EQ(differing_hop, 20);
}

TEST(SampleInNeighbors, RejectsANodeOutOfRange) {
  const Graph graph = make_directed(3, {{0, 1}});
  std::vector<NodeId> out;
  for (const NodeId node : {-1, 3}) {
    try {
      sample_in_neighbors(graph, node, 2, 1, 1, 0, out);
      ADD_FAILURE() << "node " << node << " accepted";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "node");
      EXPECT_NE(std::string(error.what()).find(std::to_string(node)), std::string::npos);
    }
  }
}

TEST(Uniformity, EveryNeighbourAndEveryTripleEquallyLikely) {
  Edges edges;
  for (NodeId u = 1; u <= 10; ++u) edges.emplace_back(u, 0);
  const Graph graph = make_directed(11, edges);
  const NeighborSampler sampler(graph, {3}, 99);
  const NodeId seeds[] = {0};
  constexpr int kDraws = 20000;
  std::vector<int> hits(11, 0);
  std::map<std::vector<NodeId>, int> triples;
  for (std::uint64_t key = 0; key < kDraws; ++key) {
    const MiniBatch batch = sampler.sample(seeds, key);
    const std::vector<NodeId> drawn = sampled_neighbors(batch.blocks[0], 0);
    ASSERT_EQ(drawn.size(), 3u);
    for (const NodeId u : drawn) ++hits[static_cast<std::size_t>(u)];
    ++triples[drawn];
  }
  for (NodeId u = 1; u <= 10; ++u) {
    // Standard deviation of the frequency is 0.0032.
    EXPECT_NEAR(hits[static_cast<std::size_t>(u)] / double{kDraws}, 0.3, 0.02) << "neighbour " << u;
  }
  ASSERT_EQ(triples.size(), 120u);
  for (const auto& [triple, count] : triples) {
    // Expected 166.7, standard deviation 12.9.
    EXPECT_NEAR(count, kDraws / 120.0, 65.0);
  }
}

// How often each in-neighbour of node 0 of star_graph(degree) is drawn over `draws` batch keys.
std::vector<int> star_hits(NodeId degree, int fanout, int draws) {
  const Graph graph = star_graph(degree);
  std::vector<int> hits(static_cast<std::size_t>(degree) + 1, 0);
  for (std::uint64_t key = 0; key < static_cast<std::uint64_t>(draws); ++key) {
    std::vector<NodeId> out;
    sample_in_neighbors(graph, 0, fanout, 5, key, 0, out);
    for (const NodeId u : out) ++hits[static_cast<std::size_t>(u)];
  }
  return hits;
}

TEST(Uniformity, LargeFanoutsAreUniformToo) {
  constexpr int kDraws = 4000;
  for (const NodeId degree : {200, 2000}) {
    const std::vector<int> hits = star_hits(degree, degree / 2, kDraws);
    for (NodeId u = 1; u <= degree; ++u) {
      // Standard deviation of the frequency is 0.0079.
      EXPECT_NEAR(hits[static_cast<std::size_t>(u)] / double{kDraws}, 0.5, 0.04)
          << "degree " << degree << " neighbour " << u;
    }
  }
}

TEST(Uniformity, SmallFanoutsOfLargeDegreesAreUniform) {
  // 20000 draws of 10 among 2000: each neighbour is expected 100 times, standard deviation 10.
  const std::vector<int> hits = star_hits(2000, 10, 20000);
  for (NodeId u = 1; u <= 2000; ++u) {
    EXPECT_NEAR(hits[static_cast<std::size_t>(u)], 100, 50) << "neighbour " << u;
  }
  // The first and last positions are Floyd's edge cases.
  EXPECT_NEAR(hits[1] + hits[2] + hits[3] + hits[4], 400, 80);
  EXPECT_NEAR(hits[1997] + hits[1998] + hits[1999] + hits[2000], 400, 80);
}

TEST(Uniformity, RepeatedEdgesCountAsSeparatePositions) {
  // Without deduplication node 0 has in-edges 1, 1, 1, 2: of the 6 pairs of positions, 3 give
  // {1, 1} and 3 give {1, 2}.
  const Graph graph = make_graph(3, {{1, 0}, {1, 0}, {2, 0}, {1, 0}},
                                 EdgeListOptions{.symmetrize = false, .deduplicate = false});
  ASSERT_EQ(graph.in_degree(0), 4);
  constexpr int kDraws = 6000;
  int both_one = 0;
  for (std::uint64_t key = 0; key < kDraws; ++key) {
    std::vector<NodeId> out;
    sample_in_neighbors(graph, 0, 2, 8, key, 0, out);
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0], 1);
    both_one += out[1] == 1;
  }
  EXPECT_NEAR(both_one / double{kDraws}, 0.5, 0.03);
}

TEST(NeighborSampler, BuildsDglStyleBlocksOnAHandMadeGraph) {
  // In-neighbours: 0 <- {1, 2}, 1 <- {3}, 2 <- {0, 3}, 3 <- {}, 4 <- {0}.
  const Graph graph = make_directed(5, {{1, 0}, {2, 0}, {3, 1}, {0, 2}, {3, 2}, {0, 4}});
  const NeighborSampler sampler(graph, {5, 5}, 1);
  const NodeId seeds[] = {2, 4};
  const MiniBatch batch = sampler.sample(seeds, 0);
  ASSERT_EQ(batch.blocks.size(), 2u);
  const Block& outer = batch.blocks[1];
  EXPECT_EQ(outer.num_dst, 2);
  EXPECT_EQ(outer.src_nodes, (std::vector<NodeId>{2, 4, 0, 3}));
  EXPECT_EQ(outer.offsets, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(outer.src_index, (std::vector<std::int32_t>{2, 3, 2}));
  const Block& inner = batch.blocks[0];
  EXPECT_EQ(inner.num_dst, 4);
  EXPECT_EQ(inner.src_nodes, (std::vector<NodeId>{2, 4, 0, 3, 1}));
  EXPECT_EQ(inner.offsets, (std::vector<std::int64_t>{0, 2, 3, 5, 5}));
  EXPECT_EQ(inner.src_index, (std::vector<std::int32_t>{2, 3, 2, 4, 0}));
  EXPECT_EQ(std::vector<NodeId>(batch.input_nodes().begin(), batch.input_nodes().end()),
            (std::vector<NodeId>{2, 4, 0, 3, 1}));
  check_batch(graph, batch, seeds, {5, 5});
}

TEST(NeighborSampler, BlocksSatisfyTheInvariantsOnRandomGraphs) {
  const Graph graph = random_graph(3000, 15000, 21);
  const std::vector<std::vector<int>> configs = {{10, 5}, {3, -1}, {1, 2, 3}, {-1}, {25, 10}};
  for (const auto& fanouts : configs) {
    const NeighborSampler sampler(graph, fanouts, 5);
    for (std::uint64_t key = 0; key < 4; ++key) {
      SCOPED_TRACE("fanouts[0] " + std::to_string(fanouts[0]) + " layers " +
                   std::to_string(fanouts.size()) + " key " + std::to_string(key));
      const std::vector<NodeId> seeds = random_seeds(graph.num_nodes(), 700, key);
      check_batch(graph, sampler.sample(seeds, key), seeds, fanouts);
    }
  }
}

TEST(NeighborSampler, EmptySeedsGiveEmptyBlocks) {
  const Graph graph = random_graph(50, 200, 1);
  const NeighborSampler sampler(graph, {4, 4}, 1);
  const MiniBatch batch = sampler.sample({}, 3);
  ASSERT_EQ(batch.blocks.size(), 2u);
  for (const Block& block : batch.blocks) {
    EXPECT_EQ(block.num_dst, 0);
    EXPECT_EQ(block.num_src(), 0);
    EXPECT_EQ(block.offsets, std::vector<std::int64_t>{0});
  }
}

TEST(NeighborSampler, IsDeterministicAndDependsOnKeyAndSeed) {
  const Graph graph = random_graph(2000, 20000, 4);
  const std::vector<NodeId> seeds = random_seeds(graph.num_nodes(), 100, 9);
  const NeighborSampler sampler(graph, {5, 3}, 17);
  const MiniBatch reference = sampler.sample(seeds, 6);
  EXPECT_TRUE(same_batch(reference, sampler.sample(seeds, 6)));
  EXPECT_TRUE(same_batch(reference, NeighborSampler(graph, {5, 3}, 17).sample(seeds, 6)));
  EXPECT_FALSE(same_batch(reference, sampler.sample(seeds, 7)));
  EXPECT_FALSE(same_batch(reference, NeighborSampler(graph, {5, 3}, 18).sample(seeds, 6)));
}

TEST(NeighborSampler, DoesNotDependOnTheThreadCount) {
  const ThreadCountGuard guard;
  const Graph graph = random_graph(20000, 200000, 8);
  const std::vector<NodeId> seeds = random_seeds(graph.num_nodes(), 1000, 2);
  const NeighborSampler sampler(graph, {15, 10}, 3);
  omp_set_num_threads(1);
  const MiniBatch serial = sampler.sample(seeds, 12);
  check_batch(graph, serial, seeds, {15, 10});
  for (const int threads : {2, 3}) {
    omp_set_num_threads(threads);
    EXPECT_TRUE(same_batch(serial, sampler.sample(seeds, 12))) << threads << " threads";
  }
}

TEST(NeighborSampler, ConcurrentCallsMatchSequentialOnes) {
  const Graph graph = random_graph(20000, 150000, 15);
  const NeighborSampler sampler(graph, {10, 5}, 8);
  constexpr int kThreads = 4;
  constexpr std::uint64_t kBatchesPerThread = 6;
  std::vector<std::vector<NodeId>> seeds;
  std::vector<MiniBatch> expected;
  for (std::uint64_t key = 0; key < kThreads * kBatchesPerThread; ++key) {
    seeds.push_back(random_seeds(graph.num_nodes(), 800, key));
    expected.push_back(sampler.sample(seeds.back(), key));
  }
  std::vector<MiniBatch> got(expected.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < kBatchesPerThread; ++i) {
        const std::uint64_t key = static_cast<std::uint64_t>(t) * kBatchesPerThread + i;
        got[key] = sampler.sample(seeds[key], key);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t key = 0; key < expected.size(); ++key) {
    EXPECT_TRUE(same_batch(expected[key], got[key])) << "batch " << key;
  }
}

TEST(NeighborSampler, AlternatingGraphsOfDifferentSizesOnOneThread) {
  // The relabelling scratch is per thread and grows with the largest graph seen; stale entries
  // from another graph must never be taken for current ones.
  const Graph small = random_graph(300, 3000, 16);
  const Graph large = random_graph(30000, 300000, 17);
  const NeighborSampler small_sampler(small, {4, 4}, 2);
  const NeighborSampler large_sampler(large, {4, 4}, 2);
  const std::vector<NodeId> small_seeds = random_seeds(small.num_nodes(), 50, 1);
  const std::vector<NodeId> large_seeds = random_seeds(large.num_nodes(), 900, 1);
  const MiniBatch small_first = small_sampler.sample(small_seeds, 0);
  const MiniBatch large_first = large_sampler.sample(large_seeds, 0);
  for (std::uint64_t round = 0; round < 3; ++round) {
    EXPECT_TRUE(same_batch(small_first, small_sampler.sample(small_seeds, 0)));
    EXPECT_TRUE(same_batch(large_first, large_sampler.sample(large_seeds, 0)));
  }
  check_batch(small, small_first, small_seeds, {4, 4});
  check_batch(large, large_first, large_seeds, {4, 4});
}

TEST(NeighborSampler, ANodeDrawsTheSameNeighboursInAnyBatch) {
  const Graph graph = random_graph(5000, 60000, 12);
  const std::vector<int> fanouts = {6, 4};
  const NeighborSampler sampler(graph, fanouts, 31);
  std::vector<NodeId> batch_a = random_seeds(graph.num_nodes(), 300, 1);
  std::vector<NodeId> batch_b = random_seeds(graph.num_nodes(), 300, 2);
  const NodeId shared = batch_a[5];
  batch_b.erase(std::remove(batch_b.begin(), batch_b.end(), shared), batch_b.end());
  batch_b.push_back(shared);
  const MiniBatch a = sampler.sample(batch_a, 44);
  const MiniBatch b = sampler.sample(batch_b, 44);
  EXPECT_EQ(sampled_neighbors(a.blocks[1], 5),
            sampled_neighbors(b.blocks[1], static_cast<std::int64_t>(batch_b.size()) - 1));
  // Every destination of every block drew exactly what sample_in_neighbors draws for its hop.
  for (const MiniBatch* batch : {&a, &b}) {
    for (std::size_t l = 0; l < batch->blocks.size(); ++l) {
      const Block& block = batch->blocks[l];
      const int hop = static_cast<int>(batch->blocks.size() - 1 - l);
      for (std::int64_t d = 0; d < block.num_dst; ++d) {
        std::vector<NodeId> expected;
        sample_in_neighbors(graph, block.src_nodes[static_cast<std::size_t>(d)],
                            fanouts[static_cast<std::size_t>(hop)], 31, 44, hop, expected);
        ASSERT_EQ(sampled_neighbors(block, d), expected) << "block " << l << " dst " << d;
      }
    }
  }
}

TEST(NeighborSampler, FullFanoutGivesTheExactTwoHopNeighbourhood) {
  const Graph graph = random_graph(400, 700, 13);
  const std::vector<NodeId> seeds = random_seeds(graph.num_nodes(), 5, 3);
  const NeighborSampler sampler(graph, {-1, -1}, 1);
  const MiniBatch batch = sampler.sample(seeds, 0);
  check_batch(graph, batch, seeds, {-1, -1});
  std::set<NodeId> one_hop(seeds.begin(), seeds.end());
  for (const NodeId v : seeds) {
    for (const NodeId u : graph.in_neighbors(v)) one_hop.insert(u);
  }
  std::set<NodeId> two_hop = one_hop;
  for (const NodeId v : one_hop) {
    for (const NodeId u : graph.in_neighbors(v)) two_hop.insert(u);
  }
  ASSERT_GT(two_hop.size(), one_hop.size());
  const auto& outer = batch.blocks[1].src_nodes;
  const auto& inner = batch.blocks[0].src_nodes;
  EXPECT_EQ(std::set<NodeId>(outer.begin(), outer.end()), one_hop);
  EXPECT_EQ(std::set<NodeId>(inner.begin(), inner.end()), two_hop);
  EXPECT_EQ(outer.size(), one_hop.size());
  EXPECT_EQ(inner.size(), two_hop.size());
}

TEST(NeighborSampler, FullFanoutOverAllNodesIsTheFullGraphBlock) {
  const Graph graph = random_graph(1000, 5000, 14);
  std::vector<NodeId> seeds(static_cast<std::size_t>(graph.num_nodes()));
  std::iota(seeds.begin(), seeds.end(), NodeId{0});
  const MiniBatch batch = NeighborSampler(graph, {-1}, 1).sample(seeds, 0);
  const Block full = full_graph_block(graph);
  EXPECT_EQ(batch.blocks[0].src_nodes, full.src_nodes);
  EXPECT_EQ(batch.blocks[0].num_dst, full.num_dst);
  EXPECT_EQ(batch.blocks[0].offsets, full.offsets);
  EXPECT_EQ(batch.blocks[0].src_index, full.src_index);
}

TEST(NeighborSampler, RejectsRepeatedSeeds) {
  const Graph graph = random_graph(100, 400, 1);
  const NeighborSampler sampler(graph, {3}, 1);
  const NodeId seeds[] = {4, 9, 17, 9};
  try {
    sampler.sample(seeds, 0);
    FAIL() << "repeated seed accepted";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "seeds");
    const std::string message = error.what();
    EXPECT_NE(message.find("node 9"), std::string::npos) << message;
    EXPECT_NE(message.find("seed 1 and seed 3"), std::string::npos) << message;
  }
  // The failed call must not poison the scratch state of the next one.
  const NodeId good[] = {4, 9, 17};
  check_batch(graph, sampler.sample(good, 0), good, {3});
}

TEST(NeighborSampler, RejectsSeedsOutOfRange) {
  const Graph graph = random_graph(100, 400, 1);
  const NeighborSampler sampler(graph, {3}, 1);
  for (const NodeId bad : {-1, 100}) {
    const NodeId seeds[] = {0, bad};
    try {
      sampler.sample(seeds, 0);
      ADD_FAILURE() << "seed " << bad << " accepted";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "seeds");
      const std::string message = error.what();
      EXPECT_NE(message.find("seed 1 is node " + std::to_string(bad)), std::string::npos)
          << message;
      EXPECT_NE(message.find("[0, 100)"), std::string::npos) << message;
    }
  }
}

TEST(NeighborSampler, RejectsBadFanouts) {
  const Graph graph = random_graph(10, 20, 1);
  const std::vector<std::vector<int>> bad = {{}, {0}, {5, -2}, {3, 0, 2}};
  for (const auto& fanouts : bad) {
    try {
      const NeighborSampler sampler(graph, fanouts, 1);
      ADD_FAILURE() << "fanouts of size " << fanouts.size() << " accepted";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "fanouts");
      EXPECT_NE(std::string(error.what()).find("fanouts"), std::string::npos);
    }
  }
  EXPECT_NO_THROW(NeighborSampler(graph, {-1, 1, 30}, 1));
}

}  // namespace
}  // namespace gnnbed
