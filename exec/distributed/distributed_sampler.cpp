#include "exec/distributed/distributed_sampler.hpp"

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr std::int64_t kIdBytes = 4;

std::vector<std::span<const std::byte>> byte_views(
    const std::vector<std::vector<std::int32_t>>& payloads) {
  std::vector<std::span<const std::byte>> views;
  for (const auto& payload : payloads) views.push_back(as_bytes_span(payload));
  return views;
}

}  // namespace

DistributedSampler::DistributedSampler(const LocalStore& store, const NodePartition& partition,
                                       std::vector<int> fanouts, std::uint64_t seed,
                                       bool structure_partitioned, Replication structure_replicas)
    : store_(store),
      partition_(partition),
      fanouts_(std::move(fanouts)),
      seed_(seed),
      structure_partitioned_(structure_partitioned),
      structure_replicas_(std::move(structure_replicas)),
      local_sampler_(store.structure(), fanouts_, seed) {}

MiniBatch DistributedSampler::sample_locally(std::span<const NodeId> seeds,
                                             std::uint64_t batch_key) const {
  if (structure_partitioned_) {
    throw Error("sampling another rank's batch locally needs the structure replicated");
  }
  return local_sampler_.sample(seeds, batch_key);
}

MiniBatch DistributedSampler::sample(std::span<const NodeId> seeds, std::uint64_t batch_key,
                                     Transport& transport, std::vector<SamplingHop>& hops,
                                     TransferTiming& timing) const {
  hops.clear();
  if (!structure_partitioned_) return local_sampler_.sample(seeds, batch_key);
  return sample_over_network(seeds, batch_key, transport, hops, timing);
}

MiniBatch DistributedSampler::sample_over_network(std::span<const NodeId> seeds,
                                                  std::uint64_t batch_key, Transport& transport,
                                                  std::vector<SamplingHop>& hops,
                                                  TransferTiming& timing) const {
  const int rank = transport.rank();
  const auto num_ranks = static_cast<std::size_t>(transport.size());
  const int num_hops = static_cast<int>(fanouts_.size());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.blocks.resize(static_cast<std::size_t>(num_hops));
  std::vector<NodeId> frontier = batch.seeds;
  for (int hop = 0; hop < num_hops; ++hop) {
    const HopDraw draw{batch_key, hop, fanouts_[static_cast<std::size_t>(hop)]};
    SamplingHop record;
    record.request_bytes_to.assign(num_ranks, 0);
    record.request_bytes_from.assign(num_ranks, 0);
    record.reply_bytes_to.assign(num_ranks, 0);
    record.reply_bytes_from.assign(num_ranks, 0);

    std::vector<std::vector<std::int32_t>> requests(num_ranks);
    for (const NodeId v : frontier) {
      const int server = structure_replicas_.server(rank, partition_.owner(v));
      if (server != rank) requests[static_cast<std::size_t>(server)].push_back(v);
    }
    const auto asked = transport.all_to_all(byte_views(requests), Traffic::structure, timing);
    const auto replies = answer_requests(asked, rank, draw, record);
    const auto answered = transport.all_to_all(byte_views(replies), Traffic::structure, timing);

    Block& block = batch.blocks[static_cast<std::size_t>(num_hops - 1 - hop)];
    block = assemble_hop(frontier, requests, answered, rank, draw, record);
    frontier = block.src_nodes;
    hops.push_back(std::move(record));
  }
  return batch;
}

// Per requested node its sample size, then all the sampled ids.
std::vector<std::vector<std::int32_t>> DistributedSampler::answer_requests(
    const std::vector<std::vector<std::byte>>& asked, int rank, const HopDraw& draw,
    SamplingHop& record) const {
  const Graph& structure = store_.structure();
  std::vector<std::vector<std::int32_t>> replies(asked.size());
  std::vector<NodeId> drawn;
  for (std::size_t q = 0; q < asked.size(); ++q) {
    if (static_cast<int>(q) == rank) continue;
    const std::vector<std::int32_t> nodes = from_bytes<std::int32_t>(asked[q]);
    std::vector<std::int32_t>& reply = replies[q];
    reply.reserve(nodes.size());
    drawn.clear();
    for (const NodeId v : nodes) {
      if (v < 0 || v >= structure.num_nodes() ||
          !structure_replicas_.holds(rank, partition_.owner(v))) {
        throw Error("rank " + std::to_string(q) + " asked rank " + std::to_string(rank) +
                    " to sample node " + std::to_string(v) + ", whose in-edges it does not hold");
      }
      const std::size_t before = drawn.size();
      sample_in_neighbors(structure, v, draw.fanout, seed_, draw.batch_key, draw.hop, drawn);
      reply.push_back(static_cast<std::int32_t>(drawn.size() - before));
    }
    reply.insert(reply.end(), drawn.begin(), drawn.end());
    record.request_bytes_from[q] = static_cast<std::int64_t>(nodes.size()) * kIdBytes;
    record.reply_bytes_to[q] = static_cast<std::int64_t>(reply.size()) * kIdBytes;
    record.edges_sampled_for_peers += static_cast<std::int64_t>(drawn.size());
  }
  return replies;
}

// The hop's block in frontier order: own nodes sampled here, others from the replies (which list
// the requested nodes in request order, which is frontier order).
Block DistributedSampler::assemble_hop(const std::vector<NodeId>& frontier,
                                       const std::vector<std::vector<std::int32_t>>& requests,
                                       const std::vector<std::vector<std::byte>>& answered,
                                       int rank, const HopDraw& draw, SamplingHop& record) const {
  const std::size_t num_ranks = requests.size();
  std::vector<std::vector<std::int32_t>> answers(num_ranks);
  std::vector<std::size_t> next_count(num_ranks, 0);
  std::vector<std::size_t> next_id(num_ranks, 0);
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (static_cast<int>(q) == rank) continue;
    answers[q] = from_bytes<std::int32_t>(answered[q]);
    next_id[q] = requests[q].size();
    record.request_bytes_to[q] = static_cast<std::int64_t>(requests[q].size()) * kIdBytes;
    record.reply_bytes_from[q] = static_cast<std::int64_t>(answers[q].size()) * kIdBytes;
  }
  std::vector<std::int64_t> offsets{0};
  std::vector<NodeId> neighbors;
  for (const NodeId v : frontier) {
    const auto server =
        static_cast<std::size_t>(structure_replicas_.server(rank, partition_.owner(v)));
    if (static_cast<int>(server) == rank) {
      const std::size_t before = neighbors.size();
      sample_in_neighbors(store_.structure(), v, draw.fanout, seed_, draw.batch_key, draw.hop,
                          neighbors);
      record.edges_sampled_locally += static_cast<std::int64_t>(neighbors.size() - before);
    } else {
      const std::vector<std::int32_t>& answer = answers[server];
      if (next_count[server] >= requests[server].size()) {
        throw Error("rank " + std::to_string(server) +
                    " answered fewer sampling requests than asked");
      }
      const auto count = static_cast<std::size_t>(answer.at(next_count[server]++));
      if (next_id[server] + count > answer.size()) {
        throw Error("rank " + std::to_string(server) + " sent a truncated sampling reply");
      }
      neighbors.insert(neighbors.end(),
                       answer.begin() + static_cast<std::ptrdiff_t>(next_id[server]),
                       answer.begin() + static_cast<std::ptrdiff_t>(next_id[server] + count));
      next_id[server] += count;
    }
    offsets.push_back(static_cast<std::int64_t>(neighbors.size()));
  }
  return make_block(frontier, offsets, neighbors);
}

}  // namespace gnnbed
