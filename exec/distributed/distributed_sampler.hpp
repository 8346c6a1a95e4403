#pragma once
// Sampling a rank's mini-batch for real. With replicated structure the rank samples locally. With
// partitioned structure every hop is a round trip: the rank sends the ids of its remote frontier
// nodes to their owners, every owner samples them (with the same pure draw function, so the
// result is exactly what one process with the whole graph would draw) and sends back, per node,
// its sample size followed by the sampled ids; meanwhile it answers its peers the same way. The
// traffic is counted as structure and reported per hop, as strategies/sampling_traffic predicts.
// With caching, the rank also samples locally the nodes of the parts whose structure it holds a
// copy of.
#include <cstdint>
#include <span>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/transport.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/replication.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

class DistributedSampler {
 public:
  DistributedSampler(const LocalStore& store, const NodePartition& partition,
                     std::vector<int> fanouts, std::uint64_t seed, bool structure_partitioned,
                     Replication structure_replicas = {});

  // Collective when the structure is partitioned (every rank calls it in the same iteration,
  // possibly with no seeds). `hops` receives the traffic per hop (empty when replicated).
  MiniBatch sample(std::span<const NodeId> seeds, std::uint64_t batch_key, Transport& transport,
                   std::vector<SamplingHop>& hops, TransferTiming& timing) const;

  // Any rank's batch from this rank's whole copy of the structure (replicated structure only;
  // throws Error otherwise): what P3 derives its peers' first-layer graphs with.
  MiniBatch sample_locally(std::span<const NodeId> seeds, std::uint64_t batch_key) const;

 private:
  MiniBatch sample_over_network(std::span<const NodeId> seeds, std::uint64_t batch_key,
                                Transport& transport, std::vector<SamplingHop>& hops,
                                TransferTiming& timing) const;
  // Which draw of a node's in-neighbours a hop makes (sample_in_neighbors' arguments).
  struct HopDraw {
    std::uint64_t batch_key = 0;
    int hop = 0;
    int fanout = 0;
  };
  // The replies to the peers' requests of one hop (`asked`, by peer).
  std::vector<std::vector<std::int32_t>> answer_requests(
      const std::vector<std::vector<std::byte>>& asked, int rank, const HopDraw& draw,
      SamplingHop& record) const;
  // The hop's block of `frontier`, from local draws and the peers' replies (`answered`).
  Block assemble_hop(const std::vector<NodeId>& frontier,
                     const std::vector<std::vector<std::int32_t>>& requests,
                     const std::vector<std::vector<std::byte>>& answered, int rank,
                     const HopDraw& draw, SamplingHop& record) const;

  const LocalStore& store_;
  const NodePartition& partition_;
  std::vector<int> fanouts_;
  std::uint64_t seed_;
  bool structure_partitioned_;
  Replication structure_replicas_;
  NeighborSampler local_sampler_;
};

}  // namespace gnnbed
