#pragma once
// Calibration of PyTorch-BigGraph's train_bucket op: buckets of random edges between two
// partitions, of several sizes and widths, trained by the kernel the embedding engine runs, timed
// against the work the strategy's plans give them (strategies/pbg.hpp, bucket_flops).
#include <cstdint>
#include <vector>

#include "sim/cost_model/cost_fit.hpp"

namespace gnnbed {

// Appends one sample per bucket shape (fewer when `quick`), each the median of a few timed runs.
void time_train_bucket(bool quick, std::uint64_t seed, std::vector<CostSample>& samples);

}  // namespace gnnbed
