#pragma once
#include <cstdint>
#include <string>

namespace gnnbed {

// The process's resident-set high-water mark, in bytes (getrusage).
std::int64_t peak_resident_bytes();

// Page faults the process has taken so far, minor and major (getrusage): touching memory it has
// not touched before. In a virtual machine each costs microseconds, so a step that faults in new
// pages runs slower than the same step on warm memory.
std::int64_t page_faults();

// Memory the process may still take, in bytes; -1 when unknown. The least of what the machine has
// left (MemAvailable of /proc/meminfo), what the process's control group has left (memory.max
// less memory.current: a container's or a batch job's share) and, when the environment sets it,
// GNNBED_MEMORY_LIMIT_BYTES (a limit the user gives gnnbed on a shared machine).
std::int64_t available_memory_bytes();
// The environment variable that limits available_memory_bytes().
inline constexpr const char* kMemoryLimitVariable = "GNNBED_MEMORY_LIMIT_BYTES";

// For loaders, before they allocate what a file's sizes ask for: throws InputError(file, line,
// field, ...) saying what needs `bytes` and how much memory is available, when it is more than that
// (a size in a file that cannot be right, or a dataset too large for this machine), rather than
// letting the allocation fail without naming the file.
void require_memory_for(std::int64_t bytes, const std::string& what, const std::string& file,
                        std::int64_t line, const std::string& field);
// The least a loaded graph holds per node, whatever the tool: an offset, a label and a degree.
inline constexpr std::int64_t kLeastBytesPerNode = sizeof(std::int64_t) + 2 * sizeof(std::int32_t);

// Makes the heap keep what the process frees, up to 1 GiB per allocation, for its next
// allocations, as a training framework's caching allocator does. Call it once, at the start of a
// process that repeats steps of similar sizes. Throws if the allocator refuses the setting.
// In a build with AddressSanitizer, whose allocator replaces glibc's, it does nothing.
void keep_freed_memory_for_reuse();

// True when AddressSanitizer's allocator serves the heap (scripts/sanitize.sh's build): glibc's
// mallopt settings and its mapping of large blocks do not apply there.
bool heap_belongs_to_a_sanitizer();

}  // namespace gnnbed
