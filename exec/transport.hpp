#pragma once
// How ranks talk. Data-plane operations follow the schedules of
// strategies/plan/collective_schedule.hpp step for step and count every payload byte they send and
// receive, by traffic kind, so that a run's measured traffic can be checked against its plans.
// Control-plane operations (timing reductions, result gathering) are not counted: they are the
// testbed's, not the strategy's.
//
// Implementations: MpiTransport (exec/mpi/), later NCCL.
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strategies/plan/traffic.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {

// Where a data-plane call spent its time: `waiting_seconds` until the peers' messages were
// available (a peer that is late makes this grow), `transfer_seconds` the rest.
struct TransferTiming {
  double waiting_seconds = 0;
  double transfer_seconds = 0;
};

// A data-plane call that was started and runs while the caller computes (pipelined plans). It
// advances only inside test() and wait() (and the transport's other calls), so callers test it
// between their compute ops. Bytes are counted when it completes.
class PendingTransfer {
 public:
  virtual ~PendingTransfer() = default;
  // Advances without blocking; true once complete.
  virtual bool test() = 0;
  // Blocks until complete; the time blocked counts as waiting.
  virtual void wait(TransferTiming& timing) = 0;
  // After completion. All-to-all: received[q] is what rank q sent (empty for this rank).
  virtual std::vector<std::vector<std::byte>>& received() = 0;
  // After completion. All-reduce: the element-wise sum over ranks.
  virtual std::vector<float>& reduced() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Pairwise all-to-all(v) of raw bytes: send[q] goes to rank q; received[q] is what q sent here.
  // send.size() == size(); send[rank()] is not sent and received[rank()] comes back empty.
  // Receivers need not know the sizes in advance. `received` is resized, so buffers passed back
  // call after call keep their allocations (large fresh buffers cost a page fault per 4 KiB).
  virtual void all_to_all_into(const std::vector<std::span<const std::byte>>& send,
                               std::vector<std::vector<std::byte>>& received, Traffic kind,
                               TransferTiming& timing) = 0;
  std::vector<std::vector<std::byte>> all_to_all(
      const std::vector<std::span<const std::byte>>& send, Traffic kind, TransferTiming& timing) {
    std::vector<std::vector<std::byte>> received;
    all_to_all_into(send, received, kind, timing);
    return received;
  }

  // all_to_all_into among the `ranks_per_machine` consecutive ranks of this rank's machine only
  // (collective_schedule.hpp's exchange_steps): send[q] must be empty for every q elsewhere, and
  // received[q] comes back empty for them. Every rank of the job calls it, each exchanging with
  // its machine. The default runs all_to_all_into over every rank (the same bytes, more steps).
  virtual void all_to_all_within_machine_into(const std::vector<std::span<const std::byte>>& send,
                                              std::vector<std::vector<std::byte>>& received,
                                              Traffic kind, TransferTiming& timing,
                                              int ranks_per_machine);

  // Ring all-gather(v): every rank's `mine` reaches every other rank; received[q] is rank q's
  // payload (received[rank()] is a copy of `mine`).
  virtual std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> mine,
                                                         Traffic kind, TransferTiming& timing) = 0;

  // All-reduce: every rank ends with the element-wise sum of all ranks' `data`, bit-identical on
  // every rank. Every rank must pass the same number of elements and `ranks_per_machine`: the
  // machines of a hierarchical all-reduce (collective_schedule.hpp), 0 or 1 for one ring.
  virtual void all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing,
                              int ranks_per_machine) = 0;
  void all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing) {
    all_reduce_sum(data, kind, timing, 0);
  }

  // Started versions of all_to_all and all_reduce_sum, for plans: the same messages (the
  // all-to-all posts its steps in blocks of `block_steps`, all_to_all_blocks in
  // collective_schedule.hpp, instead of one by one; the all-reduce runs the same steps), completed
  // by the returned transfer. The receiver knows the sizes in advance: receive_bytes[q] from rank
  // q, and a different size is an error. `send` must stay valid until completion. Every rank
  // starts its calls in the same order, as for the blocking ones.
  virtual std::unique_ptr<PendingTransfer> start_all_to_all(
      const std::vector<std::span<const std::byte>>& send,
      const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps) = 0;
  virtual std::unique_ptr<PendingTransfer> start_all_reduce_sum(std::vector<float> data,
                                                                Traffic kind,
                                                                int ranks_per_machine) = 0;

  // Point to point, for plans whose ranks exchange with one peer at a time (PyTorch-BigGraph's
  // partition, lock and parameter servers): `payload` to `peer`, or `receive_bytes` from `peer`
  // (received()[peer] holds them), completed by the returned transfer. The peer may be the rank
  // itself (a server beside the rank's own trainer, which PBG runs as another process). The caller
  // numbers the messages of each direction between two ranks (a plan: by its ops' order), and a
  // send matches the peer's receive of the same number, whatever order the two sides start them in
  // (a rank's streams start theirs independently); numbers are taken modulo a transport's bound,
  // far above the messages ever in flight between two ranks. They never match a collective call's.
  // `payload` must stay valid until completion. A transport without them throws Error.
  virtual std::unique_ptr<PendingTransfer> start_send(int peer, int number,
                                                      std::span<const std::byte> payload,
                                                      Traffic kind);
  virtual std::unique_ptr<PendingTransfer> start_receive(int peer, int number,
                                                         std::int64_t receive_bytes, Traffic kind);

  // Bytes this rank sent and received through the data-plane calls so far.
  virtual const TrafficBytes& bytes_sent() const = 0;
  virtual const TrafficBytes& bytes_received() const = 0;

  // Control plane (not counted).
  virtual void barrier() = 0;
  virtual double max_over_ranks(double value) = 0;
  virtual double sum_over_ranks(double value) = 0;
  virtual std::int64_t sum_over_ranks(std::int64_t value) = 0;
  // Rank 0 receives every rank's text (in rank order); other ranks get an empty vector.
  virtual std::vector<std::string> gather_to_root(const std::string& text) = 0;
  // Every rank receives every rank's floats (in rank order).
  virtual std::vector<std::vector<float>> all_gather_control(std::span<const float> mine) = 0;
};

// Throws Error unless `ranks_per_machine` divides the ranks and `send` holds nothing for a rank of
// another machine than `rank`'s: what an exchange within machines may be given.
inline void require_payloads_within_machine(const std::vector<std::span<const std::byte>>& send,
                                            int rank, int size, int ranks_per_machine) {
  if (ranks_per_machine < 1 || size % ranks_per_machine != 0) {
    throw Error("all_to_all within machines: " + std::to_string(size) +
                " ranks are not whole machines of " + std::to_string(ranks_per_machine));
  }
  for (std::size_t q = 0; q < send.size(); ++q) {
    if (static_cast<int>(q) / ranks_per_machine != rank / ranks_per_machine && !send[q].empty()) {
      throw Error("all_to_all within machines: rank " + std::to_string(rank) + " passed " +
                  std::to_string(send[q].size()) + " bytes for rank " + std::to_string(q) +
                  ", on another machine");
    }
  }
}

inline void Transport::all_to_all_within_machine_into(
    const std::vector<std::span<const std::byte>>& send,
    std::vector<std::vector<std::byte>>& received, Traffic kind, TransferTiming& timing,
    int ranks_per_machine) {
  require_payloads_within_machine(send, rank(), size(), ranks_per_machine);
  all_to_all_into(send, received, kind, timing);
}

inline std::unique_ptr<PendingTransfer> Transport::start_send(int, int, std::span<const std::byte>,
                                                              Traffic) {
  throw Error("this transport has no point-to-point transfers (start_send)");
}
inline std::unique_ptr<PendingTransfer> Transport::start_receive(int, int, std::int64_t, Traffic) {
  throw Error("this transport has no point-to-point transfers (start_receive)");
}

// Typed conveniences over the byte interface, for trivially copyable element types.
template <typename T>
std::span<const std::byte> as_bytes_span(const std::vector<T>& values) {
  return std::as_bytes(std::span<const T>(values));
}

template <typename T>
std::vector<T> from_bytes(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace gnnbed
