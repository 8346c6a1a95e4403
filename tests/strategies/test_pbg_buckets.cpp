// PBG's bucket orders and lock server: every bucket once per epoch, and never two trainers on
// buckets that share a partition.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "strategies/pbg_buckets.hpp"
#include "strategies/pbg_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

std::set<std::pair<int, int>> as_set(const std::vector<Bucket>& buckets) {
  std::set<std::pair<int, int>> set;
  for (const Bucket& b : buckets) set.insert({b.lhs, b.rhs});
  return set;
}

TEST(BucketOrder, EveryOrderVisitsEveryBucketOnce) {
  for (const std::string& order : bucket_order_names()) {
    for (const int p : {1, 2, 5}) {
      const std::vector<Bucket> buckets = single_machine_bucket_order(p, order, 3);
      EXPECT_EQ(buckets.size(), static_cast<std::size_t>(p * p)) << order;
      EXPECT_EQ(as_set(buckets).size(), static_cast<std::size_t>(p * p)) << order;
    }
  }
  EXPECT_THROW(single_machine_bucket_order(2, "spiral", 1), ConfigError);
}

TEST(BucketOrder, InsideOutStartsWithTheInnermostLayerAndEndsWithTheOutermost) {
  const std::vector<Bucket> buckets = single_machine_bucket_order(4, "inside_out", 8);
  EXPECT_EQ(buckets.front(), (Bucket{3, 3}));
  // The last layer holds the 7 buckets with partition 0.
  for (std::size_t i = buckets.size() - 7; i < buckets.size(); ++i) {
    EXPECT_TRUE(buckets[i].lhs == 0 || buckets[i].rhs == 0);
  }
  const std::vector<Bucket> outside = single_machine_bucket_order(4, "outside_in", 8);
  EXPECT_TRUE(outside.front().lhs == 0 || outside.front().rhs == 0);
  EXPECT_EQ(outside.back(), (Bucket{3, 3}));
}

TEST(BucketOrder, AffinityFollowsEachBucketWithOneSharingAPartitionWhileAnyRemains) {
  const std::vector<Bucket> buckets = single_machine_bucket_order(5, "affinity", 4);
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    const bool any_shared_remains =
        std::any_of(buckets.begin() + static_cast<std::ptrdiff_t>(i), buckets.end(),
                    [&](const Bucket& b) { return b.shared_partitions(buckets[i - 1]) > 0; });
    if (any_shared_remains) {
      EXPECT_GT(buckets[i].shared_partitions(buckets[i - 1]), 0) << i;
    }
  }
}

// Trainers ask, train and release in a seeded random interleaving for several epochs.
TEST(LockServer, NeverGrantsBucketsThatShareAPartitionAndGrantsEachOnce) {
  for (const auto& [partitions, trainers] : {std::pair{4, 2}, {8, 4}, {5, 3}, {16, 8}}) {
    LockServer server(partitions, trainers);
    Rng rng(partitions * 100 + trainers);
    std::vector<std::optional<Bucket>> previous(static_cast<std::size_t>(trainers));
    for (int epoch = 0; epoch < 3; ++epoch) {
      server.new_epoch();
      std::vector<Bucket> granted;
      while (server.remaining() > 0) {
        const int t = static_cast<int>(rng.below(static_cast<std::uint64_t>(trainers)));
        if (server.held_by(t)) {
          server.release(t);
          continue;
        }
        const std::optional<Bucket> bucket =
            server.acquire(t, previous[static_cast<std::size_t>(t)]);
        if (!bucket) continue;
        previous[static_cast<std::size_t>(t)] = bucket;
        granted.push_back(*bucket);
        for (int other = 0; other < trainers; ++other) {
          if (other == t || !server.held_by(other)) continue;
          EXPECT_EQ(bucket->shared_partitions(*server.held_by(other)), 0)
              << "trainers " << t << " and " << other;
        }
      }
      for (int t = 0; t < trainers; ++t) {
        if (server.held_by(t)) server.release(t);
      }
      EXPECT_EQ(as_set(granted).size(), static_cast<std::size_t>(partitions * partitions));
      EXPECT_EQ(granted.size(), static_cast<std::size_t>(partitions * partitions));
    }
  }
}

TEST(LockServer, PrefersTheTrainersPreviousLhsThenRhs) {
  LockServer server(4, 2);
  EXPECT_EQ(server.acquire(0, std::nullopt), (Bucket{0, 0}));  // lexicographic first
  server.release(0);
  EXPECT_EQ(server.acquire(0, Bucket{0, 0}), (Bucket{0, 1}));  // same lhs
  EXPECT_EQ(server.acquire(1, std::nullopt), (Bucket{2, 2}));  // partitions 0 and 1 are held
  server.release(1);
  EXPECT_EQ(server.acquire(1, Bucket{2, 2}), (Bucket{2, 3}));
  EXPECT_THROW(server.acquire(1, std::nullopt), Error);  // it holds one already
}

// Bucket (l, r) takes a time that varies with l and r, so trainers finish out of step.
double uneven(const Bucket& b) { return 1.0 + 0.37 * b.lhs + 0.11 * ((b.rhs * 7) % 5); }

TEST(BucketSchedule, TrainsEveryBucketOnceAndNeverOverlapsTwoThatShareAPartition) {
  for (const auto& [partitions, trainers] : {std::pair{4, 2}, {8, 4}, {6, 4}, {16, 8}, {3, 1}}) {
    const BucketSchedule schedule = schedule_epoch(partitions, trainers, uneven);
    std::vector<std::pair<int, ScheduledBucket>> all;
    for (int t = 0; t < trainers; ++t) {
      double previous_end = 0;
      for (const ScheduledBucket& s : schedule.by_trainer[static_cast<std::size_t>(t)]) {
        EXPECT_GE(s.start, previous_end);  // one bucket at a time
        EXPECT_NEAR(s.end - s.start, uneven(s.bucket), 1e-9);
        previous_end = s.end;
        all.emplace_back(t, s);
      }
    }
    ASSERT_EQ(all.size(), static_cast<std::size_t>(partitions * partitions));
    std::set<std::pair<int, int>> distinct;
    for (const auto& [t, s] : all) distinct.insert({s.bucket.lhs, s.bucket.rhs});
    EXPECT_EQ(distinct.size(), all.size());
    for (const auto& [t, a] : all) {
      for (const auto& [u, b] : all) {
        if (t == u || a.bucket.shared_partitions(b.bucket) == 0) continue;
        EXPECT_TRUE(a.end <= b.start || b.end <= a.start)
            << "trainers " << t << " and " << u << " overlap on a shared partition";
      }
    }
  }
}

TEST(BucketSchedule, WorkPlusIdleFillsEveryTrainersEpochAndSwapsFollowThePartitions) {
  const int partitions = 8;
  const int trainers = 4;
  const BucketSchedule schedule = schedule_epoch(partitions, trainers, uneven);
  double work = 0;
  for (const auto& buckets : schedule.by_trainer) {
    std::vector<int> held;
    for (const ScheduledBucket& s : buckets) {
      work += s.end - s.start;
      for (const int p : s.released) {
        EXPECT_NE(std::find(held.begin(), held.end(), p), held.end());
        held.erase(std::find(held.begin(), held.end(), p));
      }
      held.insert(held.end(), s.fetched.begin(), s.fetched.end());
      std::vector<int> needed{s.bucket.lhs};
      if (s.bucket.rhs != s.bucket.lhs) needed.push_back(s.bucket.rhs);
      std::sort(held.begin(), held.end());
      std::sort(needed.begin(), needed.end());
      EXPECT_EQ(held, needed);
    }
  }
  EXPECT_NEAR(work + schedule.idle, trainers * schedule.makespan, 1e-9);
  EXPECT_GE(schedule.makespan, work / trainers);
  // Deterministic: the same inputs give the same schedule.
  const BucketSchedule again = schedule_epoch(partitions, trainers, uneven);
  EXPECT_EQ(again.makespan, schedule.makespan);
}

}  // namespace
}  // namespace gnnbed
