#include "workloads/common/memory.hpp"

#include <sys/resource.h>

namespace gnnbed {

std::int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace gnnbed
