#pragma once
// What the machine says of its caches, for calibration (sim/cost_model/cache_fit.hpp takes a
// cache size the machine states from it rather than fitting it).

namespace gnnbed {

// The size of the private cache of the core that runs this process, the largest data level that
// serves one core only (Linux's /sys/devices/system/cpu/cpu0/cache); 0 when the machine does not
// say.
double private_cache_bytes();

}  // namespace gnnbed
