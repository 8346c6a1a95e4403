#pragma once
// Times what the plans' copy_to_device ops do on a GPU backend: a matrix written on the host in
// page-locked memory, then copied to the device. The fitted latency and bandwidth are the
// simulator's device link for that GPU (Calibration::device_link).
#include <cstdint>
#include <span>
#include <vector>

#include "exec/kernels/compute_backend.hpp"
#include "sim/cost_model/cost_fit.hpp"

namespace gnnbed {

// The sizes calibrate copies by default: 64 KiB to 256 MiB, a factor of 4 apart.
std::vector<std::int64_t> default_device_copy_bytes();

// The median of `repetitions` timed copies of each size, one sample per size, labelled by size.
std::vector<TransferSample> time_copies_to_device(ComputeBackend& backend,
                                                  std::span<const std::int64_t> sizes_bytes,
                                                  int repetitions);

}  // namespace gnnbed
