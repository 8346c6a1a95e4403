#include "strategies/plan/collective_schedule.hpp"

#include <algorithm>
#include <numeric>

namespace gnnbed {
namespace {

int wrap(int value, int n) { return ((value % n) + n) % n; }

}  // namespace

RingPeers ring_peers(int rank, int num_ranks) {
  return {wrap(rank + 1, num_ranks), wrap(rank - 1, num_ranks)};
}

PairwiseStep pairwise_step(int rank, int num_ranks, int step) {
  return {wrap(rank + step, num_ranks), wrap(rank - step, num_ranks)};
}

std::vector<PairwiseStep> exchange_steps(int rank, int num_ranks, int ranks_per_machine) {
  const int group = ranks_per_machine > 0 ? ranks_per_machine : num_ranks;
  const int first = rank - rank % group;
  std::vector<PairwiseStep> steps;
  for (int step = 1; step < group; ++step) {
    const PairwiseStep within = pairwise_step(rank - first, group, step);
    steps.push_back({first + within.send_to, first + within.receive_from});
  }
  return steps;
}

std::vector<StepBlock> all_to_all_blocks(int num_ranks, int block_steps) {
  const int per_block = block_steps > 0 ? block_steps : std::max(num_ranks - 1, 1);
  std::vector<StepBlock> blocks;
  for (int first = 1; first < num_ranks; first += per_block) {
    blocks.push_back({first, std::min(num_ranks, first + per_block)});
  }
  return blocks;
}

RingGatherStep ring_gather_step(int rank, int num_ranks, int step) {
  return {wrap(rank - step, num_ranks), wrap(rank - step - 1, num_ranks)};
}

ElementRange ring_chunk(std::int64_t num_elements, int num_ranks, int chunk) {
  return {num_elements * chunk / num_ranks, num_elements * (chunk + 1) / num_ranks};
}

RingGatherStep ring_reduce_scatter_step(int rank, int num_ranks, int step) {
  return {wrap(rank - step, num_ranks), wrap(rank - step - 1, num_ranks)};
}

RingGatherStep ring_all_reduce_gather_step(int rank, int num_ranks, int step) {
  return {wrap(rank + 1 - step, num_ranks), wrap(rank - step, num_ranks)};
}

namespace {

// A ring all-reduce of the elements `range` among the ranks members[0..k) (this rank is
// members[me]); only its reduce-scatter phase, its all-gather phase, or both.
void append_ring(std::vector<AllReduceStep>& steps, const std::vector<int>& members, int me,
                 ElementRange range, bool reduce, bool gather) {
  const int k = static_cast<int>(members.size());
  if (k < 2) return;
  const RingPeers peers = ring_peers(me, k);
  const auto chunk = [&](int c) {
    const ElementRange part = ring_chunk(range.size(), k, c);
    return ElementRange{range.begin + part.begin, range.begin + part.end};
  };
  const auto add_phase = [&](bool add) {
    for (int s = 0; s + 1 < k; ++s) {
      const RingGatherStep blocks =
          add ? ring_reduce_scatter_step(me, k, s) : ring_all_reduce_gather_step(me, k, s);
      steps.push_back({members[static_cast<std::size_t>(peers.next)],
                       members[static_cast<std::size_t>(peers.previous)], chunk(blocks.send_block),
                       chunk(blocks.receive_block), add});
    }
  };
  if (reduce) add_phase(true);
  if (gather) add_phase(false);
}

}  // namespace

bool hierarchical_all_reduce(int num_ranks, int ranks_per_machine) {
  return ranks_per_machine > 1 && ranks_per_machine < num_ranks &&
         num_ranks % ranks_per_machine == 0;
}

std::vector<AllReduceStep> all_reduce_steps(int rank, int num_ranks, int ranks_per_machine,
                                            std::int64_t num_elements) {
  std::vector<AllReduceStep> steps;
  const ElementRange all{0, num_elements};
  if (!hierarchical_all_reduce(num_ranks, ranks_per_machine)) {
    std::vector<int> everyone(static_cast<std::size_t>(num_ranks));
    for (int q = 0; q < num_ranks; ++q) everyone[static_cast<std::size_t>(q)] = q;
    append_ring(steps, everyone, rank, all, true, true);
    return steps;
  }
  const int g = ranks_per_machine;
  const int machines = num_ranks / g;
  const int machine = rank / g;
  const int local = rank % g;
  std::vector<int> machine_ranks;
  for (int i = 0; i < g; ++i) machine_ranks.push_back(machine * g + i);
  std::vector<int> peers_across;
  for (int m = 0; m < machines; ++m) peers_across.push_back(m * g + local);
  // After the reduce-scatter within the machine, local rank i holds chunk (i + 1) mod g summed.
  const ElementRange summed = ring_chunk(num_elements, g, wrap(local + 1, g));
  append_ring(steps, machine_ranks, local, all, true, false);
  append_ring(steps, peers_across, machine, summed, true, true);
  append_ring(steps, machine_ranks, local, all, false, true);
  return steps;
}

namespace {

std::vector<std::int64_t> all_reduce_elements_by_peer(int rank, int num_ranks,
                                                      int ranks_per_machine,
                                                      std::int64_t num_elements, bool sent) {
  std::vector<std::int64_t> elements(static_cast<std::size_t>(num_ranks), 0);
  for (const AllReduceStep& step :
       all_reduce_steps(rank, num_ranks, ranks_per_machine, num_elements)) {
    if (sent) {
      elements[static_cast<std::size_t>(step.send_to)] += step.send.size();
    } else {
      elements[static_cast<std::size_t>(step.receive_from)] += step.receive.size();
    }
  }
  return elements;
}

}  // namespace

std::vector<std::int64_t> all_reduce_elements_to(int rank, int num_ranks, int ranks_per_machine,
                                                 std::int64_t num_elements) {
  return all_reduce_elements_by_peer(rank, num_ranks, ranks_per_machine, num_elements, true);
}

std::vector<std::int64_t> all_reduce_elements_from(int rank, int num_ranks, int ranks_per_machine,
                                                   std::int64_t num_elements) {
  return all_reduce_elements_by_peer(rank, num_ranks, ranks_per_machine, num_elements, false);
}

std::int64_t ring_all_reduce_elements_sent(int rank, int num_ranks, std::int64_t num_elements) {
  const std::vector<std::int64_t> to = all_reduce_elements_to(rank, num_ranks, 1, num_elements);
  return std::accumulate(to.begin(), to.end(), std::int64_t{0});
}

std::int64_t ring_all_reduce_elements_received(int rank, int num_ranks, std::int64_t num_elements) {
  const std::vector<std::int64_t> from = all_reduce_elements_from(rank, num_ranks, 1, num_elements);
  return std::accumulate(from.begin(), from.end(), std::int64_t{0});
}

std::int64_t ring_all_gather_bytes_sent(int rank, const std::vector<std::int64_t>& payload_bytes) {
  const int n = static_cast<int>(payload_bytes.size());
  std::int64_t sent = 0;
  for (int step = 0; step + 1 < n; ++step) {
    sent += payload_bytes[static_cast<std::size_t>(ring_gather_step(rank, n, step).send_block)];
  }
  return sent;
}

std::int64_t ring_all_gather_bytes_received(int rank,
                                            const std::vector<std::int64_t>& payload_bytes) {
  const int n = static_cast<int>(payload_bytes.size());
  std::int64_t received = 0;
  for (int step = 0; step + 1 < n; ++step) {
    received +=
        payload_bytes[static_cast<std::size_t>(ring_gather_step(rank, n, step).receive_block)];
  }
  return received;
}

}  // namespace gnnbed
