// Epochs from samples: which iterations a sample replays, what each stands for, and the estimate
// with its interval, in closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "sim/epoch_sample.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

double total_weight(const EpochSample& sample) {
  return std::accumulate(sample.weights.begin(), sample.weights.end(), 0.0);
}

TEST(EpochSample, ZeroOrAtLeastTheEpochReplaysEveryIterationOnce) {
  for (const int k : {0, 13, 50}) {
    const EpochSample sample = design_epoch_sample(13, k, 1);
    EXPECT_TRUE(sample.whole_epoch());
    ASSERT_EQ(sample.iterations.size(), 13u);
    for (int i = 0; i < 13; ++i) EXPECT_EQ(sample.iterations[static_cast<std::size_t>(i)], i);
    EXPECT_DOUBLE_EQ(total_weight(sample), 13.0);
  }
}

TEST(EpochSample, TheFirstAndLastStandForThemselvesAndOneDrawPerStratumForTheRest) {
  const EpochSample sample = design_epoch_sample(100, 10, 7);
  ASSERT_EQ(sample.iterations.size(), 10u);
  EXPECT_EQ(sample.iterations.front(), 0);
  EXPECT_EQ(sample.iterations.back(), 99);
  EXPECT_EQ(sample.weights.front(), 1.0);
  EXPECT_EQ(sample.weights.back(), 1.0);
  EXPECT_EQ(sample.num_strata, 8);
  EXPECT_EQ(sample.stratified_iterations, 98);
  EXPECT_DOUBLE_EQ(total_weight(sample), 100.0);
  // Stratum h covers [1 + 98 h / 8, 1 + 98 (h + 1) / 8): its draw lies inside, in order.
  for (int h = 0; h < 8; ++h) {
    const int drawn = sample.iterations[static_cast<std::size_t>(h) + 1];
    EXPECT_GE(drawn, 1 + 98 * h / 8);
    EXPECT_LT(drawn, 1 + 98 * (h + 1) / 8);
    EXPECT_EQ(sample.strata[static_cast<std::size_t>(h) + 1], h);
  }
  EXPECT_EQ(design_epoch_sample(100, 10, 7).iterations, sample.iterations);  // seeded
  EXPECT_NE(design_epoch_sample(100, 10, 8).iterations, sample.iterations);
}

TEST(EpochSample, WithoutStrataTheFixedIterationsStandForTheWholeEpoch) {
  const EpochSample one = design_epoch_sample(10, 1, 1);
  ASSERT_EQ(one.iterations, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(total_weight(one), 10.0);
  const EpochSample two = design_epoch_sample(10, 2, 1);
  EXPECT_EQ(two.iterations, (std::vector<int>{0, 9}));
  EXPECT_DOUBLE_EQ(total_weight(two), 10.0);
  const EpochEstimate estimate = estimate_epoch(two, std::vector<double>{1.0, 3.0});
  EXPECT_DOUBLE_EQ(estimate.seconds, 5.0 * 1.0 + 5.0 * 3.0);
  EXPECT_FALSE(estimate.has_interval);
}

// A pipelined plan of depth 3: the drain (the 3 iterations before the last, and the last) is
// replayed each for itself and the strata cover the middle before it; every stratum's draw is
// replayed behind the 3 iterations in flight with it (weight 0), so that it runs in steady state.
TEST(EpochSample, APipelineIsReplayedWithItsDrainAndEachDrawBehindItsWarmUp) {
  const EpochSample drained = design_epoch_sample(50, 6, 3, 3);
  EXPECT_EQ(drained.stratified_iterations, 45);  // [1, 46)
  EXPECT_EQ(drained.num_strata, 4);
  ASSERT_EQ(drained.iterations.size(), 9u);
  EXPECT_EQ(std::vector<int>(drained.iterations.end() - 4, drained.iterations.end()),
            (std::vector<int>{46, 47, 48, 49}));
  EXPECT_DOUBLE_EQ(total_weight(drained), 50.0);
  for (std::size_t k = 1; k <= 4; ++k) EXPECT_LT(drained.iterations[k], 46);

  const EpochSample warmed = with_pipeline_warmup(drained, 3);
  EXPECT_DOUBLE_EQ(total_weight(warmed), 50.0);
  EXPECT_TRUE(std::is_sorted(warmed.iterations.begin(), warmed.iterations.end()));
  EXPECT_EQ(std::adjacent_find(warmed.iterations.begin(), warmed.iterations.end()),
            warmed.iterations.end());
  for (std::size_t k = 0; k < warmed.iterations.size(); ++k) {
    if (warmed.strata[k] < 0) continue;
    // The draw's 3 predecessors are replayed right before it (or were already).
    const int drawn = warmed.iterations[k];
    for (int back = 1; back <= 3 && drawn - back >= 0; ++back) {
      EXPECT_TRUE(std::find(warmed.iterations.begin(), warmed.iterations.end(), drawn - back) !=
                  warmed.iterations.end())
          << drawn << " without " << drawn - back;
    }
  }
  const std::vector<double> seconds(warmed.iterations.size(), 0.5);
  EXPECT_DOUBLE_EQ(estimate_epoch(warmed, seconds).seconds, 25.0);  // warm-ups weigh nothing

  // An epoch the warm-ups would cover is replayed whole; without a pipeline nothing changes.
  EXPECT_TRUE(with_pipeline_warmup(design_epoch_sample(13, 4, 1, 3), 3).whole_epoch());
  EXPECT_EQ(with_pipeline_warmup(design_epoch_sample(50, 6, 3), 0).iterations,
            design_epoch_sample(50, 6, 3).iterations);
}

TEST(EpochEstimate, AWholeEpochIsExactAndEqualTimesGiveAZeroWidthInterval) {
  const EpochSample whole = design_epoch_sample(4, 0, 1);
  const EpochEstimate exact = estimate_epoch(whole, std::vector<double>{1, 2, 3, 4});
  EXPECT_TRUE(exact.exact);
  EXPECT_DOUBLE_EQ(exact.seconds, 10.0);
  EXPECT_DOUBLE_EQ(exact.low, 10.0);
  EXPECT_DOUBLE_EQ(exact.high, 10.0);

  const EpochSample sample = design_epoch_sample(50, 6, 3);
  const EpochEstimate flat = estimate_epoch(sample, std::vector<double>(6, 0.5));
  EXPECT_DOUBLE_EQ(flat.seconds, 25.0);
  EXPECT_TRUE(flat.has_interval);
  EXPECT_DOUBLE_EQ(flat.standard_error, 0.0);
}

// Four strata over 48 middle iterations, drawn times 1, 2, 1, 2: the successive differences give
// an iteration variance of 3 / (2 x 3) = 0.5, the middle's total 48^2 (1 - 4/48) 0.5 / 4, and the
// interval Student's t at 3 degrees of freedom (3.182) times its root.
TEST(EpochEstimate, TheIntervalIsTheSuccessiveDifferenceEstimateInClosedForm) {
  const EpochSample sample = design_epoch_sample(50, 6, 3);
  ASSERT_EQ(sample.num_strata, 4);
  ASSERT_EQ(sample.stratified_iterations, 48);
  const std::vector<double> seconds = {0.0, 1.0, 2.0, 1.0, 2.0, 0.0};
  const EpochEstimate estimate = estimate_epoch(sample, seconds);
  EXPECT_DOUBLE_EQ(estimate.seconds, 12.0 * (1 + 2 + 1 + 2));
  const double standard_error = std::sqrt(48.0 * 48.0 * (1 - 4.0 / 48.0) * 0.5 / 4.0);
  EXPECT_NEAR(estimate.standard_error, standard_error, 1e-12);
  EXPECT_NEAR(estimate.high - estimate.seconds, 3.182 * standard_error, 1e-9);
  EXPECT_NEAR(estimate.seconds - estimate.low, 3.182 * standard_error, 1e-9);
}

TEST(EpochEstimate, IterationDurationsAreIncrementsOfTheClockUpToTheMakespan) {
  EXPECT_EQ(iteration_durations(std::vector<double>{1.0, 2.5, 2.0, 4.0}, 4.5),
            (std::vector<double>{1.0, 1.5, 0.0, 2.0}));
  EXPECT_THROW((void)estimate_epoch(design_epoch_sample(5, 0, 1), std::vector<double>{1.0}), Error);
}

TEST(EpochEstimate, StudentsTQuantiles) {
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t_975(10), 2.228);
  EXPECT_NEAR(student_t_975(60), 2.000, 0.002);
  EXPECT_NEAR(student_t_975(100000), 1.960, 0.001);
  EXPECT_THROW((void)student_t_975(0), ConfigError);
}

}  // namespace
}  // namespace gnnbed
