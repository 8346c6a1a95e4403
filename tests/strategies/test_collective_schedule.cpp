// The collective schedules, replayed symbolically for 1 to 9 ranks: pairwise all-to-all reaches
// every peer once, ring all-gather delivers every block everywhere, ring all-reduce adds every
// contribution exactly once and sends 2 (n - 1) / n of the buffer per rank; the hierarchical
// all-reduce, run element by element on every rank at once, ends with every rank's sum everywhere
// and moves one flat ring's bytes across each machine's NIC in 2 (M - 1) steps.
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

TEST(CollectiveSchedule, AllToAllBlocksCoverEveryStepInOrder) {
  EXPECT_TRUE(all_to_all_blocks(1, 8).empty());
  EXPECT_TRUE(all_to_all_blocks(1, 0).empty());
  using Bounds = std::vector<std::pair<int, int>>;
  const auto bounds = [](int n, int block_steps) {
    Bounds out;
    for (const StepBlock& b : all_to_all_blocks(n, block_steps)) out.emplace_back(b.first, b.last);
    return out;
  };
  EXPECT_EQ(bounds(2, 8), (Bounds{{1, 2}}));
  EXPECT_EQ(bounds(9, 8), (Bounds{{1, 9}}));
  EXPECT_EQ(bounds(10, 8), (Bounds{{1, 9}, {9, 10}}));
  EXPECT_EQ(bounds(20, 8), (Bounds{{1, 9}, {9, 17}, {17, 20}}));
  EXPECT_EQ(bounds(20, 0), (Bounds{{1, 20}}));
  EXPECT_EQ(kDefaultAllToAllBlockSteps, 4);
  EXPECT_EQ(bounds(4, 1), (Bounds{{1, 2}, {2, 3}, {3, 4}}));
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

TEST(CollectiveSchedule, ExchangeStepsWithinMachinesReachEveryMateOnceAndMatchUp) {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (int g = 1; g <= n; ++g) {
      if (n % g != 0) continue;
      for (int r = 0; r < n; ++r) {
        const std::vector<PairwiseStep> steps = exchange_steps(r, n, g);
        ASSERT_EQ(steps.size(), index(g - 1)) << "n " << n << " g " << g;
        std::vector<int> sent_to(index(n), 0);
        for (std::size_t s = 0; s < steps.size(); ++s) {
          ASSERT_EQ(steps[s].send_to / g, r / g);
          ASSERT_EQ(steps[s].receive_from / g, r / g);
          ++sent_to[index(steps[s].send_to)];
          // The mate expects this rank's message at the same step.
          EXPECT_EQ(exchange_steps(steps[s].send_to, n, g)[s].receive_from, r);
        }
        for (int q = r - r % g; q < r - r % g + g; ++q)
          EXPECT_EQ(sent_to[index(q)], q == r ? 0 : 1);
      }
    }
    // Over every rank: the pairwise steps themselves.
    for (int r = 0; r < n; ++r) {
      const std::vector<PairwiseStep> steps = exchange_steps(r, n, 0);
      ASSERT_EQ(steps.size(), index(n - 1));
      for (int s = 1; s < n; ++s) {
        EXPECT_EQ(steps[index(s - 1)].send_to, pairwise_step(r, n, s).send_to);
        EXPECT_EQ(steps[index(s - 1)].receive_from, pairwise_step(r, n, s).receive_from);
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

// Runs every rank's all_reduce_steps in lockstep on rank r's contributions (r + 1) * 1000003 + i,
// in exact integers; returns every rank's final values.
std::vector<std::vector<std::int64_t>> run_all_reduce(int n, int g, std::int64_t num_elements) {
  std::vector<std::vector<std::int64_t>> values(index(n));
  std::vector<std::vector<AllReduceStep>> steps(index(n));
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < num_elements; ++i) {
      values[index(r)].push_back((r + 1) * std::int64_t{1000003} + i);
    }
    steps[index(r)] = all_reduce_steps(r, n, g, num_elements);
    EXPECT_EQ(steps[index(r)].size(), steps[0].size()) << "n " << n << " g " << g;
  }
  for (std::size_t k = 0; k < steps[0].size(); ++k) {
    std::vector<std::vector<std::int64_t>> next = values;
    for (int r = 0; r < n; ++r) {
      const AllReduceStep& step = steps[index(r)][k];
      const AllReduceStep& peer = steps[index(step.send_to)][k];
      // The receiver expects this message at the same step, of the same size.
      EXPECT_EQ(peer.receive_from, r) << "n " << n << " g " << g << " step " << k;
      EXPECT_EQ(peer.receive.size(), step.send.size());
      EXPECT_NE(step.send_to, r);
      for (std::int64_t i = 0; i < step.send.size(); ++i) {
        const std::int64_t sent = values[index(r)][static_cast<std::size_t>(step.send.begin + i)];
        auto& target = next[index(step.send_to)][static_cast<std::size_t>(peer.receive.begin + i)];
        target = peer.add ? target + sent : sent;
      }
    }
    values = next;
  }
  return values;
}

TEST(CollectiveSchedule, HierarchicalAllReduceSumsEveryContributionOnEveryRank) {
  for (const auto& [n, g] : std::vector<std::pair<int, int>>{
           {4, 2}, {6, 2}, {6, 3}, {8, 2}, {8, 4}, {9, 3}, {12, 4}, {12, 3}, {5, 1}, {4, 4}}) {
    for (const std::int64_t num_elements : {std::int64_t{0}, std::int64_t{1}, std::int64_t{g - 1},
                                            std::int64_t{n + 1}, std::int64_t{97}}) {
      const auto values = run_all_reduce(n, g, num_elements);
      for (int r = 0; r < n; ++r) {
        for (std::int64_t i = 0; i < num_elements; ++i) {
          const std::int64_t sum = std::int64_t{1000003} * n * (n + 1) / 2 + n * i;
          ASSERT_EQ(values[index(r)][static_cast<std::size_t>(i)], sum)
              << "n " << n << " g " << g << " elements " << num_elements << " rank " << r
              << " element " << i;
        }
      }
    }
  }
}

TEST(CollectiveSchedule, HierarchicalAllReduceFallsBackToOneRingWithoutMachines) {
  for (const auto& [n, g] :
       std::vector<std::pair<int, int>>{{4, 0}, {4, 1}, {4, 4}, {6, 4}, {1, 1}, {3, 2}}) {
    EXPECT_FALSE(hierarchical_all_reduce(n, g));
    for (int r = 0; r < n; ++r) {
      const auto steps = all_reduce_steps(r, n, g, 1000);
      ASSERT_EQ(static_cast<int>(steps.size()), n > 1 ? 2 * (n - 1) : 0);
      for (const AllReduceStep& step : steps) EXPECT_EQ(step.send_to, ring_peers(r, n).next);
    }
  }
  EXPECT_TRUE(hierarchical_all_reduce(4, 2));
}

TEST(CollectiveSchedule, HierarchicalAllReduceCrossesEachNicWithOneRingsBytesInFewerSteps) {
  for (const auto& [n, g] : std::vector<std::pair<int, int>>{{8, 2}, {8, 4}, {12, 3}, {16, 4}}) {
    const int machines = n / g;
    const std::int64_t num_elements = 1000 * n;  // every chunk whole
    for (int m = 0; m < machines; ++m) {
      std::int64_t across = 0;
      std::int64_t within = 0;
      for (int r = m * g; r < (m + 1) * g; ++r) {
        const auto steps = all_reduce_steps(r, n, g, num_elements);
        EXPECT_EQ(static_cast<int>(steps.size()), 2 * (g - 1) + 2 * (machines - 1))
            << "n " << n << " g " << g;
        const auto to = all_reduce_elements_to(r, n, g, num_elements);
        for (int q = 0; q < n; ++q) (q / g == m ? within : across) += to[index(q)];
      }
      // Out of the machine: 2 (M - 1) / M of the buffer, as one ring over M machines.
      EXPECT_EQ(across, 2 * (machines - 1) * num_elements / machines) << "n " << n << " g " << g;
      // Within: a reduce-scatter and an all-gather over g ranks.
      EXPECT_EQ(within, 2 * (g - 1) * num_elements) << "n " << n << " g " << g;
    }
  }
}

}  // namespace
}  // namespace gnnbed
