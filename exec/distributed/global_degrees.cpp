#include "exec/distributed/global_degrees.hpp"

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::vector<std::int32_t> global_gcn_degrees(const LocalStore& store, Transport& transport) {
  const std::span<const NodeId> owned = store.owned_nodes();
  const NodePartition& partition = store.partition();
  const auto n = static_cast<std::size_t>(partition.num_nodes());
  const auto num_ranks = static_cast<std::size_t>(transport.size());
  const auto me = static_cast<std::size_t>(transport.rank());
  // Every edge adds one to its source's degree and every node has one self loop: this rank's
  // in-edges are its share of the whole graph's edges.
  std::vector<std::int32_t> contribution(n, 0);
  for (const NodeId v : owned) {
    ++contribution[static_cast<std::size_t>(v)];
    for (const NodeId s : store.structure().in_neighbors(v)) {
      ++contribution[static_cast<std::size_t>(s)];
    }
  }
  // Each owner adds up its nodes' contributions, then every rank gets every owner's sums; both
  // payloads list nodes in increasing id order.
  std::vector<std::vector<std::int32_t>> to_owner(num_ranks);
  for (std::size_t v = 0; v < n; ++v) {
    const auto owner = static_cast<std::size_t>(partition.owner(static_cast<NodeId>(v)));
    if (owner != me) to_owner[owner].push_back(contribution[v]);
  }
  std::vector<std::span<const std::byte>> views;
  for (const auto& payload : to_owner) views.push_back(as_bytes_span(payload));
  TransferTiming timing;
  const auto received = transport.all_to_all(views, Traffic::structure, timing);
  std::vector<std::int32_t> mine(owned.size());
  for (std::size_t i = 0; i < owned.size(); ++i) {
    mine[i] = contribution[static_cast<std::size_t>(owned[i])];
  }
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (q == me) continue;
    const std::vector<std::int32_t> part = from_bytes<std::int32_t>(received[q]);
    if (part.size() != mine.size()) {
      throw Error("rank " + std::to_string(q) + " sent degree contributions for " +
                  std::to_string(part.size()) + " nodes, rank " + std::to_string(me) + " owns " +
                  std::to_string(mine.size()));
    }
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += part[i];
  }
  const auto everyone = transport.all_gather(as_bytes_span(mine), Traffic::structure, timing);
  std::vector<std::vector<std::int32_t>> sums(num_ranks);
  for (std::size_t q = 0; q < num_ranks; ++q) sums[q] = from_bytes<std::int32_t>(everyone[q]);
  std::vector<std::size_t> next(num_ranks, 0);
  std::vector<std::int32_t> degrees(n);
  for (std::size_t v = 0; v < n; ++v) {
    const auto owner = static_cast<std::size_t>(partition.owner(static_cast<NodeId>(v)));
    degrees[v] = sums[owner].at(next[owner]++);
  }
  return degrees;
}

}  // namespace gnnbed
