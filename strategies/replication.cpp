#include "strategies/replication.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// The replicas of one group of consecutive ranks [begin, end): every partition of a rank outside
// the group, largest first, to the member with the most budget left. Empty when one does not fit.
std::optional<std::vector<std::vector<int>>> place_group(
    const std::vector<std::int64_t>& partition_bytes, const std::vector<std::int64_t>& budget_bytes,
    int begin, int end) {
  const auto num_parts = static_cast<int>(partition_bytes.size());
  std::vector<int> missing;
  for (int q = 0; q < num_parts; ++q) {
    if (q < begin || q >= end) missing.push_back(q);
  }
  std::stable_sort(missing.begin(), missing.end(), [&](int a, int b) {
    return partition_bytes[static_cast<std::size_t>(a)] >
           partition_bytes[static_cast<std::size_t>(b)];
  });
  std::vector<std::int64_t> left(budget_bytes.begin() + begin, budget_bytes.begin() + end);
  std::vector<std::vector<int>> cached(static_cast<std::size_t>(end - begin));
  for (const int q : missing) {
    const auto roomiest = static_cast<std::size_t>(std::max_element(left.begin(), left.end()) -
                                                   left.begin());  // first of equals
    const std::int64_t bytes = partition_bytes[static_cast<std::size_t>(q)];
    if (left[roomiest] < bytes) return std::nullopt;
    left[roomiest] -= bytes;
    cached[roomiest].push_back(q);
  }
  for (auto& parts : cached) std::sort(parts.begin(), parts.end());
  return cached;
}

}  // namespace

Replication::Replication(std::vector<std::vector<int>> cached,
                         std::vector<std::vector<int>> servers, int group_size)
    : cached_(std::move(cached)), servers_(std::move(servers)), group_size_(group_size) {
  const auto num_ranks = static_cast<int>(cached_.size());
  auto consistent = [&] {
    if (static_cast<int>(servers_.size()) != num_ranks || group_size_ < 1) return false;
    for (int r = 0; r < num_ranks; ++r) {
      const auto& servers_of_r = servers_[static_cast<std::size_t>(r)];
      if (static_cast<int>(servers_of_r.size()) != num_ranks ||
          !std::is_sorted(cached_[static_cast<std::size_t>(r)].begin(),
                          cached_[static_cast<std::size_t>(r)].end())) {
        return false;
      }
      for (int q = 0; q < num_ranks; ++q) {
        const int server = servers_of_r[static_cast<std::size_t>(q)];
        if (server < 0 || server >= num_ranks) return false;
        const auto& on_server = cached_[static_cast<std::size_t>(server)];
        if (server != q && !std::binary_search(on_server.begin(), on_server.end(), q)) return false;
        if ((server == r) !=
            (q == r || std::binary_search(cached_[static_cast<std::size_t>(r)].begin(),
                                          cached_[static_cast<std::size_t>(r)].end(), q))) {
          return false;  // a rank serves itself exactly what it holds
        }
      }
    }
    return true;
  };
  if (!consistent()) {
    throw Error(
        "a replication must give every rank, for every partition, a server that holds it, and "
        "serve every rank from itself exactly what it holds");
  }
}

Replication Replication::machine_store(int num_ranks, int ranks_per_machine) {
  if (ranks_per_machine < 1 || num_ranks % ranks_per_machine != 0) {
    throw Error("machine_store: " + std::to_string(num_ranks) + " ranks are not machines of " +
                std::to_string(ranks_per_machine));
  }
  std::vector<std::vector<int>> cached(static_cast<std::size_t>(num_ranks));
  std::vector<std::vector<int>> servers(static_cast<std::size_t>(num_ranks));
  for (int r = 0; r < num_ranks; ++r) {
    const int first = r / ranks_per_machine * ranks_per_machine;
    for (int q = 0; q < num_ranks; ++q) {
      const bool same_machine = q >= first && q < first + ranks_per_machine;
      if (same_machine && q != r) cached[static_cast<std::size_t>(r)].push_back(q);
      servers[static_cast<std::size_t>(r)].push_back(same_machine ? r : q);
    }
  }
  // No smaller group than every rank holds every partition.
  Replication store(std::move(cached), std::move(servers), num_ranks);
  store.shared_within_machine_ = true;
  return store;
}

std::vector<int> Replication::cached(int rank) const {
  return cached_.empty() ? std::vector<int>{} : cached_[static_cast<std::size_t>(rank)];
}

std::int64_t Replication::held_bytes(int rank,
                                     const std::vector<std::int64_t>& partition_bytes) const {
  std::int64_t bytes = partition_bytes[static_cast<std::size_t>(rank)];
  for (const int q : cached(rank)) bytes += partition_bytes[static_cast<std::size_t>(q)];
  return bytes;
}

Replication replicate_partitions(const std::vector<std::int64_t>& partition_bytes,
                                 const std::vector<std::int64_t>& budget_bytes) {
  const auto num_ranks = static_cast<int>(partition_bytes.size());
  if (budget_bytes.size() != partition_bytes.size()) {
    throw Error("replicate_partitions: " + std::to_string(budget_bytes.size()) + " budgets for " +
                std::to_string(num_ranks) + " partitions");
  }
  // As many groups as fit, from one rank each down to two groups (one group would hold nothing
  // but its own partitions).
  for (int num_groups = num_ranks; num_groups >= 2; --num_groups) {
    std::vector<std::vector<int>> cached(static_cast<std::size_t>(num_ranks));
    std::vector<std::vector<int>> servers(static_cast<std::size_t>(num_ranks),
                                          std::vector<int>(static_cast<std::size_t>(num_ranks)));
    bool fits = true;
    for (int g = 0; g < num_groups; ++g) {
      const int begin = g * num_ranks / num_groups;
      const int end = (g + 1) * num_ranks / num_groups;
      const auto group = place_group(partition_bytes, budget_bytes, begin, end);
      if (!group) {
        fits = false;
        break;
      }
      // Within the group every partition has exactly one holder, which serves every member.
      std::vector<int> holder(static_cast<std::size_t>(num_ranks));
      std::iota(holder.begin(), holder.end(), 0);
      for (int r = begin; r < end; ++r) {
        cached[static_cast<std::size_t>(r)] = (*group)[static_cast<std::size_t>(r - begin)];
        for (const int q : cached[static_cast<std::size_t>(r)]) {
          holder[static_cast<std::size_t>(q)] = r;
        }
      }
      for (int r = begin; r < end; ++r) servers[static_cast<std::size_t>(r)] = holder;
    }
    if (fits) return Replication(std::move(cached), std::move(servers), num_ranks / num_groups);
  }
  return Replication();
}

PartitionSizes partition_sizes(const Graph& graph, const NodePartition& partition) {
  const auto num_parts = static_cast<std::size_t>(partition.num_parts());
  PartitionSizes sizes{std::vector<std::int64_t>(num_parts, 0),
                       std::vector<std::int64_t>(num_parts, 0)};
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    const auto owner = static_cast<std::size_t>(partition.owner(v));
    ++sizes.nodes[owner];
    sizes.edges[owner] += graph.in_degree(v);
  }
  return sizes;
}

std::vector<std::int64_t> structure_partition_bytes(const PartitionSizes& sizes) {
  constexpr auto kOffsetBytes = static_cast<std::int64_t>(sizeof(std::int64_t));
  constexpr auto kIdBytes = static_cast<std::int64_t>(sizeof(NodeId));
  std::vector<std::int64_t> bytes;
  for (std::size_t q = 0; q < sizes.nodes.size(); ++q)
    bytes.push_back(sizes.nodes[q] * kOffsetBytes + sizes.edges[q] * kIdBytes);
  return bytes;
}

}  // namespace gnnbed
