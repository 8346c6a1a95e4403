#pragma once
// Which bucket PyTorch-BigGraph trains when: the single-machine bucket orders, and the lock server
// that hands buckets to trainers in distributed mode so that no two trainers ever hold the same
// entity partition.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {

// The bucket orders PBG offers one trainer for an epoch over all P x P buckets:
// "inside_out" (PBG's default) and "outside_in": L-shaped layers of the buckets whose smaller
// partition is i, from the innermost (largest i) or the outermost, each layer in random order
// with a bucket and its transpose adjacent; "random"; "affinity": each next bucket shares as many
// partitions with the previous one as any remaining bucket does (its transpose first), ties
// broken at random. Every random choice is drawn from `seed`.
std::vector<Bucket> single_machine_bucket_order(int num_partitions, const std::string& order,
                                                std::uint64_t seed);

// The bucket orders single_machine_bucket_order accepts.
const std::vector<std::string>& bucket_order_names();

// PBG's lock server (distributed mode, on rank 0), one epoch at a time. A trainer asks for a
// bucket, trains it, releases it and asks again. The server grants the first bucket, in
// lexicographic order stably sorted to prefer the trainer's previous bucket's lhs partition (weight
// 2), then its rhs partition (weight 1), that is not trained yet this epoch and whose partitions no
// other trainer holds (a partition locked as lhs is locked as rhs too). A trainer may be refused
// while buckets remain (all free ones conflict): it asks again after others release.
class LockServer {
 public:
  LockServer(int num_partitions, int num_trainers);

  // Starts an epoch: every bucket untrained, none held.
  void new_epoch();
  // The bucket granted to `trainer`, or nothing. The trainer must hold none.
  std::optional<Bucket> acquire(int trainer, std::optional<Bucket> previous);
  // The trainer's bucket is trained: its partitions are free again.
  void release(int trainer);

  // Buckets not granted yet this epoch.
  int remaining() const { return remaining_; }
  std::optional<Bucket> held_by(int trainer) const {
    return held_[static_cast<std::size_t>(trainer)];
  }

 private:
  bool locked_by_other(int partition, int trainer) const;

  int num_partitions_;
  std::vector<std::optional<Bucket>> held_;  // by trainer
  std::vector<bool> trained_;                // by bucket index lhs * P + rhs
  int remaining_ = 0;
};

}  // namespace gnnbed
