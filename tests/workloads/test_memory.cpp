#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

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

// These tests are about glibc's heap and the kernel's page accounting; under AddressSanitizer its
// own allocator serves the heap and its shadow memory faults pages of its own.
#define SKIP_UNDER_ADDRESS_SANITIZER()                                             \
  if (heap_belongs_to_a_sanitizer()) {                                           \
    GTEST_SKIP() << "AddressSanitizer's allocator serves the heap in this build"; \
  }

TEST(ProcessMemory, ByDefaultALargeBlockIsMappedAndReturnedWhenFreed) {
  SKIP_UNDER_ADDRESS_SANITIZER();
  const HeldAndFreed counts = allocate_touch_and_free();
  EXPECT_GE(counts.held.hblkhd, counts.before.hblkhd + kBlockBytes);
  EXPECT_EQ(counts.freed.hblkhd, counts.before.hblkhd);
}

TEST(ProcessMemory, KeptMemoryServesALargeBlockFromTheHeapAndKeepsItFreed) {
  SKIP_UNDER_ADDRESS_SANITIZER();
  keep_freed_memory_for_reuse();
  const HeldAndFreed counts = allocate_touch_and_free();
  EXPECT_EQ(counts.held.hblkhd, counts.before.hblkhd);
  EXPECT_GE(counts.held.arena, counts.before.arena + kBlockBytes);
  // Freed, it stays in the heap as free space for the next allocation.
  EXPECT_EQ(counts.freed.arena, counts.held.arena);
  EXPECT_GE(counts.freed.fordblks, kBlockBytes);
}

// Writes a byte to every page of `bytes` at `block`, through a volatile pointer so that the
// writes are not elided.
void touch_every_page(void* block, std::size_t bytes, std::size_t page_bytes, unsigned char value) {
  auto* bytes_of_block = static_cast<volatile unsigned char*>(block);
  for (std::size_t offset = 0; offset < bytes; offset += page_bytes) bytes_of_block[offset] = value;
}

TEST(ProcessMemory, TouchingNewPagesCountsPageFaults) {
  SKIP_UNDER_ADDRESS_SANITIZER();
  // A fresh anonymous mapping: each page faults when first touched, and not when touched again.
  const auto page_bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kPages = 1024;
  const std::size_t bytes = kPages * page_bytes;
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  // Not transparent huge pages, which would fault 2 MiB at a time.
  madvise(block, bytes, MADV_NOHUGEPAGE);
  const std::int64_t before = page_faults();
  touch_every_page(block, bytes, page_bytes, 1);
  const std::int64_t first_touch = page_faults() - before;
  touch_every_page(block, bytes, page_bytes, 2);
  const std::int64_t second_touch = page_faults() - before - first_touch;
  munmap(block, bytes);
  EXPECT_GE(first_touch, static_cast<std::int64_t>(kPages));
  EXPECT_LE(first_touch, static_cast<std::int64_t>(kPages) + 16);  // the test's own pages
  EXPECT_LE(second_touch, 2);
}

}  // namespace
}  // namespace gnnbed
