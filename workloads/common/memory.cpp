#include "workloads/common/memory.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

namespace {

std::int64_t machine_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

// A whole number of bytes in a file such as memory.max; -1 for "max", a missing file or text.
std::int64_t bytes_in_file(const std::string& path) {
  std::ifstream in(path);
  std::int64_t bytes = -1;
  if (!(in >> bytes)) return -1;
  return bytes;
}

// The value of `key` in a memory.stat file; 0 when absent.
std::int64_t stat_bytes(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string name;
  std::int64_t bytes = 0;
  while (in >> name >> bytes) {
    if (name == key) return bytes;
  }
  return 0;
}

// What a control group's limit leaves, counting its file cache as free (the kernel reclaims it
// before it fails an allocation); -1 when the group has no limit or no such files.
std::int64_t group_headroom(const std::string& folder, const char* limit_file,
                            const char* usage_file, const char* cache_key) {
  const std::int64_t limit = bytes_in_file(folder + "/" + limit_file);
  const std::int64_t used = bytes_in_file(folder + "/" + usage_file);
  // cgroup v1 writes "no limit" as a number near 2^63.
  if (limit < 0 || used < 0 || limit >= (std::int64_t{1} << 62)) return -1;
  const std::int64_t cache = stat_bytes(folder + "/memory.stat", cache_key);
  return std::max<std::int64_t>(limit - std::max<std::int64_t>(used - cache, 0), 0);
}

// What the process's control group (a container's or a batch job's share) may still take: cgroup
// v2's memory.max, else v1's memory controller; -1 without a limit.
std::int64_t control_group_available_bytes() {
  std::ifstream membership("/proc/self/cgroup");
  std::string line;
  std::string unified;
  std::string v1_memory;
  while (std::getline(membership, line)) {
    if (line.starts_with("0::")) unified = line.substr(3);
    if (const auto at = line.find(":memory:"); at != std::string::npos) {
      v1_memory = line.substr(at + 8);
    }
  }
  if (!unified.empty()) {
    const std::int64_t headroom = group_headroom("/sys/fs/cgroup" + (unified == "/" ? "" : unified),
                                                 "memory.max", "memory.current", "file");
    if (headroom >= 0) return headroom;
  }
  if (v1_memory.empty()) return -1;
  // Inside a container the group's own folder is the controller's root.
  for (const std::string& folder :
       {"/sys/fs/cgroup/memory" + v1_memory, std::string("/sys/fs/cgroup/memory")}) {
    const std::int64_t headroom = group_headroom(folder, "memory.limit_in_bytes",
                                                 "memory.usage_in_bytes", "total_cache");
    if (headroom >= 0) return headroom;
  }
  return -1;
}

// GNNBED_MEMORY_LIMIT_BYTES; -1 when unset. Throws ConfigError when set to anything but a
// non-negative whole number.
std::int64_t configured_limit_bytes() {
  const char* text = std::getenv(kMemoryLimitVariable);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  errno = 0;
  const long long bytes = std::strtoll(text, &end, 10);
  if (*end != '\0' || errno != 0 || bytes < 0) {
    throw ConfigError(kMemoryLimitVariable,
                      "'" + std::string(text) + "' is not a whole number of bytes");
  }
  return bytes;
}

}  // namespace

std::int64_t available_memory_bytes() {
  std::int64_t available = -1;
  for (const std::int64_t bytes :
       {machine_available_bytes(), control_group_available_bytes(), configured_limit_bytes()}) {
    if (bytes >= 0 && (available < 0 || bytes < available)) available = bytes;
  }
  return available;
}

void require_memory_for(std::int64_t bytes, const std::string& what, const std::string& file,
                        std::int64_t line, const std::string& field) {
  const std::int64_t available = available_memory_bytes();
  if (available < 0 || bytes <= available) return;
  char amounts[120];
  std::snprintf(amounts, sizeof(amounts), "need %.1f GiB, more than the %.1f GiB of memory available",
                static_cast<double>(bytes) / (1 << 30), static_cast<double>(available) / (1 << 30));
  const bool limited_by_user = configured_limit_bytes() == available;
  throw InputError(file, line, field,
                   what + " " + amounts +
                       (limited_by_user ? " (" + std::string(kMemoryLimitVariable) + ")" : ""));
}

bool heap_belongs_to_a_sanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// By default glibc maps every allocation over its (adaptive, at most 32 MiB) mmap threshold
// afresh and unmaps it when freed, so a tensor of that size that a step frees and the next step
// allocates again is faulted in page by page every step. In a virtual machine a page fault costs
// microseconds: with 4 ranks training dgl-pull on 2 cores, assembling the input features took
// twice its calibrated time and the ranks' uneven fault costs tripled their waiting
// (docs/validation.md). Served from the heap and never trimmed, the freed pages are reused.
void keep_freed_memory_for_reuse() {
  if (heap_belongs_to_a_sanitizer()) return;
  constexpr int kLargestHeapAllocationBytes = 1 << 30;
  if (mallopt(M_MMAP_THRESHOLD, kLargestHeapAllocationBytes) != 1 ||
      mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1) {
    throw Error("keep_freed_memory_for_reuse: the allocator refused mallopt(M_MMAP_THRESHOLD, " +
                std::to_string(kLargestHeapAllocationBytes) + ") or mallopt(M_TRIM_THRESHOLD)");
  }
}

}  // namespace gnnbed
