#include "strategies/plan/collective_schedule.hpp"

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

// Elements one rank sends (or receives) over a ring all-reduce: its block of every step of the
// reduce-scatter and then of the all-gather.
std::int64_t ring_all_reduce_elements(int rank, int num_ranks, std::int64_t num_elements,
                                      bool sent) {
  std::int64_t total = 0;
  for (int step = 0; step + 1 < num_ranks; ++step) {
    for (const RingGatherStep& blocks : {ring_reduce_scatter_step(rank, num_ranks, step),
                                         ring_all_reduce_gather_step(rank, num_ranks, step)}) {
      const int block = sent ? blocks.send_block : blocks.receive_block;
      total += ring_chunk(num_elements, num_ranks, block).size();
    }
  }
  return total;
}

}  // namespace

std::int64_t ring_all_reduce_elements_sent(int rank, int num_ranks, std::int64_t num_elements) {
  return ring_all_reduce_elements(rank, num_ranks, num_elements, true);
}

std::int64_t ring_all_reduce_elements_received(int rank, int num_ranks, std::int64_t num_elements) {
  return ring_all_reduce_elements(rank, num_ranks, num_elements, false);
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
