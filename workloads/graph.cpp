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

Graph::Graph(SharedArray<EdgeIndex> offsets, SharedArray<NodeId> sources, const std::string& origin)
    : offsets_(std::move(offsets)), sources_(std::move(sources)) {
  if (offsets_.empty())
    throw InputError(origin, 0, "offsets", "is empty (needs num_nodes + 1 entries)");
  num_nodes_ = static_cast<std::int64_t>(offsets_.size()) - 1;
  check_node_count(num_nodes_, origin);
  if (offsets_[0] != 0) throw InputError(origin, 0, "offsets", "does not start at 0");
  const auto num_edges = static_cast<EdgeIndex>(sources_.size());
  if (offsets_[offsets_.size() - 1] != num_edges) {
    throw InputError(origin, 0, "offsets",
                     "ends at " + std::to_string(offsets_[offsets_.size() - 1]) +
                         " but there are " + std::to_string(num_edges) + " edges");
  }
  std::int64_t first_decrease = -1;
#pragma omp parallel for reduction(max : first_decrease) schedule(static)
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    if (offsets_[static_cast<std::size_t>(v) + 1] < offsets_[static_cast<std::size_t>(v)]) {
      first_decrease = std::max(first_decrease, v);
    }
  }
  if (first_decrease >= 0) {
    throw InputError(origin, 0, "offsets",
                     "decreases after node " + std::to_string(first_decrease));
  }
  std::int64_t bad_edge = -1;
  const auto n = static_cast<NodeId>(num_nodes_);
#pragma omp parallel for reduction(max : bad_edge) schedule(static)
  for (std::int64_t e = 0; e < num_edges; ++e) {
    const NodeId u = sources_[static_cast<std::size_t>(e)];
    if (u < 0 || u >= n) bad_edge = std::max(bad_edge, e);
  }
  if (bad_edge >= 0) {
    throw InputError(origin, 0, "sources",
                     "edge " + std::to_string(bad_edge) + " has source id " +
                         std::to_string(sources_[static_cast<std::size_t>(bad_edge)]) +
                         " outside [0, " + std::to_string(num_nodes_) + ")");
  }
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
