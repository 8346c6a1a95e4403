#include "workloads/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <numeric>

#include "workloads/common/errors.hpp"

namespace gnnbed {

void check_node_count(std::int64_t num_nodes, const std::string& origin, const std::string& field) {
  if (num_nodes < 0 || num_nodes > std::numeric_limits<NodeId>::max()) {
    throw InputError(origin, 0, field,
                     std::to_string(num_nodes) + " nodes do not fit 32-bit node ids (at most " +
                         std::to_string(std::numeric_limits<NodeId>::max()) + ")");
  }
}

Graph::Graph(SharedArray<EdgeIndex> offsets, SharedArray<NodeId> sources, const std::string& origin,
             SourceCheck check)
    : origin_(origin), offsets_(std::move(offsets)), sources_(std::move(sources)) {
  check_offsets();
  if (offsets_[offsets_.size() - 1] != static_cast<EdgeIndex>(sources_.size())) {
    throw InputError(origin, 0, "offsets",
                     "ends at " + std::to_string(offsets_[offsets_.size() - 1]) +
                         " but there are " + std::to_string(sources_.size()) + " edges");
  }
  if (check == SourceCheck::at_construction) {
    check_all_sources();
  } else {
    sources_checked_->done = false;
  }
}

Graph::Graph(SharedArray<EdgeIndex> offsets, std::shared_ptr<const NeighborGenerator> generator,
             const std::string& origin)
    : origin_(origin), offsets_(std::move(offsets)), generator_(std::move(generator)) {
  if (generator_ == nullptr)
    throw Error("graph " + origin + ": an implicit graph needs a generator");
  check_offsets();
}

void Graph::check_offsets() {
  if (offsets_.empty())
    throw InputError(origin_, 0, "offsets", "is empty (needs num_nodes + 1 entries)");
  const auto num_nodes = static_cast<std::int64_t>(offsets_.size()) - 1;
  check_node_count(num_nodes, origin_);
  num_nodes_ = num_nodes;
  if (offsets_[0] != 0) throw InputError(origin_, 0, "offsets", "does not start at 0");
  std::int64_t first_decrease = -1;
#pragma omp parallel for reduction(max : first_decrease) schedule(static)
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    if (offsets_[static_cast<std::size_t>(v) + 1] < offsets_[static_cast<std::size_t>(v)]) {
      first_decrease = std::max(first_decrease, v);
    }
  }
  if (first_decrease >= 0) {
    throw InputError(origin_, 0, "offsets",
                     "decreases after node " + std::to_string(first_decrease));
  }
}

void Graph::throw_bad_source(EdgeIndex position, NodeId id) const {
  throw InputError(origin_, 0, "sources",
                   "edge " + std::to_string(position) + " has source id " + std::to_string(id) +
                       " outside [0, " + std::to_string(num_nodes_) + ")");
}

void Graph::check_all_sources() const {
  const auto num_edges = static_cast<std::int64_t>(sources_.size());
  std::int64_t bad_edge = -1;
  const auto n = static_cast<NodeId>(num_nodes_);
#pragma omp parallel for reduction(max : bad_edge) schedule(static)
  for (std::int64_t e = 0; e < num_edges; ++e) {
    const NodeId u = sources_[static_cast<std::size_t>(e)];
    if (u < 0 || u >= n) bad_edge = std::max(bad_edge, e);
  }
  if (bad_edge >= 0) throw_bad_source(bad_edge, sources_[static_cast<std::size_t>(bad_edge)]);
}

void Graph::require_stored_and_checked() const {
  if (generator_ != nullptr) {
    throw Error("graph " + origin_ +
                " is implicit (its in-neighbours are computed on demand, nothing is stored): this "
                "step needs every neighbour list stored; write the graph to a file first "
                "(workload convert, or workload.storage=file) or use a smaller scale");
  }
  const std::lock_guard<std::mutex> lock(sources_checked_->mutex);
  if (sources_checked_->done) return;
  check_all_sources();
  sources_checked_->done = true;
}

nlohmann::json Graph::describe_storage() const {
  if (generator_ != nullptr)
    return {{"storage", "implicit"}, {"generator", generator_->describe()}};
  return {{"storage", "stored"}, {"source_ids_checked", sources_checked_->done ? "yes" : "on use"}};
}

void Graph::check_gathered(const EdgeIndex* positions, const NodeId* ids, std::size_t count) const {
  const auto n = static_cast<std::uint32_t>(num_nodes_);
  for (std::size_t i = 0; i < count; ++i) {
    // One unsigned comparison catches negative ids too.
    if (static_cast<std::uint32_t>(ids[i]) >= n) throw_bad_source(positions[i], ids[i]);
  }
}

void Graph::sources_at(NodeId v, std::span<const EdgeIndex> positions, NodeId* out) const {
  if (generator_ != nullptr) {
    generator_->sources_at(v, offsets_[static_cast<std::size_t>(v)], positions, out);
    return;
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    out[i] = sources_[static_cast<std::size_t>(positions[i])];
  }
  if (!sources_checked_->done) check_gathered(positions.data(), out, positions.size());
}

void Graph::copy_in_neighbors(NodeId v, NodeId* out) const {
  // Per thread, so that copying every list (writing a file) allocates once per thread.
  thread_local std::vector<EdgeIndex> positions;
  positions.resize(static_cast<std::size_t>(in_degree(v)));
  std::iota(positions.begin(), positions.end(), offsets_[static_cast<std::size_t>(v)]);
  sources_at(v, positions, out);
}

bool Graph::is_symmetric() const {
  bool symmetric = true;
#pragma omp parallel for reduction(&& : symmetric) schedule(dynamic, 1024)
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    for (const NodeId u : in_neighbors(static_cast<NodeId>(v))) {
      const auto reverse = in_neighbors(u);
      if (!std::binary_search(reverse.begin(), reverse.end(), static_cast<NodeId>(v))) {
        symmetric = false;
        break;
      }
    }
  }
  return symmetric;
}

namespace {

// Calls add(row, source) for every in-edge a chunk contributes: u -> v joins v's row and, when
// symmetrizing, v -> u joins u's (a self loop once). In parallel: `add` must be thread-safe.
template <typename Add>
void for_each_in_edge(std::span<const NodeId> src, std::span<const NodeId> dst,
                      const EdgeListOptions& options, const Add& add) {
  const auto m = static_cast<std::int64_t>(src.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < m; ++e) {
    const NodeId u = src[static_cast<std::size_t>(e)];
    const NodeId v = dst[static_cast<std::size_t>(e)];
    if (options.drop_self_loops && u == v) continue;
    add(v, u);
    if (options.symmetrize && u != v) add(u, v);
  }
}

// Pass 1: every row's length, returned as the rows' offsets (duplicates included).
std::vector<EdgeIndex> count_rows(std::size_t num_nodes, const EdgeStream& edges,
                                  const EdgeListOptions& options) {
  std::vector<std::atomic<EdgeIndex>> lengths(num_nodes);
  edges([&](std::span<const NodeId> src, std::span<const NodeId> dst) {
    for_each_in_edge(src, dst, options, [&](NodeId row, NodeId) {
      lengths[static_cast<std::size_t>(row)].fetch_add(1, std::memory_order_relaxed);
    });
  });
  std::vector<EdgeIndex> offsets(num_nodes + 1, 0);
  for (std::size_t v = 0; v < num_nodes; ++v) {
    offsets[v + 1] = offsets[v] + lengths[v].load(std::memory_order_relaxed);
  }
  return offsets;
}

// Pass 2: every source into its row. Slots are claimed with atomics, so the order inside a row is
// arbitrary until the rows are sorted. A slot past its row's end (a stream that yields more edges
// the second time) is refused, not written.
void place_sources(std::span<const EdgeIndex> offsets, const EdgeStream& edges,
                   const EdgeListOptions& options, NodeId* sources, const std::string& origin) {
  const std::size_t num_nodes = offsets.size() - 1;
  std::vector<std::atomic<EdgeIndex>> cursor(num_nodes);
  for (std::size_t v = 0; v < num_nodes; ++v) cursor[v].store(offsets[v]);
  std::atomic<bool> overflow{false};
  auto refuse = [&] {
    throw InputError(origin, 0, "edges",
                     "yielded other edges on the second pass of the build than on the first");
  };
  edges([&](std::span<const NodeId> src, std::span<const NodeId> dst) {
    for_each_in_edge(src, dst, options, [&](NodeId row, NodeId source) {
      const auto r = static_cast<std::size_t>(row);
      const EdgeIndex slot = cursor[r].fetch_add(1, std::memory_order_relaxed);
      if (slot < offsets[r + 1]) {
        sources[slot] = source;
      } else {
        overflow.store(true, std::memory_order_relaxed);
      }
    });
    if (overflow.load()) refuse();
  });
  for (std::size_t v = 0; v < num_nodes; ++v) {
    if (cursor[v].load() != offsets[v + 1]) refuse();
  }
}

// Sorts every row and, deduplicating, drops the repeats and moves the rows together in place;
// returns the rows' offsets after that.
std::vector<EdgeIndex> sort_rows(std::vector<EdgeIndex> offsets, NodeId* sources,
                                 bool deduplicate) {
  const std::size_t num_nodes = offsets.size() - 1;
  std::vector<EdgeIndex> kept(num_nodes + 1, 0);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < static_cast<std::int64_t>(num_nodes); ++v) {
    const auto row = static_cast<std::size_t>(v);
    NodeId* first = sources + offsets[row];
    NodeId* last = sources + offsets[row + 1];
    std::sort(first, last);
    if (deduplicate) last = std::unique(first, last);
    kept[row + 1] = last - first;
  }
  if (!deduplicate) return offsets;
  std::inclusive_scan(kept.begin(), kept.end(), kept.begin());
  // In order: a row moves left, possibly onto where earlier rows were before they moved.
  for (std::size_t row = 0; row < num_nodes; ++row) {
    if (kept[row] == offsets[row]) continue;
    std::copy_n(sources + offsets[row], kept[row + 1] - kept[row], sources + kept[row]);
  }
  return kept;
}

// The sources' storage is malloc's, not a vector's: realloc gives back what deduplication freed
// without copying the rows into a smaller array (which would hold the edges twice), and no page is
// zero-filled before the placement pass writes it.
struct FreeStorage {
  void operator()(void* storage) const { std::free(storage); }
};
using SourceStorage = std::unique_ptr<NodeId[], FreeStorage>;

SourceStorage allocate_sources(EdgeIndex count) {
  void* storage =
      std::malloc(static_cast<std::size_t>(std::max<EdgeIndex>(count, 1)) * sizeof(NodeId));
  if (storage == nullptr) throw std::bad_alloc();
  return SourceStorage(static_cast<NodeId*>(storage));
}

SharedArray<NodeId> shrink_sources(SourceStorage storage, EdgeIndex count) {
  const auto bytes = static_cast<std::size_t>(std::max<EdgeIndex>(count, 1)) * sizeof(NodeId);
  // A failed realloc leaves the block as it was: keep it whole.
  NodeId* sources = static_cast<NodeId*>(std::realloc(storage.get(), bytes));
  if (sources == nullptr) sources = storage.get();
  storage.release();
  const std::shared_ptr<const void> owner(sources, FreeStorage{});
  return SharedArray<NodeId>(std::span<const NodeId>(sources, static_cast<std::size_t>(count)),
                             owner);
}

}  // namespace

Graph build_graph(std::int64_t num_nodes, const EdgeStream& edges, const EdgeListOptions& options,
                  const std::string& origin) {
  check_node_count(num_nodes, origin);
  std::vector<EdgeIndex> offsets = count_rows(static_cast<std::size_t>(num_nodes), edges, options);
  SourceStorage sources = allocate_sources(offsets.back());
  place_sources(offsets, edges, options, sources.get(), origin);
  offsets = sort_rows(std::move(offsets), sources.get(), options.deduplicate);
  const EdgeIndex count = offsets.back();
  return Graph(SharedArray(std::move(offsets)), shrink_sources(std::move(sources), count), origin);
}

Graph build_graph(std::int64_t num_nodes, std::span<const NodeId> src, std::span<const NodeId> dst,
                  const EdgeListOptions& options, const std::string& origin) {
  check_node_count(num_nodes, origin);
  if (src.size() != dst.size()) {
    throw InputError(origin, 0, "edges", "source and destination lists differ in length");
  }
  const auto m = static_cast<std::int64_t>(src.size());
  std::int64_t bad_edge = -1;
#pragma omp parallel for reduction(max : bad_edge) schedule(static)
  for (std::int64_t e = 0; e < m; ++e) {
    const auto i = static_cast<std::size_t>(e);
    if (src[i] < 0 || src[i] >= num_nodes || dst[i] < 0 || dst[i] >= num_nodes) {
      bad_edge = std::max(bad_edge, e);
    }
  }
  if (bad_edge >= 0) {
    const auto i = static_cast<std::size_t>(bad_edge);
    throw InputError(origin, 0, "edges",
                     "edge " + std::to_string(bad_edge) + " (" + std::to_string(src[i]) + " -> " +
                         std::to_string(dst[i]) + ") has an id outside [0, " +
                         std::to_string(num_nodes) + ")");
  }
  return build_graph(
      num_nodes, [&](const EdgeChunkVisitor& visit) { visit(src, dst); }, options, origin);
}

}  // namespace gnnbed
