#pragma once
#include <cstdint>

namespace gnnbed {

// The process's resident-set high-water mark, in bytes (getrusage).
std::int64_t peak_resident_bytes();

}  // namespace gnnbed
