#include "workloads/common/memory.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::int64_t page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_minflt) + static_cast<std::int64_t>(usage.ru_majflt);
}

std::int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

void require_memory_for(std::int64_t bytes, const std::string& what, const std::string& file,
                        std::int64_t line, const std::string& field) {
  const std::int64_t available = available_memory_bytes();
  if (available < 0 || bytes <= available) return;
  char amounts[120];
  std::snprintf(amounts, sizeof(amounts), "need %.1f GiB, more than the %.1f GiB of memory available",
                static_cast<double>(bytes) / (1 << 30), static_cast<double>(available) / (1 << 30));
  throw InputError(file, line, field, what + " " + amounts);
}

// By default glibc maps every allocation over its (adaptive, at most 32 MiB) mmap threshold
// afresh and unmaps it when freed, so a tensor of that size that a step frees and the next step
// allocates again is faulted in page by page every step. In a virtual machine a page fault costs
// microseconds: with 4 ranks training dgl-pull on 2 cores, assembling the input features took
// twice its calibrated time and the ranks' uneven fault costs tripled their waiting
// (docs/validation.md). Served from the heap and never trimmed, the freed pages are reused.
void keep_freed_memory_for_reuse() {
  constexpr int kLargestHeapAllocationBytes = 1 << 30;
  if (mallopt(M_MMAP_THRESHOLD, kLargestHeapAllocationBytes) != 1 ||
      mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1) {
    throw Error("keep_freed_memory_for_reuse: the allocator refused mallopt(M_MMAP_THRESHOLD, " +
                std::to_string(kLargestHeapAllocationBytes) + ") or mallopt(M_TRIM_THRESHOLD)");
  }
}

}  // namespace gnnbed
