#include "workloads/graph.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>

#include "workloads/common/errors.hpp"

namespace gnnbed {

void check_node_count(std::int64_t num_nodes, const std::string& origin) {
  if (num_nodes < 0 || num_nodes > std::numeric_limits<NodeId>::max()) {
    throw InputError(origin, 0, "num_nodes",
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

Graph build_graph(std::int64_t num_nodes, std::span<const NodeId> src, std::span<const NodeId> dst,
                  const EdgeListOptions& options, const std::string& origin) {
  check_node_count(num_nodes, origin);
  if (src.size() != dst.size()) {
    throw InputError(origin, 0, "edges", "source and destination lists differ in length");
  }
  const auto n = static_cast<std::size_t>(num_nodes);
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

  auto keep = [&](std::size_t i) { return !(options.drop_self_loops && src[i] == dst[i]); };
  // Counting sort by destination. Slots are claimed with atomics, so the order inside a row is
  // arbitrary; sorting every row afterwards makes the result deterministic.
  std::vector<std::atomic<EdgeIndex>> cursor(n + 1);
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < m; ++e) {
    const auto i = static_cast<std::size_t>(e);
    if (!keep(i)) continue;
    cursor[static_cast<std::size_t>(dst[i]) + 1].fetch_add(1, std::memory_order_relaxed);
    if (options.symmetrize && src[i] != dst[i]) {
      cursor[static_cast<std::size_t>(src[i]) + 1].fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::vector<EdgeIndex> offsets(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) {
    offsets[v + 1] = offsets[v] + cursor[v + 1].load(std::memory_order_relaxed);
  }
  for (std::size_t v = 0; v <= n; ++v) cursor[v].store(offsets[v], std::memory_order_relaxed);
  std::vector<NodeId> sources(static_cast<std::size_t>(offsets[n]));
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < m; ++e) {
    const auto i = static_cast<std::size_t>(e);
    if (!keep(i)) continue;
    sources[static_cast<std::size_t>(
        cursor[static_cast<std::size_t>(dst[i])].fetch_add(1, std::memory_order_relaxed))] = src[i];
    if (options.symmetrize && src[i] != dst[i]) {
      sources[static_cast<std::size_t>(cursor[static_cast<std::size_t>(src[i])].fetch_add(
          1, std::memory_order_relaxed))] = dst[i];
    }
  }
  std::vector<std::atomic<EdgeIndex>>().swap(cursor);

  std::vector<EdgeIndex> kept(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    const auto row = static_cast<std::size_t>(v);
    auto first = sources.begin() + offsets[row];
    auto last = sources.begin() + offsets[row + 1];
    std::sort(first, last);
    if (options.deduplicate) last = std::unique(first, last);
    kept[row + 1] = last - first;
  }
  if (!options.deduplicate) {
    return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)), origin);
  }

  std::inclusive_scan(kept.begin(), kept.end(), kept.begin());
  std::vector<NodeId> compact(static_cast<std::size_t>(kept[n]));
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    const auto row = static_cast<std::size_t>(v);
    std::copy_n(sources.begin() + offsets[row], kept[row + 1] - kept[row],
                compact.begin() + kept[row]);
  }
  return Graph(SharedArray(std::move(kept)), SharedArray(std::move(compact)), origin);
}

}  // namespace gnnbed
