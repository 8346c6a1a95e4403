// The collective schedules, replayed symbolically for 1 to 9 ranks: pairwise all-to-all reaches
// every peer once, ring all-gather delivers every block everywhere, ring all-reduce adds every
// contribution exactly once and sends 2 (n - 1) / n of the buffer per rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "strategies/plan/collective_schedule.hpp"

namespace gnnbed {
namespace {

constexpr int kMaxRanks = 9;

std::size_t index(int i) { return static_cast<std::size_t>(i); }

std::vector<std::int64_t> element_counts(int n) {
  return {0, 1, 2, n - 1, n, n + 1, 7, 100, 1000003, 1000000LL * n};
}

TEST(CollectiveSchedule, SmallHandWorkedCases) {
  EXPECT_EQ(ring_peers(0, 3).next, 1);
  EXPECT_EQ(ring_peers(0, 3).previous, 2);
  EXPECT_EQ(pairwise_step(0, 3, 1).send_to, 1);
  EXPECT_EQ(pairwise_step(0, 3, 1).receive_from, 2);
  EXPECT_EQ(pairwise_step(2, 4, 3).send_to, 1);
  EXPECT_EQ(pairwise_step(2, 4, 3).receive_from, 3);
  EXPECT_EQ(ring_gather_step(0, 3, 0).send_block, 0);
  EXPECT_EQ(ring_gather_step(0, 3, 0).receive_block, 2);
  EXPECT_EQ(ring_gather_step(0, 3, 1).send_block, 2);
  EXPECT_EQ(ring_gather_step(0, 3, 1).receive_block, 1);
  EXPECT_EQ(ring_chunk(10, 3, 0).begin, 0);
  EXPECT_EQ(ring_chunk(10, 3, 0).end, 3);
  EXPECT_EQ(ring_chunk(10, 3, 1).end, 6);
  EXPECT_EQ(ring_chunk(10, 3, 2).end, 10);
  // 4 ranks, 8 elements: every rank sends 6 chunks of 2.
  EXPECT_EQ(ring_all_reduce_elements_sent(1, 4, 8), 12);
  EXPECT_EQ(ring_all_reduce_elements_received(1, 4, 8), 12);
  EXPECT_EQ(ring_all_reduce_elements_sent(0, 1, 8), 0);
  // Rank 0 of 3 forwards its own block then rank 2's; it receives 2's then 1's.
  EXPECT_EQ(ring_all_gather_bytes_sent(0, {5, 7, 11}), 5 + 11);
  EXPECT_EQ(ring_all_gather_bytes_received(0, {5, 7, 11}), 11 + 7);
}

TEST(CollectiveSchedule, RingPeersAreInverse) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (int r = 0; r < n; ++r) {
      const RingPeers peers = ring_peers(r, n);
      ASSERT_GE(peers.next, 0);
      ASSERT_LT(peers.next, n);
      EXPECT_EQ(ring_peers(peers.next, n).previous, r) << "n " << n << " rank " << r;
    }
  }
}

TEST(CollectiveSchedule, PairwiseStepsReachEveryPeerExactlyOnceAndMatchUp) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (int r = 0; r < n; ++r) {
      std::vector<int> sent_to(index(n), 0);
      std::vector<int> received_from(index(n), 0);
      for (int s = 1; s < n; ++s) {
        const PairwiseStep step = pairwise_step(r, n, s);
        ASSERT_GE(step.send_to, 0);
        ASSERT_LT(step.send_to, n);
        ASSERT_GE(step.receive_from, 0);
        ASSERT_LT(step.receive_from, n);
        ++sent_to[index(step.send_to)];
        ++received_from[index(step.receive_from)];
        // The peer expects this rank's message at the same step.
        EXPECT_EQ(pairwise_step(step.send_to, n, s).receive_from, r)
            << "n " << n << " rank " << r << " step " << s;
      }
      for (int q = 0; q < n; ++q) {
        EXPECT_EQ(sent_to[index(q)], q == r ? 0 : 1) << "n " << n << " rank " << r << " to " << q;
        EXPECT_EQ(received_from[index(q)], q == r ? 0 : 1)
            << "n " << n << " rank " << r << " from " << q;
      }
    }
  }
}

TEST(CollectiveSchedule, RingAllGatherDeliversEveryBlockToEveryRankOnce) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    // has[r][b]: rank r holds block b.
    std::vector<std::vector<int>> has(index(n), std::vector<int>(index(n), 0));
    for (int r = 0; r < n; ++r) has[index(r)][index(r)] = 1;
    for (int s = 0; s + 1 < n; ++s) {
      std::vector<std::vector<int>> next_has = has;
      for (int r = 0; r < n; ++r) {
        const RingGatherStep step = ring_gather_step(r, n, s);
        const int next = ring_peers(r, n).next;
        EXPECT_EQ(has[index(r)][index(step.send_block)], 1)
            << "n " << n << " rank " << r << " forwards block " << step.send_block
            << " it does not have at step " << s;
        EXPECT_EQ(ring_gather_step(next, n, s).receive_block, step.send_block);
        EXPECT_EQ(has[index(next)][index(step.send_block)], 0) << "block delivered twice";
        next_has[index(next)][index(step.send_block)] = 1;
      }
      has = next_has;
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(std::accumulate(has[index(r)].begin(), has[index(r)].end(), 0), n)
          << "n " << n << " rank " << r;
    }
  }
}

TEST(CollectiveSchedule, RingAllGatherBytesAreEverythingButOneBlock) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    std::vector<std::int64_t> sizes;
    for (int q = 0; q < n; ++q) sizes.push_back(1000 * q + q * q + 3);
    const std::int64_t total = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
    std::int64_t all_sent = 0;
    std::int64_t all_received = 0;
    for (int r = 0; r < n; ++r) {
      // Rank r never forwards its successor's block (the ring ends there) and never receives its
      // own.
      const std::int64_t sent = ring_all_gather_bytes_sent(r, sizes);
      const std::int64_t received = ring_all_gather_bytes_received(r, sizes);
      EXPECT_EQ(sent, n == 1 ? 0 : total - sizes[index(ring_peers(r, n).next)]);
      EXPECT_EQ(received, n == 1 ? 0 : total - sizes[index(r)]);
      all_sent += sent;
      all_received += received;
    }
    EXPECT_EQ(all_sent, all_received);
    EXPECT_EQ(all_sent, (n - 1) * total);
  }
}

TEST(CollectiveSchedule, RingChunksPartitionTheBufferEvenly) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (const std::int64_t num_elements : element_counts(n)) {
      std::int64_t position = 0;
      for (int c = 0; c < n; ++c) {
        const ElementRange range = ring_chunk(num_elements, n, c);
        EXPECT_EQ(range.begin, position) << "n " << n << " elements " << num_elements;
        EXPECT_GE(range.size(), num_elements / n);
        EXPECT_LE(range.size(), num_elements / n + 1);
        position = range.end;
      }
      EXPECT_EQ(position, num_elements) << "n " << n;
    }
  }
}

TEST(CollectiveSchedule, RingAllReduceAddsEveryContributionOnceAndEndsComplete) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    const std::uint32_t everyone = (1U << n) - 1;
    // contributions[r][c]: the ranks whose values rank r's copy of chunk c holds, as a bit set.
    std::vector<std::vector<std::uint32_t>> contributions(index(n),
                                                          std::vector<std::uint32_t>(index(n)));
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) contributions[index(r)][index(c)] = 1U << r;
    }
    for (int s = 0; s + 1 < n; ++s) {
      auto next_contributions = contributions;
      for (int r = 0; r < n; ++r) {
        const RingGatherStep step = ring_reduce_scatter_step(r, n, s);
        const int next = ring_peers(r, n).next;
        ASSERT_EQ(ring_reduce_scatter_step(next, n, s).receive_block, step.send_block);
        const std::uint32_t incoming = contributions[index(r)][index(step.send_block)];
        std::uint32_t& target = next_contributions[index(next)][index(step.send_block)];
        EXPECT_EQ(target & incoming, 0U) << "n " << n << " step " << s << ": counted twice";
        target |= incoming;
      }
      contributions = next_contributions;
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(contributions[index(r)][index(ring_peers(r, n).next)], everyone)
          << "n " << n << ": rank " << r << " does not finish its successor's chunk";
    }
    for (int s = 0; s + 1 < n; ++s) {
      auto next_contributions = contributions;
      for (int r = 0; r < n; ++r) {
        const RingGatherStep step = ring_all_reduce_gather_step(r, n, s);
        const int next = ring_peers(r, n).next;
        ASSERT_EQ(ring_all_reduce_gather_step(next, n, s).receive_block, step.send_block);
        EXPECT_EQ(contributions[index(r)][index(step.send_block)], everyone)
            << "n " << n << " step " << s << ": rank " << r << " forwards an unfinished chunk";
        next_contributions[index(next)][index(step.send_block)] =
            contributions[index(r)][index(step.send_block)];
      }
      contributions = next_contributions;
    }
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        EXPECT_EQ(contributions[index(r)][index(c)], everyone)
            << "n " << n << " rank " << r << " chunk " << c;
      }
    }
  }
}

TEST(CollectiveSchedule, RingAllReduceSendsTwiceNMinusOneOverNOfTheBuffer) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (const std::int64_t num_elements : element_counts(n)) {
      std::int64_t all_sent = 0;
      std::int64_t all_received = 0;
      for (int r = 0; r < n; ++r) {
        const std::int64_t sent = ring_all_reduce_elements_sent(r, n, num_elements);
        all_sent += sent;
        all_received += ring_all_reduce_elements_received(r, n, num_elements);
        // What r sends, its successor receives.
        EXPECT_EQ(ring_all_reduce_elements_received(ring_peers(r, n).next, n, num_elements), sent);
        if (num_elements % n == 0) {
          EXPECT_EQ(sent, 2 * (n - 1) * (num_elements / n));
        }
      }
      EXPECT_EQ(all_sent, 2 * (n - 1) * num_elements) << "n " << n << " elements " << num_elements;
      EXPECT_EQ(all_received, all_sent);
    }
  }
}

}  // namespace
}  // namespace gnnbed
