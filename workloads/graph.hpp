#pragma once
// The graph every engine works on: compressed sparse rows over *in*-edges, so that aggregating a
// node's neighbourhood reads its in-neighbours contiguously. Offsets are 64-bit (billions of
// edges), node ids 32-bit (up to 2^31 - 1 nodes): the largest graph of the papers gnnbed follows
// has 133.6 M nodes (uk-union-like, 5.5 B edges; ogbn-papers100M 111 M), so 32-bit ids halve the
// CSR's largest array with 16 times headroom. An undirected graph stores both directions.
//
// One view, three storages (docs/large_graphs.md): the in-neighbour lists are held in memory,
// memory-mapped from gnnbed's binary format, or *implicit*: computed on demand by a seeded
// generator, so that a 10 B-edge graph takes no storage beyond its O(nodes) offsets. The neighbour
// sampler reads every storage; whole-graph consumers (METIS, full-graph blocks, shards) need the
// lists stored, and say so for an implicit graph.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "workloads/shared_array.hpp"

namespace gnnbed {

using NodeId = std::int32_t;
using EdgeIndex = std::int64_t;

// Computes in-neighbour lists that are not stored: a pure function of the generator's parameters,
// the node and the position in its list, so any subset of a list costs only its own size.
class NeighborGenerator {
 public:
  virtual ~NeighborGenerator() = default;
  // out[i] = the (positions[i] - row_begin)-th in-neighbour of `v`; every position lies in v's
  // row [row_begin, row_begin + in-degree of v).
  virtual void sources_at(NodeId v, EdgeIndex row_begin, std::span<const EdgeIndex> positions,
                          NodeId* out) const = 0;
  // The model and its parameters, for results and summaries.
  virtual nlohmann::json describe() const = 0;
};

// When a stored graph's source ids are checked against the node count: at construction (a pass
// over every edge), or on use: by the sampler for the ids it draws, and in full the first time a
// whole-list accessor is called. A memory-mapped graph of billions of edges is checked on use, so
// that a simulation touches only the pages its batches need.
enum class SourceCheck { at_construction, on_use };

class Graph {
 public:
  Graph() = default;

  // A stored graph. Validates the arrays (throws InputError naming `origin`): offsets has
  // num_nodes + 1 entries, starts at 0, never decreases and ends at sources.size(); every source
  // id is in range (now, or on use: SourceCheck).
  Graph(SharedArray<EdgeIndex> offsets, SharedArray<NodeId> sources, const std::string& origin,
        SourceCheck check = SourceCheck::at_construction);

  // An implicit graph: offsets as above, in-neighbours computed by `generator`.
  Graph(SharedArray<EdgeIndex> offsets, std::shared_ptr<const NeighborGenerator> generator,
        const std::string& origin);

  std::int64_t num_nodes() const { return num_nodes_; }
  std::int64_t num_edges() const { return offsets_[offsets_.size() - 1]; }
  bool is_implicit() const { return generator_ != nullptr; }
  const std::string& origin() const { return origin_; }
  // Storage and, for an implicit graph, its generator.
  nlohmann::json describe_storage() const;

  // Stored graphs only (throws Error for an implicit one, naming the graph).
  std::span<const NodeId> in_neighbors(NodeId v) const {
    const std::span<const NodeId> all = sources();
    const auto begin = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v)]);
    const auto end = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(v) + 1]);
    return all.subspan(begin, end - begin);
  }
  std::int64_t in_degree(NodeId v) const {
    return offsets_[static_cast<std::size_t>(v) + 1] - offsets_[static_cast<std::size_t>(v)];
  }

  std::span<const EdgeIndex> offsets() const { return offsets_.span(); }
  // Every in-neighbour list, stored graphs only (throws Error for an implicit one); checks the
  // ids first when they are checked on use and have not been yet.
  std::span<const NodeId> sources() const {
    if (generator_ != nullptr || !sources_checked_->done) require_stored_and_checked();
    return sources_.span();
  }

  // Any storage: out[i] = the source of edge positions[i], every position in v's row. Ids that
  // are checked on use are checked here (InputError naming the graph's origin and the edge).
  void sources_at(NodeId v, std::span<const EdgeIndex> positions, NodeId* out) const;
  // The sampler's fast path: the stored source array (null for an implicit graph) and whether
  // its ids still need checking after a gather (check_gathered).
  const NodeId* stored_sources() const { return generator_ ? nullptr : sources_.data(); }
  bool sources_need_checking() const { return !sources_checked_->done; }
  void check_gathered(const EdgeIndex* positions, const NodeId* ids, std::size_t count) const;
  // Writes v's whole in-neighbour list (in_degree(v) ids) to `out`, any storage.
  void copy_in_neighbors(NodeId v, NodeId* out) const;

  // True when every edge u->v has its reverse v->u (neighbour lists must be sorted, as the
  // builder leaves them).
  bool is_symmetric() const;

 private:
  // Shared between copies of a graph: the full check of ids checked on use runs once.
  struct CheckState {
    std::atomic<bool> done{true};
    std::mutex mutex;
  };

  // Sets num_nodes_ from the offsets and checks them (InputError naming origin_).
  void check_offsets();
  void check_all_sources() const;
  [[noreturn]] void throw_bad_source(EdgeIndex position, NodeId id) const;
  void require_stored_and_checked() const;

  std::int64_t num_nodes_ = 0;
  std::string origin_;
  SharedArray<EdgeIndex> offsets_{std::vector<EdgeIndex>{0}};
  SharedArray<NodeId> sources_;
  std::shared_ptr<const NeighborGenerator> generator_;
  std::shared_ptr<CheckState> sources_checked_ = std::make_shared<CheckState>();
};

struct EdgeListOptions {
  bool symmetrize = true;        // add v->u for every u->v (undirected input)
  bool drop_self_loops = false;  // remove u->u
  bool deduplicate = true;       // keep one copy of repeated edges
};

// Builds the in-edge CSR of the edges src[i] -> dst[i]. Each node's in-neighbours come out sorted,
// so the result does not depend on input order or thread count. Ids must lie in [0, num_nodes)
// (throws InputError naming `origin` otherwise).
Graph build_graph(std::int64_t num_nodes, std::span<const NodeId> src, std::span<const NodeId> dst,
                  const EdgeListOptions& options, const std::string& origin);

// A chunk of edges src[i] -> dst[i]: spans of equal length, every id in [0, num_nodes).
using EdgeChunkVisitor =
    std::function<void(std::span<const NodeId> src, std::span<const NodeId> dst)>;
// Hands every edge to the visitor, a chunk at a time. build_graph calls it twice, and both calls
// must yield the same edges (a file read twice; in any order, chunked any way).
using EdgeStream = std::function<void(const EdgeChunkVisitor&)>;

// The same CSR as above, built from edges that are never held as a list: one pass over the stream
// counts the rows, a second places every source in its row, then each row is sorted and
// deduplicated in place. It holds the CSR and O(num_nodes) counts, nothing per edge besides.
// Throws InputError naming `origin` when the second pass yields other edges than the first.
Graph build_graph(std::int64_t num_nodes, const EdgeStream& edges, const EdgeListOptions& options,
                  const std::string& origin);

// The 32-bit node-id limit, checked wherever a node count comes from outside (InputError naming
// `origin` and `field`, the count's name there).
void check_node_count(std::int64_t num_nodes, const std::string& origin,
                      const std::string& field = "num_nodes");

}  // namespace gnnbed
