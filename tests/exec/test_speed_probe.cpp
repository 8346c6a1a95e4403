// The speed probe's comparison: the ops it timed again against the calibration's samples of the
// same ops, by label.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/calibration/speed_probe.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

nlohmann::json fits_of(const std::vector<std::pair<std::string, double>>& samples) {
  nlohmann::json fits = {{"relu", {{"samples", nlohmann::json::array()}}},
                         {"rank_speed_spread", {{"median", 0.1}}}};
  for (const auto& [label, seconds] : samples) {
    fits["relu"]["samples"].push_back({{"label", label}, {"measured_seconds", seconds}});
  }
  return fits;
}

SamplesByKind now_of(const std::vector<std::pair<std::string, double>>& samples) {
  SamplesByKind now;
  for (const auto& [label, seconds] : samples) {
    now[static_cast<std::size_t>(OpKind::relu)].push_back({label, OpWork{}, seconds});
  }
  return now;
}

TEST(SpeedProbe, ComparesTheSameOpsSummed) {
  const SpeedProbe probe =
      compare_with_calibration(now_of({{"case: a", 0.3}, {"case: b", 0.5}}),
                               fits_of({{"case: a", 0.1}, {"case: b", 0.3}, {"case: c", 9.0}}));
  EXPECT_EQ(probe.matched_ops, 2);
  EXPECT_DOUBLE_EQ(probe.now_seconds, 0.8);
  EXPECT_DOUBLE_EQ(probe.then_seconds, 0.4);
  EXPECT_DOUBLE_EQ(probe.compute_time_ratio(), 2.0);
  EXPECT_DOUBLE_EQ(probe.to_json()["compute_time_ratio"].get<double>(), 2.0);
}

TEST(SpeedProbe, AnOpTheCalibrationLacksIsAnError) {
  try {
    compare_with_calibration(now_of({{"case: a", 0.3}, {"case: z", 0.5}}),
                             fits_of({{"case: a", 0.1}}));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'case: z'"), std::string::npos) << error.what();
  }
  EXPECT_THROW(compare_with_calibration(SamplesByKind{}, fits_of({{"case: a", 0.1}})), Error);
}

TEST(SpeedProbe, ProbesAreCalibrationCasesOfBothStrategies) {
  for (const bool quick : {false, true}) {
    const std::vector<ComputeCase> probes = probe_cases(quick);
    const std::vector<ComputeCase> all = compute_cases(quick, 1);
    ASSERT_GE(probes.size(), 2u);
    for (const ComputeCase& probe : probes) {
      EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const ComputeCase& c) {
        return c.describe() == probe.describe();
      })) << probe.describe();
    }
    EXPECT_TRUE(std::any_of(probes.begin(), probes.end(),
                            [](const ComputeCase& c) { return c.strategy == "p3"; }));
    EXPECT_TRUE(std::any_of(probes.begin(), probes.end(),
                            [](const ComputeCase& c) { return c.strategy == "dgl-pull"; }));
  }
}

}  // namespace
}  // namespace gnnbed
