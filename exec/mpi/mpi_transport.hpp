#pragma once
// The Transport over MPI point-to-point messages. Every collective follows the step schedule of
// strategies/plan/collective_schedule.hpp with one nonblocking send and one probed receive per
// step, so the bytes counted are exactly the payload bytes those schedules predict (no headers).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "exec/transport.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {

// MPI_Init_thread (MPI_THREAD_FUNNELED: only the main thread calls MPI; OpenMP threads compute)
// and MPI_Finalize, for programs that own MPI's lifetime. Throws Error when MPI is already
// initialized or cannot give the funneled thread level. Transports must be destroyed first.
// Before MPI starts it sets Open MPI's TCP fragment for large messages to 256 KiB, unless the
// user has set it (mpi_transport.cpp says why).
class MpiSession {
 public:
  explicit MpiSession(int* argc = nullptr, char*** argv = nullptr);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// Works on a duplicate of `communicator` (collective: every rank constructs its transport at the
// same point), so that its messages never match anyone else's and MPI_ERRORS_RETURN, set on the
// duplicate, changes no one else's error handling. A failing MPI call throws Error with MPI's
// message. Messages are at most INT_MAX bytes (MPI counts are int); larger ones throw Error
// before anything is sent. Data-plane calls add their time to `timing`.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm communicator = MPI_COMM_WORLD);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_to_all_within_machine_into(const std::vector<std::span<const std::byte>>& send,
                                      std::vector<std::vector<std::byte>>& received, Traffic kind,
                                      TransferTiming& timing, int ranks_per_machine) override;
  void all_to_all_into(const std::vector<std::span<const std::byte>>& send,
                       std::vector<std::vector<std::byte>>& received, Traffic kind,
                       TransferTiming& timing) override;
  std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> mine, Traffic kind,
                                                 TransferTiming& timing) override;
  using Transport::all_reduce_sum;
  void all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing,
                      int ranks_per_machine) override;
  std::unique_ptr<PendingTransfer> start_all_to_all(
      const std::vector<std::span<const std::byte>>& send,
      const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps) override;
  std::unique_ptr<PendingTransfer> start_all_reduce_sum(std::vector<float> data, Traffic kind,
                                                        int ranks_per_machine) override;
  std::unique_ptr<PendingTransfer> start_send(int peer, int number,
                                              std::span<const std::byte> payload,
                                              Traffic kind) override;
  std::unique_ptr<PendingTransfer> start_receive(int peer, int number, std::int64_t receive_bytes,
                                                 Traffic kind) override;

  const TrafficBytes& bytes_sent() const override { return bytes_sent_; }
  const TrafficBytes& bytes_received() const override { return bytes_received_; }

  void barrier() override;
  double max_over_ranks(double value) override;
  double sum_over_ranks(double value) override;
  std::int64_t sum_over_ranks(std::int64_t value) override;
  std::vector<std::string> gather_to_root(const std::string& text) override;
  std::vector<std::vector<float>> all_gather_control(std::span<const float> mine) override;

  // How long a call may wait for its peers without progress before it throws ProgressTimeout
  // (distribution.progress_timeout_seconds): a rank that stopped (SIGSTOP, a debugger, a hung
  // file system) would otherwise leave its peers spinning forever. 0 (the default): no limit.
  // Before it throws, the rank asks every peer whether it is alive (every rank answers while it
  // waits under the timeout), so the message names the ranks that did not answer, or says that
  // all answered and the ranks wait for each other in different calls (a deadlock).
  void set_progress_timeout(double seconds) { progress_timeout_seconds_ = seconds; }

 private:
  friend class MpiPendingAllToAll;
  friend class MpiPendingAllReduce;
  friend class MpiPendingPointToPoint;
  // Waits for `requests` to complete; with a progress timeout, polls them and throws
  // ProgressTimeout naming `call` and `peer` (-1: the call has no single peer) when it passes.
  void complete(std::span<MPI_Request> requests, const char* call, int peer = -1);
  // MPI_Probe, under the progress timeout.
  void probe(int source, int tag, MPI_Status& status);
  // Calls `poll` (true once done) until it is done, or throws ProgressTimeout past the timeout.
  // Answers the peers' liveness queries meanwhile.
  template <typename Poll>
  void poll_until(const Poll& poll, const char* call, int peer);
  [[noreturn]] void timed_out(const char* call, int peer);
  // Replies to every liveness query that has arrived (a no-op without a progress timeout).
  void answer_liveness_queries();
  // Queries every peer and waits up to `grace_seconds` for the replies, answering queries
  // meanwhile; returns the peers that did not reply, in rank order.
  std::vector<int> peers_that_do_not_answer(double grace_seconds);
  // One schedule step: sends `payload` to `send_to` while receiving, into `received` (resized to
  // the probed size), what `receive_from` sent with the same tag. Time blocked in MPI_Probe is
  // added to `timing.waiting_seconds`.
  // Throws Error (before any message) unless `send` has a payload per rank, each of a size MPI
  // can send; `call` names the call in the message.
  void check_all_to_all_payloads(const std::vector<std::span<const std::byte>>& send,
                                 const char* call) const;
  // A blocking all-to-all's steps, one after another (exchange_steps), under one tag.
  void exchange_in_steps(const std::vector<std::span<const std::byte>>& send,
                         std::vector<std::vector<std::byte>>& received, Traffic kind,
                         TransferTiming& timing, const std::vector<PairwiseStep>& steps);
  void exchange(std::span<const std::byte> payload, int send_to, int receive_from, int tag,
                std::vector<std::byte>& received, Traffic kind, TransferTiming& timing);
  // Each collective call takes the next tag, so messages of consecutive calls never match.
  int next_tag();
  // For a nonblocking transfer destroyed before it completed (an error on this rank, or a peer
  // that stopped): frees its requests without waiting, for the peer may never come, and keeps
  // the buffers it received into (`buffers`) until the transport goes, for MPI may still write
  // them. What it sent from belongs to the caller, whose error ends the run on every rank
  // (abort_all_ranks) before a peer could take it.
  void abandon(std::span<MPI_Request> requests, std::shared_ptr<void> buffers);

  MPI_Comm communicator_ = MPI_COMM_NULL;
  // A second duplicate, for liveness queries and replies only, so that they can never match a
  // data message nor be matched by a wildcard probe of one.
  MPI_Comm liveness_ = MPI_COMM_NULL;
  // A third, for point-to-point messages, tagged by the number the caller gives them: apart from
  // the collectives' sequence of tags.
  MPI_Comm point_to_point_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int tag_sequence_ = 0;
  double progress_timeout_seconds_ = 0;
  TrafficBytes bytes_sent_;
  TrafficBytes bytes_received_;
  std::vector<std::shared_ptr<void>> abandoned_buffers_;
};

// A rank waited longer than the progress timeout for its peers.
class ProgressTimeout : public Error {
 public:
  using Error::Error;
};

// Ranks `a` and `b` of `world` as a communicator of their own, `a` its rank 0 (MPI_COMM_NULL on
// every other rank; the caller frees it). Collective over `world`.
MPI_Comm pair_communicator(MPI_Comm world, int a, int b);

// The first line of the MPI library's version string, for provenance.
std::string mpi_library_version();

// For an error in the middle of a run: prints "rank R: message" to stderr and ends every rank
// with MPI_Abort(exit_code), so that no rank waits forever for a peer that has given up. Without
// a running MPI it ends this process only.
[[noreturn]] void abort_all_ranks(const std::string& message, int exit_code);

}  // namespace gnnbed
