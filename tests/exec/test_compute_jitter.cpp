// The compute jitter calibration measures (compute_jitter_of) against closed forms: what each
// rank's work and what the whole machine did in a run are taken out, and what is left is the
// log-sd of ClusterSpec::compute_jitter.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "exec/calibration/op_benchmark.hpp"

namespace gnnbed {
namespace {

using Seconds = std::vector<std::vector<std::vector<double>>>;  // [rank][run][op]

// `ranks` x `runs` x 3 ops: op i takes (i + 1) ms on rank 0 and twice that on rank 1 (their own
// work), times a factor all ranks share in each run, times exp(noise(r, k, i)).
template <typename Noise>
Seconds timed_runs(int ranks, int runs, Noise noise) {
  const std::vector<double> machine = {1.0, 1.3, 1.2, 1.1};
  Seconds seconds(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    for (int k = 0; k < runs; ++k) {
      std::vector<double>& run = seconds[static_cast<std::size_t>(r)].emplace_back();
      for (int i = 0; i < 3; ++i) {
        run.push_back((i + 1) * 1e-3 * (1 + r) * machine[static_cast<std::size_t>(k) % 4] *
                      std::exp(noise(r, k, i)));
      }
    }
  }
  return seconds;
}

TEST(ComputeJitter, WorkAndWhatTheMachineDidToAllRanksAreNotJitter) {
  const auto jitter = compute_jitter_of(timed_runs(2, 4, [](int, int, int) { return 0.0; }));
  ASSERT_TRUE(jitter.has_value());
  EXPECT_NEAR(*jitter, 0.0, 1e-12);
}

TEST(ComputeJitter, OppositeDeviationsOfTwoRanksGiveTheirLogSd) {
  // Rank 0 runs +d, -d, +d, -d; rank 1 the opposite: after the run means (0) and the rank means
  // at each run (0) every x is +-d, 2 ranks x 4 runs of them per op, so jitter^2 =
  // 8 d^2 / ((4 - 1)(2 - 1)) per op.
  const double d = 0.1;
  const auto jitter = compute_jitter_of(
      timed_runs(2, 4, [d](int r, int k, int) { return ((r + k) % 2 == 0 ? 1 : -1) * d; }));
  ASSERT_TRUE(jitter.has_value());
  EXPECT_NEAR(*jitter, d * std::sqrt(8.0 / 3.0), 1e-12);
}

TEST(ComputeJitter, ShortOpsAreLeftOut) {
  // Op 0 of rank 0 takes 1.3 ms in run 1, and 0.9 ms instead would be jitter if it counted:
  // under 1 ms, the op is left out, and the others carry none.
  Seconds seconds = timed_runs(2, 3, [](int, int, int) { return 0.0; });
  seconds[0][1][0] = 0.9e-3;
  EXPECT_NEAR(compute_jitter_of(seconds).value(), 0.0, 1e-12);
  for (auto& runs : seconds) {
    for (auto& run : runs) run = {0.5e-3};
  }
  EXPECT_FALSE(compute_jitter_of(seconds).has_value());
}

TEST(ComputeJitter, NeedsTwoRanksAndTwoRuns) {
  EXPECT_FALSE(compute_jitter_of(timed_runs(1, 4, [](int, int, int) { return 0.0; })).has_value());
  EXPECT_FALSE(compute_jitter_of(timed_runs(2, 1, [](int, int, int) { return 0.0; })).has_value());
}

}  // namespace
}  // namespace gnnbed
