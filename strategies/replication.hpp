#pragma once
// P3's caching [P3 paper, section 3.4]: when ranks have memory to spare, copies of other ranks'
// partitions (graph structure and features, independently) are placed on them, so that what a
// rank holds it reads locally instead of over the network.
//
// Partition q is what rank q holds without caching: the in-edges of q's nodes (partitioned
// structure), and q's feature placement (DGL: the rows of q's nodes; P3: q's slice of every
// node's feature columns). Replicas only add to that, so every rank keeps its own partition and
// whatever reads the partitions as placed (evaluation, sharded workloads) is unchanged.
//
// The paper's greedy: "fit the input into the fewest machines and create copies of the partitions
// on the other machines". Ranks are cut into groups of consecutive ranks (a machine's ranks are
// consecutive, so groups follow machines where sizes allow), each group as small as the budget
// allows and each holding every partition once: its members' own partitions, plus the others
// placed on the members as replicas. A rank reads a partition from itself when it holds it, and
// otherwise from the member of its group that does (its "server"; without caching, the owner).
#include <cstdint>
#include <vector>

#include "workloads/graph.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {

class Replication {
 public:
  // Nothing replicated: every rank holds its own partition only, on any number of ranks.
  Replication() = default;
  // Every rank's replicas (`cached[r]`: the partitions besides r that r holds) and, for every rank
  // and partition, the rank that serves it; checked for consistency (Error otherwise).
  Replication(std::vector<std::vector<int>> cached, std::vector<std::vector<int>> servers,
              int group_size);

  // The per-machine feature store (distribution.feature_store "machine"): every rank of a machine
  // of `ranks_per_machine` consecutive ranks reads its machine's partitions from the machine's
  // host memory, and the other partitions from their owners.
  static Replication machine_store(int num_ranks, int ranks_per_machine);
  // Whether the copies are one store that the machine's ranks share (machine_store) rather than
  // copies each rank holds: a machine then keeps every partition once.
  bool shared_within_machine() const { return shared_within_machine_; }

  // Whether any rank holds a replica.
  bool any() const { return !cached_.empty(); }
  // Ranks in the smallest group: the fewest ranks that hold every partition (`num_ranks` when
  // nothing is replicated).
  int group_size(int num_ranks) const { return any() ? group_size_ : num_ranks; }

  bool holds(int rank, int part) const { return server(rank, part) == rank; }
  // The rank that gives `rank` partition `part`: `rank` itself when it holds it, otherwise a rank
  // of its group that does (the owner `part` when nothing is replicated).
  int server(int rank, int part) const {
    return servers_.empty()
               ? part
               : servers_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(part)];
  }
  // The partitions `rank` holds besides its own, in increasing order.
  std::vector<int> cached(int rank) const;
  // Bytes of `rank`'s own partition and its replicas.
  std::int64_t held_bytes(int rank, const std::vector<std::int64_t>& partition_bytes) const;

  bool operator==(const Replication& other) const = default;

 private:
  std::vector<std::vector<int>> cached_;   // per rank; empty when nothing is replicated
  std::vector<std::vector<int>> servers_;  // [rank][part]; empty when nothing is replicated
  int group_size_ = 0;
  bool shared_within_machine_ = false;
};

// The greedy placement of P3 section 3.4. `partition_bytes[q]` is the size of rank q's partition;
// `budget_bytes[r]` what rank r may hold beyond its own partition. For G = N, N - 1, ..., 2 the
// ranks are cut into G groups of consecutive ranks (sizes differing by at most one); in every
// group, each partition of a rank outside the group goes, largest first, to the member with the
// most budget left (the lowest rank on ties). The first G for which every group fits is the
// answer (the smallest groups); when none does, nothing is replicated.
Replication replicate_partitions(const std::vector<std::int64_t>& partition_bytes,
                                 const std::vector<std::int64_t>& budget_bytes);

// What every rank owns of a graph: nodes and their in-edges (CSR entries), per part, in one pass.
struct PartitionSizes {
  std::vector<std::int64_t> nodes;
  std::vector<std::int64_t> edges;
};
PartitionSizes partition_sizes(const Graph& graph, const NodePartition& partition);

// Bytes of every rank's structure partition: an offset (8 bytes) per owned node and a source id
// (4 bytes) per owned in-edge.
std::vector<std::int64_t> structure_partition_bytes(const PartitionSizes& sizes);

}  // namespace gnnbed
