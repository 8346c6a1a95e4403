#pragma once
// The algorithms collectives are decomposed into, as pure schedules: which peer each rank sends
// what to at each step. Real transports (exec/) follow these schedules step for step, and the
// simulator (sim/) replays them, so the bytes a plan predicts are the bytes the transport moves.
//
// - pairwise all-to-all(v): at step s = 1 .. n-1, rank r sends its payload for (r + s) mod n and
//   receives the payload of (r - s) mod n (Open MPI's and NCCL's pairwise exchange). Blocking
//   exchanges (sampling, announcements) run the steps one after another; a plan's all-to-all
//   posts them in blocks of distribution.all_to_all_block_steps (4 unless set) at once, each block
//   once the one before has completed, as MPICH throttles its alltoallv: with 4, every pair at
//   once on up to 5 ranks, and no rank with more than 4 transfers in flight on more.
// - ring all-gather(v): at step s = 0 .. n-2, rank r sends block (r - s) mod n to (r + 1) mod n
//   and receives block (r - s - 1) mod n from (r - 1) mod n.
// - ring all-reduce: reduce-scatter then all-gather over n chunks of the buffer (chunk c holds
//   elements [c * len / n, (c + 1) * len / n)); rank r sends chunk (r - s) mod n at reduce-scatter
//   step s and chunk (r + 1 - s) mod n at all-gather step s, each time to (r + 1) mod n. Every
//   rank sends 2 (n - 1) chunks: 2 (n - 1) / n of the buffer, as nccl-tests' bus bandwidth says.
// - hierarchical all-reduce over machines of g consecutive ranks (Horovod's and NCCL's two-level
//   scheme): a ring reduce-scatter within every machine leaves local rank i with the machine's sum
//   of chunk (i + 1) mod g of g; g rings across the machines (ranks with the same local index)
//   all-reduce those chunks; a ring all-gather within every machine spreads them. A machine's NIC
//   carries the bytes of one flat ring, in 2 (M - 1) network steps instead of 2 (n - 1).
#include <cstdint>
#include <vector>

namespace gnnbed {

struct RingPeers {
  int next;
  int previous;
};
RingPeers ring_peers(int rank, int num_ranks);

// Pairwise all-to-all: the peers rank r sends to and receives from at step s (1 <= s < n).
struct PairwiseStep {
  int send_to;
  int receive_from;
};
PairwiseStep pairwise_step(int rank, int num_ranks, int step);
// Every step of a blocking all-to-all, in order: over every rank (`ranks_per_machine` 0), or only
// among the `ranks_per_machine` consecutive ranks of `rank`'s machine (an exchange within
// machines: the pairwise steps of the machine's ranks).
std::vector<PairwiseStep> exchange_steps(int rank, int num_ranks, int ranks_per_machine);

// A plan's all-to-all: the steps [first, last) a rank posts at once, in blocks of `block_steps`
// (0: every step in one block; 1: one step at a time).
inline constexpr int kDefaultAllToAllBlockSteps = 4;
struct StepBlock {
  int first;
  int last;
};
std::vector<StepBlock> all_to_all_blocks(int num_ranks, int block_steps);

// Ring all-gather: the block (origin rank) rank r forwards at step s (0 <= s < n - 1), and the one
// it receives.
struct RingGatherStep {
  int send_block;
  int receive_block;
};
RingGatherStep ring_gather_step(int rank, int num_ranks, int step);

// Ring all-reduce over `num_elements`: chunk c's element range.
struct ElementRange {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t size() const { return end - begin; }
};
ElementRange ring_chunk(std::int64_t num_elements, int num_ranks, int chunk);

// The chunk rank r sends at step s of the reduce-scatter phase (s < n - 1), and receives (and
// adds into its own copy).
RingGatherStep ring_reduce_scatter_step(int rank, int num_ranks, int step);
// The chunk rank r sends at step s of the all-gather phase (s < n - 1), and receives.
RingGatherStep ring_all_reduce_gather_step(int rank, int num_ranks, int step);

// One step of an all-reduce as rank r runs it: it sends its elements `send` to `send_to` and
// receives `receive` from `receive_from`, then adds them into its own (reduce phases) or copies
// them over its own (gather phases).
struct AllReduceStep {
  int send_to;
  int receive_from;
  ElementRange send;
  ElementRange receive;
  bool add;
};
// Rank r's steps of an all-reduce of `num_elements` over n ranks: hierarchical when machines of
// `ranks_per_machine` ranks (1 < g < n, g divides n) are given, one ring over every rank
// otherwise. Every rank's steps pair up with its peers' in order, and each element is added in the
// same order on every rank, so every rank ends with bit-identical sums.
std::vector<AllReduceStep> all_reduce_steps(int rank, int num_ranks, int ranks_per_machine,
                                            std::int64_t num_elements);
// Whether all_reduce_steps is hierarchical for these sizes.
bool hierarchical_all_reduce(int num_ranks, int ranks_per_machine);
// Elements rank r sends to / receives from each rank (result[q]) over those steps.
std::vector<std::int64_t> all_reduce_elements_to(int rank, int num_ranks, int ranks_per_machine,
                                                 std::int64_t num_elements);
std::vector<std::int64_t> all_reduce_elements_from(int rank, int num_ranks, int ranks_per_machine,
                                                   std::int64_t num_elements);

// Elements rank r sends in a ring all-reduce of `num_elements` over n ranks (it receives as many
// from its predecessor's point of view: see ring_all_reduce_elements_received).
std::int64_t ring_all_reduce_elements_sent(int rank, int num_ranks, std::int64_t num_elements);
std::int64_t ring_all_reduce_elements_received(int rank, int num_ranks, std::int64_t num_elements);

// Bytes rank r sends / receives in a ring all-gather where rank q contributes payload_bytes[q].
std::int64_t ring_all_gather_bytes_sent(int rank, const std::vector<std::int64_t>& payload_bytes);
std::int64_t ring_all_gather_bytes_received(int rank,
                                            const std::vector<std::int64_t>& payload_bytes);

}  // namespace gnnbed
