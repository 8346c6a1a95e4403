// The caches of the cost model: which share of rows read where indices point a cache does not hold
// (closed form), an op's misses of each level and their cost on one of several ranks sharing the
// caches, the cost model's caches in JSON (and refused when negative), and calibration's fit of
// the cache sizes: samples generated with caches among the candidates give those sizes back, and
// samples whose time does not depend on the table give no cache model.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/cost_model/cache_fit.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr double kMiB = 1 << 20;

TEST(CacheModel, RowsOfATableLargerThanTheCacheMissInProportionToWhatDoesNotFit) {
  EXPECT_DOUBLE_EQ(uncached_fraction(64 * kMiB, 16 * kMiB), 0.75);
  EXPECT_DOUBLE_EQ(uncached_fraction(16 * kMiB, 16 * kMiB), 0.0);
  EXPECT_DOUBLE_EQ(uncached_fraction(4 * kMiB, 16 * kMiB), 0.0);
  EXPECT_DOUBLE_EQ(uncached_fraction(64 * kMiB, 0), 0.0) << "no cache model: nothing uncached";
}

Op gathering_op(std::int64_t rows, std::int64_t table_bytes) {
  Op op;
  op.kind = OpKind::gather_rows;
  op.label = "gather";
  op.memory_bytes = 2 * rows * 64;
  op.gathered_rows = rows;
  op.gathered_table_bytes = table_bytes;
  return op;
}

TEST(CacheModel, AnOpsMissesCostAtEachLevelsRateOnItsShareOfTheCaches) {
  OpCost cost;
  cost.fixed_seconds = 1e-6;
  cost.memory_bytes_per_second = 1e10;
  cost.near_cache_misses_per_second = 2e8;
  cost.far_cache_misses_per_second = 5e7;
  CostModel model;
  model.set(OpKind::gather_rows, cost);
  const Op op = gathering_op(1'000'000, static_cast<std::int64_t>(32 * kMiB));
  const double streamed = 1e-6 + 2 * 64e6 / 1e10;
  EXPECT_DOUBLE_EQ(model.seconds(op), streamed) << "without caches no row misses";
  model.set_caches({4 * kMiB, 16 * kMiB});
  // 7/8 of the rows miss the near level, half of them the far one too.
  EXPECT_DOUBLE_EQ(model.seconds(op), streamed + 0.875e6 / 2e8 + 0.5e6 / 5e7);
  // Four ranks sharing them: 1 and 4 MiB each; the near level shared by two, 2 MiB each.
  EXPECT_DOUBLE_EQ(model.seconds(op, {4, 4}),
                   streamed + (1 - 1.0 / 32) * 1e6 / 2e8 + 0.875e6 / 5e7);
  EXPECT_DOUBLE_EQ(model.seconds(op, {2, 4}),
                   streamed + (1 - 2.0 / 32) * 1e6 / 2e8 + 0.875e6 / 5e7);
  const OpWork work = work_of(op, {8 * kMiB, 0});
  EXPECT_DOUBLE_EQ(work.near_cache_misses, 0.75e6);
  EXPECT_DOUBLE_EQ(work.far_cache_misses, 0.0) << "a level of size 0 is not modelled";
}

TEST(CacheModel, MissesWithoutARateAreInTheOtherTermsCost) {
  OpCost cost;
  cost.memory_bytes_per_second = 1e10;
  OpWork work;
  work.memory_bytes = 1e6;
  work.near_cache_misses = 1e4;
  work.far_cache_misses = 1e3;
  EXPECT_DOUBLE_EQ(cost.seconds(work), 1e-4);
}

TEST(CacheModel, TheCostModelsCachesReadBackAndMustNotBeNegative) {
  CostModel model;
  OpCost cost;
  cost.fixed_seconds = 1e-6;
  cost.far_cache_misses_per_second = 2e7;
  model.set(OpKind::layer_forward, cost);
  model.set_caches({2 * kMiB, 12 * kMiB});
  const CostModel read = CostModel::from_json(model.to_json(), "cost_model");
  EXPECT_EQ(read.caches(), (CacheSizes{2 * kMiB, 12 * kMiB}));
  EXPECT_DOUBLE_EQ(read.cost(OpKind::layer_forward)->far_cache_misses_per_second, 2e7);
  nlohmann::json bad = model.to_json();
  bad["caches"]["far_bytes"] = -1;
  try {
    CostModel::from_json(bad, "host.cost_model");
    FAIL() << "a negative cache was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("host.cost_model.caches.far_bytes"), std::string::npos)
        << error.what();
  }
  CostModel base;
  base.set_caches({3 * kMiB, 0});
  base.merge(CostModel{});
  EXPECT_EQ(base.caches(), (CacheSizes{3 * kMiB, 0})) << "an override without caches keeps them";
}

// Samples of a gather over tables from 1 to 128 MiB timed with `truth` on a rank with `caches`.
std::vector<CostSample> gather_samples(const OpCost& truth, const CacheSizes& caches) {
  std::vector<CostSample> samples;
  for (const double rows : {1e4, 3e4, 1e5, 3e5}) {
    for (const double table_mib : {0.7, 1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 128.0}) {
      CostSample sample;
      sample.label = "gather";
      sample.gathered_rows = rows;
      sample.gathered_table_bytes = table_mib * kMiB;
      sample.work.memory_bytes = 2 * 64 * rows;
      samples.push_back(sample);
    }
  }
  set_cache_misses(samples, caches);
  for (CostSample& sample : samples) sample.seconds = truth.seconds(sample.work);
  return samples;
}

TEST(CacheFit, FindsTheCachesTheSamplesWereTimedWith) {
  OpCost truth;
  truth.fixed_seconds = 5e-6;
  truth.memory_bytes_per_second = 2e10;
  truth.near_cache_misses_per_second = 2e8;
  truth.far_cache_misses_per_second = 4e7;
  const std::vector<CacheSizes> candidates = candidate_caches();
  ASSERT_EQ(candidates.front(), CacheSizes{}) << "no cache model is tried first";
  for (const CacheSizes& caches :
       {CacheSizes{2 * kMiB, 8 * kMiB}, CacheSizes{std::sqrt(2.0) * kMiB, 32 * kMiB}}) {
    std::vector<std::vector<CostSample>> by_kind(2);
    by_kind[0] = gather_samples(truth, caches);
    const CacheFit fit = fit_caches(by_kind, candidates);
    EXPECT_NEAR(fit.per_rank.near_bytes / caches.near_bytes, 1.0, 1e-9);
    EXPECT_NEAR(fit.per_rank.far_bytes / caches.far_bytes, 1.0, 1e-9);
    EXPECT_EQ(fit.objective_by_candidate.size(), candidates.size());
    set_cache_misses(by_kind[0], fit.per_rank);
    const CostFit cost = fit_op_cost(by_kind[0]);
    EXPECT_NEAR(cost.cost.far_cache_misses_per_second / 4e7, 1.0, 1e-6);
    EXPECT_NEAR(cost.cost.near_cache_misses_per_second / 2e8, 1.0, 1e-6);
    EXPECT_LT(cost.summary.max_abs_relative_residual, 1e-6);
  }
}

TEST(CacheFit, ANearLevelTheMachineStatesIsKeptAndOnlyTheFarOneFitted) {
  const std::vector<CacheSizes> candidates = candidate_caches(kMiB);
  ASSERT_EQ(candidates.front(), CacheSizes{});
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    EXPECT_EQ(candidates[i].near_bytes, kMiB);
    EXPECT_TRUE(candidates[i].far_bytes == 0 || candidates[i].far_bytes > kMiB);
  }
  OpCost truth;
  truth.fixed_seconds = 5e-6;
  truth.memory_bytes_per_second = 2e10;
  truth.near_cache_misses_per_second = 2e8;
  truth.far_cache_misses_per_second = 4e7;
  std::vector<std::vector<CostSample>> by_kind = {gather_samples(truth, {kMiB, 8 * kMiB})};
  const CacheFit fit = fit_caches(by_kind, candidates);
  EXPECT_EQ(fit.per_rank, (CacheSizes{kMiB, 8 * kMiB}));
}

TEST(CacheFit, TimesThatDoNotDependOnTheTableGiveNoCacheModel) {
  OpCost truth;
  truth.fixed_seconds = 5e-6;
  truth.memory_bytes_per_second = 2e10;
  std::vector<std::vector<CostSample>> by_kind = {gather_samples(truth, CacheSizes{})};
  const CacheFit fit = fit_caches(by_kind, candidate_caches());
  EXPECT_EQ(fit.per_rank, CacheSizes{});
  const nlohmann::json json = fit.to_json();
  EXPECT_EQ(json["per_rank"]["near_bytes"], 0.0);
  EXPECT_EQ(json["candidates"].size(), candidate_caches().size());
  // Kinds that read no rows where indices point leave nothing to fit.
  std::vector<std::vector<CostSample>> none(1);
  none[0].push_back({"relu", OpWork{}, 1e-6});
  EXPECT_TRUE(fit_caches(none, candidate_caches()).objective_by_candidate.empty());
}

}  // namespace
}  // namespace gnnbed
