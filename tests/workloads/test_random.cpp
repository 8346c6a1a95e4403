#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

TEST(Splitmix, MatchesTheReferenceSequence) {
  // SplitMix64 (Steele, Lea, Flood 2014) seeded with 0: its first outputs are well known.
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
  static_assert(splitmix64(1) == splitmix64(1), "usable in constant expressions");
}

TEST(HashMix, DeterministicAndSensitiveToEveryArgument) {
  EXPECT_EQ(hash_mix(1, 2, 3), hash_mix(1, 2, 3));
  EXPECT_NE(hash_mix(1, 2, 3), hash_mix(2, 2, 3));
  EXPECT_NE(hash_mix(1, 2, 3), hash_mix(1, 3, 3));
  EXPECT_NE(hash_mix(1, 2, 3), hash_mix(1, 2, 4));
  EXPECT_NE(hash_mix(1, 2, 3), hash_mix(1, 3, 2));  // order matters
  EXPECT_NE(hash_mix(1, 2), hash_mix(1, 2, 0));     // so does the number of positions
  EXPECT_EQ(hash_mix(5), splitmix64(5));
  // No collisions among many neighbouring positions.
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 10000; ++i) seen.insert(hash_mix(42, i));
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(HashMix, BitsAreBalanced) {
  // Each output bit is set about half of the time over consecutive positions.
  std::vector<int> ones(64, 0);
  constexpr int kDraws = 20000;
  for (std::uint64_t i = 0; i < kDraws; ++i) {
    const std::uint64_t bits = hash_mix(7, i);
    for (int b = 0; b < 64; ++b)
      ones[static_cast<std::size_t>(b)] += static_cast<int>((bits >> b) & 1);
  }
  for (const int count : ones) EXPECT_NEAR(count, kDraws / 2, 600);  // 8.5 standard deviations
}

TEST(UnitValues, StayInTheUnitInterval) {
  EXPECT_EQ(unit_float(0), 0.0f);
  EXPECT_EQ(unit_double(0), 0.0);
  EXPECT_LT(unit_float(std::numeric_limits<std::uint64_t>::max()), 1.0f);
  EXPECT_LT(unit_double(std::numeric_limits<std::uint64_t>::max()), 1.0);
  EXPECT_DOUBLE_EQ(unit_double(std::uint64_t{1} << 63), 0.5);
  EXPECT_FLOAT_EQ(unit_float(std::uint64_t{1} << 63), 0.5f);
}

TEST(StandardNormal, MeanAndVariance) {
  constexpr int kDraws = 200000;
  double sum = 0;
  double sum_squares = 0;
  int beyond_three = 0;
  for (std::uint64_t i = 0; i < kDraws; ++i) {
    const double x = standard_normal(hash_mix(3, i));
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_squares += x * x;
    beyond_three += std::abs(x) > 3;
  }
  const double mean = sum / kDraws;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(sum_squares / kDraws - mean * mean, 1.0, 0.02);
  // P(|X| > 3) = 0.27 %: about 540 of 200000.
  EXPECT_GT(beyond_three, 400);
  EXPECT_LT(beyond_three, 700);
  // The extreme inputs stay finite.
  EXPECT_TRUE(std::isfinite(standard_normal(0)));
  EXPECT_TRUE(std::isfinite(standard_normal(std::numeric_limits<std::uint64_t>::max())));
}

TEST(Rng, SameSeedSameSequenceOtherSeedOtherSequence) {
  Rng a(99);
  Rng b(99);
  Rng c(100);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differ += x != c.next_u64();
  }
  EXPECT_EQ(differ, 1000);
}

TEST(Rng, BelowStaysInRange) {
  Rng rng(5);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(rng.below(1), 0u);
  for (const std::uint64_t bound : {2ULL, 3ULL, 1000ULL, (1ULL << 63) + 1, ~0ULL}) {
    for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.below(bound), bound);
  }
}

TEST(Rng, BelowIsUniform) {
  // Chi-square with 9 degrees of freedom; its 99.99th percentile is 33.7.
  constexpr int kBins = 10;
  constexpr int kDraws = 100000;
  Rng rng(2024);
  std::vector<int> counts(kBins, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[rng.below(kBins)];
  double chi_square = 0;
  for (const int count : counts) {
    const double expected = static_cast<double>(kDraws) / kBins;
    chi_square += (count - expected) * (count - expected) / expected;
  }
  EXPECT_LT(chi_square, 33.7);

  // A bound just above 2^63 is where a plain modulo would be most biased (values below
  // 2^64 - bound would come up twice as often): the halves must still be even.
  const std::uint64_t bound = (std::uint64_t{1} << 63) + (std::uint64_t{1} << 62);
  int low_half = 0;
  for (int i = 0; i < kDraws; ++i) low_half += rng.below(bound) < bound / 2;
  EXPECT_NEAR(low_half, kDraws / 2, 1500);
}

TEST(Rng, UniformAndNormalDraws) {
  Rng rng(8);
  double sum = 0;
  double normal_sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    normal_sum += rng.normal();
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
  EXPECT_NEAR(normal_sum / 100000, 0.0, 0.015);
}

}  // namespace
}  // namespace gnnbed
