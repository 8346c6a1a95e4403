#pragma once
// The Transport over NCCL: data-plane calls are NCCL operations on the rank's GPU (all-to-all(v)
// as grouped ncclSend/ncclRecv, all-gather(v) as grouped ncclBroadcast from every rank, all-reduce
// as ncclAllReduce); the control plane (barriers, timing reductions, result gathering) and the
// exchange of all-to-all sizes go over MPI, which also bootstraps NCCL (rank 0's ncclUniqueId is
// broadcast with MPI_Bcast).
//
// Payloads are host spans, as the Transport interface has them: each call stages them through
// device buffers that persist across calls (docs/gpu.md says why and what that costs). Bytes are
// counted as MpiTransport counts them (the payload bytes of the plans' ring and pairwise
// schedules), so a run's counts can be checked against its plans whichever transport moved them;
// NCCL's own algorithm may move the data differently on the wire.
#include <mpi.h>

#include <memory>

#include "exec/mpi/mpi_transport.hpp"
#include "exec/transport.hpp"

namespace gnnbed {

class NcclTransport final : public Transport {
 public:
  // Collective over `communicator`: every rank constructs its transport at the same point, each
  // with the CUDA device it uses (several ranks may name the same device). Throws Error with
  // NCCL's or CUDA's reason when a communicator cannot be set up.
  NcclTransport(MPI_Comm communicator, int device);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override { return control_.rank(); }
  int size() const override { return control_.size(); }

  void all_to_all_into(const std::vector<std::span<const std::byte>>& send,
                       std::vector<std::vector<std::byte>>& received, Traffic kind,
                       TransferTiming& timing) override;
  std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> mine, Traffic kind,
                                                 TransferTiming& timing) override;
  using Transport::all_reduce_sum;
  void all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing,
                      int ranks_per_machine) override;

  // Plans: the blocking operations, run when started, so a started transfer is already complete
  // and overlaps nothing yet (an NCCL stream with an event per transfer would; it needs a GPU to
  // be tested). The messages and the bytes counted are the blocking calls'; the all-to-all's go in
  // a group per block of `block_steps` pairwise steps.
  std::unique_ptr<PendingTransfer> start_all_to_all(
      const std::vector<std::span<const std::byte>>& send,
      const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps) override;
  std::unique_ptr<PendingTransfer> start_all_reduce_sum(std::vector<float> data, Traffic kind,
                                                        int ranks_per_machine) override;

  const TrafficBytes& bytes_sent() const override { return bytes_sent_; }
  const TrafficBytes& bytes_received() const override { return bytes_received_; }

  void barrier() override { control_.barrier(); }
  double max_over_ranks(double value) override { return control_.max_over_ranks(value); }
  double sum_over_ranks(double value) override { return control_.sum_over_ranks(value); }
  std::int64_t sum_over_ranks(std::int64_t value) override {
    return control_.sum_over_ranks(value);
  }
  std::vector<std::string> gather_to_root(const std::string& text) override {
    return control_.gather_to_root(text);
  }
  std::vector<std::vector<float>> all_gather_control(std::span<const float> mine) override {
    return control_.all_gather_control(mine);
  }

 private:
  // all_to_all_into's exchange, a group of NCCL sends and receives per block of `block_steps`
  // pairwise steps (all_to_all_blocks; 0: every pair in one group).
  void exchange(const std::vector<std::span<const std::byte>>& send,
                std::vector<std::vector<std::byte>>& received, Traffic kind, TransferTiming& timing,
                int block_steps);
  struct State;  // NCCL communicator, CUDA stream, staging buffers (CUDA types stay in the .cpp)

  // Every rank's payload size (MPI_Allgather).
  std::vector<std::int64_t> gather_sizes(std::int64_t mine);

  MpiTransport control_;
  std::unique_ptr<State> state_;
  TrafficBytes bytes_sent_;
  TrafficBytes bytes_received_;
};

// "NCCL 2.28.9" (the library linked, for provenance).
std::string nccl_library_version();

}  // namespace gnnbed
