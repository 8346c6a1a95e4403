#pragma once
// A seeded pseudo-random permutation of [0, n), computed rather than stored: a 4-round Feistel
// network on the smallest even number of bits that covers n, cycle-walked back into range. R-MAT
// puts its hubs at small ids; permuting spreads them over the id range, so that contiguous-range
// partitions and caches see a realistic mix. A stored Fisher-Yates table cost two cache misses
// per candidate edge, which dominated generation time; and a graph computed on demand needs the
// inverse too (which R-MAT row is node v?), which a Feistel network gives for free.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "workloads/common/random.hpp"

namespace gnnbed {

class IdPermutation {
 public:
  IdPermutation(std::int64_t num_nodes, std::uint64_t seed)
      : num_nodes_(static_cast<std::uint64_t>(num_nodes)),
        half_bits_(std::max(1, (static_cast<int>(std::bit_width(static_cast<std::uint64_t>(
                                    std::max<std::int64_t>(num_nodes - 1, 0)))) +
                                1) /
                                   2)),
        half_mask_((std::uint64_t{1} << half_bits_) - 1) {
    for (std::size_t r = 0; r < kRounds; ++r) round_keys_[r] = hash_mix(seed, r);
  }

  // Cycle walking: the network permutes [0, 2^(2 half_bits)); applying it until the value lands
  // below n permutes [0, n), and walking the inverse network the same way inverts that.
  std::uint64_t operator()(std::uint64_t id) const {
    do {
      id = forward(id);
    } while (id >= num_nodes_);
    return id;
  }
  std::uint64_t inverse(std::uint64_t id) const {
    do {
      id = backward(id);
    } while (id >= num_nodes_);
    return id;
  }

 private:
  static constexpr std::size_t kRounds = 4;

  // Multiplicative hashing: the top bits of the product depend on every bit of `half`.
  std::uint64_t round_function(std::uint64_t half, std::uint64_t key) const {
    return ((half ^ key) * 0x9e3779b97f4a7c15ULL) >> (64 - half_bits_);
  }

  std::uint64_t forward(std::uint64_t id) const {
    std::uint64_t left = id >> half_bits_;
    std::uint64_t right = id & half_mask_;
    for (const std::uint64_t key : round_keys_) {
      const std::uint64_t next_right = left ^ round_function(right, key);
      left = right;
      right = next_right;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t backward(std::uint64_t id) const {
    std::uint64_t left = id >> half_bits_;
    std::uint64_t right = id & half_mask_;
    for (std::size_t r = kRounds; r-- > 0;) {
      const std::uint64_t previous_left = right ^ round_function(left, round_keys_[r]);
      right = left;
      left = previous_left;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t num_nodes_;
  int half_bits_;
  std::uint64_t half_mask_;
  std::uint64_t round_keys_[kRounds] = {};
};

}  // namespace gnnbed
