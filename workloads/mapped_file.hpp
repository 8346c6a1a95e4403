#pragma once
// A whole file mapped read-only into memory. Arrays read from it are views (SharedArray) that keep
// the mapping alive through a shared owner, so a large workload is used in place, never copied.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace gnnbed {

class MappedFile {
 public:
  // Maps the whole file. Throws InputError(file, 0, "", reason) when it is missing, unreadable or
  // empty (a zero-byte mapping does not exist), SystemError when mmap itself fails.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The usual way to map: the result can be the keep-alive owner of SharedArray views.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);

  const std::byte* data() const { return data_; }
  std::size_t size_bytes() const { return size_bytes_; }
  const std::string& file() const { return file_; }

  // `count` values of type T starting `offset_bytes` into the file. The caller has checked that
  // the range lies inside the file and that `offset_bytes` is aligned for T.
  template <typename T>
  std::span<const T> view(std::uint64_t offset_bytes, std::size_t count) const {
    return std::span<const T>(reinterpret_cast<const T*>(data_ + offset_bytes), count);
  }

  // Asks the kernel to start reading [offset_bytes, offset_bytes + length_bytes) now, for ranges
  // that are about to be read whole (validation scans every CSR entry).
  void prefetch(std::uint64_t offset_bytes, std::uint64_t length_bytes) const;

  // Says that [offset_bytes, offset_bytes + length_bytes) will be read a little here and there
  // (a sampler's neighbour lists): no read-ahead, so a batch brings in only the pages it reads.
  void expect_random_reads(std::uint64_t offset_bytes, std::uint64_t length_bytes) const;

 private:
  void advise(std::uint64_t offset_bytes, std::uint64_t length_bytes, int advice) const;

  std::string file_;
  std::byte* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

}  // namespace gnnbed
