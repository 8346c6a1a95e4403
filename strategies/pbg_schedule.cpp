// PBG's distributed epoch, decided ahead (pbg_schedule.hpp): an event replay of the lock server.
#include "strategies/pbg_schedule.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// `a` without the partitions of `b`.
std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (const int p : a) {
    if (std::find(b.begin(), b.end(), p) == b.end()) out.push_back(p);
  }
  return out;
}

struct Replay {
  LockServer server;
  const std::function<double(const Bucket&)>& duration;
  BucketSchedule schedule;
  std::vector<std::optional<double>> busy_until;  // by trainer; empty when waiting
  std::vector<double> waiting_since;

  // `trainer` asks at time `now`; true when granted.
  bool ask(int trainer, double now) {
    auto& done = schedule.by_trainer[static_cast<std::size_t>(trainer)];
    const std::optional<Bucket> previous =
        done.empty() ? std::nullopt : std::optional<Bucket>(done.back().bucket);
    const std::optional<Bucket> granted = server.acquire(trainer, previous);
    if (!granted) return false;
    const double time = duration(*granted);
    if (!(time >= 0)) {
      throw Error("PBG schedule: bucket (" + std::to_string(granted->lhs) + ", " +
                  std::to_string(granted->rhs) + ") has duration " + std::to_string(time));
    }
    ScheduledBucket entry;
    entry.bucket = *granted;
    entry.start = now;
    entry.end = now + time;
    // A trainer keeps its previous bucket's partitions only when it is granted the next at once:
    // one that waits has released them to trainers that may take them, so it gave them back.
    const bool at_once = !done.empty() && done.back().end == now;
    const std::vector<int> before = previous ? previous->partitions() : std::vector<int>{};
    const std::vector<int> kept = at_once ? before : std::vector<int>{};
    entry.fetched = minus(granted->partitions(), kept);
    entry.released = minus(before, at_once ? granted->partitions() : std::vector<int>{});
    done.push_back(entry);
    schedule.idle += now - waiting_since[static_cast<std::size_t>(trainer)];
    busy_until[static_cast<std::size_t>(trainer)] = entry.end;
    return true;
  }

  // Every waiting trainer asks, `first` before the others, then in index order.
  void waiting_ask(int first, double now) {
    const auto trainers = static_cast<int>(busy_until.size());
    for (int k = 0; k < trainers && server.remaining() > 0; ++k) {
      const int t = (first + k) % trainers;
      if (!busy_until[static_cast<std::size_t>(t)]) ask(t, now);
    }
  }
};

}  // namespace

BucketSchedule schedule_epoch(int num_partitions, int num_trainers,
                              const std::function<double(const Bucket&)>& duration) {
  Replay replay{LockServer(num_partitions, num_trainers), duration, {}, {}, {}};
  replay.schedule.by_trainer.resize(static_cast<std::size_t>(num_trainers));
  replay.busy_until.resize(static_cast<std::size_t>(num_trainers));
  replay.waiting_since.assign(static_cast<std::size_t>(num_trainers), 0.0);
  replay.waiting_ask(0, 0.0);
  double now = 0;
  while (true) {
    // The next release: earliest end, lowest trainer on ties.
    int next = -1;
    for (int t = 0; t < num_trainers; ++t) {
      const auto& until = replay.busy_until[static_cast<std::size_t>(t)];
      if (until && (next < 0 || *until < *replay.busy_until[static_cast<std::size_t>(next)])) {
        next = t;
      }
    }
    if (next < 0) break;  // nobody busy: every bucket granted and trained
    now = *replay.busy_until[static_cast<std::size_t>(next)];
    replay.server.release(next);
    replay.busy_until[static_cast<std::size_t>(next)].reset();
    replay.waiting_since[static_cast<std::size_t>(next)] = now;
    replay.waiting_ask(next, now);
  }
  replay.schedule.makespan = now;
  // Trainers left waiting once the last bucket was granted idle until the epoch ends.
  for (int t = 0; t < num_trainers; ++t) {
    const auto& done = replay.schedule.by_trainer[static_cast<std::size_t>(t)];
    const double last_end = done.empty() ? 0.0 : done.back().end;
    replay.schedule.idle += now - std::max(last_end, 0.0);
  }
  return replay.schedule;
}

}  // namespace gnnbed
