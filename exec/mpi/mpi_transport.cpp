#include "exec/mpi/mpi_transport.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

// Tags of consecutive calls cycle through [0, kTagBound): MPI guarantees MPI_TAG_UB >= 32767.
constexpr int kTagBound = 32768;

// Tags on the liveness communicator.
constexpr int kLivenessQueryTag = 1;
constexpr int kLivenessReplyTag = 2;
// How long a rank that timed out waits for its peers' liveness replies (at most the timeout):
// a rank that waits in MPI answers within microseconds; this leaves room for a loaded machine.
constexpr double kLivenessGraceSeconds = 2.0;

// "rank 3", "ranks 1 and 3", "ranks 1, 2 and 3".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return "MPI error code " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

// `peer` < 0: the call has no single peer.
void check(int code, int rank, const char* call, int peer = -1) {
  if (code == MPI_SUCCESS) return;
  std::string message = "rank " + std::to_string(rank) + ": " + call;
  if (peer >= 0) message += " (peer rank " + std::to_string(peer) + ")";
  throw Error(message + " failed: " + mpi_error_string(code));
}

// `unit`: what is counted ("bytes", "floats").
int message_count(std::size_t count, const char* operation, const char* unit = "bytes") {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw Error(std::string(operation) + ": a message of " + std::to_string(count) + " " + unit +
                " exceeds MPI's limit of " + std::to_string(INT_MAX) + " (MPI counts are int)");
  }
  return static_cast<int>(count);
}

// Everything a data-plane call spends outside MPI_Probe is transfer time.
class CallTimer {
 public:
  explicit CallTimer(TransferTiming& timing)
      : timing_(timing), waiting_before_seconds_(timing.waiting_seconds) {}
  ~CallTimer() {
    const double waited_seconds = timing_.waiting_seconds - waiting_before_seconds_;
    timing_.transfer_seconds += watch_.seconds() - waited_seconds;
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  TransferTiming& timing_;
  double waiting_before_seconds_;
  Stopwatch watch_;
};

bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

// Open MPI's TCP transport sends all of a large message past its first 192 KiB as one "put"
// fragment (btl_tcp_rdma_pipeline_frag_size defaults to 2 GiB). When two ranks exchange such
// messages in both directions after computing, as training does, the exchange takes as long as
// the two messages one after the other: 16 MiB each way over a 1 Gbit/s link ran at 0.48 Gbit/s
// per direction, where plain TCP sockets on the same link run at 0.96 (docs/validation.md).
// With 256 KiB fragments it runs at 0.92. MPI reads its parameters from the environment when it
// starts; one given to mpirun (--mca) or set by the user is already there and is kept.
void use_interleaving_tcp_fragments() {
  if (setenv("OMPI_MCA_btl_tcp_rdma_pipeline_frag_size", "262144", /*overwrite=*/0) != 0) {
    throw Error(std::string("MpiSession: setenv failed: ") + std::strerror(errno));
  }
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) throw Error("MpiSession: MPI is already initialized in this process");
  use_interleaving_tcp_fragments();
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("MpiSession: MPI_Init_thread failed");
  }
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error("MpiSession: this MPI library does not provide MPI_THREAD_FUNNELED");
  }
}

MpiSession::~MpiSession() {
  if (mpi_running()) MPI_Finalize();
}

MpiTransport::MpiTransport(MPI_Comm communicator) {
  if (!mpi_running()) {
    throw Error("MpiTransport: MPI is not running (create an MpiSession first)");
  }
  MPI_Comm duplicate = MPI_COMM_NULL;
  check(MPI_Comm_dup(communicator, &duplicate), rank_, "MPI_Comm_dup");
  communicator_ = duplicate;
  int code = MPI_Comm_set_errhandler(communicator_, MPI_ERRORS_RETURN);
  const char* failed_call = "MPI_Comm_set_errhandler";
  if (code == MPI_SUCCESS) {
    code = MPI_Comm_dup(communicator_, &liveness_);  // keeps the error handler
    failed_call = "MPI_Comm_dup";
  }
  if (code == MPI_SUCCESS) {
    code = MPI_Comm_dup(communicator_, &point_to_point_);
    if (code != MPI_SUCCESS) MPI_Comm_free(&liveness_);
  }
  if (code != MPI_SUCCESS) MPI_Comm_free(&communicator_);
  check(code, rank_, failed_call);
  check(MPI_Comm_rank(communicator_, &rank_), rank_, "MPI_Comm_rank");
  check(MPI_Comm_size(communicator_, &size_), rank_, "MPI_Comm_size");
}

MpiTransport::~MpiTransport() {
  if (!mpi_running()) return;
  if (point_to_point_ != MPI_COMM_NULL) MPI_Comm_free(&point_to_point_);
  if (liveness_ != MPI_COMM_NULL) MPI_Comm_free(&liveness_);
  if (communicator_ != MPI_COMM_NULL) MPI_Comm_free(&communicator_);
}

template <typename Poll>
void MpiTransport::poll_until(const Poll& poll, const char* call, int peer) {
  const Stopwatch waiting;
  while (!poll()) {
    answer_liveness_queries();
    if (waiting.seconds() > progress_timeout_seconds_) timed_out(call, peer);
  }
}

void MpiTransport::answer_liveness_queries() {
  if (progress_timeout_seconds_ <= 0) return;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kLivenessQueryTag, liveness_, &arrived, &status), rank_,
          "MPI_Iprobe (liveness query)");
    if (arrived == 0) return;
    const int peer = status.MPI_SOURCE;
    check(MPI_Recv(nullptr, 0, MPI_BYTE, peer, kLivenessQueryTag, liveness_, MPI_STATUS_IGNORE),
          rank_, "MPI_Recv (liveness query)", peer);
    // Empty messages, so no buffer has to outlive the freed request.
    MPI_Request reply = MPI_REQUEST_NULL;
    check(MPI_Isend(nullptr, 0, MPI_BYTE, peer, kLivenessReplyTag, liveness_, &reply), rank_,
          "MPI_Isend (liveness reply)", peer);
    check(MPI_Request_free(&reply), rank_, "MPI_Request_free (liveness reply)", peer);
  }
}

std::vector<int> MpiTransport::peers_that_do_not_answer(double grace_seconds) {
  std::vector<MPI_Request> replies(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    MPI_Request query = MPI_REQUEST_NULL;
    check(MPI_Isend(nullptr, 0, MPI_BYTE, peer, kLivenessQueryTag, liveness_, &query), rank_,
          "MPI_Isend (liveness query)", peer);
    check(MPI_Request_free(&query), rank_, "MPI_Request_free (liveness query)", peer);
    check(MPI_Irecv(nullptr, 0, MPI_BYTE, peer, kLivenessReplyTag, liveness_,
                    &replies[static_cast<std::size_t>(peer)]),
          rank_, "MPI_Irecv (liveness reply)", peer);
  }
  // The whole grace period, even once every peer has replied: a peer that timed out a little
  // later than this rank queries it in turn, and must find it answering.
  const Stopwatch waiting;
  while (waiting.seconds() < grace_seconds) {
    answer_liveness_queries();
    int all_replied = 0;
    check(MPI_Testall(size_, replies.data(), &all_replied, MPI_STATUSES_IGNORE), rank_,
          "MPI_Testall (liveness replies)");
  }
  std::vector<int> silent;
  for (int peer = 0; peer < size_; ++peer) {
    MPI_Request& reply = replies[static_cast<std::size_t>(peer)];
    if (reply == MPI_REQUEST_NULL) continue;
    int replied = 0;
    check(MPI_Test(&reply, &replied, MPI_STATUS_IGNORE), rank_, "MPI_Test (liveness reply)", peer);
    if (replied != 0) continue;
    silent.push_back(peer);
    check(MPI_Cancel(&reply), rank_, "MPI_Cancel (liveness reply)", peer);
    check(MPI_Request_free(&reply), rank_, "MPI_Request_free (liveness reply)", peer);
  }
  return silent;
}

void MpiTransport::complete(std::span<MPI_Request> requests, const char* call, int peer) {
  const int count = static_cast<int>(requests.size());
  if (progress_timeout_seconds_ <= 0) {
    check(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE), rank_, call, peer);
    return;
  }
  poll_until(
      [&] {
        int done = 0;
        check(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), rank_, call, peer);
        return done != 0;
      },
      call, peer);
}

void MpiTransport::probe(int source, int tag, MPI_Status& status) {
  if (progress_timeout_seconds_ <= 0) {
    check(MPI_Probe(source, tag, communicator_, &status), rank_, "MPI_Probe", source);
    return;
  }
  poll_until(
      [&] {
        int arrived = 0;
        check(MPI_Iprobe(source, tag, communicator_, &arrived, &status), rank_, "MPI_Iprobe",
              source);
        return arrived != 0;
      },
      "MPI_Probe", source);
}

void MpiTransport::timed_out(const char* call, int peer) {
  const std::vector<int> silent =
      peers_that_do_not_answer(std::min(progress_timeout_seconds_, kLivenessGraceSeconds));
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", progress_timeout_seconds_);
  const std::string waited_for = !silent.empty() ? rank_list(silent)
                                 : peer >= 0     ? "rank " + std::to_string(peer)
                                                 : "its peers";
  const std::string cause =
      !silent.empty()
          ? rank_list(silent) + (silent.size() == 1 ? " does" : " do") +
                " not answer: stopped, hung, or busy outside MPI"
          : "every rank answers, so none has stopped: the ranks wait for each other in different "
            "calls (a deadlock)";
  throw ProgressTimeout("rank " + std::to_string(rank_) + " waited more than " + seconds +
                        " s in " + call + " for " + waited_for +
                        " without progress (distribution.progress_timeout_seconds): " + cause);
}

void MpiTransport::abandon(std::span<MPI_Request> requests, std::shared_ptr<void> buffers) {
  if (!mpi_running()) return;
  for (MPI_Request& request : requests) {
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  }
  abandoned_buffers_.push_back(std::move(buffers));
}

int MpiTransport::next_tag() {
  const int tag = tag_sequence_;
  tag_sequence_ = (tag_sequence_ + 1) % kTagBound;
  return tag;
}

void MpiTransport::exchange(std::span<const std::byte> payload, int send_to, int receive_from,
                            int tag, std::vector<std::byte>& received, Traffic kind,
                            TransferTiming& timing) {
  MPI_Request send_request = MPI_REQUEST_NULL;
  check(MPI_Isend(payload.data(), message_count(payload.size(), "send"), MPI_BYTE, send_to, tag,
                  communicator_, &send_request),
        rank_, "MPI_Isend", send_to);
  MPI_Status status;
  const Stopwatch probe_watch;
  probe(receive_from, tag, status);
  timing.waiting_seconds += probe_watch.seconds();
  int count = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &count), rank_, "MPI_Get_count", receive_from);
  received.resize(static_cast<std::size_t>(count));
  check(MPI_Recv(received.data(), count, MPI_BYTE, receive_from, tag, communicator_,
                 MPI_STATUS_IGNORE),
        rank_, "MPI_Recv", receive_from);
  complete(std::span(&send_request, 1), "MPI_Wait", send_to);
  bytes_sent_[kind] += static_cast<std::int64_t>(payload.size());
  bytes_received_[kind] += count;
}

void MpiTransport::check_all_to_all_payloads(const std::vector<std::span<const std::byte>>& send,
                                             const char* call) const {
  if (send.size() != static_cast<std::size_t>(size_)) {
    throw Error(std::string(call) + ": rank " + std::to_string(rank_) + " passed " +
                std::to_string(send.size()) + " payloads for " + std::to_string(size_) + " ranks");
  }
  // Checked before the first send, so that every rank that fails fails before talking.
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) message_count(send[static_cast<std::size_t>(peer)].size(), "all_to_all");
  }
}

void MpiTransport::all_to_all_into(const std::vector<std::span<const std::byte>>& send,
                                   std::vector<std::vector<std::byte>>& received, Traffic kind,
                                   TransferTiming& timing) {
  check_all_to_all_payloads(send, "all_to_all");
  exchange_in_steps(send, received, kind, timing, exchange_steps(rank_, size_, 0));
}

void MpiTransport::all_to_all_within_machine_into(
    const std::vector<std::span<const std::byte>>& send,
    std::vector<std::vector<std::byte>>& received, Traffic kind, TransferTiming& timing,
    int ranks_per_machine) {
  check_all_to_all_payloads(send, "all_to_all within machines");
  require_payloads_within_machine(send, rank_, size_, ranks_per_machine);
  // Nothing comes from the other machines; the buffers keep their allocations.
  received.resize(static_cast<std::size_t>(size_));
  for (std::vector<std::byte>& bytes : received) bytes.clear();
  exchange_in_steps(send, received, kind, timing, exchange_steps(rank_, size_, ranks_per_machine));
}

void MpiTransport::exchange_in_steps(const std::vector<std::span<const std::byte>>& send,
                                     std::vector<std::vector<std::byte>>& received, Traffic kind,
                                     TransferTiming& timing,
                                     const std::vector<PairwiseStep>& steps) {
  const CallTimer call_timer(timing);
  const int tag = next_tag();
  received.resize(static_cast<std::size_t>(size_));
  received[static_cast<std::size_t>(rank_)].clear();
  for (const PairwiseStep& peers : steps) {
    exchange(send[static_cast<std::size_t>(peers.send_to)], peers.send_to, peers.receive_from, tag,
             received[static_cast<std::size_t>(peers.receive_from)], kind, timing);
  }
}

std::vector<std::vector<std::byte>> MpiTransport::all_gather(std::span<const std::byte> mine,
                                                             Traffic kind, TransferTiming& timing) {
  message_count(mine.size(), "all_gather");
  const CallTimer call_timer(timing);
  const int tag = next_tag();
  std::vector<std::vector<std::byte>> blocks(static_cast<std::size_t>(size_));
  blocks[static_cast<std::size_t>(rank_)].assign(mine.begin(), mine.end());
  const RingPeers peers = ring_peers(rank_, size_);
  for (int step = 0; step + 1 < size_; ++step) {
    const RingGatherStep ring = ring_gather_step(rank_, size_, step);
    exchange(blocks[static_cast<std::size_t>(ring.send_block)], peers.next, peers.previous, tag,
             blocks[static_cast<std::size_t>(ring.receive_block)], kind, timing);
  }
  return blocks;
}

namespace {

// The elements `range` of `data`.
std::span<float> elements_of(std::span<float> data, ElementRange range) {
  return data.subspan(static_cast<std::size_t>(range.begin),
                      static_cast<std::size_t>(range.size()));
}

// Checked before the first send: the largest message of the schedule.
std::vector<AllReduceStep> checked_all_reduce_steps(int rank, int size, int ranks_per_machine,
                                                    std::size_t num_elements, const char* call) {
  std::vector<AllReduceStep> steps =
      all_reduce_steps(rank, size, ranks_per_machine, static_cast<std::int64_t>(num_elements));
  std::int64_t largest = 0;
  for (const AllReduceStep& step : steps) largest = std::max(largest, step.send.size());
  message_count(static_cast<std::size_t>(largest) * sizeof(float), call);
  return steps;
}

// A step's received elements into `target`: added (reduce phases) or copied (gather phases).
void apply_step(const AllReduceStep& step, std::span<const float> incoming,
                std::span<float> target) {
  if (step.add) {
    for (std::size_t i = 0; i < target.size(); ++i) target[i] += incoming[i];
  } else {
    std::copy(incoming.begin(), incoming.end(), target.begin());
  }
}

}  // namespace

void MpiTransport::all_reduce_sum(std::span<float> data, Traffic kind, TransferTiming& timing,
                                  int ranks_per_machine) {
  const CallTimer call_timer(timing);
  const int tag = next_tag();
  if (size_ == 1) return;
  // Each chunk is summed in the schedule's fixed order and then copied along, so all ranks end
  // with bit-identical sums, on every run.
  std::vector<std::byte> incoming;
  std::vector<float> values;
  for (const AllReduceStep& step :
       checked_all_reduce_steps(rank_, size_, ranks_per_machine, data.size(), "all_reduce_sum")) {
    exchange(std::as_bytes(elements_of(data, step.send)), step.send_to, step.receive_from, tag,
             incoming, kind, timing);
    const std::span<float> target = elements_of(data, step.receive);
    if (incoming.size() != target.size_bytes()) {
      throw Error("all_reduce_sum: rank " + std::to_string(rank_) + " received " +
                  std::to_string(incoming.size()) + " bytes from rank " +
                  std::to_string(step.receive_from) + " for " + std::to_string(target.size()) +
                  " elements: ranks passed different element counts or machines");
    }
    values.resize(target.size());
    if (!incoming.empty()) std::memcpy(values.data(), incoming.data(), incoming.size());
    apply_step(step, values, target);
  }
}

// One send to and one receive from every peer, posted in the blocks of pairwise steps that
// all_to_all_blocks gives: a block's transfers all at once, the next block once it has completed
// (in test() or wait()).
class MpiPendingAllToAll final : public PendingTransfer {
 public:
  MpiPendingAllToAll(MpiTransport& transport, const std::vector<std::span<const std::byte>>& send,
                     const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps)
      : transport_(transport), kind_(kind), send_(send) {
    const int size = transport.size_;
    const int rank = transport.rank_;
    if (send.size() != static_cast<std::size_t>(size) ||
        receive_bytes.size() != static_cast<std::size_t>(size)) {
      throw Error("start_all_to_all: rank " + std::to_string(rank) + " passed " +
                  std::to_string(send.size()) + " payloads and " +
                  std::to_string(receive_bytes.size()) + " sizes for " + std::to_string(size) +
                  " ranks");
    }
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      message_count(send[static_cast<std::size_t>(peer)].size(), "start_all_to_all");
      message_count(static_cast<std::size_t>(receive_bytes[static_cast<std::size_t>(peer)]),
                    "start_all_to_all");
    }
    tag_ = transport.next_tag();
    received_.resize(static_cast<std::size_t>(size));
    for (int peer = 0; peer < size; ++peer) {
      if (peer != rank) {
        received_[static_cast<std::size_t>(peer)].resize(
            static_cast<std::size_t>(receive_bytes[static_cast<std::size_t>(peer)]));
      }
    }
    blocks_ = all_to_all_blocks(size, block_steps);
    if (blocks_.empty()) {
      finish();
      return;
    }
    post_block();
  }
  ~MpiPendingAllToAll() override {
    if (!complete_) {
      transport_.abandon(requests_, std::make_shared<decltype(received_)>(std::move(received_)));
    }
  }

  bool test() override {
    transport_.answer_liveness_queries();
    while (!complete_) {
      int flag = 0;
      check(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag,
                        MPI_STATUSES_IGNORE),
            transport_.rank_, "MPI_Testall");
      if (flag == 0) return false;
      advance();
    }
    return true;
  }
  void wait(TransferTiming& timing) override {
    while (!complete_) {
      const Stopwatch watch;
      transport_.complete(requests_, "MPI_Waitall (all-to-all)");
      timing.waiting_seconds += watch.seconds();
      advance();
    }
  }
  std::vector<std::vector<std::byte>>& received() override { return received_; }
  std::vector<float>& reduced() override { throw Error("an all-to-all reduces nothing"); }

 private:
  // The current block's receives and sends, in the blocking call's step order, so that rank pairs
  // match the same way.
  void post_block() {
    const int rank = transport_.rank_;
    const StepBlock& block = blocks_[block_];
    requests_.clear();
    for (int step = block.first; step < block.last; ++step) {
      const PairwiseStep peers = pairwise_step(rank, transport_.size_, step);
      std::vector<std::byte>& into = received_[static_cast<std::size_t>(peers.receive_from)];
      requests_.push_back(MPI_REQUEST_NULL);
      check(MPI_Irecv(into.data(), static_cast<int>(into.size()), MPI_BYTE, peers.receive_from,
                      tag_, transport_.communicator_, &requests_.back()),
            rank, "MPI_Irecv", peers.receive_from);
      const std::span<const std::byte> payload = send_[static_cast<std::size_t>(peers.send_to)];
      requests_.push_back(MPI_REQUEST_NULL);
      check(MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, peers.send_to,
                      tag_, transport_.communicator_, &requests_.back()),
            rank, "MPI_Isend", peers.send_to);
      sent_bytes_ += static_cast<std::int64_t>(payload.size());
      received_bytes_ += static_cast<std::int64_t>(into.size());
    }
  }
  void advance() {
    ++block_;
    if (block_ == blocks_.size()) {
      finish();
    } else {
      post_block();
    }
  }
  void finish() {
    complete_ = true;
    transport_.bytes_sent_[kind_] += sent_bytes_;
    transport_.bytes_received_[kind_] += received_bytes_;
  }

  MpiTransport& transport_;
  Traffic kind_;
  // The payloads, alive until the transfer completes (as MPI_Isend needs them).
  std::vector<std::span<const std::byte>> send_;
  std::vector<StepBlock> blocks_;
  std::size_t block_ = 0;
  int tag_ = 0;
  std::vector<MPI_Request> requests_;
  std::vector<std::vector<std::byte>> received_;
  std::int64_t sent_bytes_ = 0;
  std::int64_t received_bytes_ = 0;
  bool complete_ = false;
};

// The steps of all_reduce_sum, one in flight at a time: a step's send and receive are posted
// when the previous step has completed (in test() or wait()), and the sums are added in the same
// order as the blocking call, so the result is bit-identical to it.
class MpiPendingAllReduce final : public PendingTransfer {
 public:
  MpiPendingAllReduce(MpiTransport& transport, std::vector<float> data, Traffic kind,
                      int ranks_per_machine)
      : transport_(transport), kind_(kind), data_(std::move(data)) {
    tag_ = transport.next_tag();
    if (transport.size_ == 1) {
      complete_ = true;
      return;
    }
    steps_ = checked_all_reduce_steps(transport.rank_, transport.size_, ranks_per_machine,
                                      data_.size(), "start_all_reduce_sum");
    post();
  }
  ~MpiPendingAllReduce() override {
    if (!complete_) {
      transport_.abandon(requests_,
                         std::make_shared<std::pair<std::vector<float>, std::vector<float>>>(
                             std::move(data_), std::move(incoming_)));
    }
  }

  bool test() override {
    transport_.answer_liveness_queries();
    while (!complete_) {
      int flag = 0;
      check(MPI_Testall(2, requests_, &flag, MPI_STATUSES_IGNORE), transport_.rank_, "MPI_Testall");
      if (flag == 0) return false;
      advance();
    }
    return true;
  }
  void wait(TransferTiming& timing) override {
    while (!complete_) {
      const Stopwatch watch;
      transport_.complete(requests_, "MPI_Waitall (all-reduce)");
      timing.waiting_seconds += watch.seconds();
      advance();
    }
  }
  std::vector<std::vector<std::byte>>& received() override {
    throw Error("an all-reduce receives no per-rank payloads");
  }
  std::vector<float>& reduced() override { return data_; }

 private:
  void post() {
    const AllReduceStep& step = steps_[step_];
    const std::span<float> outgoing = elements_of(data_, step.send);
    incoming_.resize(static_cast<std::size_t>(step.receive.size()));
    check(MPI_Irecv(incoming_.data(), static_cast<int>(incoming_.size()), MPI_FLOAT,
                    step.receive_from, tag_, transport_.communicator_, &requests_[0]),
          transport_.rank_, "MPI_Irecv", step.receive_from);
    check(MPI_Isend(outgoing.data(), static_cast<int>(outgoing.size()), MPI_FLOAT, step.send_to,
                    tag_, transport_.communicator_, &requests_[1]),
          transport_.rank_, "MPI_Isend", step.send_to);
    transport_.bytes_sent_[kind_] += static_cast<std::int64_t>(outgoing.size_bytes());
    transport_.bytes_received_[kind_] +=
        static_cast<std::int64_t>(incoming_.size() * sizeof(float));
  }
  // The current step has completed: apply what it received, then post the next step.
  void advance() {
    const AllReduceStep& step = steps_[step_];
    apply_step(step, incoming_, elements_of(data_, step.receive));
    ++step_;
    if (step_ == steps_.size()) {
      complete_ = true;
    } else {
      post();
    }
  }

  MpiTransport& transport_;
  Traffic kind_;
  std::vector<float> data_;
  std::vector<float> incoming_;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::vector<AllReduceStep> steps_;
  int tag_ = 0;
  std::size_t step_ = 0;
  bool complete_ = false;
};

// One point-to-point message, sent or received on the transport's point-to-point communicator
// with the caller's number as its tag.
class MpiPendingPointToPoint final : public PendingTransfer {
 public:
  MpiPendingPointToPoint(MpiTransport& transport, int peer, int number,
                         std::span<const std::byte> payload, std::int64_t receive_bytes,
                         bool sending, Traffic kind)
      : transport_(transport), peer_(peer), kind_(kind), sending_(sending) {
    const char* call = sending ? "start_send" : "start_receive";
    if (peer < 0 || peer >= transport.size_) {
      throw Error(std::string(call) + ": rank " + std::to_string(transport.rank_) +
                  " cannot exchange with rank " + std::to_string(peer) + " (of " +
                  std::to_string(transport.size_) + ")");
    }
    if (receive_bytes < 0) throw Error(std::string(call) + ": a negative size");
    if (number < 0) throw Error(std::string(call) + ": a negative message number");
    const int tag = number % kTagBound;
    received_.resize(static_cast<std::size_t>(transport.size_));
    if (sending) {
      bytes_ = static_cast<std::int64_t>(payload.size());
      check(MPI_Isend(payload.data(), message_count(payload.size(), call), MPI_BYTE, peer, tag,
                      transport.point_to_point_, &request_),
            transport.rank_, "MPI_Isend", peer);
      return;
    }
    bytes_ = receive_bytes;
    std::vector<std::byte>& into = received_[static_cast<std::size_t>(peer)];
    into.resize(static_cast<std::size_t>(receive_bytes));
    check(MPI_Irecv(into.data(), message_count(into.size(), call), MPI_BYTE, peer, tag,
                    transport.point_to_point_, &request_),
          transport.rank_, "MPI_Irecv", peer);
  }
  ~MpiPendingPointToPoint() override {
    if (!complete_) {
      transport_.abandon(std::span(&request_, 1),
                         std::make_shared<decltype(received_)>(std::move(received_)));
    }
  }

  bool test() override {
    transport_.answer_liveness_queries();
    if (complete_) return true;
    int flag = 0;
    MPI_Status status;
    check(MPI_Test(&request_, &flag, &status), transport_.rank_, "MPI_Test", peer_);
    if (flag != 0) finish(status);
    return complete_;
  }
  void wait(TransferTiming& timing) override {
    if (complete_) return;
    const Stopwatch watch;
    MPI_Status status;
    if (transport_.progress_timeout_seconds_ <= 0) {
      check(MPI_Wait(&request_, &status), transport_.rank_, "MPI_Wait", peer_);
    } else {
      transport_.poll_until(
          [&] {
            int flag = 0;
            check(MPI_Test(&request_, &flag, &status), transport_.rank_, "MPI_Test", peer_);
            return flag != 0;
          },
          "MPI_Wait (point to point)", peer_);
    }
    timing.waiting_seconds += watch.seconds();
    finish(status);
  }
  std::vector<std::vector<std::byte>>& received() override { return received_; }
  std::vector<float>& reduced() override {
    throw Error("a point-to-point message reduces nothing");
  }

 private:
  // Counts the bytes; a receive checks that the peer sent the size expected (a longer message
  // already failed as truncated).
  void finish(MPI_Status& status) {
    complete_ = true;
    if (!sending_) {
      int count = 0;
      check(MPI_Get_count(&status, MPI_BYTE, &count), transport_.rank_, "MPI_Get_count", peer_);
      if (count != bytes_) {
        throw Error("rank " + std::to_string(transport_.rank_) + ": received " +
                    std::to_string(count) + " bytes from rank " + std::to_string(peer_) +
                    ", expected " + std::to_string(bytes_));
      }
    }
    (sending_ ? transport_.bytes_sent_ : transport_.bytes_received_)[kind_] += bytes_;
  }

  MpiTransport& transport_;
  int peer_;
  Traffic kind_;
  bool sending_;
  std::int64_t bytes_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<std::vector<std::byte>> received_;
  bool complete_ = false;
};

std::unique_ptr<PendingTransfer> MpiTransport::start_send(int peer, int number,
                                                          std::span<const std::byte> payload,
                                                          Traffic kind) {
  return std::make_unique<MpiPendingPointToPoint>(*this, peer, number, payload, 0, true, kind);
}

std::unique_ptr<PendingTransfer> MpiTransport::start_receive(int peer, int number,
                                                             std::int64_t receive_bytes,
                                                             Traffic kind) {
  return std::make_unique<MpiPendingPointToPoint>(*this, peer, number, std::span<const std::byte>{},
                                                  receive_bytes, false, kind);
}

std::unique_ptr<PendingTransfer> MpiTransport::start_all_to_all(
    const std::vector<std::span<const std::byte>>& send,
    const std::vector<std::int64_t>& receive_bytes, Traffic kind, int block_steps) {
  return std::make_unique<MpiPendingAllToAll>(*this, send, receive_bytes, kind, block_steps);
}

std::unique_ptr<PendingTransfer> MpiTransport::start_all_reduce_sum(std::vector<float> data,
                                                                    Traffic kind,
                                                                    int ranks_per_machine) {
  return std::make_unique<MpiPendingAllReduce>(*this, std::move(data), kind, ranks_per_machine);
}

// The collectives below are the nonblocking ones, completed under the progress timeout.
void MpiTransport::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(communicator_, &request), rank_, "MPI_Ibarrier");
  complete(std::span(&request, 1), "MPI_Barrier");
}

double MpiTransport::max_over_ranks(double value) {
  double result = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, communicator_, &request), rank_,
        "MPI_Iallreduce");
  complete(std::span(&request, 1), "MPI_Allreduce");
  return result;
}

double MpiTransport::sum_over_ranks(double value) {
  // Summed here in rank order rather than by MPI_Allreduce, whose order MPI leaves open: every
  // rank, and every run, gets the same bits.
  std::vector<double> values(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  check(
      MPI_Iallgather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, communicator_, &request),
      rank_, "MPI_Iallgather");
  complete(std::span(&request, 1), "MPI_Allgather");
  double sum = 0;
  for (const double v : values) sum += v;
  return sum;
}

std::int64_t MpiTransport::sum_over_ranks(std::int64_t value) {
  std::int64_t result = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&value, &result, 1, MPI_INT64_T, MPI_SUM, communicator_, &request), rank_,
        "MPI_Iallreduce");
  complete(std::span(&request, 1), "MPI_Allreduce");
  return result;
}

std::vector<std::string> MpiTransport::gather_to_root(const std::string& text) {
  const int length = message_count(text.size(), "gather_to_root");
  const bool root = rank_ == 0;
  std::vector<int> lengths(root ? static_cast<std::size_t>(size_) : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, communicator_, &request),
        rank_, "MPI_Igather");
  complete(std::span(&request, 1), "MPI_Gather");
  std::vector<int> offsets(lengths.size());
  std::int64_t total = 0;
  for (std::size_t q = 0; q < lengths.size(); ++q) {
    offsets[q] = message_count(static_cast<std::size_t>(total), "gather_to_root");
    total += lengths[q];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Igatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                     MPI_CHAR, 0, communicator_, &request),
        rank_, "MPI_Igatherv");
  complete(std::span(&request, 1), "MPI_Gatherv");
  std::vector<std::string> texts;
  texts.reserve(lengths.size());
  for (std::size_t q = 0; q < lengths.size(); ++q) {
    texts.push_back(
        all.substr(static_cast<std::size_t>(offsets[q]), static_cast<std::size_t>(lengths[q])));
  }
  return texts;
}

std::vector<std::vector<float>> MpiTransport::all_gather_control(std::span<const float> mine) {
  const int count = message_count(mine.size(), "all_gather_control", "floats");
  std::vector<int> counts(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, communicator_, &request),
        rank_, "MPI_Iallgather");
  complete(std::span(&request, 1), "MPI_Allgather");
  std::vector<int> offsets(counts.size());
  std::int64_t total = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    offsets[q] = message_count(static_cast<std::size_t>(total), "all_gather_control", "floats");
    total += counts[q];
  }
  std::vector<float> all(static_cast<std::size_t>(total));
  check(MPI_Iallgatherv(mine.data(), count, MPI_FLOAT, all.data(), counts.data(), offsets.data(),
                        MPI_FLOAT, communicator_, &request),
        rank_, "MPI_Iallgatherv");
  complete(std::span(&request, 1), "MPI_Allgatherv");
  std::vector<std::vector<float>> values;
  values.reserve(counts.size());
  for (std::size_t q = 0; q < counts.size(); ++q) {
    const auto begin = all.begin() + offsets[q];
    values.emplace_back(begin, begin + counts[q]);
  }
  return values;
}

MPI_Comm pair_communicator(MPI_Comm world, int a, int b) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  const bool in_pair = rank == a || rank == b;
  MPI_Comm pair = MPI_COMM_NULL;
  if (MPI_Comm_split(world, in_pair ? 0 : MPI_UNDEFINED, rank == a ? 0 : 1, &pair) != MPI_SUCCESS) {
    throw Error("MPI_Comm_split failed");
  }
  return pair;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  if (const auto line_end = version.find('\n'); line_end != std::string::npos)
    version.resize(line_end);
  return version;
}

void abort_all_ranks(const std::string& message, int exit_code) {
  const bool running = mpi_running();
  int rank = 0;
  if (running) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  if (running) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace gnnbed
