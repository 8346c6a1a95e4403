// The private cache calibration reads from the machine: where Linux reports one, a data cache of
// one core, a whole number of KiB.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/calibration/private_cache.hpp"

namespace gnnbed {
namespace {

TEST(PrivateCache, IsAWholeNumberOfKibibytesWhereTheMachineReportsOne) {
  const double reported = private_cache_bytes();
  EXPECT_GE(reported, 0.0);
  if (reported > 0) {
    EXPECT_EQ(std::fmod(reported, 1024.0), 0.0) << reported;
  }
}

}  // namespace
}  // namespace gnnbed
