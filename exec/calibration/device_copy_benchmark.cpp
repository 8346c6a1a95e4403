#include "exec/calibration/device_copy_benchmark.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "workloads/common/errors.hpp"
#include "workloads/common/statistics.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {

std::vector<std::int64_t> default_device_copy_bytes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = std::int64_t{64} << 10; bytes <= std::int64_t{256} << 20; bytes *= 4) {
    sizes.push_back(bytes);
  }
  return sizes;
}

std::vector<TransferSample> time_copies_to_device(ComputeBackend& backend,
                                                  std::span<const std::int64_t> sizes_bytes,
                                                  int repetitions) {
  if (repetitions < 1) throw Error("time_copies_to_device: repetitions must be at least 1");
  std::vector<TransferSample> samples;
  Matrix input;
  backend.use_transfer_memory(input);
  for (const std::int64_t bytes : sizes_bytes) {
    const std::int64_t floats = std::max<std::int64_t>(bytes / 4, 1);
    std::vector<double> seconds;
    // One warm-up copy allocates the device copy; the timed ones reuse it, as training does.
    for (int r = 0; r <= repetitions; ++r) {
      input.reshape_for_overwrite(1, floats);
      std::fill_n(input.data(), floats, static_cast<float>(r));  // new values on the host
      const Stopwatch copy;
      backend.copy_to_device(input);
      backend.synchronize();
      if (r > 0) seconds.push_back(copy.seconds());
    }
    samples.push_back({std::to_string(floats * 4) + " bytes", static_cast<double>(floats * 4),
                       median(std::move(seconds))});
  }
  return samples;
}

}  // namespace gnnbed
