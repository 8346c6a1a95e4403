#include "exec/nccl/nccl_transport.hpp"

#include <nccl.h>

#include <cstring>
#include <numeric>

#include "exec/cuda/cuda_device.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

void check_nccl(ncclResult_t result, int rank, const char* call) {
  if (result == ncclSuccess) return;
  throw Error("rank " + std::to_string(rank) + ": " + call +
              " failed: " + ncclGetErrorString(result));
}

std::size_t total_of(const std::vector<std::int64_t>& sizes) {
  return static_cast<std::size_t>(std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}));
}

// Start offsets of consecutive blocks of the given sizes.
std::vector<std::size_t> offsets_of(const std::vector<std::int64_t>& sizes) {
  std::vector<std::size_t> offsets(sizes.size(), 0);
  for (std::size_t q = 1; q < sizes.size(); ++q) {
    offsets[q] = offsets[q - 1] + static_cast<std::size_t>(sizes[q - 1]);
  }
  return offsets;
}

void check_mpi(int code, int rank, const char* call) {
  if (code == MPI_SUCCESS) return;
  throw Error("rank " + std::to_string(rank) + ": " + call + " failed (MPI error " +
              std::to_string(code) + ")");
}

// A transfer that completed when it was started; the time it took counts as transfer time of
// the call that waits for it, as it would have in the blocking call.
class CompletedTransfer final : public PendingTransfer {
 public:
  CompletedTransfer(std::vector<std::vector<std::byte>> received, std::vector<float> reduced,
                    TransferTiming timing)
      : received_(std::move(received)), reduced_(std::move(reduced)), timing_(timing) {}
  bool test() override { return true; }
  void wait(TransferTiming& timing) override {
    timing.waiting_seconds += timing_.waiting_seconds;
    timing.transfer_seconds += timing_.transfer_seconds;
    timing_ = {};
  }
  std::vector<std::vector<std::byte>>& received() override { return received_; }
  std::vector<float>& reduced() override { return reduced_; }

 private:
  std::vector<std::vector<std::byte>> received_;
  std::vector<float> reduced_;
  TransferTiming timing_;
};

}  // namespace

struct NcclTransport::State {
  int device = 0;
  // A duplicate of the caller's communicator for NCCL's bootstrap and the size exchanges, so
  // that they never match anyone else's messages.
  MPI_Comm sizes = MPI_COMM_NULL;
  ncclComm_t communicator = nullptr;
  cudaStream_t stream = nullptr;
  cuda::Buffer send{cuda::Memory::device};
  cuda::Buffer receive{cuda::Memory::device};

  // Runs the queued NCCL work to completion; the time is the call's transfer time (NCCL does not
  // say how much of it was spent waiting for peers).
  void finish(int rank) {
    const cudaError_t code = cudaStreamSynchronize(stream);
    if (code != cudaSuccess) {
      ncclResult_t async_error = ncclSuccess;
      ncclCommGetAsyncError(communicator, &async_error);
      check_nccl(async_error, rank, "an NCCL operation");
      cuda::check(code, "cudaStreamSynchronize (NCCL stream)");
    }
  }
};

NcclTransport::NcclTransport(MPI_Comm communicator, int device)
    : control_(communicator), state_(std::make_unique<State>()) {
  state_->device = device;
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  check_mpi(MPI_Comm_dup(communicator, &state_->sizes), rank(), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(state_->sizes, MPI_ERRORS_RETURN), rank(),
            "MPI_Comm_set_errhandler");
  ncclUniqueId id{};
  if (rank() == 0) check_nccl(ncclGetUniqueId(&id), rank(), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, state_->sizes), rank(),
            "MPI_Bcast (ncclUniqueId)");
  cuda::check(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
  check_nccl(ncclCommInitRank(&state_->communicator, size(), id, rank()), rank(),
             "ncclCommInitRank");
}

NcclTransport::~NcclTransport() {
  if (state_ == nullptr) return;
  if (state_->communicator != nullptr) static_cast<void>(ncclCommDestroy(state_->communicator));
  if (state_->stream != nullptr) static_cast<void>(cudaStreamDestroy(state_->stream));
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (state_->sizes != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&state_->sizes);
}

std::vector<std::int64_t> NcclTransport::gather_sizes(std::int64_t mine) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(size()));
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, state_->sizes),
            rank(), "MPI_Allgather (payload sizes)");
  return sizes;
}

void NcclTransport::all_to_all_into(const std::vector<std::span<const std::byte>>& send,
                                    std::vector<std::vector<std::byte>>& received, Traffic kind,
                                    TransferTiming& timing) {
  // Every pair in one group: NCCL schedules a group's transfers over its channels itself.
  exchange(send, received, kind, timing, 0);
}

void NcclTransport::exchange(const std::vector<std::span<const std::byte>>& send,
                             std::vector<std::vector<std::byte>>& received, Traffic kind,
                             TransferTiming& timing, int block_steps) {
  const int me = rank();
  const auto n = static_cast<std::size_t>(size());
  if (send.size() != n) {
    throw Error("all_to_all: rank " + std::to_string(me) + " passed " +
                std::to_string(send.size()) + " payloads for " + std::to_string(n) + " ranks");
  }
  const Stopwatch watch;
  // Receivers need not know sizes in advance (the Transport contract) but ncclRecv must: every
  // rank's row of sizes goes over the control plane first.
  std::vector<std::int64_t> send_sizes(n, 0);
  for (std::size_t q = 0; q < n; ++q) {
    if (q != static_cast<std::size_t>(me))
      send_sizes[q] = static_cast<std::int64_t>(send[q].size());
  }
  std::vector<std::int64_t> receive_sizes(n, 0);
  check_mpi(MPI_Alltoall(send_sizes.data(), 1, MPI_INT64_T, receive_sizes.data(), 1, MPI_INT64_T,
                         state_->sizes),
            me, "MPI_Alltoall (payload sizes)");
  const std::vector<std::size_t> send_offsets = offsets_of(send_sizes);
  const std::vector<std::size_t> receive_offsets = offsets_of(receive_sizes);
  auto* send_device = static_cast<std::byte*>(state_->send.ensure(total_of(send_sizes)));
  auto* receive_device = static_cast<std::byte*>(state_->receive.ensure(total_of(receive_sizes)));
  for (std::size_t q = 0; q < n; ++q) {
    if (send_sizes[q] == 0) continue;
    cuda::check(cudaMemcpyAsync(send_device + send_offsets[q], send[q].data(), send[q].size(),
                                cudaMemcpyHostToDevice, state_->stream),
                "cudaMemcpyAsync (all_to_all payload)");
  }
  // A group per block of pairwise steps (collective_schedule.hpp): the stream runs the groups one
  // after another, so a block starts once the one before has completed, as the MPI transport's
  // started all-to-all and the simulator post a plan's.
  for (const StepBlock& block : all_to_all_blocks(static_cast<int>(n), block_steps)) {
    check_nccl(ncclGroupStart(), me, "ncclGroupStart");
    for (int step = block.first; step < block.last; ++step) {
      const PairwiseStep peers = pairwise_step(me, static_cast<int>(n), step);
      const auto to = static_cast<std::size_t>(peers.send_to);
      const auto from = static_cast<std::size_t>(peers.receive_from);
      if (send_sizes[to] > 0) {
        check_nccl(
            ncclSend(send_device + send_offsets[to], static_cast<std::size_t>(send_sizes[to]),
                     ncclInt8, peers.send_to, state_->communicator, state_->stream),
            me, "ncclSend");
      }
      if (receive_sizes[from] > 0) {
        check_nccl(ncclRecv(receive_device + receive_offsets[from],
                            static_cast<std::size_t>(receive_sizes[from]), ncclInt8,
                            peers.receive_from, state_->communicator, state_->stream),
                   me, "ncclRecv");
      }
    }
    check_nccl(ncclGroupEnd(), me, "ncclGroupEnd");
  }
  received.resize(n);
  for (std::size_t q = 0; q < n; ++q) {
    received[q].resize(static_cast<std::size_t>(receive_sizes[q]));
    if (receive_sizes[q] == 0) continue;
    cuda::check(cudaMemcpyAsync(received[q].data(), receive_device + receive_offsets[q],
                                received[q].size(), cudaMemcpyDeviceToHost, state_->stream),
                "cudaMemcpyAsync (all_to_all result)");
  }
  state_->finish(me);
  for (std::size_t q = 0; q < n; ++q) {
    bytes_sent_[kind] += send_sizes[q];
    bytes_received_[kind] += receive_sizes[q];
  }
  timing.transfer_seconds += watch.seconds();
}

std::vector<std::vector<std::byte>> NcclTransport::all_gather(std::span<const std::byte> mine,
                                                              Traffic kind,
                                                              TransferTiming& timing) {
  const int me = rank();
  const Stopwatch watch;
  const std::vector<std::int64_t> sizes = gather_sizes(static_cast<std::int64_t>(mine.size()));
  const std::vector<std::size_t> offsets = offsets_of(sizes);
  auto* device = static_cast<std::byte*>(state_->receive.ensure(total_of(sizes)));
  const auto my_offset = offsets[static_cast<std::size_t>(me)];
  if (!mine.empty()) {
    cuda::check(cudaMemcpyAsync(device + my_offset, mine.data(), mine.size(),
                                cudaMemcpyHostToDevice, state_->stream),
                "cudaMemcpyAsync (all_gather payload)");
  }
  // NCCL has no all-gather(v); its documentation's recipe is one broadcast per root, grouped.
  check_nccl(ncclGroupStart(), me, "ncclGroupStart");
  for (std::size_t q = 0; q < sizes.size(); ++q) {
    if (sizes[q] == 0) continue;
    check_nccl(
        ncclBroadcast(device + offsets[q], device + offsets[q], static_cast<std::size_t>(sizes[q]),
                      ncclInt8, static_cast<int>(q), state_->communicator, state_->stream),
        me, "ncclBroadcast");
  }
  check_nccl(ncclGroupEnd(), me, "ncclGroupEnd");
  std::vector<std::vector<std::byte>> blocks(sizes.size());
  for (std::size_t q = 0; q < sizes.size(); ++q) {
    blocks[q].resize(static_cast<std::size_t>(sizes[q]));
    if (sizes[q] == 0) continue;
    cuda::check(cudaMemcpyAsync(blocks[q].data(), device + offsets[q], blocks[q].size(),
                                cudaMemcpyDeviceToHost, state_->stream),
                "cudaMemcpyAsync (all_gather result)");
  }
  state_->finish(me);
  bytes_sent_[kind] += ring_all_gather_bytes_sent(me, sizes);
  bytes_received_[kind] += ring_all_gather_bytes_received(me, sizes);
  timing.transfer_seconds += watch.seconds();
  return blocks;
}

void NcclTransport::all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing,
                                   int ranks_per_machine) {
  const int me = rank();
  if (hierarchical_all_reduce(size(), ranks_per_machine)) {
    throw Error(
        "the NCCL transport runs NCCL's own all-reduce, which picks its algorithm for the "
        "machines' topology itself: distribution.all_reduce=hierarchical runs on --transport mpi");
  }
  const Stopwatch watch;
  if (size() == 1 || data.empty()) return;
  auto* device = static_cast<float*>(state_->send.ensure(data.size_bytes()));
  cuda::check(cudaMemcpyAsync(device, data.data(), data.size_bytes(), cudaMemcpyHostToDevice,
                              state_->stream),
              "cudaMemcpyAsync (all_reduce payload)");
  check_nccl(ncclAllReduce(device, device, data.size(), ncclFloat32, ncclSum, state_->communicator,
                           state_->stream),
             me, "ncclAllReduce");
  cuda::check(cudaMemcpyAsync(data.data(), device, data.size_bytes(), cudaMemcpyDeviceToHost,
                              state_->stream),
              "cudaMemcpyAsync (all_reduce result)");
  state_->finish(me);
  const auto elements = static_cast<std::int64_t>(data.size());
  bytes_sent_[kind] += ring_all_reduce_elements_sent(me, size(), elements) *
                       static_cast<std::int64_t>(sizeof(float));
  bytes_received_[kind] += ring_all_reduce_elements_received(me, size(), elements) *
                           static_cast<std::int64_t>(sizeof(float));
  timing.transfer_seconds += watch.seconds();
}

std::string nccl_library_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "NCCL (version unknown)";
  // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9.
  return "NCCL " + std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

std::unique_ptr<PendingTransfer> NcclTransport::start_all_to_all(
    const std::vector<std::span<const std::byte>>& send,
    const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps) {
  TransferTiming timing;
  std::vector<std::vector<std::byte>> received;
  exchange(send, received, kind, timing, block_steps);
  for (std::size_t q = 0; q < received.size(); ++q) {
    if (static_cast<int>(q) == rank()) continue;
    if (q >= receive_bytes.size() ||
        static_cast<std::int64_t>(received[q].size()) != receive_bytes[q]) {
      throw Error("start_all_to_all: rank " + std::to_string(rank()) + " received " +
                  std::to_string(received[q].size()) + " bytes from rank " + std::to_string(q) +
                  ", expected " +
                  (q < receive_bytes.size() ? std::to_string(receive_bytes[q]) : "none"));
    }
  }
  return std::make_unique<CompletedTransfer>(std::move(received), std::vector<float>{}, timing);
}

std::unique_ptr<PendingTransfer> NcclTransport::start_all_reduce_sum(std::vector<float> data,
                                                                     Traffic kind,
                                                                     int ranks_per_machine) {
  TransferTiming timing;
  all_reduce_sum(data, kind, timing, ranks_per_machine);
  return std::make_unique<CompletedTransfer>(std::vector<std::vector<std::byte>>{}, std::move(data),
                                             timing);
}

}  // namespace gnnbed
