#pragma once
// PBG's distributed epoch, decided ahead: the lock server's rule (pbg_buckets.hpp) replayed
// against how long each bucket takes to train, so that every engine runs, and the simulator
// replays, the same assignment of buckets to trainers. A trainer asks for a bucket whenever it is
// free; one refused (every free bucket conflicts with one held) asks again at the next release.
// Decided from modelled durations, the order is what the real lock server would grant when
// buckets take those times; it is deterministic, which a run under a live lock server is not.
#include <functional>
#include <vector>

#include "strategies/pbg_buckets.hpp"

namespace gnnbed {

struct ScheduledBucket {
  Bucket bucket;
  double start = 0;  // in the units of the durations
  double end = 0;
  // The partitions the trainer must fetch for this bucket (not held for its previous one), and
  // those it gives back when its previous bucket ends (held for the previous one, not needed
  // now). A trainer keeps partitions only from a bucket to one granted as the other ends: one
  // that had to wait gave back all of its previous bucket's partitions, which others may have
  // trained since.
  std::vector<int> fetched;
  std::vector<int> released;
};

struct BucketSchedule {
  std::vector<std::vector<ScheduledBucket>> by_trainer;  // each trainer's buckets in order
  double makespan = 0;
  // Time a trainer spent waiting for a grant, summed over trainers.
  double idle = 0;
};

// One epoch for `num_trainers` over `num_partitions` partitions; `duration(bucket)` >= 0.
BucketSchedule schedule_epoch(int num_partitions, int num_trainers,
                              const std::function<double(const Bucket&)>& duration);

}  // namespace gnnbed
