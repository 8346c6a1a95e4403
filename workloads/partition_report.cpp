#include <algorithm>
#include <atomic>

#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

// max / mean of per-part counts; 1 (perfect balance) when every part is empty.
double imbalance(const std::vector<std::int64_t>& per_part) {
  std::int64_t total = 0;
  std::int64_t largest = 0;
  for (const std::int64_t count : per_part) {
    total += count;
    largest = std::max(largest, count);
  }
  if (total == 0) return 1.0;
  return static_cast<double>(largest) * static_cast<double>(per_part.size()) /
         static_cast<double>(total);
}

}  // namespace

PartitionReport evaluate_partition(const Graph& graph, const NodePartition& partition,
                                   std::string method, double seconds) {
  if (partition.num_nodes() != graph.num_nodes()) {
    throw ConfigError("partition", "assigns " + std::to_string(partition.num_nodes()) +
                                       " nodes but the graph has " +
                                       std::to_string(graph.num_nodes()));
  }
  const std::int64_t n = graph.num_nodes();
  const int num_parts = partition.num_parts();
  const auto parts = static_cast<std::size_t>(num_parts);

  // Owners materialised once: a hashed partition would otherwise hash every edge's endpoints.
  std::vector<std::int32_t> owner(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < n; ++v) {
    owner[static_cast<std::size_t>(v)] = partition.owner(static_cast<NodeId>(v));
  }

  PartitionReport report;
  report.method = std::move(method);
  report.num_parts = num_parts;
  report.seconds = seconds;
  report.nodes_per_part.assign(parts, 0);
  report.edges_per_part.assign(parts, 0);

  // Nodes grouped by owner (counting sort), so that each part's nodes can be walked in parallel.
  std::vector<std::int64_t> part_begin(parts + 1, 0);
  for (std::int64_t v = 0; v < n; ++v) {
    const auto p = static_cast<std::size_t>(owner[static_cast<std::size_t>(v)]);
    ++part_begin[p + 1];
    report.edges_per_part[p] += graph.in_degree(static_cast<NodeId>(v));
  }
  for (std::size_t p = 0; p < parts; ++p) {
    report.nodes_per_part[p] = part_begin[p + 1];
    part_begin[p + 1] += part_begin[p];
  }
  std::vector<NodeId> by_part(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> cursor(part_begin.begin(), part_begin.end() - 1);
    for (std::int64_t v = 0; v < n; ++v) {
      by_part[static_cast<std::size_t>(
          cursor[static_cast<std::size_t>(owner[static_cast<std::size_t>(v)])]++)] =
          static_cast<NodeId>(v);
    }
  }

  // A halo copy is a distinct pair (u, p): part p owns an out-neighbour of u (in-edge u -> v, v
  // owned by p) but not u itself. Parts are walked one after the other; stamp[u] == p + 1 says
  // that the pair (u, p) is counted already, and the exchange makes exactly one thread count it.
  std::vector<std::atomic<std::int32_t>> stamp(static_cast<std::size_t>(n));
  std::int64_t edge_cut = 0;
  std::int64_t halo_copies = 0;
  for (int p = 0; p < num_parts; ++p) {
    const std::int32_t mark = p + 1;
    const std::int64_t first = part_begin[static_cast<std::size_t>(p)];
    const std::int64_t last = part_begin[static_cast<std::size_t>(p) + 1];
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : edge_cut, halo_copies)
    for (std::int64_t i = first; i < last; ++i) {
      const NodeId v = by_part[static_cast<std::size_t>(i)];
      for (const NodeId u : graph.in_neighbors(v)) {
        const auto source = static_cast<std::size_t>(u);
        if (owner[source] == p) continue;
        ++edge_cut;
        if (stamp[source].load(std::memory_order_relaxed) != mark &&
            stamp[source].exchange(mark, std::memory_order_relaxed) != mark) {
          ++halo_copies;
        }
      }
    }
  }

  report.edge_cut = edge_cut;
  report.edge_cut_fraction = graph.num_edges() == 0 ? 0.0
                                                    : static_cast<double>(edge_cut) /
                                                          static_cast<double>(graph.num_edges());
  report.node_balance = imbalance(report.nodes_per_part);
  report.edge_balance = imbalance(report.edges_per_part);
  report.replication_factor =
      n == 0 ? 1.0 : static_cast<double>(n + halo_copies) / static_cast<double>(n);
  return report;
}

nlohmann::json PartitionReport::to_json() const {
  return {{"method", method},
          {"num_parts", num_parts},
          {"edge_cut", edge_cut},
          {"edge_cut_fraction", edge_cut_fraction},
          {"node_balance", node_balance},
          {"edge_balance", edge_balance},
          {"replication_factor", replication_factor},
          {"seconds", seconds},
          {"nodes_per_part", nodes_per_part},
          {"edges_per_part", edges_per_part}};
}

}  // namespace gnnbed
