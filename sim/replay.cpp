#include "sim/replay.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>

#include "sim/failures.hpp"
#include "sim/platform.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace sg4 = simgrid::s4u;
namespace {

constexpr std::size_t kWaiting = kNumTimeCategories;

// PBG's messages: one rank's send and its peer's receive.
bool is_point_to_point(OpKind kind) { return kind == OpKind::send || kind == OpKind::receive; }

// One direction of one pair of ranks: messages matched in order, as MPI matches them. A transfer
// starts once the receiver has posted its receive (rendezvous), like the pairwise exchanges of
// MPI and NCCL.
struct Channel {
  sg4::Mailbox* mailbox = nullptr;  // the transfers, matched in order
  std::int64_t receives_posted = 0;
  std::int64_t sends_started = 0;
  // Whether the receiver has posted the receive of the next message to send (rendezvous).
  bool receiver_ready() const { return receives_posted > sends_started; }
  // Where both ends are one host (nothing moves): when each message was sent, from the first not
  // yet received on. A vector, not a deque: an empty deque allocates over 500 bytes, and a replay
  // holds a channel per direction of every pair of ranks that talk (millions at 1024 machines).
  std::vector<double> local_started;
  std::size_t local_received = 0;
  bool local_waiting() const { return local_received < local_started.size(); }
  // The send time of the next message to receive, which is taken.
  double take_local() {
    const double started = local_started[local_received++];
    if (local_received == local_started.size()) {
      local_started.clear();
      local_received = 0;
    }
    return started;
  }
  // Messages whose sender has finished them: their transfer and, with the network stack's CPU
  // time modelled, that work at both ends; and those the receiver has taken.
  std::int64_t sends_finished = 0;
  std::int64_t receives_finished = 0;
};

// An op of the replay: iteration i's op j.
struct OpRef {
  std::size_t iteration = 0;
  std::size_t op = 0;
};

struct RankState {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed = sg4::ConditionVariable::create();
  std::vector<std::vector<char>> done;          // per iteration, per op
  std::vector<int> prologue_remaining;          // per iteration: prologue ops not done
  std::vector<std::vector<DeviceCopy>> copies;  // per iteration: its copies to the device
  // The order the rank's streams take their ops in: the static schedule's (plan.hpp:
  // schedule_key), which without pipelining is plan order iteration after iteration.
  std::vector<OpRef> order;
  // Per round, the ops not done that the engine completes within the round (every op but a
  // transfer left in flight to a later stage of its mini-batch), and the first round with some.
  std::vector<int> round_remaining;
  std::size_t first_open_round = 0;
  // Per iteration, per stage: its transfers not done.
  std::vector<std::vector<int>> transfers_remaining;
  // Per iteration, per op: for an op that needs a transfer of its stage, the last transfer its
  // stage starts before it (-1: none). The engine then waits for every transfer it has started,
  // in order, and the network stream completes them in order: waiting for the last suffices.
  std::vector<std::vector<int>> finishes_through;
  // CPU ranks: the position in `order` of the op the rank's thread takes next. A transfer starts
  // when the thread reaches it, as the engine starts it.
  std::size_t thread_position = 0;
  // Per iteration, per op: a send's or receive's number among the messages of its pair of ranks in
  // its direction (Replay::number_messages); empty for a plan without either.
  std::vector<std::vector<std::int64_t>> message_numbers;
  // When the rank's last send with a throttle (Op::throttle_seconds) started; none yet: < 0.
  double last_throttled_send_seconds = -1;
  // A transfer or op of the rank failed (a part it needed failed): its actor stopped there.
  bool aborted = false;
  // With a progress window: whether the rank's thread computes past it, out of its transport's
  // calls, so that its transfers stall.
  bool holding_transfers = false;
  std::vector<int> gate_waiters;      // ranks waiting for it to stop holding (gates_open_for)
  std::vector<sg4::ActorPtr> actors;  // its streams' actors
  SimulatedRank stats;
};

// Holds an s4u mutex for an actor that a failure may kill in any simcall (ClusterSpec::failures),
// the mutex's own included. std::unique_lock unlocks in its destructor, which is noexcept: a kill
// arriving in that unlock would end the process. This one is unlocked explicitly, and lets go of
// the mutex without a simcall when the actor dies holding it.
class KillableLock {
 public:
  explicit KillableLock(sg4::Mutex& mutex) : mutex_(mutex), lock_(mutex) {}
  ~KillableLock() { static_cast<void>(lock_.release()); }
  KillableLock(const KillableLock&) = delete;
  KillableLock& operator=(const KillableLock&) = delete;

  // For condition variables' waits.
  std::unique_lock<sg4::Mutex>& held() { return lock_; }
  void unlock() {
    static_cast<void>(lock_.release());
    mutex_.unlock();
  }
  void lock() { lock_ = std::unique_lock(mutex_); }

 private:
  sg4::Mutex& mutex_;
  std::unique_lock<sg4::Mutex> lock_;
};

struct StepCost {
  double seconds = 0;
  double waiting_seconds = 0;

  StepCost& operator+=(const StepCost& other) {
    seconds += other.seconds;
    waiting_seconds += other.waiting_seconds;
    return *this;
  }
};

// A core of an emulated cluster that time slices is given to one computing rank at a time, as
// Linux gives it: the rank keeps it to the end of the op or to the next timer tick at which a
// core-mate waits for it, then goes to the back of the queue. Ranks that wait in MPI poll and
// yield, so they take it only when no core-mate computes, or at a tick.
struct SharedCore {
  int running = -1;        // the rank whose compute op holds the core, -1 for none
  std::deque<int> queued;  // computing ranks waiting for their turn, in order
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed = sg4::ConditionVariable::create();
};

class Replay {
 public:
  // `keeps_features`: per rank, whether its device keeps its features (ranks_keeping_features).
  Replay(const ClusterSpec& cluster, const std::vector<std::vector<Plan>>& iterations,
         const ReplayOptions& options, std::vector<char> keeps_features, Platform platform)
      : cluster_(cluster),
        iterations_(iterations),
        options_(options),
        platform_(std::move(platform)),
        num_ranks_(cluster.num_ranks()),
        ranks_(static_cast<std::size_t>(num_ranks_)),
        cores_(cluster.shared_core_time_slice_seconds > 0 ? platform_.shared_cores.size() : 0),
        iteration_end_(iterations.size(), 0.0),
        features_on_device_(std::move(keeps_features)) {
    std::unordered_map<std::int64_t, std::int64_t> messages_counted;
    for (std::size_t i = 0; i < iterations_.size(); ++i) {
      if (static_cast<int>(iterations_[i].size()) != num_ranks_) {
        throw Error("iteration " + std::to_string(i) + " has " +
                    std::to_string(iterations_[i].size()) + " plans for a cluster of " +
                    std::to_string(num_ranks_) + " ranks");
      }
      for (const Plan& plan : iterations_[i]) {
        RankState& state = rank_state(plan.rank);
        state.done.emplace_back(plan.ops.size(), 0);
        state.prologue_remaining.push_back(plan.prologue_ops);
        state.copies.push_back(device_copies(plan, features_on_device(plan.rank)));
        count_round_ops(state, plan, i);
        state.message_numbers.push_back(number_messages(plan, messages_counted));
        state.stats.sent += plan.bytes_sent();
        state.stats.received += plan.bytes_received();
        state.stats.sent_by_iteration.push_back(plan.bytes_sent());
        state.stats.received_by_iteration.push_back(plan.bytes_received());
        state.stats.seconds_by_iteration.emplace_back();
        if (plan.num_ranks != num_ranks_) {
          throw Error("plan of rank " + std::to_string(plan.rank) + " is for " +
                      std::to_string(plan.num_ranks) + " ranks, the cluster has " +
                      std::to_string(num_ranks_));
        }
      }
    }
    for (int r = 0; r < num_ranks_; ++r) {
      device_compute_factors_.push_back(cluster.compute_factor(r));
      host_compute_factors_.push_back(cluster.compute_factor(r, /*on_host=*/true));
      schedule(r);
    }
  }

  void start() {
    for (int r = 0; r < num_ranks_; ++r) {
      // A CPU rank is one thread running its plans (PlanExecutor); its transfers run while the
      // thread computes (nonblocking MPI), so the network stream gets its own actor. Its server
      // work (PBG's lock and partition servers) answers peers whatever the thread does: an actor
      // of its own too.
      std::vector<sg4::ActorPtr>& actors = rank_state(r).actors;
      if (cluster_.device_kind == DeviceKind::cpu) {
        actors.push_back(sg4::Actor::create("rank" + std::to_string(r), device(r), [this, r] {
          run_stream(r, StreamFilter::rank_thread);
        }));
        actors.push_back(sg4::Actor::create("rank" + std::to_string(r) + "-network", device(r),
                                            [this, r] { run_stream(r, StreamFilter::network); }));
        if (uses_stream(r, Stream::server)) {
          actors.push_back(sg4::Actor::create("rank" + std::to_string(r) + "-server", device(r),
                                              [this, r] { run_stream(r, StreamFilter::server); }));
        }
        continue;
      }
      for (const Stream stream :
           {Stream::sampler, Stream::copy, Stream::compute, Stream::network, Stream::server}) {
        if (!uses_stream(r, stream)) continue;
        actors.push_back(sg4::Actor::create(
            "rank" + std::to_string(r) + "-" + std::string(to_string(stream)), device(r),
            [this, r, stream] { run_stream(r, stream_filter(stream)); }));
      }
    }
    start_failures(
        cluster_, platform_, [this](const PartFailure& failure) { fail(failure); },
        [this] { failure_ = failure_outcome(); });
  }

  ReplayResult result() {
    ReplayResult result;
    for (RankState& state : ranks_) {
      result.makespan_seconds = std::max(result.makespan_seconds, state.stats.finish_seconds);
      result.ranks.push_back(state.stats);
    }
    result.iteration_end_seconds = iteration_end_;
    result.trace = std::move(trace_);
    result.communications = communications_;
    if (!failed_.empty()) {
      result.failure = failure_ ? *failure_ : failure_outcome();
    } else {
      require_completed();
    }
    return result;
  }

 private:
  RankState& rank_state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }

  // Replayed iterations count rounds from 0 whatever their plans' numbers: the epoch's.
  static ScheduleKey key_of(const Plan& plan, std::size_t iteration, std::size_t index) {
    return schedule_key(plan, static_cast<int>(index), static_cast<std::int64_t>(iteration));
  }
  static std::size_t round_of(const Plan& plan, std::size_t iteration, std::size_t index) {
    return static_cast<std::size_t>(key_of(plan, iteration, index).round);
  }
  // A transfer of a stage before its plan's last is left in flight when the stage ends; the
  // mini-batch's next stage finishes it (PlanExecutor::run_stage). The prologue runs blocking.
  static bool left_in_flight(const Plan& plan, std::size_t index, const Op& op) {
    return is_communication(op.kind) && index >= static_cast<std::size_t>(plan.prologue_ops) &&
           op.stage < plan.pipeline_depth;
  }

  // PlanExecutor completes the collectives it started in order. A send or receive is a message of
  // its own: an op that needs one waits for that one alone, as its dependencies say.
  static bool is_collective(OpKind kind) {
    return kind == OpKind::all_to_all || kind == OpKind::all_reduce;
  }

  static std::vector<int> transfers_finished_before(const Plan& plan) {
    std::vector<int> through(plan.ops.size(), -1);
    std::vector<int> last_started(static_cast<std::size_t>(plan.pipeline_depth) + 1, -1);
    for (std::size_t j = static_cast<std::size_t>(plan.prologue_ops); j < plan.ops.size(); ++j) {
      const Op& op = plan.ops[j];
      int& last = last_started[static_cast<std::size_t>(op.stage)];
      if (is_collective(op.kind)) {
        last = static_cast<int>(j);
        continue;
      }
      const bool needs_transfer = std::any_of(op.deps.begin(), op.deps.end(), [&](int d) {
        return is_collective(plan.ops[static_cast<std::size_t>(d)].kind) && d >= plan.prologue_ops;
      });
      if (needs_transfer) through[j] = last;
    }
    return through;
  }

  void count_round_ops(RankState& state, const Plan& plan, std::size_t iteration) {
    state.finishes_through.push_back(transfers_finished_before(plan));
    state.transfers_remaining.emplace_back(static_cast<std::size_t>(plan.pipeline_depth) + 1, 0);
    for (std::size_t j = 0; j < plan.ops.size(); ++j) {
      const Op& op = plan.ops[j];
      if (is_communication(op.kind)) {
        ++state.transfers_remaining.back()[static_cast<std::size_t>(op.stage)];
      }
      if (left_in_flight(plan, j, op)) continue;
      const std::size_t round = round_of(plan, iteration, j);
      if (state.round_remaining.size() <= round) state.round_remaining.resize(round + 1, 0);
      ++state.round_remaining[round];
    }
  }

  // Per op of `plan`, a send's or receive's number among the messages from its sender to its
  // receiver, counted in plan order over the replayed iterations (-1 for other ops), `counted`
  // holding the counts so far per pair and side; empty when the plan has neither. The k-th send
  // from a to b is the k-th receive on b from a, as the transport's tags match them, whichever of
  // the two ranks' streams posts them first.
  std::vector<std::int64_t> number_messages(
      const Plan& plan, std::unordered_map<std::int64_t, std::int64_t>& counted) const {
    std::vector<std::int64_t> numbers;
    for (std::size_t j = 0; j < plan.ops.size(); ++j) {
      const Op& op = plan.ops[j];
      if (!is_point_to_point(op.kind)) continue;
      numbers.resize(plan.ops.size(), -1);
      const bool sends = op.kind == OpKind::send;
      const std::int64_t pair =
          sends ? pair_index(plan.rank, op.peer) : pair_index(op.peer, plan.rank);
      numbers[j] = counted[2 * pair + (sends ? 0 : 1)]++;
    }
    return numbers;
  }
  std::int64_t pair_index(int from, int to) const {
    return static_cast<std::int64_t>(from) * num_ranks_ + to;
  }

  // The rank's order: the static schedule over every replayed iteration. Every plan of the
  // replay has the same pipeline depth, as the engine's pipeline takes them.
  void schedule(int r) {
    std::vector<OpRef>& order = rank_state(r).order;
    const int depth = iterations_.front()[0].pipeline_depth;
    for (std::size_t i = 0; i < iterations_.size(); ++i) {
      const Plan& plan = iterations_[i][static_cast<std::size_t>(r)];
      if (plan.pipeline_depth != depth) {
        throw Error("rank " + std::to_string(r) + "'s plan of iteration " + std::to_string(i) +
                    " has pipeline depth " + std::to_string(plan.pipeline_depth) +
                    ", unlike others (" + std::to_string(depth) + ")");
      }
      for (std::size_t j = 0; j < plan.ops.size(); ++j) order.push_back({i, j});
    }
    const auto key = [&](const OpRef& ref) {
      return key_of(iterations_[ref.iteration][static_cast<std::size_t>(r)], ref.iteration, ref.op);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const OpRef& a, const OpRef& b) { return key(a) < key(b); });
  }
  sg4::Host* device(int rank) const {
    return platform_.device_hosts[static_cast<std::size_t>(rank)];
  }
  sg4::Host* machine_host(int rank) const {
    return platform_.machine_hosts[static_cast<std::size_t>(cluster_.machine_of(rank))];
  }
  sg4::Host* compute_host(int rank, OpKind kind) const {
    if (!platform_.shared_cores.empty()) {
      return platform_.shared_cores[static_cast<std::size_t>(rank) % platform_.shared_cores.size()];
    }
    return cluster_.runs_on_host(kind, features_on_device(rank)) ? machine_host(rank)
                                                                 : device(rank);
  }
  bool features_on_device(int rank) const {
    return features_on_device_[static_cast<std::size_t>(rank)] != 0;
  }
  // The bytes op `op` of replayed iteration `iteration`, a copy to the device, moves.
  std::int64_t copied_bytes(int rank, std::int64_t iteration, std::size_t op) {
    const std::vector<DeviceCopy>& copies =
        rank_state(rank).copies[static_cast<std::size_t>(iteration)];
    return std::lower_bound(
               copies.begin(), copies.end(), op,
               [](const DeviceCopy& copy, std::size_t index) { return copy.op < index; })
        ->bytes;
  }
  // Structure and features live in host memory; activations, gradients and weights on devices.
  sg4::Host* endpoint(int rank, Traffic traffic) const {
    return between_hosts(traffic) ? machine_host(rank) : device(rank);
  }

  // The CPU whose network stack carries `rank`'s traffic of this kind: the rank's own CPU, or on
  // GPU machines the host for host data (device data bypasses it: GPUDirect, NCCL). None when
  // the data does not pass a CPU.
  sg4::Host* network_stack_cpu(int rank, Traffic traffic) const {
    if (cluster_.device_kind == DeviceKind::cpu) return compute_host(rank, OpKind::all_to_all);
    sg4::Host* end = endpoint(rank, traffic);
    return end == machine_host(rank) ? end : nullptr;
  }

  bool uses_stream(int rank, Stream stream) const {
    for (const auto& plans : iterations_) {
      for (const Op& op : plans[static_cast<std::size_t>(rank)].ops) {
        if (op.stream == stream) return true;
      }
    }
    return false;
  }

  // The engine's rule (PlanExecutor): an op runs after its dependencies, in its plan and across
  // iterations, after the prologue ops before it, once its plan's prologue has run, once every
  // earlier round has run (but for transfers left in flight to a later stage), once its
  // mini-batch's transfers of earlier stages have finished, and, if it needs a transfer, once every
  // transfer started before it.
  bool ready(const RankState& state, const Plan& plan, std::size_t iteration, std::size_t index,
             const Op& op) const {
    const std::vector<char>& done = state.done[iteration];
    const bool deps_done = std::all_of(op.deps.begin(), op.deps.end(), [&](int d) {
      return done[static_cast<std::size_t>(d)] != 0;
    });
    const bool iteration_deps_done =
        std::all_of(op.iteration_deps.begin(), op.iteration_deps.end(), [&](const IterationDep& d) {
          return iteration < static_cast<std::size_t>(d.back) ||
                 state.done[iteration - static_cast<std::size_t>(d.back)]
                           [static_cast<std::size_t>(d.op)] != 0;
        });
    // The plan's ops exist only once its prologue (sampling, announcement) has run: an engine
    // builds the plan from the prologue's results, so no op of it starts before, on any device.
    // The prologue itself runs in order (the announcement carries what sampling found), also
    // where its ops are on different streams of a GPU rank.
    const bool in_prologue = index < static_cast<std::size_t>(plan.prologue_ops);
    const bool plan_built =
        in_prologue ? std::all_of(done.begin(), done.begin() + static_cast<std::ptrdiff_t>(index),
                                  [](char d) { return d != 0; })
                    : state.prologue_remaining[iteration] == 0;
    const std::vector<int>& in_flight = state.transfers_remaining[iteration];
    const bool earlier_stages_finished =
        std::all_of(in_flight.begin(), in_flight.begin() + op.stage, [](int n) { return n == 0; });
    const int through = state.finishes_through[iteration][index];
    const bool started_transfers_finished =
        through < 0 || done[static_cast<std::size_t>(through)] != 0;
    const std::size_t round = round_of(plan, iteration, index);
    return deps_done && iteration_deps_done && plan_built && earlier_stages_finished &&
           started_transfers_finished && state.first_open_round >= round &&
           (in_prologue || next_plan_built(state, plan, round));
  }

  // A CPU rank is one thread: in a pipelined epoch it builds the next mini-batch's plan (its
  // sampling and announcement, the round's first ops) before it runs the round's stages
  // (RankEngine::run_epoch). A GPU rank's sampler and network stream take them beside its stages.
  bool next_plan_built(const RankState& state, const Plan& plan, std::size_t round) const {
    if (cluster_.device_kind != DeviceKind::cpu || plan.pipeline_depth == 0) return true;
    const std::size_t next = round + 1;
    return next >= state.prologue_remaining.size() || state.prologue_remaining[next] == 0;
  }

  // After op `index` of replayed iteration `iteration` is done. Actors run one at a time and are
  // switched only at simcalls, so the rank's state needs no lock to change.
  void mark_done(RankState& state, const Plan& plan, std::size_t iteration, std::size_t index) {
    const Op& op = plan.ops[index];
    state.done[iteration][index] = 1;
    if (index < static_cast<std::size_t>(plan.prologue_ops)) --state.prologue_remaining[iteration];
    if (is_communication(op.kind)) {
      --state.transfers_remaining[iteration][static_cast<std::size_t>(op.stage)];
    }
    if (!left_in_flight(plan, index, op)) --state.round_remaining[round_of(plan, iteration, index)];
    while (state.first_open_round < state.round_remaining.size() &&
           state.round_remaining[state.first_open_round] == 0) {
      ++state.first_open_round;
    }
    state.changed->notify_all();
  }

  // rank_thread: a CPU rank's thread, which runs every stream but the network's and the server's.
  enum class StreamFilter : std::uint8_t {
    all,
    rank_thread,
    network,
    sampler,
    copy,
    compute,
    server
  };
  static StreamFilter stream_filter(Stream stream) {
    switch (stream) {
      case Stream::sampler:
        return StreamFilter::sampler;
      case Stream::copy:
        return StreamFilter::copy;
      case Stream::compute:
        return StreamFilter::compute;
      case Stream::network:
        return StreamFilter::network;
      case Stream::server:
        return StreamFilter::server;
    }
    return StreamFilter::all;
  }
  static bool takes(StreamFilter filter, Stream stream) {
    switch (filter) {
      case StreamFilter::all:
        return true;
      case StreamFilter::rank_thread:
        return stream != Stream::network && stream != Stream::server;
      case StreamFilter::network:
        return stream == Stream::network;
      case StreamFilter::sampler:
        return stream == Stream::sampler;
      case StreamFilter::copy:
        return stream == Stream::copy;
      case StreamFilter::compute:
        return stream == Stream::compute;
      case StreamFilter::server:
        return stream == Stream::server;
    }
    return false;
  }

  // Runs the rank's ops that `filter` takes, in the rank's order. A CPU rank's thread
  // (rank_thread) passes its transfers as it reaches them; its network actor starts each
  // collective once the thread has reached it. A send or receive starts once its dependencies
  // are done, as every op of the server stream (the rule of point-to-point plans: replay.hpp).
  void run_stream(int rank, StreamFilter filter) {
    RankState& state = rank_state(rank);
    const bool thread = filter == StreamFilter::rank_thread;
    const bool after_thread =
        filter == StreamFilter::network && cluster_.device_kind == DeviceKind::cpu;
    for (std::size_t position = 0; position < state.order.size(); ++position) {
      const std::size_t i = state.order[position].iteration;
      const std::size_t j = state.order[position].op;
      const Plan& plan = iterations_[i][static_cast<std::size_t>(rank)];
      const Op& op = plan.ops[j];
      if (takes(filter, op.stream)) {
        KillableLock lock(*state.mutex);
        while (!ready(state, plan, i, j, op) ||
               (after_thread && !is_point_to_point(op.kind) && state.thread_position <= position)) {
          state.changed->wait(lock.held());
        }
        lock.unlock();
        try {
          run_and_account(state, plan, i, j);
        } catch (const simgrid::NetworkFailureException&) {
          return abort_rank(state);
        } catch (const simgrid::HostFailureException&) {
          return abort_rank(state);
        } catch (const HostDown&) {
          return abort_rank(state);
        }
        if (thread) state.thread_position = position + 1;
        mark_done(state, plan, i, j);  // notifies the rank's other actors
      } else if (thread) {
        state.thread_position = position + 1;  // a transfer: started, the network actor takes it
        state.changed->notify_all();
      }
    }
  }

  // A transfer or op of the rank failed: it stops there, as an MPI or NCCL call that fails aborts
  // the rank; its other actors wait on.
  static void abort_rank(RankState& state) {
    state.aborted = true;
    state.changed->notify_all();
  }

  // A part failed (its hosts or link are off already): the ranks it held stop, including their
  // actors that were elsewhere (moved to their machine's CPU for a transfer there).
  void fail(const PartFailure& failure) {
    failed_.push_back(failure);
    for (int r = 0; r < num_ranks_; ++r) {
      if (!has_failed(r)) continue;
      for (const sg4::ActorPtr& actor : rank_state(r).actors) actor->kill();
    }
  }

  bool has_failed(int rank) const {
    return std::any_of(failed_.begin(), failed_.end(), [&](const PartFailure& failure) {
      return (failure.kind == PartFailure::Kind::rank && failure.index == rank) ||
             (failure.kind == PartFailure::Kind::machine &&
              failure.index == cluster_.machine_of(rank));
    });
  }

  // Without failures every op of every rank ran: a rank left waiting means the replay's actors
  // deadlocked (SimGrid then stops), and its times would describe a part of the epoch.
  void require_completed() const {
    const ReplayFailure outcome = failure_outcome();
    if (outcome.completed) return;
    for (const StoppedRank& rank : outcome.ranks) {
      if (rank.state == "finished") continue;
      throw Error("simulate: the replay deadlocked: rank " + std::to_string(rank.rank) +
                  " waits at op '" + rank.next_op + "' of iteration " +
                  std::to_string(rank.next_op_iteration) + " (a simulator bug; please report it)");
    }
  }

  // Where every rank stands now, after the failures so far.
  ReplayFailure failure_outcome() const {
    ReplayFailure outcome;
    outcome.applied = failed_;
    outcome.stopped_seconds = sg4::Engine::get_clock();
    outcome.completed = true;
    std::size_t complete = iterations_.size();
    for (int r = 0; r < num_ranks_; ++r) {
      const RankState& state = ranks_[static_cast<std::size_t>(r)];
      StoppedRank stop{r, "finished", state.stats.finish_seconds, "", -1};
      const auto next = std::find_if(state.order.begin(), state.order.end(), [&](const OpRef& ref) {
        return state.done[ref.iteration][ref.op] == 0;
      });
      if (next != state.order.end()) {
        outcome.completed = false;
        stop.state = has_failed(r) ? "failed" : state.aborted ? "aborted" : "waiting";
        stop.next_op =
            iterations_[next->iteration][static_cast<std::size_t>(r)].ops[next->op].label;
        stop.next_op_iteration = static_cast<int>(next->iteration);
        complete = std::min(complete, next->iteration);
      }
      outcome.ranks.push_back(std::move(stop));
    }
    outcome.iterations_completed = static_cast<int>(complete);
    return outcome;
  }

  void run_and_account(RankState& state, const Plan& plan, std::size_t i, std::size_t j) {
    const Op& op = plan.ops[j];
    const double start = sg4::Engine::get_clock();
    const StepCost cost =
        run_op(plan, static_cast<std::int64_t>(i), op, static_cast<std::int64_t>(j));
    const double end = sg4::Engine::get_clock();
    const auto part = static_cast<std::size_t>(category_of(op.kind));
    state.stats.seconds[part] += (end - start) - cost.waiting_seconds;
    state.stats.seconds[kWaiting] += cost.waiting_seconds;
    state.stats.seconds_by_iteration[i][part] += (end - start) - cost.waiting_seconds;
    state.stats.seconds_by_iteration[i][kWaiting] += cost.waiting_seconds;
    state.stats.finish_seconds = std::max(state.stats.finish_seconds, end);
    iteration_end_[i] = std::max(iteration_end_[i], end);
    if (options_.record_trace) {
      trace_.push_back({plan.rank, static_cast<int>(i), op.stream, op.kind, op.label, start,
                        end - start, cost.waiting_seconds});
    }
  }

  // `index`: the op's position in the plan of replayed iteration `iteration`.
  StepCost run_op(const Plan& plan, std::int64_t iteration, const Op& op, std::int64_t index) {
    // The cost model's time for this rank, this op and this run of it.
    const auto rank = static_cast<std::size_t>(plan.rank);
    const bool on_host = cluster_.runs_on_host(op.kind, features_on_device(plan.rank));
    const double factor = (on_host ? host_compute_factors_ : device_compute_factors_)[rank] *
                          cluster_.jitter_factor(plan.rank, iteration, index);
    if (op.kind == OpKind::sample && !op.sampling_hops.empty() && !measured(op)) {
      return sample_over_network(plan.rank, op, factor);
    }
    switch (op.kind) {
      case OpKind::all_to_all:
        // The prologue's exchanges are blocking, step by step (within machines where the op says
        // so); the plan's are posted in blocks of steps (MpiTransport::all_to_all_into,
        // all_to_all_within_machine_into and start_all_to_all).
        return index < plan.prologue_ops
                   ? pairwise(plan.rank, op.traffic, op.bytes_to, false, op.ranks_per_machine)
                   : posted_in_blocks(plan.rank, op.traffic, op.bytes_to);
      case OpKind::all_reduce:
        return all_reduce(plan, op);
      case OpKind::send:
        return send_message(plan.rank, op, message_number(plan.rank, iteration, index));
      case OpKind::receive:
        return receive_message(plan.rank, op, message_number(plan.rank, iteration, index));
      case OpKind::copy_to_device:
        if (cluster_.device_kind == DeviceKind::gpu) {
          transfer(machine_host(plan.rank), device(plan.rank),
                   copied_bytes(plan.rank, iteration, static_cast<std::size_t>(index)));
        }
        return {};
      default:
        compute(plan.rank, op.kind,
                measured(op) ? op.measured_seconds
                             : cluster_.compute_seconds(op, features_on_device(plan.rank)) * factor,
                /*in_thread=*/op.stream != Stream::server);
        return {};
    }
  }

  bool measured(const Op& op) const { return options_.uses_measured(op); }

  // `seconds` of an op of `rank`'s; `in_thread`: run by the thread that also calls the rank's
  // transport (not a server's), which then makes no call until the op ends (gates_transfers).
  void compute(int rank, OpKind kind, double seconds, bool in_thread) {
    if (seconds <= 0) return;
    sg4::Host* host = compute_host(rank, kind);
    const double op_start = sg4::Engine::get_clock();
    const bool gated = in_thread && gates_transfers();
    SharedCore* core = sliced_core(rank);
    if (core == nullptr) {
      execute_in_op(rank, host, seconds, op_start, gated);
    } else {
      compute_in_turns(*core, rank, host, seconds, op_start, gated);
    }
    if (gated && rank_state(rank).holding_transfers) release_transfers(rank);
  }

  void compute_in_turns(SharedCore& core, int rank, sg4::Host* host, double seconds,
                        double op_start, bool gated) {
    KillableLock lock(*core.mutex);
    core.queued.push_back(rank);
    double remaining = seconds;
    while (remaining > 0) {
      while (core.running != -1 || core.queued.front() != rank) core.changed->wait(lock.held());
      core.queued.pop_front();
      core.running = rank;
      do {
        const double turn = std::min(remaining, seconds_to_next_tick());
        lock.unlock();
        execute_in_op(rank, host, turn, op_start, gated);
        lock.lock();
        remaining -= turn;
      } while (remaining > 0 && core.queued.empty());
      core.running = -1;
      if (remaining > 0) core.queued.push_back(rank);
      core.changed->notify_all();
    }
    lock.unlock();
  }

  // Runs `seconds` of an op that started at `op_start`; a gated rank holds its transfers from
  // the end of its progress window on.
  void execute_in_op(int rank, sg4::Host* host, double seconds, double op_start, bool gated) {
    if (gated && !rank_state(rank).holding_transfers) {
      const double window_left = op_start + progress_window_seconds() - sg4::Engine::get_clock();
      if (window_left < seconds) {
        if (window_left > 0) {
          execute(host, window_left);
          seconds -= window_left;
        }
        hold_transfers(rank);
      }
    }
    execute(host, seconds);
  }

  // MPI over TCP without a progress thread (ClusterSpec::progress_window_bytes): an engine's call
  // to its transport between two ops moves each transfer's next fragments, about a window's worth
  // at the link's rate; then its transfers stall until the op ends, and none starts (a rendezvous
  // needs both ends' calls). CPU ranks only: a GPU rank's transfers run on NCCL's or its
  // samplers' own threads. Every route of a rank's transfers crosses its transport's gate
  // (Platform::transport_gates), closed while it holds. (SimGrid 3.32's Activity::resume leaves
  // a comm marked suspended, so suspending the comms themselves works once only.)
  bool gates_transfers() const { return !platform_.transport_gates.empty(); }
  double progress_window_seconds() const {
    return cluster_.progress_window_bytes / cluster_.nic.bandwidth_bytes_per_second;
  }
  void hold_transfers(int rank) {
    rank_state(rank).holding_transfers = true;
    platform_.transport_gates[static_cast<std::size_t>(rank)]->set_bandwidth(
        kClosedGateBytesPerSecond);
  }
  void release_transfers(int rank) {
    RankState& state = rank_state(rank);
    state.holding_transfers = false;
    platform_.transport_gates[static_cast<std::size_t>(rank)]->set_bandwidth(
        platform_.open_gate_bytes_per_second);
    for (const int waiter : state.gate_waiters) rank_state(waiter).changed->notify_all();
    state.gate_waiters.clear();
  }
  // A closed gate: a byte a second, nothing against the transfers' sizes (LV08 needs a positive
  // bandwidth).
  static constexpr double kClosedGateBytesPerSecond = 1.0;
  // A transfer starts only while neither end holds: SimGrid bounds a flow by the bandwidths of
  // its route when it starts, so one started through a closed gate would crawl to its end. Where
  // one does, `waiter` (which then waits on its rank's condition) is woken when it opens. The check
  // and the transfer's start must see the same state: no simcall between them.
  bool gates_open_for(int waiter, int from, int to) {
    if (!gates_transfers()) return true;
    bool open = true;
    for (const int end : {from, to}) {
      if (!rank_state(end).holding_transfers) continue;
      std::vector<int>& waiters = rank_state(end).gate_waiters;
      if (std::find(waiters.begin(), waiters.end(), waiter) == waiters.end()) {
        waiters.push_back(waiter);
      }
      open = false;
    }
    return open;
  }

  static void execute(sg4::Host* host, double seconds) {
    sg4::this_actor::exec_init(seconds * kWorkUnitsPerSecond)->set_host(host)->start()->wait();
  }

  // The core of `rank` when its ranks time slice it; null otherwise (processor sharing).
  SharedCore* sliced_core(int rank) {
    if (cores_.empty()) return nullptr;
    return &cores_[static_cast<std::size_t>(rank) % cores_.size()];
  }

  // Ticks fall on multiples of the time slice.
  double seconds_to_next_tick() const {
    const double slice = cluster_.shared_core_time_slice_seconds;
    const double now = sg4::Engine::get_clock();
    const double next = (std::floor(now / slice) + 1) * slice;
    // A turn that ended on a tick must not start a turn of rounding error.
    return next - now > 1e-9 * slice ? next - now : next + slice - now;
  }

  // A rank that a peer has just released from a wait: while a core-mate computes, it runs again
  // at the next tick, or as soon as that core-mate's op ends (it then waits in MPI, and yields).
  // Returns the seconds it waited for its core.
  double wait_for_core(int rank) {
    SharedCore* core = sliced_core(rank);
    if (core == nullptr || core->running == -1 || core->running == rank) return 0;
    const double start = sg4::Engine::get_clock();
    const double tick = start + seconds_to_next_tick();
    const int computing = core->running;
    KillableLock lock(*core->mutex);
    while (core->running == computing && sg4::Engine::get_clock() < tick) {
      core->changed->wait_until(lock.held(), tick);
    }
    lock.unlock();
    return sg4::Engine::get_clock() - start;
  }

  // Waits until a peer makes `released` true; a rank that had to wait may then wait for its core
  // (wait_for_core), whose seconds it returns.
  template <typename Released>
  double wait_for_peer(int rank, Released released) {
    return wait_until(rank, released) ? wait_for_core(rank) : 0;
  }

  // Waits until `rank` may start its next transfer to `to` on `outgoing`: the receiver has posted
  // its receive (rendezvous) and neither end's transport gate is closed; returns the seconds it
  // waited for its core after (wait_for_core), checking again after them.
  double wait_until_sendable(int rank, int to, Channel& outgoing) {
    const auto sendable = [&] {
      return outgoing.receiver_ready() && gates_open_for(rank, rank, to);
    };
    double core_waiting_seconds = 0;
    do {
      core_waiting_seconds += wait_for_peer(rank, sendable);
    } while (!sendable());
    return core_waiting_seconds;
  }

  // Waits until a peer makes `released` true; whether it had to.
  template <typename Released>
  bool wait_until(int rank, Released released) {
    if (released()) return false;
    RankState& self = rank_state(rank);
    KillableLock lock(*self.mutex);
    while (!released()) self.changed->wait(lock.held());
    lock.unlock();
    return true;
  }

  // A transfer from or to a host that failed (ClusterSpec::failures) fails at once: the
  // connection is gone. SimGrid refuses to start one.
  struct HostDown {};
  static void require_up(const sg4::Host* from, const sg4::Host* to) {
    if (!from->is_on() || !to->is_on()) throw HostDown{};
  }

  void transfer(sg4::Host* from, sg4::Host* to, std::int64_t bytes) {
    if (from == to) return;
    require_up(from, to);
    ++communications_;
    sg4::Comm::sendto(from, to, static_cast<std::uint64_t>(bytes));
  }

  // The channel of `from`'s transfers to `to` of traffic that moves between `hosts` (the machines'
  // CPUs) or between devices: the two never share a mailbox, whose transfers SimGrid routes between
  // the hosts of its two actors.
  Channel& channel(int from, int to, bool hosts) {
    Channel& channel = channels_[2 * pair_index(from, to) + (hosts ? 1 : 0)];
    if (channel.mailbox == nullptr) {
      channel.mailbox =
          sg4::Mailbox::by_name(std::to_string(from) + (hosts ? ">h" : ">d") + std::to_string(to));
    }
    return channel;
  }
  // The channel of message `number` from `from` to `to` (number_messages): one per message, as
  // the transport tags each, so that a pair's messages match in plan order whichever of the
  // ranks' streams posts first.
  Channel& message_channel(int from, int to, std::int64_t number) {
    Channel& channel = messages_[{pair_index(from, to), number}];
    if (channel.mailbox == nullptr) {
      channel.mailbox = sg4::Mailbox::by_name(std::to_string(from) + ">m" + std::to_string(to) +
                                              "#" + std::to_string(number));
    }
    return channel;
  }
  std::int64_t message_number(int rank, std::int64_t iteration, std::int64_t index) {
    return rank_state(rank)
        .message_numbers[static_cast<std::size_t>(iteration)][static_cast<std::size_t>(index)];
  }
  // Structure and features move between the machines' CPUs on a GPU cluster (samplers and feature
  // stores are in host memory), and so do PBG's embeddings and its servers' messages (it trains on
  // CPUs); everything else between devices.
  bool between_hosts(Traffic traffic) const {
    return (traffic == Traffic::structure || traffic == Traffic::features ||
            traffic == Traffic::embeddings || traffic == Traffic::control) &&
           cluster_.device_kind == DeviceKind::gpu;
  }

  // Moves the calling actor to `host`: a mailbox's transfer runs between its actors' hosts.
  static void move_to(sg4::Host* host) {
    if (sg4::this_actor::get_host() != host) sg4::this_actor::set_host(host);
  }

  // A receive from `from`, posted: a mailbox get where the two ends are different hosts, else
  // (both ends the machine's CPU, nothing moves) only the count the sender waits for.
  struct PostedReceive {
    Channel* incoming = nullptr;
    sg4::CommPtr comm;
  };
  PostedReceive post_receive(Channel& incoming, Traffic traffic, int from, sg4::Host* here) {
    PostedReceive receive;
    receive.incoming = &incoming;
    if (endpoint(from, traffic) != here)
      receive.comm = receive.incoming->mailbox->get_async(&discarded_payload_);
    ++receive.incoming->receives_posted;
    rank_state(from).changed->notify_all();
    return receive;
  }

  struct ReceiveEnd {
    double peer_started = 0;  // when the peer started the transfer
    bool released = false;    // whether this rank had to wait for it
  };
  ReceiveEnd finish_receive(int rank, PostedReceive& receive) {
    Channel& incoming = *receive.incoming;
    ReceiveEnd end;
    if (receive.comm) {
      // Waited for even when done (SimGrid releases a comm from its actor's list in the wait).
      const double posted = sg4::Engine::get_clock();
      receive.comm->wait();
      end.released = sg4::Engine::get_clock() > posted;
      end.peer_started = receive.comm->get_start_time();
      if (cluster_.nic_cpu_seconds_per_byte > 0) {
        // The data is there once both ends' network stacks have processed it.
        const std::int64_t message = incoming.receives_finished;
        end.released |=
            wait_until(rank, [&incoming, message] { return incoming.sends_finished > message; });
      }
      ++incoming.receives_finished;
      return end;
    }
    end.released = wait_until(rank, [&incoming] { return incoming.local_waiting(); });
    end.peer_started = incoming.take_local();
    return end;
  }

  // One step of a pairwise exchange: send `bytes` to `send_to` and receive from `receive_from`.
  // Both are matched in order per pair (a mailbox between two hosts; flags in the channel where
  // both ends are one host, the machine's CPU, and nothing moves), and a transfer starts once its
  // receiver has posted the receive (rendezvous). Waiting is the time until the peer that sends to
  // this rank started its transfer; a rank the transfer released then waits for its core.
  // `sampling`: an exchange of sampling over the network, which the sampling actor (a CPU rank's
  // thread) runs beside the network actor's collectives: its own mailbox, as the transport tags
  // every collective, so that the two never take each other's messages.
  StepCost exchange_step(int rank, Traffic traffic, int send_to, std::int64_t bytes,
                         int receive_from, bool sampling = false) {
    const bool lane = sampling || between_hosts(traffic);
    const double step_start = sg4::Engine::get_clock();
    sg4::Host* here = endpoint(rank, traffic);
    move_to(here);
    PostedReceive receive =
        post_receive(channel(receive_from, rank, lane), traffic, receive_from, here);
    Channel& outgoing = channel(rank, send_to, lane);
    double core_waiting_seconds = wait_until_sendable(rank, send_to, outgoing);
    PostedSend send = post_send(outgoing, rank, traffic, send_to, bytes);
    finish_send(send);
    const ReceiveEnd end = finish_receive(rank, receive);
    if (end.released) core_waiting_seconds += wait_for_core(rank);
    const double finish = sg4::Engine::get_clock();
    const double waiting = std::max(end.peer_started - step_start, 0.0) + core_waiting_seconds;
    return {finish - step_start, std::min(waiting, finish - step_start)};
  }

  // A send whose receiver has posted its receive: its transfer and, with the network stack's CPU
  // time modelled, that work at both ends.
  struct PostedSend {
    Channel* outgoing = nullptr;
    int to = 0;
    sg4::CommPtr transfer;
    std::vector<sg4::ExecPtr> stack_work;
  };
  PostedSend post_send(Channel& outgoing, int rank, Traffic traffic, int send_to,
                       std::int64_t bytes) {
    sg4::Host* from = endpoint(rank, traffic);
    sg4::Host* to = endpoint(send_to, traffic);
    PostedSend send;
    send.outgoing = &outgoing;
    send.to = send_to;
    ++send.outgoing->sends_started;
    if (from == to) {
      // Both ends are the machine's CPU: nothing crosses a link.
      send.outgoing->local_started.push_back(sg4::Engine::get_clock());
      rank_state(send_to).changed->notify_all();
      return send;
    }
    require_up(from, to);
    ++communications_;
    send.transfer =
        send.outgoing->mailbox->put_async(send.outgoing, static_cast<std::uint64_t>(bytes));
    if (cluster_.machine_of(rank) != cluster_.machine_of(send_to)) {
      const double stack_seconds = static_cast<double>(bytes) * cluster_.nic_cpu_seconds_per_byte;
      for (const int end : {rank, send_to}) {
        sg4::Host* cpu = network_stack_cpu(end, traffic);
        if (stack_seconds > 0 && cpu != nullptr) {
          send.stack_work.push_back(
              sg4::this_actor::exec_init(stack_seconds * kWorkUnitsPerSecond)->set_host(cpu));
          send.stack_work.back()->start();
        }
      }
    }
    return send;
  }
  void finish_send(PostedSend& send) {
    if (!send.transfer) return;
    send.transfer->wait();
    for (const sg4::ExecPtr& work : send.stack_work) work->wait();
    ++send.outgoing->sends_finished;
    if (cluster_.nic_cpu_seconds_per_byte > 0) rank_state(send.to).changed->notify_all();
  }

  // A plan's send (PBG's trainers and servers): message `number` to its peer, which starts once
  // the peer has posted its receive (rendezvous) and is done once transferred. Waiting is the time
  // until the peer posted.
  StepCost send_message(int rank, const Op& op, std::int64_t number) {
    const double start = sg4::Engine::get_clock();
    // A throttled send (PBG's parameter client) waits out its interval since the last one.
    if (op.throttle_seconds > 0) {
      RankState& state = rank_state(rank);
      if (state.last_throttled_send_seconds >= 0) {
        const double due = state.last_throttled_send_seconds + op.throttle_seconds;
        if (due > start) sg4::this_actor::sleep_until(due);
      }
      state.last_throttled_send_seconds = sg4::Engine::get_clock();
    }
    move_to(endpoint(rank, op.traffic));
    Channel& outgoing = message_channel(rank, op.peer, number);
    // Until the peer posted, and then for its core where a core-mate computes: all waiting.
    static_cast<void>(wait_until_sendable(rank, op.peer, outgoing));
    const double waiting = sg4::Engine::get_clock() - start;
    // A send's bytes are all to its peer (check_messages).
    PostedSend send = post_send(outgoing, rank, op.traffic, op.peer, op.total_bytes_to());
    finish_send(send);
    return {sg4::Engine::get_clock() - start, waiting};
  }

  // A plan's receive: message `number` from its peer, done once it has arrived. Waiting is the
  // time until the peer started sending it.
  StepCost receive_message(int rank, const Op& op, std::int64_t number) {
    const double start = sg4::Engine::get_clock();
    sg4::Host* here = endpoint(rank, op.traffic);
    move_to(here);
    PostedReceive receive =
        post_receive(message_channel(op.peer, rank, number), op.traffic, op.peer, here);
    const ReceiveEnd end = finish_receive(rank, receive);
    const double core_waiting_seconds = end.released ? wait_for_core(rank) : 0;
    const double finish = sg4::Engine::get_clock();
    const double waiting = std::max(end.peer_started - start, 0.0) + core_waiting_seconds;
    return {finish - start, std::min(waiting, finish - start)};
  }

  // A plan's all-to-all: blocks of pairwise steps, each block's receives and sends posted at once
  // (collective_schedule.hpp), as the engines post them.
  StepCost posted_in_blocks(int rank, Traffic traffic, const std::vector<std::int64_t>& bytes_to) {
    StepCost total;
    for (const StepBlock& block : all_to_all_blocks(num_ranks_, options_.all_to_all_block_steps)) {
      total += steps_at_once(rank, traffic, bytes_to, block);
    }
    return total;
  }
  // One block: a send starts once its receiver has posted (rendezvous), whatever the block's other
  // peers do. Waiting is the time until the last peer started sending to this rank.
  StepCost steps_at_once(int rank, Traffic traffic, const std::vector<std::int64_t>& bytes_to,
                         StepBlock block) {
    const double start = sg4::Engine::get_clock();
    sg4::Host* here = endpoint(rank, traffic);
    const bool hosts = between_hosts(traffic);
    move_to(here);
    std::vector<PostedReceive> receives;
    std::vector<int> send_to;
    for (int s = block.first; s < block.last; ++s) {
      const PairwiseStep step = pairwise_step(rank, num_ranks_, s);
      receives.push_back(
          post_receive(channel(step.receive_from, rank, hosts), traffic, step.receive_from, here));
      send_to.push_back(step.send_to);
    }
    // Sends go out as their receivers post; the rank waits only when none of the rest can.
    std::vector<PostedSend> sends;
    bool waited = false;
    RankState& self = rank_state(rank);
    KillableLock lock(*self.mutex);
    while (!send_to.empty()) {
      const auto ready = std::stable_partition(send_to.begin(), send_to.end(), [&](int peer) {
        return !channel(rank, peer, hosts).receiver_ready() || !gates_open_for(rank, rank, peer);
      });
      if (ready == send_to.end()) {
        self.changed->wait(lock.held());
        waited = true;
        continue;
      }
      const std::vector<int> now(ready, send_to.end());
      send_to.erase(ready, send_to.end());
      for (const int peer : now) {
        // A gate may have closed while the sends before it were posted.
        if (!gates_open_for(rank, rank, peer)) {
          send_to.push_back(peer);
          continue;
        }
        sends.push_back(post_send(channel(rank, peer, hosts), rank, traffic, peer,
                                  bytes_to[static_cast<std::size_t>(peer)]));
      }
    }
    lock.unlock();
    double core_waiting_seconds = waited ? wait_for_core(rank) : 0;
    for (PostedSend& send : sends) finish_send(send);
    double last_peer_started = start;
    bool released = false;
    for (PostedReceive& receive : receives) {
      const ReceiveEnd end = finish_receive(rank, receive);
      last_peer_started = std::max(last_peer_started, end.peer_started);
      released |= end.released;
    }
    if (released) core_waiting_seconds += wait_for_core(rank);
    const double end = sg4::Engine::get_clock();
    const double waiting = (last_peer_started - start) + core_waiting_seconds;
    return {end - start, std::min(waiting, end - start)};
  }

  StepCost pairwise(int rank, Traffic traffic, const std::vector<std::int64_t>& bytes_to,
                    bool sampling = false, int ranks_per_machine = 0) {
    StepCost total;
    for (const PairwiseStep& step : exchange_steps(rank, num_ranks_, ranks_per_machine)) {
      total += exchange_step(rank, traffic, step.send_to,
                             bytes_to[static_cast<std::size_t>(step.send_to)], step.receive_from,
                             sampling);
    }
    return total;
  }

  StepCost all_reduce(const Plan& plan, const Op& op) {
    StepCost total;
    const std::int64_t elements = local_elements(plan.parameters, op.parameters);
    for (const AllReduceStep& step :
         all_reduce_steps(plan.rank, num_ranks_, op.ranks_per_machine, elements)) {
      total += exchange_step(plan.rank, op.traffic, step.send_to, kFloatBytes * step.send.size(),
                             step.receive_from);
    }
    return total;
  }

  // Sampling over partitioned structure, hop by hop: requests to the owners of remote frontier
  // nodes, sampling (own frontier and peers' requests) on the sampling host, replies.
  StepCost sample_over_network(int rank, const Op& op, double compute_factor) {
    StepCost total;
    const std::optional<OpCost>& cost =
        (cluster_.runs_on_host(OpKind::sample) ? cluster_.host_cost_model
                                               : cluster_.device_cost_model)
            .cost(OpKind::sample);
    for (const SamplingHop& hop : op.sampling_hops) {
      const StepCost requests =
          pairwise(rank, Traffic::structure, hop.request_bytes_to, /*sampling=*/true);
      OpWork work;
      work.sampled_edges =
          static_cast<double>(hop.edges_sampled_locally + hop.edges_sampled_for_peers);
      compute(rank, OpKind::sample, cost->seconds(work) * compute_factor, /*in_thread=*/true);
      const StepCost replies =
          pairwise(rank, Traffic::structure, hop.reply_bytes_to, /*sampling=*/true);
      total.seconds += requests.seconds + replies.seconds;
      total.waiting_seconds += requests.waiting_seconds + replies.waiting_seconds;
    }
    // Planning follows the last hop, on the same host.
    OpWork planning;
    planning.planned_nodes = static_cast<double>(op.planned_nodes);
    if (op.planned_nodes > 0) {
      compute(rank, OpKind::sample, cost->work_seconds(planning) * compute_factor,
              /*in_thread=*/true);
    }
    return total;
  }

  const ClusterSpec& cluster_;
  const std::vector<std::vector<Plan>>& iterations_;
  ReplayOptions options_;
  Platform platform_;
  int num_ranks_;
  std::vector<RankState> ranks_;
  std::vector<SharedCore> cores_;  // when shared cores time slice
  // Where SimGrid writes each received message's payload (the sender's channel), unread: a
  // receive's own field moved with it (returned by value, into a vector) and SimGrid wrote
  // through the stale address when the transfer ended, into a waiting actor's stack.
  void* discarded_payload_ = nullptr;
  std::vector<double> iteration_end_;
  std::unordered_map<std::int64_t, Channel> channels_;
  std::map<std::pair<std::int64_t, std::int64_t>, Channel> messages_;  // by pair, number
  std::vector<SimulatedOp> trace_;
  std::int64_t communications_ = 0;
  std::vector<char> features_on_device_;  // per rank
  // Per rank, ClusterSpec::compute_factor of its ops on its device and on its machine's CPU.
  std::vector<double> device_compute_factors_;
  std::vector<double> host_compute_factors_;
  std::vector<PartFailure> failed_;       // the cluster's failures that happened, in order
  std::optional<ReplayFailure> failure_;  // where the ranks stood when the job was stopped
};

}  // namespace

nlohmann::json ReplayFailure::to_json() const {
  nlohmann::json failures = nlohmann::json::array();
  for (const PartFailure& failure : applied) {
    failures.push_back({{"part", failure.part}, {"at_seconds", failure.at_seconds}});
  }
  nlohmann::json stopped = nlohmann::json::array();
  for (const StoppedRank& rank : ranks) {
    nlohmann::json entry = {{"rank", rank.rank},
                            {"state", rank.state},
                            {"last_op_end_seconds", rank.last_op_end_seconds}};
    if (!rank.next_op.empty()) {
      entry["next_op"] = rank.next_op;
      entry["next_op_iteration"] = rank.next_op_iteration;
    }
    stopped.push_back(std::move(entry));
  }
  return {{"failures", std::move(failures)},
          {"completed", completed},
          {"stopped_seconds", stopped_seconds},
          {"iterations_completed", iterations_completed},
          {"ranks", std::move(stopped)}};
}

std::string_view simulated_part_name(std::size_t part) {
  return part == kWaiting ? std::string_view("waiting")
                          : to_string(static_cast<TimeCategory>(part));
}

std::vector<char> ranks_keeping_features(const ClusterSpec& cluster, const ReplayOptions& options) {
  std::vector<char> keeps(static_cast<std::size_t>(cluster.num_ranks()), 0);
  for (std::size_t r = 0; r < keeps.size() && r < options.feature_bytes.size(); ++r) {
    keeps[r] = cluster.keeps_features(options.feature_bytes[r]) ? 1 : 0;
  }
  return keeps;
}

std::vector<DeviceCopy> device_copies(const Plan& plan, bool features_on_device) {
  std::vector<DeviceCopy> copies;
  // Per tensor, its bytes in host memory; -1: all of it (tensors no op wrote: the prologue's).
  std::vector<std::int64_t> on_host(features_on_device ? plan.tensors.size() : 0, -1);
  const auto host_bytes = [&](int t) {
    const std::int64_t bytes = on_host[static_cast<std::size_t>(t)];
    return bytes < 0 ? plan.tensors[static_cast<std::size_t>(t)].bytes() : bytes;
  };
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    const Op& op = plan.ops[j];
    if (op.kind == OpKind::copy_to_device) {
      copies.push_back({j, features_on_device && op.has_input(Input::tensor)
                               ? std::min(op.memory_bytes, host_bytes(op.input(Input::tensor)))
                               : op.memory_bytes});
    }
    if (!features_on_device) continue;
    std::int64_t written = -1;
    if (op.kind == OpKind::gather_features) written = 0;
    if (op.kind == OpKind::scatter_rows) {
      written = 0;
      for (const int t : op.inputs) {
        if (t >= 0 && plan.tensors[static_cast<std::size_t>(t)].kind != TensorKind::index) {
          written += host_bytes(t);
        }
      }
    }
    for (const int t : op.outputs) {
      if (t >= 0) on_host[static_cast<std::size_t>(t)] = written;
    }
  }
  return copies;
}

void drop_index_data(Plan& plan) {
  for (TensorSpec& tensor : plan.tensors) {
    tensor.index.reset();
    tensor.block.reset();
  }
}

namespace {

// Every op the replay will cost, costed once before SimGrid starts: a cost model without a rate
// for work some op has (a rate of 0) is a configuration error naming the field, not an
// exception inside a simulated actor.
void check_costs(const ClusterSpec& cluster, const std::vector<std::vector<Plan>>& iterations,
                 const ReplayOptions& options, const std::vector<char>& keeps_features) {
  for (const std::vector<Plan>& plans : iterations) {
    for (const Plan& plan : plans) {
      // A plan for a rank the cluster lacks is the replay's error to report, with its context.
      const auto r = static_cast<std::size_t>(plan.rank);
      const bool on_device = r < keeps_features.size() && keeps_features[r] != 0;
      for (const Op& op : plan.ops) {
        if (!is_costed(op.kind) || options.uses_measured(op)) continue;
        static_cast<void>(cluster.compute_seconds(op, on_device));
      }
    }
  }
}

// What one side of a message says it is.
struct MessageSide {
  std::int64_t bytes = 0;
  Traffic traffic = Traffic::control;
  std::string label;
};

std::string describe(const MessageSide& side) {
  return "'" + side.label + "' (" + std::to_string(side.bytes) + " bytes of " +
         std::string(to_string(side.traffic)) + ")";
}

// Every send has its receive, and the two agree on the message (the k-th send from a to b and
// the k-th receive on b from a, over the iterations in order): checked before SimGrid starts, as
// a send without its receive would leave both ranks waiting forever.
void check_messages(const ClusterSpec& cluster, const std::vector<std::vector<Plan>>& iterations) {
  std::map<std::pair<int, int>, std::vector<MessageSide>> sent;
  std::map<std::pair<int, int>, std::vector<MessageSide>> received;
  for (const std::vector<Plan>& plans : iterations) {
    for (const Plan& plan : plans) {
      for (const Op& op : plan.ops) {
        if (!is_point_to_point(op.kind)) continue;
        if (op.peer < 0 || op.peer >= cluster.num_ranks()) {
          throw Error("op '" + op.label + "' of rank " + std::to_string(plan.rank) + " has peer " +
                      std::to_string(op.peer) + ", not one of the cluster's " +
                      std::to_string(cluster.num_ranks()) + " ranks");
        }
        const bool sends = op.kind == OpKind::send;
        const std::vector<std::int64_t>& moved = sends ? op.bytes_to : op.bytes_from;
        const std::int64_t bytes = sends ? op.total_bytes_to() : op.total_bytes_from();
        const auto peer = static_cast<std::size_t>(op.peer);
        if (peer >= moved.size() || moved[peer] != bytes) {
          throw Error("op '" + op.label + "' of rank " + std::to_string(plan.rank) +
                      " moves bytes other than " + (sends ? "to" : "from") + " its peer");
        }
        (sends ? sent[{plan.rank, op.peer}] : received[{op.peer, plan.rank}])
            .push_back({bytes, op.traffic, op.label});
      }
    }
  }
  const std::vector<MessageSide> none;
  for (const auto& [pair, sends] : sent) {
    const auto found = received.find(pair);
    const std::vector<MessageSide>& receives = found == received.end() ? none : found->second;
    const std::string between =
        " from rank " + std::to_string(pair.first) + " to rank " + std::to_string(pair.second);
    if (sends.size() != receives.size()) {
      throw Error(std::to_string(sends.size()) + " sends but " + std::to_string(receives.size()) +
                  " receives" + between);
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      if (sends[k].bytes != receives[k].bytes || sends[k].traffic != receives[k].traffic) {
        throw Error("message " + std::to_string(k) + between + ": the send " + describe(sends[k]) +
                    ", the receive " + describe(receives[k]));
      }
    }
  }
  for (const auto& [pair, receives] : received) {
    if (!sent.contains(pair)) {
      throw Error(std::to_string(receives.size()) + " receives but no send from rank " +
                  std::to_string(pair.first) + " to rank " + std::to_string(pair.second));
    }
  }
}

}  // namespace

ReplayResult replay_plans(const ClusterSpec& cluster,
                          const std::vector<std::vector<Plan>>& iterations,
                          const ReplayOptions& options) {
  std::vector<char> keeps_features = ranks_keeping_features(cluster, options);
  check_costs(cluster, iterations, options, keeps_features);
  check_messages(cluster, iterations);
  int argc = 1;
  char program[] = "gnnbed-simulate";
  char* argv[] = {program, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:warning");
  nlohmann::json settings = configure_network_model(cluster);
  Replay replay(cluster, iterations, options, std::move(keeps_features), build_platform(cluster));
  replay.start();
  engine.run();
  ReplayResult result = replay.result();
  result.simgrid_config = std::move(settings);
  return result;
}

}  // namespace gnnbed
