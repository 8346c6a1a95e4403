#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "workloads/common/memory.hpp"

namespace gnnbed {
namespace {

constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

// Allocates and touches a block, returning the allocator's counts while it is held and after it
// is freed. Each test runs in its own process, so the allocator starts from its defaults.
struct HeldAndFreed {
  struct mallinfo2 before;
  struct mallinfo2 held;
  struct mallinfo2 freed;
};

HeldAndFreed allocate_touch_and_free() {
  HeldAndFreed counts{};
  counts.before = mallinfo2();
  void* block = std::malloc(kBlockBytes);
  if (block == nullptr) throw std::bad_alloc();
  std::memset(block, 1, kBlockBytes);
  counts.held = mallinfo2();
  const unsigned char last = static_cast<volatile unsigned char*>(block)[kBlockBytes - 1];
  std::free(block);
  counts.freed = mallinfo2();
  EXPECT_EQ(last, 1);
  return counts;
}

TEST(ProcessMemory, ByDefaultALargeBlockIsMappedAndReturnedWhenFreed) {
  const HeldAndFreed counts = allocate_touch_and_free();
  EXPECT_GE(counts.held.hblkhd, counts.before.hblkhd + kBlockBytes);
  EXPECT_EQ(counts.freed.hblkhd, counts.before.hblkhd);
}

TEST(ProcessMemory, KeptMemoryServesALargeBlockFromTheHeapAndKeepsItFreed) {
  keep_freed_memory_for_reuse();
  const HeldAndFreed counts = allocate_touch_and_free();
  EXPECT_EQ(counts.held.hblkhd, counts.before.hblkhd);
  EXPECT_GE(counts.held.arena, counts.before.arena + kBlockBytes);
  // Freed, it stays in the heap as free space for the next allocation.
  EXPECT_EQ(counts.freed.arena, counts.held.arena);
  EXPECT_GE(counts.freed.fordblks, kBlockBytes);
}

}  // namespace
}  // namespace gnnbed
