#pragma once
#include <cstdint>

namespace gnnbed {

// The process's resident-set high-water mark, in bytes (getrusage).
std::int64_t peak_resident_bytes();

// Page faults the process has taken so far, minor and major (getrusage): touching memory it has
// not touched before. In a virtual machine each costs microseconds, so a step that faults in new
// pages runs slower than the same step on warm memory.
std::int64_t page_faults();

// Makes the heap keep what the process frees, up to 1 GiB per allocation, for its next
// allocations, as a training framework's caching allocator does. Call it once, at the start of a
// process that repeats steps of similar sizes. Throws if the allocator refuses the setting.
void keep_freed_memory_for_reuse();

}  // namespace gnnbed
