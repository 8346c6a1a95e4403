#pragma once
// Summary statistics of measurements.
#include <algorithm>
#include <vector>

namespace gnnbed {

// The middle value (the mean of the two middle ones for an even count); 0 for none. Taken by
// value: it sorts its copy.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace gnnbed
