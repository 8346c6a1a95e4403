#include <gtest/gtest.h>

#include "workloads/common/statistics.hpp"

namespace gnnbed {
namespace {

TEST(Statistics, MedianIsTheMiddleValueOrTheMeanOfTheTwoMiddleOnes) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_EQ(median({}), 0.0);
}

}  // namespace
}  // namespace gnnbed
